package vec

import "math"

// Plain Go kernels: used on CPUs without AVX2+FMA, under the purego tag, and
// for the tails the assembly leaves.

func addGo(dst, a, b []float32) {
	b = b[:len(a)]
	dst = dst[:len(a)]
	for i, x := range a {
		dst[i] = x + b[i]
	}
}

func subGo(dst, a, b []float32) {
	b = b[:len(a)]
	dst = dst[:len(a)]
	for i, x := range a {
		dst[i] = x - b[i]
	}
}

func mulGo(dst, a, b []float32) {
	b = b[:len(a)]
	dst = dst[:len(a)]
	for i, x := range a {
		dst[i] = x * b[i]
	}
}

func divGo(dst, a, b []float32) {
	b = b[:len(a)]
	dst = dst[:len(a)]
	for i, x := range a {
		dst[i] = x / b[i]
	}
}

func scaleGo(dst, a []float32, s float32) {
	dst = dst[:len(a)]
	for i, x := range a {
		dst[i] = x * s
	}
}

func addScalarGo(dst, a []float32, s float32) {
	dst = dst[:len(a)]
	for i, x := range a {
		dst[i] = x + s
	}
}

func scaleAddGo(dst, a []float32, s float32) {
	dst = dst[:len(a)]
	for i, x := range a {
		dst[i] += s * x
	}
}

func dotGo(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}

func sum64Go(a []float32) float64 {
	var s0, s1 float64
	i := 0
	for ; i+2 <= len(a); i += 2 {
		s0 += float64(a[i])
		s1 += float64(a[i+1])
	}
	if i < len(a) {
		s0 += float64(a[i])
	}
	return s0 + s1
}

func sumSqGo(a []float32) float64 {
	var s0, s1 float64
	i := 0
	for ; i+2 <= len(a); i += 2 {
		x, y := float64(a[i]), float64(a[i+1])
		s0 += x * x
		s1 += y * y
	}
	if i < len(a) {
		x := float64(a[i])
		s0 += x * x
	}
	return s0 + s1
}

func max32Go(a []float32) float32 {
	m := a[0]
	for _, x := range a[1:] {
		if x > m {
			m = x
		}
	}
	return m
}

// exp32 is exp for one float32 through float64: exact to float32 rounding,
// subnormal results included (as expf gives them).
func exp32(x float32) float32 { return float32(math.Exp(float64(x))) }

func expScaleSubGo(dst, a []float32, s, m float32) float64 {
	dst = dst[:len(a)]
	var sum float64
	for i, x := range a {
		e := exp32(x*s - m)
		dst[i] = e
		sum += float64(e)
	}
	return sum
}

func scaleMaskMaxGo(dst, x, mask []float32, s, t float32) float32 {
	mask = mask[:len(x)]
	dst = dst[:len(x)]
	m := float32(math.Inf(-1))
	for i, v := range x {
		w := v*s + t*mask[i]
		dst[i] = w
		if w > m {
			m = w
		}
	}
	return m
}

func siluGo(dst, a []float32) {
	dst = dst[:len(a)]
	for i, x := range a {
		dst[i] = float32(float64(x) / (1 + math.Exp(-float64(x))))
	}
}
