package backendtest

import (
	"fmt"

	cpukernels "github.com/gogml/gogml/internal/kernels/cpukernels"
	"github.com/gogml/gogml/runtime"
)

// typeCases returns the cases of the block types besides q4_0 and q8_0:
// for each, CPY from and to f32, GET_ROWS, and (for the types ggml's CPU
// backend multiplies) MUL_MAT over a small product, one with more than 96
// activation rows and fewer than 4 weight rows, and one broadcasting over
// dims 2 and 3 with a padded (non-contiguous) activation view, and
// MUL_MAT_ID over four experts. reduced
// keeps one case per op and type.
func typeCases(reduced bool) []opCase {
	const f32 = runtime.TypeF32
	var cs []opCase
	add := func(full bool, name string, build func(b *caseBuilder) *runtime.Tensor) {
		if full && reduced {
			return
		}
		cs = append(cs, opCase{name: name, nmse: NMSEQuant, build: build})
	}
	types := []runtime.Type{runtime.TypeQ4_1, runtime.TypeQ5_0, runtime.TypeQ5_1, runtime.TypeQ8_1,
		runtime.TypeQ2_K, runtime.TypeQ3_K, runtime.TypeQ4_K, runtime.TypeQ5_K, runtime.TypeQ6_K, runtime.TypeQ8_K,
		runtime.TypeIQ4_NL, runtime.TypeIQ4_XS, runtime.TypeTQ1_0, runtime.TypeTQ2_0, runtime.TypeMXFP4,
		runtime.TypeNVFP4, runtime.TypeQ1_0, runtime.TypeQ2_0}
	types = append(types, gridTypes...)
	for _, typ := range types {
		k := max(64, typ.BlockSize()) // at least two blocks of 32 per row
		if cpukernels.CanQuantize(typ) {
			add(false, fmt.Sprintf("CPY_f32_%s", typ), func(b *caseBuilder) *runtime.Tensor {
				return b.Cpy(b.in(f32, k, 3, 2), b.in(typ, k, 3, 2))
			})
		}
		add(false, fmt.Sprintf("CPY_%s_f32", typ), func(b *caseBuilder) *runtime.Tensor {
			return b.Cpy(b.in(typ, k, 3, 2), b.in(f32, k, 3, 2))
		})
		add(false, "GET_ROWS_"+typ.String(), func(b *caseBuilder) *runtime.Tensor {
			return b.GetRows(b.in(typ, k, 10, 3), b.ints(10, 5, 3))
		})
		if typ == runtime.TypeQ8_1 || typ == runtime.TypeQ8_K {
			continue // activation-only types: ggml has no product for them
		}
		add(false, fmt.Sprintf("MUL_MAT_%s_k%d_n17_m5", typ, k), func(b *caseBuilder) *runtime.Tensor {
			return b.MulMat(b.in(typ, k, 17), b.in(f32, k, 5))
		})
		add(true, "MUL_MAT_ID_"+typ.String(), func(b *caseBuilder) *runtime.Tensor {
			return b.MulMatId(b.in(typ, k, 9, 4), b.in(f32, k, 2, 3), b.ints(4, 2, 3))
		})
		add(true, fmt.Sprintf("MUL_MAT_%s_k%d_n3_m130", typ, 2*k), func(b *caseBuilder) *runtime.Tensor {
			return b.MulMat(b.in(typ, 2*k, 3), b.in(f32, 2*k, 130))
		})
		add(true, fmt.Sprintf("MUL_MAT_%s_broadcast_padded", typ), func(b *caseBuilder) *runtime.Tensor {
			return b.MulMat(b.in(typ, k, 9, 2, 1), b.padded(f32, k, 6, 4, 2))
		})
	}
	return cs
}
