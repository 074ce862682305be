package cpu_test

import (
	"encoding/binary"
	"fmt"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/gogml/gogml/backends/cpu"
	"github.com/gogml/gogml/gallocr"
	"github.com/gogml/gogml/internal/kernels/cpukernels/vec"
	"github.com/gogml/gogml/runtime"
	"golang.org/x/sys/unix"
)

// Backend-level benchmarks with a reference measured in the same run: one
// node run through Backend.Compute on all workers, next to the FMA peak of
// as many goroutines (vec.PeakGFLOPS) for MUL_MAT, or a plain copy of the
// same number of bytes split across as many goroutines for the
// memory-bound ops. Traffic counts every byte read plus every byte
// written. GFLOP/s and GB/s are means over b.N runs; best-* and the ratio
// (of-peak, of-copy) come from the best of runs alternating with the
// reference, the fairest comparison on a shared machine; for MUL_MAT,
// GFLOP/cpu-s and of-core-peak divide by the process's CPU time instead.

// refGraph builds one op with build, places every tensor of the context in
// host memory (gallocr.AllocCtxTensors), fills the leaves with
// deterministic values, and returns the node's graph.
func refGraph(b *testing.B, build func(ctx *runtime.Context) *runtime.Tensor) *runtime.Graph {
	b.Helper()
	ctx := runtime.NewContext()
	out := build(ctx)
	if err := ctx.Err(); err != nil {
		b.Fatal(err)
	}
	buf, err := gallocr.AllocCtxTensors(ctx, cpu.DefaultBufferType())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { buf.Free() })
	for _, t := range ctx.Tensors() {
		if t.Op != runtime.OpNone || t.ViewSrc != nil || t.Type != runtime.TypeF32 {
			continue
		}
		n := t.NBytes() / 4
		data := make([]byte, 4*n)
		for i := uint64(0); i < n; i++ {
			v := float32(math.Sin(float64(i)*0.731)) * 0.5
			binary.LittleEndian.PutUint32(data[4*i:], math.Float32bits(v))
		}
		if err := runtime.SetTensorData(t, data, 0); err != nil {
			b.Fatal(err)
		}
	}
	g := runtime.NewGraph()
	if err := g.BuildForwardExpand(out); err != nil {
		b.Fatal(err)
	}
	return g
}

// refCPUSeconds returns the CPU time (user + system) of this process.
func refCPUSeconds() float64 {
	var ru unix.Rusage
	if unix.Getrusage(unix.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
}

// refCompute returns a function that runs g on be, failing b on error.
func refCompute(b *testing.B, be *cpu.Backend, g *runtime.Graph) func() {
	return func() {
		if err := be.Compute(g); err != nil {
			b.Fatal(err)
		}
	}
}

// refMeanSeconds runs f once to warm up (first touch of the output), then
// b.N times, and returns the mean seconds per run.
func refMeanSeconds(b *testing.B, f func()) float64 {
	f()
	for b.Loop() {
		f()
	}
	return b.Elapsed().Seconds() / float64(b.N)
}

// refParallelCopy returns a copy of n bytes split across workers goroutines.
func refParallelCopy(n, workers int) func() {
	src, dst := make([]byte, n), make([]byte, n)
	for i := range src {
		src[i] = byte(i)
	}
	return func() {
		var wg sync.WaitGroup
		for w := range workers {
			lo, hi := n*w/workers, n*(w+1)/workers
			wg.Add(1)
			go func() { defer wg.Done(); copy(dst[lo:hi], src[lo:hi]) }()
		}
		wg.Wait()
	}
}

func BenchmarkBackendMulMatVsPeak(b *testing.B) {
	be := cpu.NewBackend(cpu.BackendOptions{})
	for _, s := range []int64{512, 1024, 2048} {
		b.Run(fmt.Sprintf("f32_%d^3", s), func(b *testing.B) {
			g := refGraph(b, func(ctx *runtime.Context) *runtime.Tensor {
				return ctx.MulMat(ctx.NewTensor2D(runtime.TypeF32, s, s), ctx.NewTensor2D(runtime.TypeF32, s, s))
			})
			run := refCompute(b, be, g)
			flops := 2 * float64(s*s*s)
			cpu0 := refCPUSeconds()
			sec := refMeanSeconds(b, run)
			cpu := refCPUSeconds() - cpu0
			t := time.Now()
			run()
			dur := max(time.Since(t), 5*time.Millisecond)
			var peak float64
			tk, _ := vec.BestOf(5, run, func() { peak = max(peak, vec.PeakGFLOPS(be.Threads(), dur)) })
			b.ReportMetric(flops/sec/1e9, "GFLOP/s")
			b.ReportMetric(flops/tk/1e9, "best-GFLOP/s")
			b.ReportMetric(peak, "peak-GFLOP/s")
			b.ReportMetric(flops/tk/1e9/peak, "of-peak")
			// Per CPU-second of the process: the efficiency where the
			// workers actually ran, whatever else shares the machine.
			if cpu > 0 {
				g := flops * float64(b.N) / cpu / 1e9
				b.ReportMetric(g, "GFLOP/cpu-s")
				b.ReportMetric(g/(peak/float64(be.Threads())), "of-core-peak")
			}
		})
	}
}

// refMemShapes: rows of 4096 f32, 64 rows (1 MiB per tensor, in cache) and
// 4096 rows (64 MiB per tensor, in memory).
var refMemShapes = []int64{64, 4096}

// benchVsCopy runs the op built by build over [4096, rows] tensors, which
// reads and writes elemBytes bytes per element in all, against a parallel
// copy of as many bytes.
func benchVsCopy(b *testing.B, elemBytes int64, build func(ctx *runtime.Context, rows int64) *runtime.Tensor) {
	be := cpu.NewBackend(cpu.BackendOptions{})
	for _, rows := range refMemShapes {
		b.Run(fmt.Sprintf("4096x%d", rows), func(b *testing.B) {
			g := refGraph(b, func(ctx *runtime.Context) *runtime.Tensor { return build(ctx, rows) })
			run := refCompute(b, be, g)
			bytes := float64(elemBytes * 4096 * rows)
			cp := refParallelCopy(int(bytes/2), be.Threads())
			cp()
			b.SetBytes(int64(bytes))
			sec := refMeanSeconds(b, run)
			tk, tc := vec.BestOf(max(5, int((256<<20)/bytes)), run, cp)
			b.ReportMetric(bytes/sec/1e9, "GB/s")
			b.ReportMetric(bytes/tk/1e9, "best-GB/s")
			b.ReportMetric(bytes/tc/1e9, "copy-GB/s")
			b.ReportMetric(tc/tk, "of-copy")
		})
	}
}

func BenchmarkBackendAddVsCopy(b *testing.B) {
	benchVsCopy(b, 12, func(ctx *runtime.Context, rows int64) *runtime.Tensor {
		return ctx.Add(ctx.NewTensor2D(runtime.TypeF32, 4096, rows), ctx.NewTensor2D(runtime.TypeF32, 4096, rows))
	})
}

func BenchmarkBackendMulVsCopy(b *testing.B) {
	benchVsCopy(b, 12, func(ctx *runtime.Context, rows int64) *runtime.Tensor {
		return ctx.Mul(ctx.NewTensor2D(runtime.TypeF32, 4096, rows), ctx.NewTensor2D(runtime.TypeF32, 4096, rows))
	})
}

func BenchmarkBackendSoftMaxVsCopy(b *testing.B) {
	benchVsCopy(b, 8, func(ctx *runtime.Context, rows int64) *runtime.Tensor {
		return ctx.SoftMax(ctx.NewTensor2D(runtime.TypeF32, 4096, rows))
	})
}

func BenchmarkBackendRMSNormVsCopy(b *testing.B) {
	benchVsCopy(b, 8, func(ctx *runtime.Context, rows int64) *runtime.Tensor {
		return ctx.RMSNorm(ctx.NewTensor2D(runtime.TypeF32, 4096, rows), 1e-6)
	})
}

// BenchmarkBackendCpyF16VsCopy converts f32 to f16 (4 bytes read, 2
// written per element).
func BenchmarkBackendCpyF16VsCopy(b *testing.B) {
	benchVsCopy(b, 6, func(ctx *runtime.Context, rows int64) *runtime.Tensor {
		return ctx.Cpy(ctx.NewTensor2D(runtime.TypeF32, 4096, rows), ctx.NewTensor2D(runtime.TypeF16, 4096, rows))
	})
}
