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
	return cs
}
