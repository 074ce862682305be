package vec

import (
	"encoding/binary"
	"fmt"
)

// DotF16Group sets dst[h*dstride+r] to the dot product of the f16 row
// that starts at byte k[r*kstride] (n IEEE half-precision values, little
// endian) with the float32 row q[h*qstride:][:n], for every head h <
// heads and row r < rows: the scores of attention decode for a group of
// q heads that share one K head, each K row read and widened once for
// the whole group. As with DotF16Rows the caller rounds q to half
// precision first; the sums are float32, in an order of the kernel's own.
func DotF16Group(dst []float32, dstride int, k []byte, kstride, rows int, q []float32, qstride, heads, n int) error {
	if rows == 0 || heads == 0 {
		return nil
	}
	if err := groupShape(len(dst), dstride, rows, heads, len(q), qstride, n, len(k), kstride, rows, n); err != nil {
		return err
	}
	dotF16Group(dst, dstride, k, kstride, rows, q, qstride, heads, n)
	return nil
}

// MadF16Group adds to o[h*ostride:][:n] the sum over r < rows of
// w[h*wstride+r] times the f16 row that starts at byte v[r*vstride] (n
// halves), for every head h < heads: the weighted V rows of attention
// decode for a group of q heads that share one V head, each V row read
// and widened once for the whole group. The sums are float32, added row
// after row.
func MadF16Group(o []float32, ostride int, v []byte, vstride, rows int, w []float32, wstride, heads, n int) error {
	if rows == 0 || heads == 0 {
		return nil
	}
	if err := groupShape(len(o), ostride, n, heads, len(w), wstride, rows, len(v), vstride, rows, n); err != nil {
		return err
	}
	madF16Group(o, ostride, v, vstride, rows, w, wstride, heads, n)
	return nil
}

// groupShape checks the operands of DotF16Group and MadF16Group: heads
// float32 rows of out elements (stride ostride) in nout, heads float32
// rows of in elements (stride istride) in nin, and hrows f16 rows of n
// halves (stride hstride) in nh bytes.
func groupShape(nout, ostride, out, heads, nin, istride, in, nh, hstride, hrows, n int) error {
	switch {
	case out <= 0 || in <= 0 || heads < 0 || hrows <= 0 || n <= 0:
		return fmt.Errorf("%w: %d heads, %d and %d elements per head, %d f16 rows of %d", ErrShape, heads, out, in, hrows, n)
	case ostride < out || istride < in || hstride < 2*n:
		return fmt.Errorf("%w: strides %d, %d and %d bytes for %d and %d elements per head and f16 rows of %d", ErrShape, ostride, istride, hstride, out, in, n)
	case nout < out || (heads-1) > (nout-out)/ostride:
		return fmt.Errorf("%w: %d heads of %d outputs with stride %d in %d elements", ErrShape, heads, out, ostride, nout)
	case nin < in || (heads-1) > (nin-in)/istride:
		return fmt.Errorf("%w: %d heads of %d elements with stride %d in %d", ErrShape, heads, in, istride, nin)
	case nh < 2*n || (hrows-1) > (nh-2*n)/hstride:
		return fmt.Errorf("%w: %d f16 rows of stride %d in %d bytes", ErrShape, hrows, hstride, nh)
	}
	return nil
}

// dotF16GroupGo is DotF16Group, one head after another.
func dotF16GroupGo(dst []float32, dstride int, k []byte, kstride, rows int, q []float32, qstride, heads, n int) {
	for h := range heads {
		dotF16Rows(dst[h*dstride:][:rows], k, kstride, q[h*qstride:][:n], n)
	}
}

// madF16Go adds to o[h*ostride:][c0:c1] the weighted f16 rows, columns
// c0..c1-1 only, one element at a time.
func madF16Go(o []float32, ostride int, v []byte, vstride, rows int, w []float32, wstride, heads, c0, c1 int) {
	for r := range rows {
		row := v[r*vstride:]
		for h := range heads {
			wt := w[h*wstride+r]
			oh := o[h*ostride:]
			for i := c0; i < c1; i++ {
				oh[i] += wt * halfToFloat(binary.LittleEndian.Uint16(row[2*i:]))
			}
		}
	}
}
