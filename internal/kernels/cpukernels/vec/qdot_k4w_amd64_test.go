//go:build amd64 && !purego

package vec

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// decode4W sets dst[r] for the len(dst) weight rows at w (stride apart)
// against the q8_K row y: four at a time with the four-weight-row kernels
// (k512.mat4W), the rest with one; it returns how many mat4W set.
func decode4W(k k512, one func(w, y *byte, nb int) float32, dst []float32, w []byte, stride int, y []byte, nb int) int {
	n4 := k.mat4W(dst, w, stride, len(dst), y, nb)
	for r := n4; r < len(dst); r++ {
		dst[r] = one(&w[r*stride], &y[0], nb)
	}
	return n4
}

// TestDotK4WMatchesDot1 checks the four-weight-row decode kernels (one
// activation row, weight-row counts not a multiple of
// four, padded strides) bit for bit against the one-row AVX-512 kernels.
func TestDotK4WMatchesDot1(t *testing.T) {
	if !useK512 {
		t.Skip("no AVX-512 k-quant kernels at this level")
	}
	tests := []struct {
		name string
		bs   int
		d0   int
		k    k512
		one  func(w, y *byte, nb int) float32
	}{
		{"q4_K", Q4_KBlockSize, 0, q4K512, q4KDot1AVX512},
		{"q5_K", Q5_KBlockSize, 0, q5K512, q5KDot1AVX512},
		{"q6_K", Q6_KBlockSize, 208, q6K512, q6KDot1AVX512},
	}
	r := rand.New(rand.NewPCG(41, 42))
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for rep := 0; rep < 60; rep++ {
				nb, nw := 1+r.IntN(9), 1+r.IntN(14)
				stride := nb*tc.bs + r.IntN(4)
				w := make([]byte, (nw-1)*stride+nb*tc.bs)
				for i := 0; i < nw; i++ {
					copy(w[i*stride:], randKW(r, nb, tc.bs, tc.d0))
				}
				y := randQ8K(r, nb)
				dst := make([]float32, nw)
				n4 := decode4W(tc.k, tc.one, dst, w, stride, y, nb)
				if n4 != nw/4*4 {
					t.Fatalf("mat4W set %d of %d rows", n4, nw)
				}
				for i := range nw {
					want := tc.one(&w[i*stride], &y[0], nb)
					if math.Float32bits(dst[i]) != math.Float32bits(want) {
						t.Fatalf("rep %d (nb %d, %d rows, stride %d): row %d = %v, want %v", rep, nb, nw, stride, i, dst[i], want)
					}
				}
			}
		})
	}
}

// BenchmarkKDecode4W runs decode products (one q8_K activation row against
// n weight rows of k elements) through the one-row AVX-512 kernel, row by
// row (the path mat takes), and through the four-weight-row kernels
// (decode4W), alternating run by run in
// the same loop so that both meet the same load on a shared machine,
// each after reading 128 MiB so that both stream their weights from
// memory, as a decode token does. It
// reports the CPU time per product of each (one-µs, four-µs), their ratio
// (speedup), and the weight bytes read per CPU second of the new path.
func BenchmarkKDecode4W(b *testing.B) {
	if !useK512 {
		b.Skip("no AVX-512 k-quant kernels at this level")
	}
	kinds := []struct {
		name   string
		bs, d0 int
		k      k512
		one    func(w, y *byte, nb int) float32
	}{
		{"q4_K", Q4_KBlockSize, 0, q4K512, q4KDot1AVX512},
		{"q6_K", Q6_KBlockSize, 208, q6K512, q6KDot1AVX512},
	}
	for _, kd := range kinds {
		for _, sh := range []struct{ n, k int }{{4096, 4096}, {32000, 2048}} {
			b.Run(fmt.Sprintf("%s/%dx%d", kd.name, sh.n, sh.k), func(b *testing.B) {
				nb := sh.k / QKK
				stride := nb * kd.bs
				r := rand.New(rand.NewPCG(5, 6))
				w := make([]byte, sh.n*stride)
				for i := 0; i < sh.n; i++ {
					copy(w[i*stride:], randKW(r, nb, kd.bs, kd.d0))
				}
				y := randQ8K(r, nb)
				dst := make([]float32, sh.n)
				var one, four float64
				runs := 0
				// Read through a buffer larger than the caches before each
				// product, so that both stream their weights from memory.
				evict := make([]float32, 32<<20)
				for b.Loop() {
					Sum64(evict)
					c0 := cpuSeconds()
					for i := range sh.n {
						dst[i] = kd.one(&w[i*stride], &y[0], nb)
					}
					one += cpuSeconds() - c0
					Sum64(evict)
					c0 = cpuSeconds()
					decode4W(kd.k, kd.one, dst, w, stride, y, nb)
					four += cpuSeconds() - c0
					runs++
				}
				b.ReportMetric(one/float64(runs)*1e6, "one-µs")
				b.ReportMetric(four/float64(runs)*1e6, "four-µs")
				b.ReportMetric(one/four, "speedup")
				b.ReportMetric(float64(len(w))/(four/float64(runs))/1e9, "four-GB/cpu-s")
			})
		}
	}
}
