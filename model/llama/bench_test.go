package llama

import (
	"fmt"
	"testing"

	"github.com/gogml/gogml/backends/cpu"
	"github.com/gogml/gogml/runtime"
)

// BenchmarkGenerate measures single-token generation of the default model
// (what gogml run does) and reports tokens/s; one op is one token.
func BenchmarkGenerate(b *testing.B) {
	for _, typ := range []runtime.Type{runtime.TypeF32, runtime.TypeQ8_0} {
		for _, threads := range []int{1, 0} {
			name := fmt.Sprintf("%s/threads=%d", typ, threads)
			if threads == 0 {
				name = fmt.Sprintf("%s/threads=all", typ)
			}
			b.Run(name, func(b *testing.B) {
				cfg := DefaultConfig()
				cfg.WeightType = typ
				m, err := New(GenerateWeights(cfg), Options{Backend: cpu.NewBackend(cpu.BackendOptions{Threads: threads})})
				if err != nil {
					b.Fatal(err)
				}
				defer m.Close()
				prompt := []int32{1, 2, 3, 4, 5, 6, 7, 8}
				const n = 32
				var secs float64
				var toks int
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					r, err := m.Generate(prompt, n, nil)
					if err != nil {
						b.Fatal(err)
					}
					for _, d := range r.TokenTimes {
						secs += d.Seconds()
					}
					toks += len(r.TokenTimes)
				}
				b.ReportMetric(float64(toks)/secs, "tokens/s")
			})
		}
	}
}
