package cpukernels

import (
	"math"
	"testing"

	"github.com/gogml/gogml/runtime"
)

// TestOps3 checks the ops of ref_ops3.go on small inputs worked by hand.
func TestOps3(t *testing.T) {
	f32, i32 := runtime.TypeF32, runtime.TypeI32
	in := func(t *testing.T, c *runtime.Context, m HostMem, v []float32, ne ...int64) *runtime.Tensor {
		return set(t, m, c.NewTensor(f32, ne...), v)
	}
	tests := []struct {
		name  string
		build func(t *testing.T, c *runtime.Context, m HostMem) *runtime.Tensor
		want  []float32
	}{
		{"argmax ties take the last", func(t *testing.T, c *runtime.Context, m HostMem) *runtime.Tensor {
			return c.Argmax(in(t, c, m, []float32{1, 3, 3, 0, -1, -2, -5, -1}, 4, 2))
		}, []float32{2, 3}},
		{"pad_reflect_1d", func(t *testing.T, c *runtime.Context, m HostMem) *runtime.Tensor {
			return c.PadReflect1D(in(t, c, m, []float32{1, 2, 3, 4}, 4), 2, 3)
		}, []float32{3, 2, 1, 2, 3, 4, 3, 2, 1}},
		{"roll", func(t *testing.T, c *runtime.Context, m HostMem) *runtime.Tensor {
			return c.Roll(in(t, c, m, []float32{1, 2, 3, 4, 5, 6}, 3, 2), 1, 1, 0, 0)
		}, []float32{6, 4, 5, 3, 1, 2}},
		{"pad_ext", func(t *testing.T, c *runtime.Context, m HostMem) *runtime.Tensor {
			return c.PadExt(in(t, c, m, []float32{1, 2}, 2), 1, 2, 0, 0, 0, 0, 0, 0)
		}, []float32{0, 1, 2, 0, 0}},
		{"pad_ext_circular", func(t *testing.T, c *runtime.Context, m HostMem) *runtime.Tensor {
			return c.PadExtCircular(in(t, c, m, []float32{1, 2, 3}, 3), 2, 1, 0, 0, 0, 0, 0, 0)
		}, []float32{2, 3, 1, 2, 3, 1}},
		{"tri lower", func(t *testing.T, c *runtime.Context, m HostMem) *runtime.Tensor {
			return c.Tri(in(t, c, m, []float32{1, 2, 3, 4}, 2, 2), runtime.TriLower)
		}, []float32{0, 0, 3, 0}},
		{"cumsum", func(t *testing.T, c *runtime.Context, m HostMem) *runtime.Tensor {
			return c.Cumsum(in(t, c, m, []float32{1, 2, 3, 4}, 4))
		}, []float32{1, 3, 6, 10}},
		{"arange", func(t *testing.T, c *runtime.Context, m HostMem) *runtime.Tensor { return c.Arange(1, 2, 0.25) },
			[]float32{1, 1.25, 1.5, 1.75}},
		{"acc", func(t *testing.T, c *runtime.Context, m HostMem) *runtime.Tensor {
			a := in(t, c, m, []float32{1, 1, 1, 1, 1, 1}, 3, 2)
			return c.Acc(a, in(t, c, m, []float32{5, 7}, 1, 2), a.Nb[1], a.Nb[2], a.Nb[3], 4)
		}, []float32{1, 6, 1, 1, 8, 1}},
		{"set", func(t *testing.T, c *runtime.Context, m HostMem) *runtime.Tensor {
			a := in(t, c, m, []float32{1, 1, 1, 1, 1, 1}, 3, 2)
			return c.Set(a, in(t, c, m, []float32{5, 7}, 2), a.Nb[1], a.Nb[2], a.Nb[3], 3*4)
		}, []float32{1, 1, 1, 5, 7, 1}},
		{"repeat_back", func(t *testing.T, c *runtime.Context, m HostMem) *runtime.Tensor {
			return c.RepeatBack(in(t, c, m, []float32{1, 2, 3, 4, 5, 6}, 6), c.NewTensor(f32, 2))
		}, []float32{9, 12}},
		{"group_norm", func(t *testing.T, c *runtime.Context, m HostMem) *runtime.Tensor {
			return c.GroupNorm(in(t, c, m, []float32{1, 3, 10, 10}, 1, 1, 4), 2, 0)
		}, []float32{-1, 1, 0, 0}},
		{"out_prod", func(t *testing.T, c *runtime.Context, m HostMem) *runtime.Tensor {
			return c.OutProd(in(t, c, m, []float32{1, 2, 3, 4}, 2, 2), in(t, c, m, []float32{1, 10}, 1, 2))
		}, []float32{31, 42}},
		{"get_rows_back", func(t *testing.T, c *runtime.Context, m HostMem) *runtime.Tensor {
			a := in(t, c, m, []float32{1, 2, 3, 4, 5, 6}, 2, 3)
			return c.GetRowsBack(a, setI32(m, c.NewTensor(i32, 3), []int32{1, 0, 1}), c.NewTensor(f32, 2, 2))
		}, []float32{3, 4, 6, 8}},
		{"timestep_embedding", func(t *testing.T, c *runtime.Context, m HostMem) *runtime.Tensor {
			return c.TimestepEmbedding(in(t, c, m, []float32{2}, 1), 5, 100)
		}, []float32{float32(math.Cos(2)), float32(math.Cos(2 * math.Pow(100, -0.5))), float32(math.Sin(2)), float32(math.Sin(2 * math.Pow(100, -0.5))), 0}},
		{"leaky_relu", func(t *testing.T, c *runtime.Context, m HostMem) *runtime.Tensor {
			return c.LeakyRelu(in(t, c, m, []float32{-2, 3}, 2), 0.5, false)
		}, []float32{-1, 3}},
		{"diag", func(t *testing.T, c *runtime.Context, m HostMem) *runtime.Tensor {
			return c.Diag(in(t, c, m, []float32{2, 3}, 2))
		}, []float32{2, 0, 0, 3}},
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
	// COUNT_EQUAL's i64 result.
	c := runtime.NewContext()
	m := HostMem{}
	a := setI32(m, c.NewTensor(i32, 4), []int32{1, 2, 3, 4})
	r := c.CountEqual(a, setI32(m, c.NewTensor(i32, 4), []int32{1, 0, 3, 4}))
	m.Alloc(r)
	if err := Compute(r, m.Mem, 0, 1); err != nil {
		t.Fatal(err)
	}
	if b, _ := m.Mem(r); b[0] != 3 || b[1] != 0 {
		t.Fatalf("count_equal = %v, want 3", b[:8])
	}
}
