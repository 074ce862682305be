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

// TestConcatBlockTypes joins q8_0 tensors along each dimension: blocks
// move whole, as in ggml's concat of any type. The values are exact in
// q8_0 (scale 1).
func TestConcatBlockTypes(t *testing.T) {
	q8 := runtime.TypeQ8_0
	a, b := make([]float32, 64), make([]float32, 64)
	for i := range a {
		sign := float32(1 - 2*(i/32)) // each block's amax is 127
		a[i], b[i] = sign*float32(127-4*(i%32)), sign*float32(-127+2*(i%32))
	}
	tests := []struct {
		name string
		dim  int
		ne   [2]int64 // of each source
		want []float32
	}{
		{"dim 0", 0, [2]int64{32, 2}, append(append(append([]float32{}, a[:32]...), b[:32]...), append(a[32:], b[32:]...)...)},
		{"dim 1", 1, [2]int64{32, 2}, append(append([]float32{}, a...), b...)},
		{"dim 2", 2, [2]int64{64, 1}, append(append([]float32{}, a...), b...)},
	}
	for _, tc := range tests {
		for _, nth := range []int{1, 3} {
			t.Run(tc.name, func(t *testing.T) {
				got := run(t, nth, func(c *runtime.Context, m HostMem) *runtime.Tensor {
					x := set(t, m, c.NewTensor(q8, tc.ne[0], tc.ne[1]), a)
					y := set(t, m, c.NewTensor(q8, tc.ne[0], tc.ne[1]), b)
					return c.Concat(x, y, tc.dim)
				})
				if !near(got, tc.want, 0) {
					t.Fatalf("nth %d: got %v, want %v", nth, got, tc.want)
				}
			})
		}
	}
}

// TestSumRowsAsGgml sums as ggml's SUM: row by row, each row read as ne0
// adjacent elements from its start, so a transposed source sums
// overlapping windows of its memory (1+2, 2+3, 3+4 of 1..6 below).
func TestSumRowsAsGgml(t *testing.T) {
	f32, f16 := runtime.TypeF32, runtime.TypeF16
	runPartial(t, []partialCase{
		{"dense f32", func(t *testing.T, c *runtime.Context, m HostMem) *runtime.Tensor {
			return c.Sum(set(t, m, c.NewTensor(f32, 3, 2), []float32{1, 2, 3, 4, 5, 6}))
		}, []float32{21}, 0},
		{"transposed f32", func(t *testing.T, c *runtime.Context, m HostMem) *runtime.Tensor {
			return c.Sum(c.Permute(set(t, m, c.NewTensor(f32, 3, 2), []float32{1, 2, 3, 4, 5, 6}), 1, 0, 2, 3))
		}, []float32{15}, 0},
		{"transposed f16", func(t *testing.T, c *runtime.Context, m HostMem) *runtime.Tensor {
			return c.Sum(c.Permute(set(t, m, c.NewTensor(f16, 3, 2), []float32{1, 2, 3, 4, 5, 6}), 1, 0, 2, 3))
		}, []float32{15}, 0},
	})
}

// TestOutProdQuantized multiplies a q8_0 a (values exact in q8_0) with
// an f32 b: each row of a is dequantized, as ggml's out_prod_q_f32.
func TestOutProdQuantized(t *testing.T) {
	a := make([]float32, 64)
	for i := range a {
		a[i] = float32(127 - 3*(i%32))
	}
	bv := []float32{1, 2, 3, 0.5, -1, 4} // b[i1 + 3k]
	want := make([]float32, 96)
	for i1 := range 3 {
		for i0 := range 32 {
			want[i1*32+i0] = a[i0]*bv[i1] + a[32+i0]*bv[3+i1]
		}
	}
	for _, typ := range []runtime.Type{runtime.TypeQ8_0, runtime.TypeQ4_1} {
		runPartial(t, []partialCase{{"out_prod " + typ.String(), func(t *testing.T, c *runtime.Context, m HostMem) *runtime.Tensor {
			x := set(t, m, c.NewTensor(typ, 32, 2), a)
			return c.OutProd(x, set(t, m, c.NewTensor(runtime.TypeF32, 3, 2), bv))
		}, want, map[runtime.Type]float64{runtime.TypeQ8_0: 0, runtime.TypeQ4_1: 0.1}[typ]}})
	}
}

// TestFlashAttnQuantizedKV checks FLASH_ATTN_EXT with q8_0 K and V
// against the same values in f32: the values are exact in q8_0 (each
// block's amax is 127), so rounding q to q8_0 changes nothing and the two
// must agree.
func TestFlashAttnQuantizedKV(t *testing.T) {
	const d, nkv = 32, 3
	vals := func(seed int) []float32 {
		v := make([]float32, d*nkv)
		for i := range v {
			v[i] = float32((i*seed+11)%255 - 127)
			if i%d == 0 {
				v[i] = 127
			}
		}
		return v
	}
	qv, kv, vv := vals(7)[:d], vals(13), vals(29)
	build := func(typ runtime.Type) func(t *testing.T, c *runtime.Context, m HostMem) *runtime.Tensor {
		return func(t *testing.T, c *runtime.Context, m HostMem) *runtime.Tensor {
			q := set(t, m, c.NewTensor(runtime.TypeF32, d, 1, 1, 1), qv)
			k := set(t, m, c.NewTensor(typ, d, nkv, 1, 1), kv)
			v := set(t, m, c.NewTensor(typ, d, nkv, 1, 1), vv)
			return c.FlashAttnExt(q, k, v, nil, 1e-5, 0, 0)
		}
	}
	want := run(t, 1, func(c *runtime.Context, m HostMem) *runtime.Tensor { return build(runtime.TypeF32)(t, c, m) })
	runPartial(t, []partialCase{{"q8_0 k and v", build(runtime.TypeQ8_0), want, 1e-6}})
}

// cubicConv is the cubic convolution of p (at -1, 0, 1, 2) at x with
// a = -0.75, in float64.
func cubicConv(p [4]float64, x float64) float64 {
	const a = -0.75
	w := func(d float64) float64 {
		d = math.Abs(d)
		if d <= 1 {
			return ((a+2)*d-(a+3))*d*d + 1
		}
		return ((a*d-5*a)*d+8*a)*d - 4*a
	}
	return p[0]*w(x+1) + p[1]*w(x) + p[2]*w(1-x) + p[3]*w(2-x)
}

// TestUpscaleModes checks UPSCALE's bicubic mode (against cubic
// convolution in float64, edges clamped) and bilinear with antialias
// (a 4→2 shrink worked by hand: triangle weights 0.75, 0.75, 0.25).
func TestUpscaleModes(t *testing.T) {
	f32 := runtime.TypeF32
	src := []float32{1, 2, 4, 8}
	var bic []float32
	for i0 := range 8 {
		x := (float64(i0)+0.5)/2 - 0.5
		x0 := math.Floor(x)
		var p [4]float64
		for j := range p {
			p[j] = float64(src[max(0, min(int(x0)+j-1, 3))])
		}
		bic = append(bic, float32(cubicConv(p, x-x0)))
	}
	runPartial(t, []partialCase{
		{"bicubic 4→8", func(t *testing.T, c *runtime.Context, m HostMem) *runtime.Tensor {
			return c.Interpolate(set(t, m, c.NewTensor(f32, 4, 1), src), 8, 1, 1, 1, runtime.ScaleBicubic)
		}, bic, 1e-6},
		{"bilinear antialias 4→2", func(t *testing.T, c *runtime.Context, m HostMem) *runtime.Tensor {
			return c.Interpolate(set(t, m, c.NewTensor(f32, 4, 1), []float32{1, 2, 3, 4}), 2, 1, 1, 1,
				runtime.ScaleBilinear|runtime.ScaleAntialias)
		}, []float32{3 / 1.75, 5.75 / 1.75}, 1e-6},
	})
}
