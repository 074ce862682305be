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

// SiLU sets dst[i] = a[i] / (1 + exp(-a[i])).
func SiLU(dst, a []float32) {
	n := min(len(dst), len(a))
	silu(dst[:n], a[:n])
}
