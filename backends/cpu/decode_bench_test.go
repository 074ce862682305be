//go:build unix

package cpu

import (
	"fmt"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gogml/gogml/gallocr"
	cpukernels "github.com/gogml/gogml/internal/kernels/cpukernels"
	"github.com/gogml/gogml/internal/kernels/cpukernels/vec"
	"github.com/gogml/gogml/runtime"
)

// BenchmarkMulMatDecodeLarge runs one activation row (decode) through
// MUL_MATs of the decoder of docs/llama-bench.md (k = 2048) on 1 and 2
// workers: n = 1024 weight rows (2–4 MiB, in cache) and n = 32000 (the
// output layer, 36–131 MiB, streamed from memory). It reports the fastest
// run (best-µs) and its read rate (best-GB/s), and the CPU time per run
// (cpu-µs/op): on a shared machine the wall time says little, while the
// CPU time of 2 workers against 1 shows what the second one costs. The
// BenchmarkMulMatDecode shapes (4096², 9–32 MiB) mostly fit in the cache;
// these show the q4_0 and q8_0 dots against the k-quants' once the weights
// do not. Each run is followed by the reference of the same run: the same
// workers summing as many bytes of f32 (vec.Sum64, a sequential read that
// prefetches), reported as read-GB/s and the product's share of it
// (of-read): what the dot kernels leave of the memory's read rate, the
// figure that decides a decode token (RATIONALE.md, "Decode time is the
// row dots' streaming").
func BenchmarkMulMatDecodeLarge(b *testing.B) {
	const k = 2048
	for _, typ := range []runtime.Type{runtime.TypeQ4_0, runtime.TypeQ8_0, runtime.TypeQ4_K, runtime.TypeF16} {
		for _, n := range []int64{1024, 32000} {
			for _, th := range []int{1, 2} {
				b.Run(fmt.Sprintf("%s/n%d/t%d", typ, n, th), func(b *testing.B) {
					benchDecodeProduct(b, typ, k, n, th)
				})
			}
		}
	}
}

func benchDecodeProduct(b *testing.B, typ runtime.Type, k, n int64, threads int) {
	ctx := runtime.NewContext()
	out := ctx.MulMat(ctx.NewTensor(typ, k, n), ctx.NewTensor(runtime.TypeF32, k, 1))
	buf, err := gallocr.AllocCtxTensors(ctx, DefaultBufferType())
	if err != nil {
		b.Fatal(err)
	}
	defer buf.Free()
	if err := buf.Clear(0x11); err != nil { // f16 0x1111: small normal scales
		b.Fatal(err)
	}
	g := runtime.NewGraph()
	if err := g.BuildForwardExpand(out); err != nil {
		b.Fatal(err)
	}
	be := NewBackend(BackendOptions{Threads: threads})
	defer be.Close()
	bytes := typ.RowSize(k) * uint64(n)
	ref := make([]float32, bytes/4)
	for i := range ref {
		ref[i] = 1 // touched: the reference reads faulted-in pages, as the product does
	}
	read := func(ith, nth int) error {
		r0, r1 := cpukernels.RowRange(int64(len(ref)), ith, nth)
		_ = vec.Sum64(ref[r0:r1])
		return nil
	}
	best, bestRead, runs := time.Hour, time.Hour, 0
	var cpu time.Duration
	for b.Loop() {
		c0, t0 := cpuTime(), time.Now()
		if err := be.Compute(g); err != nil {
			b.Fatal(err)
		}
		best = min(best, time.Since(t0))
		cpu += cpuTime() - c0
		runs++
		t0 = time.Now()
		if err := be.pool.run(threads, read); err != nil {
			b.Fatal(err)
		}
		bestRead = min(bestRead, time.Since(t0))
	}
	gbs := func(d time.Duration) float64 { return float64(bytes) / d.Seconds() / 1e9 }
	b.ReportMetric(float64(cpu.Microseconds())/float64(runs), "cpu-µs/op")
	b.ReportMetric(float64(best.Microseconds()), "best-µs")
	b.ReportMetric(gbs(best), "best-GB/s")
	b.ReportMetric(gbs(bestRead), "read-GB/s")
	b.ReportMetric(gbs(best)/gbs(bestRead), "of-read")
}

// cpuTime is the CPU time (user + system) this process has used.
func cpuTime() time.Duration {
	var ru unix.Rusage
	if unix.Getrusage(unix.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkMulMatGemv is BenchmarkMulMatDecodeLarge at the decode shape of
// docs/performance.md: one activation row through 4096×4096 f32, f16 and
// bf16 weights (64, 32 and 32 MiB, streamed from memory) on 1 and 2
// workers, with the same figures and read reference.
func BenchmarkMulMatGemv(b *testing.B) {
	const k, n = 4096, 4096
	for _, typ := range []runtime.Type{runtime.TypeF32, runtime.TypeF16, runtime.TypeBF16} {
		for _, th := range []int{1, 2} {
			b.Run(fmt.Sprintf("%s/t%d", typ, th), func(b *testing.B) {
				benchDecodeProduct(b, typ, k, n, th)
			})
		}
	}
}
