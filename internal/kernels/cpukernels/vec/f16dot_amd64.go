//go:build amd64 && !purego

package vec

import "unsafe"

// The kernels set dst[0..3] (x4) or dst[0] (x1) to the dots of the f16
// (bf16: dotBF16, f32: dotF32) rows at w, w+stride, ... with x over n elements (x4/x1 AVX-512: n a
// multiple of 32; AVX2: of 16).

//go:noescape
func dotF32x4AVX512(w *byte, stride int, x *float32, n int, dst *float32)

//go:noescape
func dotF32x1AVX512(w *byte, stride int, x *float32, n int, dst *float32)

//go:noescape
func dotF16x4AVX512(w *byte, stride int, x *float32, n int, dst *float32)

//go:noescape
func dotF16x1AVX512(w *byte, stride int, x *float32, n int, dst *float32)

//go:noescape
func dotBF16x4AVX512(w *byte, stride int, x *float32, n int, dst *float32)

//go:noescape
func dotBF16x1AVX512(w *byte, stride int, x *float32, n int, dst *float32)

//go:noescape
func dotBF16x4AVX2(w *byte, stride int, x *float32, n int, dst *float32)

//go:noescape
func dotBF16x1AVX2(w *byte, stride int, x *float32, n int, dst *float32)

//go:noescape
func dotF16x4AVX2(w *byte, stride int, x *float32, n int, dst *float32)

//go:noescape
func dotF16x1AVX2(w *byte, stride int, x *float32, n int, dst *float32)

func dotF16Rows(dst []float32, w []byte, stride int, x []float32, k int) {
	switch {
	case useAVX512 && useF16C:
		halfRows(dst, w, stride, x, k, dotF16x4AVX512, dotF16x1AVX512, 32, dotF16Go)
	case useF16C:
		halfRows(dst, w, stride, x, k, dotF16x4AVX2, dotF16x1AVX2, 16, dotF16Go)
	default:
		dotF16RowsGo(dst, w, stride, x, k)
	}
}

func dotBF16Rows(dst []float32, w []byte, stride int, x []float32, k int) {
	switch {
	case useAVX512:
		halfRows(dst, w, stride, x, k, dotBF16x4AVX512, dotBF16x1AVX512, 32, dotBF16Go)
	case useAVX2:
		halfRows(dst, w, stride, x, k, dotBF16x4AVX2, dotBF16x1AVX2, 16, dotBF16Go)
	default:
		dotBF16RowsGo(dst, w, stride, x, k)
	}
}

// halfRows runs a 16-bit row dot's kernels (x4 four rows a call, x1 one,
// over the first k&^(unit-1) elements; unit 32 means the AVX-512 kernels,
// which take long calls one row at a time, see f16StreamRows) and adds
// the rest of each row with the portable dot tail.
func halfRows(dst []float32, w []byte, stride int, x []float32, k int, x4, x1 func(*byte, int, *float32, int, *float32), unit int, tail func([]byte, []float32) float32) {
	n := k &^ (unit - 1)
	if n == 0 {
		for r := range dst {
			dst[r] = tail(w[r*stride:r*stride+2*k], x)
		}
		return
	}
	if unit == 32 && len(dst) >= f16StreamRows {
		x4 = nil
	}
	r := 0
	for ; x4 != nil && r+4 <= len(dst); r += 4 {
		x4(pb(w[r*stride:]), stride, p(x), n, &dst[r])
	}
	for ; r < len(dst); r++ {
		x1(pb(w[r*stride:]), stride, p(x), n, &dst[r])
	}
	if n < k {
		for r := range dst {
			dst[r] += tail(w[r*stride+2*n:r*stride+2*k], x[n:])
		}
	}
}

// gemv512 is gemmNT's product for one row of a at the avx512 level:
// c[j] = x·b[j] for j < n (rows of b ldb floats apart), four rows a call
// through dotF32x4AVX512, whose prefetch of the next four rows keeps the
// stream of weight rows going from one call to the next, the rest one at a
// time; the last k%32 elements of each row are added by dot.
func gemv512(n, k int, x, b []float32, ldb int, c []float32) {
	k32, stride := k&^31, 4*ldb
	tail := func(j0, j1 int) {
		for j := j0; j < j1; j++ {
			if k32 == 0 {
				c[j] = 0
			}
			c[j] += dot(x[k32:k], b[j*ldb+k32:j*ldb+k])
		}
	}
	j := 0
	for ; j+4 <= n; j += 4 {
		if k32 > 0 {
			dotF32x4AVX512((*byte)(unsafe.Pointer(&b[j*ldb])), stride, p(x), k32, &c[j])
		}
		if k32 < k {
			tail(j, j+4)
		}
	}
	for ; j < n; j++ {
		if k32 > 0 {
			dotF32x1AVX512((*byte)(unsafe.Pointer(&b[j*ldb])), stride, p(x), k32, &c[j])
		}
		if k32 < k {
			tail(j, j+1)
		}
	}
}
