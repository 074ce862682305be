package vec

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"
	"time"
)

// TestRepackedDots checks the repacked q4_0 and q4_K decode dots bit for
// bit against the packed ones on the plain rows (full groups of four and a
// plain tail), and that Deinterleave4 restores the rows.
func TestRepackedDots(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for _, q4K := range []bool{false, true} {
		for _, nb := range []int{4, 8, 12, 64} {
			for _, rows := range []int{1, 4, 5, 8, 11, 16} {
				t.Run(fmt.Sprintf("q4K=%v/nb%d/rows%d", q4K, nb, rows), func(t *testing.T) {
					bs, qb := Q4_0BlockSize, nb
					if q4K {
						bs, qb = Q4_KBlockSize, nb/4
					}
					rs := qb * bs
					w := make([]byte, rows*rs)
					for i := range rows {
						if q4K {
							copy(w[i*rs:], randKW(r, qb, Q4_KBlockSize, 0))
						} else {
							row, _ := randQ4Row(r, qb)
							copy(w[i*rs:], row)
						}
					}
					unit := RepackUnit(q4K, qb)
					if unit == 0 {
						t.Fatalf("unit 0 for %d blocks", qb)
					}
					rp := make([]byte, len(w))
					if err := Interleave4(rp, w, rs, unit, rows); err != nil {
						t.Fatal(err)
					}
					back := make([]byte, len(w))
					if err := Deinterleave4(back, rp, rs, unit, rows); err != nil || !bytes.Equal(back, w) {
						t.Fatalf("deinterleave: %v, equal %v", err, bytes.Equal(back, w))
					}
					want, got := make([]float32, rows), make([]float32, rows+1)
					got[rows] = 42
					if q4K {
						y := randQ8K(r, qb)
						yp := make([]byte, len(y))
						if err := PackQ8_KForQ4K(yp, y, qb); err != nil {
							t.Fatal(err)
						}
						if err := DotQ4_KRowsPacked(want, w, rs, y, yp, qb); err != nil {
							t.Fatal(err)
						}
						if err := DotQ4_KRowsRepacked(got[:rows], rp, y, qb); err != nil {
							t.Fatal(err)
						}
					} else {
						y, _ := randQ8Row(r, qb)
						yp := make([]byte, Q4PackedBytes(qb))
						if err := PackQ8_0ForQ4(yp, y, qb); err != nil {
							t.Fatal(err)
						}
						if err := DotQ4_0RowsPacked(want, w, rs, yp, qb); err != nil {
							t.Fatal(err)
						}
						if err := DotQ4_0RowsRepacked(got[:rows], rp, yp, qb); err != nil {
							t.Fatal(err)
						}
					}
					sameRowBits(t, got, want, rows, "packed")
				})
			}
		}
	}
}

// sameRowBits checks that a repacked dot wrote rows results equal bit for
// bit to want (from the kind of dot named by what) and left the sentinel
// 42 at got[rows].
func sameRowBits(t *testing.T, got, want []float32, rows int, what string) {
	t.Helper()
	if got[rows] != 42 {
		t.Fatal("wrote past dst")
	}
	for i := range rows {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Errorf("row %d: %v, %s %v", i, got[i], what, want[i])
		}
	}
}

// TestRepackErrors checks the shape errors of the repacking and of the
// repacked dots.
func TestRepackErrors(t *testing.T) {
	b := make([]byte, 4*Q4_KBlockSize)
	dst := make([]float32, 1)
	for _, c := range []struct {
		name string
		err  error
	}{
		{"unit not dividing the row", Interleave4(b, b, 100, 72, 1)},
		{"zero unit", Interleave4(b, b, 72, 0, 1)},
		{"short source", Interleave4(b, b[:10], 72, 72, 1)},
		{"short destination", Deinterleave4(b[:10], b, 72, 72, 1)},
		{"q4_0 blocks not a multiple of 4", DotQ4_0RowsRepacked(dst, b, b, 3)},
		{"short q4_0 weights", DotQ4_0RowsRepacked(dst, b[:10], b, 4)},
		{"short q4_0 activation", DotQ4_0RowsRepacked(dst, b, b[:10], 4)},
		{"short q4_K weights", DotQ4_KRowsRepacked(dst, b[:10], b, 1)},
		{"short q4_K activation", DotQ4_KRowsRepacked(dst, b, b[:10], 1)},
		{"zero q4_K blocks", DotQ4_KRowsRepacked(dst, b, b, 0)},
	} {
		if !errors.Is(c.err, ErrShape) {
			t.Errorf("%s: %v, want ErrShape", c.name, c.err)
		}
	}
	if RepackUnit(false, 6) != 0 || RepackUnit(false, 8) != 4*Q4_0BlockSize || RepackUnit(true, 1) != Q4KRepackUnit {
		t.Error("RepackUnit")
	}
}

// BenchmarkRepackedDecode runs the decode dots of one activation row over
// the output layer of docs/llama-bench.md's model (32000 rows of 2048) on
// one and two goroutines, plain rows (packed activation) and the same
// rows repacked (interleaved by fours) alternating, and reports each one's
// fastest run as GB/s (plain-GB/s, repacked-GB/s): on a shared machine
// the best of alternating runs compares them.
func BenchmarkRepackedDecode(b *testing.B) {
	const k, n = 2048, 32000
	r := rand.New(rand.NewPCG(5, 6))
	for _, q4K := range []bool{false, true} {
		name, bs, nb := "q4_0", Q4_0BlockSize, k/QK
		if q4K {
			name, bs, nb = "q4_K", Q4_KBlockSize, k/QKK
		}
		rs := nb * bs
		w := make([]byte, n*rs)
		for i := range 64 {
			if q4K {
				copy(w[i*rs:], randKW(r, nb, Q4_KBlockSize, 0))
			} else {
				row, _ := randQ4Row(r, nb)
				copy(w[i*rs:], row)
			}
		}
		for i := 64; i < n; i++ {
			copy(w[i*rs:(i+1)*rs], w[(i%64)*rs:])
		}
		rp := make([]byte, len(w))
		if err := Interleave4(rp, w, rs, RepackUnit(q4K, nb), n); err != nil {
			b.Fatal(err)
		}
		var y, yp []byte
		if q4K {
			y = randQ8K(r, nb)
			yp = make([]byte, len(y))
			_ = PackQ8_KForQ4K(yp, y, nb)
		} else {
			y, _ = randQ8Row(r, nb)
			yp = make([]byte, Q4PackedBytes(nb))
			_ = PackQ8_0ForQ4(yp, y, nb)
		}
		dst := make([]float32, n)
		run := func(rep bool, r0, r1 int) {
			switch {
			case q4K && rep:
				_ = DotQ4_KRowsRepacked(dst[r0:r1], rp[r0*rs:], y, nb)
			case q4K:
				_ = DotQ4_KRowsPacked(dst[r0:r1], w[r0*rs:], rs, y, yp, nb)
			case rep:
				_ = DotQ4_0RowsRepacked(dst[r0:r1], rp[r0*rs:], yp, nb)
			default:
				_ = DotQ4_0RowsPacked(dst[r0:r1], w[r0*rs:], rs, yp, nb)
			}
		}
		for _, th := range []int{1, 2} {
			b.Run(fmt.Sprintf("%s/t%d", name, th), func(b *testing.B) {
				best := [2]time.Duration{time.Hour, time.Hour}
				for it := 0; b.Loop(); it++ {
					for i, rep := range []bool{it%2 == 1, it%2 == 0} { // either first in turn
						if it%2 == 1 {
							i = 1 - i
						}
						t0 := time.Now()
						var wg sync.WaitGroup
						for i := range th {
							wg.Go(func() { run(rep, n/16*i/th*16, n/16*(i+1)/th*16) })
						}
						wg.Wait()
						best[i] = min(best[i], time.Since(t0))
					}
				}
				b.ReportMetric(float64(len(w))/best[0].Seconds()/1e9, "plain-GB/s")
				b.ReportMetric(float64(len(w))/best[1].Seconds()/1e9, "repacked-GB/s")
			})
		}
	}
}
