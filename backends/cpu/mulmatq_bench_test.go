package cpu

import (
	"fmt"
	"testing"

	"github.com/gogml/gogml/gallocr"
	"github.com/gogml/gogml/runtime"
)

// BenchmarkMulMatQuantPaths reports GFLOP/s of a q8_0 MUL_MAT
// (1024×1024 weights) on the integer-dot path and on the dequantizing
// GEMM path for several activation row counts m: the data behind qMaxM.
func BenchmarkMulMatQuantPaths(b *testing.B) {
	const n, k = 1024, 1024
	for _, m := range []int64{1, 8, 32, 64, 128, 256} {
		for _, path := range []string{"int8", "dequant"} {
			b.Run(fmt.Sprintf("m%d/%s", m, path), func(b *testing.B) {
				ctx := runtime.NewContext()
				out := ctx.MulMat(ctx.NewTensor(runtime.TypeQ8_0, k, n), ctx.NewTensor(runtime.TypeF32, k, m))
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
				be.quantMaxM = 1 << 62
				if path == "dequant" {
					be.quantMaxM = 0
				}
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
