package opengl

import (
	"fmt"

	"github.com/gogml/gogml/runtime"
)

// This file maps MUL_MAT_ID, the whole-tensor reductions (SUM,
// COUNT_EQUAL), DIAG, DIAG_MASK_ZERO and the gathering ops of spatial.comp
// (UPSCALE, POOL_1D/2D, CONV_TRANSPOSE_1D, SSM_CONV, TIMESTEP_EMBEDDING,
// OUT_PROD, GET_ROWS_BACK, CONV_2D(_DW), CONV_3D, CONV_TRANSPOSE_2D, COL2IM_1D) to
// their kernels. Like kernels.go it has
// no GL calls and no build tag.

// Modes of spatial.comp.
const (
	spatialUpscale uint32 = iota
	spatialPool1D
	spatialPool2D
	spatialConvT1D
	spatialSsmConv
	spatialTimestep
	spatialOutProd
	spatialGetRowsBack
	spatialConv2DDw
	spatialConvT2D
	spatialCol2im1D
	spatialConv2D
	spatialIm2col3D
	spatialConv3D
)

// Modes of reduce.comp.
const (
	reduceSum uint32 = iota
	reduceCountEqual
)

// miscDiag is misc.comp's DIAG (after the modes of kernels_more.go).
const miscDiag = miscRepeatBack + 1

// maxLoop is the most loop iterations a new kernel lets one invocation
// run: llvmpipe stops an invocation after 65535 in all (RATIONALE:
// "OpenGL's later ops"), so shapes past this are refused, not computed in
// part.
const maxLoop = 60000

// reduceLocal is reduce.comp's work group size.
const reduceLocal = 256

// ggml's scale modes and flags (UPSCALE's op parameter 0).
const (
	scaleNearest      = 0
	scaleBilinear     = 1
	scaleBicubic      = 2
	scaleAlignCorners = 1 << 8
	scaleAntialias    = 1 << 9
)

// ggml's pool kinds (op parameter 0 of POOL_1D and POOL_2D).
const (
	poolMax = 0
	poolAvg = 1
)

// mulMatKLimit is the longest inner dimension mul_mat.comp takes for
// weights of type a (0: a type it does not read). llvmpipe's guard counts
// the iterations of the inner loops Mesa does not unroll too, so how far
// along k an invocation gets depends on the type's code. Bisection with
// one result column (the worst case) on Mesa 22.3.6 llvmpipe found the
// longest k still summed whole: f32/f16/bf16 65551, q8_0 209696, q4_0
// 349536, q4_1/q5_0/q5_1 58240, q2_K/q5_K/q6_K 58112, q4_K 38144, q3_K
// 27392; the limits are nine tenths of those in whole blocks.
// TestOpsMulMatLoopGuard runs every type at its limit.
func mulMatKLimit(a runtime.Type) int64 {
	switch a {
	case runtime.TypeF32, runtime.TypeF16, runtime.TypeBF16:
		return maxLoop
	case runtime.TypeQ8_0:
		return 32 * 5890
	case runtime.TypeQ4_0:
		return 32 * 9830
	case runtime.TypeQ4_1, runtime.TypeQ5_0, runtime.TypeQ5_1:
		return 32 * 1630
	case runtime.TypeQ2_K, runtime.TypeQ5_K, runtime.TypeQ6_K:
		return 256 * 204
	case runtime.TypeQ4_K:
		return 256 * 134
	case runtime.TypeQ3_K:
		return 256 * 96
	}
	return 0
}

// planSpatial maps the ops of this file; ok is false for other ops.
func planSpatial(t *runtime.Tensor) (l *launch, why string, ok bool) {
	s0, s1 := t.Src[0], t.Src[1]
	p := func(i int) int64 { return int64(t.OpParamI32(i)) }
	spatial := func(mode uint32, srcs ...*runtime.Tensor) *launch {
		l := &launch{kernel: "spatial", grid: gridElements, local: 128, extra: [8]uint32{mode}}
		copy(l.srcs[:], srcs)
		return l
	}
	switch t.Op {
	case runtime.OpMulMatId:
		l, why = planMulMatID(t)
		return l, why, true
	case runtime.OpSum, runtime.OpCountEqual:
		n := 2
		if t.Op == runtime.OpSum {
			n = 1
		}
		if why := need(t, n); why != "" {
			return nil, why, true
		}
		l := &launch{kernel: "reduce", grid: gridCount, count: 1, local: reduceLocal, srcs: [3]*runtime.Tensor{s0}}
		if t.Op == runtime.OpSum {
			if !isFloat(s0.Type) || t.Type != s0.Type || !t.IsScalar() {
				return nil, "want a float source and a scalar result of its type", true
			}
		} else {
			if s0.Type != runtime.TypeI32 || s1.Type != runtime.TypeI32 || s0.Ne != s1.Ne || t.Type != runtime.TypeI64 || !t.IsScalar() {
				return nil, "want i32 sources of one shape and an i64 scalar", true
			}
			l.srcs[1], l.extra[0] = s1, reduceCountEqual
		}
		if s0.Nelements() > reduceLocal*maxLoop {
			return nil, fmt.Sprintf("more than %d elements (llvmpipe's loop limit)", reduceLocal*maxLoop), true
		}
		return l, "", true
	case runtime.OpDiag:
		if why := need(t, 1); why != "" {
			return nil, why, true
		}
		if !isFloat(t.Type) || s0.Type != t.Type || s0.Ne[1] != 1 || t.Ne != [4]int64{s0.Ne[0], s0.Ne[0], s0.Ne[2], s0.Ne[3]} {
			return nil, "want a float {n, 1, ...} source and {n, n, ...} result of its type", true
		}
		return &launch{kernel: "misc", grid: gridElements, local: 128, srcs: [3]*runtime.Tensor{s0}, extra: [8]uint32{miscDiag}}, "", true
	case runtime.OpUpscale:
		if why := need(t, 1); why != "" {
			return nil, why, true
		}
		flags := p(0)
		mode := flags & 0xff
		if !isFloat(s0.Type) || t.Type != runtime.TypeF32 || flags&^(0xff|scaleAlignCorners|scaleAntialias) != 0 || mode > scaleBicubic ||
			(flags&scaleAntialias != 0 && mode != scaleBilinear) {
			return nil, "want a float source, an f32 result, nearest, bilinear or bicubic (antialias: bilinear only)", true
		}
		for d := 0; d < 4; d++ {
			if t.Ne[d] < 1 || s0.Ne[d] < 1 {
				return nil, "empty dimension", true
			}
		}
		if flags&scaleAntialias != 0 {
			// The filter's support is max(1, 1/scale) source pixels each
			// side of the centre.
			sup := func(d int) int64 { return max(1, (s0.Ne[d]+t.Ne[d]-1)/t.Ne[d]) }
			if (2*sup(0)+2)*(2*sup(1)+3) > maxLoop {
				return nil, "antialiasing window too large (llvmpipe's loop limit)", true
			}
		}
		return spatial(spatialUpscale, s0), "", true
	case runtime.OpPool1D:
		if why := need(t, 1); why != "" {
			return nil, why, true
		}
		if !isFloat(s0.Type) || t.Type != runtime.TypeF32 || (p(0) != poolMax && p(0) != poolAvg) {
			return nil, "want a float source, an f32 result, max or avg", true
		}
		k0, st0, p0 := p(1), p(2), p(3)
		if k0 < 1 || st0 < 1 || p0 < 0 || t.Ne != [4]int64{(s0.Ne[0]+2*p0-k0)/st0 + 1, s0.Ne[1], s0.Ne[2], s0.Ne[3]} || t.Ne[0] < 1 {
			return nil, "pooling parameters do not fit the shapes", true
		}
		if k0 > maxLoop {
			return nil, "window longer than 60000 (llvmpipe's loop limit)", true
		}
		return spatial(spatialPool1D, s0), "", true
	case runtime.OpPool2D:
		if why := need(t, 1); why != "" {
			return nil, why, true
		}
		if !isFloat(s0.Type) || t.Type != runtime.TypeF32 || (p(0) != poolMax && p(0) != poolAvg) {
			return nil, "want a float source, an f32 result, max or avg", true
		}
		k0, k1, st0, st1, p0, p1 := p(1), p(2), p(3), p(4), p(5), p(6)
		if k0 < 1 || k1 < 1 || st0 < 1 || st1 < 1 || p0 < 0 || p1 < 0 || t.Ne[0] < 1 || t.Ne[1] < 1 ||
			t.Ne != [4]int64{(s0.Ne[0]+2*p0-k0)/st0 + 1, (s0.Ne[1]+2*p1-k1)/st1 + 1, s0.Ne[2], s0.Ne[3]} {
			return nil, "pooling parameters do not fit the shapes", true
		}
		if k1 > maxLoop || k1*(k0+1) > maxLoop {
			return nil, "window of more than 60000 elements (llvmpipe's loop limit)", true
		}
		return spatial(spatialPool2D, s0), "", true
	case runtime.OpConvTranspose1D:
		if why := need(t, 2); why != "" {
			return nil, why, true
		}
		if (s0.Type != runtime.TypeF32 && s0.Type != runtime.TypeF16) || s1.Type != runtime.TypeF32 || t.Type != runtime.TypeF32 {
			return nil, "want an f32 or f16 kernel, f32 input and result", true
		}
		st0 := p(0)
		if st0 < 1 || p(1) != 0 || p(2) != 1 {
			return nil, "want a positive stride, p0 0 and d0 1 (as ggml asserts)", true
		}
		kw, cin := s0.Ne[0], s0.Ne[2]
		n := (s1.Ne[0]-1)*st0 + kw
		if s0.Ne[3] != 1 || s1.Ne[3] != 1 || cin != s1.Ne[1] || t.Ne != [4]int64{n, s0.Ne[1], s1.Ne[2], 1} {
			return nil, "kernel {K, OC, C}, input {L, C, N} and result {L', OC, N} do not fit", true
		}
		if ((kw+st0-1)/st0+1)*(cin+1) > maxLoop {
			return nil, "taps times channels past 60000 (llvmpipe's loop limit)", true
		}
		return spatial(spatialConvT1D, s0, s1), "", true
	case runtime.OpDiagMaskZero:
		l, why := unaryLaunch(t, fDiagMaskZero)
		if l != nil {
			l.dense = false // the kernel needs each element's coordinates
		}
		return l, why, true
	case runtime.OpSsmConv:
		if why := need(t, 2); why != "" {
			return nil, why, true
		}
		nt := s0.Ne[0] - s1.Ne[0] + 1
		if s0.Type != runtime.TypeF32 || s1.Type != runtime.TypeF32 || t.Type != runtime.TypeF32 || s0.Ne[3] != 1 || !s1.IsMatrix() ||
			s0.Ne[1] != s1.Ne[1] || nt < 1 || t.Ne != [4]int64{s1.Ne[1], nt, s0.Ne[2], 1} {
			return nil, "want f32 {d_conv-1+n_t, d_inner, n_s} and {d_conv, d_inner}", true
		}
		if s1.Ne[0] > maxLoop {
			return nil, "d_conv past 60000 (llvmpipe's loop limit)", true
		}
		return spatial(spatialSsmConv, s0, s1), "", true
	case runtime.OpTimestepEmbedding:
		if why := need(t, 1); why != "" {
			return nil, why, true
		}
		dim := p(0)
		if s0.Type != runtime.TypeF32 || t.Type != runtime.TypeF32 || dim < 1 || t.Ne[0] < dim || t.Ne[1] != s0.Ne[0] || p(1) < 1 {
			return nil, "want f32 timesteps and an f32 {dim, n} result", true
		}
		return spatial(spatialTimestep, s0), "", true
	case runtime.OpOutProd:
		if why := need(t, 2); why != "" {
			return nil, why, true
		}
		if !isRowType(s0.Type) || (s0.Type.IsQuantized() && !s0.IsContiguousRows()) {
			return nil, fmt.Sprintf("a of %s (want float, or dense rows of a type the GL kernels read)", s0.Type), true
		}
		if !isFloat(s1.Type) || t.Type != runtime.TypeF32 || s0.Ne[1] != s1.Ne[1] || s0.Ne[2] == 0 || s0.Ne[3] == 0 ||
			s1.Ne[2]%s0.Ne[2] != 0 || s1.Ne[3]%s0.Ne[3] != 0 || t.Ne != [4]int64{s0.Ne[0], s1.Ne[0], s1.Ne[2], s1.Ne[3]} {
			return nil, "want float b with a.ne1 == b.ne1 and an f32 {a.ne0, b.ne0, b.ne2, b.ne3} result", true
		}
		if s0.Ne[1] > maxLoop {
			return nil, "k past 60000 (llvmpipe's loop limit)", true
		}
		return spatial(spatialOutProd, s0, s1), "", true
	case runtime.OpGetRowsBack:
		if why := need(t, 2); why != "" {
			return nil, why, true
		}
		if !isFloat(s0.Type) || s1.Type != runtime.TypeI32 || t.Type != runtime.TypeF32 || !s0.IsMatrix() || !s1.IsVector() ||
			!t.IsMatrix() || s0.Ne[0] != t.Ne[0] || s1.Ne[0] > s0.Ne[1] {
			return nil, "want float rows, an i32 ids vector (at most one per row), an f32 matrix result", true
		}
		if s1.Ne[0] > maxLoop {
			return nil, "more than 60000 ids (llvmpipe's loop limit)", true
		}
		l := spatial(spatialGetRowsBack, s0, s1)
		l.status = true
		return l, "", true
	case runtime.OpConv3D:
		if why := cpuWhy(t); why != "" {
			return nil, why, true
		}
		// Every loop counted with its leaving pass, as seqIters does.
		if ic := p(9); ic*(s0.Ne[2]*(s0.Ne[1]*(s0.Ne[0]+2)+2)+2)+2 > maxLoop {
			return nil, "channels times kernel taps past 60000 (llvmpipe's loop limit)", true
		}
		return spatial(spatialConv3D, s0, s1), "", true
	case runtime.OpConv2D, runtime.OpConv2DDw:
		if why := need(t, 2); why != "" {
			return nil, why, true
		}
		if (s0.Type != runtime.TypeF32 && s0.Type != runtime.TypeF16) || s1.Type != runtime.TypeF32 || t.Type != runtime.TypeF32 {
			return nil, "want an f32 or f16 kernel, f32 input and result", true
		}
		if p(0) < 1 || p(1) < 1 || p(4) < 1 || p(5) < 1 || p(2) < 0 || p(3) < 0 {
			return nil, "strides and dilations must be positive, pads non-negative", true
		}
		out := func(in, k, s, pad, d int64) int64 { return (in+2*pad-d*(k-1)-1)/s + 1 }
		if t.Op == runtime.OpConv2D {
			if s0.Ne[2] != s1.Ne[2] || t.Ne != [4]int64{out(s1.Ne[0], s0.Ne[0], p(0), p(2), p(4)), out(s1.Ne[1], s0.Ne[1], p(1), p(3), p(5)), s0.Ne[3], s1.Ne[3]} {
				return nil, "kernel {KW, KH, C, OC}, input {W, H, C, N} and result {OW, OH, OC, N} do not fit", true
			}
			if s0.Ne[2]*(s0.Ne[1]*(s0.Ne[0]+1)+1) > maxLoop {
				return nil, "channels times kernel taps past 60000 (llvmpipe's loop limit)", true
			}
			return spatial(spatialConv2D, s0, s1), "", true
		}
		if s0.Ne[2] != 1 || s0.Ne[3] != s1.Ne[2] ||
			t.Ne != [4]int64{out(s1.Ne[0], s0.Ne[0], p(0), p(2), p(4)), out(s1.Ne[1], s0.Ne[1], p(1), p(3), p(5)), s1.Ne[2], s1.Ne[3]} {
			return nil, "kernel {KW, KH, 1, C}, input {W, H, C, N} and result {OW, OH, C, N} do not fit", true
		}
		if s0.Ne[1]*(s0.Ne[0]+1) > maxLoop {
			return nil, "kernel of more than 60000 taps (llvmpipe's loop limit)", true
		}
		return spatial(spatialConv2DDw, s0, s1), "", true
	case runtime.OpConvTranspose2D:
		if why := need(t, 2); why != "" {
			return nil, why, true
		}
		if (s0.Type != runtime.TypeF32 && s0.Type != runtime.TypeF16) || s1.Type != runtime.TypeF32 || t.Type != runtime.TypeF32 {
			return nil, "want an f32 or f16 kernel, f32 input and result", true
		}
		st := p(0)
		if st < 1 || s0.Ne[3] != s1.Ne[2] || t.Ne != [4]int64{(s1.Ne[0]-1)*st + s0.Ne[0], (s1.Ne[1]-1)*st + s0.Ne[1], s0.Ne[2], s1.Ne[3]} {
			return nil, "kernel {KW, KH, OC, C}, input {W, H, C, N}, a positive stride and result {W', H', OC, N} do not fit", true
		}
		if ((s0.Ne[1]+st-1)/st+1)*((s0.Ne[0]+st-1)/st+1)*(s0.Ne[3]+1) > maxLoop {
			return nil, "taps times channels past 60000 (llvmpipe's loop limit)", true
		}
		return spatial(spatialConvT2D, s0, s1), "", true
	case runtime.OpCol2im1D:
		if why := need(t, 1); why != "" {
			return nil, why, true
		}
		if !isFloat(s0.Type) || t.Type != s0.Type {
			return nil, "want float columns and a result of their type", true
		}
		st, oc, pad := p(0), p(1), p(2)
		if st < 1 || oc < 1 || pad < 0 {
			return nil, "stride and channels must be positive, pad non-negative", true
		}
		k := s0.Ne[0] / oc
		if !s0.IsMatrix() || k*oc != s0.Ne[0] || t.Ne[0] < 1 || t.Ne != [4]int64{(s0.Ne[1]-1)*st + k - 2*pad, oc, 1, 1} {
			return nil, "columns {K·OC, T} and result {T', OC} do not fit", true
		}
		if (k+st-1)/st+1 > maxLoop {
			return nil, "kernel past 60000 taps per output (llvmpipe's loop limit)", true
		}
		return spatial(spatialCol2im1D, s0), "", true
	case runtime.OpIm2col3D:
		if why := need(t, 2); why != "" {
			return nil, why, true
		}
		if !isFloat(s1.Type) || (t.Type != runtime.TypeF32 && t.Type != runtime.TypeF16) {
			return nil, "want a float input and an f32 or f16 result", true
		}
		for _, i := range []int{0, 1, 2, 6, 7, 8, 9} {
			if p(i) < 1 {
				return nil, "strides, dilations and channels must be positive", true
			}
		}
		if p(3) < 0 || p(4) < 0 || p(5) < 0 {
			return nil, "pads must be non-negative", true
		}
		ic := p(9)
		out := func(in, k, s, pad, d int64) int64 { return (in+2*pad-d*(k-1)-1)/s + 1 }
		od := out(s1.Ne[2], s0.Ne[2], p(2), p(5), p(8))
		if s1.Ne[3]%ic != 0 || od < 1 || s0.Ne[0] > maxElements || s0.Ne[1] > maxElements || s0.Ne[2] > maxElements ||
			t.Ne != [4]int64{s0.Ne[0] * s0.Ne[1] * s0.Ne[2] * ic, out(s1.Ne[0], s0.Ne[0], p(0), p(3), p(6)),
				out(s1.Ne[1], s0.Ne[1], p(1), p(4), p(7)), od * (s1.Ne[3] / ic)} {
			return nil, "kernel {KW, KH, KD, ·}, input {W, H, D, C·N} and result {C·KD·KH·KW, OW, OH, OD·N} do not fit", true
		}
		l := spatial(spatialIm2col3D, s1)
		l.extra[1], l.extra[2], l.extra[3], l.extra[4] = uint32(s0.Ne[0]), uint32(s0.Ne[1]), uint32(s0.Ne[2]), uint32(od)
		return l, "", true
	case runtime.OpCrossEntropyLoss, runtime.OpCrossEntropyLossBack:
		return planCrossEntropy(t)
	case runtime.OpOptStepSgd, runtime.OpOptStepAdamw:
		return planOptStep(t)
	}
	return nil, "", false
}

// rows.comp's cross-entropy codes (after kernels_more.go's fL2Norm).
const (
	fCrossEntropyBack = fL2Norm + 1 + iota
	fCrossEntropy
)

// miscOptSgd and miscOptAdamw are misc.comp's optimizer steps.
const (
	miscOptSgd = miscDiag + 1 + iota
	miscOptAdamw
)

// planCrossEntropy maps CROSS_ENTROPY_LOSS (one work group walking every
// row) and CROSS_ENTROPY_LOSS_BACK (one work group per row) to rows.comp.
func planCrossEntropy(t *runtime.Tensor) (*launch, string, bool) {
	s0, s1, s2 := t.Src[0], t.Src[1], t.Src[2]
	f32 := runtime.TypeF32
	if t.Op == runtime.OpCrossEntropyLoss {
		if why := need(t, 2); why != "" {
			return nil, why, true
		}
		if s0.Type != f32 || s1.Type != f32 || s0.Ne != s1.Ne || t.Type != f32 || !t.IsScalar() {
			return nil, "want f32 logits and labels of one shape and an f32 scalar", true
		}
		// Each row: three walks of a 64th of it and three reductions.
		if s0.Nrows()*(3*((s0.Ne[0]+63)/64)+24) > maxLoop {
			return nil, "logits past llvmpipe's loop limit for one work group", true
		}
		return &launch{kernel: "rows", grid: gridCount, count: 1, local: 64, srcs: [3]*runtime.Tensor{s0, s1},
			extra: [8]uint32{fCrossEntropy}}, "", true
	}
	if why := need(t, 3); why != "" {
		return nil, why, true
	}
	if s0.Type != f32 || !s0.IsScalar() || s1.Type != f32 || s2.Type != f32 || s1.Ne != s2.Ne || t.Type != f32 || t.Ne != s1.Ne {
		return nil, "want an f32 scalar gradient and f32 logits and labels of the result's shape", true
	}
	if why := rowsTooLong(t.Ne[0]); why != "" {
		return nil, why, true
	}
	return &launch{kernel: "rows", grid: gridRows, local: 64, srcs: [3]*runtime.Tensor{s0, s1, s2},
		extra: [8]uint32{fCrossEntropyBack}}, "", true
}

// planOptStep maps OPT_STEP_SGD and OPT_STEP_ADAMW to misc.comp. Their
// result views the weights; ADAMW's moments are written in place and its
// parameters go to binding 5 (a fifth tensor).
func planOptStep(t *runtime.Tensor) (*launch, string, bool) {
	n, np := 4, int64(7)
	if t.Op == runtime.OpOptStepSgd {
		n, np = 2, 2
	}
	if why := need(t, n+1); why != "" {
		return nil, why, true
	}
	w := t.Src[0]
	if t.Type != runtime.TypeF32 || t.Ne != w.Ne || t.Nb != w.Nb {
		return nil, "want an f32 result viewing the weights", true
	}
	for i := 0; i < n; i++ {
		if s := t.Src[i]; s.Type != runtime.TypeF32 || s.Ne != t.Ne || s.Nb != w.Nb {
			return nil, "want f32 weights, gradients and moments of one shape and layout", true
		}
	}
	pr := t.Src[n]
	if pr.Type != runtime.TypeF32 || pr.Nelements() != np || !pr.IsContiguous() {
		return nil, fmt.Sprintf("want %d f32 parameters", np), true
	}
	l := &launch{kernel: "misc", grid: gridElements, local: 128}
	if t.Op == runtime.OpOptStepSgd {
		l.srcs, l.extra[0] = [3]*runtime.Tensor{w, t.Src[1], pr}, miscOptSgd
		return l, "", true
	}
	l.binds[0], l.bindOff[0] = pr, 1
	l.srcs, l.extra[0], l.extra[1] = [3]*runtime.Tensor{t.Src[1], t.Src[2], t.Src[3]}, miscOptAdamw, uint32(pr.Offset)
	return l, "", true
}

// planMulMatID maps MUL_MAT_ID to mul_mat.comp's ID variant: one
// invocation per 4 rows of one (expert slot, token) column.
func planMulMatID(t *runtime.Tensor) (*launch, string) {
	as, b, ids := t.Src[0], t.Src[1], t.Src[2]
	if why := need(t, 3); why != "" {
		return nil, why
	}
	if !isRowType(as.Type) || !isFloat(b.Type) || ids.Type != runtime.TypeI32 || t.Type != runtime.TypeF32 {
		return nil, "want experts f32/f16/bf16/q4_0/q4_1/q5_0/q5_1/q8_0/q2_K..q6_K, b f32/f16/bf16, i32 ids, result f32"
	}
	if !as.IsContiguousRows() || as.Ne[3] != 1 || as.Ne[0] != b.Ne[0] || b.Ne[1] < 1 || b.Ne[3] != 1 ||
		ids.Ne[1] != b.Ne[2] || ids.Ne[2] != 1 || ids.Ne[3] != 1 || ids.Ne[0]%b.Ne[1] != 0 ||
		t.Ne != [4]int64{as.Ne[1], ids.Ne[0], b.Ne[2], 1} {
		return nil, "shapes do not fit (experts {k, m, n_as}, b {k, 1 or n_used, n}, ids {n_used, n}, result {m, n_used, n})"
	}
	if lim := mulMatKLimit(as.Type); as.Ne[0] > lim {
		return nil, fmt.Sprintf("k = %d exceeds the mul_mat kernel's %d for %s (llvmpipe's loop guard)", as.Ne[0], lim, as.Type)
	}
	l := &launch{kernel: "mul_mat", grid: gridMulMat, local: 64, srcs: [3]*runtime.Tensor{as, b, ids}, tn: 1, status: true}
	l.defines = []string{"ID", fmt.Sprintf("TA %d", as.Type), fmt.Sprintf("TB %d", b.Type), "TN 1u"}
	return l, ""
}
