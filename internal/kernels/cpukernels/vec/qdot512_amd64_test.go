//go:build amd64 && !purego

package vec

import (
	"math"
	"math/rand/v2"
	"testing"
)

// BenchmarkGEMVLevels runs the q8_0 and q4_0 row dots of each assembly
// level on the decode shape of BenchmarkGEMV (same run, same data).
func BenchmarkGEMVLevels(b *testing.B) {
	if !useQ512 {
		b.Skip("no AVX-512 VBMI/VNNI")
	}
	const k = 4096
	r := rand.New(rand.NewPCG(3, 4))
	nb := k / QK
	y, _ := randQ8Row(r, nb)
	dst := make([]float32, k)
	for _, c := range []struct {
		name string
		bs   int
		rand func(*rand.Rand, int) ([]byte, []float64)
		x4   func(*byte, int, *byte, int, *float32)
	}{
		{"q8_0/avx2", Q8_0BlockSize, randQ8Row, dotQ8x4AVX2},
		{"q8_0/avx512", Q8_0BlockSize, randQ8Row, dotQ8x4AVX512},
		{"q4_0/avx2", Q4_0BlockSize, randQ4Row, dotQ4x4AVX2},
		{"q4_0/avx512", Q4_0BlockSize, randQ4Row, dotQ4x4AVX512},
	} {
		w := make([]byte, 0, k*nb*c.bs)
		for range k {
			row, _ := c.rand(r, nb)
			w = append(w, row...)
		}
		stride := nb * c.bs
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(w)))
			cpu0 := cpuSeconds()
			for b.Loop() {
				for r := 0; r < k; r += 4 {
					c.x4(pb(w[r*stride:]), stride, pb(y), nb, &dst[r])
				}
			}
			b.ReportMetric((cpuSeconds()-cpu0)/float64(b.N)*1e6, "cpu-µs/op")
		})
	}
}

// TestQ512FourRowsExact checks that the AVX-512 four-row q8_0 and q4_0
// dots give each row the bits of the one-row kernel (the four rows'
// horizontal sums share their last steps, hsum4Store, in hsumStore's
// order), over block counts with and without a lone last block.
func TestQ512FourRowsExact(t *testing.T) {
	if !useQ512 {
		t.Skip("no AVX-512 VBMI/VNNI")
	}
	r := rand.New(rand.NewPCG(11, 12))
	for _, c := range []struct {
		name   string
		rand   func(*rand.Rand, int) ([]byte, []float64)
		x4, x1 func(*byte, int, *byte, int, *float32)
	}{
		{"q8_0", randQ8Row, dotQ8x4AVX512, dotQ8x1AVX512},
		{"q4_0", randQ4Row, dotQ4x4AVX512, dotQ4x1AVX512},
	} {
		// Over 64 blocks the q8_0 kernel prefetches in its own rows and
		// switches to the next ones; 2 and 3 past a multiple of 4 run its
		// lone pair and lone block.
		for _, nb := range []int{1, 2, 3, 4, 5, 6, 7, 32, 64, 65, 66, 67, 68, 130, 131, 448} {
			y, _ := randQ8Row(r, nb)
			var w []byte
			for range 4 {
				row, _ := c.rand(r, nb)
				w = append(w, row...)
			}
			stride := len(w) / 4
			var got, want [4]float32
			c.x4(pb(w), stride, pb(y), nb, &got[0])
			for i := range 4 {
				c.x1(pb(w[i*stride:]), stride, pb(y), nb, &want[i])
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Errorf("%s, %d blocks, row %d: four-row %v, one-row %v", c.name, nb, i, got[i], want[i])
				}
			}
		}
	}
}
