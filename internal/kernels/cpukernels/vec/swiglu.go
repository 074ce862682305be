package vec

// NTMinBytes is the size of output at which the kernels here switch to
// non-temporal stores (ntMinBytes), for callers that choose between a row
// kernel and its non-temporal variant (SwiGLUNT) by the size of all the
// rows they write.
const NTMinBytes = ntMinBytes

// SwiGLUNT is SwiGLU with non-temporal stores where the SIMD level has
// them (AVX-512) and dst starts on a 64-byte boundary, for results too
// large to stay in cache: the stores skip reading dst's lines first and
// leave the cache to the operands. The results are SwiGLU's, bit for bit. dst may be x or g (in place), not a
// shifted view of either.
func SwiGLUNT(dst, x, g []float32) {
	n := min(len(dst), len(x), len(g))
	swigluNT(dst[:n], x[:n], g[:n])
}
