//go:build amd64 && !purego

package vec

import "unsafe"

// swigluAVX512 is in swiglu_amd64.s (see asmgen/swiglu.go).
//
//go:noescape
func swigluAVX512(dst, x, gate *float32, n int)

// swigluNTAVX512 is swigluAVX512 with non-temporal stores (dst 64-byte
// aligned).
//
//go:noescape
func swigluNTAVX512(dst, x, gate *float32, n int)

// swigluStep is swigluAVX512's step in elements.
const swigluStep = 64

func swiglu(dst, x, g []float32) {
	n := 0
	if useAVX512 {
		if n = len(x) &^ (swigluStep - 1); n > 0 {
			swigluAVX512(p(dst), p(x), p(g), n)
		}
	}
	swigluChunks(dst[n:], x[n:], g[n:])
}

// swigluNT runs swigluNTAVX512 where dst is 64-byte aligned, over the
// same whole steps as swiglu (the tail's SiLU can round differently from
// the kernel's, so the split must not move); swiglu otherwise.
func swigluNT(dst, x, g []float32) {
	n := len(x) &^ (swigluStep - 1)
	if !useAVX512 || n == 0 || uintptr(unsafe.Pointer(unsafe.SliceData(dst)))%64 != 0 {
		swiglu(dst, x, g)
		return
	}
	swigluNTAVX512(p(dst), p(x), p(g), n)
	swigluChunks(dst[n:], x[n:], g[n:])
}
