package cpukernels

import (
	"math"
	"testing"

	"github.com/gogml/gogml/runtime"
)

// TestOps4 checks the ops of ref_ops4.go on small inputs worked by hand.
func TestOps4(t *testing.T) {
	f32 := runtime.TypeF32
	in := func(t *testing.T, c *runtime.Context, m HostMem, v []float32, ne ...int64) *runtime.Tensor {
		return set(t, m, c.NewTensor(f32, ne...), v)
	}
	tests := []struct {
		name  string
		build func(t *testing.T, c *runtime.Context, m HostMem) *runtime.Tensor
		want  []float32
	}{
		{"im2col 1d, pad 1", func(t *testing.T, c *runtime.Context, m HostMem) *runtime.Tensor {
			return c.Im2col(c.NewTensor(f32, 2, 1), in(t, c, m, []float32{1, 2, 3}, 3, 1), 1, 0, 1, 0, 1, 0, false, f32)
		}, []float32{0, 1, 1, 2, 2, 3, 3, 0}},
		{"pool_2d max, pad 1", func(t *testing.T, c *runtime.Context, m HostMem) *runtime.Tensor {
			return c.Pool2D(in(t, c, m, []float32{1, 2, 3, 4}, 2, 2), runtime.PoolMax, 2, 2, 2, 2, 1, 1)
		}, []float32{1, 2, 3, 4}},
		{"pool_2d avg counts padding", func(t *testing.T, c *runtime.Context, m HostMem) *runtime.Tensor {
			return c.Pool2D(in(t, c, m, []float32{1, 2, 3, 4}, 2, 2), runtime.PoolAvg, 2, 2, 2, 2, 1, 1)
		}, []float32{0.25, 0.5, 0.75, 1}},
		{"pool_1d avg", func(t *testing.T, c *runtime.Context, m HostMem) *runtime.Tensor {
			return c.Pool1D(in(t, c, m, []float32{1, 3, 5, 7}, 4), runtime.PoolAvg, 2, 2, 0)
		}, []float32{2, 6}},
		{"upscale bilinear", func(t *testing.T, c *runtime.Context, m HostMem) *runtime.Tensor {
			return c.Interpolate(in(t, c, m, []float32{0, 1}, 2), 4, 1, 1, 1, runtime.ScaleBilinear)
		}, []float32{0, 0.25, 0.75, 1}},
		{"upscale nearest", func(t *testing.T, c *runtime.Context, m HostMem) *runtime.Tensor {
			return c.Upscale(in(t, c, m, []float32{1, 2}, 2), 2, runtime.ScaleNearest)
		}, []float32{1, 1, 2, 2, 1, 1, 2, 2}},
		{"ssm_conv", func(t *testing.T, c *runtime.Context, m HostMem) *runtime.Tensor {
			return c.SsmConv(in(t, c, m, []float32{1, 2, 3}, 3, 1, 1), in(t, c, m, []float32{10, 1}, 2, 1))
		}, []float32{12, 23}},
		{"cross_entropy_loss", func(t *testing.T, c *runtime.Context, m HostMem) *runtime.Tensor {
			return c.CrossEntropyLoss(in(t, c, m, []float32{0, 0}, 2), in(t, c, m, []float32{1, 0}, 2))
		}, []float32{float32(math.Log(2))}},
		{"cross_entropy_loss_back", func(t *testing.T, c *runtime.Context, m HostMem) *runtime.Tensor {
			return c.CrossEntropyLossBack(in(t, c, m, []float32{2}, 1), in(t, c, m, []float32{0, 0}, 2), in(t, c, m, []float32{1, 0}, 2))
		}, []float32{-1, 1}},
		{"opt_step_sgd", func(t *testing.T, c *runtime.Context, m HostMem) *runtime.Tensor {
			w := in(t, c, m, []float32{1, 2}, 2)
			w.SetFlag(runtime.FlagParam)
			return c.OptStepSgd(w, in(t, c, m, []float32{10, -10}, 2), in(t, c, m, []float32{0.1, 0.5}, 2))
		}, []float32{1*0.95 - 1, 2*0.95 + 1}},
		{"opt_step_adamw first step", func(t *testing.T, c *runtime.Context, m HostMem) *runtime.Tensor {
			w := in(t, c, m, []float32{1}, 1)
			w.SetFlag(runtime.FlagParam)
			pr := in(t, c, m, []float32{0.1, 0.9, 0.999, 0, 0, 1 / 0.1, 1 / 0.001}, 7)
			return c.OptStepAdamw(w, in(t, c, m, []float32{2}, 1), in(t, c, m, []float32{0}, 1), in(t, c, m, []float32{0}, 1), pr)
		}, []float32{0.9}}, // bias-corrected m/√v = sign(g)
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
