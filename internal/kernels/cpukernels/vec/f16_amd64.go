//go:build amd64 && !purego

package vec

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// useF16C selects the hardware conversions; set once at program start.
var useF16C = useAVX2 && cpu.X86.HasF16C

//go:noescape
func f32ToF16F16C(dst *uint16, src *float32, n int)

//go:noescape
func f16ToF32F16C(dst *float32, src *uint16, n int)

//go:noescape
func f32ToF16AVX512(dst *uint16, src *float32, n int)

//go:noescape
func f16ToF32AVX512(dst *float32, src *uint16, n int)

func f32ToF16(dst []uint16, src []float32) int {
	n := min(len(dst), len(src))
	switch {
	case useAVX512 && n >= 32:
		n &^= 31
		f32ToF16AVX512(unsafe.SliceData(dst), unsafe.SliceData(src), n)
	case useF16C:
		n &^= 7
		if n > 0 {
			f32ToF16F16C(unsafe.SliceData(dst), unsafe.SliceData(src), n)
		}
	default:
		return 0
	}
	return n
}

func f16ToF32(dst []float32, src []uint16) int {
	n := min(len(dst), len(src))
	switch {
	case useAVX512 && n >= 32:
		n &^= 31
		f16ToF32AVX512(unsafe.SliceData(dst), unsafe.SliceData(src), n)
	case useF16C:
		n &^= 7
		if n > 0 {
			f16ToF32F16C(unsafe.SliceData(dst), unsafe.SliceData(src), n)
		}
	default:
		return 0
	}
	return n
}

//go:noescape
func dequantQ8_0AVX2(dst *float32, src *byte, nb int)

func dequantQ8_0(dst []float32, src []byte) int {
	nb := min(len(dst)/32, len(src)/34)
	if !useF16C || nb == 0 {
		return 0
	}
	dequantQ8_0AVX2(unsafe.SliceData(dst), unsafe.SliceData(src), nb)
	return nb
}
