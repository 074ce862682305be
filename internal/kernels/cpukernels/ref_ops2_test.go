package cpukernels

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/gogml/gogml/runtime"
)

func silu(x float64) float64 { return x / (1 + math.Exp(-x)) }

// TestOps2 checks the ops of ref_ops2.go on small inputs worked by hand.
func TestOps2(t *testing.T) {
	f32, i32 := runtime.TypeF32, runtime.TypeI32
	tests := []struct {
		name  string
		build func(t *testing.T, c *runtime.Context, m HostMem) *runtime.Tensor
		want  []float32
	}{
		{"swiglu", func(t *testing.T, c *runtime.Context, m HostMem) *runtime.Tensor {
			return c.Swiglu(set(t, m, c.NewTensor(f32, 4, 1), []float32{1, -2, 3, 0.5}))
		}, []float32{float32(silu(1) * 3), float32(silu(-2) * 0.5)}},
		{"swiglu swapped", func(t *testing.T, c *runtime.Context, m HostMem) *runtime.Tensor {
			return c.Glu(set(t, m, c.NewTensor(f32, 4, 1), []float32{1, -2, 3, 0.5}), runtime.GluSwiglu, true)
		}, []float32{float32(silu(3) * 1), float32(silu(0.5) * -2)}},
		{"reglu split", func(t *testing.T, c *runtime.Context, m HostMem) *runtime.Tensor {
			a := set(t, m, c.NewTensor(f32, 2), []float32{-1, 2})
			return c.GluSplit(a, set(t, m, c.NewTensor(f32, 2), []float32{5, 7}), runtime.GluReglu)
		}, []float32{0, 14}},
		{"swiglu_oai", func(t *testing.T, c *runtime.Context, m HostMem) *runtime.Tensor {
			a := set(t, m, c.NewTensor(f32, 2), []float32{9, 1})
			return c.SwigluOai(a, set(t, m, c.NewTensor(f32, 2), []float32{-9, 0.5}), 2, 4)
		}, []float32{float32(4 / (1 + math.Exp(-8)) * (-4 + 1)), float32(1 / (1 + math.Exp(-2)) * 1.5)}},
		{"swiglu_clamp", func(t *testing.T, c *runtime.Context, m HostMem) *runtime.Tensor {
			a := set(t, m, c.NewTensor(f32, 2), []float32{9, -1})
			return c.SwigluClamp(a, set(t, m, c.NewTensor(f32, 2), []float32{-9, 0.5}), 4)
		}, []float32{float32(silu(4) * -4), float32(silu(-1) * 0.5)}},
		{"set_rows i64", func(t *testing.T, c *runtime.Context, m HostMem) *runtime.Tensor {
			a := set(t, m, c.NewTensor(f32, 2, 3), []float32{0, 0, 0, 0, 0, 0})
			v := set(t, m, c.NewTensor(f32, 2, 2), []float32{1, 2, 3, 4})
			ids := c.NewTensor(runtime.TypeI64, 2)
			b := m.Alloc(ids)
			binary.LittleEndian.PutUint64(b, 2)
			binary.LittleEndian.PutUint64(b[8:], 0)
			return c.SetRows(a, v, ids)
		}, []float32{3, 4, 0, 0, 1, 2}},
		{"soft_max sinks", func(t *testing.T, c *runtime.Context, m HostMem) *runtime.Tensor {
			sm := c.SoftMax(set(t, m, c.NewTensor(f32, 2), []float32{0, 0}))
			return c.SoftMaxAddSinks(sm, set(t, m, c.NewTensor(f32, 1), []float32{float32(math.Log(2))}))
		}, []float32{0.25, 0.25}},
		{"sum", func(t *testing.T, c *runtime.Context, m HostMem) *runtime.Tensor {
			return c.Sum(set(t, m, c.NewTensor(f32, 2, 2), []float32{1, 2, 3, 4.5}))
		}, []float32{10.5}},
		{"l2_norm", func(t *testing.T, c *runtime.Context, m HostMem) *runtime.Tensor {
			return c.L2Norm(set(t, m, c.NewTensor(f32, 2, 2), []float32{3, 4, 0.1, 0}), 0.5)
		}, []float32{0.6, 0.8, 0.2, 0}},
		{"argsort desc", func(t *testing.T, c *runtime.Context, m HostMem) *runtime.Tensor {
			return c.Argsort(set(t, m, c.NewTensor(f32, 4), []float32{1, 5, -2, 3}), runtime.SortDesc)
		}, []float32{1, 3, 0, 2}},
		{"top_k", func(t *testing.T, c *runtime.Context, m HostMem) *runtime.Tensor {
			return c.TopK(set(t, m, c.NewTensor(f32, 4), []float32{1, 5, -2, 3}), 3)
		}, []float32{3, 1, 0}}, // ggml swaps the first two
		{"add_id", func(t *testing.T, c *runtime.Context, m HostMem) *runtime.Tensor {
			a := set(t, m, c.NewTensor(f32, 2, 2), []float32{1, 1, 1, 1})
			b := set(t, m, c.NewTensor(f32, 2, 3), []float32{10, 20, 30, 40, 50, 60})
			return c.AddId(a, b, setI32(m, c.NewTensor(i32, 2), []int32{2, 0}))
		}, []float32{51, 61, 11, 21}},
		{"cpy f32 to i32", func(t *testing.T, c *runtime.Context, m HostMem) *runtime.Tensor {
			a := set(t, m, c.NewTensor(f32, 4), []float32{1.9, -1.9, float32(math.NaN()), 3e9})
			return c.Cpy(a, c.NewTensor(i32, 4))
		}, []float32{1, -1, math.MinInt32, math.MinInt32}},
	}
	for _, tc := range tests {
		for _, nth := range []int{1, 3} {
			t.Run(tc.name, func(t *testing.T) {
				got := run(t, nth, func(c *runtime.Context, m HostMem) *runtime.Tensor { return tc.build(t, c, m) })
				if !near(got, tc.want, 1e-6) {
					t.Fatalf("nth %d: got %v, want %v", nth, got, tc.want)
				}
			})
		}
	}
}
