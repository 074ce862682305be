package vec

import "fmt"

// Weights repacked for decode: a matrix of q4_0 or q4_K rows is stored
// with every four consecutive rows interleaved unit by unit, so that the
// four rows a decode kernel reads together lie in one sequential stream
// instead of four streams a row apart. q4_0's unit is four blocks (72
// bytes), the packed kernel's step. q4_K's is 16 bytes: a super-block of
// four rows becomes their d, dmin and scales side by side (one row per
// 128-bit lane, unpacked for all four at once) and then, 64 bytes at a
// time, the same 16 quant bytes of each row, which the kernel sums in one
// lane per row (see RATIONALE.md, "q4_K repacked by 16-byte units"). Rows
// past the last full four stay as they were; the matrix keeps its size.
// The interleaved kernels' integer sums are exact and their float steps
// the plain kernels' in the plain kernels' order, so a repacked product
// has the plain one's bits.

// Q4KRepackUnit is the interleaving unit of repacked q4_K rows in bytes.
const Q4KRepackUnit = 16

// RepackUnit is the interleaving unit of a row of nb blocks of type
// repacked (q4_0: 4 blocks, 72 bytes; q4_K: Q4KRepackUnit bytes), or 0
// when rows of that type and length are not repacked.
func RepackUnit(q4K bool, nb int) int {
	switch {
	case nb <= 0:
		return 0
	case q4K:
		return Q4KRepackUnit
	case nb%4 == 0:
		return 4 * Q4_0BlockSize
	}
	return 0
}

// Interleave4 writes the rows×rowSize bytes of src (rows of rowSize bytes,
// a multiple of unit) to dst interleaved by fours: in each group of four
// rows, unit u of row r goes to u·4·unit + r·unit of the group; the rows
// after the last full group are copied as they are. dst and src must not
// overlap.
func Interleave4(dst, src []byte, rowSize, unit, rows int) error {
	return interleave4(dst, src, rowSize, unit, rows, false)
}

// Deinterleave4 undoes Interleave4: dst gets the plain rows of src.
func Deinterleave4(dst, src []byte, rowSize, unit, rows int) error {
	return interleave4(dst, src, rowSize, unit, rows, true)
}

func interleave4(dst, src []byte, rowSize, unit, rows int, undo bool) error {
	switch {
	case unit <= 0 || rowSize <= 0 || rowSize%unit != 0 || rows < 0:
		return fmt.Errorf("%w: rows of %d bytes in units of %d", ErrShape, rowSize, unit)
	case len(src) < rows*rowSize || len(dst) < rows*rowSize:
		return fmt.Errorf("%w: %d rows of %d bytes in %d and %d bytes", ErrShape, rows, rowSize, len(dst), len(src))
	}
	units := rowSize / unit
	full := rows / 4 * 4
	if unit == 16 {
		interleave16(dst, src, rowSize, full, undo)
		copy(dst[full*rowSize:rows*rowSize], src[full*rowSize:rows*rowSize])
		return nil
	}
	for g := 0; g < full; g += 4 {
		base := g * rowSize
		for r := range 4 {
			for u := range units {
				plain := base + r*rowSize + u*unit
				inter := base + u*4*unit + r*unit
				if undo {
					copy(dst[plain:plain+unit], src[inter:inter+unit])
				} else {
					copy(dst[inter:inter+unit], src[plain:plain+unit])
				}
			}
		}
	}
	copy(dst[full*rowSize:rows*rowSize], src[full*rowSize:rows*rowSize])
	return nil
}

// interleave16 is interleave4's loop for 16-byte units over the first
// full rows (a multiple of 4): fixed-size copies, which the compiler makes
// two moves each, where copy() calls cost more than the 16 bytes.
func interleave16(dst, src []byte, rowSize, full int, undo bool) {
	for g := 0; g < full; g += 4 {
		base := g * rowSize
		grp := dst[base : base+4*rowSize]
		plain := src[base : base+4*rowSize]
		if undo {
			grp, plain = plain, grp
		}
		r0, r1, r2, r3 := plain[:rowSize], plain[rowSize:2*rowSize], plain[2*rowSize:3*rowSize], plain[3*rowSize:4*rowSize]
		for u := 0; u+16 <= rowSize; u += 16 {
			q := (*[64]byte)(grp[4*u : 4*u+64])
			p0, p1, p2, p3 := (*[16]byte)(r0[u:u+16]), (*[16]byte)(r1[u:u+16]), (*[16]byte)(r2[u:u+16]), (*[16]byte)(r3[u:u+16])
			if undo {
				*p0, *p1, *p2, *p3 = [16]byte(q[0:16]), [16]byte(q[16:32]), [16]byte(q[32:48]), [16]byte(q[48:64])
			} else {
				*(*[16]byte)(q[0:16]), *(*[16]byte)(q[16:32]), *(*[16]byte)(q[32:48]), *(*[16]byte)(q[48:64]) = *p0, *p1, *p2, *p3
			}
		}
	}
}

// RepackedDots reports whether the interleaved decode dots run their
// AVX-512 kernels (DotQ4_0RowsRepacked with Q4PackedDots,
// DotQ4_KRowsRepacked with Q4KPackedDots); elsewhere weights are not
// repacked.
func RepackedDots(q4K bool) bool {
	if q4K {
		return Q4KPackedDots()
	}
	return Q4PackedDots()
}

// checkRepacked checks a repacked product's shapes: len(dst) rows of nb
// blocks of bs bytes in w, and an activation of at least ly bytes.
func checkRepacked(rows, lw, nb, bs, ly, want int) error {
	switch {
	case nb <= 0 || RepackUnit(bs == Q4_KBlockSize, nb) == 0:
		return fmt.Errorf("%w: repacked rows of %d blocks", ErrShape, nb)
	case lw < rows*nb*bs:
		return fmt.Errorf("%w: %d repacked rows of %d blocks in %d bytes", ErrShape, rows, nb, lw)
	case ly < want:
		return fmt.Errorf("%w: activation row of %d bytes for %d blocks (want %d)", ErrShape, ly, nb, want)
	}
	return nil
}

// DotQ4_0RowsRepacked is DotQ4_0RowsPacked on rows interleaved by
// Interleave4 (unit RepackUnit(false, nb)): w starts at a group of four
// rows, dst's rows are full groups but for a last partial one, which is
// the matrix's plain tail. The bits are DotQ4_0RowsPacked's.
func DotQ4_0RowsRepacked(dst []float32, w []byte, yp []byte, nb int) error {
	if len(dst) == 0 {
		return nil
	}
	if err := checkRepacked(len(dst), len(w), nb, Q4_0BlockSize, len(yp), Q4PackedBytes(nb)); err != nil {
		return err
	}
	dotQ4_0RowsRepacked(dst, w, yp, nb)
	return nil
}

// DotQ4_KRowsRepacked is DotQ4_KRows on rows interleaved by Interleave4
// (unit RepackUnit(true, nb)) with the plain q8_K activation row y, with
// w and dst as DotQ4_0RowsRepacked's. The bits are DotQ4_KRows'.
func DotQ4_KRowsRepacked(dst []float32, w []byte, y []byte, nb int) error {
	if len(dst) == 0 {
		return nil
	}
	if err := checkRepacked(len(dst), len(w), nb, Q4_KBlockSize, len(y), nb*Q8_KBlockSize); err != nil {
		return err
	}
	dotQ4_KRowsRepacked(dst, w, y, nb)
	return nil
}

// deinterleaveRows runs dot on the plain copy of each group of four
// repacked rows of w (rowSize bytes, interleaving unit unit) and on the
// plain rest: the portable path, where the repacked layout is only ever
// built for the AVX-512 kernels but must still compute.
func deinterleaveRows(dst []float32, w []byte, rowSize, unit int, dot func(d []float32, plain []byte)) {
	plain := make([]byte, 4*rowSize)
	r := 0
	for ; r+4 <= len(dst); r += 4 {
		_ = Deinterleave4(plain, w[r*rowSize:(r+4)*rowSize], rowSize, unit, 4)
		dot(dst[r:r+4], plain)
	}
	if r < len(dst) {
		dot(dst[r:], w[r*rowSize:])
	}
}
