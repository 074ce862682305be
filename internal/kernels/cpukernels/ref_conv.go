package cpukernels

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/gogml/gogml/runtime"
)

// This file holds the reference kernels of ggml's direct convolutions and
// their relatives: CONV_2D, CONV_3D, CONV_2D_DW, CONV_TRANSPOSE_1D,
// CONV_TRANSPOSE_2D, IM2COL_3D, IM2COL_BACK, COL2IM_1D, POOL_1D,
// POOL_2D_BACK, WIN_PART, WIN_UNPART, GET_REL_POS and ADD_REL_POS, with
// ggml's CPU formulas: where ggml rounds an operand to f16 before a
// product (an f16 kernel), so do these; sums run in float32 in ggml's
// order of terms. Every kernel reads and writes through the tensors'
// strides, so permuted (channels-first) layouts work too.

// convOutSize is ggml_calc_conv_output_size.
func convOutSize(ins, ks, s, p, d int64) int64 { return (ins+2*p-d*(ks-1)-1)/s + 1 }

// convOwnSplit reports whether op is one of this file's ops that split
// their work across parts themselves rather than by result rows.
func convOwnSplit(op runtime.Op) bool {
	switch op {
	case runtime.OpConv2D, runtime.OpConv3D, runtime.OpPool2DBack:
		return true
	}
	return false
}

// isConvOp reports whether op is computed by this file.
func isConvOp(op runtime.Op) bool {
	switch op {
	case runtime.OpConv2D, runtime.OpConv3D, runtime.OpConv2DDw, runtime.OpConvTranspose1D, runtime.OpConvTranspose2D,
		runtime.OpIm2col3D, runtime.OpIm2colBack, runtime.OpCol2im1D, runtime.OpPool1D, runtime.OpPool2DBack,
		runtime.OpWinPart, runtime.OpWinUnpart, runtime.OpGetRelPos, runtime.OpAddRelPos:
		return true
	}
	return false
}

// unsupportedConv returns why node t of an op of this file cannot be
// computed, or "" (ok reports whether t's op is one of them).
func unsupportedConv(t *runtime.Tensor) (why string, ok bool) {
	if !isConvOp(t.Op) {
		return "", false
	}
	return convWhy(t), true
}

// convWhy checks node t of an op of this file.
func convWhy(t *runtime.Tensor) string {
	s0, s1 := t.Src[0], t.Src[1]
	f32, f16 := runtime.TypeF32, runtime.TypeF16
	p := func(i int) int64 { return int64(t.OpParamI32(i)) }
	kernelType := func(a *runtime.Tensor) bool { return a.Type == f32 || a.Type == f16 }
	// positive reports whether every parameter in is is ≥ 1.
	positive := func(is ...int) bool {
		for _, i := range is {
			if p(i) < 1 {
				return false
			}
		}
		return true
	}
	nonNeg := func(is ...int) bool {
		for _, i := range is {
			if p(i) < 0 {
				return false
			}
		}
		return true
	}
	switch t.Op {
	case runtime.OpConv2D:
		if w := srcOK(t, 2); w != "" {
			return w
		}
		if !kernelType(s0) || s1.Type != f32 || t.Type != f32 {
			return "want an f32 or f16 kernel, f32 input and result"
		}
		if !positive(0, 1, 4, 5) || !nonNeg(2, 3) {
			return "strides and dilations must be positive, pads non-negative"
		}
		want := [4]int64{convOutSize(s1.Ne[0], s0.Ne[0], p(0), p(2), p(4)), convOutSize(s1.Ne[1], s0.Ne[1], p(1), p(3), p(5)), s0.Ne[3], s1.Ne[3]}
		if s0.Ne[2] != s1.Ne[2] || t.Ne != want {
			return "kernel {KW, KH, C, OC}, input {W, H, C, N} and result {OW, OH, OC, N} do not fit"
		}
	case runtime.OpConv3D:
		if w := srcOK(t, 2); w != "" {
			return w
		}
		if !kernelType(s0) || s1.Type != f32 || t.Type != f32 {
			return "want an f32 or f16 kernel, f32 input and result"
		}
		if !positive(0, 1, 2, 6, 7, 8, 9, 10, 11) || !nonNeg(3, 4, 5) {
			return "strides, dilations, channels, batch must be positive, pads non-negative"
		}
		c, n, oc := p(9), p(10), p(11)
		want := [4]int64{convOutSize(s1.Ne[0], s0.Ne[0], p(0), p(3), p(6)), convOutSize(s1.Ne[1], s0.Ne[1], p(1), p(4), p(7)),
			convOutSize(s1.Ne[2], s0.Ne[2], p(2), p(5), p(8)), oc * n}
		if s0.Ne[3] != c*oc || s1.Ne[3] != c*n || t.Ne != want {
			return "kernel {KW, KH, KD, C·OC}, input {W, H, D, C·N} and result {OW, OH, OD, OC·N} do not fit"
		}
	case runtime.OpConv2DDw:
		if w := srcOK(t, 2); w != "" {
			return w
		}
		if !kernelType(s0) || s1.Type != f32 || t.Type != f32 {
			return "want an f32 or f16 kernel, f32 input and result"
		}
		if !positive(0, 1, 4, 5) || !nonNeg(2, 3) {
			return "strides and dilations must be positive, pads non-negative"
		}
		want := [4]int64{convOutSize(s1.Ne[0], s0.Ne[0], p(0), p(2), p(4)), convOutSize(s1.Ne[1], s0.Ne[1], p(1), p(3), p(5)), s1.Ne[2], s1.Ne[3]}
		if s0.Ne[2] != 1 || s0.Ne[3] != s1.Ne[2] || t.Ne != want {
			return "kernel {KW, KH, 1, C}, input {W, H, C, N} and result {OW, OH, C, N} do not fit"
		}
	case runtime.OpConvTranspose1D:
		if w := srcOK(t, 2); w != "" {
			return w
		}
		if !kernelType(s0) || s1.Type != f32 || t.Type != f32 {
			return "want an f32 or f16 kernel, f32 input and result"
		}
		if !positive(0) || p(1) != 0 || p(2) != 1 {
			return "want a positive stride, p0 0 and d0 1 (as ggml asserts)"
		}
		n := (s1.Ne[0]-1)*p(0) - 2*p(1) + p(2)*(s0.Ne[0]-1) + 1
		if s0.Ne[3] != 1 || s1.Ne[3] != 1 || s0.Ne[2] != s1.Ne[1] || n < 1 || t.Ne != [4]int64{n, s0.Ne[1], s1.Ne[2], 1} {
			return "kernel {K, OC, C}, input {L, C, N} and result {L', OC, N} do not fit"
		}
	case runtime.OpConvTranspose2D:
		if w := srcOK(t, 2); w != "" {
			return w
		}
		if !kernelType(s0) || s1.Type != f32 || t.Type != f32 {
			return "want an f32 or f16 kernel, f32 input and result"
		}
		st := p(0)
		if st < 1 {
			return "stride must be positive"
		}
		want := [4]int64{(s1.Ne[0]-1)*st + s0.Ne[0], (s1.Ne[1]-1)*st + s0.Ne[1], s0.Ne[2], s1.Ne[3]}
		if s0.Ne[3] != s1.Ne[2] || t.Ne != want {
			return "kernel {KW, KH, OC, C}, input {W, H, C, N} and result {W', H', OC, N} do not fit"
		}
	case runtime.OpIm2col3D:
		if w := srcOK(t, 2); w != "" {
			return w
		}
		if s1.Type != f32 || (t.Type != f32 && t.Type != f16) {
			return "want f32 input and an f32 or f16 result"
		}
		if !positive(0, 1, 2, 6, 7, 8, 9) || !nonNeg(3, 4, 5) {
			return "strides, dilations and channels must be positive, pads non-negative"
		}
		ic := p(9)
		if s1.Ne[3]%ic != 0 {
			return "input ne[3] is not a multiple of the channels"
		}
		n := s1.Ne[3] / ic
		od := convOutSize(s1.Ne[2], s0.Ne[2], p(2), p(5), p(8))
		want := [4]int64{s0.Ne[0] * s0.Ne[1] * s0.Ne[2] * ic, convOutSize(s1.Ne[0], s0.Ne[0], p(0), p(3), p(6)),
			convOutSize(s1.Ne[1], s0.Ne[1], p(1), p(4), p(7)), od * n}
		if od < 1 || t.Ne != want {
			return "kernel {KW, KH, KD, ·}, input {W, H, D, C·N} and result {C·KD·KH·KW, OW, OH, OD·N} do not fit"
		}
	case runtime.OpIm2colBack:
		if w := srcOK(t, 2); w != "" {
			return w
		}
		if s0.Type != f32 || t.Type != f32 {
			return "want f32 gradient and result"
		}
		is2D := p(6) != 0
		if !positive(0, 4) || !nonNeg(2) || (is2D && (!positive(1, 5) || !nonNeg(3))) {
			return "strides and dilations must be positive, pads non-negative"
		}
		if is2D {
			if s0.Ne[0] != t.Ne[2]*s1.Ne[1]*s1.Ne[0] || s0.Ne[3] != t.Ne[3] {
				return "gradient {C·KH·KW, OW, OH, N} does not fit the result {W, H, C, N}"
			}
		} else if s0.Ne[0] != t.Ne[1]*s1.Ne[0] || s0.Ne[2] != t.Ne[2] || s0.Ne[3] != 1 || t.Ne[3] != 1 {
			return "gradient {C·K, OW, N} does not fit the result {W, C, N}"
		}
	case runtime.OpCol2im1D:
		if w := srcOK(t, 1); w != "" {
			return w
		}
		if !IsFloat(s0.Type) || t.Type != s0.Type {
			return "want f32, f16 or bf16 columns and a result of their type"
		}
		if !positive(0, 1) || !nonNeg(2) {
			return "stride and channels must be positive, pad non-negative"
		}
		k := s0.Ne[0] / p(1)
		if !s0.IsMatrix() || k*p(1) != s0.Ne[0] || t.Ne != [4]int64{(s0.Ne[1]-1)*p(0) + k - 2*p(2), p(1), 1, 1} || t.Ne[0] < 1 {
			return "columns {K·OC, T} and result {T', OC} do not fit"
		}
	case runtime.OpPool1D:
		if w := srcOK(t, 1); w != "" {
			return w
		}
		if (s0.Type != f32 && s0.Type != f16) || t.Type != f32 || (p(0) != poolMax && p(0) != poolAvg) {
			return "want f32 or f16 source, f32 result, max or avg"
		}
		if !positive(1, 2) || !nonNeg(3) || t.Ne != [4]int64{(s0.Ne[0]+2*p(3)-p(1))/p(2) + 1, s0.Ne[1], s0.Ne[2], s0.Ne[3]} || t.Ne[0] < 1 {
			return "pooling parameters do not fit the shapes"
		}
	case runtime.OpPool2DBack:
		if w := srcOK(t, 2); w != "" {
			return w
		}
		if s0.Type != f32 || s1.Type != f32 || t.Type != f32 || (p(0) != poolMax && p(0) != poolAvg) {
			return "want f32 gradient, forward input and result, max or avg"
		}
		if !positive(1, 2, 3, 4) || !nonNeg(5, 6) {
			return "kernel sizes and strides must be positive, pads non-negative"
		}
		want := [4]int64{(s1.Ne[0]+2*p(5)-p(1))/p(3) + 1, (s1.Ne[1]+2*p(6)-p(2))/p(4) + 1, s1.Ne[2], s1.Ne[3]}
		if t.Ne != s1.Ne || s0.Ne != want {
			return "gradient, forward input and result do not fit the pooling"
		}
	case runtime.OpWinPart:
		if w := srcOK(t, 1); w != "" {
			return w
		}
		npx, npy, w := p(0), p(1), p(2)
		if s0.Type != f32 || t.Type != f32 || s0.Ne[3] != 1 || w < 1 {
			return "want f32 source {C, W, H, 1}, f32 result and a positive window"
		}
		if npx != (s0.Ne[1]+w-1)/w || npy != (s0.Ne[2]+w-1)/w || t.Ne != [4]int64{s0.Ne[0], w, w, npx * npy} {
			return "window counts and result {C, w, w, npx·npy} do not fit the source"
		}
	case runtime.OpWinUnpart:
		if w := srcOK(t, 1); w != "" {
			return w
		}
		w := p(0)
		if s0.Type != f32 || t.Type != f32 || w < 1 || s0.Ne[1] != w || s0.Ne[2] != w {
			return "want f32 windows {C, w, w, np}, f32 result and a positive window"
		}
		if t.Ne[0] != s0.Ne[0] || t.Ne[3] != 1 || s0.Ne[3] < ((t.Ne[1]+w-1)/w)*((t.Ne[2]+w-1)/w) {
			return "result {C, W, H, 1} needs more windows than the source has"
		}
	case runtime.OpGetRelPos:
		if w := srcOK(t, 1); w != "" {
			return w
		}
		if s0.Type != f16 || t.Type != f16 || t.Ne[1] != t.Ne[2] || t.Ne[3] != 1 || t.Ne[0] != s0.Ne[0] || s0.Ne[1] != 2*t.Ne[1]-1 {
			return "want f16 source {C, 2·k-1} and f16 result {C, k, k}"
		}
	case runtime.OpAddRelPos:
		if w := srcOK(t, 3); w != "" {
			return w
		}
		pw, ph := s1, t.Src[2]
		if s0.Type != f32 || pw.Type != f32 || ph.Type != f32 || t.Type != f32 || pw.Ne != ph.Ne || t.Ne != s0.Ne {
			return "want f32 a, pw, ph (pw and ph of one shape) and result of a's shape"
		}
		if !pw.IsContiguous() || !ph.IsContiguous() || pw.Ne[3] != s0.Ne[2] || pw.Ne[0]*pw.Ne[0] != s0.Ne[0] ||
			pw.Ne[1]*pw.Ne[2] != s0.Ne[1] || s0.Ne[3] != 1 {
			return "pw and ph must be dense {W, H', H'', N} with a {W·W, H'·H'', N}"
		}
	}
	return ""
}

// computeConv computes result rows [r0, r1) of the row-split ops of this
// file (ok reports whether t's op is one of them).
func (k *kernel) computeConv(r0, r1 int64) (bool, error) {
	switch k.t.Op {
	case runtime.OpConv2DDw:
		k.conv2DDw(r0, r1)
	case runtime.OpConvTranspose1D:
		k.convTranspose1D(r0, r1)
	case runtime.OpConvTranspose2D:
		k.convTranspose2D(r0, r1)
	case runtime.OpIm2col3D:
		k.im2col3D(r0, r1)
	case runtime.OpIm2colBack:
		k.im2colBack(r0, r1)
	case runtime.OpCol2im1D:
		k.col2im1D(r0, r1)
	case runtime.OpPool1D:
		k.pool1D(r0, r1)
	case runtime.OpWinPart:
		k.winPart(r0, r1)
	case runtime.OpWinUnpart:
		k.winUnpart(r0, r1)
	case runtime.OpGetRelPos:
		k.getRelPos(r0, r1)
	case runtime.OpAddRelPos:
		k.addRelPos(r0, r1)
	default:
		return false, nil
	}
	return true, nil
}

// computeConvSplit runs part ith of nth of the ops convOwnSplit names.
func (k *kernel) computeConvSplit(ith, nth int) error {
	switch k.t.Op {
	case runtime.OpConv2D, runtime.OpConv3D:
		k.convPatches(ith, nth)
	case runtime.OpPool2DBack:
		if ith == 0 {
			k.pool2DBack()
		}
	default:
		return fmt.Errorf("tensor %s: %w", k.t, runtime.ErrUnsupported)
	}
	return nil
}

// convGeom is the geometry of a direct convolution (CONV_2D: depth 1) in
// element counts and byte strides.
type convGeom struct {
	in, out, ker  [3]int64 // width, height, depth
	s, p, d       [3]int64
	ic, oc, n     int64
	inNb, outNb   [3]uint64 // x, y, z strides
	inC, inN      uint64    // channel and batch strides of the input
	outC, outN    uint64
	kNb           [3]uint64
	kC, kO        uint64 // input- and output-channel strides of the kernel
	inTyp, kerTyp runtime.Type
}

// convGeometry reads the geometry of a CONV_2D or CONV_3D node.
func convGeometry(t *runtime.Tensor) convGeom {
	a, b := t.Src[0], t.Src[1]
	p := func(i int) int64 { return int64(t.OpParamI32(i)) }
	g := convGeom{inTyp: b.Type, kerTyp: a.Type}
	if t.Op == runtime.OpConv2D {
		g.in = [3]int64{b.Ne[0], b.Ne[1], 1}
		g.out = [3]int64{t.Ne[0], t.Ne[1], 1}
		g.ker = [3]int64{a.Ne[0], a.Ne[1], 1}
		g.s, g.p, g.d = [3]int64{p(0), p(1), 1}, [3]int64{p(2), p(3), 0}, [3]int64{p(4), p(5), 1}
		g.ic, g.oc, g.n = a.Ne[2], a.Ne[3], b.Ne[3]
		g.inNb, g.inC, g.inN = [3]uint64{b.Nb[0], b.Nb[1], 0}, b.Nb[2], b.Nb[3]
		g.outNb, g.outC, g.outN = [3]uint64{t.Nb[0], t.Nb[1], 0}, t.Nb[2], t.Nb[3]
		g.kNb, g.kC, g.kO = [3]uint64{a.Nb[0], a.Nb[1], 0}, a.Nb[2], a.Nb[3]
		return g
	}
	g.in = [3]int64{b.Ne[0], b.Ne[1], b.Ne[2]}
	g.out = [3]int64{t.Ne[0], t.Ne[1], t.Ne[2]}
	g.ker = [3]int64{a.Ne[0], a.Ne[1], a.Ne[2]}
	g.s, g.p, g.d = [3]int64{p(0), p(1), p(2)}, [3]int64{p(3), p(4), p(5)}, [3]int64{p(6), p(7), p(8)}
	g.ic, g.n, g.oc = p(9), p(10), p(11)
	g.inNb, g.inC, g.inN = [3]uint64{b.Nb[0], b.Nb[1], b.Nb[2]}, b.Nb[3], uint64(g.ic)*b.Nb[3]
	g.outNb, g.outC, g.outN = [3]uint64{t.Nb[0], t.Nb[1], t.Nb[2]}, t.Nb[3], uint64(g.oc)*t.Nb[3]
	g.kNb, g.kC, g.kO = [3]uint64{a.Nb[0], a.Nb[1], a.Nb[2]}, a.Nb[3], uint64(g.ic)*a.Nb[3]
	return g
}

// ConvPlan unfolds the patches of a CONV_2D or CONV_3D node for a
// product with its kernel, as ggml's CPU kernel does: patch q (the
// result's positions in x, y, z, batch order) holds the input under the
// kernel at that position in (channel, depth, row, column) order, 0
// outside the input, rounded to f16 when the kernel is f16. The reference
// kernel and the CPU backend's fast path share it.
type ConvPlan struct {
	g       convGeom
	round   bool
	kn, n   int64
	patches int64
}

// NewConvPlan returns the plan of node t, which Supports must accept.
func NewConvPlan(t *runtime.Tensor) *ConvPlan {
	g := convGeometry(t)
	return &ConvPlan{g: g, round: g.kerTyp == runtime.TypeF16, kn: g.ic * g.ker[0] * g.ker[1] * g.ker[2],
		n: g.oc, patches: g.n * g.out[0] * g.out[1] * g.out[2]}
}

// Sizes returns the number of patches, the length of a patch (and of a
// kernel row) and the number of output channels (kernel rows).
func (pl *ConvPlan) Sizes() (patches, k, oc int64) { return pl.patches, pl.kn, pl.n }

// Kernel returns the kernel (bytes ker) as a dense f32 matrix, row oc
// holding output channel oc in patch order.
func (pl *ConvPlan) Kernel(ker []byte) []float32 {
	g := &pl.g
	w := make([]float32, g.oc*pl.kn)
	i := 0
	for oc := int64(0); oc < g.oc; oc++ {
		for ic := int64(0); ic < g.ic; ic++ {
			for kz := int64(0); kz < g.ker[2]; kz++ {
				for ky := int64(0); ky < g.ker[1]; ky++ {
					base := uint64(oc)*g.kO + uint64(ic)*g.kC + uint64(kz)*g.kNb[2] + uint64(ky)*g.kNb[1]
					for kx := int64(0); kx < g.ker[0]; kx++ {
						w[i] = loadF(g.kerTyp, ker, base+uint64(kx)*g.kNb[0])
						i++
					}
				}
			}
		}
	}
	return w
}

// coords splits patch q into its result position and batch.
func (pl *ConvPlan) coords(q int64) (x, y, z, n int64) {
	o := &pl.g.out
	return q % o[0], (q / o[0]) % o[1], (q / (o[0] * o[1])) % o[2], q / (o[0] * o[1] * o[2])
}

// Unfold writes patch q of the input (bytes in) into dst (Sizes' k
// values).
func (pl *ConvPlan) Unfold(in []byte, q int64, dst []float32) {
	g := &pl.g
	x, y, z, n := pl.coords(q)
	dst = dst[:pl.kn]
	i := 0
	for ic := int64(0); ic < g.ic; ic++ {
		cbase := uint64(n)*g.inN + uint64(ic)*g.inC
		for kz := int64(0); kz < g.ker[2]; kz++ {
			sz := z*g.s[2] + kz*g.d[2] - g.p[2]
			for ky := int64(0); ky < g.ker[1]; ky++ {
				sy := y*g.s[1] + ky*g.d[1] - g.p[1]
				row := dst[i : i+int(g.ker[0])]
				i += len(row)
				if sz < 0 || sz >= g.in[2] || sy < 0 || sy >= g.in[1] {
					clear(row)
					continue
				}
				rbase := cbase + uint64(sz)*g.inNb[2] + uint64(sy)*g.inNb[1]
				sx := x*g.s[0] - g.p[0]
				for kx := range row {
					v := float32(0)
					if uint64(sx) < uint64(g.in[0]) { // 0 ≤ sx < W
						if g.inTyp == runtime.TypeF32 {
							v = math.Float32frombits(binary.LittleEndian.Uint32(in[rbase+uint64(sx)*g.inNb[0]:]))
						} else {
							v = loadF(g.inTyp, in, rbase+uint64(sx)*g.inNb[0])
						}
						if pl.round {
							v = halfRound(v)
						}
					}
					row[kx] = v
					sx += g.d[0]
				}
			}
		}
	}
}

// Store writes the results of patch q, vals[oc·stride] for each output
// channel oc, into the result's bytes out.
func (pl *ConvPlan) Store(out []byte, q int64, vals []float32, stride int) {
	g := &pl.g
	x, y, z, n := pl.coords(q)
	base := uint64(x)*g.outNb[0] + uint64(y)*g.outNb[1] + uint64(z)*g.outNb[2] + uint64(n)*g.outN
	for oc := int64(0); oc < g.oc; oc++ {
		storeF(runtime.TypeF32, out, base+uint64(oc)*g.outC, vals[int(oc)*stride])
	}
}

// convBlock is how many patches convPatches multiplies against each kernel
// row at once.
const convBlock = 4

// convPatches computes part ith of nth of a CONV_2D or CONV_3D as ggml's
// CPU kernel does: the patches (ConvPlan) split across parts; each is
// multiplied with every output channel's kernel row, summing in float32 in
// patch order.
func (k *kernel) convPatches(ith, nth int) {
	pl := NewConvPlan(k.t)
	total, kn, noc := pl.Sizes()
	p0, p1 := RowRange(total, ith, nth)
	if p0 >= p1 {
		return
	}
	w := pl.Kernel(k.src[0])
	patches := make([]float32, convBlock*kn)
	var res [convBlock][]float32
	for j := range res {
		res[j] = make([]float32, noc)
	}
	for p := p0; p < p1; p += convBlock {
		nb := min(int64(convBlock), p1-p)
		for j := int64(0); j < nb; j++ {
			pl.Unfold(k.src[1], p+j, patches[j*kn:(j+1)*kn])
		}
		for j := nb; j < convBlock; j++ { // pad the block with a copy of its first patch
			copy(patches[j*kn:(j+1)*kn], patches[:kn])
		}
		for oc := int64(0); oc < noc; oc++ {
			s := dot4(w[oc*kn:(oc+1)*kn], patches[:kn], patches[kn:2*kn], patches[2*kn:3*kn], patches[3*kn:4*kn])
			for j := range res {
				res[j][oc] = s[j]
			}
		}
		for j := int64(0); j < nb; j++ {
			pl.Store(k.dst, p+j, res[j], 1)
		}
	}
}

// dot4 returns the float32 dot products of w with a0..a3 (each as long as
// w), each summed in index order.
func dot4(w, a0, a1, a2, a3 []float32) [4]float32 {
	a0, a1, a2, a3 = a0[:len(w)], a1[:len(w)], a2[:len(w)], a3[:len(w)]
	var s0, s1, s2, s3 float32
	for i, x := range w {
		s0 += x * a0[i]
		s1 += x * a1[i]
		s2 += x * a2[i]
		s3 += x * a3[i]
	}
	return [4]float32{s0, s1, s2, s3}
}

// conv2DDw computes result rows (oy, c, n) of a depthwise convolution:
// element (ox, oy, c, n) is the float32 sum over the kernel rows, then
// columns, of kernel(kx, ky, c)·input(ox·s0 + kx·d0 - p0, oy·s1 + ky·d1 - p1,
// c, n), skipping positions outside the input.
func (k *kernel) conv2DDw(r0, r1 int64) {
	t, a, b := k.t, k.t.Src[0], k.t.Src[1]
	p := func(i int) int64 { return int64(t.OpParamI32(i)) }
	s0, s1, p0, p1, d0, d1 := p(0), p(1), p(2), p(3), p(4), p(5)
	for r := r0; r < r1; r++ {
		oy, c, n := rowCoords(t.Ne, r)
		for ox := int64(0); ox < t.Ne[0]; ox++ {
			var sum float32
			for ky := int64(0); ky < a.Ne[1]; ky++ {
				iy := oy*s1 + ky*d1 - p1
				if iy < 0 || iy >= b.Ne[1] {
					continue
				}
				for kx := int64(0); kx < a.Ne[0]; kx++ {
					ix := ox*s0 + kx*d0 - p0
					if ix < 0 || ix >= b.Ne[0] {
						continue
					}
					kv := loadF(a.Type, k.src[0], uint64(kx)*a.Nb[0]+uint64(ky)*a.Nb[1]+uint64(c)*a.Nb[3])
					sum += kv * loadF(b.Type, k.src[1], uint64(ix)*b.Nb[0]+off3(b.Nb, iy, c, n))
				}
			}
			storeF(t.Type, k.dst, uint64(ox)*t.Nb[0]+off3(t.Nb, oy, c, n), sum)
		}
	}
}

// convTranspose1D computes result rows (oc, n): element l is the sum, over
// input positions i ascending with l = i·s0 + j·d0 - p0 for a kernel tap j,
// of the float32 dot product over input channels of input(i, ·, n) and
// kernel(j, oc, ·) (the input rounded to f16 when the kernel is f16).
func (k *kernel) convTranspose1D(r0, r1 int64) {
	t, a, b := k.t, k.t.Src[0], k.t.Src[1]
	s0, p0, d0 := int64(t.OpParamI32(0)), int64(t.OpParamI32(1)), int64(t.OpParamI32(2))
	round := a.Type == runtime.TypeF16
	kw, cin, l := a.Ne[0], a.Ne[2], b.Ne[0]
	for r := r0; r < r1; r++ {
		oc, n, _ := rowCoords(t.Ne, r)
		for o := int64(0); o < t.Ne[0]; o++ {
			var acc float32
			for i := int64(0); i < l; i++ {
				rel := o + p0 - i*s0 // = j·d0
				if rel < 0 || rel%d0 != 0 || rel/d0 >= kw {
					continue
				}
				j := rel / d0
				var v float32
				for c := int64(0); c < cin; c++ {
					x := loadF(b.Type, k.src[1], uint64(i)*b.Nb[0]+off3(b.Nb, c, n, 0))
					if round {
						x = halfRound(x)
					}
					v += x * loadF(a.Type, k.src[0], uint64(j)*a.Nb[0]+off3(a.Nb, oc, c, 0))
				}
				acc += v
			}
			storeF(t.Type, k.dst, uint64(o)*t.Nb[0]+off3(t.Nb, oc, n, 0), acc)
		}
	}
}

// convTranspose2D computes result rows (y, oc, n): element x is the sum,
// over input rows iy then columns ix ascending with y = iy·s + ky and
// x = ix·s + kx for kernel taps (kx, ky), of the float32 dot product over
// input channels of input(ix, iy, ·, n) and kernel(kx, ky, oc, ·) (the
// input rounded to f16 when the kernel is f16).
func (k *kernel) convTranspose2D(r0, r1 int64) {
	t, a, b := k.t, k.t.Src[0], k.t.Src[1]
	st := int64(t.OpParamI32(0))
	round := a.Type == runtime.TypeF16
	kw, kh, cin := a.Ne[0], a.Ne[1], a.Ne[3]
	w, h := b.Ne[0], b.Ne[1]
	// Channels innermost, so each tap is a dot product of two dense
	// slices: the input of one batch as (iy, ix, c), the kernel as (oc,
	// ky, kx, c).
	in, inBatch := make([]float32, w*h*cin), int64(-1)
	ker := make([]float32, a.Nelements())
	for i := range ker {
		c, kx, ky, oc := int64(i)%cin, (int64(i)/cin)%kw, (int64(i)/(cin*kw))%kh, int64(i)/(cin*kw*kh)
		ker[i] = loadF(a.Type, k.src[0], uint64(kx)*a.Nb[0]+off3(a.Nb, ky, oc, c))
	}
	for r := r0; r < r1; r++ {
		y, oc, n := rowCoords(t.Ne, r)
		if n != inBatch {
			for i := range in {
				c, ix, iy := int64(i)%cin, (int64(i)/cin)%w, int64(i)/(cin*w)
				v := loadF(b.Type, k.src[1], uint64(ix)*b.Nb[0]+off3(b.Nb, iy, c, n))
				if round {
					v = halfRound(v)
				}
				in[i] = v
			}
			inBatch = n
		}
		for x := int64(0); x < t.Ne[0]; x++ {
			var acc float32
			for iy := max(0, (y-kh+st)/st); iy < h && iy*st <= y; iy++ {
				ky := y - iy*st
				if ky >= kh {
					continue
				}
				for ix := max(0, (x-kw+st)/st); ix < w && ix*st <= x; ix++ {
					kx := x - ix*st
					if kx >= kw {
						continue
					}
					xi := (iy*w + ix) * cin
					ki := ((oc*kh+ky)*kw + kx) * cin
					acc += dot32(in[xi:xi+cin], ker[ki:ki+cin])
				}
			}
			storeF(t.Type, k.dst, uint64(x)*t.Nb[0]+off3(t.Nb, y, oc, n), acc)
		}
	}
}

// dot32 is the float32 dot product of a and b (of a's length), summed in
// index order.
func dot32(a, b []float32) float32 {
	b = b[:len(a)]
	var s float32
	for i, x := range a {
		s += x * b[i]
	}
	return s
}

// im2col3D writes result rows (ow, oh, od + OD·n): for each input channel
// c and kernel tap (kz, ky, kx) the input element at (ow·s0 + kx·d0 - p0,
// oh·s1 + ky·d1 - p1, od·s2 + kz·d2 - p2, n·C + c), 0 outside.
func (k *kernel) im2col3D(r0, r1 int64) {
	t, a, b := k.t, k.t.Src[0], k.t.Src[1]
	p := func(i int) int64 { return int64(t.OpParamI32(i)) }
	s0, s1, s2, p0, p1, p2, d0, d1, d2, ic := p(0), p(1), p(2), p(3), p(4), p(5), p(6), p(7), p(8), p(9)
	kw, kh, kd := a.Ne[0], a.Ne[1], a.Ne[2]
	n := b.Ne[3] / ic
	od := t.Ne[3] / n
	out := make([]float32, t.Ne[0])
	for r := r0; r < r1; r++ {
		ow, oh, i3 := rowCoords(t.Ne, r)
		d, bn := i3%od, i3/od
		i := 0
		for c := int64(0); c < ic; c++ {
			for z := int64(0); z < kd; z++ {
				iz := d*s2 + z*d2 - p2
				for y := int64(0); y < kh; y++ {
					iy := oh*s1 + y*d1 - p1
					for x := int64(0); x < kw; x++ {
						ix := ow*s0 + x*d0 - p0
						v := float32(0)
						if iz >= 0 && iz < b.Ne[2] && iy >= 0 && iy < b.Ne[1] && ix >= 0 && ix < b.Ne[0] {
							v = loadF(b.Type, k.src[1], uint64(ix)*b.Nb[0]+off3(b.Nb, iy, iz, bn*ic+c))
						}
						out[i] = v
						i++
					}
				}
			}
		}
		k.storeRow(out, off3(t.Nb, ow, oh, i3))
	}
}

// im2colBack computes result rows (ih, c, n) (1-d: (c, n)) of IM2COL's
// gradient: element iw sums, over kernel rows then columns, the gradient
// entries that IM2COL copied input (iw, ih, c, n) into.
func (k *kernel) im2colBack(r0, r1 int64) {
	t, g, kern := k.t, k.t.Src[0], k.t.Src[1]
	p := func(i int) int64 { return int64(t.OpParamI32(i)) }
	s0, s1, p0, p1, d0, d1, is2D := p(0), p(1), p(2), p(3), p(4), p(5), p(6) != 0
	kw, kh := kern.Ne[0], int64(1)
	ow, oh := g.Ne[1], int64(1)
	if is2D {
		kh, oh = kern.Ne[1], g.Ne[2]
	}
	for r := r0; r < r1; r++ {
		i1, i2, i3 := rowCoords(t.Ne, r)
		ih, c, n := i1, i2, i3
		if !is2D {
			ih, c, n = 0, i1, i2
		}
		for iw := int64(0); iw < t.Ne[0]; iw++ {
			var grad float32
			for y := int64(0); y < kh; y++ {
				for x := int64(0); x < kw; x++ {
					tw := iw + p0 - x*d0
					if tw%s0 != 0 {
						continue
					}
					ox, oy := tw/s0, int64(0)
					if is2D {
						th := ih + p1 - y*d1
						if th%s1 != 0 {
							continue
						}
						oy = th / s1
					}
					if tw < 0 || ox >= ow || oy < 0 || oy >= oh {
						continue
					}
					e := c*kh*kw + y*kw + x
					var off uint64
					if is2D {
						off = uint64(e)*g.Nb[0] + off3(g.Nb, ox, oy, n)
					} else {
						off = uint64(e)*g.Nb[0] + off3(g.Nb, ox, n, 0)
					}
					grad += loadF(g.Type, k.src[0], off)
				}
			}
			storeF(t.Type, k.dst, uint64(iw)*t.Nb[0]+off3(t.Nb, i1, i2, i3), grad)
		}
	}
}

// col2im1D computes result row oc: element o sums, over columns i
// ascending, column entry (oc·K + j, i) for the tap j = o + p0 - i·s0 in
// [0, K), in float32.
func (k *kernel) col2im1D(r0, r1 int64) {
	t, a := k.t, k.t.Src[0]
	s0, oc, p0 := int64(t.OpParamI32(0)), int64(t.OpParamI32(1)), int64(t.OpParamI32(2))
	kk := a.Ne[0] / oc
	for c := r0; c < r1; c++ {
		for o := int64(0); o < t.Ne[0]; o++ {
			abs := o + p0
			lo := max(0, (abs-kk+s0)/s0) // ⌈(abs-K+1)/s0⌉ when positive
			hi := min(abs/s0, a.Ne[1]-1)
			var sum float32
			for i := lo; i <= hi; i++ {
				if j := abs - i*s0; j >= 0 && j < kk {
					sum += loadF(a.Type, k.src[0], uint64(c*kk+j)*a.Nb[0]+uint64(i)*a.Nb[1])
				}
			}
			storeF(t.Type, k.dst, uint64(o)*t.Nb[0]+uint64(c)*t.Nb[1], sum)
		}
	}
}

// pool1D pools result rows as ggml's POOL_1D: the window of output o is
// input [o·s0 - p0, o·s0 - p0 + k0) clipped to the row; the average
// divides by the number of positions inside (0 for none), the maximum
// of an empty window is -MaxFloat32.
func (k *kernel) pool1D(r0, r1 int64) {
	t, s := k.t, k.t.Src[0]
	op, k0, s0, p0 := t.OpParamI32(0), int64(t.OpParamI32(1)), int64(t.OpParamI32(2)), int64(t.OpParamI32(3))
	for r := r0; r < r1; r++ {
		i1, i2, i3 := rowCoords(t.Ne, r)
		so, do := off3(s.Nb, i1, i2, i3), off3(t.Nb, i1, i2, i3)
		for o := int64(0); o < t.Ne[0]; o++ {
			res := float32(0)
			if op == poolMax {
				res = -math.MaxFloat32
			}
			count := 0
			for j := o*s0 - p0; j < o*s0-p0+k0; j++ {
				if j < 0 || j >= s.Ne[0] {
					continue
				}
				v := loadF(s.Type, k.src[0], so+uint64(j)*s.Nb[0])
				if op == poolAvg {
					res += v
				} else if !(v < res) { // std::max(v, res)
					res = v
				}
				count++
			}
			if op == poolAvg {
				if count > 0 {
					res /= float32(count)
				} else {
					res = 0
				}
			}
			storeF(t.Type, k.dst, do+uint64(o)*t.Nb[0], res)
		}
	}
}

// pool2DBack computes POOL_2D's gradient whole: the result starts at 0;
// for max pooling each output's gradient goes to the first largest
// element of its window in the forward input, for average pooling
// gradient/(k0·k1) goes to every in-range element of the window.
func (k *kernel) pool2DBack() {
	t, g, af := k.t, k.t.Src[0], k.t.Src[1]
	p := func(i int) int64 { return int64(t.OpParamI32(i)) }
	op, k0, k1, s0, s1, p0, p1 := p(0), p(1), p(2), p(3), p(4), p(5), p(6)
	acc := make([]float32, t.Ne[0]*t.Ne[1])
	for i3 := int64(0); i3 < t.Ne[3]; i3++ {
		for i2 := int64(0); i2 < t.Ne[2]; i2++ {
			clear(acc)
			for oy := int64(0); oy < g.Ne[1]; oy++ {
				for ox := int64(0); ox < g.Ne[0]; ox++ {
					grad := loadF(g.Type, k.src[0], uint64(ox)*g.Nb[0]+off3(g.Nb, oy, i2, i3))
					ix, iy := ox*s0-p0, oy*s1-p1
					if op == poolMax {
						best, bx, by := float32(-math.MaxFloat32), int64(-1), int64(-1)
						for ky := int64(0); ky < k1; ky++ {
							if iy+ky < 0 || iy+ky >= t.Ne[1] {
								continue
							}
							for kx := int64(0); kx < k0; kx++ {
								j := ix + kx
								if j < 0 || j >= t.Ne[0] {
									continue
								}
								if v := loadF(af.Type, k.src[1], uint64(j)*af.Nb[0]+off3(af.Nb, iy+ky, i2, i3)); v > best {
									best, bx, by = v, j, iy+ky
								}
							}
						}
						if bx >= 0 {
							acc[by*t.Ne[0]+bx] += grad
						}
						continue
					}
					gr := grad / float32(k0*k1)
					for ky := int64(0); ky < k1; ky++ {
						if iy+ky < 0 || iy+ky >= t.Ne[1] {
							continue
						}
						for kx := int64(0); kx < k0; kx++ {
							if j := ix + kx; j >= 0 && j < t.Ne[0] {
								acc[(iy+ky)*t.Ne[0]+j] += gr
							}
						}
					}
				}
			}
			for y := int64(0); y < t.Ne[1]; y++ {
				k.storeRow(acc[y*t.Ne[0]:(y+1)*t.Ne[0]], off3(t.Nb, y, i2, i3))
			}
		}
	}
}

// winPart writes result rows (y, x, window) of WIN_PART: window py·npx + px
// holds source rows (px·w + x, py·w + y), 0 past the source's edge.
func (k *kernel) winPart(r0, r1 int64) {
	t, s := k.t, k.t.Src[0]
	npx, w := int64(t.OpParamI32(0)), int64(t.OpParamI32(2))
	for r := r0; r < r1; r++ {
		i1, i2, i3 := rowCoords(t.Ne, r)
		sx, sy := (i3%npx)*w+i1, (i3/npx)*w+i2
		inside := sx < s.Ne[1] && sy < s.Ne[2]
		do := off3(t.Nb, i1, i2, i3)
		for i0 := int64(0); i0 < t.Ne[0]; i0++ {
			v := float32(0)
			if inside {
				v = loadF(s.Type, k.src[0], uint64(i0)*s.Nb[0]+off3(s.Nb, sx, sy, 0))
			}
			storeF(t.Type, k.dst, do+uint64(i0)*t.Nb[0], v)
		}
	}
}

// winUnpart writes result rows (x, y) of WIN_UNPART from window
// (y/w)·npx + x/w, row (x mod w, y mod w), npx = ⌈W/w⌉.
func (k *kernel) winUnpart(r0, r1 int64) {
	t, s := k.t, k.t.Src[0]
	w := int64(t.OpParamI32(0))
	npx := (t.Ne[1] + w - 1) / w
	for r := r0; r < r1; r++ {
		x, y, _ := rowCoords(t.Ne, r)
		so, do := off3(s.Nb, x%w, y%w, (y/w)*npx+x/w), off3(t.Nb, x, y, 0)
		for i0 := int64(0); i0 < t.Ne[0]; i0++ {
			storeF(t.Type, k.dst, do+uint64(i0)*t.Nb[0], loadF(s.Type, k.src[0], so+uint64(i0)*s.Nb[0]))
		}
	}
}

// getRelPos writes result rows (k, q) of GET_REL_POS: source row
// (K - 1 - k) + q, copied bit for bit.
func (k *kernel) getRelPos(r0, r1 int64) {
	t, s := k.t, k.t.Src[0]
	es := uint64(t.Type.Size())
	for r := r0; r < r1; r++ {
		i1, i2, _ := rowCoords(t.Ne, r)
		so, do := uint64(t.Ne[1]-1-i1+i2)*s.Nb[1], off3(t.Nb, i1, i2, 0)
		for i0 := int64(0); i0 < t.Ne[0]; i0++ {
			copy(k.dst[do+uint64(i0)*t.Nb[0]:][:es], k.src[0][so+uint64(i0)*s.Nb[0]:][:es])
		}
	}
}

// addRelPos computes result rows r of ADD_REL_POS: element y·W + x is
// a + ph[r, y] + pw[r, x], the two terms added in ggml's order (ph first
// when y ≤ x).
func (k *kernel) addRelPos(r0, r1 int64) {
	t, a, pw := k.t, k.t.Src[0], k.t.Src[1]
	w := pw.Ne[0]
	for r := r0; r < r1; r++ {
		i1, i2, i3 := rowCoords(t.Ne, r)
		ao, do := off3(a.Nb, i1, i2, i3), off3(t.Nb, i1, i2, i3)
		rel := uint64(r*w) * 4 // pw and ph are dense f32
		for y := int64(0); y < w; y++ {
			h := loadF(runtime.TypeF32, k.src[2], rel+uint64(y)*4)
			for x := int64(0); x < w; x++ {
				e := y*w + x
				v := loadF(a.Type, k.src[0], ao+uint64(e)*a.Nb[0])
				pv := loadF(runtime.TypeF32, k.src[1], rel+uint64(x)*4)
				if y <= x {
					v = v + h + pv
				} else {
					v = v + pv + h
				}
				storeF(t.Type, k.dst, do+uint64(e)*t.Nb[0], v)
			}
		}
	}
}
