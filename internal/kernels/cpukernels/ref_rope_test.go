package cpukernels

import (
	"math"
	"testing"

	"github.com/gogml/gogml/runtime"
)

// TestRopeMultiMatchesNeoX: with the same position in all four slots,
// multi-section rope (plain and interleaved) is NeoX rope, whatever the
// sections.
func TestRopeMultiMatchesNeoX(t *testing.T) {
	const ne0, ne1, ne2 = 16, 2, 3
	x := seq(ne0*ne1*ne2, func(i int) float32 { return float32(math.Sin(float64(i) * 0.7)) })
	pos := []int32{3, 17, 40}
	p := runtime.RopeParams{NCtxOrig: 256, FreqBase: 10000, FreqScale: 0.5, ExtFactor: 1, AttnFactor: 1, BetaFast: 32, BetaSlow: 1}
	want := run(t, 1, func(c *runtime.Context, m HostMem) *runtime.Tensor {
		a := set(t, m, c.NewTensor(runtime.TypeF32, ne0, ne1, ne2), x)
		return c.RopeExt(a, setI32(m, c.NewTensor(runtime.TypeI32, ne2), pos), nil, 12, runtime.RopeNeoX, p)
	})
	pos4 := append(append(append(append([]int32{}, pos...), pos...), pos...), pos...)
	for _, mode := range []int32{runtime.RopeMrope, runtime.RopeImrope} {
		got := run(t, 2, func(c *runtime.Context, m HostMem) *runtime.Tensor {
			a := set(t, m, c.NewTensor(runtime.TypeF32, ne0, ne1, ne2), x)
			return c.RopeMulti(a, setI32(m, c.NewTensor(runtime.TypeI32, 4*ne2), pos4), nil, 12, [4]int32{2, 2, 1, 1}, mode, p)
		})
		if !near(got, want, 1e-6) {
			t.Fatalf("mode %d: %v, want %v", mode, got, want)
		}
	}
}

// TestRopeVision checks vision rope by hand: pairs (i, i+n_dims) over the
// whole row; section 0 turns by the first position, section 1 by the
// second, each restarting at angle pos·1.
func TestRopeVision(t *testing.T) {
	const ne0 = 8 // n_dims 4, sections {2, 2}: pairs 0,1 use py; 2,3 use px
	x := seq(ne0, func(i int) float32 { return float32(i + 1) })
	py, px := int32(2), int32(5)
	got := run(t, 1, func(c *runtime.Context, m HostMem) *runtime.Tensor {
		a := set(t, m, c.NewTensor(runtime.TypeF32, ne0, 1, 1), x)
		b := setI32(m, c.NewTensor(runtime.TypeI32, 4), []int32{py, px, 0, 0})
		return c.RopeMulti(a, b, nil, 4, [4]int32{2, 2, 0, 0}, runtime.RopeVision, runtime.RopeParams{FreqBase: 100, FreqScale: 1, AttnFactor: 1})
	})
	thetaScale := math.Pow(100, -2.0/4)
	want := make([]float32, ne0)
	for k := 0; k < 4; k++ {
		pos, j := float64(py), k
		if k >= 2 {
			pos, j = float64(px), k-2
		}
		th := pos * math.Pow(thetaScale, float64(j))
		x0, x1 := float64(x[k]), float64(x[k+4])
		want[k] = float32(x0*math.Cos(th) - x1*math.Sin(th))
		want[k+4] = float32(x0*math.Sin(th) + x1*math.Cos(th))
	}
	if !near(got, want, 1e-5) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

// TestRopePlainParams: ggml_rope leaves n_ctx_orig, ext_factor and the
// YaRN betas 0.
func TestRopePlainParams(t *testing.T) {
	c := runtime.NewContext()
	r := c.Rope(c.NewTensor(runtime.TypeF32, 8, 2, 3), c.NewTensor(runtime.TypeI32, 3), 8, runtime.RopeNeoX)
	if c.Err() != nil {
		t.Fatal(c.Err())
	}
	for i, w := range []float32{10000, 1, 0, 1, 0, 0} {
		if got := r.OpParamF32(5 + i); got != w {
			t.Errorf("op parameter %d = %v, want %v", 5+i, got, w)
		}
	}
	for _, i := range []int{0, 3, 4, 11, 12, 13, 14, 15} {
		if r.OpParamI32(i) != 0 {
			t.Errorf("op parameter %d = %d, want 0", i, r.OpParamI32(i))
		}
	}
}
