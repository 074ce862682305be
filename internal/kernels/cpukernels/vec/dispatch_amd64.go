//go:build amd64 && !purego

package vec

import "unsafe"

// useAVX2 is set once at program start: the CPU and OS support AVX2 and
// FMA, and GOGML_CPU does not cap the level below avx2 (level_amd64.go).
// It is never written afterwards.
var useAVX2 = cpuLevel >= levelAVX2

// Implementation names the kernels in use: "avx512+avx2+fma" or
// "avx2+fma" (assembly, AVX-512 where written), or "go".
func Implementation() string {
	if useAVX512 {
		return "avx512+avx2+fma"
	}
	if useAVX2 {
		return "avx2+fma"
	}
	return "go"
}

//go:noescape
func addAVX2(dst, a, b *float32, n int)

//go:noescape
func addNTAVX2(dst, a, b *float32, n int)

//go:noescape
func subAVX2(dst, a, b *float32, n int)

//go:noescape
func subNTAVX2(dst, a, b *float32, n int)

//go:noescape
func mulAVX2(dst, a, b *float32, n int)

//go:noescape
func mulNTAVX2(dst, a, b *float32, n int)

//go:noescape
func divAVX2(dst, a, b *float32, n int)

//go:noescape
func divNTAVX2(dst, a, b *float32, n int)

//go:noescape
func scaleAVX2(dst, a *float32, n int, s float32)

//go:noescape
func scaleNTAVX2(dst, a *float32, n int, s float32)

//go:noescape
func addScalarAVX2(dst, a *float32, n int, s float32)

//go:noescape
func addScalarNTAVX2(dst, a *float32, n int, s float32)

//go:noescape
func scaleAddAVX2(dst, a *float32, n int, s float32)

//go:noescape
func dotAVX2(a, b *float32, n int) float32

//go:noescape
func sumAVX2(a *float32, n int) float64

//go:noescape
func sumSqAVX2(a *float32, n int) float64

//go:noescape
func maxAVX2(a *float32, n int) float32

//go:noescape
func expSubAVX2(dst, a *float32, n int, s, m float32, pf *float32) float64

//go:noescape
func expSub1AVX2(dst, a *float32, n int, s, m float32, pf *float32) float64

//go:noescape
func scaleMaskMaxAVX2(dst, x, mask *float32, n int, s, t float32) float32

//go:noescape
func siluAVX2(dst, a *float32, n int)

// p returns the address of s's first element; s must not be empty.
func p(s []float32) *float32 { return unsafe.SliceData(s) }

// ntHead returns -1 when dst is written with ordinary stores, else the
// number of leading elements to handle before dst is 32-byte aligned for
// the non-temporal kernels.
func ntHead(dst []float32) int {
	if !useAVX2 || len(dst)*4 < ntMinBytes {
		return -1
	}
	addr := uintptr(unsafe.Pointer(unsafe.SliceData(dst)))
	if addr%4 != 0 {
		return -1
	}
	return int((32-addr%32)%32) / 4
}

// The wrappers below run the assembly on the largest multiple of 8 and the
// Go kernel on the rest. Slices arrive already cut to one length.

func add(dst, a, b []float32) {
	if h := ntHead(dst); h >= 0 {
		addGo(dst[:h], a[:h], b[:h])
		dst, a, b = dst[h:], a[h:], b[h:]
		n8 := len(a) &^ 7
		addNTAVX2(p(dst), p(a), p(b), n8)
		addGo(dst[n8:], a[n8:], b[n8:])
		return
	}
	n8 := len(a) &^ 7
	if useAVX2 && n8 > 0 {
		addAVX2(p(dst), p(a), p(b), n8)
	} else {
		n8 = 0
	}
	addGo(dst[n8:], a[n8:], b[n8:])
}

func sub(dst, a, b []float32) {
	if h := ntHead(dst); h >= 0 {
		subGo(dst[:h], a[:h], b[:h])
		dst, a, b = dst[h:], a[h:], b[h:]
		n8 := len(a) &^ 7
		subNTAVX2(p(dst), p(a), p(b), n8)
		subGo(dst[n8:], a[n8:], b[n8:])
		return
	}
	n8 := len(a) &^ 7
	if useAVX2 && n8 > 0 {
		subAVX2(p(dst), p(a), p(b), n8)
	} else {
		n8 = 0
	}
	subGo(dst[n8:], a[n8:], b[n8:])
}

func mul(dst, a, b []float32) {
	if h := ntHead(dst); h >= 0 {
		mulGo(dst[:h], a[:h], b[:h])
		dst, a, b = dst[h:], a[h:], b[h:]
		n8 := len(a) &^ 7
		mulNTAVX2(p(dst), p(a), p(b), n8)
		mulGo(dst[n8:], a[n8:], b[n8:])
		return
	}
	n8 := len(a) &^ 7
	if useAVX2 && n8 > 0 {
		mulAVX2(p(dst), p(a), p(b), n8)
	} else {
		n8 = 0
	}
	mulGo(dst[n8:], a[n8:], b[n8:])
}

func div(dst, a, b []float32) {
	if h := ntHead(dst); h >= 0 {
		divGo(dst[:h], a[:h], b[:h])
		dst, a, b = dst[h:], a[h:], b[h:]
		n8 := len(a) &^ 7
		divNTAVX2(p(dst), p(a), p(b), n8)
		divGo(dst[n8:], a[n8:], b[n8:])
		return
	}
	n8 := len(a) &^ 7
	if useAVX2 && n8 > 0 {
		divAVX2(p(dst), p(a), p(b), n8)
	} else {
		n8 = 0
	}
	divGo(dst[n8:], a[n8:], b[n8:])
}

func scale(dst, a []float32, s float32) {
	if h := ntHead(dst); h >= 0 {
		scaleGo(dst[:h], a[:h], s)
		dst, a = dst[h:], a[h:]
		n8 := len(a) &^ 7
		scaleNTAVX2(p(dst), p(a), n8, s)
		scaleGo(dst[n8:], a[n8:], s)
		return
	}
	n8 := len(a) &^ 7
	if useAVX2 && n8 > 0 {
		scaleAVX2(p(dst), p(a), n8, s)
	} else {
		n8 = 0
	}
	scaleGo(dst[n8:], a[n8:], s)
}

func addScalar(dst, a []float32, s float32) {
	if h := ntHead(dst); h >= 0 {
		addScalarGo(dst[:h], a[:h], s)
		dst, a = dst[h:], a[h:]
		n8 := len(a) &^ 7
		addScalarNTAVX2(p(dst), p(a), n8, s)
		addScalarGo(dst[n8:], a[n8:], s)
		return
	}
	n8 := len(a) &^ 7
	if useAVX2 && n8 > 0 {
		addScalarAVX2(p(dst), p(a), n8, s)
	} else {
		n8 = 0
	}
	addScalarGo(dst[n8:], a[n8:], s)
}

func scaleAdd(dst, a []float32, s float32) {
	n8 := len(a) &^ 7
	if useAVX2 && n8 > 0 {
		scaleAddAVX2(p(dst), p(a), n8, s)
	} else {
		n8 = 0
	}
	scaleAddGo(dst[n8:], a[n8:], s)
}

func dot(a, b []float32) float32 {
	n8 := len(a) &^ 7
	if !useAVX2 || n8 == 0 {
		return dotGo(a, b)
	}
	return dotAVX2(p(a), p(b), n8) + dotGo(a[n8:], b[n8:])
}

func sum64(a []float32) float64 {
	n8 := len(a) &^ 7
	if !useAVX2 || n8 == 0 {
		return sum64Go(a)
	}
	return sumAVX2(p(a), n8) + sum64Go(a[n8:])
}

func sumSq(a []float32) float64 {
	n8 := len(a) &^ 7
	if !useAVX2 || n8 == 0 {
		return sumSqGo(a)
	}
	return sumSqAVX2(p(a), n8) + sumSqGo(a[n8:])
}

func max32(a []float32) float32 {
	n8 := len(a) &^ 7
	if !useAVX2 || n8 == 0 {
		return max32Go(a)
	}
	m := maxAVX2(p(a), n8)
	for _, x := range a[n8:] {
		if x > m {
			m = x
		}
	}
	return m
}

func expScaleSub(dst, a []float32, s, m float32) float64 {
	return expScaleSubPf(dst, a, s, m, a)
}

// expScaleSubPf is expScaleSub that also prefetches pf[:len(a)] (pf must
// be at least as long as a).
func expScaleSubPf(dst, a []float32, s, m float32, pf []float32) float64 {
	n8 := len(a) &^ 7
	if !useAVX2 || n8 == 0 {
		return expScaleSubGo(dst, a, s, m)
	}
	var sum float64
	if s == 1 {
		sum = expSub1AVX2(p(dst), p(a), n8, s, m, p(pf[:n8]))
	} else {
		sum = expSubAVX2(p(dst), p(a), n8, s, m, p(pf[:n8]))
	}
	return sum + expScaleSubGo(dst[n8:], a[n8:], s, m)
}

// scaleMaskMax sets dst = s*x + t*mask and returns its largest element
// (slices of one length, not empty).
func scaleMaskMax(dst, x, mask []float32, s, t float32) float32 {
	n8 := len(x) &^ 7
	if !useAVX2 || n8 == 0 {
		return scaleMaskMaxGo(dst, x, mask, s, t)
	}
	m := scaleMaskMaxAVX2(p(dst), p(x), p(mask), n8, s, t)
	if n8 < len(x) {
		if mt := scaleMaskMaxGo(dst[n8:], x[n8:], mask[n8:], s, t); mt > m {
			m = mt
		}
	}
	return m
}

// scaleNT is scale with non-temporal stores for any length (see ntHead).
func scaleNT(dst, a []float32, s float32) {
	if !useAVX2 || uintptr(unsafe.Pointer(unsafe.SliceData(dst)))%4 != 0 {
		scale(dst, a, s)
		return
	}
	h := min(len(dst), int((32-uintptr(unsafe.Pointer(unsafe.SliceData(dst)))%32)%32)/4)
	scaleGo(dst[:h], a[:h], s)
	dst, a = dst[h:], a[h:]
	n8 := len(a) &^ 7
	if n8 > 0 {
		scaleNTAVX2(p(dst), p(a), n8, s)
	}
	scaleGo(dst[n8:], a[n8:], s)
}

func silu(dst, a []float32) {
	n8 := len(a) &^ 7
	if useAVX2 && n8 > 0 {
		siluAVX2(p(dst), p(a), n8)
	} else {
		n8 = 0
	}
	siluGo(dst[n8:], a[n8:])
}

// Micro-tile of the assembly product: gemmMR rows of a by gemmNR rows of b.
const (
	gemmMR = 6
	gemmNR = 16
)

//go:noescape
func fmaLoop(n int)

// fmaChunk runs n iterations of the peak loop and returns its flops.
// It is the loop of the level in use (GOGML_CPU).
func fmaChunk(n int) float64 { return fmaChunkLevel(cpuLevel, n) }
