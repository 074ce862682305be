package cpu_test

import (
	"fmt"
	"testing"

	"github.com/gogml/gogml/backends/cpu"
	"github.com/gogml/gogml/gallocr"
	"github.com/gogml/gogml/runtime"
)

// BenchmarkMulMatQuant reports GFLOP/s of quantized MUL_MATs (1024×1024
// weights) for several activation row counts m, per second of wall time
// and per second of the process's CPU time (cpu-GFLOP/s, steadier on a
// shared machine).
func BenchmarkMulMatQuant(b *testing.B) {
	const n, k = 1024, 1024
	for _, typ := range []runtime.Type{runtime.TypeQ8_0, runtime.TypeQ4_0, runtime.TypeQ5_0, runtime.TypeQ4_1, runtime.TypeQ5_1, runtime.TypeQ2_K, runtime.TypeQ3_K, runtime.TypeQ4_K, runtime.TypeQ6_K, runtime.TypeQ5_K} {
		for _, m := range []int64{1, 8, 16, 32, 64, 256, 512} {
			b.Run(fmt.Sprintf("%s/m%d", typ, m), func(b *testing.B) { benchMulMatQuant(b, typ, n, k, m) })
		}
	}
}

// BenchmarkMulMatQuantPrompt is BenchmarkMulMatQuant at a 7B model's
// shape (4096×4096 weights) and a 128-token prompt, as llama-bench -p 128.
func BenchmarkMulMatQuantPrompt(b *testing.B) {
	for _, typ := range []runtime.Type{runtime.TypeQ4_0, runtime.TypeQ4_K, runtime.TypeQ5_K, runtime.TypeQ6_K} {
		b.Run(fmt.Sprintf("%s/m128", typ), func(b *testing.B) { benchMulMatQuant(b, typ, 4096, 4096, 128) })
	}
}

// benchMulMatQuant runs one product of n×k weights of type typ with m
// activation rows and reports its GFLOP/s.
func benchMulMatQuant(b *testing.B, typ runtime.Type, n, k, m int64) {
	ctx := runtime.NewContext()
	out := ctx.MulMat(ctx.NewTensor(typ, k, n), ctx.NewTensor(runtime.TypeF32, k, m))
	buf, err := gallocr.AllocCtxTensors(ctx, cpu.DefaultBufferType())
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
	be := cpu.NewBackend(cpu.BackendOptions{})
	defer be.Close()
	run := refCompute(b, be, g)
	b.ResetTimer()
	cpu0 := refCPUSeconds()
	for i := 0; i < b.N; i++ {
		run()
	}
	flops := 2 * float64(m*n*k) * float64(b.N)
	b.ReportMetric(flops/b.Elapsed().Seconds()/1e9, "GFLOP/s")
	if c := refCPUSeconds() - cpu0; c > 0 {
		b.ReportMetric(flops/c/1e9, "cpu-GFLOP/s")
	}
}
