package cpu_test

import (
	"fmt"
	"testing"

	"github.com/gogml/gogml/backends/cpu"
	"github.com/gogml/gogml/runtime"
)

// BenchmarkMulMat reports GFLOP/s of a q8_0 × f32 MUL_MAT n×n×n through
// the backend. The f32 products are in BenchmarkBackendMulMatVsPeak, the
// element-wise and row ops in the Benchmark*VsCopy benchmarks.
func BenchmarkMulMat(b *testing.B) {
	be := cpu.NewBackend(cpu.BackendOptions{})
	for _, n := range []int64{512, 1024} {
		b.Run(fmt.Sprintf("%s/%d", runtime.TypeQ8_0, n), func(b *testing.B) {
			g := refGraph(b, func(c *runtime.Context) *runtime.Tensor {
				return c.MulMat(c.NewTensor(runtime.TypeQ8_0, n, n), c.NewTensor(runtime.TypeF32, n, n))
			})
			sec := refMeanSeconds(b, refCompute(b, be, g))
			b.ReportMetric(2*float64(n*n*n)/sec/1e9, "GFLOP/s")
		})
	}
}
