package vec

import (
	"encoding/binary"
	"fmt"
	"math"
)

// DotF16Rows sets dst[r] to the dot product of the f16 weight row that
// starts at byte w[r*stride] (k IEEE half-precision values, little
// endian) with the float32 row x[:k], for every r < len(dst). It is the
// decode-shaped (one activation row) product of ggml's vec_dot_f16: the
// caller rounds x to half precision first, so every product of a weight
// and an activation is exact in float32; the sums are float32, in an
// order of the kernel's own.
func DotF16Rows(dst []float32, w []byte, stride int, x []float32, k int) error {
	if len(dst) == 0 {
		return nil
	}
	if err := checkHalfRows("f16", dst, w, stride, x, k); err != nil {
		return err
	}
	dotF16Rows(dst, w, stride, x[:k], k)
	return nil
}

// DotBF16Rows is DotF16Rows for bfloat16 weight rows (ggml's
// vec_dot_bf16): the caller rounds x to bfloat16 first, so every product
// is exact in float32.
func DotBF16Rows(dst []float32, w []byte, stride int, x []float32, k int) error {
	if len(dst) == 0 {
		return nil
	}
	if err := checkHalfRows("bf16", dst, w, stride, x, k); err != nil {
		return err
	}
	dotBF16Rows(dst, w, stride, x[:k], k)
	return nil
}

// checkHalfRows checks the operands of a 16-bit row dot (DotF16Rows,
// DotBF16Rows) with at least one row.
func checkHalfRows(typ string, dst []float32, w []byte, stride int, x []float32, k int) error {
	switch {
	case k <= 0 || stride < 2*k || len(x) < k:
		return fmt.Errorf("%w: %s rows of %d elements with stride %d and an activation row of %d", ErrShape, typ, k, stride, len(x))
	case len(w) < 2*k || (len(dst)-1) > (len(w)-2*k)/stride:
		return fmt.Errorf("%w: %d %s weight rows of stride %d in %d bytes", ErrShape, len(dst), typ, stride, len(w))
	}
	return nil
}

// f16StreamRows is the fewest rows for which an AVX-512 dotF16Rows (or
// dotBF16Rows) call takes them one at a time: so many rows are a decode product's share of
// its weights, streamed from memory, and one row after the other they are
// one sequential stream that the hardware prefetcher follows (rows are
// contiguous), faster than four rows a call with the next four prefetched
// (RATIONALE.md, "Decode GEMV: f32 rows four a call, f16 rows one").
// Shorter calls (the chunks of a product with several activation rows,
// read again from the cache for each) keep four rows a call, which share
// the activation loads.
const f16StreamRows = 64

// dotF16Go is the portable dot of the f16 row w with x (len(x) elements).
func dotF16Go(w []byte, x []float32) float32 {
	var s float32
	for i, v := range x {
		s += halfToFloat(binary.LittleEndian.Uint16(w[2*i:])) * v
	}
	return s
}

func dotF16RowsGo(dst []float32, w []byte, stride int, x []float32, k int) {
	for r := range dst {
		dst[r] = dotF16Go(w[r*stride:r*stride+2*k], x)
	}
}

// dotBF16Go is the portable dot of the bfloat16 row w with x (len(x)
// elements).
func dotBF16Go(w []byte, x []float32) float32 {
	var s float32
	for i, v := range x {
		s += math.Float32frombits(uint32(binary.LittleEndian.Uint16(w[2*i:]))<<16) * v
	}
	return s
}

func dotBF16RowsGo(dst []float32, w []byte, stride int, x []float32, k int) {
	for r := range dst {
		dst[r] = dotBF16Go(w[r*stride:r*stride+2*k], x)
	}
}
