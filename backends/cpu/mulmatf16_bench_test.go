package cpu

import (
	"fmt"
	"testing"
	"time"

	"github.com/gogml/gogml/gallocr"
	"github.com/gogml/gogml/runtime"
)

// BenchmarkMulMatF16 runs f16 × f32 MUL_MATs on 4096×4096 weights with a
// few activation rows m through the backend (one worker) and reports the
// fastest run (best-µs), less exposed to the other work of a shared
// machine than the mean.
func BenchmarkMulMatF16(b *testing.B) {
	benchMulMatBest(b, []runtime.Type{runtime.TypeF16}, []int64{1, 2, 4, 8, 16, 32})
}

// BenchmarkMulMatDecode is BenchmarkMulMatF16 for the types whose row dots
// have AVX-512 kernels, at the decode and prompt shapes of
// docs/performance.md (m = 1 and 32).
func BenchmarkMulMatDecode(b *testing.B) {
	benchMulMatBest(b, []runtime.Type{runtime.TypeQ8_0, runtime.TypeQ4_0, runtime.TypeQ5_0, runtime.TypeQ4_1,
		runtime.TypeQ5_1, runtime.TypeF16}, []int64{1, 32})
}

func benchMulMatBest(b *testing.B, types []runtime.Type, ms []int64) {
	const k = 4096
	for _, typ := range types {
		for _, m := range ms {
			b.Run(fmt.Sprintf("%s/m%d", typ, m), func(b *testing.B) {
				ctx := runtime.NewContext()
				out := ctx.MulMat(ctx.NewTensor(typ, k, k), ctx.NewTensor(runtime.TypeF32, k, m))
				be := NewBackend(BackendOptions{Threads: 1})
				defer be.Close()
				benchBest(b, ctx, out, be)
			})
		}
	}
}

// benchBest allocates ctx's tensors, fills them with 0x3c bytes (finite
// in every type), computes out on be in a b.Loop and reports the fastest
// run (best-µs).
func benchBest(b *testing.B, ctx *runtime.Context, out *runtime.Tensor, be *Backend) {
	buf, err := gallocr.AllocCtxTensors(ctx, DefaultBufferType())
	if err != nil {
		b.Fatal(err)
	}
	defer buf.Free()
	if err := buf.Clear(0x3c); err != nil {
		b.Fatal(err)
	}
	g := runtime.NewGraph()
	if err := g.BuildForwardExpand(out); err != nil {
		b.Fatal(err)
	}
	best := time.Hour
	for b.Loop() {
		t0 := time.Now()
		if err := be.Compute(g); err != nil {
			b.Fatal(err)
		}
		best = min(best, time.Since(t0))
	}
	b.ReportMetric(float64(best.Microseconds()), "best-µs")
}

// BenchmarkMulMatRoundedTall runs test-backend-ops' tall MUL_MAT shape
// (16 f16 weight rows, k = 32) scaled to a million f16 activation rows,
// with the rounded activations staged whole (128 MiB, the path every such
// product took before mulMatRoundedBlocked) and rounded a block at a time,
// side by side; best-µs is the fastest run, and staged-MiB the scratch the
// run left allocated for the activations (0 when blocked).
func BenchmarkMulMatRoundedTall(b *testing.B) {
	const k, n, m = 32, 16, 1 << 20
	for _, staged := range []bool{true, false} {
		b.Run(fmt.Sprintf("staged=%v", staged), func(b *testing.B) {
			ctx := runtime.NewContext()
			out := ctx.MulMat(ctx.NewTensor(runtime.TypeF16, k, n), ctx.NewTensor(runtime.TypeF16, k, m))
			be := NewBackend(BackendOptions{Threads: 2})
			defer be.Close()
			if staged {
				StageRoundedUpTo(be, 1<<40)
			}
			benchBest(b, ctx, out, be)
			b.ReportMetric(float64(cap(be.scratch.q))/(1<<20), "staged-MiB")
		})
	}
}
