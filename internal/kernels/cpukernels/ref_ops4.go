package cpukernels

import (
	"fmt"
	"math"

	"github.com/gogml/gogml/runtime"
)

// This file holds the reference kernels of convolution-style and training
// ops: IM2COL, POOL_2D, SSM_CONV, CROSS_ENTROPY_LOSS(_BACK),
// OPT_STEP_ADAMW and OPT_STEP_SGD, with ggml's CPU formulas.

// Pooling kinds (ggml_op_pool), op parameter 0 of POOL_1D and POOL_2D.
const (
	poolMax = 0
	poolAvg = 1
)

// unsupported4 returns why node t of an op of this file cannot be
// computed, or "" (ok reports whether t's op is one of them).
func unsupported4(t *runtime.Tensor) (why string, ok bool) {
	s0, s1 := t.Src[0], t.Src[1]
	f32 := runtime.TypeF32
	p := func(i int) int64 { return int64(t.OpParamI32(i)) }
	switch t.Op {
	case runtime.OpIm2col:
		if w := srcOK(t, 2); w != "" {
			return w, true
		}
		if s1.Type != f32 || (t.Type != f32 && t.Type != runtime.TypeF16) || !s1.IsContiguousRows() {
			return "want f32 input with dense rows and f32 or f16 result", true
		}
		is2D := p(6) != 0
		if p(0) < 1 || p(4) < 1 || p(2) < 0 || (is2D && (p(1) < 1 || p(5) < 1 || p(3) < 0)) {
			return "strides and dilations must be positive, pads non-negative", true
		}
		kw, kh, ic, n, oh := s0.Ne[0], int64(1), s0.Ne[1], s1.Ne[2], int64(1)
		if is2D {
			kh, ic, n = s0.Ne[1], s0.Ne[2], s1.Ne[3]
			oh = (s1.Ne[1]+2*p(3)-p(5)*(kh-1)-1)/p(1) + 1
			if ic != s1.Ne[2] {
				return "kernel and input channels differ", true
			}
		} else if ic != s1.Ne[1] || s1.Ne[3] != 1 {
			return "kernel and input channels differ", true
		}
		ow := (s1.Ne[0]+2*p(2)-p(4)*(kw-1)-1)/p(0) + 1
		want := [4]int64{ic * kh * kw, ow, n, 1}
		if is2D {
			want = [4]int64{ic * kh * kw, ow, oh, n}
		}
		if ow < 1 || oh < 1 || t.Ne != want {
			return "result shape does not fit", true
		}
		return "", true
	case runtime.OpPool2D:
		if w := srcOK(t, 1); w != "" {
			return w, true
		}
		if !IsFloat(s0.Type) || t.Type != f32 || (p(0) != poolMax && p(0) != poolAvg) {
			return "want float source, f32 result, max or avg", true
		}
		k0, k1, st0, st1, p0, p1 := p(1), p(2), p(3), p(4), p(5), p(6)
		if k0 < 1 || k1 < 1 || st0 < 1 || st1 < 1 || p0 < 0 || p1 < 0 ||
			t.Ne != [4]int64{(s0.Ne[0]+2*p0-k0)/st0 + 1, (s0.Ne[1]+2*p1-k1)/st1 + 1, s0.Ne[2], s0.Ne[3]} {
			return "pooling parameters do not fit the shapes", true
		}
		return "", true
	case runtime.OpUpscale:
		if w := srcOK(t, 1); w != "" {
			return w, true
		}
		mode := t.OpParamI32(0)
		if s0.Type != f32 || t.Type != f32 || mode&^(upscaleAlignCorners|upscaleAntialias) > upscaleBicubic {
			return "want f32, nearest, bilinear or bicubic mode (flags: align corners, antialias)", true
		}
		return "", true
	case runtime.OpSsmConv:
		if w := srcOK(t, 2); w != "" {
			return w, true
		}
		nt := s0.Ne[0] - s1.Ne[0] + 1
		if s0.Type != f32 || s1.Type != f32 || t.Type != f32 || s0.Ne[3] != 1 || !s1.IsMatrix() || s0.Ne[1] != s1.Ne[1] ||
			nt < 1 || t.Ne != [4]int64{s1.Ne[1], nt, s0.Ne[2], 1} || !s0.IsContiguousRows() || !s1.IsContiguousRows() {
			return "want f32 {d_conv-1+n_t, d_inner, n_s} and {d_conv, d_inner}", true
		}
		return "", true
	case runtime.OpCrossEntropyLoss:
		if w := srcOK(t, 2); w != "" {
			return w, true
		}
		if s0.Type != f32 || s1.Type != f32 || s0.Ne != s1.Ne || t.Type != f32 || !t.IsScalar() {
			return "want f32 logits and labels of one shape and an f32 scalar", true
		}
		return "", true
	case runtime.OpCrossEntropyLossBack:
		if w := srcOK(t, 3); w != "" {
			return w, true
		}
		s2 := t.Src[2]
		if s0.Type != f32 || !s0.IsScalar() || s1.Type != f32 || s2.Type != f32 || s1.Ne != s2.Ne || t.Type != f32 || t.Ne != s1.Ne {
			return "want an f32 scalar gradient and f32 logits and labels of the result's shape", true
		}
		return "", true
	case runtime.OpOptStepAdamw, runtime.OpOptStepSgd:
		n, np := 4, int64(7)
		if t.Op == runtime.OpOptStepSgd {
			n, np = 2, 2
		}
		if w := srcOK(t, n+1); w != "" {
			return w, true
		}
		for i := 0; i < n; i++ {
			s := t.Src[i]
			if s.Type != f32 || s.Ne != t.Ne || (i > 0 && s.Nb != t.Src[0].Nb) {
				return "want f32 weights, gradients and moments of one shape and layout", true
			}
		}
		if pr := t.Src[n]; pr.Type != f32 || pr.Nelements() != np || !pr.IsContiguous() {
			return fmt.Sprintf("want %d f32 optimizer parameters", np), true
		}
		return "", true
	}
	return "", false
}

// compute4 computes result rows [r0, r1) of the ops of this file (ok
// reports whether t's op is one of them).
func (k *kernel) compute4(r0, r1 int64) (bool, error) {
	switch k.t.Op {
	case runtime.OpIm2col:
		k.im2col(r0, r1)
	case runtime.OpPool2D:
		k.pool(r0, r1)
	case runtime.OpSsmConv:
		k.ssmConv(r0, r1)
	case runtime.OpUpscale:
		k.upscale(r0, r1)
	case runtime.OpCrossEntropyLoss:
		k.crossEntropy()
	case runtime.OpCrossEntropyLossBack:
		k.crossEntropyBack(r0, r1)
	case runtime.OpOptStepAdamw, runtime.OpOptStepSgd:
		k.optStep(r0, r1)
	default:
		return false, nil
	}
	return true, nil
}

// im2col writes result row (ow, oh, n) (1-d: (ow, n)): for each input
// channel c and kernel position (kh, kw) the input element at
// (ow·s0 + kw·d0 - p0, oh·s1 + kh·d1 - p1), 0 outside.
func (k *kernel) im2col(r0, r1 int64) {
	t, a, b := k.t, k.t.Src[0], k.t.Src[1]
	p := func(i int) int64 { return int64(t.OpParamI32(i)) }
	s0, s1, p0, p1, d0, d1, is2D := p(0), p(1), p(2), p(3), p(4), p(5), p(6) != 0
	kw, kh, ic := a.Ne[0], int64(1), a.Ne[1]
	ih := int64(1)
	if is2D {
		kh, ic, ih = a.Ne[1], a.Ne[2], b.Ne[1]
	}
	out := make([]float32, t.Ne[0])
	for r := r0; r < r1; r++ {
		ow, i2, i3 := rowCoords(t.Ne, r)
		oh, n := i2, i3
		if !is2D {
			oh, n = 0, i2
		}
		for c := int64(0); c < ic; c++ {
			for y := int64(0); y < kh; y++ {
				for x := int64(0); x < kw; x++ {
					iw, ihh := ow*s0+x*d0-p0, oh*s1+y*d1-p1
					v := float32(0)
					if iw >= 0 && iw < b.Ne[0] && ihh >= 0 && ihh < ih {
						if is2D {
							v = loadF(b.Type, k.src[1], uint64(iw)*b.Nb[0]+off3(b.Nb, ihh, c, n))
						} else {
							v = loadF(b.Type, k.src[1], uint64(iw)*b.Nb[0]+off3(b.Nb, c, n, 0))
						}
					}
					out[c*kh*kw+y*kw+x] = v
				}
			}
		}
		k.storeRow(out, off3(t.Nb, ow, i2, i3))
	}
}

// pool computes max or average pooling (the average over the whole
// window, padding included, as ggml divides by k0·k1).
func (k *kernel) pool(r0, r1 int64) {
	t, s := k.t, k.t.Src[0]
	p := func(i int) int64 { return int64(t.OpParamI32(i)) }
	op := p(0)
	k0, k1, st0, st1, p0, p1 := p(1), p(2), p(3), p(4), p(5), p(6)
	out := make([]float32, t.Ne[0])
	for r := r0; r < r1; r++ {
		oy, i2, i3 := rowCoords(t.Ne, r)
		for ox := range out {
			v := float32(0)
			if op == poolMax {
				v = -math.MaxFloat32
			}
			for ky := int64(0); ky < k1; ky++ {
				iy := oy*st1 + ky - p1
				if iy < 0 || iy >= s.Ne[1] {
					continue
				}
				for kx := int64(0); kx < k0; kx++ {
					ix := int64(ox)*st0 + kx - p0
					if ix < 0 || ix >= s.Ne[0] {
						continue
					}
					x := loadF(s.Type, k.src[0], uint64(ix)*s.Nb[0]+off3(s.Nb, iy, i2, i3))
					if op == poolAvg {
						v += x
					} else if x > v {
						v = x
					}
				}
			}
			if op == poolAvg {
				v /= float32(k0 * k1)
			}
			out[ox] = v
		}
		k.storeRow(out, off3(t.Nb, oy, i2, i3))
	}
}

// ssmConv computes Mamba's causal convolution: result (i, t, s) is
// Σ_j x[t+j, i, s]·c[j, i] in float32, j ascending.
func (k *kernel) ssmConv(r0, r1 int64) {
	t, x, c := k.t, k.t.Src[0], k.t.Src[1]
	out := make([]float32, t.Ne[0])
	for r := r0; r < r1; r++ {
		tok, seq, _ := rowCoords(t.Ne, r)
		for i := range out {
			var sum float32
			for j := int64(0); j < c.Ne[0]; j++ {
				xv := loadF(x.Type, k.src[0], uint64(tok+j)*x.Nb[0]+off3(x.Nb, int64(i), seq, 0))
				sum += xv * loadF(c.Type, k.src[1], uint64(j)*c.Nb[0]+uint64(i)*c.Nb[1])
			}
			out[i] = sum
		}
		k.storeRow(out, off3(t.Nb, tok, seq, 0))
	}
}

// logSoftmaxRow sets y = x - max and returns log Σ exp(y) (ggml's
// ggml_vec_log_soft_max_f32).
func logSoftmaxRow(y, x []float32) float64 {
	mx := float32(math.Inf(-1))
	for _, v := range x {
		mx = max(mx, v)
	}
	var sum float64
	for i, v := range x {
		y[i] = v - mx
		sum += float64(expf(y[i]))
	}
	return math.Log(sum)
}

// crossEntropy computes -Σ_rows Σ_i labels·log_softmax(logits) / rows
// (runs whole in part 0: the result is one element).
func (k *kernel) crossEntropy() {
	t, a, b := k.t, k.t.Src[0], k.t.Src[1]
	x := make([]float32, a.Ne[0])
	y := make([]float32, a.Ne[0])
	st := make([]float32, a.Ne[0])
	var total float32
	for r := int64(0); r < a.Nrows(); r++ {
		i1, i2, i3 := rowCoords(a.Ne, r)
		loadRow(a, k.src[0], i1, i2, i3, x)
		loadRow(b, k.src[1], i1, i2, i3, y)
		ls := float32(logSoftmaxRow(st, x))
		var sum float64
		for i := range st {
			sum += float64((st[i] - ls) * y[i])
		}
		total += float32(sum)
	}
	storeF(t.Type, k.dst, 0, total*(-1/float32(a.Nrows())))
}

// crossEntropyBack computes (softmax(logits) - labels)·grad/rows per row.
func (k *kernel) crossEntropyBack(r0, r1 int64) {
	t, g, a, b := k.t, k.t.Src[0], k.t.Src[1], k.t.Src[2]
	dByNr := loadF(g.Type, k.src[0], 0) / float32(a.Nrows())
	x := make([]float32, a.Ne[0])
	y := make([]float32, a.Ne[0])
	for r := r0; r < r1; r++ {
		i1, i2, i3 := rowCoords(t.Ne, r)
		loadRow(a, k.src[1], i1, i2, i3, x)
		loadRow(b, k.src[2], i1, i2, i3, y)
		mx := float32(math.Inf(-1))
		for _, v := range x {
			mx = max(mx, v)
		}
		var sum float64
		for i, v := range x {
			x[i] = expf(v - mx)
			sum += float64(x[i])
		}
		inv := float32(1 / sum)
		for i := range x {
			x[i] = (x[i]*inv - y[i]) * dByNr
		}
		k.storeRow(x, off3(t.Nb, i1, i2, i3))
	}
}

// optStep updates the weights (source 0, whose memory the result views)
// by AdamW (moments m and v, sources 2 and 3, updated too; parameters
// alpha, beta1, beta2, eps, wd, beta1h, beta2h in source 4) or SGD
// (parameters alpha, wd in source 2).
func (k *kernel) optStep(r0, r1 int64) {
	t, w, g := k.t, k.t.Src[0], k.t.Src[1]
	pi := 4
	if t.Op == runtime.OpOptStepSgd {
		pi = 2
	}
	pr := make([]float32, t.Src[pi].Nelements())
	loadRow(t.Src[pi], k.src[pi], 0, 0, 0, pr)
	alpha := pr[0]
	for r := r0; r < r1; r++ {
		i1, i2, i3 := rowCoords(t.Ne, r)
		o := off3(w.Nb, i1, i2, i3)
		for i0 := int64(0); i0 < t.Ne[0]; i0++ {
			e := o + uint64(i0)*4
			wv, gv := loadF(w.Type, k.src[0], e), loadF(g.Type, k.src[1], e)
			if t.Op == runtime.OpOptStepSgd {
				storeF(t.Type, k.dst, off3(t.Nb, i1, i2, i3)+uint64(i0)*4, wv*(1-alpha*pr[1])-alpha*gv)
				continue
			}
			beta1, beta2, eps, wd, beta1h, beta2h := pr[1], pr[2], pr[3], pr[4], pr[5], pr[6]
			m := loadF(runtime.TypeF32, k.src[2], e)*beta1 + gv*(1-beta1)
			v := loadF(runtime.TypeF32, k.src[3], e)*beta2 + gv*gv*(1-beta2)
			storeF(runtime.TypeF32, k.src[2], e, m)
			storeF(runtime.TypeF32, k.src[3], e, v)
			mh := m * beta1h
			vh := float32(math.Sqrt(float64(v*beta2h))) + eps
			storeF(t.Type, k.dst, off3(t.Nb, i1, i2, i3)+uint64(i0)*4, wv*(1-alpha*wd)-alpha*mh/vh)
		}
	}
}

// Upscale modes and flags (ggml_scale_mode, ggml_scale_flag), op
// parameter 0.
const (
	upscaleBilinear     = 1
	upscaleBicubic      = 2
	upscaleAlignCorners = 1 << 8
	upscaleAntialias    = 1 << 9
)

// upscale resizes each matrix by nearest-neighbour, bilinear (optionally
// antialiased: a triangle filter as wide as the scale) or bicubic
// (a = -0.75) sampling (op parameter 0: mode, bit 8 align corners, bit 9
// antialias), ggml's coordinate mapping and arithmetic in float32.
func (k *kernel) upscale(r0, r1 int64) {
	t, s := k.t, k.t.Src[0]
	flags := t.OpParamI32(0)
	var sf [4]float32
	for d := range sf {
		sf[d] = float32(t.Ne[d]) / float32(s.Ne[d])
	}
	off := float32(0.5)
	if flags&upscaleAlignCorners != 0 {
		off = 0
		for d := 0; d < 2; d++ {
			if t.Ne[d] > 1 && s.Ne[d] > 1 {
				sf[d] = float32(t.Ne[d]-1) / float32(s.Ne[d]-1)
			}
		}
	}
	at := func(i0, i1, i2, i3 int64) float32 {
		return loadF(s.Type, k.src[0], uint64(i0)*s.Nb[0]+off3(s.Nb, i1, i2, i3))
	}
	clampI := func(v, n int64) int64 { return max(0, min(v, n-1)) }
	out := make([]float32, t.Ne[0])
	for r := r0; r < r1; r++ {
		i1, i2, i3 := rowCoords(t.Ne, r)
		j2, j3 := int64(float32(i2)/sf[2]), int64(float32(i3)/sf[3])
		switch mode := flags & 0xff; {
		case mode == upscaleBilinear && flags&upscaleAntialias != 0:
			upscaleAntialiasRow(out, i1, sf, off, s.Ne, func(x, y int64) float32 { return at(x, y, j2, j3) })
		case mode == upscaleBicubic:
			y := (float32(i1)+off)/sf[1] - off
			y0 := int64(math.Floor(float64(y)))
			dy := y - float32(y0)
			for i0 := range out {
				x := (float32(i0)+off)/sf[0] - off
				x0 := int64(math.Floor(float64(x)))
				dx := x - float32(x0)
				p := func(xo, yo int64) float32 { return at(clampI(x0+xo, s.Ne[0]), clampI(y0+yo, s.Ne[1]), j2, j3) }
				var col [4]float32
				for j := range col {
					yo := int64(j) - 1
					col[j] = bicubic(p(-1, yo), p(0, yo), p(1, yo), p(2, yo), dx)
				}
				out[i0] = bicubic(col[0], col[1], col[2], col[3], dy)
			}
		case mode == 0:
			j1 := int64(float32(i1) / sf[1])
			for i0 := range out {
				out[i0] = at(int64(float32(i0)/sf[0]), j1, j2, j3)
			}
		default:
			y := (float32(i1)+off)/sf[1] - off
			y0 := int64(math.Floor(float64(y)))
			y1 := clampI(y0+1, s.Ne[1])
			y0 = clampI(y0, s.Ne[1])
			dy := max(0, min(y-float32(y0), 1))
			for i0 := range out {
				x := (float32(i0)+off)/sf[0] - off
				x0 := int64(math.Floor(float64(x)))
				x1 := clampI(x0+1, s.Ne[0])
				x0 = clampI(x0, s.Ne[0])
				dx := max(0, min(x-float32(x0), 1))
				a, b := at(x0, y0, j2, j3), at(x1, y0, j2, j3)
				c, d := at(x0, y1, j2, j3), at(x1, y1, j2, j3)
				out[i0] = a*(1-dx)*(1-dy) + b*dx*(1-dy) + c*(1-dx)*dy + d*dx*dy
			}
		}
		k.storeRow(out, off3(t.Nb, i1, i2, i3))
	}
}

// bicubic interpolates p0..p3 (at -1, 0, 1, 2) at x in [0, 1) with the
// convolution kernel of a = -0.75 (PyTorch's), in ggml's float32 order.
func bicubic(p0, p1, p2, p3, x float32) float32 {
	const a = float32(-0.75)
	w1 := func(x float32) float32 { return ((a+2)*x-(a+3))*x*x + 1 }
	w2 := func(x float32) float32 { return ((a*x-5*a)*x+8*a)*x - 4*a }
	return p0*w2(x+1) + p1*w1(x) + p2*w1(1-x) + p3*w2(2-x)
}

// upscaleAntialiasRow computes result row i1 of an antialiased bilinear
// upscale: each pixel is the triangle-filter-weighted mean of the source
// pixels within the filter's support (at least one pixel, wider when
// shrinking), as PyTorch's interpolate(antialias=True) and ggml.
func upscaleAntialiasRow(out []float32, i1 int64, sf [4]float32, off float32, ne [4]int64, at func(x, y int64) float32) {
	tri := func(x float32) float32 { return max(1-float32(math.Abs(float64(x))), 0) }
	support1, support0 := max(1, 1/sf[1]), max(1, 1/sf[0])
	inv1, inv0 := 1/support1, 1/support0
	y := (float32(i1) + off) / sf[1]
	yMin, yMax := max(int64(y-support1+off), 0), min(int64(y+support1+off), ne[1])
	for i0 := range out {
		x := (float32(i0) + off) / sf[0]
		xMin, xMax := max(int64(x-support0+off), 0), min(int64(x+support0+off), ne[0])
		var val, total float32
		for sy := yMin; sy < yMax; sy++ {
			wy := tri((float32(sy) - y + off) * inv1)
			for sx := xMin; sx < xMax; sx++ {
				w := tri((float32(sx)-x+off)*inv0) * wy
				if w <= 0 {
					continue
				}
				val += at(sx, sy) * w
				total += w
			}
		}
		if total > 0 {
			val /= total
		}
		out[i0] = val
	}
}
