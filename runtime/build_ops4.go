package runtime

import (
	"fmt"
	"math"
)

// Builders of convolution-style and training ops (IM2COL, POOL_1D,
// POOL_2D, SSM_CONV, CROSS_ENTROPY_LOSS(_BACK), OPT_STEP_ADAMW,
// OPT_STEP_SGD), with ggml 0.27.0's shape rules and op-parameter layout.

// Pooling kinds (ggml_op_pool), op parameter 0 of POOL_1D and POOL_2D.
const (
	PoolMax int32 = 0
	PoolAvg int32 = 1
)

// convOut is ggml_calc_conv_output_size.
func convOut(ins, ks, s, p, d int64) int64 { return (ins+2*p-d*(ks-1)-1)/s + 1 }

func smallInts(vs ...int) bool {
	for _, v := range vs {
		if v < 0 || v > math.MaxInt32 {
			return false
		}
	}
	return true
}

// Im2col unfolds the input b for a convolution with kernel a (ggml_im2col):
// 2-d (is2D) a is {KW, KH, IC, OC} and b {W, H, IC, N}, the result
// {IC·KH·KW, OW, OH, N}; 1-d a is {KW, IC, OC} and b {W, IC, N}, the result
// {IC·KW, OW, N} (s1, p1, d1 unused, 0 in ggml's callers). Out-of-range
// input is 0. Op parameters: int32 s0, s1,
// p0, p1, d0, d1, is2D. typ is the result type (f32 or f16).
func (c *Context) Im2col(a, b *Tensor, s0, s1, p0, p1, d0, d1 int, is2D bool, typ Type) *Tensor {
	if !c.ok(a, b) {
		return nil
	}
	if !smallInts(s0, s1, p0, p1, d0, d1) || s0 < 1 || d0 < 1 || (is2D && (s1 < 1 || d1 < 1)) {
		return c.opErr(OpIm2col, ErrShape, "strides and dilations must be positive, pads non-negative", a, b)
	}
	var ne [MaxDims]int64
	ow := convOut(b.Ne[0], a.Ne[0], int64(s0), int64(p0), int64(d0))
	if is2D {
		if a.Ne[2] != b.Ne[2] {
			return c.opErr(OpIm2col, ErrShape, "a.ne2 must equal b.ne2 (channels)", a, b)
		}
		oh := convOut(b.Ne[1], a.Ne[1], int64(s1), int64(p1), int64(d1))
		ne = [MaxDims]int64{a.Ne[2] * a.Ne[1] * a.Ne[0], ow, oh, b.Ne[3]}
	} else {
		if b.Ne[1] != a.Ne[1] || b.Ne[3] != 1 {
			return c.opErr(OpIm2col, ErrShape, "a.ne1 must equal b.ne1 (channels) and b.ne3 be 1", a, b)
		}
		ne = [MaxDims]int64{a.Ne[1] * a.Ne[0], ow, b.Ne[2], 1}
	}
	if ne[1] < 1 || ne[2] < 1 {
		return c.opErr(OpIm2col, ErrShape, "b too small compared to a", a, b)
	}
	t := c.NewOp(OpIm2col, typ, ne, a, b)
	if t != nil {
		for i, v := range []int{s0, s1, p0, p1, d0, d1} {
			t.SetOpParamI32(i, int32(v))
		}
		if is2D {
			t.SetOpParamI32(6, 1)
		}
	}
	return t
}

// Pool1D pools each row of a with kernel k0, stride s0 and padding p0
// (ggml_pool_1d); the average divides by the window's positions inside a.
// Op parameters: int32 op, k0, s0, p0.
func (c *Context) Pool1D(a *Tensor, op int32, k0, s0, p0 int) *Tensor {
	if !c.ok(a) {
		return nil
	}
	if (op != PoolMax && op != PoolAvg) || !smallInts(k0, s0, p0) || k0 < 1 || s0 < 1 {
		return c.opErr(OpPool1D, ErrShape, fmt.Sprintf("pool %d, kernel %d, stride %d, pad %d", op, k0, s0, p0), a)
	}
	n := (a.Ne[0]+2*int64(p0)-int64(k0))/int64(s0) + 1
	if n < 1 {
		return c.opErr(OpPool1D, ErrShape, "a too small for the kernel", a)
	}
	t := c.NewOp(OpPool1D, TypeF32, [MaxDims]int64{n, a.Ne[1], a.Ne[2], a.Ne[3]}, a)
	if t != nil {
		for i, v := range []int32{op, int32(k0), int32(s0), int32(p0)} {
			t.SetOpParamI32(i, v)
		}
	}
	return t
}

// Pool2D pools each matrix of a with kernel k0×k1, strides s0, s1 and
// paddings p0, p1; the average counts padded positions (ggml_pool_2d). Op
// parameters: int32 op, k0, k1, s0, s1, p0, p1.
func (c *Context) Pool2D(a *Tensor, op int32, k0, k1, s0, s1, p0, p1 int) *Tensor {
	if !c.ok(a) {
		return nil
	}
	if (op != PoolMax && op != PoolAvg) || !smallInts(k0, k1, s0, s1, p0, p1) || k0 < 1 || k1 < 1 || s0 < 1 || s1 < 1 {
		return c.opErr(OpPool2D, ErrShape, fmt.Sprintf("pool %d, kernel %dx%d, strides %d,%d, pads %d,%d", op, k0, k1, s0, s1, p0, p1), a)
	}
	n0 := (a.Ne[0]+2*int64(p0)-int64(k0))/int64(s0) + 1
	n1 := (a.Ne[1]+2*int64(p1)-int64(k1))/int64(s1) + 1
	if n0 < 1 || n1 < 1 {
		return c.opErr(OpPool2D, ErrShape, "a too small for the kernel", a)
	}
	t := c.NewOp(OpPool2D, TypeF32, [MaxDims]int64{n0, n1, a.Ne[2], a.Ne[3]}, a)
	if t != nil {
		for i, v := range []int32{op, int32(k0), int32(k1), int32(s0), int32(s1), int32(p0), int32(p1)} {
			t.SetOpParamI32(i, v)
		}
	}
	return t
}

// SsmConv is Mamba's causal 1-d convolution (ggml_ssm_conv): sx is {d_conv
// - 1 + n_t, d_inner, n_s}, c {d_conv, d_inner}; the result {d_inner,
// n_t, n_s}.
func (c *Context) SsmConv(sx, conv *Tensor) *Tensor {
	if !c.ok(sx, conv) {
		return nil
	}
	nt := sx.Ne[0] - conv.Ne[0] + 1
	if sx.Ne[3] != 1 || !conv.IsMatrix() || sx.Ne[1] != conv.Ne[1] || nt < 1 {
		return c.opErr(OpSsmConv, ErrShape, "want 3-d sx {d_conv-1+n_t, d_inner, n_s} and c {d_conv, d_inner}", sx, conv)
	}
	return c.NewOp(OpSsmConv, TypeF32, [MaxDims]int64{conv.Ne[1], nt, sx.Ne[2], 1}, sx, conv)
}

// CrossEntropyLoss returns -Σ b·log_softmax(a) / rows as a one-element
// tensor (ggml_cross_entropy_loss).
func (c *Context) CrossEntropyLoss(a, b *Tensor) *Tensor {
	if !c.ok(a, b) {
		return nil
	}
	if !SameShape(a, b) {
		return c.opErr(OpCrossEntropyLoss, ErrShape, "shapes differ", a, b)
	}
	return c.NewOp(OpCrossEntropyLoss, a.Type, [MaxDims]int64{1, 1, 1, 1}, a, b)
}

// CrossEntropyLossBack is its gradient: grad (a scalar) times
// (softmax(a) - b) / rows (ggml_cross_entropy_loss_back).
func (c *Context) CrossEntropyLossBack(grad, a, b *Tensor) *Tensor {
	if !c.ok(grad, a, b) {
		return nil
	}
	if !grad.IsScalar() || !SameShape(a, b) {
		return c.opErr(OpCrossEntropyLossBack, ErrShape, "want a scalar gradient and a, b of one shape", grad, a, b)
	}
	return c.NewOp(OpCrossEntropyLossBack, a.Type, a.Ne, grad, a, b)
}

// OptStepAdamw updates the trainable weights a (FlagParam) in place by
// AdamW, with gradient grad, moments m and v (updated too) and f32
// params {alpha, beta1, beta2, eps, wd, beta1h, beta2h}; the result views
// a (ggml_opt_step_adamw).
func (c *Context) OptStepAdamw(a, grad, m, v, params *Tensor) *Tensor {
	if !c.ok(a, grad, m, v, params) {
		return nil
	}
	if !a.HasFlag(FlagParam) {
		return c.opErr(OpOptStepAdamw, ErrGraph, "a is not a trainable parameter (FlagParam)", a)
	}
	if !SameShape(a, grad) || !SameShape(a, m) || !SameShape(a, v) || params.Type != TypeF32 || params.Nelements() != 7 {
		return c.opErr(OpOptStepAdamw, ErrShape, "want grad, m, v of a's shape and 7 f32 params", a, grad, m, v, params)
	}
	t := c.newView(a, OpOptStepAdamw, a.Ne, a.Nb, 0, " (adamw)")
	if t != nil {
		t.Src[0], t.Src[1], t.Src[2], t.Src[3], t.Src[4] = a, grad, m, v, params
	}
	return t
}

// OptStepSgd updates the trainable weights a (FlagParam) in place by SGD
// with weight decay: a·(1 - alpha·wd) - alpha·grad, params f32 {alpha,
// wd}; the result views a (ggml_opt_step_sgd).
func (c *Context) OptStepSgd(a, grad, params *Tensor) *Tensor {
	if !c.ok(a, grad, params) {
		return nil
	}
	if !a.HasFlag(FlagParam) {
		return c.opErr(OpOptStepSgd, ErrGraph, "a is not a trainable parameter (FlagParam)", a)
	}
	if !SameShape(a, grad) || params.Type != TypeF32 || params.Nelements() != 2 {
		return c.opErr(OpOptStepSgd, ErrShape, "want grad of a's shape and 2 f32 params", a, grad, params)
	}
	t := c.newView(a, OpOptStepSgd, a.Ne, a.Nb, 0, " (sgd)")
	if t != nil {
		t.Src[0], t.Src[1], t.Src[2] = a, grad, params
	}
	return t
}

// Scale modes of Interpolate (ggml_scale_mode), op parameter 0, with
// ScaleAlignCorners or-ed in as a flag.
const (
	ScaleNearest      uint32 = 0
	ScaleBilinear     uint32 = 1
	ScaleBicubic      uint32 = 2
	ScaleAlignCorners uint32 = 1 << 8
	ScaleAntialias    uint32 = 1 << 9
)

// Interpolate resizes f32 a to ne0..ne3 by mode (ScaleNearest,
// ScaleBilinear or ScaleBicubic, optionally | ScaleAlignCorners or
// ScaleAntialias) (ggml_interpolate; op UPSCALE, op parameter 0 = mode).
func (c *Context) Interpolate(a *Tensor, ne0, ne1, ne2, ne3 int64, mode uint32) *Tensor {
	if !c.ok(a) {
		return nil
	}
	if mode&0xff > ScaleBicubic || mode&^(0xff|ScaleAlignCorners|ScaleAntialias) != 0 {
		return c.opErr(OpUpscale, ErrUnsupported, fmt.Sprintf("scale mode %#x", mode), a)
	}
	if a.Type != TypeF32 {
		return c.opErr(OpUpscale, ErrUnsupported, "a must be f32", a)
	}
	t := c.NewOp(OpUpscale, a.Type, [MaxDims]int64{ne0, ne1, ne2, ne3}, a)
	if t != nil {
		t.SetOpParamI32(0, int32(mode))
	}
	return t
}

// Upscale multiplies a's first two dimensions by factor (ggml_upscale).
func (c *Context) Upscale(a *Tensor, factor int, mode uint32) *Tensor {
	if !c.ok(a) {
		return nil
	}
	if factor < 1 || int64(factor) > math.MaxInt32 {
		return c.opErr(OpUpscale, ErrShape, fmt.Sprintf("factor %d", factor), a)
	}
	return c.Interpolate(a, a.Ne[0]*int64(factor), a.Ne[1]*int64(factor), a.Ne[2], a.Ne[3], mode)
}
