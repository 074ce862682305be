package vec

import "math"

// ntMinBytes: outputs at least this large are written with non-temporal
// stores (on amd64), which skip reading the destination into cache first.
// It is the size at which the runtime's memmove (copy) switches to them.
const ntMinBytes = 1 << 20

// Add sets dst[i] = a[i] + b[i].
func Add(dst, a, b []float32) {
	n := min(len(dst), len(a), len(b))
	add(dst[:n], a[:n], b[:n])
}

// Sub sets dst[i] = a[i] - b[i].
func Sub(dst, a, b []float32) {
	n := min(len(dst), len(a), len(b))
	sub(dst[:n], a[:n], b[:n])
}

// Mul sets dst[i] = a[i] * b[i].
func Mul(dst, a, b []float32) {
	n := min(len(dst), len(a), len(b))
	mul(dst[:n], a[:n], b[:n])
}

// Div sets dst[i] = a[i] / b[i].
func Div(dst, a, b []float32) {
	n := min(len(dst), len(a), len(b))
	div(dst[:n], a[:n], b[:n])
}

// Scale sets dst[i] = a[i] * s.
func Scale(dst, a []float32, s float32) {
	n := min(len(dst), len(a))
	scale(dst[:n], a[:n], s)
}

// AddScalar sets dst[i] = a[i] + s.
func AddScalar(dst, a []float32, s float32) {
	n := min(len(dst), len(a))
	addScalar(dst[:n], a[:n], s)
}

// ScaleAdd sets dst[i] += s * a[i] (axpy). Soft-max with a mask is
// Scale(w, x, scale) followed by ScaleAdd(w, mask, slope).
func ScaleAdd(dst, a []float32, s float32) {
	n := min(len(dst), len(a))
	scaleAdd(dst[:n], a[:n], s)
}

// Dot returns the sum of a[i]*b[i] over min(len(a), len(b)) elements,
// accumulated in float32 over several independent partial sums.
func Dot(a, b []float32) float32 {
	n := min(len(a), len(b))
	return dot(a[:n], b[:n])
}

// Sum returns the sum of a, accumulated in float64 and rounded once.
func Sum(a []float32) float32 { return float32(sum64(a)) }

// Sum64 returns the sum of a, accumulated in float64.
func Sum64(a []float32) float64 { return sum64(a) }

// SumSq returns the sum of a[i]*a[i], accumulated in float64 (RMS norm).
func SumSq(a []float32) float64 { return sumSq(a) }

// Max returns the largest element of a, or -Inf when a is empty. For a
// slice that holds NaNs the result is either NaN or one of its elements.
func Max(a []float32) float32 {
	if len(a) == 0 {
		return float32(math.Inf(-1))
	}
	return max32(a)
}

// ScaleMaskMax sets dst[i] = s·x[i] + t·mask[i] (s·x[i] when mask is
// nil) for i < len(x) and returns the largest dst[i] (-Inf when x is
// empty; a NaN never replaces the running maximum): the masked scores of
// soft-max and attention, and their maximum, in one pass. dst and mask
// hold at least len(x) elements; dst may be x.
func ScaleMaskMax(dst, x, mask []float32, s, t float32) float32 {
	if len(x) == 0 {
		return float32(math.Inf(-1))
	}
	if mask == nil {
		return scaledMaxTo(dst[:len(x)], x, s)
	}
	return scaleMaskMax(dst[:len(x)], x, mask[:len(x)], s, t)
}

// scaledMaxTo sets dst = s·x and returns its largest element (x not
// empty).
func scaledMaxTo(dst, x []float32, s float32) float32 {
	scale(dst, x, s)
	return max32(dst)
}

// ExpSub sets dst[i] = exp(a[i] - m) and returns the sum of the results,
// accumulated in float64: the heart of soft-max. exp(-Inf) is 0, results
// below the smallest normal float32 are subnormal (as expf's), results are
// finite up to the largest float32 (x ≤ 88.7228) and +Inf above, and NaN
// stays NaN. The relative error is
// within about 1 float32 ulp.
func ExpSub(dst, a []float32, m float32) float64 {
	n := min(len(dst), len(a))
	return expSub(dst[:n], a[:n], m)
}

// expSub is expScaleSub with scale 1 (x*1 is exactly x) on every
// implementation.
func expSub(dst, a []float32, m float32) float64 { return expScaleSub(dst, a, 1, m) }

// Exp sets dst[i] = exp(a[i]) with the accuracy of ExpSub.
func Exp(dst, a []float32) {
	n := min(len(dst), len(a))
	expSub(dst[:n], a[:n], 0)
}

// SwiGLU sets dst[i] = SiLU(x[i]) · g[i] for i < min(len(dst), len(x),
// len(g)) in one pass over the rows (the results are those of SiLU into a
// row of its own, then Mul). dst may be x or g (in place), not a shifted
// view of either.
func SwiGLU(dst, x, g []float32) {
	n := min(len(dst), len(x), len(g))
	swiglu(dst[:n], x[:n], g[:n], false)
}

// SwiGLURows is SwiGLU over rows of n elements laid end to end in x, g
// and dst (the first min(len(dst), len(x), len(g)) elements, rounded down
// to whole rows): each row's result is SwiGLU's on that row alone. Where
// that cannot depend on where the calls split (n a multiple of
// swigluRowsMerge), the rows go to the kernel as one call, without a
// call's fixed cost per row. dst may be x or g, as for SwiGLU.
func SwiGLURows(dst, x, g []float32, n int) { swigluRows(dst, x, g, n, false) }

// SwiGLURowsStream is SwiGLURows, the same bits, for operands that come
// from memory rather than the cache (an op larger than the last-level
// cache): at AVX-512 its kernel also prefetches x and g a 4 KB page ahead,
// which costs a few percent where they are in the cache.
func SwiGLURowsStream(dst, x, g []float32, n int) { swigluRows(dst, x, g, n, true) }

func swigluRows(dst, x, g []float32, n int, stream bool) {
	if n <= 0 {
		return
	}
	m := min(len(dst), len(x), len(g))
	m -= m % n
	if n%swigluRowsMerge == 0 {
		swiglu(dst[:m], x[:m], g[:m], stream)
		return
	}
	for i := 0; i < m; i += n {
		swiglu(dst[i:i+n], x[i:i+n], g[i:i+n], stream)
	}
}

// swigluRowsMerge: the levels' SiLU kernels give the same bits (swigluAVX512
// and siluAVX2 compute EXPV's exp), except siluGo (float64 exp), which
// takes the last len%8 elements of each call at the AVX2 and AVX-512
// levels. With rows of a multiple of 8 elements no element of any row
// goes there, one call or a call per row.
const swigluRowsMerge = 8

// swigluChunks is SwiGLU through SiLU and Mul, swigluChunk elements at a
// time in a buffer of the stack (the L1 cache).
func swigluChunks(dst, x, g []float32) {
	var buf [swigluChunk]float32
	for i := 0; i < len(x); i += swigluChunk {
		e := min(i+swigluChunk, len(x))
		a := buf[:e-i]
		silu(a, x[i:e])
		mul(dst[i:e], a, g[i:e])
	}
}

// swigluChunk is swigluChunks' step.
const swigluChunk = 256

// SiLU sets dst[i] = a[i] / (1 + exp(-a[i])).
func SiLU(dst, a []float32) {
	n := min(len(dst), len(a))
	silu(dst[:n], a[:n])
}
