package llama

import (
	"math"
	"testing"

	"github.com/gogml/gogml/runtime"
)

// TestDeviceBackends runs the model on every GPU backend this machine
// opens (skipped where none does; OpenGL fails instead when built in and
// GOGML_REQUIRE_GL=1) and compares its logits, step by step
// on the same tokens, with the CPU backend's: for f32 weights max abs diff
// at most 1e-3 (device kernels may sum in another order); for q8_0 weights
// a normalized mean squared error of at most 5e-4 per step, the suite's
// quantized bound (the CPU rounds activations to q8_0 as ggml does, a
// device may multiply them in f32).
func TestDeviceBackends(t *testing.T) {
	for _, o := range deviceOpeners {
		for _, typ := range []runtime.Type{runtime.TypeF32, runtime.TypeQ8_0} {
			t.Run(o.name+"/"+typ.String(), func(t *testing.T) {
				be := o.openOrSkip(t)
				defer be.Close()
				cfg := DefaultConfig()
				cfg.WeightType = typ
				w := GenerateWeights(cfg)
				dev, err := New(w, Options{Backend: be})
				if err != nil {
					t.Fatal(err)
				}
				defer dev.Close()
				host := newModel(t, w, 0, Options{})
				batch := []int32{1, 2, 3, 4, 5, 6, 7, 8}
				var worst float64
				for step := 0; step < 8; step++ {
					a, err := host.Eval(batch)
					if err != nil {
						t.Fatal(err)
					}
					b, err := dev.Eval(batch)
					if err != nil {
						t.Fatal(err)
					}
					var num, den float64
					for i := range a {
						d := math.Abs(float64(a[i] - b[i]))
						num += d * d
						den += float64(a[i]) * float64(a[i])
						if typ == runtime.TypeF32 && !(d <= 1e-3) {
							t.Fatalf("step %d logit %d: cpu %g, %s %g", step, i, a[i], be.Name(), b[i])
						}
						worst = math.Max(worst, d)
					}
					if e := num / den; typ != runtime.TypeF32 && !(e <= 5e-4) {
						t.Fatalf("step %d: NMSE %.3g against the CPU exceeds 5e-4", step, e)
					}
					batch = []int32{int32(Argmax(a[len(a)-cfg.Vocab:]))}
				}
				t.Logf("%s vs CPU: max abs diff %.3g", be.Name(), worst)
			})
		}
	}
}
