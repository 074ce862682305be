//go:build amd64 && !purego

package vec

// swigluAVX512 and swigluStreamAVX512 are in swiglu_amd64.s (see
// asmgen/swiglu.go).
//
//go:noescape
func swigluAVX512(dst, x, gate *float32, n int)

//go:noescape
func swigluStreamAVX512(dst, x, gate *float32, n int)

// swigluStep is swigluAVX512's step in elements.
const swigluStep = 64

func swiglu(dst, x, g []float32, stream bool) {
	n := 0
	if useAVX512 {
		if n = len(x) &^ (swigluStep - 1); n > 0 {
			if stream {
				swigluStreamAVX512(p(dst), p(x), p(g), n)
			} else {
				swigluAVX512(p(dst), p(x), p(g), n)
			}
		}
	}
	if n < len(x) {
		// not for nothing: swigluChunks clears a kilobyte of stack.
		swigluChunks(dst[n:], x[n:], g[n:])
	}
}
