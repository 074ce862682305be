package llama

import (
	"math"
	"os"
	"testing"

	"github.com/gogml/gogml/backends/cpu"
	"github.com/gogml/gogml/backends/cuda"
	"github.com/gogml/gogml/backends/opengl"
	"github.com/gogml/gogml/runtime"
)

// TestDeviceGGUF loads write-demo files onto every GPU backend this
// machine opens (placed with AllocCtxTensors, uploaded from the mapping)
// and compares the prompt's logits with the CPU's mapped model, within
// TestDeviceBackends' bounds.
func TestDeviceGGUF(t *testing.T) {
	for _, o := range deviceOpeners {
		for _, tc := range []struct {
			name string
			typ  runtime.Type
			kvh  int
		}{{"f32", runtime.TypeF32, 0}, {"q8_0", runtime.TypeQ8_0, 0}, {"f32-gqa", runtime.TypeF32, 2},
			{"bf16", runtime.TypeBF16, 0}, {"q4_1", runtime.TypeQ4_1, 0}, {"q5_0", runtime.TypeQ5_0, 0}, {"q5_1", runtime.TypeQ5_1, 0},
			{"q2_K", runtime.TypeQ2_K, 0}, {"q3_K", runtime.TypeQ3_K, 0}, {"q4_K", runtime.TypeQ4_K, 0}, {"q5_K", runtime.TypeQ5_K, 0}, {"q6_K", runtime.TypeQ6_K, 0}} {
			t.Run(o.name+"/"+tc.name, func(t *testing.T) {
				be := o.openOrSkip(t)
				defer be.Close()
				cfg := testConfig()
				cfg.KVHeads = tc.kvh
				// Every matrix row a whole number of the type's blocks.
				if bs := int(tc.typ.BlockSize()); bs > 1 {
					cfg.Dim, cfg.FFN = max(cfg.Dim, bs), (cfg.FFN+bs-1)/bs*bs
				}
				path := writeDemo(t, GenerateWeights(cfg), tc.typ)
				var done, total uint64
				dev, err := LoadGGUF(path, LoadOptions{Options: Options{Backend: be}, Progress: func(d, n uint64) { done, total = d, n }})
				if err != nil {
					t.Fatal(err)
				}
				defer dev.Close()
				if total == 0 || done != total {
					t.Errorf("progress ended at %d of %d", done, total)
				}
				cb := cpu.NewBackend(cpu.BackendOptions{})
				defer cb.Close()
				host, err := LoadGGUF(path, LoadOptions{Options: Options{Backend: cb}})
				if err != nil {
					t.Fatal(err)
				}
				defer host.Close()
				prompt := []int32{1, 2, 3, 4, 5}
				a, err := host.Eval(prompt)
				if err != nil {
					t.Fatal(err)
				}
				b, err := dev.Eval(prompt)
				if err != nil {
					t.Fatal(err)
				}
				var num, den, worst float64
				for i := range a {
					d := math.Abs(float64(a[i] - b[i]))
					num, den, worst = num+d*d, den+float64(a[i])*float64(a[i]), math.Max(worst, d)
				}
				if tc.typ == runtime.TypeF32 && !(worst <= 1e-3) {
					t.Errorf("max abs diff %g against the CPU", worst)
				}
				if e := num / den; !(e <= 5e-4) {
					t.Errorf("NMSE %.3g against the CPU", e)
				}
				t.Logf("%s vs CPU: max abs diff %.3g, NMSE %.3g", be.Name(), worst, num/den)
			})
		}
	}
}

// deviceOpener opens one GPU backend for the device tests.
type deviceOpener struct {
	name string
	open func() (runtime.Backend, error)
}

var deviceOpeners = []deviceOpener{
	{"cuda", func() (runtime.Backend, error) { return cuda.New(0) }},
	{"opengl", func() (runtime.Backend, error) { return opengl.New(opengl.Config{}) }},
}

// openOrSkip opens the backend, or skips the test where this machine has
// none (OpenGL fails instead when built in and GOGML_REQUIRE_GL=1).
func (o deviceOpener) openOrSkip(t *testing.T) runtime.Backend {
	t.Helper()
	be, err := o.open()
	if err != nil {
		if o.name == "opengl" && opengl.Compiled && os.Getenv(opengl.RequireEnv) == "1" {
			t.Fatalf("%s=1 but no OpenGL device: %v", opengl.RequireEnv, err)
		}
		t.Skipf("%s not available: %v", o.name, err)
	}
	return be
}
