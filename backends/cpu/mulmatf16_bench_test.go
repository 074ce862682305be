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
	const k = 4096
	for _, m := range []int64{1, 2, 4, 8, 16, 32} {
		b.Run(fmt.Sprintf("m%d", m), func(b *testing.B) {
			ctx := runtime.NewContext()
			out := ctx.MulMat(ctx.NewTensor(runtime.TypeF16, k, k), ctx.NewTensor(runtime.TypeF32, k, m))
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
			be := NewBackend(BackendOptions{Threads: 1})
			defer be.Close()
			best := time.Hour
			for b.Loop() {
				t0 := time.Now()
				if err := be.Compute(g); err != nil {
					b.Fatal(err)
				}
				best = min(best, time.Since(t0))
			}
			b.ReportMetric(float64(best.Microseconds()), "best-µs")
		})
	}
}
