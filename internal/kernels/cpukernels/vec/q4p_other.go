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
