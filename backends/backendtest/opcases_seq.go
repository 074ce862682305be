package backendtest

import (
	"encoding/binary"
	"math"

	"github.com/gogml/gogml/runtime"
)

// opCasesSeq returns the cases of the sequence-model and solver ops and
// of a custom op (ref_seq.go and ref_custom.go of package cpukernels).
func opCasesSeq(reduced bool) []opCase {
	const (
		f32 = runtime.TypeF32
		f16 = runtime.TypeF16
	)
	var cs []opCase
	add := func(full bool, name string, build func(b *caseBuilder) *runtime.Tensor) {
		if full && reduced {
			return
		}
		cs = append(cs, opCase{name: name, nmse: NMSEF32, build: build})
	}
	add(false, "SOLVE_TRI", func(b *caseBuilder) *runtime.Tensor {
		a := b.fill(b.NewTensor(f32, 9, 9, 2), func(i int) float32 { // well-conditioned lower triangle
			r, c := (i/9)%9, i%9
			switch {
			case c > r:
				return 0
			case c == r:
				return 1 + b.rng.Float32()
			}
			return 0.2 * (b.rng.Float32() - 0.5)
		})
		return b.SolveTri(a, b.in(f32, 5, 9, 2), true, true, false)
	})
	add(false, "SSM_SCAN", func(b *caseBuilder) *runtime.Tensor {
		const ds, hd, nh, ng, nt, ns = 16, 4, 6, 2, 5, 2
		return b.SsmScan(b.in(f32, ds, hd, nh, ns), b.in(f32, hd, nh, nt, ns), b.in(f32, nh, nt, ns),
			b.uniform(f32, -1, -0.5, 1, nh), b.in(f32, ds, ng, nt, ns), b.in(f32, ds, ng, nt, ns), b.ints(ns, ns), 2)
	})
	add(true, "SSM_SCAN_mamba1", func(b *caseBuilder) *runtime.Tensor {
		const ds, nh, nt, ns = 16, 8, 4, 3
		return b.SsmScan(b.in(f32, ds, 1, nh, ns), b.in(f32, 1, nh, nt, ns), b.in(f32, nh, nt, ns),
			b.uniform(f32, -1, -0.5, ds, nh), b.in(f32, ds, 1, nt, ns), b.in(f32, ds, 1, nt, ns), b.ints(ns, ns), 1)
	})
	tok := func(b *caseBuilder) *runtime.Tensor { return b.uniform(f32, -1, 1, 8, 3, 6) }
	add(false, "RWKV_WKV6", func(b *caseBuilder) *runtime.Tensor {
		return b.RwkvWkv6(tok(b), tok(b), tok(b), b.in(f32, 8, 3), b.uniform(f32, 0, 1, 8, 3, 6), b.in(f32, 8*8*3, 2))
	})
	add(false, "GATED_LINEAR_ATTN", func(b *caseBuilder) *runtime.Tensor {
		return b.GatedLinearAttn(tok(b), tok(b), tok(b), b.uniform(f32, 0, 1, 8, 3, 6), b.in(f32, 8*8*3, 2), 0.35)
	})
	add(false, "RWKV_WKV7", func(b *caseBuilder) *runtime.Tensor {
		return b.RwkvWkv7(tok(b), b.uniform(f32, 0, 1, 8, 3, 6), tok(b), tok(b), tok(b), tok(b), b.in(f32, 8*8*3, 2))
	})
	add(false, "GATED_DELTA_NET", func(b *caseBuilder) *runtime.Tensor {
		const S, Hk, H, T, N = 16, 2, 4, 3, 2
		return b.GatedDeltaNet(b.uniform(f32, -0.3, 0.3, S, Hk, T, N), b.uniform(f32, -0.3, 0.3, S, Hk, T, N), b.in(f32, S, H, T, N),
			b.uniform(f32, -2, 0, 1, H, T, N), b.uniform(f32, 0, 1, 1, H, T, N), b.in(f32, S, S, H, N), 2)
	})
	add(true, "GATED_DELTA_NET_kda", func(b *caseBuilder) *runtime.Tensor {
		const S, H, T, N = 16, 2, 4, 1
		return b.GatedDeltaNet(b.uniform(f32, -0.3, 0.3, S, H, T, N), b.uniform(f32, -0.3, 0.3, S, H, T, N), b.in(f32, S, H, T, N),
			b.uniform(f32, -2, 0, S, H, T, N), b.uniform(f32, 0, 1, 1, H, T, N), b.in(f32, S, S, H, N), 1)
	})
	for _, kt := range []runtime.Type{f32, f16, runtime.TypeQ8_0} {
		add(kt != f16, "LIGHTNING_INDEXER_"+kt.String(), func(b *caseBuilder) *runtime.Tensor {
			return b.LightningIndexer(b.in(f32, 32, 4, 3, 2), b.in(kt, 32, 1, 40, 2), b.uniform(f32, 0, 1, 4, 3, 1, 2), b.in(f16, 40, 3, 1, 1))
		})
	}
	add(false, "DSV4_HC_COMB", func(b *caseBuilder) *runtime.Tensor {
		return b.Dsv4HcComb(b.in(f32, 24, 7), b.uniform(f32, -0.5, 0.5, 3), b.uniform(f32, -0.25, 0.25, 24), 1e-6, 5)
	})
	add(false, "DSV4_HC_PRE", func(b *caseBuilder) *runtime.Tensor { return b.Dsv4HcPre(b.in(f32, 33, 4, 5), b.in(f32, 4, 5)) })
	add(true, "DSV4_HC_PRE_gated", func(b *caseBuilder) *runtime.Tensor {
		return b.Dsv4HcPreGated(b.in(f32, 33, 3, 5), b.in(f32, 33, 3, 5), 1.0/3)
	})
	add(false, "DSV4_HC_POST", func(b *caseBuilder) *runtime.Tensor {
		return b.Dsv4HcPost(b.in(f32, 33, 5), b.in(f32, 33, 4, 5), b.in(f32, 4, 5), b.in(f32, 4, 4, 5))
	})
	add(true, "DSV4_HC_POST_identity", func(b *caseBuilder) *runtime.Tensor {
		return b.Dsv4HcPost(b.in(f32, 33, 5), b.in(f32, 33, 4, 5), b.in(f32, 4, 5), nil)
	})
	add(false, "MAP_CUSTOM2", func(b *caseBuilder) *runtime.Tensor {
		return b.MapCustom2(b.in(f32, 33, 5), b.in(f32, 33, 5), customHypot, -1)
	})
	return cs
}

// customHypot is a custom function for dense f32 operands: √(a² + b²) per
// element, elements split across the parts.
func customHypot(dst runtime.CustomTensor, src []runtime.CustomTensor, ith, nth int) error {
	n := dst.Nelements()
	per := (n + int64(nth) - 1) / int64(nth)
	for i := per * int64(ith); i < min(per*int64(ith+1), n); i++ {
		a := math.Float32frombits(binary.LittleEndian.Uint32(src[0].Data[4*i:]))
		b := math.Float32frombits(binary.LittleEndian.Uint32(src[1].Data[4*i:]))
		binary.LittleEndian.PutUint32(dst.Data[4*i:], math.Float32bits(float32(math.Hypot(float64(a), float64(b)))))
	}
	return nil
}
