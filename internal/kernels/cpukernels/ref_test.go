package cpukernels

import (
	"errors"
	"math"
	"testing"

	"github.com/gogml/gogml/runtime"
)

// run builds one op with build, fills the inputs, computes it with the
// reference in nth parts and returns the result's elements.
func run(t *testing.T, nth int, build func(c *runtime.Context, m HostMem) *runtime.Tensor) []float32 {
	t.Helper()
	c := runtime.NewContext()
	m := HostMem{}
	out := build(c, m)
	if c.Err() != nil {
		t.Fatal(c.Err())
	}
	g := runtime.NewGraph()
	if err := g.BuildForwardExpand(out); err != nil {
		t.Fatal(err)
	}
	for _, l := range g.Leafs() {
		m.Alloc(l)
	}
	for _, n := range g.Nodes() {
		m.Alloc(n)
		for i := 0; i < nth; i++ {
			if err := Compute(n, m.Mem, i, nth); err != nil {
				t.Fatal(err)
			}
		}
	}
	v, err := m.F32(out)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func seq(n int, f func(i int) float32) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = f(i)
	}
	return v
}

func set(t *testing.T, m HostMem, x *runtime.Tensor, v []float32) *runtime.Tensor {
	t.Helper()
	if err := m.SetF32(x, v); err != nil {
		t.Fatal(err)
	}
	return x
}

func setI32(m HostMem, x *runtime.Tensor, v []int32) *runtime.Tensor {
	b := m.Alloc(x)
	for i, e := range v {
		b[4*i], b[4*i+1], b[4*i+2], b[4*i+3] = byte(e), byte(e>>8), byte(e>>16), byte(e>>24)
	}
	return x
}

func near(a, b []float32, tol float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.IsInf(float64(a[i]), 0) || math.IsInf(float64(b[i]), 0) {
			if a[i] != b[i] {
				return false
			}
			continue
		}
		if math.Abs(float64(a[i]-b[i])) > tol*(1+math.Abs(float64(b[i]))) {
			return false
		}
	}
	return true
}

func TestReferenceKnownValues(t *testing.T) {
	f32 := runtime.TypeF32
	tests := []struct {
		name  string
		build func(t *testing.T, c *runtime.Context, m HostMem) *runtime.Tensor
		want  []float32
	}{
		{"mul_mat", func(t *testing.T, c *runtime.Context, m HostMem) *runtime.Tensor {
			a := set(t, m, c.NewTensor(f32, 3, 2), []float32{1, 2, 3, 4, 5, 6}) // rows (1,2,3), (4,5,6)
			b := set(t, m, c.NewTensor(f32, 3, 2), []float32{1, 0, 0, 1, 1, 1}) // rows (1,0,0), (1,1,1)
			return c.MulMat(a, b)                                               // ne {2, 2}
		}, []float32{1, 4, 6, 15}},
		{"mul_mat broadcast q8_0", func(t *testing.T, c *runtime.Context, m HostMem) *runtime.Tensor {
			a := set(t, m, c.NewTensor(runtime.TypeQ8_0, 32, 1), seq(32, func(i int) float32 { return 1 }))
			b := set(t, m, c.NewTensor(f32, 32, 1, 2), seq(64, func(i int) float32 { return float32(i / 32) }))
			return c.MulMat(a, b)
		}, []float32{0, q8One() * q8One() * 32}}, // d is stored as f16; the activations are rounded to q8_0 too
		{"get_rows", func(t *testing.T, c *runtime.Context, m HostMem) *runtime.Tensor {
			a := set(t, m, c.NewTensor(runtime.TypeF16, 2, 3), []float32{0, 1, 10, 11, 20, 21})
			b := setI32(m, c.NewTensor(runtime.TypeI32, 4), []int32{2, 0, 2, 1})
			return c.GetRows(a, b)
		}, []float32{20, 21, 0, 1, 20, 21, 10, 11}},
		{"cont of transpose", func(t *testing.T, c *runtime.Context, m HostMem) *runtime.Tensor {
			a := set(t, m, c.NewTensor(f32, 3, 2), []float32{1, 2, 3, 4, 5, 6})
			return c.Cont(c.Transpose(a))
		}, []float32{1, 4, 2, 5, 3, 6}},
		{"cpy to f16 reshaped", func(t *testing.T, c *runtime.Context, m HostMem) *runtime.Tensor {
			a := set(t, m, c.NewTensor(f32, 3, 2), []float32{1, 2, 3, 4, 5, 6.0009765625})
			return c.Cpy(a, c.NewTensor(runtime.TypeF16, 2, 3))
		}, []float32{1, 2, 3, 4, 5, 6}},
		{"add broadcast", func(t *testing.T, c *runtime.Context, m HostMem) *runtime.Tensor {
			a := set(t, m, c.NewTensor(f32, 2, 3), []float32{1, 2, 3, 4, 5, 6})
			b := set(t, m, c.NewTensor(f32, 2), []float32{10, 20})
			return c.Add(a, b)
		}, []float32{11, 22, 13, 24, 15, 26}},
		{"div column broadcast", func(t *testing.T, c *runtime.Context, m HostMem) *runtime.Tensor {
			a := set(t, m, c.NewTensor(f32, 2, 2), []float32{2, 4, 6, 8})
			b := set(t, m, c.NewTensor(f32, 1, 2), []float32{2, 4})
			return c.Div(a, b)
		}, []float32{1, 2, 1.5, 2}},
		{"repeat", func(t *testing.T, c *runtime.Context, m HostMem) *runtime.Tensor {
			a := set(t, m, c.NewTensor(f32, 2), []float32{1, 2})
			return c.Repeat(a, c.NewTensor(f32, 4, 2))
		}, []float32{1, 2, 1, 2, 1, 2, 1, 2}},
		{"concat dim 1", func(t *testing.T, c *runtime.Context, m HostMem) *runtime.Tensor {
			a := set(t, m, c.NewTensor(f32, 2, 1), []float32{1, 2})
			b := set(t, m, c.NewTensor(f32, 2, 2), []float32{3, 4, 5, 6})
			return c.Concat(a, b, 1)
		}, []float32{1, 2, 3, 4, 5, 6}},
		{"concat dim 0", func(t *testing.T, c *runtime.Context, m HostMem) *runtime.Tensor {
			a := set(t, m, c.NewTensor(f32, 1, 2), []float32{1, 2})
			b := set(t, m, c.NewTensor(f32, 2, 2), []float32{3, 4, 5, 6})
			return c.Concat(a, b, 0)
		}, []float32{1, 3, 4, 2, 5, 6}},
		{"sum_rows mean", func(t *testing.T, c *runtime.Context, m HostMem) *runtime.Tensor {
			a := set(t, m, c.NewTensor(f32, 4, 2), []float32{1, 2, 3, 4, 5, 5, 5, 5})
			return c.Concat(c.SumRows(a), c.Mean(a), 0)
		}, []float32{10, 2.5, 20, 5}},
		{"rms_norm", func(t *testing.T, c *runtime.Context, m HostMem) *runtime.Tensor {
			a := set(t, m, c.NewTensor(f32, 2), []float32{3, 4})
			return c.RMSNorm(a, 0)
		}, []float32{3 / float32(math.Sqrt(12.5)), 4 / float32(math.Sqrt(12.5))}},
		{"norm", func(t *testing.T, c *runtime.Context, m HostMem) *runtime.Tensor {
			a := set(t, m, c.NewTensor(f32, 2), []float32{1, 3})
			return c.Norm(a, 0)
		}, []float32{-1, 1}},
		{"diag_mask_inf", func(t *testing.T, c *runtime.Context, m HostMem) *runtime.Tensor {
			a := set(t, m, c.NewTensor(f32, 3, 2), []float32{1, 2, 3, 4, 5, 6})
			return c.DiagMaskInf(a, 1)
		}, []float32{1, 2, float32(math.Inf(-1)), 4, 5, 6}},
		{"soft_max_ext", func(t *testing.T, c *runtime.Context, m HostMem) *runtime.Tensor {
			a := set(t, m, c.NewTensor(f32, 2, 1), []float32{2, 4})
			mask := set(t, m, c.NewTensor(runtime.TypeF16, 2, 1), []float32{0, float32(math.Inf(-1))})
			return c.Concat(c.SoftMax(a), c.SoftMaxExt(a, mask, 0.5, 0), 1)
		}, []float32{float32(1 / (1 + math.Exp(2))), float32(1 / (1 + math.Exp(-2))), 1, 0}},
		{"rope normal", func(t *testing.T, c *runtime.Context, m HostMem) *runtime.Tensor {
			a := set(t, m, c.NewTensor(f32, 4, 1, 1), []float32{1, 0, 1, 0})
			p := setI32(m, c.NewTensor(runtime.TypeI32, 1), []int32{3})
			return c.Rope(a, p, 4, runtime.RopeNormal)
		}, []float32{float32(math.Cos(3)), float32(math.Sin(3)), float32(math.Cos(0.03)), float32(math.Sin(0.03))}},
		{"rope neox partial", func(t *testing.T, c *runtime.Context, m HostMem) *runtime.Tensor {
			a := set(t, m, c.NewTensor(f32, 6, 1, 1), []float32{1, 1, 0, 0, 7, 8})
			p := setI32(m, c.NewTensor(runtime.TypeI32, 1), []int32{2})
			return c.Rope(a, p, 4, runtime.RopeNeoX)
		}, []float32{float32(math.Cos(2)), float32(math.Cos(0.02)), float32(math.Sin(2)), float32(math.Sin(0.02)), 7, 8}},
		{"rope back inverts", func(t *testing.T, c *runtime.Context, m HostMem) *runtime.Tensor {
			a := set(t, m, c.NewTensor(f32, 4, 1, 2), []float32{1, 2, 3, 4, 5, 6, 7, 8})
			p := setI32(m, c.NewTensor(runtime.TypeI32, 2), []int32{5, 9})
			r := c.Rope(a, p, 4, runtime.RopeNeoX)
			return c.RopeBack(r, p, nil, 4, runtime.RopeNeoX, runtime.DefaultRopeParams())
		}, []float32{1, 2, 3, 4, 5, 6, 7, 8}},
		{"unary", func(t *testing.T, c *runtime.Context, m HostMem) *runtime.Tensor {
			a := set(t, m, c.NewTensor(f32, 2), []float32{-1, 2})
			return c.Concat(c.Concat(c.ReLU(a), c.Abs(a), 0), c.Concat(c.Neg(a), c.SILU(a), 0), 0)
		}, []float32{0, 2, 1, 2, 1, -2, float32(-1 / (1 + math.E)), float32(2 / (1 + math.Exp(-2)))}},
		{"clamp scale sqr", func(t *testing.T, c *runtime.Context, m HostMem) *runtime.Tensor {
			a := set(t, m, c.NewTensor(f32, 3), []float32{-3, 0.5, 3})
			return c.Sqr(c.Scale(c.Clamp(a, -1, 1), 2))
		}, []float32{4, 1, 4}},
		{"soft_max_back", func(t *testing.T, c *runtime.Context, m HostMem) *runtime.Tensor {
			dy := set(t, m, c.NewTensor(f32, 2), []float32{1, 0})
			y := set(t, m, c.NewTensor(f32, 2), []float32{0.25, 0.75})
			return c.SoftMaxBack(dy, y) // y*(dy - 0.25)
		}, []float32{0.1875, -0.1875}},
	}
	for _, tc := range tests {
		for _, nth := range []int{1, 3} {
			t.Run(tc.name, func(t *testing.T) {
				got := run(t, nth, func(c *runtime.Context, m HostMem) *runtime.Tensor { return tc.build(t, c, m) })
				if !near(got, tc.want, 1e-5) {
					t.Fatalf("nth %d: got %v, want %v", nth, got, tc.want)
				}
			})
		}
	}
}

func TestReferenceErrors(t *testing.T) {
	c := runtime.NewContext()
	m := HostMem{}
	a := c.NewTensor(runtime.TypeF32, 2, 3)
	a.Name = "table"
	idx := c.NewTensor(runtime.TypeI32, 1)
	idx.Name = "ids"
	g := c.GetRows(a, idx)
	m.Alloc(a)
	setI32(m, idx, []int32{3})
	m.Alloc(g)
	if err := Compute(g, m.Mem, 0, 1); !errors.Is(err, runtime.ErrOutOfBounds) {
		t.Errorf("index out of range: %v", err)
	}
	u := c.NewOp(runtime.OpUnary, runtime.TypeF32, a.Ne, a)
	u.SetOpParamI32(0, int32(runtime.UnaryCount)) // no such function
	if err := Compute(u, m.Mem, 0, 1); !errors.Is(err, runtime.ErrUnsupported) {
		t.Errorf("unsupported unary: %v", err)
	}
	s := c.NewTensor(runtime.TypeI32, 2, 3)
	bad := c.Sqr(s)
	if err := Supports(bad); !errors.Is(err, runtime.ErrUnsupported) {
		t.Errorf("sqr of i32: %v", err)
	}
	unplaced := c.Sqr(c.NewTensor(runtime.TypeF32, 4))
	if err := Compute(unplaced, m.Mem, 0, 1); !errors.Is(err, runtime.ErrNotAllocated) {
		t.Errorf("unplaced: %v", err)
	}
}

// q8One is 1 after a round trip through q8_0 (127 times the f16 scale 1/127).
func q8One() float32 { return 127 * F16ToF32(F32ToF16(1.0/127)) }
