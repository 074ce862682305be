package runtime

import (
	"fmt"
	"math"
	"math/bits"
)

// Builders of ggml's direct convolutions and their relatives (CONV_2D,
// CONV_3D, CONV_2D_DW, CONV_TRANSPOSE_1D, CONV_TRANSPOSE_2D, IM2COL_3D,
// IM2COL_BACK, COL2IM_1D, POOL_2D_BACK, WIN_PART, WIN_UNPART, GET_REL_POS,
// ADD_REL_POS), with ggml 0.27.0's shape rules and op-parameter layout.
// Where ggml asserts, these record an error wrapping ErrShape.

// mulNe multiplies element counts, reporting false on overflow or a
// non-positive factor.
func mulNe(vs ...int64) (int64, bool) {
	p := uint64(1)
	for _, v := range vs {
		if v < 1 {
			return 0, false
		}
		hi, lo := bits.Mul64(p, uint64(v))
		if hi != 0 || lo > math.MaxInt64 {
			return 0, false
		}
		p = lo
	}
	return int64(p), true
}

// setI32 sets t's op parameters 0.. to vs (t may be nil).
func setI32(t *Tensor, vs ...int) *Tensor {
	if t != nil {
		for i, v := range vs {
			t.SetOpParamI32(i, int32(v))
		}
	}
	return t
}

// convParamsOK checks strides and dilations (≥ 1) and pads (≥ 0).
func convParamsOK(strides, pads, dils []int) bool {
	for _, v := range append(append([]int{}, strides...), dils...) {
		if v < 1 || v > math.MaxInt32 {
			return false
		}
	}
	return smallInts(pads...)
}

// Conv2DDirect convolves input b {W, H, C, N} (f32) with kernel a {KW, KH,
// C, OC} (f32 or f16) in one op (ggml_conv_2d_direct): the result is f32
// {OW, OH, OC, N} with OW = (W + 2·p0 - d0·(KW-1) - 1)/s0 + 1 and OH
// likewise. Op parameters: int32 s0, s1, p0, p1, d0, d1.
func (c *Context) Conv2DDirect(a, b *Tensor, s0, s1, p0, p1, d0, d1 int) *Tensor {
	if !c.ok(a, b) {
		return nil
	}
	if !convParamsOK([]int{s0, s1}, []int{p0, p1}, []int{d0, d1}) {
		return c.opErr(OpConv2D, ErrShape, "strides and dilations must be positive, pads non-negative", a, b)
	}
	if a.Ne[2] != b.Ne[2] {
		return c.opErr(OpConv2D, ErrShape, "a.ne2 must equal b.ne2 (channels)", a, b)
	}
	ow := convOut(b.Ne[0], a.Ne[0], int64(s0), int64(p0), int64(d0))
	oh := convOut(b.Ne[1], a.Ne[1], int64(s1), int64(p1), int64(d1))
	if ow < 1 || oh < 1 {
		return c.opErr(OpConv2D, ErrShape, "b too small compared to a", a, b)
	}
	return setI32(c.NewOp(OpConv2D, b.Type, [MaxDims]int64{ow, oh, a.Ne[3], b.Ne[3]}, a, b), s0, s1, p0, p1, d0, d1)
}

// Conv2DDwDirect is a depthwise 2-d convolution (ggml_conv_2d_dw_direct):
// channel c of input b {W, H, C, N} is convolved with kernel a {KW, KH, 1,
// C}; the result {OW, OH, C, N} has b's type. When b's channels are its
// densest dimension (a permuted channels-last layout), the result is laid
// out the same way, as ggml does. Op parameters: int32 s0, s1, p0, p1, d0,
// d1.
func (c *Context) Conv2DDwDirect(a, b *Tensor, s0, s1, p0, p1, d0, d1 int) *Tensor {
	if !c.ok(a, b) {
		return nil
	}
	if !convParamsOK([]int{s0, s1}, []int{p0, p1}, []int{d0, d1}) {
		return c.opErr(OpConv2DDw, ErrShape, "strides and dilations must be positive, pads non-negative", a, b)
	}
	if a.Ne[2] != 1 || a.Ne[3] != b.Ne[2] {
		return c.opErr(OpConv2DDw, ErrShape, "want a.ne2 == 1 and a.ne3 == b.ne2 (channels)", a, b)
	}
	ne := [MaxDims]int64{convOut(b.Ne[0], a.Ne[0], int64(s0), int64(p0), int64(d0)),
		convOut(b.Ne[1], a.Ne[1], int64(s1), int64(p1), int64(d1)), b.Ne[2], b.Ne[3]}
	if ne[0] < 1 || ne[1] < 1 {
		return c.opErr(OpConv2DDw, ErrShape, "b too small compared to a", a, b)
	}
	var nb *[MaxDims]uint64
	if es := b.Type.Size(); b.Nb[0] > b.Nb[2] && b.Nb[1] > b.Nb[0] && b.Nb[2] == es && b.Type.BlockSize() == 1 {
		// ggml_is_contiguous_channels: the result is CWHN too.
		s, err := contiguousStrides(b.Type, [MaxDims]int64{ne[2], ne[0], ne[1], ne[3]})
		if err != nil {
			return c.Fail(fmt.Errorf("%s: %w", OpConv2DDw, err))
		}
		nb = &[MaxDims]uint64{s[1], s[2], s[0], s[3]}
	}
	t := c.NewTensorStrided(b.Type, ne, nb)
	if t == nil {
		return nil
	}
	t.Op, t.Src[0], t.Src[1] = OpConv2DDw, a, b
	return setI32(t, s0, s1, p0, p1, d0, d1)
}

// Conv3DDirect convolves input b {W, H, D, IC·N} (f32) with kernel a {KW,
// KH, KD, IC·OC} (f32 or f16) in one op (ggml_conv_3d_direct): the result is
// f32 {OW, OH, OD, OC·N}. Op parameters: int32 s0, s1, s2, p0, p1, p2, d0,
// d1, d2, ic, n, oc.
func (c *Context) Conv3DDirect(a, b *Tensor, s0, s1, s2, p0, p1, p2, d0, d1, d2, ic, n, oc int) *Tensor {
	if !c.ok(a, b) {
		return nil
	}
	if !convParamsOK([]int{s0, s1, s2, ic, n, oc}, []int{p0, p1, p2}, []int{d0, d1, d2}) {
		return c.opErr(OpConv3D, ErrShape, "strides, dilations, channels and batch must be positive, pads non-negative", a, b)
	}
	kc, ok1 := mulNe(int64(ic), int64(oc))
	bc, ok2 := mulNe(int64(ic), int64(n))
	on, ok3 := mulNe(int64(oc), int64(n))
	if !ok1 || !ok2 || !ok3 || a.Ne[3] != kc || b.Ne[3] != bc {
		return c.opErr(OpConv3D, ErrShape, fmt.Sprintf("want a.ne3 == ic·oc and b.ne3 == ic·n (ic %d, n %d, oc %d)", ic, n, oc), a, b)
	}
	ne := [MaxDims]int64{convOut(b.Ne[0], a.Ne[0], int64(s0), int64(p0), int64(d0)), convOut(b.Ne[1], a.Ne[1], int64(s1), int64(p1), int64(d1)),
		convOut(b.Ne[2], a.Ne[2], int64(s2), int64(p2), int64(d2)), on}
	if ne[0] < 1 || ne[1] < 1 || ne[2] < 1 {
		return c.opErr(OpConv3D, ErrShape, "b too small compared to a", a, b)
	}
	return setI32(c.NewOp(OpConv3D, TypeF32, ne, a, b), s0, s1, s2, p0, p1, p2, d0, d1, d2, ic, n, oc)
}

// Im2col3D unfolds input b {W, H, D, IC·N} for a 3-d convolution with
// kernel a {KW, KH, KD, ·} (ggml_im2col_3d): the result {IC·KD·KH·KW, OW,
// OH, OD·N} of type typ (f32 or f16), 0 outside the input. Op parameters:
// int32 s0, s1, s2, p0, p1, p2, d0, d1, d2, ic.
func (c *Context) Im2col3D(a, b *Tensor, ic, s0, s1, s2, p0, p1, p2, d0, d1, d2 int, typ Type) *Tensor {
	if !c.ok(a, b) {
		return nil
	}
	if !convParamsOK([]int{s0, s1, s2, ic}, []int{p0, p1, p2}, []int{d0, d1, d2}) || (typ != TypeF32 && typ != TypeF16) {
		return c.opErr(OpIm2col3D, ErrShape, "strides, dilations and channels must be positive, pads non-negative, the type f32 or f16", a, b)
	}
	if b.Ne[3]%int64(ic) != 0 {
		return c.opErr(OpIm2col3D, ErrShape, fmt.Sprintf("b.ne3 is not a multiple of ic %d", ic), a, b)
	}
	n := b.Ne[3] / int64(ic)
	od := convOut(b.Ne[2], a.Ne[2], int64(s2), int64(p2), int64(d2))
	oh := convOut(b.Ne[1], a.Ne[1], int64(s1), int64(p1), int64(d1))
	ow := convOut(b.Ne[0], a.Ne[0], int64(s0), int64(p0), int64(d0))
	k, ok1 := mulNe(a.Ne[0], a.Ne[1], a.Ne[2], int64(ic))
	odn, ok2 := mulNe(od, n)
	if !ok1 || !ok2 || ow < 1 || oh < 1 {
		return c.opErr(OpIm2col3D, ErrShape, "b too small compared to a", a, b)
	}
	return setI32(c.NewOp(OpIm2col3D, typ, [MaxDims]int64{k, ow, oh, odn}, a, b), s0, s1, s2, p0, p1, p2, d0, d1, d2, ic)
}

// Im2colBack is IM2COL's gradient (ggml_im2col_back): a is the gradient of
// an IM2COL result (f32 {IC·KH·KW, OW, OH, N}; 1-d {IC·KW, OW, N}), b the
// kernel (only its shape is used) and ne the shape of IM2COL's input, that
// of the f32 result, {W, H, IC, N} (1-d {W, IC, N, 1}). Op parameters as
// Im2col's.
func (c *Context) Im2colBack(a, b *Tensor, ne [MaxDims]int64, s0, s1, p0, p1, d0, d1 int, is2D bool) *Tensor {
	if !c.ok(a, b) {
		return nil
	}
	if !convParamsOK([]int{s0, d0}, []int{p0, p1, s1, d1}, nil) || (is2D && (s1 < 1 || d1 < 1)) {
		return c.opErr(OpIm2colBack, ErrShape, "strides and dilations must be positive, pads non-negative", a, b)
	}
	var k int64
	var ok bool
	if is2D {
		k, ok = mulNe(ne[2], b.Ne[1], b.Ne[0])
		ok = ok && a.Ne[3] == ne[3]
	} else {
		k, ok = mulNe(ne[1], b.Ne[0])
		ok = ok && a.Ne[2] == ne[2] && a.Ne[3] == 1 && ne[3] == 1
	}
	if !ok || a.Type != TypeF32 || a.Ne[0] != k {
		return c.opErr(OpIm2colBack, ErrShape, fmt.Sprintf("f32 gradient does not fit the input shape %v", ne), a, b)
	}
	flag := 0
	if is2D {
		flag = 1
	}
	return setI32(c.NewOp(OpIm2colBack, TypeF32, ne, a, b), s0, s1, p0, p1, d0, d1, flag)
}

// Col2im1D folds columns a {K·oc, T} (dense f32, f16 or bf16) back into a
// signal (ggml_col2im_1d): the result {T', oc} of a's type, T' = (T-1)·s0 +
// K - 2·p0, sums the columns' overlapping taps. Op parameters: int32 s0,
// oc, p0.
func (c *Context) Col2im1D(a *Tensor, s0, oc, p0 int) *Tensor {
	if !c.ok(a) {
		return nil
	}
	if !convParamsOK([]int{s0, oc}, []int{p0}, nil) || !a.IsMatrix() || !a.IsContiguous() ||
		(a.Type != TypeF32 && a.Type != TypeF16 && a.Type != TypeBF16) {
		return c.opErr(OpCol2im1D, ErrShape, "want a dense f32/f16/bf16 matrix, positive stride and oc, pad ≥ 0", a)
	}
	k := a.Ne[0] / int64(oc)
	tOut := (a.Ne[1]-1)*int64(s0) + k - 2*int64(p0)
	if k*int64(oc) != a.Ne[0] || k < 1 || tOut < 1 {
		return c.opErr(OpCol2im1D, ErrShape, fmt.Sprintf("a.ne0 is not a whole number of %d channels or the output is empty", oc), a)
	}
	return setI32(c.NewOp(OpCol2im1D, a.Type, [MaxDims]int64{tOut, int64(oc), 1, 1}, a), s0, oc, p0)
}

// ConvTranspose1D is a transposed 1-d convolution (ggml_conv_transpose_1d)
// of input b {L, IC} (f32) with kernel a {K, OC, IC} (f32 or f16): input i
// through tap j lands on output i·s0 + j·d0 - p0; the result is f32 {(L-1)·s0
// - 2·p0 + d0·(K-1) + 1, OC}. ggml asserts p0 == 0 and d0 == 1; so does
// this builder. Op parameters: int32 s0, p0, d0.
func (c *Context) ConvTranspose1D(a, b *Tensor, s0, p0, d0 int) *Tensor {
	if !c.ok(a, b) {
		return nil
	}
	if s0 < 1 || s0 > math.MaxInt32 || p0 != 0 || d0 != 1 {
		return c.opErr(OpConvTranspose1D, ErrShape, "want a positive stride, p0 0 and d0 1", a, b)
	}
	if !b.IsMatrix() || a.Ne[2] != b.Ne[1] || a.Ne[3] != 1 {
		return c.opErr(OpConvTranspose1D, ErrShape, "want matrix b and a.ne2 == b.ne1 (channels), a.ne3 == 1", a, b)
	}
	n := (b.Ne[0]-1)*int64(s0) + a.Ne[0]
	return setI32(c.NewOp(OpConvTranspose1D, TypeF32, [MaxDims]int64{n, a.Ne[1], b.Ne[2], 1}, a, b), s0, p0, d0)
}

// ConvTranspose2DP0 is a transposed 2-d convolution without padding
// (ggml_conv_transpose_2d_p0) of input b {W, H, IC, N} (f32) with kernel a
// {KW, KH, OC, IC} (f32 or f16): the result is f32 {(W-1)·s + KW, (H-1)·s +
// KH, OC, N}. Op parameter: int32 stride.
func (c *Context) ConvTranspose2DP0(a, b *Tensor, stride int) *Tensor {
	if !c.ok(a, b) {
		return nil
	}
	if stride < 1 || stride > math.MaxInt32 || a.Ne[3] != b.Ne[2] {
		return c.opErr(OpConvTranspose2D, ErrShape, "want a positive stride and a.ne3 == b.ne2 (channels)", a, b)
	}
	ne := [MaxDims]int64{(b.Ne[0]-1)*int64(stride) + a.Ne[0], (b.Ne[1]-1)*int64(stride) + a.Ne[1], a.Ne[2], b.Ne[3]}
	return setI32(c.NewOp(OpConvTranspose2D, TypeF32, ne, a, b), stride)
}

// Pool2DBack is POOL_2D's gradient (ggml_pool_2d_back): a is the gradient
// of Pool2D(af, ...) and the f32 result, of af's shape, gets each of a's
// values at the window's first maximum of af (PoolMax) or spread as
// value/(k0·k1) over the window (PoolAvg). Op parameters as Pool2D's.
func (c *Context) Pool2DBack(a, af *Tensor, op int32, k0, k1, s0, s1, p0, p1 int) *Tensor {
	if !c.ok(a, af) {
		return nil
	}
	if (op != PoolMax && op != PoolAvg) || !convParamsOK([]int{k0, k1, s0, s1}, []int{p0, p1}, nil) {
		return c.opErr(OpPool2DBack, ErrShape, fmt.Sprintf("pool %d, kernel %dx%d, strides %d,%d, pads %d,%d", op, k0, k1, s0, s1, p0, p1), a, af)
	}
	want := [MaxDims]int64{(af.Ne[0]+2*int64(p0)-int64(k0))/int64(s0) + 1, (af.Ne[1]+2*int64(p1)-int64(k1))/int64(s1) + 1, af.Ne[2], af.Ne[3]}
	if a.Ne != want {
		return c.opErr(OpPool2DBack, ErrShape, fmt.Sprintf("a must have the pooled shape %v of af", want), a, af)
	}
	t := c.NewOp(OpPool2DBack, TypeF32, af.Ne, a, af)
	if t != nil {
		for i, v := range []int32{op, int32(k0), int32(k1), int32(s0), int32(s1), int32(p0), int32(p1)} {
			t.SetOpParamI32(i, v)
		}
	}
	return t
}

// WinPart splits a {C, W, H, 1} (f32) into w×w windows (ggml_win_part):
// the result {C, w, w, npx·npy} has window py·npx + px at (px, py), 0 past
// a's edge, npx = ⌈W/w⌉, npy = ⌈H/w⌉. Op parameters: int32 npx, npy, w.
func (c *Context) WinPart(a *Tensor, w int) *Tensor {
	if !c.ok(a) {
		return nil
	}
	if a.Ne[3] != 1 || a.Type != TypeF32 || w < 1 || w > math.MaxInt32 {
		return c.opErr(OpWinPart, ErrShape, fmt.Sprintf("want f32 a with ne3 == 1 and a positive window, got w %d", w), a)
	}
	npx, npy := (a.Ne[1]+int64(w)-1)/int64(w), (a.Ne[2]+int64(w)-1)/int64(w)
	np, ok := mulNe(npx, npy)
	if !ok || npx > math.MaxInt32 || npy > math.MaxInt32 {
		return c.opErr(OpWinPart, ErrShape, "too many windows", a)
	}
	return setI32(c.NewOp(OpWinPart, TypeF32, [MaxDims]int64{a.Ne[0], int64(w), int64(w), np}, a), int(npx), int(npy), w)
}

// WinUnpart joins WinPart's windows a {C, w, w, np} (f32) back into an
// image {C, w0, h0} (ggml_win_unpart). Op parameter: int32 w.
func (c *Context) WinUnpart(a *Tensor, w0, h0, w int) *Tensor {
	if !c.ok(a) {
		return nil
	}
	if a.Type != TypeF32 || w < 1 || w0 < 1 || h0 < 1 || a.Ne[1] != int64(w) || a.Ne[2] != int64(w) {
		return c.opErr(OpWinUnpart, ErrShape, fmt.Sprintf("want f32 windows of %d×%d and a positive w0 %d, h0 %d", w, w, w0, h0), a)
	}
	if n, ok := mulNe((int64(w0)+int64(w)-1)/int64(w), (int64(h0)+int64(w)-1)/int64(w)); !ok || n > a.Ne[3] {
		return c.opErr(OpWinUnpart, ErrShape, "a has fewer windows than the image needs", a)
	}
	return setI32(c.NewOp(OpWinUnpart, TypeF32, [MaxDims]int64{a.Ne[0], int64(w0), int64(h0), 1}, a), w)
}

// GetRelPos gathers relative-position embeddings (ggml_get_rel_pos): a is
// f16 {C, 2·k-1}, the f16 result {C, kh, qh} holds row (kh-1-i) + j of a at
// (i, j). ggml requires qh == kh.
func (c *Context) GetRelPos(a *Tensor, qh, kh int) *Tensor {
	if !c.ok(a) {
		return nil
	}
	if qh != kh || kh < 1 || a.Type != TypeF16 || a.Ne[1] != 2*int64(kh)-1 || a.Ne[2] != 1 || a.Ne[3] != 1 {
		return c.opErr(OpGetRelPos, ErrShape, fmt.Sprintf("want qh == kh (%d, %d) and f16 a {C, 2·kh-1}", qh, kh), a)
	}
	return c.NewOp(OpGetRelPos, TypeF16, [MaxDims]int64{a.Ne[0], int64(kh), int64(qh), 1}, a)
}

// AddRelPos adds decomposed relative-position terms to attention scores
// (ggml_add_rel_pos): a is dense f32 {W·W, H, N} (H = pw.ne1·pw.ne2), pw and
// ph dense f32 {W, pw.ne1, pw.ne2, N}; element y·W + x of row r becomes
// a + ph[r, y] + pw[r, x]. Op parameter: int32 inplace (0).
func (c *Context) AddRelPos(a, pw, ph *Tensor) *Tensor { return c.addRelPos(a, pw, ph, false) }

// AddRelPosInplace is AddRelPos writing into a's memory
// (ggml_add_rel_pos_inplace; op parameter inplace 1).
func (c *Context) AddRelPosInplace(a, pw, ph *Tensor) *Tensor { return c.addRelPos(a, pw, ph, true) }

func (c *Context) addRelPos(a, pw, ph *Tensor, inplace bool) *Tensor {
	if !c.ok(a, pw, ph) {
		return nil
	}
	w2, ok := mulNe(pw.Ne[0], pw.Ne[0])
	h, ok2 := mulNe(pw.Ne[1], pw.Ne[2])
	if a.Type != TypeF32 || pw.Type != TypeF32 || ph.Type != TypeF32 || pw.Ne != ph.Ne || !a.IsContiguous() ||
		!pw.IsContiguous() || !ph.IsContiguous() || !ok || !ok2 || a.Ne[0] != w2 || a.Ne[1] != h || a.Ne[2] != pw.Ne[3] || a.Ne[3] != 1 {
		return c.opErr(OpAddRelPos, ErrShape, "want dense f32 a {W·W, H'·H'', N}, pw and ph {W, H', H'', N}", a, pw, ph)
	}
	t := c.unaryLike(OpAddRelPos, inplace, a, pw, ph)
	if t != nil && inplace {
		t.SetOpParamI32(0, 1)
	}
	return t
}
