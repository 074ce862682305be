//go:build !amd64 || purego

package vec

// Q4PackedDots reports whether DotQ4_0RowsPacked runs SIMD kernels: never
// in this build.
func Q4PackedDots() bool { return false }

func dotQ4_0RowsPacked(dst []float32, w []byte, stride int, yp []byte, nb int) {
	dotQ4_0RowsPackedGo(dst, w, stride, yp, nb)
}

// Q4KPackedDots reports whether DotQ4_KRowsPacked runs SIMD kernels on
// the packed row: never in this build.
func Q4KPackedDots() bool { return false }

func dotQ4_KRowsPacked(dst []float32, w []byte, stride int, y, _ []byte, nb int) {
	dotQ4_KMat(dst, len(dst), w, stride, len(dst), y, nb*Q8_KBlockSize, 1, nb)
}

func dotQ4_0RowsRepacked(dst []float32, w []byte, yp []byte, nb int) {
	rs := nb * Q4_0BlockSize
	deinterleaveRows(dst, w, rs, 4*Q4_0BlockSize, func(d []float32, plain []byte) {
		dotQ4_0RowsPackedGo(d, plain, rs, yp, nb)
	})
}

func dotQ4_KRowsRepacked(dst []float32, w []byte, y []byte, nb int) {
	rs := nb * Q4_KBlockSize
	deinterleaveRows(dst, w, rs, RepackUnit(true, nb), func(d []float32, plain []byte) {
		dotQ4_KMat(d, len(d), plain, rs, len(d), y, nb*Q8_KBlockSize, 1, nb)
	})
}
