package vec

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"
	"unsafe"
)

// TestRepackedQ8_0 checks the repacked q8_0 decode dot bit for bit against
// DotQ8_0Rows on the plain rows (full groups of four and a plain tail),
// and that Deinterleave4Q8_0 restores the rows.
func TestRepackedQ8_0(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	for _, nb := range []int{8, 16, 32, 88} {
		for _, rows := range []int{1, 3, 4, 5, 8, 11, 16} {
			t.Run(fmt.Sprintf("nb%d/rows%d", nb, rows), func(t *testing.T) {
				rs := nb * Q8_0BlockSize
				w := make([]byte, rows*rs)
				for i := range rows {
					row, _ := randQ8Row(r, nb)
					copy(w[i*rs:], row)
				}
				rp := make([]byte, len(w))
				if err := Interleave4Q8_0(rp, w, rs, rows); err != nil {
					t.Fatal(err)
				}
				back := make([]byte, len(w))
				if err := Deinterleave4Q8_0(back, rp, rs, rows); err != nil || !bytes.Equal(back, w) {
					t.Fatalf("deinterleave: %v, equal %v", err, bytes.Equal(back, w))
				}
				// The portable moves give the assembly's bytes.
				goRp, goBack := make([]byte, len(w)), make([]byte, len(w))
				_ = interleaveQ8_0(goRp, w, rs, rows, false, false)
				_ = interleaveQ8_0(goBack, rp, rs, rows, true, false)
				if !bytes.Equal(goRp, rp) || !bytes.Equal(goBack, w) {
					t.Fatalf("portable moves: same repacked bytes %v, same rows %v", bytes.Equal(goRp, rp), bytes.Equal(goBack, w))
				}
				y, _ := randQ8Row(r, nb)
				yp := make([]byte, Q8RPackedBytes(nb))
				if err := PackQ8_0ForQ8R(yp, y, nb); err != nil {
					t.Fatal(err)
				}
				want, got := make([]float32, rows), make([]float32, rows+1)
				got[rows] = 42
				if err := DotQ8_0Rows(want, w, rs, y, nb); err != nil {
					t.Fatal(err)
				}
				if err := DotQ8_0RowsRepacked(got[:rows], rp, y, yp, nb); err != nil {
					t.Fatal(err)
				}
				sameRowBits(t, got, want, rows, "plain")
			})
		}
	}
}

// TestRepackedQ8_0Errors checks the shape errors of the q8_0 repacking,
// packing and dot.
func TestRepackedQ8_0Errors(t *testing.T) {
	b := make([]byte, 4*Q8RChunkBytes)
	dst := make([]float32, 1)
	for _, c := range []struct {
		name string
		err  error
	}{
		{"row not whole chunks", Interleave4Q8_0(b, b, 100, 1)},
		{"short source", Interleave4Q8_0(b, b[:10], 272, 1)},
		{"short destination", Deinterleave4Q8_0(b[:10], b, 272, 1)},
		{"blocks not a multiple of 8", PackQ8_0ForQ8R(b, b, 12)},
		{"short activation", PackQ8_0ForQ8R(b, b[:10], 8)},
		{"short packed row", PackQ8_0ForQ8R(b[:10], b, 8)},
		{"dot of 12 blocks", DotQ8_0RowsRepacked(dst, b, b, b, 12)},
		{"short weights", DotQ8_0RowsRepacked(dst, b[:10], b, b, 8)},
		{"short packed activation", DotQ8_0RowsRepacked(dst, b, b, b[:10], 8)},
	} {
		if !errors.Is(c.err, ErrShape) {
			t.Errorf("%s: %v, want ErrShape", c.name, c.err)
		}
	}
	if RepackUnitQ8_0(12) != 0 || RepackUnitQ8_0(0) != 0 || RepackUnitQ8_0(32) != 272 {
		t.Error("RepackUnitQ8_0")
	}
}

// aligned64 returns n bytes starting on a multiple of 64.
func aligned64(n int) []byte {
	b := make([]byte, n+64)
	off := (64 - int(uintptr(unsafe.Pointer(&b[0]))%64)) % 64
	return b[off : off+n]
}

// BenchmarkRepackedQ8_0 runs the q8_0 decode dots of one activation row
// over a 32000×1024 matrix (the medium decoder's output layer) on one and
// two goroutines, the plain rows and the same rows repacked alternating,
// and reports each one's fastest run as GB/s: on a shared machine the
// best of alternating runs compares them.
func BenchmarkRepackedQ8_0(b *testing.B) {
	const k, n = 1024, 32000
	r := rand.New(rand.NewPCG(5, 6))
	nb := k / QK
	rs := nb * Q8_0BlockSize
	w := aligned64(n * rs)
	for i := range 64 {
		row, _ := randQ8Row(r, nb)
		copy(w[i*rs:], row)
	}
	for i := 64; i < n; i++ {
		copy(w[i*rs:(i+1)*rs], w[(i%64)*rs:])
	}
	rp := aligned64(len(w))
	if err := Interleave4Q8_0(rp, w, rs, n); err != nil {
		b.Fatal(err)
	}
	y, _ := randQ8Row(r, nb)
	yp := make([]byte, Q8RPackedBytes(nb))
	_ = PackQ8_0ForQ8R(yp, y, nb)
	dst := make([]float32, n)
	run := func(rep bool, r0, r1 int) {
		if rep {
			_ = DotQ8_0RowsRepacked(dst[r0:r1], rp[r0*rs:], y, yp, nb)
		} else {
			_ = DotQ8_0Rows(dst[r0:r1], w[r0*rs:], rs, y, nb)
		}
	}
	for _, th := range []int{1, 2} {
		b.Run(fmt.Sprintf("t%d", th), func(b *testing.B) {
			best := bestAlternating(b, th, n, run)
			b.ReportMetric(float64(len(w))/best[0].Seconds()/1e9, "plain-GB/s")
			b.ReportMetric(float64(len(w))/best[1].Seconds()/1e9, "repacked-GB/s")
		})
	}
}

// bestAlternating runs b's loop over two variants of a product of n rows,
// each iteration both (run(false, ...) then run(true, ...), or the other
// way round), each on th goroutines that split the rows at multiples of
// 16, and returns each variant's fastest run (index 1: run(true, ...)).
func bestAlternating(b *testing.B, th, n int, run func(alt bool, r0, r1 int)) [2]time.Duration {
	best := [2]time.Duration{time.Hour, time.Hour}
	for it := 0; b.Loop(); it++ {
		for j := range 2 {
			i := (it + j) % 2
			t0 := time.Now()
			var wg sync.WaitGroup
			for g := range th {
				wg.Go(func() { run(i == 1, n/16*g/th*16, n/16*(g+1)/th*16) })
			}
			wg.Wait()
			best[i] = min(best[i], time.Since(t0))
		}
	}
	return best
}

// BenchmarkDeinterleaveQ8_0 undoes the q8_0 repacking of 64 rows of 4096
// (the GEMM paths' per-panel cost), against a plain copy of as many bytes.
func BenchmarkDeinterleaveQ8_0(b *testing.B) {
	const rows, nb = 64, 128
	rs := nb * Q8_0BlockSize
	src, dst := make([]byte, rows*rs), make([]byte, rows*rs)
	b.Run("deinterleave", func(b *testing.B) {
		b.SetBytes(int64(len(src)))
		for b.Loop() {
			_ = Deinterleave4Q8_0(dst, src, rs, rows)
		}
	})
	b.Run("copy", func(b *testing.B) {
		b.SetBytes(int64(len(src)))
		for b.Loop() {
			copy(dst, src)
		}
	})
}
