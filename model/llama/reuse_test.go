package llama

import (
	"math"
	"testing"

	"github.com/gogml/gogml/runtime"
)

// TestGraphReuse: a generation that reuses its graphs (slot views moved,
// masks rebound, the attention window narrowed) gives the same logits,
// bit for bit, as one that builds every graph afresh, across attention
// windows (the context is longer than a few attnPad, and not a multiple
// of it), and keeps one decode graph.
func TestGraphReuse(t *testing.T) {
	for _, typ := range []runtime.Type{runtime.TypeF32, runtime.TypeQ8_0} {
		t.Run(typ.String(), func(t *testing.T) {
			cfg := testConfig()
			cfg.Ctx = 3*attnPad + 8
			cfg.WeightType = typ
			w := GenerateWeights(cfg)
			reused := newModel(t, w, 2, Options{})
			fresh := newModel(t, w, 2, Options{})
			prompt := []int32{5, 9, 11}
			steps := cfg.Ctx - len(prompt) + 1 // the prompt, then one token a step to the last slot
			batch := prompt
			for i := 0; i < steps; i++ {
				a, err := reused.EvalLast(batch)
				if err != nil {
					t.Fatal(err)
				}
				fresh.steps, fresh.allocated, fresh.allocated1 = nil, nil, nil // build and place again
				b, err := fresh.EvalLast(batch)
				if err != nil {
					t.Fatal(err)
				}
				for j := range a {
					if math.Float32bits(a[j]) != math.Float32bits(b[j]) {
						t.Fatalf("step %d (position %d): logit %d is %v reused, %v built afresh", i, reused.NPast()-1, j, a[j], b[j])
					}
				}
				batch = []int32{int32(Argmax(a))}
			}
			// The prompt's graph and the decode graph.
			if want := 2; len(reused.steps) != want {
				t.Errorf("kept %d graphs, want %d", len(reused.steps), want)
			}
			if _, err := reused.EvalLast(batch); err == nil {
				t.Error("eval past the context: no error")
			}
		})
	}
}

// TestEvalLast: EvalLast's row is Eval's last row (to float rounding),
// for a batch and for single tokens after it.
func TestEvalLast(t *testing.T) {
	cfg := testConfig()
	w := GenerateWeights(cfg)
	all := newModel(t, w, 2, Options{})
	last := newModel(t, w, 2, Options{})
	batch := []int32{1, 2, 3, 4, 5, 17}
	for step := range 4 {
		a, err := all.Eval(batch)
		if err != nil {
			t.Fatal(err)
		}
		b, err := last.EvalLast(batch)
		if err != nil {
			t.Fatal(err)
		}
		a = a[len(a)-cfg.Vocab:]
		if len(b) != cfg.Vocab {
			t.Fatalf("step %d: EvalLast gave %d values, want %d", step, len(b), cfg.Vocab)
		}
		for i := range a {
			if d := math.Abs(float64(a[i] - b[i])); d > 1e-5*math.Max(1, math.Abs(float64(a[i]))) {
				t.Fatalf("step %d: logit %d is %v from Eval, %v from EvalLast", step, i, a[i], b[i])
			}
		}
		batch = []int32{int32(Argmax(a))}
	}
}
