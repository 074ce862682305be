package cpu

import (
	"fmt"
	"testing"

	"github.com/gogml/gogml/gallocr"
	"github.com/gogml/gogml/runtime"
)

// BenchmarkMulMatQuant reports GFLOP/s of quantized MUL_MATs (1024×1024
// weights) for several activation row counts m.
func BenchmarkMulMatQuant(b *testing.B) {
	const n, k = 1024, 1024
	for _, typ := range []runtime.Type{runtime.TypeQ8_0, runtime.TypeQ4_0, runtime.TypeQ5_0, runtime.TypeQ4_1, runtime.TypeQ5_1, runtime.TypeQ2_K, runtime.TypeQ3_K, runtime.TypeQ4_K, runtime.TypeQ6_K, runtime.TypeQ5_K} {
		for _, m := range []int64{1, 8, 64, 256} {
			b.Run(fmt.Sprintf("%s/m%d", typ, m), func(b *testing.B) {
				ctx := runtime.NewContext()
				out := ctx.MulMat(ctx.NewTensor(typ, k, n), ctx.NewTensor(runtime.TypeF32, k, m))
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
				be := NewBackend(BackendOptions{})
				defer be.Close()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if err := be.Compute(g); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(2*float64(m*n*k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}
