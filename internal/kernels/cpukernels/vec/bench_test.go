package vec

import (
	"fmt"
	"math"
	"math/rand/v2"
	goruntime "runtime"
	"sync"
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

// BenchmarkGemmNT reports the mean GFLOP/s of the product on all cores,
// then the best of alternate runs of the product and of the FMA peak loop
// (each for about the same time) and their ratio (of-peak).
func BenchmarkGemmNT(b *testing.B) {
	workers := goruntime.NumCPU()
	for _, s := range []int{512, 1024, 2048} {
		b.Run(fmt.Sprintf("%d^3", s), func(b *testing.B) {
			x, y, z := fill(s*s, 1), fill(s*s, 2), make([]float32, s*s)
			gemm := func() {
				if err := GemmNTParallel(workers, s, s, s, x, s, y, s, z, s); err != nil {
					b.Fatal(err)
				}
			}
			gemm()
			cpu0 := cpuSeconds()
			for b.Loop() {
				gemm()
			}
			cpu := cpuSeconds() - cpu0
			flops := 2 * float64(s) * float64(s) * float64(s)
			b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			peak := reportVsPeak(b, workers, flops, gemm)
			reportPerCPU(b, flops*float64(b.N), cpu, peak/float64(workers))
		})
	}
}

// reportVsPeak times f (flops floating-point operations) alternately with
// the FMA peak loop on workers goroutines and reports the best rates and
// their ratio.
func reportVsPeak(b *testing.B, workers int, flops float64, f func()) (peak float64) {
	t := time.Now()
	f()
	dur := max(time.Since(t), 5*time.Millisecond)
	best, _ := BestOf(5, f, func() { peak = max(peak, PeakGFLOPS(workers, dur)) })
	g := flops / best / 1e9
	b.ReportMetric(g, "best-GFLOP/s")
	b.ReportMetric(peak, "peak-GFLOP/s")
	b.ReportMetric(g/peak, "of-peak")
	return peak
}

// reportPerCPU reports flops per CPU-second of the process and its ratio
// to one core's peak (corePeak GFLOP/s): the efficiency of the product
// where the cores were actually running it, unaffected by other programs
// taking turns on a shared machine.
func reportPerCPU(b *testing.B, flops, cpuSec, corePeak float64) {
	if cpuSec <= 0 {
		return
	}
	g := flops / cpuSec / 1e9
	b.ReportMetric(g, "GFLOP/cpu-s")
	b.ReportMetric(g/corePeak, "of-core-peak")
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

var streamSizes = []struct {
	name string
	n    int
}{{"L2_64K", 1 << 16}, {"DRAM_16M", 1 << 24}}

// benchStream times run, which moves arrays×4×n bytes, and reports its
// mean rate (GB/s) plus the best-of rates of run and of copying n float32s
// (2×4×n bytes) measured alternately, and their ratio (of-copy).
func benchStream(b *testing.B, arrays int, n int, run func()) {
	src, dst := fill(n, 5), make([]float32, n)
	cp := func() { copy(dst, src) }
	cp()
	b.SetBytes(int64(arrays * 4 * n))
	run() // first touch of the output
	for b.Loop() {
		run()
	}
	bytes := float64(arrays) * 4 * float64(n)
	reps := max(5, (256<<20)/int(bytes))
	tk, tc := BestOf(reps, run, cp)
	best, cpRate := bytes/tk/1e9, 8*float64(n)/tc/1e9
	b.ReportMetric(bytes*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
	b.ReportMetric(best, "best-GB/s")
	b.ReportMetric(cpRate, "copy-GB/s")
	b.ReportMetric(best/cpRate, "of-copy")
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

func BenchmarkSoftMaxRows(b *testing.B) {
	const cols = 4096
	for _, sz := range streamSizes {
		b.Run(sz.name, func(b *testing.B) {
			x, z := fill(sz.n, 1), make([]float32, sz.n)
			benchStream(b, 2, sz.n, func() { SoftMaxRows(z, x, cols, 1) })
		})
	}
}

// BenchmarkSoftMaxRowMasked is soft_max_ext row by row: scale 0.125 and one
// mask row (a quarter -Inf) shared by all rows, as in attention.
func BenchmarkSoftMaxRowMasked(b *testing.B) {
	const cols = 4096
	mask := make([]float32, cols)
	for i := 3 * cols / 4; i < cols; i++ {
		mask[i] = float32(math.Inf(-1))
	}
	for _, sz := range streamSizes {
		b.Run(sz.name, func(b *testing.B) {
			x, z := fill(sz.n, 1), make([]float32, sz.n)
			benchStream(b, 2, sz.n, func() {
				for r := 0; r+cols <= sz.n; r += cols {
					SoftMaxRow(z[r:r+cols], x[r:r+cols], mask, 0.125, 1)
				}
			})
		})
	}
}

func BenchmarkRMSNormRows(b *testing.B) {
	const cols = 4096
	for _, sz := range streamSizes {
		b.Run(sz.name, func(b *testing.B) {
			x, z := fill(sz.n, 1), make([]float32, sz.n)
			benchStream(b, 2, sz.n, func() { RMSNormRows(z, x, cols, 1e-6) })
		})
	}
}

// BenchmarkGemmNTOneCore is the 1024³ product on one goroutine against the
// one-core peak: the efficiency of the kernel without threading effects.
func BenchmarkGemmNTOneCore(b *testing.B) {
	const s = 1024
	x, y, z := fill(s*s, 1), fill(s*s, 2), make([]float32, s*s)
	gemm := func() {
		if err := GemmNT(s, s, s, x, s, y, s, z, s); err != nil {
			b.Fatal(err)
		}
	}
	cpu0 := cpuSeconds()
	for b.Loop() {
		gemm()
	}
	cpu := cpuSeconds() - cpu0
	flops := 2 * float64(s) * float64(s) * float64(s)
	b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
	peak := reportVsPeak(b, 1, flops, gemm)
	reportPerCPU(b, flops*float64(b.N), cpu, peak)
}

// parallelRows runs f on workers goroutines, each on its share of rows
// rows of cols elements (as the CPU backend splits a node's rows).
func parallelRows(workers, rows, cols int, f func(r0, r1 int)) {
	var wg sync.WaitGroup
	for w := range workers {
		r0, r1 := rows*w/workers, rows*(w+1)/workers
		wg.Add(1)
		go func() { defer wg.Done(); f(r0, r1) }()
	}
	wg.Wait()
}

// BenchmarkParallel runs the memory-bound kernels on all cores over
// 4096×4096 f32 (64 MiB per operand), each worker on a block of whole
// rows, against a copy of the same bytes on as many goroutines.
func BenchmarkParallel(b *testing.B) {
	const cols, rows = 4096, 4096
	workers := goruntime.NumCPU()
	x, y, z := fill(cols*rows, 1), fill(cols*rows, 2), make([]float32, cols*rows)
	src, dst := fill(cols*rows, 3), make([]float32, cols*rows)
	cp := func() {
		parallelRows(workers, rows, cols, func(r0, r1 int) { copy(dst[r0*cols:r1*cols], src[r0*cols:r1*cols]) })
	}
	cases := []struct {
		name   string
		arrays int
		f      func(r0, r1 int)
	}{
		{"Add", 3, func(r0, r1 int) { Add(z[r0*cols:r1*cols], x[r0*cols:r1*cols], y[r0*cols:r1*cols]) }},
		{"Mul", 3, func(r0, r1 int) { Mul(z[r0*cols:r1*cols], x[r0*cols:r1*cols], y[r0*cols:r1*cols]) }},
		{"SoftMaxRows", 2, func(r0, r1 int) { SoftMaxRows(z[r0*cols:r1*cols], x[r0*cols:r1*cols], cols, 1) }},
		{"RMSNormRows", 2, func(r0, r1 int) { RMSNormRows(z[r0*cols:r1*cols], x[r0*cols:r1*cols], cols, 1e-6) }},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			run := func() { parallelRows(workers, rows, cols, tc.f) }
			run()
			cp()
			bytes := float64(tc.arrays * 4 * cols * rows)
			b.SetBytes(int64(bytes))
			for b.Loop() {
				run()
			}
			tk, tc := BestOf(5, run, cp)
			b.ReportMetric(bytes*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
			b.ReportMetric(bytes/tk/1e9, "best-GB/s")
			b.ReportMetric(8*cols*rows/tc/1e9, "copy-GB/s")
			b.ReportMetric((bytes/tk)/(8*cols*rows/tc), "of-copy")
		})
	}
}

// BenchmarkKQuantMat runs the k-quant tile products on 4096×4096 weights
// (random blocks) against n q8_K activation rows, on one goroutine, and
// reports the process CPU time per product (cpu-µs/op), which a busy
// machine disturbs less than the wall time.
func BenchmarkKQuantMat(b *testing.B) {
	const k, rows = 4096, 4096
	nb := k / QKK
	r := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		name   string
		bs, d0 int
		mat    func([]float32, int, []byte, int, int, []byte, int, int, int) error
	}{
		{"q4_K", Q4_KBlockSize, 0, DotQ4_KMat},
		{"q5_K", Q5_KBlockSize, 0, DotQ5_KMat},
		{"q6_K", Q6_KBlockSize, 208, DotQ6_KMat},
	} {
		w := randKW(r, nb*rows, tc.bs, tc.d0)
		for _, n := range []int{1, 32} {
			y := randQ8K(r, nb*n)
			dst := make([]float32, rows*n)
			b.Run(fmt.Sprintf("%s/n%d", tc.name, n), func(b *testing.B) {
				cpu0 := cpuSeconds()
				for b.Loop() {
					for j := 0; j < rows; j += 16 { // the CPU backend's tiles
						if err := tc.mat(dst[j:], rows, w[j*nb*tc.bs:], nb*tc.bs, 16, y, nb*Q8_KBlockSize, n, nb); err != nil {
							b.Fatal(err)
						}
					}
				}
				b.ReportMetric((cpuSeconds()-cpu0)/float64(b.N)*1e6, "cpu-µs/op")
			})
		}
	}
}
