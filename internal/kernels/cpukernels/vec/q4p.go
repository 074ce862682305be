package vec

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Q4PackedBytes is the size of a q8_0 activation row of nb blocks packed
// by PackQ8_0ForQ4: 256 bytes per group of four blocks (the last group
// padded with zero blocks).
func Q4PackedBytes(nb int) int { return (nb + 3) / 4 * 256 }

// PackQ8_0ForQ4 lays out the q8_0 activation row y of nb blocks for
// DotQ4_0RowsPacked in dst (Q4PackedBytes(nb) bytes). Each group of four
// blocks b = 0..3 becomes 256 bytes: at 16b the block's quants 0..15, at
// 64+16b its quants 16..31 (the partners of a q4_0 block's low and high
// nibbles), at 128 sixteen int32 lane offsets (lane 4b+m: -8 times the
// sum of quants 4m..4m+3 and 16+4m..16+4m+3, which turns the nibbles'
// q+8 back into q), at 192 sixteen float32 scales (lanes 4b..4b+3: block
// b's d). Missing blocks of the last group are zeros. The packing is
// exact: a decode product packs its one activation row once and every
// weight row's dot reads it without permuting it.
func PackQ8_0ForQ4(dst, y []byte, nb int) error {
	switch {
	case nb <= 0:
		return fmt.Errorf("%w: %d blocks", ErrShape, nb)
	case len(y) < nb*Q8_0BlockSize:
		return fmt.Errorf("%w: activation row of %d bytes for %d blocks", ErrShape, len(y), nb)
	case len(dst) < Q4PackedBytes(nb):
		return fmt.Errorf("%w: packed row of %d bytes for %d blocks (want %d)", ErrShape, len(dst), nb, Q4PackedBytes(nb))
	}
	dst = dst[:Q4PackedBytes(nb)]
	clear(dst[(nb/4)*256:])
	for i := range nb {
		g := dst[(i/4)*256 : (i/4)*256+256]
		b := i % 4
		by := y[i*Q8_0BlockSize : (i+1)*Q8_0BlockSize]
		copy(g[16*b:16*b+16], by[2:18])
		copy(g[64+16*b:64+16*b+16], by[18:34])
		d := math.Float32bits(blockScale(by))
		for m := range 4 {
			var s int32
			for j := range 4 {
				s += int32(int8(by[2+4*m+j])) + int32(int8(by[18+4*m+j]))
			}
			binary.LittleEndian.PutUint32(g[128+4*(4*b+m):], uint32(-8*s))
			binary.LittleEndian.PutUint32(g[192+4*(4*b+m):], d)
		}
	}
	return nil
}

// DotQ4_0RowsPacked is DotQ4_0Rows with the activation row packed by
// PackQ8_0ForQ4: dst[r] = dot of weight row r (q4_0, nb blocks, stride
// bytes apart in w) with it. The AVX-512 kernels (Q4PackedDots) sum each
// block's 32 products exactly in four 32-bit lanes; only the order of the
// float additions differs from DotQ4_0Rows.
func DotQ4_0RowsPacked(dst []float32, w []byte, stride int, yp []byte, nb int) error {
	if len(dst) == 0 {
		return nil
	}
	if err := checkQRowsY(len(dst), len(w), stride, len(yp), nb, Q4_0BlockSize, 0); err != nil {
		return err
	}
	if len(yp) < Q4PackedBytes(nb) {
		return fmt.Errorf("%w: packed activation row of %d bytes for %d blocks", ErrShape, len(yp), nb)
	}
	dotQ4_0RowsPacked(dst, w, stride, yp, nb)
	return nil
}

// dotQ4PGo is one packed dot in Go: per block the exact integer sum, then
// d_w·d_y in float32, as dotQ4_0Go.
func dotQ4PGo(w, yp []byte, nb int) float32 {
	var sum float32
	for i := range nb {
		bw := w[i*Q4_0BlockSize : (i+1)*Q4_0BlockSize]
		g := yp[(i/4)*256 : (i/4)*256+256]
		b := i % 4
		var s int32
		for j := range QK / 2 {
			s += int32(bw[2+j]&0xf)*int32(int8(g[16*b+j])) + int32(bw[2+j]>>4)*int32(int8(g[64+16*b+j]))
		}
		for m := range 4 {
			s += int32(binary.LittleEndian.Uint32(g[128+4*(4*b+m):]))
		}
		dy := math.Float32frombits(binary.LittleEndian.Uint32(g[192+16*b:]))
		sum += float32(s) * (blockScale(bw) * dy)
	}
	return sum
}

func dotQ4_0RowsPackedGo(dst []float32, w []byte, stride int, yp []byte, nb int) {
	for r := range dst {
		dst[r] = dotQ4PGo(w[r*stride:], yp, nb)
	}
}
