package llama

import (
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/gogml/gogml/backends/cpu"
	"github.com/gogml/gogml/gallocr"
	"github.com/gogml/gogml/runtime"
)

// testConfig is smaller than the default so the tests stay fast, with an
// FFN width that is not a multiple of 32 and several heads.
func testConfig() Config {
	c := DefaultConfig()
	c.Vocab, c.Dim, c.Heads, c.Layers, c.FFN, c.Ctx = 96, 64, 4, 2, 172, 32
	c.Seed = 7
	return c
}

func newModel(t *testing.T, w *Weights, threads int, o Options) *Model {
	t.Helper()
	if o.Backend == nil {
		o.Backend = cpu.NewBackend(cpu.BackendOptions{Threads: threads})
	}
	m, err := New(w, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

func relDiff(a, b float64) float64 {
	return math.Abs(a-b) / math.Max(math.Max(math.Abs(a), math.Abs(b)), 1e-30)
}

// TestReference checks the f32 model against the plain-Go forward pass:
// the prompt's logits (all positions) and a few greedy steps, max abs diff
// at most 1e-4.
func TestReference(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  func(*Config)
	}{
		{"small", func(*Config) {}},
		{"default", func(c *Config) { *c = DefaultConfig() }},
		{"one-head", func(c *Config) { c.Heads = 1 }},
		{"gqa", func(c *Config) { c.Heads, c.KVHeads = 4, 2 }},
		{"mqa", func(c *Config) { c.Heads, c.KVHeads = 4, 1 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig()
			tc.cfg(&cfg)
			w := GenerateWeights(cfg)
			m := newModel(t, w, 2, Options{})
			ref := newRefModel(w)
			prompt := []int32{1, 2, 3, 4, 5, 17}
			const tol = 1e-4
			check := func(step int, got []float32, want [][]float64) {
				t.Helper()
				var maxd float64
				for r, row := range want {
					for i, v := range row {
						maxd = math.Max(maxd, math.Abs(float64(got[r*cfg.Vocab+i])-v))
					}
				}
				if maxd > tol || math.IsNaN(maxd) {
					t.Fatalf("step %d: max abs diff %g > %g", step, maxd, tol)
				}
				t.Logf("step %d: max abs diff %.3g", step, maxd)
			}
			got, err := m.Eval(prompt)
			if err != nil {
				t.Fatal(err)
			}
			var want [][]float64
			for _, tok := range prompt {
				want = append(want, ref.forward(tok))
			}
			check(0, got, want)
			for step := 1; step <= 5; step++ {
				next := int32(Argmax(got[len(got)-cfg.Vocab:]))
				if got, err = m.Eval([]int32{next}); err != nil {
					t.Fatal(err)
				}
				check(step, got, [][]float64{ref.forward(next)})
			}
		})
	}
}

func generate(t *testing.T, m *Model, n int) Result {
	t.Helper()
	r, err := m.Generate([]int32{3, 1, 4, 1, 5, 9, 2, 6}, n, nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func sameResult(t *testing.T, a, b Result, tol float64) {
	t.Helper()
	if len(a.Generated) != len(b.Generated) {
		t.Fatalf("generated %v vs %v", a.Generated, b.Generated)
	}
	for i := range a.Generated {
		if a.Generated[i] != b.Generated[i] {
			t.Fatalf("generated %v vs %v", a.Generated, b.Generated)
		}
	}
	if a.Logits.Count != b.Logits.Count || relDiff(a.Logits.Sum, b.Logits.Sum) > tol || relDiff(a.Logits.SumSq, b.Logits.SumSq) > tol {
		t.Fatalf("checksums differ beyond relative %g: %v vs %v", tol, a.Logits, b.Logits)
	}
}

// TestThreads: the logits checksum with 1 worker equals that with N
// workers within relative 1e-5, f32 and q8_0.
func TestThreads(t *testing.T) {
	for _, typ := range []runtime.Type{runtime.TypeF32, runtime.TypeQ8_0} {
		t.Run(typ.String(), func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.WeightType = typ
			w := GenerateWeights(cfg)
			one := generate(t, newModel(t, w, 1, Options{}), 12)
			for _, n := range []int{2, 3, 4} {
				sameResult(t, one, generate(t, newModel(t, w, n, Options{}), 12), 1e-5)
			}
			t.Logf("%v %v", one.Generated, one.Logits)
		})
	}
}

// TestStrategies: the optimized planner gives the same logits as ggml's
// (bit for bit: the same kernels on the same values, only offsets differ)
// and never a larger compute buffer.
func TestStrategies(t *testing.T) {
	for _, typ := range []runtime.Type{runtime.TypeF32, runtime.TypeQ8_0} {
		t.Run(typ.String(), func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.WeightType = typ
			w := GenerateWeights(cfg)
			mg := newModel(t, w, 2, Options{Strategy: gallocr.StrategyGGML})
			mo := newModel(t, w, 2, Options{Strategy: gallocr.StrategyOptimized})
			rg, ro := generate(t, mg, 10), generate(t, mo, 10)
			sameResult(t, rg, ro, 0)
			sg, so := mg.Stats(), mo.Stats()
			if so.ComputeBytes > sg.ComputeBytes || so.ComputeLowerBound > so.ComputeBytes {
				t.Fatalf("optimized %d bytes (lower bound %d) vs ggml %d", so.ComputeBytes, so.ComputeLowerBound, sg.ComputeBytes)
			}
			t.Logf("ggml %d, optimized %d, lower bound %d", sg.ComputeBytes, so.ComputeBytes, so.ComputeLowerBound)
		})
	}
}

// TestSplitWeights: a small max buffer size splits the weights across
// several buffers and changes nothing in the results.
func TestSplitWeights(t *testing.T) {
	cfg := testConfig()
	w := GenerateWeights(cfg)
	bt, err := cpu.NewBufferType(cpu.BufferTypeOptions{MaxSize: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	whole := newModel(t, w, 2, Options{})
	split := newModel(t, w, 2, Options{BufferType: bt})
	if n := split.Stats().WeightsBuffers; n < 2 {
		t.Fatalf("weights in %d buffers, want several", n)
	}
	sameResult(t, generate(t, whole, 6), generate(t, split, 6), 0)
}

// TestQ8Close: the q8_0 model stays close to the f32 one (quantization
// error only).
func TestQ8Close(t *testing.T) {
	cfg := testConfig()
	w := GenerateWeights(cfg)
	cfg.WeightType = runtime.TypeQ8_0
	wq := GenerateWeights(cfg)
	lf, err := newModel(t, w, 2, Options{}).Eval([]int32{1, 2, 3})
	if err != nil {
		t.Fatal(err)
	}
	lq, err := newModel(t, wq, 2, Options{}).Eval([]int32{1, 2, 3})
	if err != nil {
		t.Fatal(err)
	}
	var num, den float64
	for i := range lf {
		d := float64(lf[i] - lq[i])
		num += d * d
		den += float64(lf[i]) * float64(lf[i])
	}
	if nmse := num / den; nmse > 1e-3 || math.IsNaN(nmse) {
		t.Fatalf("q8_0 vs f32 logits: normalized MSE %g > 1e-3", nmse)
	} else {
		t.Logf("q8_0 vs f32 logits: normalized MSE %.3g", nmse)
	}
}

// TestErrors: bad configs and inputs give errors wrapping the sentinels.
func TestErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		mod  func(*Config)
	}{
		{"zero-dim", func(c *Config) { c.Dim = 0 }},
		{"heads", func(c *Config) { c.Heads = 3 }},
		{"odd-head", func(c *Config) { c.Dim, c.Heads = 12, 4 }},
		{"type", func(c *Config) { c.WeightType = runtime.TypeF16 }},
		{"eps", func(c *Config) { c.Eps = 0 }},
		{"head size", func(c *Config) { c.HeadSize = -1 }},
		{"odd head size", func(c *Config) { c.HeadSize = 7 }},
		{"huge head size", func(c *Config) { c.HeadSize = 1 << 20 }},
		{"rope mode", func(c *Config) { c.RopeMode = 1 }},
		{"no-rope step", func(c *Config) { c.NoRopeStep = -4 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := testConfig()
			tc.mod(&c)
			if err := c.Validate(); !errors.Is(err, ErrConfig) {
				t.Fatalf("got %v, want ErrConfig", err)
			}
		})
	}
	biased := testConfig()
	biased.QKVBias = true
	be := cpu.NewBackend(cpu.BackendOptions{Threads: 1})
	defer be.Close()
	if m, err := New(GenerateWeights(biased), Options{Backend: be}); !errors.Is(err, ErrConfig) {
		if m != nil {
			m.Close()
		}
		t.Errorf("New with biases: %v", err)
	}
	m := newModel(t, GenerateWeights(testConfig()), 1, Options{})
	if _, err := m.Eval([]int32{1, 999}); !errors.Is(err, ErrToken) {
		t.Fatalf("bad token: %v", err)
	}
	if _, err := m.Eval(nil); err == nil {
		t.Fatal("empty batch: no error")
	}
	long := make([]int32, m.Config().Ctx+1)
	if _, err := m.Eval(long); !errors.Is(err, ErrContextFull) {
		t.Fatalf("too long: %v", err)
	}
	if _, err := m.Generate([]int32{1}, m.Config().Ctx+1, nil); !errors.Is(err, ErrContextFull) {
		t.Fatalf("generate too long: %v", err)
	}
	if _, err := New(GenerateWeights(testConfig()), Options{}); !errors.Is(err, ErrConfig) {
		t.Fatalf("no backend: %v", err)
	}
}

// badSampler picks a token outside the vocabulary.
type badSampler struct{}

func (badSampler) Sample([]float32) (int32, error) { return 1 << 20, nil }

// TestGenerateWith: a sampler picks the tokens (each fed back), a
// sampler that picks outside the vocabulary is an error, nil is greedy.
func TestGenerateWith(t *testing.T) {
	m := newModel(t, GenerateWeights(testConfig()), 1, Options{})
	greedy, err := m.Generate([]int32{1, 2}, 6, nil)
	if err != nil {
		t.Fatal(err)
	}
	same, err := m.GenerateWith([]int32{1, 2}, 6, nil, nil)
	if err != nil || fmt.Sprint(same.Generated) != fmt.Sprint(greedy.Generated) {
		t.Fatalf("nil sampler: %v %v, want %v", same.Generated, err, greedy.Generated)
	}
	var fed []int32
	seq := []int32{5, 9, 11, 2, 7, 3}
	i := 0
	r, err := m.GenerateWith([]int32{1, 2}, 6, samplerFunc(func([]float32) (int32, error) { i++; return seq[i-1], nil }),
		func(s Step) { fed = append(fed, s.Next) })
	if err != nil || fmt.Sprint(r.Generated) != fmt.Sprint(seq) || fmt.Sprint(fed) != fmt.Sprint(seq) {
		t.Fatalf("generated %v, steps %v (%v), want %v", r.Generated, fed, err, seq)
	}
	if _, err := m.GenerateWith([]int32{1}, 2, badSampler{}, nil); !errors.Is(err, ErrToken) {
		t.Errorf("bad sampler: %v", err)
	}
}

type samplerFunc func([]float32) (int32, error)

func (f samplerFunc) Sample(l []float32) (int32, error) { return f(l) }
