package vec

import (
	"fmt"
	"math"
	goruntime "runtime"
	"testing"
	"time"
)

// Benchmarks report rates next to a reference measured in the same run:
// products against the FMA peak of all cores (PeakGFLOPS), memory-bound
// kernels against a plain copy of the same bytes. Traffic counts every
// byte read plus every byte written, for the kernel and for copy alike.

func fill(n int, seed float32) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = float32(math.Sin(float64(i)*0.37+float64(seed))) * 2
	}
	return s
}

func BenchmarkPeakFMA(b *testing.B) {
	for _, w := range []int{1, goruntime.NumCPU()} {
		b.Run(fmt.Sprintf("workers=%d", w), func(b *testing.B) {
			var g float64
			for b.Loop() {
				g = PeakGFLOPS(w, 50*time.Millisecond)
			}
			b.ReportMetric(g, "GFLOP/s")
		})
	}
}

func BenchmarkGemmNT(b *testing.B) {
	workers := goruntime.NumCPU()
	peak := PeakGFLOPS(workers, 200*time.Millisecond)
	for _, s := range []int{512, 1024, 2048} {
		b.Run(fmt.Sprintf("%d^3", s), func(b *testing.B) {
			x, y, z := fill(s*s, 1), fill(s*s, 2), make([]float32, s*s)
			b.SetBytes(int64(3 * 4 * s * s))
			for b.Loop() {
				if err := GemmNTParallel(workers, s, s, s, x, s, y, s, z, s); err != nil {
					b.Fatal(err)
				}
			}
			g := 2 * float64(s) * float64(s) * float64(s) * float64(b.N) / b.Elapsed().Seconds() / 1e9
			b.ReportMetric(g, "GFLOP/s")
			b.ReportMetric(peak, "peak-GFLOP/s")
			b.ReportMetric(g/peak, "of-peak")
		})
	}
}

// BenchmarkGemmNTShapes covers the shapes of a transformer: one token
// (matrix-vector) and a short prompt against a 2048×2048 weight.
func BenchmarkGemmNTShapes(b *testing.B) {
	workers := goruntime.NumCPU()
	for _, sh := range []struct{ m, n, k int }{{1, 2048, 2048}, {8, 2048, 2048}, {64, 2048, 2048}} {
		b.Run(fmt.Sprintf("m%d_n%d_k%d", sh.m, sh.n, sh.k), func(b *testing.B) {
			x, y, z := fill(sh.m*sh.k, 1), fill(sh.n*sh.k, 2), make([]float32, sh.m*sh.n)
			b.SetBytes(int64(4 * (sh.m*sh.k + sh.n*sh.k + sh.m*sh.n)))
			for b.Loop() {
				if err := GemmNTParallel(workers, sh.m, sh.n, sh.k, x, sh.k, y, sh.k, z, sh.n); err != nil {
					b.Fatal(err)
				}
			}
			g := 2 * float64(sh.m*sh.n) * float64(sh.k) * float64(b.N) / b.Elapsed().Seconds() / 1e9
			b.ReportMetric(g, "GFLOP/s")
		})
	}
}

// copyRate times copy of n float32s (read n, write n) and returns GB/s of
// traffic.
func copyRate(dst, src []float32) float64 {
	reps := max(1, (64<<20)/(8*len(src)))
	copy(dst, src)
	start := time.Now()
	for range reps {
		copy(dst, src)
	}
	return float64(reps) * 8 * float64(len(src)) / time.Since(start).Seconds() / 1e9
}

var streamSizes = []struct {
	name string
	n    int
}{{"L2_64K", 1 << 16}, {"DRAM_16M", 1 << 24}}

func benchStream(b *testing.B, arrays int, n int, run func()) {
	src, dst := fill(n, 5), make([]float32, n)
	cp := copyRate(dst, src)
	b.SetBytes(int64(arrays * 4 * n))
	for b.Loop() {
		run()
	}
	g := float64(arrays) * 4 * float64(n) * float64(b.N) / b.Elapsed().Seconds() / 1e9
	b.ReportMetric(g, "GB/s")
	b.ReportMetric(cp, "copy-GB/s")
	b.ReportMetric(g/cp, "of-copy")
}

func BenchmarkAdd(b *testing.B) {
	for _, sz := range streamSizes {
		b.Run(sz.name, func(b *testing.B) {
			x, y, z := fill(sz.n, 1), fill(sz.n, 2), make([]float32, sz.n)
			benchStream(b, 3, sz.n, func() { Add(z, x, y) })
		})
	}
}

func BenchmarkMul(b *testing.B) {
	for _, sz := range streamSizes {
		b.Run(sz.name, func(b *testing.B) {
			x, y, z := fill(sz.n, 1), fill(sz.n, 2), make([]float32, sz.n)
			benchStream(b, 3, sz.n, func() { Mul(z, x, y) })
		})
	}
}

// softMaxRows is soft-max over each row of length cols, as the CPU backend
// runs it: max, exp with sum, scale.
func softMaxRows(dst, src []float32, cols int) {
	for r := 0; r+cols <= len(src); r += cols {
		x, y := src[r:r+cols], dst[r:r+cols]
		m := Max(x)
		s := ExpSub(y, x, m)
		Scale(y, y, float32(1/s))
	}
}

// rmsNormRows is RMS norm over each row of length cols.
func rmsNormRows(dst, src []float32, cols int) {
	for r := 0; r+cols <= len(src); r += cols {
		x, y := src[r:r+cols], dst[r:r+cols]
		ms := SumSq(x) / float64(cols)
		Scale(y, x, float32(1/math.Sqrt(ms+1e-6)))
	}
}

func BenchmarkSoftMaxRows(b *testing.B) {
	const cols = 4096
	for _, sz := range streamSizes {
		b.Run(sz.name, func(b *testing.B) {
			x, z := fill(sz.n, 1), make([]float32, sz.n)
			benchStream(b, 2, sz.n, func() { softMaxRows(z, x, cols) })
		})
	}
}

func BenchmarkRMSNormRows(b *testing.B) {
	const cols = 4096
	for _, sz := range streamSizes {
		b.Run(sz.name, func(b *testing.B) {
			x, z := fill(sz.n, 1), make([]float32, sz.n)
			benchStream(b, 2, sz.n, func() { rmsNormRows(z, x, cols) })
		})
	}
}

// BenchmarkGemmNTOneCore is the 1024³ product on one goroutine against the
// one-core peak: the efficiency of the kernel without threading effects.
func BenchmarkGemmNTOneCore(b *testing.B) {
	const s = 1024
	peak := PeakGFLOPS(1, 200*time.Millisecond)
	x, y, z := fill(s*s, 1), fill(s*s, 2), make([]float32, s*s)
	for b.Loop() {
		if err := GemmNT(s, s, s, x, s, y, s, z, s); err != nil {
			b.Fatal(err)
		}
	}
	g := 2 * float64(s) * float64(s) * float64(s) * float64(b.N) / b.Elapsed().Seconds() / 1e9
	b.ReportMetric(g, "GFLOP/s")
	b.ReportMetric(peak, "peak-GFLOP/s")
	b.ReportMetric(g/peak, "of-peak")
}
