//go:build amd64 && !purego

package vec

// The kernels set dst[0..3] (x4) or dst[0] (x1) to the dots of the f16
// rows at w, w+stride, ... with x over n elements (x4/x1 AVX-512: n a
// multiple of 32; AVX2: of 16).

//go:noescape
func dotF16x4AVX512(w *byte, stride int, x *float32, n int, dst *float32)

//go:noescape
func dotF16x1AVX512(w *byte, stride int, x *float32, n int, dst *float32)

//go:noescape
func dotF16x4AVX2(w *byte, stride int, x *float32, n int, dst *float32)

//go:noescape
func dotF16x1AVX2(w *byte, stride int, x *float32, n int, dst *float32)

func dotF16Rows(dst []float32, w []byte, stride int, x []float32, k int) {
	var x4, x1 func(*byte, int, *float32, int, *float32)
	var n int
	switch {
	case useAVX512 && useF16C:
		x4, x1, n = dotF16x4AVX512, dotF16x1AVX512, k&^31
	case useF16C:
		x4, x1, n = dotF16x4AVX2, dotF16x1AVX2, k&^15
	}
	if n == 0 {
		dotF16RowsGo(dst, w, stride, x, k)
		return
	}
	r := 0
	for ; r+4 <= len(dst); r += 4 {
		x4(pb(w[r*stride:]), stride, p(x), n, &dst[r])
	}
	for ; r < len(dst); r++ {
		x1(pb(w[r*stride:]), stride, p(x), n, &dst[r])
	}
	if n < k {
		for r := range dst {
			dst[r] += dotF16Go(w[r*stride+2*n:r*stride+2*k], x[n:])
		}
	}
}
