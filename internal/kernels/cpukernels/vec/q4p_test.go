package vec

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestDotQ4_0RowsPacked checks the packed q4_0 dots (the build's and the
// portable ones) against a float64 loop over the blocks' values, with
// every tail length of a group and padded strides.
func TestDotQ4_0RowsPacked(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	funcs := map[string]func(dst []float32, w []byte, stride int, yp []byte, nb int){
		"build": dotQ4_0RowsPacked, "go": dotQ4_0RowsPackedGo,
	}
	for _, nb := range []int{1, 2, 3, 4, 5, 7, 8, 12, 15, 20, 64, 66, 176} {
		for _, rows := range []int{1, 3, 4, 5, 9} {
			for _, pad := range []int{0, 5} {
				stride := nb*Q4_0BlockSize + pad
				w := make([]byte, (rows-1)*stride+nb*Q4_0BlockSize)
				wv := make([][]float64, rows)
				for i := range wv {
					var blk []byte
					blk, wv[i] = randQ4Row(r, nb)
					copy(w[i*stride:], blk)
				}
				y, yv := randQ8Row(r, nb)
				yp := make([]byte, Q4PackedBytes(nb))
				for i := range yp {
					yp[i] = 0xa5 // PackQ8_0ForQ4 must write every byte
				}
				if err := PackQ8_0ForQ4(yp, y, nb); err != nil {
					t.Fatal(err)
				}
				for fname, f := range funcs {
					t.Run(fmt.Sprintf("%s/nb%d/rows%d/pad%d", fname, nb, rows, pad), func(t *testing.T) {
						dst := make([]float32, rows+1)
						dst[rows] = 42
						f(dst[:rows], w, stride, yp, nb)
						if dst[rows] != 42 {
							t.Fatalf("wrote past dst")
						}
						checkRowDots(t, dst[:rows], wv, yv)
					})
				}
			}
		}
	}
}

// TestDotQ4_0RowsPackedErrors checks the shape errors of the packed dot
// and of the packer.
func TestDotQ4_0RowsPackedErrors(t *testing.T) {
	w := make([]byte, 4*Q4_0BlockSize)
	y := make([]byte, 4*Q8_0BlockSize)
	yp := make([]byte, Q4PackedBytes(4))
	dst := make([]float32, 1)
	for _, c := range []struct {
		name string
		err  error
	}{
		{"zero blocks", DotQ4_0RowsPacked(dst, w, len(w), yp, 0)},
		{"short weights", DotQ4_0RowsPacked(dst, w[:len(w)-1], len(w), yp, 4)},
		{"short packed row", DotQ4_0RowsPacked(dst, w, len(w), yp[:len(yp)-1], 4)},
		{"two rows in one", DotQ4_0RowsPacked(make([]float32, 2), w, len(w), yp, 4)},
		{"pack: zero blocks", PackQ8_0ForQ4(yp, y, 0)},
		{"pack: short row", PackQ8_0ForQ4(yp, y[:len(y)-1], 4)},
		{"pack: short destination", PackQ8_0ForQ4(yp[:255], y, 4)},
	} {
		if !errors.Is(c.err, ErrShape) {
			t.Errorf("%s: %v, want ErrShape", c.name, c.err)
		}
	}
	if err := DotQ4_0RowsPacked(nil, nil, 0, nil, 0); err != nil {
		t.Errorf("no rows: %v", err)
	}
}

// BenchmarkQ4Packed runs the q4_0 decode dots over the decoder's shapes
// (k = 2048): DotQ4_0Rows on the q8_0 row against DotQ4_0RowsPacked on
// the packed one (the packing included), in 16-row calls as the CPU
// backend makes them, over 1024 rows (in cache) and 32000 (the output
// layer, 37 MB, streamed from memory). Compare the CPU time per run
// (cpu-µs/op): the wall time of a shared machine says little.
func BenchmarkQ4Packed(b *testing.B) {
	const k = 2048
	nb := k / QK
	r := rand.New(rand.NewPCG(7, 8))
	y, _ := randQ8Row(r, nb)
	yp := make([]byte, Q4PackedBytes(nb))
	for _, n := range []int{1024, 32000} {
		w := make([]byte, 0, n*nb*Q4_0BlockSize)
		for range n {
			row, _ := randQ4Row(r, nb)
			w = append(w, row...)
		}
		dst := make([]float32, n)
		stride := nb * Q4_0BlockSize
		for _, packed := range []bool{false, true} {
			var pack func() error
			dot := func(r0 int) error { return DotQ4_0Rows(dst[r0:r0+16], w[r0*stride:], stride, y, nb) }
			if packed {
				pack = func() error { return PackQ8_0ForQ4(yp, y, nb) }
				dot = func(r0 int) error { return DotQ4_0RowsPacked(dst[r0:r0+16], w[r0*stride:], stride, yp, nb) }
			}
			b.Run(fmt.Sprintf("n%d/packed=%v", n, packed), func(b *testing.B) { benchRows16(b, len(w), n, pack, dot) })
		}
	}
}

// benchRows16 runs pack (if not nil) and then dot over n weight rows of
// wbytes bytes in all, 16 rows a call (dot's argument: the first row), as
// the CPU backend's decode products do, and reports the CPU time per run.
func benchRows16(b *testing.B, wbytes, n int, pack func() error, dot func(r0 int) error) {
	b.SetBytes(int64(wbytes))
	cpu0 := cpuSeconds()
	for b.Loop() {
		if pack != nil {
			if err := pack(); err != nil {
				b.Fatal(err)
			}
		}
		for r0 := 0; r0 < n; r0 += 16 {
			if err := dot(r0); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric((cpuSeconds()-cpu0)*1e6/float64(b.N), "cpu-µs/op")
}
