//go:build amd64 && !purego

package vec

// sincosfAVX512 is in sincosf_amd64.s (asmgen/sincosf.go).
//
//go:noescape
func sincosfAVX512(sin, cos, x *float32, n int)

// sincosfVec runs sincosfAVX512 over the whole steps of x and returns how
// many lanes it wrote (0 below AVX-512).
func sincosfVec(sin, cos, x []float32) int {
	n := len(x) &^ 7
	if !useAVX512 || n == 0 {
		return 0
	}
	sincosfAVX512(p(sin), p(cos), p(x), n)
	return n
}
