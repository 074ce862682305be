package vec

import (
	"encoding/binary"
	"fmt"
	"math"
)

// q8_0 weights repacked for decode. A matrix of q8_0 rows whose length is
// a multiple of Q8RBlocks blocks is stored with every four consecutive
// rows (a group) rearranged chunk by chunk: chunk c of a group holds
// blocks 8c..8c+7 of its four rows in Q8RChunkBytes (1088) bytes,
//
//   - at 256p+64r the 64 quants of row r's blocks 8c+2p and 8c+2p+1 (p <
//     4, r < 4), the two blocks' quants one after the other;
//   - at 1024+16p+4r the two half-precision scales of the same blocks.
//
// A group keeps its size (4 rows of 34-byte blocks), so the matrix does;
// the rows past the last full group stay as they were. The decode kernel
// (DotQ8_0RowsRepacked) then reads every weight as one sequential stream
// of whole, 64-byte-aligned (when the matrix is) cache lines, with no
// permute of the weights: each row's block pair is one load, and the
// scales of a whole chunk are widened and multiplied by the activation's
// at once. Its arithmetic is the plain kernel's (DotQ8_0Rows, AVX-512)
// on the same values in the same order, so a repacked product has the
// plain one's bits.
const (
	// Q8RBlocks is the number of blocks of a row in one repacked chunk.
	Q8RBlocks = 8
	// Q8RChunkBytes is the size of one chunk of a group of four rows.
	Q8RChunkBytes = 4 * Q8RBlocks * Q8_0BlockSize
	// q8rActBytes is the size of a chunk of an activation row packed by
	// PackQ8_0ForQ8R.
	q8rActBytes = 640
)

// RepackUnitQ8_0 is the interleaving unit, in bytes of one row, of q8_0
// rows of nb blocks (Q8RBlocks blocks), or 0 when such rows are not
// repacked (nb not a multiple of Q8RBlocks).
func RepackUnitQ8_0(nb int) int {
	if nb <= 0 || nb%Q8RBlocks != 0 {
		return 0
	}
	return Q8RBlocks * Q8_0BlockSize
}

// Interleave4Q8_0 writes the rows×rowSize bytes of q8_0 rows in src
// (rowSize a multiple of RepackUnitQ8_0's unit) to dst in the repacked
// layout above; rows past the last full group are copied as they are.
// dst and src must not overlap.
func Interleave4Q8_0(dst, src []byte, rowSize, rows int) error {
	return interleaveQ8_0(dst, src, rowSize, rows, false, true)
}

// Deinterleave4Q8_0 undoes Interleave4Q8_0: dst gets the plain rows of
// src.
func Deinterleave4Q8_0(dst, src []byte, rowSize, rows int) error {
	return interleaveQ8_0(dst, src, rowSize, rows, true, true)
}

// interleaveQ8_0 is Interleave4Q8_0 (undo: Deinterleave4Q8_0), its
// whole groups moved in assembly where that runs and asm is set.
func interleaveQ8_0(dst, src []byte, rowSize, rows int, undo, asm bool) error {
	unit := Q8RBlocks * Q8_0BlockSize
	switch {
	case rowSize <= 0 || rowSize%unit != 0 || rows < 0:
		return fmt.Errorf("%w: q8_0 rows of %d bytes in chunks of %d", ErrShape, rowSize, unit)
	case len(src) < rows*rowSize || len(dst) < rows*rowSize:
		return fmt.Errorf("%w: %d rows of %d bytes in %d and %d bytes", ErrShape, rows, rowSize, len(dst), len(src))
	}
	chunks := rowSize / unit
	full := rows / 4 * 4
	g0 := 0
	if asm && moveQ8Groups(dst, src, rowSize, full/4, undo) {
		g0 = full
	}
	for g := g0; g < full; g += 4 {
		base := g * rowSize
		for c := range chunks {
			chOff := base + c*Q8RChunkBytes
			for r := range 4 {
				rowOff := base + r*rowSize + c*unit
				// Fixed-size arrays, so that the moves have constant
				// sizes and no bounds checks: the GEMM paths undo this
				// per panel of rows they read.
				var ch *[Q8RChunkBytes]byte
				var row *[Q8RBlocks * Q8_0BlockSize]byte
				if undo {
					ch, row = (*[Q8RChunkBytes]byte)(src[chOff:]), (*[Q8RBlocks * Q8_0BlockSize]byte)(dst[rowOff:])
				} else {
					ch, row = (*[Q8RChunkBytes]byte)(dst[chOff:]), (*[Q8RBlocks * Q8_0BlockSize]byte)(src[rowOff:])
				}
				q8rMoveRow(ch, row, r, undo)
			}
		}
	}
	copy(dst[full*rowSize:rows*rowSize], src[full*rowSize:rows*rowSize])
	return nil
}

// q8rMoveRow moves row r's eight blocks between a repacked chunk and the
// plain row: into the row with undo, else into the chunk.
func q8rMoveRow(ch *[Q8RChunkBytes]byte, row *[Q8RBlocks * Q8_0BlockSize]byte, r int, undo bool) {
	r &= 3
	le := binary.LittleEndian
	for b := range Q8RBlocks {
		p, h := b>>1, b&1
		blk := row[b*Q8_0BlockSize : (b+1)*Q8_0BlockSize]
		q := ch[256*p+64*r+32*h : 256*p+64*r+32*h+QK]
		d := ch[1024+16*p+4*r+2*h : 1024+16*p+4*r+2*h+2]
		if undo {
			le.PutUint16(blk, le.Uint16(d))
			for i := 0; i < QK; i += 8 {
				le.PutUint64(blk[2+i:], le.Uint64(q[i:]))
			}
		} else {
			le.PutUint16(d, le.Uint16(blk))
			for i := 0; i < QK; i += 8 {
				le.PutUint64(q[i:], le.Uint64(blk[2+i:]))
			}
		}
	}
}

// Q8RPackedBytes is the size of a q8_0 activation row of nb blocks (a
// multiple of Q8RBlocks) packed by PackQ8_0ForQ8R.
func Q8RPackedBytes(nb int) int { return nb / Q8RBlocks * q8rActBytes }

// PackQ8_0ForQ8R lays out the q8_0 activation row y of nb blocks (a
// multiple of Q8RBlocks) for DotQ8_0RowsRepacked in dst (Q8RPackedBytes
// bytes): each chunk of eight blocks becomes 640 bytes, for each block
// pair p < 4 at 128p the two blocks' 64 quants and at 128p+64 sixteen
// int32 lane offsets (lane 8h+m: -128 times the sum of quants 4m..4m+3 of
// block 2p+h, which turns the weights' q+128 back into q), and at 512 and
// 576 the blocks' scales as float32 in the order of a chunk's weight
// scales (lane 8j+2r+h: block 2(2i+j)+h's d, i = 0 at 512, 1 at 576). The
// packing is exact.
func PackQ8_0ForQ8R(dst, y []byte, nb int) error {
	switch {
	case nb <= 0 || nb%Q8RBlocks != 0:
		return fmt.Errorf("%w: %d blocks (want a multiple of %d)", ErrShape, nb, Q8RBlocks)
	case len(y) < nb*Q8_0BlockSize:
		return fmt.Errorf("%w: activation row of %d bytes for %d blocks", ErrShape, len(y), nb)
	case len(dst) < Q8RPackedBytes(nb):
		return fmt.Errorf("%w: packed row of %d bytes for %d blocks (want %d)", ErrShape, len(dst), nb, Q8RPackedBytes(nb))
	}
	for i := range nb {
		g := dst[(i/Q8RBlocks)*q8rActBytes : (i/Q8RBlocks+1)*q8rActBytes]
		b := i % Q8RBlocks
		p, h := b/2, b%2
		by := y[i*Q8_0BlockSize : (i+1)*Q8_0BlockSize]
		copy(g[128*p+32*h:128*p+32*h+QK], by[2:])
		for m := range 8 {
			var s int32
			for j := range 4 {
				s += int32(int8(by[2+4*m+j]))
			}
			binary.LittleEndian.PutUint32(g[128*p+64+4*(8*h+m):], uint32(-128*s))
		}
		d := math.Float32bits(blockScale(by))
		for r := range 4 {
			binary.LittleEndian.PutUint32(g[512+64*(p/2)+4*(8*(p%2)+2*r+h):], d)
		}
	}
	return nil
}

// DotQ8_0RowsRepacked is DotQ8_0Rows on rows repacked by Interleave4Q8_0
// (nb a multiple of Q8RBlocks), with the activation row both plain (y)
// and packed by PackQ8_0ForQ8R (yp): w starts at a group of four rows,
// dst's rows are full groups but for a last partial one, which is the
// matrix's plain tail. The bits are DotQ8_0Rows'.
func DotQ8_0RowsRepacked(dst []float32, w []byte, y, yp []byte, nb int) error {
	if len(dst) == 0 {
		return nil
	}
	rs := nb * Q8_0BlockSize
	switch {
	case RepackUnitQ8_0(nb) == 0:
		return fmt.Errorf("%w: repacked q8_0 rows of %d blocks", ErrShape, nb)
	case len(w) < len(dst)*rs:
		return fmt.Errorf("%w: %d repacked rows of %d blocks in %d bytes", ErrShape, len(dst), nb, len(w))
	case len(y) < rs || len(yp) < Q8RPackedBytes(nb):
		return fmt.Errorf("%w: activation rows of %d and %d bytes for %d blocks", ErrShape, len(y), len(yp), nb)
	}
	dotQ8_0RowsRepacked(dst, w, y, yp, nb)
	return nil
}

// dotQ8_0RowsRepackedGo runs DotQ8_0Rows on the plain copy of each group
// of four repacked rows and on the plain tail: the path where the
// repacked layout is not read by its AVX-512 kernel (it is only built for
// it) but must still compute, with DotQ8_0Rows' bits.
func dotQ8_0RowsRepackedGo(dst []float32, w []byte, y []byte, nb int) {
	rs := nb * Q8_0BlockSize
	plain := make([]byte, 4*rs)
	r := 0
	for ; r+4 <= len(dst); r += 4 {
		_ = Deinterleave4Q8_0(plain, w[r*rs:(r+4)*rs], rs, 4)
		dotQ8_0Rows(dst[r:r+4], plain, rs, y, nb)
	}
	if r < len(dst) {
		dotQ8_0Rows(dst[r:], w[r*rs:], rs, y, nb)
	}
}
