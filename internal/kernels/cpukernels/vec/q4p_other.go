//go:build !amd64 || purego

package vec

// Q4PackedDots reports whether DotQ4_0RowsPacked runs SIMD kernels: never
// in this build.
func Q4PackedDots() bool { return false }

func dotQ4_0RowsPacked(dst []float32, w []byte, stride int, yp []byte, nb int) {
	dotQ4_0RowsPackedGo(dst, w, stride, yp, nb)
}
