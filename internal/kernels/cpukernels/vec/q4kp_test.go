package vec

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestDotQ4_KRowsPacked checks DotQ4_KRowsPacked bit for bit against
// DotQ4_KRows (the four-row packed kernel and the one-row rest), with
// padded strides.
func TestDotQ4_KRowsPacked(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for _, nb := range []int{1, 2, 8, 22} {
		for _, rows := range []int{1, 3, 4, 5, 9, 16} {
			for _, pad := range []int{0, 8} {
				t.Run(fmt.Sprintf("nb%d/rows%d/pad%d", nb, rows, pad), func(t *testing.T) {
					stride := nb*Q4_KBlockSize + pad
					w := make([]byte, (rows-1)*stride+nb*Q4_KBlockSize)
					for i := range rows {
						copy(w[i*stride:], randKW(r, nb, Q4_KBlockSize, 0))
					}
					y := randQ8K(r, nb)
					yp := make([]byte, len(y))
					if err := PackQ8_KForQ4K(yp, y, nb); err != nil {
						t.Fatal(err)
					}
					want := make([]float32, rows)
					if err := DotQ4_KRows(want, w, stride, y, nb); err != nil {
						t.Fatal(err)
					}
					got := make([]float32, rows+1)
					got[rows] = 42
					if err := DotQ4_KRowsPacked(got[:rows], w, stride, y, yp, nb); err != nil {
						t.Fatal(err)
					}
					if got[rows] != 42 {
						t.Fatal("wrote past dst")
					}
					for i := range rows {
						if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
							t.Errorf("row %d: %v, DotQ4_KRows %v", i, got[i], want[i])
						}
					}
				})
			}
		}
	}
}

// TestDotQ4_KRowsPackedErrors checks the shape errors of the packed q4_K
// dot and of its packer.
func TestDotQ4_KRowsPackedErrors(t *testing.T) {
	w := make([]byte, Q4_KBlockSize)
	y := make([]byte, Q8_KBlockSize)
	dst := make([]float32, 1)
	for _, c := range []struct {
		name string
		err  error
	}{
		{"short weights", DotQ4_KRowsPacked(dst, w[:len(w)-1], len(w), y, y, 1)},
		{"short row", DotQ4_KRowsPacked(dst, w, len(w), y[:len(y)-1], y, 1)},
		{"short packed row", DotQ4_KRowsPacked(dst, w, len(w), y, y[:len(y)-1], 1)},
		{"pack: zero blocks", PackQ8_KForQ4K(y, y, 0)},
		{"pack: short destination", PackQ8_KForQ4K(y[:len(y)-1], y, 1)},
	} {
		if !errors.Is(c.err, ErrShape) {
			t.Errorf("%s: %v, want ErrShape", c.name, c.err)
		}
	}
}

// BenchmarkQ4KPacked runs the q4_K decode dots of 16-row calls over 1024
// rows (in cache) and 32000 (from memory) of k = 2048: DotQ4_KRows against
// DotQ4_KRowsPacked (the packing included). Compare cpu-µs/op.
func BenchmarkQ4KPacked(b *testing.B) {
	const nb = 2048 / QKK
	r := rand.New(rand.NewPCG(11, 12))
	y := randQ8K(r, nb)
	yp := make([]byte, len(y))
	for _, n := range []int{1024, 32000} {
		w := randKW(r, n*nb, Q4_KBlockSize, 0)
		dst := make([]float32, n)
		stride := nb * Q4_KBlockSize
		for _, packed := range []bool{false, true} {
			var pack func() error
			dot := func(r0 int) error { return DotQ4_KRows(dst[r0:r0+16], w[r0*stride:], stride, y, nb) }
			if packed {
				pack = func() error { return PackQ8_KForQ4K(yp, y, nb) }
				dot = func(r0 int) error {
					return DotQ4_KRowsPacked(dst[r0:r0+16], w[r0*stride:], stride, y, yp, nb)
				}
			}
			b.Run(fmt.Sprintf("n%d/packed=%v", n, packed), func(b *testing.B) { benchRows16(b, len(w), n, pack, dot) })
		}
	}
}
