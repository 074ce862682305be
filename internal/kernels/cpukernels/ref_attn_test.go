package cpukernels

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gogml/gogml/runtime"
)

// TestFlashAttnNaive checks FLASH_ATTN_EXT against soft-max attention
// written out in float64: grouped heads, a mask with -Inf, ALiBi, softcap
// and sinks, in every combination of the last three.
func TestFlashAttnNaive(t *testing.T) {
	const dk, dv, n, h, hkv, nkv = 8, 6, 3, 4, 2, 5
	r := rand.New(rand.NewPCG(1, 2))
	rnd := func(k int) []float32 { return seq(k, func(int) float32 { return float32(r.NormFloat64()) }) }
	qv, kv, vv := rnd(dk*n*h), rnd(dk*nkv*hkv), rnd(dv*nkv*hkv)
	mv := make([]float32, 8*n) // 8 ≥ nkv columns, as ggml pads masks
	for i := range mv {
		mv[i] = halfRound(float32(r.NormFloat64()))
		if i%8 == 3 && i/8 == 1 {
			mv[i] = float32(math.Inf(-1))
		}
	}
	sinks := rnd(h)
	for _, c := range []struct {
		maxBias, softcap float32
		sinks            bool
	}{{0, 0, false}, {8, 0, false}, {0, 20, false}, {0, 0, true}, {8, 30, true}} {
		got := run(t, 2, func(ctx *runtime.Context, m HostMem) *runtime.Tensor {
			q := set(t, m, ctx.NewTensor(runtime.TypeF32, dk, n, h), qv)
			k := set(t, m, ctx.NewTensor(runtime.TypeF32, dk, nkv, hkv), kv)
			v := set(t, m, ctx.NewTensor(runtime.TypeF32, dv, nkv, hkv), vv)
			mask := set(t, m, ctx.NewTensor(runtime.TypeF16, 8, n), mv)
			fa := ctx.FlashAttnExt(q, k, v, mask, 0.3, c.maxBias, c.softcap)
			if c.sinks {
				fa = ctx.FlashAttnExtAddSinks(fa, set(t, m, ctx.NewTensor(runtime.TypeF32, h), sinks))
			}
			return fa
		})
		want := make([]float32, dv*h*n)
		for hd := 0; hd < h; hd++ {
			slope := float64(AlibiSlope(c.maxBias, int64(hd), h))
			kh := hd / (h / hkv)
			for i := 0; i < n; i++ {
				var s []float64
				for j := 0; j < nkv; j++ {
					var d float64
					for e := 0; e < dk; e++ {
						d += float64(qv[(hd*n+i)*dk+e]) * float64(kv[(kh*nkv+j)*dk+e])
					}
					d *= 0.3
					if c.softcap != 0 {
						d = float64(c.softcap) * math.Tanh(d/float64(c.softcap))
					}
					s = append(s, d+slope*float64(mv[i*8+j]))
				}
				mx := math.Inf(-1)
				for _, x := range s {
					mx = math.Max(mx, x)
				}
				if c.sinks {
					mx = math.Max(mx, float64(sinks[hd]))
				}
				var sum float64
				for j := range s {
					s[j] = math.Exp(s[j] - mx)
					sum += s[j]
				}
				if c.sinks {
					sum += math.Exp(float64(sinks[hd]) - mx)
				}
				for e := 0; e < dv; e++ {
					var o float64
					for j := range s {
						o += s[j] / sum * float64(vv[(kh*nkv+j)*dv+e])
					}
					want[(i*h+hd)*dv+e] = float32(o) // result {dv, h, n}
				}
			}
		}
		if !near(got, want, 2e-5) {
			t.Fatalf("%+v:\ngot  %v\nwant %v", c, got[:12], want[:12])
		}
	}
}

// TestMulMatIDNaive checks MUL_MAT_ID with two experts picked per token
// and b broadcast over the slots.
func TestMulMatIDNaive(t *testing.T) {
	got := run(t, 2, func(c *runtime.Context, m HostMem) *runtime.Tensor {
		as := set(t, m, c.NewTensor(runtime.TypeF32, 2, 1, 3), []float32{1, 0, 0, 1, 1, 1}) // experts: x0, x1, x0+x1
		b := set(t, m, c.NewTensor(runtime.TypeF32, 2, 1, 2), []float32{3, 4, 5, 6})
		ids := setI32(m, c.NewTensor(runtime.TypeI32, 2, 2), []int32{2, 0, 1, 1})
		return c.MulMatId(as, b, ids)
	})
	if want := []float32{7, 3, 6, 6}; !near(got, want, 0) {
		t.Fatalf("got %v, want %v", got, want)
	}
}
