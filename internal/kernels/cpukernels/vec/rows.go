package vec

import "math"

// Row kernels: one call for a block of equal rows stored one after the
// other, so that the kernel sees the whole block: soft-max prefetches the
// next row while it computes one, and RMS norm writes blocks of 1 MiB or
// more with non-temporal stores (as copy does); smaller blocks stay in
// cache for the next op.

// SoftMaxRows sets each row of cols elements of dst to the soft-max of
// scale times the same row of src: dst = exp(scale·x - max) / sum, while
// the next row is prefetched. It
// handles min(len(dst), len(src))/cols whole rows; cols < 1 does nothing.
// dst may be src (in place). A row whose maximum is -Inf or NaN gives NaN,
// as it does in ggml.
func SoftMaxRows(dst, src []float32, cols int, scale float32) {
	if cols < 1 {
		return
	}
	rows := min(len(dst), len(src)) / cols
	// Ordinary stores throughout: streaming the normalized rows out measured
	// slower here than letting them go through the cache.
	for r := 0; r < rows; r++ {
		x, y := src[r*cols:(r+1)*cols], dst[r*cols:(r+1)*cols]
		m := scaledMax(x, scale)
		next := x // prefetched while this row's exponentials are computed
		if r+1 < rows {
			next = src[(r+1)*cols : (r+2)*cols]
		}
		sum := expScaleSubPf(y, x, scale, m, next)
		Scale(y, y, float32(1/sum))
	}
}

// scaledMax returns max(scale·x) over x (not empty): scale·max(x), or
// scale·min(x) for scale < 0.
func scaledMax(x []float32, scale float32) float32 {
	if scale < 0 {
		return scale * min32(x)
	}
	return scale * max32(x)
}

// min32 returns the smallest element of x (not empty).
func min32(x []float32) float32 {
	m := x[0]
	for _, v := range x[1:] {
		if v < m {
			m = v
		}
	}
	return m
}

// RMSNormRows sets each row of cols elements of dst to the same row of src
// divided by its root mean square: x / sqrt(mean(x²) + eps), with the mean
// accumulated in float64. It handles min(len(dst), len(src))/cols whole
// rows; cols < 1 does nothing. dst may be src (in place).
func RMSNormRows(dst, src []float32, cols int, eps float32) {
	if cols < 1 {
		return
	}
	rows := min(len(dst), len(src)) / cols
	nt := rows*cols*4 >= ntMinBytes
	for r := 0; r < rows; r++ {
		x, y := src[r*cols:(r+1)*cols], dst[r*cols:(r+1)*cols]
		mean := float32(sumSq(x) / float64(cols))
		s := float32(1 / math.Sqrt(float64(mean+eps)))
		if nt {
			scaleNT(y, x, s)
		} else {
			scale(y, x, s)
		}
	}
}

// SoftMaxRow sets dst to the soft-max of scale·x + slope·mask over
// n = min(len(dst), len(x)) elements (and len(mask) when mask is not nil);
// a nil mask means scale·x alone. This is one row of ggml's soft_max_ext
// (mask entries of -Inf drop elements; slope is the ALiBi slope or 1) in
// three passes: the scaled, masked row and its maximum, the exponentials
// and their sum, the normalization. dst may be x or mask (in place).
func SoftMaxRow(dst, x, mask []float32, scale, slope float32) {
	n := min(len(dst), len(x))
	if mask != nil {
		n = min(n, len(mask))
	}
	if n == 0 {
		return
	}
	dst, x = dst[:n], x[:n]
	var sum float64
	if mask == nil {
		sum = expScaleSub(dst, x, scale, scaledMax(x, scale))
	} else {
		m := scaleMaskMax(dst, x, mask[:n], scale, slope)
		sum = expScaleSub(dst, dst, 1, m)
	}
	scale1 := float32(1 / sum)
	Scale(dst, dst, scale1)
}
