package llama

import (
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/gogml/gogml/backends/cpu"
)

// BenchmarkDecodeGGUF measures one generated token of the GGUF file named
// by GOGML_DECODE_BENCH_MODEL (skipped without it) as gogml run -model
// does (context 512, a 128-token prompt, then tokens at positions
// 128..191 over and over) on one worker, its weights repacked unless
// GOGML_DECODE_BENCH_NOREPACK is set; one op is one token. It reports the
// process's CPU time per token beside the wall time: on a shared machine
// the steadier of the two. For profiling the per-token overhead of the
// small decoder (benchvsllama's -dir keeps its files).
func BenchmarkDecodeGGUF(b *testing.B) {
	path := os.Getenv("GOGML_DECODE_BENCH_MODEL")
	if path == "" {
		b.Skip("GOGML_DECODE_BENCH_MODEL not set")
	}
	be := cpu.NewBackend(cpu.BackendOptions{Threads: 1})
	defer be.Close()
	m, err := LoadGGUF(path, LoadOptions{Options: Options{Backend: be}, Ctx: 512, NoRepack: os.Getenv("GOGML_DECODE_BENCH_NOREPACK") != ""})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	prompt := make([]int32, 128)
	for i := range prompt {
		prompt[i] = int32(i % m.Config().Vocab)
	}
	restart := func() int32 {
		m.Reset()
		lg, err := m.EvalLast(prompt)
		if err != nil {
			b.Fatal(err)
		}
		return int32(Argmax(lg))
	}
	var one [1]int32
	one[0] = restart()
	var lg []float32
	b.ReportAllocs()
	c0 := cpuTime(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if m.nPast >= 128+64 {
			m.nPast = 128 // the cache's first 128 slots still hold the prompt
		}
		lg, err = m.eval(lg, one[:], true) // as Generate: into the last logits
		if err != nil {
			b.Fatal(err)
		}
		one[0] = int32(Argmax(lg))
	}
	b.StopTimer()
	b.ReportMetric(float64((cpuTime(b)-c0).Nanoseconds())/float64(b.N), "cpu-ns/op")
}

// cpuTime is the process's user and system time so far: on a shared
// machine a steadier measure of a token's cost than the wall clock.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
