package vec

import (
	"fmt"
	"math"
)

// Quantized block layouts, as ggml stores them: a q8_0 block is an
// IEEE half-precision scale d followed by 32 signed bytes q (value d·q);
// a q4_0 block is a half scale followed by 16 bytes whose low nibbles are
// elements 0..15 and high nibbles elements 16..31 (value d·(nibble-8)).
const (
	// QK is the number of elements in a q8_0 or q4_0 block.
	QK = 32
	// Q8_0BlockSize is the size in bytes of a q8_0 block.
	Q8_0BlockSize = 2 + QK
	// Q4_0BlockSize is the size in bytes of a q4_0 block.
	Q4_0BlockSize = 2 + QK/2
)

// DotQ8_0Rows sets dst[r] to the dot product of the q8_0 row y (nb
// blocks) with the q8_0 weight row that starts at w[r*stride] (nb blocks),
// for every r < len(dst). Each block pair contributes d_w·d_y·Σ q_w·q_y,
// the integer sum exact and the scaled sums accumulated in float32, as
// ggml's vec_dot_q8_0_q8_0 does. Quants of -128 (which ggml's quantizer
// never writes) may give a wrong block sum on the assembly path.
func DotQ8_0Rows(dst []float32, w []byte, stride int, y []byte, nb int) error {
	if err := checkQRows(len(dst), len(w), stride, len(y), nb, Q8_0BlockSize); err != nil {
		return err
	}
	dotQ8_0Rows(dst, w, stride, y, nb)
	return nil
}

// DotQ4_0Rows is DotQ8_0Rows for q4_0 weight rows (ggml's
// vec_dot_q4_0_q8_0): y is still a q8_0 row.
func DotQ4_0Rows(dst []float32, w []byte, stride int, y []byte, nb int) error {
	if err := checkQRows(len(dst), len(w), stride, len(y), nb, Q4_0BlockSize); err != nil {
		return err
	}
	dotQ4_0Rows(dst, w, stride, y, nb)
	return nil
}

func checkQRows(rows, lw, stride, ly, nb, bs int) error {
	if rows == 0 {
		return nil
	}
	return checkQRowsY(rows, lw, stride, ly, nb, bs, Q8_0BlockSize)
}

// checkQRowsY checks rows weight rows of nb blocks of bs bytes, stride
// apart in lw bytes, against an activation row of ly bytes in blocks of
// ybs bytes.
func checkQRowsY(rows, lw, stride, ly, nb, bs, ybs int) error {
	switch {
	case nb <= 0 || stride < nb*bs || rows < 0:
		return fmt.Errorf("%w: %d rows of %d blocks with stride %d", ErrShape, rows, nb, stride)
	case ly < nb*ybs:
		return fmt.Errorf("%w: activation row of %d bytes for %d blocks", ErrShape, ly, nb)
	case (rows-1) > (lw-nb*bs)/stride || lw < nb*bs:
		return fmt.Errorf("%w: %d weight rows of stride %d in %d bytes", ErrShape, rows, stride, lw)
	}
	return nil
}

// halfToFloat converts IEEE half-precision bits to float32 exactly.
func halfToFloat(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	man := uint32(h) & 0x3ff
	switch {
	case exp == 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | man<<13)
	case exp != 0:
		return math.Float32frombits(sign | (exp+112)<<23 | man<<13)
	case man == 0:
		return math.Float32frombits(sign)
	}
	f := float32(man) * (1.0 / (1 << 24)) // subnormal: man·2^-24, exact
	if sign != 0 {
		f = -f
	}
	return f
}

func blockScale(b []byte) float32 { return halfToFloat(uint16(b[0]) | uint16(b[1])<<8) }

// dotQ8_0Go is the portable q8_0·q8_0 dot of nb blocks.
func dotQ8_0Go(w, y []byte, nb int) float32 {
	var sum float32
	for i := 0; i < nb; i++ {
		bw := w[i*Q8_0BlockSize : (i+1)*Q8_0BlockSize]
		by := y[i*Q8_0BlockSize : (i+1)*Q8_0BlockSize]
		var s int32
		for j := 2; j < Q8_0BlockSize; j++ {
			s += int32(int8(bw[j])) * int32(int8(by[j]))
		}
		sum += float32(s) * (blockScale(bw) * blockScale(by))
	}
	return sum
}

// dotQ4_0Go is the portable q4_0·q8_0 dot of nb blocks.
func dotQ4_0Go(w, y []byte, nb int) float32 {
	var sum float32
	for i := 0; i < nb; i++ {
		bw := w[i*Q4_0BlockSize : (i+1)*Q4_0BlockSize]
		by := y[i*Q8_0BlockSize : (i+1)*Q8_0BlockSize]
		var s int32
		for j := 0; j < QK/2; j++ {
			s += (int32(bw[2+j]&0xf) - 8) * int32(int8(by[2+j]))
			s += (int32(bw[2+j]>>4) - 8) * int32(int8(by[2+j+QK/2]))
		}
		sum += float32(s) * (blockScale(bw) * blockScale(by))
	}
	return sum
}

func dotQ8_0RowsGo(dst []float32, w []byte, stride int, y []byte, nb int) {
	for r := range dst {
		dst[r] = dotQ8_0Go(w[r*stride:], y, nb)
	}
}

func dotQ4_0RowsGo(dst []float32, w []byte, stride int, y []byte, nb int) {
	for r := range dst {
		dst[r] = dotQ4_0Go(w[r*stride:], y, nb)
	}
}

// rowsDotN runs the many-row kernel rows (the build's) after the bounds
// checks of its block sizes.
func rowsDotN(wbs, ybs int, rows func([]float32, []byte, int, []byte, int), dst []float32, w []byte, stride int, y []byte, nb int) error {
	if err := checkRows(len(dst), len(w), stride, len(y), nb, wbs, ybs); err != nil {
		return err
	}
	rows(dst, w, stride, y, nb)
	return nil
}

// rowsGo runs the one-row dot one over len(dst) weight rows of nb blocks
// of wbs bytes.
func rowsGo(one func(w, y []byte, nb int) float32, wbs int, dst []float32, w []byte, stride int, y []byte, nb int) {
	for r := range dst {
		dst[r] = one(w[r*stride:r*stride+nb*wbs], y, nb)
	}
}

func dotQ5_0RowsGo(dst []float32, w []byte, stride int, y []byte, nb int) {
	rowsGo(dotQ5_0, Q5_0BlockSize, dst, w, stride, y, nb)
}

func dotQ4_1RowsGo(dst []float32, w []byte, stride int, y []byte, nb int) {
	rowsGo(dotQ4_1, Q4_1BlockSize, dst, w, stride, y, nb)
}

func dotQ5_1RowsGo(dst []float32, w []byte, stride int, y []byte, nb int) {
	rowsGo(dotQ5_1, Q5_1BlockSize, dst, w, stride, y, nb)
}
