package cpu

import (
	"math"
	"testing"

	"github.com/gogml/gogml/gallocr"
	cpukernels "github.com/gogml/gogml/internal/kernels/cpukernels"
	"github.com/gogml/gogml/runtime"
)

// TestConvFastPathMatchesReference runs CONV_2D and CONV_3D through the
// backend's im2col + GEMM path (3 workers) and through the reference
// kernels; the two sum in different orders, so they must agree to float32
// rounding, not bit for bit.
func TestConvFastPathMatchesReference(t *testing.T) {
	f32, f16 := runtime.TypeF32, runtime.TypeF16
	cases := []struct {
		name  string
		build func(c *runtime.Context) *runtime.Tensor
	}{
		{"conv_2d f32", func(c *runtime.Context) *runtime.Tensor {
			return c.Conv2DDirect(c.NewTensor(f32, 3, 3, 5, 7), c.NewTensor(f32, 23, 19, 5, 2), 1, 2, 1, 1, 1, 2)
		}},
		{"conv_2d f16 channels-last", func(c *runtime.Context) *runtime.Tensor {
			in := c.Permute(c.NewTensor(f32, 6, 17, 13, 1), 2, 0, 1, 3)
			return c.Conv2DDirect(c.NewTensor(f16, 2, 3, 6, 9), in, 2, 1, 0, 2, 1, 1)
		}},
		{"conv_3d f16", func(c *runtime.Context) *runtime.Tensor {
			return c.Conv3DDirect(c.NewTensor(f16, 3, 3, 3, 2*4), c.NewTensor(f32, 9, 8, 7, 2*2), 1, 1, 2, 1, 0, 1, 1, 1, 1, 2, 2, 4)
		}},
	}
	be := NewBackend(BackendOptions{Threads: 3})
	defer be.Close()
	SplitEverything(be)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := runtime.NewContext()
			out := tc.build(c)
			if err := c.Err(); err != nil {
				t.Fatal(err)
			}
			buf, err := gallocr.AllocCtxTensors(c, DefaultBufferType())
			if err != nil {
				t.Fatal(err)
			}
			defer buf.Free()
			for li, x := range c.Tensors() {
				if x.Op != runtime.OpNone || x.ViewSrc != nil {
					continue
				}
				v := make([]float32, x.Nelements())
				for i := range v {
					v[i] = float32(math.Sin(float64(i)*0.37 + float64(li)))
				}
				data := make([]byte, x.NBytes())
				if err := cpukernels.FromFloat(x.Type, v, data); err != nil {
					t.Fatal(err)
				}
				if err := runtime.SetTensorData(x, data, 0); err != nil {
					t.Fatal(err)
				}
			}
			g := runtime.NewGraph()
			if err := g.BuildForwardExpand(out); err != nil {
				t.Fatal(err)
			}
			if err := be.Compute(g); err != nil {
				t.Fatal(err)
			}
			got := readF32(t, out)
			for ith := range 2 {
				if err := cpukernels.Compute(out, hostMem, ith, 2); err != nil {
					t.Fatal(err)
				}
			}
			want := readF32(t, out)
			for i := range want {
				if d := math.Abs(float64(got[i] - want[i])); d > 1e-5*(1+math.Abs(float64(want[i]))) {
					t.Fatalf("element %d: fast %v, reference %v", i, got[i], want[i])
				}
			}
		})
	}
}

func readF32(t *testing.T, x *runtime.Tensor) []float32 {
	t.Helper()
	b := make([]byte, x.NBytes())
	if err := runtime.GetTensorData(x, b, 0); err != nil {
		t.Fatal(err)
	}
	v, err := cpukernels.ReadF32(x, b)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
