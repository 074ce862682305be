package runtime

import (
	"fmt"
	"math"
)

// Builders of the rest of ggml 0.27.0's tensor ops (ARGMAX, COUNT_EQUAL,
// DIAG, DIAG_MASK_ZERO, PAD, PAD_REFLECT_1D, ROLL, ARANGE,
// TIMESTEP_EMBEDDING, LEAKY_RELU, TRI, FILL, CUMSUM, ACC, SET, REPEAT_BACK,
// GROUP_NORM, OUT_PROD, GET_ROWS_BACK), with ggml's shape rules and
// op-parameter layout.

// Argmax returns the i32 index of the largest element of each row of the
// matrix a (the last one among equals) (ggml_argmax).
func (c *Context) Argmax(a *Tensor) *Tensor {
	if !c.ok(a) {
		return nil
	}
	if !a.IsMatrix() || a.Ne[0] > math.MaxInt32 {
		return c.opErr(OpArgmax, ErrShape, "a must be a matrix with rows of at most INT32_MAX", a)
	}
	return c.NewOp(OpArgmax, TypeI32, [MaxDims]int64{a.Ne[1], 1, 1, 1}, a)
}

// CountEqual counts the equal elements of a and b (one shape) into an i64
// scalar (ggml_count_equal).
func (c *Context) CountEqual(a, b *Tensor) *Tensor {
	if !c.ok(a, b) {
		return nil
	}
	if !SameShape(a, b) {
		return c.opErr(OpCountEqual, ErrShape, "shapes differ", a, b)
	}
	return c.NewOp(OpCountEqual, TypeI64, [MaxDims]int64{1, 1, 1, 1}, a, b)
}

// Diag turns each row vector {n, 1} of a into an n×n diagonal matrix
// (ggml_diag).
func (c *Context) Diag(a *Tensor) *Tensor {
	if !c.ok(a) {
		return nil
	}
	if a.Ne[1] != 1 {
		return c.opErr(OpDiag, ErrShape, "a.ne[1] must be 1", a)
	}
	return c.NewOp(OpDiag, a.Type, [MaxDims]int64{a.Ne[0], a.Ne[0], a.Ne[2], a.Ne[3]}, a)
}

func (c *Context) diagMaskZero(a *Tensor, nPast int, inplace bool) *Tensor {
	if !c.ok(a) {
		return nil
	}
	if nPast < 0 || nPast > math.MaxInt32 {
		return c.opErr(OpDiagMaskZero, ErrShape, fmt.Sprintf("n_past %d out of range", nPast), a)
	}
	t := c.unaryLike(OpDiagMaskZero, inplace, a)
	if t != nil {
		t.SetOpParamI32(0, int32(nPast))
	}
	return t
}

// DiagMaskZero is DiagMaskInf with 0 instead of -Inf (ggml_diag_mask_zero).
func (c *Context) DiagMaskZero(a *Tensor, nPast int) *Tensor { return c.diagMaskZero(a, nPast, false) }

// DiagMaskZeroInplace is DiagMaskZero writing into a's memory.
func (c *Context) DiagMaskZeroInplace(a *Tensor, nPast int) *Tensor {
	return c.diagMaskZero(a, nPast, true)
}

func (c *Context) pad(a *Tensor, p [8]int, circular bool) *Tensor {
	if !c.ok(a) {
		return nil
	}
	ne := a.Ne
	for d := 0; d < MaxDims; d++ {
		lp, rp := p[2*d], p[2*d+1]
		if lp < 0 || rp < 0 || lp > math.MaxInt32 || rp > math.MaxInt32 {
			return c.opErr(OpPad, ErrShape, fmt.Sprintf("pads %v must be in 0..INT32_MAX", p), a)
		}
		if circular && (int64(lp) > a.Ne[d] || int64(rp) > a.Ne[d]) {
			return c.opErr(OpPad, ErrShape, fmt.Sprintf("circular pads %v longer than a", p), a)
		}
		ne[d] += int64(lp) + int64(rp)
	}
	t := c.NewOp(OpPad, a.Type, ne, a)
	if t == nil {
		return nil
	}
	for i, v := range p {
		t.SetOpParamI32(i, int32(v))
	}
	if circular {
		t.SetOpParamI32(8, 1)
	}
	return t
}

// Pad appends p0..p3 zeros to dimensions 0..3 of a (ggml_pad). Op
// parameters: int32 lp0, rp0, lp1, rp1, lp2, rp2, lp3, rp3, circular.
func (c *Context) Pad(a *Tensor, p0, p1, p2, p3 int) *Tensor {
	return c.pad(a, [8]int{0, p0, 0, p1, 0, p2, 0, p3}, false)
}

// PadExt pads each dimension of a with lp zeros before and rp after
// (ggml_pad_ext).
func (c *Context) PadExt(a *Tensor, lp0, rp0, lp1, rp1, lp2, rp2, lp3, rp3 int) *Tensor {
	return c.pad(a, [8]int{lp0, rp0, lp1, rp1, lp2, rp2, lp3, rp3}, false)
}

// PadExtCircular is PadExt taking the pad values from the other side of a
// as on a torus (ggml_pad_ext_circular; op parameter 8 is 1).
func (c *Context) PadExtCircular(a *Tensor, lp0, rp0, lp1, rp1, lp2, rp2, lp3, rp3 int) *Tensor {
	return c.pad(a, [8]int{lp0, rp0, lp1, rp1, lp2, rp2, lp3, rp3}, true)
}

// PadReflect1D pads the rows of contiguous f32 a by reflection, p0 before
// and p1 after (each less than a.ne0), without repeating the edge
// (ggml_pad_reflect_1d). Op parameters: int32 p0, p1.
func (c *Context) PadReflect1D(a *Tensor, p0, p1 int) *Tensor {
	if !c.ok(a) {
		return nil
	}
	if p0 < 0 || p1 < 0 || int64(p0) >= a.Ne[0] || int64(p1) >= a.Ne[0] {
		return c.opErr(OpPadReflect1D, ErrShape, fmt.Sprintf("pads %d, %d must be in 0..ne0-1", p0, p1), a)
	}
	if !a.IsContiguous() || a.Type != TypeF32 {
		return c.opErr(OpPadReflect1D, ErrUnsupported, "a must be contiguous f32", a)
	}
	t := c.NewOp(OpPadReflect1D, a.Type, [MaxDims]int64{a.Ne[0] + int64(p0) + int64(p1), a.Ne[1], a.Ne[2], a.Ne[3]}, a)
	if t != nil {
		t.SetOpParamI32(0, int32(p0))
		t.SetOpParamI32(1, int32(p1))
	}
	return t
}

// Roll shifts a cyclically by shift0..3 elements along dimensions 0..3
// (|shift| < ne) (ggml_roll). Op parameters: int32 shifts.
func (c *Context) Roll(a *Tensor, shift0, shift1, shift2, shift3 int) *Tensor {
	if !c.ok(a) {
		return nil
	}
	s := [MaxDims]int{shift0, shift1, shift2, shift3}
	for d, v := range s {
		if int64(max(v, -v)) >= a.Ne[d] {
			return c.opErr(OpRoll, ErrShape, fmt.Sprintf("shift %d of dimension %d not below ne", v, d), a)
		}
	}
	if !a.IsContiguousRows() {
		return c.opErr(OpRoll, ErrShape, "a's rows must be dense", a)
	}
	t := c.NewOp(OpRoll, a.Type, a.Ne, a)
	if t != nil {
		for d, v := range s {
			t.SetOpParamI32(d, int32(v))
		}
	}
	return t
}

// maxArange caps ARANGE's length, which comes from its parameters.
const maxArange = 1 << 31

// Arange returns the f32 vector start, start+step, ... below stop
// (ceil((stop-start)/step) elements) (ggml_arange). Op parameters:
// float32 start, stop, step.
func (c *Context) Arange(start, stop, step float32) *Tensor {
	if !c.ok() {
		return nil
	}
	n := math.Ceil(float64((stop - start) / step))
	if !(stop > start) || !(n >= 1) || n > maxArange {
		return c.Fail(fmt.Errorf("%s: start %g, stop %g, step %g give %g elements: %w", OpArange, start, stop, step, n, ErrShape))
	}
	t := c.NewOp(OpArange, TypeF32, [MaxDims]int64{int64(n), 1, 1, 1})
	if t != nil {
		t.SetOpParamF32(0, start)
		t.SetOpParamF32(1, stop)
		t.SetOpParamF32(2, step)
	}
	return t
}

// TimestepEmbedding returns sinusoidal embeddings {dim, n} of the n f32
// timesteps (ggml_timestep_embedding). Op parameters: int32 dim,
// max_period.
func (c *Context) TimestepEmbedding(timesteps *Tensor, dim, maxPeriod int) *Tensor {
	if !c.ok(timesteps) {
		return nil
	}
	if dim < 1 || dim > math.MaxInt32 || maxPeriod < 1 || maxPeriod > math.MaxInt32 {
		return c.opErr(OpTimestepEmbedding, ErrShape, fmt.Sprintf("dim %d and max_period %d must be positive int32", dim, maxPeriod), timesteps)
	}
	t := c.NewOp(OpTimestepEmbedding, TypeF32, [MaxDims]int64{int64(dim), timesteps.Ne[0], 1, 1}, timesteps)
	if t != nil {
		t.SetOpParamI32(0, int32(dim))
		t.SetOpParamI32(1, int32(maxPeriod))
	}
	return t
}

// LeakyRelu applies max(x, 0) + slope·min(x, 0) (ggml_leaky_relu); slope
// is float32 op parameter 0.
func (c *Context) LeakyRelu(a *Tensor, slope float32, inplace bool) *Tensor {
	if !c.ok(a) {
		return nil
	}
	t := c.unaryLike(OpLeakyRelu, inplace, a)
	if t != nil {
		t.SetOpParamF32(0, slope)
	}
	return t
}

// Tri types (ggml_tri_type), op parameter 0 of TRI.
const (
	TriUpperDiag int32 = 0
	TriUpper     int32 = 1
	TriLowerDiag int32 = 2
	TriLower     int32 = 3
)

// Tri keeps one triangle of each square matrix of contiguous f32 a
// (column i0 against row i1: TriUpperDiag i0 ≥ i1, TriUpper i0 > i1,
// TriLowerDiag i0 ≤ i1, TriLower i0 < i1) and zeroes the rest (ggml_tri).
func (c *Context) Tri(a *Tensor, typ int32) *Tensor {
	if !c.ok(a) {
		return nil
	}
	if a.Type != TypeF32 || !a.IsContiguous() || a.Ne[0] != a.Ne[1] {
		return c.opErr(OpTri, ErrShape, "a must be contiguous f32 with square matrices", a)
	}
	if typ < TriUpperDiag || typ > TriLower {
		return c.opErr(OpTri, ErrUnsupported, fmt.Sprintf("tri type %d", typ), a)
	}
	t := c.NewOp(OpTri, a.Type, a.Ne, a)
	if t != nil {
		t.SetOpParamI32(0, typ)
	}
	return t
}

func (c *Context) fill(a *Tensor, v float32, inplace bool) *Tensor {
	if !c.ok(a) {
		return nil
	}
	if (a.Type != TypeF32 && a.Type != TypeF16) || !a.IsContiguous() {
		return c.opErr(OpFill, ErrShape, "a must be contiguous f32 or f16", a)
	}
	t := c.unaryLike(OpFill, inplace, a)
	if t != nil {
		t.SetOpParamF32(0, v)
	}
	return t
}

// Fill returns a tensor of a's shape with every element v (ggml_fill).
func (c *Context) Fill(a *Tensor, v float32) *Tensor { return c.fill(a, v, false) }

// FillInplace is Fill writing into a's memory.
func (c *Context) FillInplace(a *Tensor, v float32) *Tensor { return c.fill(a, v, true) }

// Cumsum returns the running sums along each row of f32 a (ggml_cumsum).
func (c *Context) Cumsum(a *Tensor) *Tensor {
	if !c.ok(a) {
		return nil
	}
	if a.Type != TypeF32 {
		return c.opErr(OpCumsum, ErrUnsupported, "a must be f32", a)
	}
	return c.NewOp(OpCumsum, a.Type, a.Ne, a)
}

func (c *Context) accSet(op Op, a, b *Tensor, nb1, nb2, nb3, offset uint64, inplace bool) *Tensor {
	if !c.ok(a, b) {
		return nil
	}
	if b.Nelements() > a.Nelements() || !a.IsContiguous() {
		return c.opErr(op, ErrShape, "a must be contiguous and hold at least b's elements", a, b)
	}
	if op == OpAcc && (a.Type != TypeF32 || b.Type != TypeF32) {
		return c.opErr(op, ErrUnsupported, "a and b must be f32", a, b)
	}
	for _, v := range []uint64{nb1, nb2, nb3, offset} {
		if v >= 1<<30 {
			return c.opErr(op, ErrShape, fmt.Sprintf("strides %d, %d, %d and offset %d must be below 2^30", nb1, nb2, nb3, offset), a, b)
		}
	}
	t := c.unaryLike(op, inplace, a, b)
	if t == nil {
		return nil
	}
	for i, v := range []uint64{nb1, nb2, nb3, offset} {
		t.SetOpParamI32(i, int32(v))
	}
	if inplace {
		t.SetOpParamI32(4, 1)
	}
	return t
}

// Acc returns a copy of a with b added into the view of it at byte offset
// with byte strides nb1..nb3 (ggml_acc). Op parameters: int32 nb1, nb2,
// nb3, offset, inplace.
func (c *Context) Acc(a, b *Tensor, nb1, nb2, nb3, offset uint64) *Tensor {
	return c.accSet(OpAcc, a, b, nb1, nb2, nb3, offset, false)
}

// AccInplace is Acc writing into a's memory.
func (c *Context) AccInplace(a, b *Tensor, nb1, nb2, nb3, offset uint64) *Tensor {
	return c.accSet(OpAcc, a, b, nb1, nb2, nb3, offset, true)
}

// Set returns a copy of a with b written into the view of it at byte
// offset with byte strides nb1..nb3 (ggml_set). Op parameters as Acc's.
func (c *Context) Set(a, b *Tensor, nb1, nb2, nb3, offset uint64) *Tensor {
	return c.accSet(OpSet, a, b, nb1, nb2, nb3, offset, false)
}

// SetInplace is Set writing into a's memory.
func (c *Context) SetInplace(a, b *Tensor, nb1, nb2, nb3, offset uint64) *Tensor {
	return c.accSet(OpSet, a, b, nb1, nb2, nb3, offset, true)
}

// RepeatBack sums the tiles of a into b's shape, the gradient of Repeat
// (ggml_repeat_back).
func (c *Context) RepeatBack(a, b *Tensor) *Tensor {
	if !c.ok(a, b) {
		return nil
	}
	if !CanRepeat(b, a) {
		return c.opErr(OpRepeatBack, ErrShape, "each ne of a must be a multiple of b's", a, b)
	}
	return c.NewOp(OpRepeatBack, a.Type, b.Ne, a)
}

func (c *Context) groupNorm(a *Tensor, groups int, eps float32, inplace bool) *Tensor {
	if !c.ok(a) {
		return nil
	}
	if groups < 1 || groups > math.MaxInt32 {
		return c.opErr(OpGroupNorm, ErrShape, fmt.Sprintf("%d groups", groups), a)
	}
	t := c.unaryLike(OpGroupNorm, inplace, a)
	if t != nil {
		t.SetOpParamI32(0, int32(groups))
		t.SetOpParamF32(1, eps)
	}
	return t
}

// GroupNorm normalizes groups of channels (dimension 2) of each sample
// (dimension 3) to zero mean and unit variance (ggml_group_norm). Op
// parameters: int32 groups, float32 eps.
func (c *Context) GroupNorm(a *Tensor, groups int, eps float32) *Tensor {
	return c.groupNorm(a, groups, eps, false)
}

// GroupNormInplace is GroupNorm writing into a's memory.
func (c *Context) GroupNormInplace(a *Tensor, groups int, eps float32) *Tensor {
	return c.groupNorm(a, groups, eps, true)
}

// OutProd returns the outer products Σ_k a[:, k]·b[:, k]ᵀ: f32 {a.ne0,
// b.ne0, b.ne2, b.ne3} with a broadcast over dimensions 2 and 3
// (ggml_out_prod).
func (c *Context) OutProd(a, b *Tensor) *Tensor {
	if !c.ok(a, b) {
		return nil
	}
	if a.Ne[1] != b.Ne[1] || b.Ne[2]%a.Ne[2] != 0 || b.Ne[3]%a.Ne[3] != 0 || a.IsTransposed() {
		return c.opErr(OpOutProd, ErrShape, "want a.ne1 == b.ne1, b.ne2,3 multiples of a's, a not transposed", a, b)
	}
	return c.NewOp(OpOutProd, TypeF32, [MaxDims]int64{a.Ne[0], b.Ne[0], b.Ne[2], b.Ne[3]}, a, b)
}

// GetRowsBack is the gradient of GetRows: row i of the matrix a is added
// into row b[i] of a zero f32 matrix of c's shape (ggml_get_rows_back), for
// each of b's ids (b may have fewer ids than a has rows; the rest of a is
// unused).
func (c *Context) GetRowsBack(a, b, shape *Tensor) *Tensor {
	if !c.ok(a, b, shape) {
		return nil
	}
	if !a.IsMatrix() || !b.IsVector() || b.Type != TypeI32 || !shape.IsMatrix() || a.Ne[0] != shape.Ne[0] || b.Ne[0] > a.Ne[1] {
		return c.opErr(OpGetRowsBack, ErrShape, "want matrix a, i32 vector b of at most a.ne1 ids, matrix c with c.ne0 == a.ne0", a, b, shape)
	}
	return c.NewOp(OpGetRowsBack, TypeF32, [MaxDims]int64{shape.Ne[0], shape.Ne[1], 1, 1}, a, b)
}
