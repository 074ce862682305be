package runtime

import (
	"fmt"
	"math"
)

// This file holds the graph-building API: one Context method per ggml op,
// with ggml's names, shape rules, result types and op-parameter layout.
// Every builder checks its inputs and records an error (wrapping ErrShape
// or ErrUnsupported, naming the op and the tensors) instead of panicking;
// after an error every builder returns nil (see Context).

// Rope modes stored in op parameter 2 of ROPE and ROPE_BACK tensors
// (ggml's GGML_ROPE_TYPE_*).
const (
	// RopeNormal rotates adjacent pairs (x[2i], x[2i+1]).
	RopeNormal int32 = 0
	// RopeNeoX rotates pairs half a rotation apart (x[i], x[i+n_dims/2]).
	RopeNeoX int32 = 2
	// RopeMrope is multi-section rope (ggml_rope_multi): NeoX pairs whose
	// angles come from one of four positions per token (time, height,
	// width, extra), chosen by section.
	RopeMrope int32 = 8
	// RopeVision is vision rope (ggml_rope_multi): pairs (x[i],
	// x[i+n_dims]) over the whole row, n_dims = ne0/2, each section's
	// angles restarting from its own position.
	RopeVision int32 = 24
	// RopeImrope is interleaved multi-section rope (Qwen3-VL): sections
	// alternate pair by pair.
	RopeImrope int32 = 40
)

// MropeSections is the number of sections of multi-section rope
// (GGML_MROPE_SECTIONS); they are op parameters 11..14.
const MropeSections = 4

// RopeParams are the float parameters of ggml's rope_ext. DefaultRopeParams
// gives plain RoPE without YaRN scaling.
type RopeParams struct {
	// NCtxOrig is the context length the model was trained with (YaRN).
	NCtxOrig int32
	// FreqBase is the base of the rotation frequencies (10000 for llama).
	FreqBase float32
	// FreqScale scales positions (1 for no scaling).
	FreqScale float32
	// ExtFactor mixes extrapolated and interpolated angles (0: off).
	ExtFactor float32
	// AttnFactor scales the sine and cosine.
	AttnFactor float32
	// BetaFast and BetaSlow bound YaRN's correction range.
	BetaFast, BetaSlow float32
}

// DefaultRopeParams returns llama's settings: base 10000, no scaling.
func DefaultRopeParams() RopeParams {
	return RopeParams{FreqBase: 10000, FreqScale: 1, AttnFactor: 1, BetaFast: 32, BetaSlow: 1}
}

// shapeStr formats a tensor for error messages.
func shapeStr(t *Tensor) string {
	return fmt.Sprintf("%q %s %v", t.Name, t.Type, t.Ne)
}

// opErr records an error for op over the given tensors.
func (c *Context) opErr(op Op, sentinel error, why string, ts ...*Tensor) *Tensor {
	msg := op.String() + ":"
	for i, t := range ts {
		if i > 0 {
			msg += ","
		}
		msg += " " + string(rune('a'+i)) + " = " + shapeStr(t)
	}
	return c.Fail(fmt.Errorf("%s: %s: %w", msg, why, sentinel))
}

// isPadded1D reports ggml_is_padded_1d: rows may be padded, the rest is
// dense.
func isPadded1D(t *Tensor) bool {
	return t.Nb[0] == t.Type.Size() && t.Nb[2] == t.Nb[1]*uint64(t.Ne[1]) && t.Nb[3] == t.Nb[2]*uint64(t.Ne[2])
}

// IsContiguous1 reports ggml_is_contiguous_1: every row is dense and the
// dimensions above 1 are dense, while dimension 1 may have gaps.
func (t *Tensor) IsContiguous1() bool { return t.isContiguousN(1) }

// IsScalar reports whether t has exactly one element.
func (t *Tensor) IsScalar() bool { return t.Ne == [MaxDims]int64{1, 1, 1, 1} }

// IsVector reports whether t has one dimension (ne[1..3] are 1).
func (t *Tensor) IsVector() bool { return t.Ne[1] == 1 && t.Ne[2] == 1 && t.Ne[3] == 1 }

// IsMatrix reports whether t has at most two dimensions.
func (t *Tensor) IsMatrix() bool { return t.Ne[2] == 1 && t.Ne[3] == 1 }

// inplaceView returns a view of all of a with op set, as ggml's in-place
// builders do: the result shares a's memory.
func (c *Context) inplaceView(op Op, a *Tensor) *Tensor {
	v := c.newView(a, op, a.Ne, a.Nb, 0, " (view)")
	if v == nil {
		return nil
	}
	v.Src[0] = a
	return v
}

// unaryLike builds a result of op with a's type and shape (or a view of a
// when inplace) and sources srcs.
func (c *Context) unaryLike(op Op, inplace bool, a *Tensor, srcs ...*Tensor) *Tensor {
	var t *Tensor
	if inplace {
		t = c.inplaceView(op, a)
	} else {
		t = c.NewOp(op, a.Type, a.Ne, a)
	}
	if t == nil {
		return nil
	}
	for i, s := range srcs {
		t.Src[i+1] = s
	}
	return t
}

// Dup returns a contiguous copy of a (ggml_dup).
func (c *Context) Dup(a *Tensor) *Tensor {
	if !c.ok(a) {
		return nil
	}
	return c.unaryLike(OpDup, false, a)
}

// Cpy copies a's elements into b, converting the type (ggml_cpy). a and b
// must have the same number of elements; their shapes may differ, elements
// are taken in row-major order. The result is a view of b, so the copy
// writes b's memory: use the result in the graph.
func (c *Context) Cpy(a, b *Tensor) *Tensor {
	if !c.ok(a, b) {
		return nil
	}
	if a.Nelements() != b.Nelements() {
		return c.opErr(OpCpy, ErrShape, "element counts differ", a, b)
	}
	suffix := " (copy)"
	if b.Name != "" {
		suffix = " (copy of " + a.Name + ")"
	}
	t := c.newView(b, OpCpy, b.Ne, b.Nb, 0, suffix)
	if t == nil {
		return nil
	}
	t.Src[0], t.Src[1] = a, b
	if b.Name == "" {
		t.Name = a.Name + " (copy)"
	}
	return t
}

// Cont returns a contiguous copy of a with a's shape (ggml_cont).
func (c *Context) Cont(a *Tensor) *Tensor {
	if !c.ok(a) {
		return nil
	}
	return c.Cont4D(a, a.Ne[0], a.Ne[1], a.Ne[2], a.Ne[3])
}

// Cont4D returns a contiguous copy of a with shape ne0..ne3, which must
// hold as many elements as a (ggml_cont_4d).
func (c *Context) Cont4D(a *Tensor, ne0, ne1, ne2, ne3 int64) *Tensor {
	if !c.ok(a) {
		return nil
	}
	ne := [MaxDims]int64{ne0, ne1, ne2, ne3}
	if ne0*ne1*ne2*ne3 != a.Nelements() {
		return c.opErr(OpCont, ErrShape, fmt.Sprintf("shape %v holds a different number of elements", ne), a)
	}
	t := c.NewOp(OpCont, a.Type, ne, a)
	if t != nil {
		t.Name = a.Name + " (cont)"
	}
	return t
}

// binary builds ADD, SUB, MUL or DIV: b is broadcast over a by repeating
// it (each of a's dimensions must be a multiple of b's).
func (c *Context) binary(op Op, a, b *Tensor, inplace bool) *Tensor {
	if !c.ok(a, b) {
		return nil
	}
	if !CanRepeat(b, a) {
		return c.opErr(op, ErrShape, "b cannot be broadcast to a (each ne of a must be a multiple of b's)", a, b)
	}
	return c.unaryLike(op, inplace, a, b)
}

// Add returns a + b, b broadcast over a (ggml_add).
func (c *Context) Add(a, b *Tensor) *Tensor { return c.binary(OpAdd, a, b, false) }

// AddInplace is Add writing into a's memory (ggml_add_inplace).
func (c *Context) AddInplace(a, b *Tensor) *Tensor { return c.binary(OpAdd, a, b, true) }

// Sub returns a - b, b broadcast over a (ggml_sub).
func (c *Context) Sub(a, b *Tensor) *Tensor { return c.binary(OpSub, a, b, false) }

// SubInplace is Sub writing into a's memory (ggml_sub_inplace).
func (c *Context) SubInplace(a, b *Tensor) *Tensor { return c.binary(OpSub, a, b, true) }

// Mul returns a * b element-wise, b broadcast over a (ggml_mul).
func (c *Context) Mul(a, b *Tensor) *Tensor { return c.binary(OpMul, a, b, false) }

// MulInplace is Mul writing into a's memory (ggml_mul_inplace).
func (c *Context) MulInplace(a, b *Tensor) *Tensor { return c.binary(OpMul, a, b, true) }

// Div returns a / b element-wise, b broadcast over a (ggml_div).
func (c *Context) Div(a, b *Tensor) *Tensor { return c.binary(OpDiv, a, b, false) }

// DivInplace is Div writing into a's memory (ggml_div_inplace).
func (c *Context) DivInplace(a, b *Tensor) *Tensor { return c.binary(OpDiv, a, b, true) }

func (c *Context) add1(a, b *Tensor, inplace bool) *Tensor {
	if !c.ok(a, b) {
		return nil
	}
	if !b.IsScalar() {
		return c.opErr(OpAdd1, ErrShape, "b must be a scalar", a, b)
	}
	if !isPadded1D(a) {
		return c.opErr(OpAdd1, ErrShape, "a must be dense apart from row padding", a)
	}
	return c.unaryLike(OpAdd1, inplace, a, b)
}

// Add1 adds the scalar b to every element of a (ggml_add1).
func (c *Context) Add1(a, b *Tensor) *Tensor { return c.add1(a, b, false) }

// Add1Inplace is Add1 writing into a's memory (ggml_add1_inplace).
func (c *Context) Add1Inplace(a, b *Tensor) *Tensor { return c.add1(a, b, true) }

func (c *Context) scale(a *Tensor, s, b float32, inplace bool) *Tensor {
	if !c.ok(a) {
		return nil
	}
	if !isPadded1D(a) {
		return c.opErr(OpScale, ErrShape, "a must be dense apart from row padding", a)
	}
	t := c.unaryLike(OpScale, inplace, a)
	if t != nil {
		t.SetOpParamF32(0, s)
		t.SetOpParamF32(1, b)
	}
	return t
}

// Scale returns a * s; s is op parameter 0 as a float32 (ggml_scale).
func (c *Context) Scale(a *Tensor, s float32) *Tensor { return c.scale(a, s, 0, false) }

// ScaleInplace is Scale writing into a's memory (ggml_scale_inplace).
func (c *Context) ScaleInplace(a *Tensor, s float32) *Tensor { return c.scale(a, s, 0, true) }

// ScaleBias returns a*s + b; s and b are op parameters 0 and 1 as float32
// (ggml_scale_bias).
func (c *Context) ScaleBias(a *Tensor, s, b float32) *Tensor { return c.scale(a, s, b, false) }

// ScaleBiasInplace is ScaleBias writing into a's memory
// (ggml_scale_bias_inplace).
func (c *Context) ScaleBiasInplace(a *Tensor, s, b float32) *Tensor { return c.scale(a, s, b, true) }

func (c *Context) elementwise(op Op, a *Tensor, inplace bool) *Tensor {
	if !c.ok(a) {
		return nil
	}
	return c.unaryLike(op, inplace, a)
}

// Sqr returns a² element-wise (ggml_sqr).
func (c *Context) Sqr(a *Tensor) *Tensor { return c.elementwise(OpSqr, a, false) }

// SqrInplace is Sqr writing into a's memory.
func (c *Context) SqrInplace(a *Tensor) *Tensor { return c.elementwise(OpSqr, a, true) }

// Sqrt returns √a element-wise (ggml_sqrt).
func (c *Context) Sqrt(a *Tensor) *Tensor { return c.elementwise(OpSqrt, a, false) }

// SqrtInplace is Sqrt writing into a's memory.
func (c *Context) SqrtInplace(a *Tensor) *Tensor { return c.elementwise(OpSqrt, a, true) }

// Log returns the natural logarithm of a element-wise (ggml_log).
func (c *Context) Log(a *Tensor) *Tensor { return c.elementwise(OpLog, a, false) }

// LogInplace is Log writing into a's memory.
func (c *Context) LogInplace(a *Tensor) *Tensor { return c.elementwise(OpLog, a, true) }

// SumRows sums each row of a: the result has ne = {1, ne1, ne2, ne3} and
// a's type (ggml_sum_rows).
func (c *Context) SumRows(a *Tensor) *Tensor {
	if !c.ok(a) {
		return nil
	}
	return c.NewOp(OpSumRows, a.Type, [MaxDims]int64{1, a.Ne[1], a.Ne[2], a.Ne[3]}, a)
}

// Mean averages each row of a into an f32 tensor with ne = {1, ne1, ne2,
// ne3} (ggml_mean).
func (c *Context) Mean(a *Tensor) *Tensor {
	if !c.ok(a) {
		return nil
	}
	return c.NewOp(OpMean, TypeF32, [MaxDims]int64{1, a.Ne[1], a.Ne[2], a.Ne[3]}, a)
}

// Repeat tiles a to b's shape; each of b's dimensions must be a multiple of
// a's. The result has a's type; b only gives the shape (ggml_repeat).
func (c *Context) Repeat(a, b *Tensor) *Tensor {
	if !c.ok(a, b) {
		return nil
	}
	if !CanRepeat(a, b) {
		return c.opErr(OpRepeat, ErrShape, "each ne of b must be a multiple of a's", a, b)
	}
	return c.NewOp(OpRepeat, a.Type, b.Ne, a)
}

// Concat joins a and b along dimension dim (0..3); the other dimensions
// must match and so must the types. dim is op parameter 0 (ggml_concat).
func (c *Context) Concat(a, b *Tensor, dim int) *Tensor {
	if !c.ok(a, b) {
		return nil
	}
	if dim < 0 || dim >= MaxDims {
		return c.opErr(OpConcat, ErrShape, fmt.Sprintf("dimension %d is not 0..3", dim), a, b)
	}
	if a.Type != b.Type {
		return c.opErr(OpConcat, ErrUnsupported, "types differ", a, b)
	}
	ne := a.Ne
	for d := 0; d < MaxDims; d++ {
		if d == dim {
			ne[d] = a.Ne[d] + b.Ne[d]
		} else if a.Ne[d] != b.Ne[d] {
			return c.opErr(OpConcat, ErrShape, fmt.Sprintf("ne[%d] differs", d), a, b)
		}
	}
	t := c.NewOp(OpConcat, a.Type, ne, a, b)
	if t != nil {
		t.SetOpParamI32(0, int32(dim))
	}
	return t
}

func (c *Context) normLike(op Op, a *Tensor, eps float32, inplace bool) *Tensor {
	if !c.ok(a) {
		return nil
	}
	t := c.unaryLike(op, inplace, a)
	if t != nil {
		t.SetOpParamF32(0, eps)
	}
	return t
}

// Norm normalizes each row of a to zero mean and unit variance; eps (op
// parameter 0, float32) is added to the variance (ggml_norm).
func (c *Context) Norm(a *Tensor, eps float32) *Tensor { return c.normLike(OpNorm, a, eps, false) }

// NormInplace is Norm writing into a's memory (ggml_norm_inplace).
func (c *Context) NormInplace(a *Tensor, eps float32) *Tensor {
	return c.normLike(OpNorm, a, eps, true)
}

// RMSNorm divides each row of a by its root mean square; eps (op parameter
// 0, float32) is added to the mean square (ggml_rms_norm).
func (c *Context) RMSNorm(a *Tensor, eps float32) *Tensor {
	return c.normLike(OpRmsNorm, a, eps, false)
}

// RMSNormInplace is RMSNorm writing into a's memory.
func (c *Context) RMSNormInplace(a *Tensor, eps float32) *Tensor {
	return c.normLike(OpRmsNorm, a, eps, true)
}

// MulMat multiplies matrices as ggml does: the result is f32 with ne =
// {a.ne1, b.ne1, b.ne2, b.ne3} and element (i, j) is the dot product of row
// i of a with row j of b (so result = b·aᵀ in row-major terms). a.ne0 must
// equal b.ne0, a is broadcast over dimensions 2 and 3 (b's must be
// multiples of a's), and a must not be transposed (ggml_mul_mat).
func (c *Context) MulMat(a, b *Tensor) *Tensor {
	if !c.ok(a, b) {
		return nil
	}
	if a.Ne[0] != b.Ne[0] {
		return c.opErr(OpMulMat, ErrShape, "ne[0] differs", a, b)
	}
	if b.Ne[2]%a.Ne[2] != 0 || b.Ne[3]%a.Ne[3] != 0 {
		return c.opErr(OpMulMat, ErrShape, "b.ne[2] and b.ne[3] must be multiples of a's", a, b)
	}
	if a.IsTransposed() {
		return c.opErr(OpMulMat, ErrShape, "a is transposed (use Cont first)", a, b)
	}
	return c.NewOp(OpMulMat, TypeF32, [MaxDims]int64{a.Ne[1], b.Ne[1], b.Ne[2], b.Ne[3]}, a, b)
}

// GetRows gathers rows of a: b holds i32 row indices with b.ne1 equal to
// a.ne2, b.ne2 equal to a.ne3 (ggml leaves this unchecked) and b.ne3 = 1. The result has ne = {a.ne0, b.ne0, b.ne1, b.ne2};
// its row (i, j, k) is row b[i, j, k] of matrix (j, k) of a. The result
// type is f32 (i32 for an i32 a) (ggml_get_rows).
func (c *Context) GetRows(a, b *Tensor) *Tensor {
	if !c.ok(a, b) {
		return nil
	}
	if b.Type != TypeI32 {
		return c.opErr(OpGetRows, ErrUnsupported, "indices b must be i32", a, b)
	}
	if a.Ne[2] != b.Ne[1] || a.Ne[3] != b.Ne[2] || b.Ne[3] != 1 {
		return c.opErr(OpGetRows, ErrShape, "want a.ne[2] == b.ne[1], a.ne[3] == b.ne[2] and b.ne[3] == 1", a, b)
	}
	typ := TypeF32
	if a.Type == TypeI32 {
		typ = TypeI32
	}
	return c.NewOp(OpGetRows, typ, [MaxDims]int64{a.Ne[0], b.Ne[0], b.Ne[1], b.Ne[2]}, a, b)
}

func (c *Context) diagMaskInf(a *Tensor, nPast int, inplace bool) *Tensor {
	if !c.ok(a) {
		return nil
	}
	if nPast < 0 || nPast > math.MaxInt32 {
		return c.opErr(OpDiagMaskInf, ErrShape, fmt.Sprintf("n_past %d out of range", nPast), a)
	}
	t := c.unaryLike(OpDiagMaskInf, inplace, a)
	if t != nil {
		t.SetOpParamI32(0, int32(nPast))
	}
	return t
}

// DiagMaskInf sets element (i, j) of every matrix of a to -Inf where
// i > nPast + j (i the column, j the row): the causal mask. nPast is op
// parameter 0 (ggml_diag_mask_inf).
func (c *Context) DiagMaskInf(a *Tensor, nPast int) *Tensor { return c.diagMaskInf(a, nPast, false) }

// DiagMaskInfInplace is DiagMaskInf writing into a's memory.
func (c *Context) DiagMaskInfInplace(a *Tensor, nPast int) *Tensor {
	return c.diagMaskInf(a, nPast, true)
}

func (c *Context) softMax(a, mask *Tensor, scale, maxBias float32, inplace bool) *Tensor {
	if !c.ok(a) {
		return nil
	}
	if !a.IsContiguous() {
		return c.opErr(OpSoftMax, ErrShape, "a must be contiguous", a)
	}
	if mask != nil {
		if mask.Type != TypeF32 && mask.Type != TypeF16 {
			return c.opErr(OpSoftMax, ErrUnsupported, "mask must be f32 or f16", a, mask)
		}
		if !mask.IsContiguous() {
			return c.opErr(OpSoftMax, ErrShape, "mask must be contiguous", a, mask)
		}
		if mask.Ne[0] != a.Ne[0] || mask.Ne[1] < a.Ne[1] {
			return c.opErr(OpSoftMax, ErrShape, "want mask.ne[0] == a.ne[0] and mask.ne[1] >= a.ne[1]", a, mask)
		}
		if a.Ne[2]%mask.Ne[2] != 0 || a.Ne[3]%mask.Ne[3] != 0 {
			return c.opErr(OpSoftMax, ErrShape, "a.ne[2] and a.ne[3] must be multiples of mask's", a, mask)
		}
	} else if maxBias > 0 {
		return c.opErr(OpSoftMax, ErrShape, "max_bias > 0 needs a mask", a)
	}
	t := c.unaryLike(OpSoftMax, inplace, a)
	if t == nil {
		return nil
	}
	t.Src[1] = mask
	t.SetOpParamF32(0, scale)
	t.SetOpParamF32(1, maxBias)
	return t
}

// SoftMax applies soft-max to each row of a (ggml_soft_max).
func (c *Context) SoftMax(a *Tensor) *Tensor { return c.softMax(a, nil, 1, 0, false) }

// SoftMaxInplace is SoftMax writing into a's memory.
func (c *Context) SoftMaxInplace(a *Tensor) *Tensor { return c.softMax(a, nil, 1, 0, true) }

// SoftMaxExt computes soft_max(a*scale + slope*mask) per row, as ggml's
// soft_max_ext. mask (optional, f32 or f16, contiguous) has mask.ne0 ==
// a.ne0 and at least a.ne1 rows; row i1 of every matrix of a uses mask row
// i1, and mask matrices repeat over a's dimensions 2 and 3. slope is 1
// unless maxBias > 0, when it is ALiBi's per-head slope (head = index in
// dimension 2). Op parameters: float32 scale, maxBias; src1 is the mask.
func (c *Context) SoftMaxExt(a, mask *Tensor, scale, maxBias float32) *Tensor {
	return c.softMax(a, mask, scale, maxBias, false)
}

// SoftMaxExtBack is the gradient of SoftMaxExt without mask: a is the
// gradient of the output, b the soft-max output y; the result is
// scale * y * (a - dot(a, y)) per row. Op parameters: float32 scale,
// maxBias (which must be 0) (ggml_soft_max_ext_back).
func (c *Context) SoftMaxExtBack(a, b *Tensor, scale, maxBias float32) *Tensor {
	if !c.ok(a, b) {
		return nil
	}
	if !SameShape(a, b) {
		return c.opErr(OpSoftMaxBack, ErrShape, "shapes differ", a, b)
	}
	if maxBias != 0 {
		return c.opErr(OpSoftMaxBack, ErrUnsupported, "max_bias must be 0", a, b)
	}
	t := c.unaryLike(OpSoftMaxBack, false, a, b)
	if t != nil {
		t.SetOpParamF32(0, scale)
		t.SetOpParamF32(1, maxBias)
	}
	return t
}

// SoftMaxBack is SoftMaxExtBack with scale 1 (ggml_soft_max_back).
func (c *Context) SoftMaxBack(a, b *Tensor) *Tensor { return c.SoftMaxExtBack(a, b, 1, 0) }

func (c *Context) rope(op Op, a, pos, freqFactors *Tensor, nDims int, sections *[MropeSections]int32, mode int32, p RopeParams, inplace bool) *Tensor {
	if !c.ok(a, pos) {
		return nil
	}
	switch mode {
	case RopeNormal, RopeNeoX, RopeMrope, RopeVision, RopeImrope:
	default:
		return c.opErr(op, ErrUnsupported, fmt.Sprintf("rope mode %d (supported: normal 0, NeoX 2, mrope 8, vision 24, imrope 40)", mode), a, pos)
	}
	if !pos.IsVector() || pos.Type != TypeI32 {
		return c.opErr(op, ErrUnsupported, "positions b must be an i32 vector", a, pos)
	}
	multi := mode&RopeMrope != 0
	if multi && a.Ne[2]*4 != pos.Ne[0] {
		return c.opErr(op, ErrShape, "want 4 positions per row group: b.ne[0] == 4*a.ne[2]", a, pos)
	}
	if !multi && a.Ne[2] != pos.Ne[0] {
		return c.opErr(op, ErrShape, "want a.ne[2] == b.ne[0] (one position per row group)", a, pos)
	}
	if nDims <= 0 || nDims%2 != 0 || int64(nDims) > a.Ne[0] || a.Ne[0]%2 != 0 {
		return c.opErr(op, ErrShape, fmt.Sprintf("n_dims %d must be even, positive and at most an even a.ne[0]", nDims), a, pos)
	}
	if mode == RopeVision && int64(nDims) != a.Ne[0]/2 {
		return c.opErr(op, ErrShape, fmt.Sprintf("vision rope needs n_dims %d == a.ne[0]/2", nDims), a, pos)
	}
	if multi {
		if sections == nil || (sections[0] <= 0 && sections[1] <= 0 && sections[2] <= 0) {
			return c.opErr(op, ErrShape, "multi-section rope needs one of the first three sections positive", a, pos)
		}
		var sum int64
		for _, s := range sections {
			if s < 0 {
				return c.opErr(op, ErrShape, fmt.Sprintf("negative section in %v", *sections), a, pos)
			}
			sum += int64(s)
		}
		if sum > a.Ne[0] {
			return c.opErr(op, ErrShape, fmt.Sprintf("sections %v sum past a.ne[0]", *sections), a, pos)
		}
	}
	if freqFactors != nil {
		if freqFactors.Type != TypeF32 || freqFactors.Ne[0] < int64(nDims/2) {
			return c.opErr(op, ErrShape, "freq factors c must be f32 with at least n_dims/2 elements", a, pos, freqFactors)
		}
	}
	t := c.unaryLike(op, inplace, a, pos, freqFactors)
	if t == nil {
		return nil
	}
	t.SetOpParamI32(0, 0) // n_past, unused
	t.SetOpParamI32(1, int32(nDims))
	t.SetOpParamI32(2, mode)
	t.SetOpParamI32(3, 0) // n_ctx, unused
	t.SetOpParamI32(4, p.NCtxOrig)
	t.SetOpParamF32(5, p.FreqBase)
	t.SetOpParamF32(6, p.FreqScale)
	t.SetOpParamF32(7, p.ExtFactor)
	t.SetOpParamF32(8, p.AttnFactor)
	t.SetOpParamF32(9, p.BetaFast)
	t.SetOpParamF32(10, p.BetaSlow)
	if multi {
		for i, s := range sections {
			t.SetOpParamI32(11+i, s)
		}
	}
	return t
}

// ropePlain is what ggml_rope passes: base 10000, no scaling, no YaRN
// (beta_fast and beta_slow 0).
var ropePlain = RopeParams{FreqBase: 10000, FreqScale: 1, AttnFactor: 1}

// Rope applies rotary position embedding with ggml_rope's parameters
// (base 10000, no scaling, no YaRN; op parameters 4 and 7..10 are 0 and
// 8 is 1): the first nDims elements of each row of a are
// rotated by angles pos[i2] * base^(-2k/nDims), where pos is an i32 vector
// with one position per index of a's dimension 2. mode is RopeNormal or
// RopeNeoX (ggml_rope).
func (c *Context) Rope(a, pos *Tensor, nDims int, mode int32) *Tensor {
	return c.rope(OpRope, a, pos, nil, nDims, nil, mode, ropePlain, false)
}

// RopeInplace is Rope writing into a's memory.
func (c *Context) RopeInplace(a, pos *Tensor, nDims int, mode int32) *Tensor {
	return c.rope(OpRope, a, pos, nil, nDims, nil, mode, ropePlain, true)
}

// RopeExt is ggml_rope_ext: Rope with optional per-frequency divisors
// freqFactors (f32, at least nDims/2 elements; nil for none) and YaRN
// parameters. Op parameters: int32 {0, nDims, mode, 0, NCtxOrig}, then
// float32 FreqBase, FreqScale, ExtFactor, AttnFactor, BetaFast, BetaSlow
// at 5..10; src1 = pos, src2 = freqFactors.
func (c *Context) RopeExt(a, pos, freqFactors *Tensor, nDims int, mode int32, p RopeParams) *Tensor {
	return c.rope(OpRope, a, pos, freqFactors, nDims, nil, mode, p, false)
}

// RopeExtInplace is RopeExt writing into a's memory.
func (c *Context) RopeExtInplace(a, pos, freqFactors *Tensor, nDims int, mode int32, p RopeParams) *Tensor {
	return c.rope(OpRope, a, pos, freqFactors, nDims, nil, mode, p, true)
}

// RopeBack is the gradient of RopeExt: it rotates the gradient a by the
// opposite angles. Same parameters and layout as RopeExt, op ROPE_BACK
// (ggml_rope_ext_back).
func (c *Context) RopeBack(a, pos, freqFactors *Tensor, nDims int, mode int32, p RopeParams) *Tensor {
	return c.rope(OpRopeBack, a, pos, freqFactors, nDims, nil, mode, p, false)
}

// RopeMulti is ggml_rope_multi: rope with mode RopeMrope, RopeImrope or
// RopeVision, four positions per index of a's dimension 2 (b.ne[0] ==
// 4*a.ne[2]: all time positions, then all heights, widths and extras),
// and sections (op parameters 11..14) giving each position's number of
// rotation pairs.
func (c *Context) RopeMulti(a, pos, freqFactors *Tensor, nDims int, sections [MropeSections]int32, mode int32, p RopeParams) *Tensor {
	return c.rope(OpRope, a, pos, freqFactors, nDims, &sections, mode, p, false)
}

// RopeMultiInplace is RopeMulti writing into a's memory.
func (c *Context) RopeMultiInplace(a, pos, freqFactors *Tensor, nDims int, sections [MropeSections]int32, mode int32, p RopeParams) *Tensor {
	return c.rope(OpRope, a, pos, freqFactors, nDims, &sections, mode, p, true)
}

// RopeMultiBack is the gradient of RopeMulti (ggml_rope_multi_back).
func (c *Context) RopeMultiBack(a, pos, freqFactors *Tensor, nDims int, sections [MropeSections]int32, mode int32, p RopeParams) *Tensor {
	return c.rope(OpRopeBack, a, pos, freqFactors, nDims, &sections, mode, p, false)
}

// RopeSetOffset makes ROPE or ROPE_BACK tensor t rotate the n_dims
// elements from nOffs on instead of the first ones (op parameter 15,
// ggml_rope_set_offset); not for vision rope. It returns t.
func (c *Context) RopeSetOffset(t *Tensor, nOffs int) *Tensor {
	if !c.ok(t) {
		return nil
	}
	if t.Op != OpRope && t.Op != OpRopeBack {
		return c.opErr(t.Op, ErrUnsupported, "rope offset of a tensor that is not ROPE or ROPE_BACK", t)
	}
	if t.OpParamI32(2) == RopeVision || nOffs < 0 || nOffs%2 != 0 || int64(nOffs)+int64(t.OpParamI32(1)) > t.Ne[0] {
		return c.opErr(t.Op, ErrShape, fmt.Sprintf("rope offset %d: want even, ≥ 0, offset+n_dims ≤ ne[0], not vision", nOffs), t)
	}
	t.SetOpParamI32(15, int32(nOffs))
	return t
}

func (c *Context) unary(a *Tensor, u UnaryOp, inplace bool) *Tensor {
	if !c.ok(a) {
		return nil
	}
	if u < 0 || u >= UnaryCount {
		return c.opErr(OpUnary, ErrUnknownOp, fmt.Sprintf("unary function %d", int32(u)), a)
	}
	if !a.IsContiguous1() {
		return c.opErr(OpUnary, ErrShape, "a's rows and dimensions above 1 must be dense", a)
	}
	t := c.unaryLike(OpUnary, inplace, a)
	if t != nil {
		t.SetOpParamI32(0, int32(u))
	}
	return t
}

// Unary applies function u element-wise: op UNARY with u as op parameter
// 0 (ggml_unary).
func (c *Context) Unary(a *Tensor, u UnaryOp) *Tensor { return c.unary(a, u, false) }

// UnaryInplace is Unary writing into a's memory.
func (c *Context) UnaryInplace(a *Tensor, u UnaryOp) *Tensor { return c.unary(a, u, true) }

// GELU applies the tanh approximation of GELU (ggml_gelu).
func (c *Context) GELU(a *Tensor) *Tensor { return c.unary(a, UnaryGelu, false) }

// SILU applies x*sigmoid(x) (ggml_silu).
func (c *Context) SILU(a *Tensor) *Tensor { return c.unary(a, UnarySilu, false) }

// ReLU applies max(x, 0) (ggml_relu).
func (c *Context) ReLU(a *Tensor) *Tensor { return c.unary(a, UnaryRelu, false) }

// Tanh applies tanh (ggml_tanh).
func (c *Context) Tanh(a *Tensor) *Tensor { return c.unary(a, UnaryTanh, false) }

// Sigmoid applies 1/(1+exp(-x)) (ggml_sigmoid).
func (c *Context) Sigmoid(a *Tensor) *Tensor { return c.unary(a, UnarySigmoid, false) }

// Neg applies -x (ggml_neg).
func (c *Context) Neg(a *Tensor) *Tensor { return c.unary(a, UnaryNeg, false) }

// Abs applies |x| (ggml_abs).
func (c *Context) Abs(a *Tensor) *Tensor { return c.unary(a, UnaryAbs, false) }

// Exp applies exp(x) (ggml_exp).
func (c *Context) Exp(a *Tensor) *Tensor { return c.unary(a, UnaryExp, false) }

// Clamp limits a's elements to [min, max]; op parameters are float32 min,
// max. As in ggml, the result is a view of a: the clamp writes a's memory
// (ggml_clamp).
func (c *Context) Clamp(a *Tensor, min, max float32) *Tensor {
	if !c.ok(a) {
		return nil
	}
	t := c.inplaceView(OpClamp, a)
	if t != nil {
		t.SetOpParamF32(0, min)
		t.SetOpParamF32(1, max)
	}
	return t
}

// SiluBack is the gradient of SILU: a is the gradient of the output, b the
// SILU input x; the result is a * s * (1 + x*(1-s)) with s = sigmoid(x)
// (ggml_silu_back).
func (c *Context) SiluBack(a, b *Tensor) *Tensor {
	if !c.ok(a, b) {
		return nil
	}
	if !SameShape(a, b) {
		return c.opErr(OpSiluBack, ErrShape, "shapes differ", a, b)
	}
	return c.unaryLike(OpSiluBack, false, a, b)
}

// RMSNormBack is the gradient of RMSNorm: a is the gradient of the output,
// b the RMSNorm input x; eps is op parameter 0 (ggml_rms_norm_back).
func (c *Context) RMSNormBack(a, b *Tensor, eps float32) *Tensor {
	if !c.ok(a, b) {
		return nil
	}
	if !SameShape(a, b) {
		return c.opErr(OpRmsNormBack, ErrShape, "shapes differ", a, b)
	}
	t := c.unaryLike(OpRmsNormBack, false, a, b)
	if t != nil {
		t.SetOpParamF32(0, eps)
	}
	return t
}
