package vec

import "fmt"

// PackQ8_KForQ4K lays out the q8_K activation row y of nb super-blocks for
// DotQ4_KRowsPacked in dst (the same size, nb·Q8_KBlockSize bytes): each
// super-block keeps its scale and block sums in place, and its 256 quants
// are reordered so that the low and high nibbles of a q4_K super-block's
// quant bytes 0..63 and 64..127 meet their activations in four 64-byte
// runs: quants 0..31 and 64..95, 32..63 and 96..127, 128..159 and
// 192..223, 160..191 and 224..255. A decode product packs its one
// activation row once; every weight row then reads its quants with two
// loads instead of four broadcasts and shifts.
func PackQ8_KForQ4K(dst, y []byte, nb int) error {
	switch {
	case nb <= 0:
		return fmt.Errorf("%w: %d super-blocks", ErrShape, nb)
	case len(y) < nb*Q8_KBlockSize || len(dst) < nb*Q8_KBlockSize:
		return fmt.Errorf("%w: q8_K rows of %d and %d bytes for %d super-blocks", ErrShape, len(y), len(dst), nb)
	}
	for i := range nb {
		s, d := y[i*Q8_KBlockSize:(i+1)*Q8_KBlockSize], dst[i*Q8_KBlockSize:(i+1)*Q8_KBlockSize]
		copy(d[:4], s[:4])
		for h := range 2 { // quant bytes 64h..64h+63 of the weights
			base := 4 + 128*h
			copy(d[base:base+32], s[base:base+32])         // low nibbles 0..31
			copy(d[base+32:base+64], s[base+64:base+96])   // low nibbles 32..63
			copy(d[base+64:base+96], s[base+32:base+64])   // high nibbles 0..31
			copy(d[base+96:base+128], s[base+96:base+128]) // high nibbles 32..63
		}
		copy(d[4+QKK:], s[4+QKK:])
	}
	return nil
}

// DotQ4_KRowsPacked is DotQ4_KRows with the activation row also given
// packed by PackQ8_KForQ4K (yp): where Q4KPackedDots reports the AVX-512
// kernels, each four weight rows read yp, any rest y; the results are
// DotQ4_KRows' bits (the integer sums are exact in either order).
func DotQ4_KRowsPacked(dst []float32, w []byte, stride int, y, yp []byte, nb int) error {
	if len(dst) == 0 {
		return nil
	}
	if err := checkRows(len(dst), len(w), stride, len(y), nb, Q4_KBlockSize, Q8_KBlockSize); err != nil {
		return err
	}
	if len(yp) < nb*Q8_KBlockSize {
		return fmt.Errorf("%w: packed q8_K row of %d bytes for %d super-blocks", ErrShape, len(yp), nb)
	}
	dotQ4_KRowsPacked(dst, w, stride, y, yp, nb)
	return nil
}
