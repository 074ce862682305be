package cpukernels

import (
	"math"
	"testing"

	"github.com/gogml/gogml/runtime"
)

// partialCase is one small input of an op whose CPU kernel once covered
// only some of ggml's test-backend-ops cases (types, layouts, modes).
type partialCase struct {
	name  string
	build func(t *testing.T, c *runtime.Context, m HostMem) *runtime.Tensor
	want  []float32
	tol   float64
}

func runPartial(t *testing.T, tests []partialCase) {
	t.Helper()
	for _, tc := range tests {
		for _, nth := range []int{1, 3} {
			t.Run(tc.name, func(t *testing.T) {
				got := run(t, nth, func(c *runtime.Context, m HostMem) *runtime.Tensor { return tc.build(t, c, m) })
				if !near(got, tc.want, tc.tol) {
					t.Fatalf("nth %d: got %v, want %v", nth, got, tc.want)
				}
			})
		}
	}
}

// TestGluHalfTypes checks the GLU functions on f16 and bf16 rows: ggml
// widens to float32, applies the f32 formula and rounds to the row type.
func TestGluHalfTypes(t *testing.T) {
	f16, bf16 := runtime.TypeF16, runtime.TypeBF16
	bf := func(x float64) float32 { return BF16ToF32(F32ToBF16(float32(x))) }
	h := func(x float64) float32 { return halfRound(float32(x)) }
	runPartial(t, []partialCase{
		{"reglu bf16", func(t *testing.T, c *runtime.Context, m HostMem) *runtime.Tensor {
			return c.Reglu(set(t, m, c.NewTensor(bf16, 4, 1), []float32{1.5, -2, 3, 0.5}))
		}, []float32{4.5, 0}, 0},
		{"swiglu bf16 swapped", func(t *testing.T, c *runtime.Context, m HostMem) *runtime.Tensor {
			return c.Glu(set(t, m, c.NewTensor(bf16, 4, 1), []float32{1, -2, 3, 0.5}), runtime.GluSwiglu, true)
		}, []float32{bf(silu(3)), bf(silu(0.5) * -2)}, 0},
		{"swiglu_oai f16", func(t *testing.T, c *runtime.Context, m HostMem) *runtime.Tensor {
			a := set(t, m, c.NewTensor(f16, 2), []float32{9, 1})
			return c.SwigluOai(a, set(t, m, c.NewTensor(f16, 2), []float32{-9, 0.5}), 2, 4)
		}, []float32{h(4 / (1 + math.Exp(-8)) * (-4 + 1)), h(1 / (1 + math.Exp(-2)) * 1.5)}, 1e-6},
		{"swiglu_clamp bf16", func(t *testing.T, c *runtime.Context, m HostMem) *runtime.Tensor {
			a := set(t, m, c.NewTensor(bf16, 2), []float32{9, -1})
			return c.SwigluClamp(a, set(t, m, c.NewTensor(bf16, 2), []float32{-9, 0.5}), 4)
		}, []float32{bf(silu(4) * -4), bf(silu(-1) * 0.5)}, 1e-6},
	})
}
