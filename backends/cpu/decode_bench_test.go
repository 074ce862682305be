//go:build unix

package cpu

import (
	"fmt"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gogml/gogml/gallocr"
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
// do not.
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
	best, runs := time.Hour, 0
	c0 := cpuTime()
	for b.Loop() {
		t0 := time.Now()
		if err := be.Compute(g); err != nil {
			b.Fatal(err)
		}
		best = min(best, time.Since(t0))
		runs++
	}
	b.ReportMetric(float64((cpuTime()-c0).Microseconds())/float64(runs), "cpu-µs/op")
	b.ReportMetric(float64(best.Microseconds()), "best-µs")
	b.ReportMetric(float64(typ.RowSize(k)*uint64(n))/best.Seconds()/1e9, "best-GB/s")
}

// cpuTime is the CPU time (user + system) this process has used.
func cpuTime() time.Duration {
	var ru unix.Rusage
	if unix.Getrusage(unix.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
