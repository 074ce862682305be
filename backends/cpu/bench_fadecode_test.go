package cpu_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/gogml/gogml/backends/cpu"
	"github.com/gogml/gogml/runtime"
)

// BenchmarkFlashAttnDecode times FLASH_ATTN_EXT of one q row over 4096
// f16 keys with 32 q heads on 8 K/V heads (benchvsggml's fa_n1_kv4096).
// cpu-us/op is the process's CPU time per run, the figure to read on a
// shared machine, where the wall time mostly measures the other work.
func BenchmarkFlashAttnDecode(b *testing.B) {
	benchThreads(b, func(ctx *runtime.Context) *runtime.Tensor {
		return ctx.FlashAttnExt(ctx.NewTensor3D(runtime.TypeF32, 128, 1, 32),
			ctx.NewTensor3D(runtime.TypeF16, 128, 4096, 8), ctx.NewTensor3D(runtime.TypeF16, 128, 4096, 8),
			ctx.NewTensor2D(runtime.TypeF16, 4096, 1), float32(1/math.Sqrt(128)), 0, 0)
	})
}

// BenchmarkSwiglu times SWIGLU split on f32 [4096, 512] (benchvsggml's
// swiglu), as BenchmarkFlashAttnDecode.
func BenchmarkSwiglu(b *testing.B) {
	benchThreads(b, func(ctx *runtime.Context) *runtime.Tensor {
		return ctx.SwigluSplit(ctx.NewTensor2D(runtime.TypeF32, 4096, 512), ctx.NewTensor2D(runtime.TypeF32, 4096, 512))
	})
}

// benchThreads times build's node on 1 and 2 workers, reporting the CPU
// time per run next to the wall time.
func benchThreads(b *testing.B, build func(ctx *runtime.Context) *runtime.Tensor) {
	for _, th := range []int{1, 2} {
		b.Run(fmt.Sprintf("threads%d", th), func(b *testing.B) {
			be := cpu.NewBackend(cpu.BackendOptions{Threads: th})
			defer be.Close()
			g := refGraph(b, build)
			fillPositions(b, g)
			f := refCompute(b, be, g)
			f()
			b.ResetTimer()
			c0 := refCPUSeconds()
			for range b.N {
				f()
			}
			b.ReportMetric((refCPUSeconds()-c0)/float64(b.N)*1e6, "cpu-us/op")
		})
	}
}
