//go:build amd64 && !purego

package vec

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// useQAVX2 is set once at program start: the quantized dot kernels need
// AVX2, FMA and F16C (half-precision scale conversion). Never written
// afterwards.
var useQAVX2 = useAVX2 && cpu.X86.HasF16C

// useQ512 selects the AVX-512 quantized dots (qdot512_amd64.s), which
// also need VBMI (byte permutes) and VNNI (VPDPBUSD). Set once at program
// start.
var useQ512 = useAVX512 && useQAVX2 && cpu.X86.HasAVX512VBMI && cpu.X86.HasAVX512VNNI

// The kernels compute dst[0..3] (x4) or dst[0] (x1) for weight rows at w,
// w+stride, ... against the q8_0 row y, over nb ≥ 1 blocks.

//go:noescape
func dotQ8x4AVX2(w *byte, stride int, y *byte, nb int, dst *float32)

//go:noescape
func dotQ8x1AVX2(w *byte, y *byte, nb int, dst *float32)

//go:noescape
func dotQ4x4AVX2(w *byte, stride int, y *byte, nb int, dst *float32)

//go:noescape
func dotQ4x1AVX2(w *byte, y *byte, nb int, dst *float32)

// The AVX-512 kernels take the same arguments for one row as for four
// (stride unused).

//go:noescape
func dotQ8x4AVX512(w *byte, stride int, y *byte, nb int, dst *float32)

//go:noescape
func dotQ8x1AVX512(w *byte, stride int, y *byte, nb int, dst *float32)

//go:noescape
func dotQ4x4AVX512(w *byte, stride int, y *byte, nb int, dst *float32)

//go:noescape
func dotQ4x1AVX512(w *byte, stride int, y *byte, nb int, dst *float32)

// qRows512 runs a four-row and a one-row kernel over len(dst) rows (the
// AVX-512 kernels' and the AVX2 q5_0, q4_1 and q5_1 ones).
func qRows512(x4, x1 func(*byte, int, *byte, int, *float32), dst []float32, w []byte, stride int, y []byte, nb int) {
	r := 0
	for ; r+4 <= len(dst); r += 4 {
		x4(pb(w[r*stride:]), stride, pb(y), nb, &dst[r])
	}
	for ; r < len(dst); r++ {
		x1(pb(w[r*stride:]), stride, pb(y), nb, &dst[r])
	}
}

//go:noescape
func dotQ5x4AVX512(w *byte, stride int, y *byte, nb int, dst *float32)

//go:noescape
func dotQ5x1AVX512(w *byte, stride int, y *byte, nb int, dst *float32)

//go:noescape
func dotQ41x4AVX512(w *byte, stride int, y *byte, nb int, dst *float32)

//go:noescape
func dotQ41x1AVX512(w *byte, stride int, y *byte, nb int, dst *float32)

//go:noescape
func dotQ51x4AVX512(w *byte, stride int, y *byte, nb int, dst *float32)

//go:noescape
func dotQ51x1AVX512(w *byte, stride int, y *byte, nb int, dst *float32)

// qKernels is a quantized type's four-row and one-row dots at AVX-512
// and at AVX2 (same arguments), and its portable Go rows.
type qKernels struct {
	x4512, x1512, x4avx2, x1avx2 func(*byte, int, *byte, int, *float32)
	rowsGo                       func(dst []float32, w []byte, stride int, y []byte, nb int)
}

// rows runs the best of k's kernels the level in use allows.
func (k *qKernels) rows(dst []float32, w []byte, stride int, y []byte, nb int) {
	switch {
	case useQ512:
		qRows512(k.x4512, k.x1512, dst, w, stride, y, nb)
	case useQAVX2:
		qRows512(k.x4avx2, k.x1avx2, dst, w, stride, y, nb)
	default:
		k.rowsGo(dst, w, stride, y, nb)
	}
}

var (
	q4_1Kernels = qKernels{dotQ41x4AVX512, dotQ41x1AVX512, dotQ41x4AVX2, dotQ41x1AVX2, dotQ4_1RowsGo}
	q5_1Kernels = qKernels{dotQ51x4AVX512, dotQ51x1AVX512, dotQ51x4AVX2, dotQ51x1AVX2, dotQ5_1RowsGo}
	q5_0Kernels = qKernels{dotQ5x4AVX512, dotQ5x1AVX512, dotQ5x4AVX2, dotQ5x1AVX2, dotQ5_0RowsGo}
)

func dotQ4_1Rows(dst []float32, w []byte, stride int, y []byte, nb int) {
	q4_1Kernels.rows(dst, w, stride, y, nb)
}

func dotQ5_1Rows(dst []float32, w []byte, stride int, y []byte, nb int) {
	q5_1Kernels.rows(dst, w, stride, y, nb)
}

func dotQ5_0Rows(dst []float32, w []byte, stride int, y []byte, nb int) {
	q5_0Kernels.rows(dst, w, stride, y, nb)
}

// QDotsAVX512 reports whether the AVX-512 VNNI row dots of q8_0, q4_0,
// q5_0, q4_1 and q5_1 run at the level in use (else they run AVX2 where
// QDotsSIMD says so, or portable Go, slower than dequantizing the weights
// into the f32 GEMM).
func QDotsAVX512() bool { return useQ512 }

// QDotsSIMD reports whether the row dots of q8_0, q4_0, q5_0, q4_1 and
// q5_1 run in assembly (AVX-512 or AVX2) at the level in use.
func QDotsSIMD() bool { return useQAVX2 }

func pb(b []byte) *byte { return unsafe.SliceData(b) }

func dotQ8_0Rows(dst []float32, w []byte, stride int, y []byte, nb int) {
	if useQ512 {
		qRows512(dotQ8x4AVX512, dotQ8x1AVX512, dst, w, stride, y, nb)
		return
	}
	if !useQAVX2 {
		dotQ8_0RowsGo(dst, w, stride, y, nb)
		return
	}
	r := 0
	for ; r+4 <= len(dst); r += 4 {
		dotQ8x4AVX2(pb(w[r*stride:]), stride, pb(y), nb, &dst[r])
	}
	for ; r < len(dst); r++ {
		dotQ8x1AVX2(pb(w[r*stride:]), pb(y), nb, &dst[r])
	}
}

func dotQ4_0Rows(dst []float32, w []byte, stride int, y []byte, nb int) {
	if useQ512 {
		qRows512(dotQ4x4AVX512, dotQ4x1AVX512, dst, w, stride, y, nb)
		return
	}
	if !useQAVX2 {
		dotQ4_0RowsGo(dst, w, stride, y, nb)
		return
	}
	r := 0
	for ; r+4 <= len(dst); r += 4 {
		dotQ4x4AVX2(pb(w[r*stride:]), stride, pb(y), nb, &dst[r])
	}
	for ; r < len(dst); r++ {
		dotQ4x1AVX2(pb(w[r*stride:]), pb(y), nb, &dst[r])
	}
}
