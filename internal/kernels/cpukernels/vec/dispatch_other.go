//go:build !amd64 || purego

package vec

func add(dst, a, b []float32)               { addGo(dst, a, b) }
func sub(dst, a, b []float32)               { subGo(dst, a, b) }
func mul(dst, a, b []float32)               { mulGo(dst, a, b) }
func div(dst, a, b []float32)               { divGo(dst, a, b) }
func scale(dst, a []float32, s float32)     { scaleGo(dst, a, s) }
func addScalar(dst, a []float32, s float32) { addScalarGo(dst, a, s) }
func scaleAdd(dst, a []float32, s float32)  { scaleAddGo(dst, a, s) }
func dot(a, b []float32) float32            { return dotGo(a, b) }
func sum64(a []float32) float64             { return sum64Go(a) }
func sumSq(a []float32) float64             { return sumSqGo(a) }
func max32(a []float32) float32             { return max32Go(a) }
func expScaleSub(dst, a []float32, s, m float32) float64 {
	return expScaleSubGo(dst, a, s, m)
}
func expScaleSubPf(dst, a []float32, s, m float32, _ []float32) float64 {
	return expScaleSubGo(dst, a, s, m)
}
func scaleMaskMax(dst, x, mask []float32, s, t float32) float32 {
	return scaleMaskMaxGo(dst, x, mask, s, t)
}
func scaleNT(dst, a []float32, s float32) { scaleGo(dst, a, s) }
func silu(dst, a []float32)               { siluGo(dst, a) }

// Implementation names the kernels in use: "avx2+fma" (assembly) or "go".
func Implementation() string { return "go" }

func gemmNT(_ *GemmBuf, m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	gemmNTGo(m, n, k, a, lda, b, ldb, c, ldc)
}

// Split units of GemmNTPart on the portable path.
const (
	gemmMR = 6
	gemmNR = 16
)

// fmaChunk runs n iterations of the portable peak loop and returns its flops.
func fmaChunk(n int) float64 {
	if scalarFMALoop(n) == -1 {
		return 0
	}
	return float64(n) * 16
}
