package backendtest

import (
	"fmt"

	"github.com/gogml/gogml/runtime"
)

// opCases2 returns the cases of the ops and functions added for ggml
// 0.27.0 (the seed's table is opCases). reduced keeps one case per op and
// type.
func opCases2(reduced bool) []opCase {
	const (
		f32  = runtime.TypeF32
		f16  = runtime.TypeF16
		bf16 = runtime.TypeBF16
	)
	var cs []opCase
	add := func(full bool, name string, nmse float64, build func(b *caseBuilder) *runtime.Tensor) {
		if full && reduced {
			return
		}
		cs = append(cs, opCase{name: name, nmse: nmse, build: build})
	}
	half := func(typ runtime.Type) float64 {
		if typ == f32 {
			return NMSEF32
		}
		return NMSEHalf
	}

	// Unary functions beyond the seed's eight.
	for _, u := range []runtime.UnaryOp{runtime.UnarySgn, runtime.UnaryStep, runtime.UnaryElu, runtime.UnaryGeluQuick,
		runtime.UnaryHardswish, runtime.UnaryHardsigmoid, runtime.UnaryExpm1, runtime.UnarySoftplus, runtime.UnaryGeluErf,
		runtime.UnaryFloor, runtime.UnaryCeil, runtime.UnaryRound, runtime.UnaryTrunc} {
		for _, typ := range []runtime.Type{f32, f16, bf16} {
			add(typ != f32, fmt.Sprintf("UNARY_%s_%s", u, typ), half(typ), func(b *caseBuilder) *runtime.Tensor {
				return b.Unary(b.uniform(typ, -25, 25, 33, 5, 3), u)
			})
		}
		add(true, fmt.Sprintf("UNARY_%s_padded", u), NMSEF32, func(b *caseBuilder) *runtime.Tensor {
			return b.Unary(b.padded(f32, 17, 5), u)
		})
	}
	add(false, "UNARY_XIELU", NMSEF32, func(b *caseBuilder) *runtime.Tensor {
		return b.Xielu(b.uniform(f32, -6, 6, 33, 5, 3), 0.8, 0.8, 0.5, -1e-6)
	})
	add(false, "SCALE_BIAS", NMSEF32, func(b *caseBuilder) *runtime.Tensor { return b.ScaleBias(b.in(f32, 33, 5, 3), 0.37, -1.5) })
	add(false, "CLAMP_min_above_max", NMSEF32, func(b *caseBuilder) *runtime.Tensor { return b.Clamp(b.in(f32, 33, 5), 0.5, -0.5) })

	// Rope: ggml_rope's plain parameters, offsets, multi-section modes.
	yarn := runtime.RopeParams{NCtxOrig: 512, FreqBase: 10000, FreqScale: 0.25, ExtFactor: 1, AttnFactor: 1, BetaFast: 32, BetaSlow: 1}
	add(false, "ROPE_neox_offset", NMSEF32, func(b *caseBuilder) *runtime.Tensor {
		return b.RopeSetOffset(b.Rope(b.in(f32, 64, 3, 4), b.ints(100, 4), 32, runtime.RopeNeoX), 16)
	})
	add(true, "ROPE_normal_offset_f16", NMSEHalf, func(b *caseBuilder) *runtime.Tensor {
		return b.RopeSetOffset(b.RopeExt(b.in(f16, 32, 3, 4), b.ints(100, 4), nil, 16, runtime.RopeNormal, yarn), 8)
	})
	for _, m := range []struct {
		name     string
		mode     int32
		nDims    int
		sections [4]int32
	}{
		{"mrope", runtime.RopeMrope, 32, [4]int32{8, 4, 4, 0}},
		{"mrope_partial", runtime.RopeMrope, 24, [4]int32{6, 3, 3, 0}},
		{"imrope", runtime.RopeImrope, 32, [4]int32{8, 4, 4, 0}},
		{"vision", runtime.RopeVision, 16, [4]int32{8, 8, 0, 0}},
	} {
		for _, typ := range []runtime.Type{f32, f16} {
			add(typ != f32, fmt.Sprintf("ROPE_%s_%s", m.name, typ), half(typ), func(b *caseBuilder) *runtime.Tensor {
				return b.RopeMulti(b.in(typ, 32, 3, 5), b.ints(100, 20), nil, m.nDims, m.sections, m.mode, yarn)
			})
		}
		add(true, "ROPE_BACK_"+m.name, NMSEF32, func(b *caseBuilder) *runtime.Tensor {
			return b.RopeMultiBack(b.in(f32, 32, 3, 5), b.ints(100, 20), b.uniform(f32, 1, 4, 16), m.nDims, m.sections, m.mode,
				runtime.RopeParams{FreqBase: 10000, FreqScale: 1, AttnFactor: 1})
		})
	}
	return cs
}
