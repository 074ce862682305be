package backendtest

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/gogml/gogml/runtime"
)

// rowIDs returns an i32 or i64 input of shape ne whose ne0 values in each
// row are distinct ids in [0, n) (n ≥ ne0), so that rows written through
// them do not collide.
func (b *caseBuilder) rowIDs(typ runtime.Type, n int, ne ...int64) *runtime.Tensor {
	x := b.NewTensor(typ, ne...)
	if x == nil {
		return nil
	}
	buf := make([]byte, x.NBytes())
	es := int(typ.Size())
	for r := 0; r < int(x.Nrows()); r++ {
		p := b.rng.Perm(n)
		for i := 0; i < int(x.Ne[0]); i++ {
			o := (r*int(x.Ne[0]) + i) * es
			if typ == runtime.TypeI64 {
				binary.LittleEndian.PutUint64(buf[o:], uint64(p[i]))
			} else {
				binary.LittleEndian.PutUint32(buf[o:], uint32(p[i]))
			}
		}
	}
	b.data[x] = buf
	x.Name = fmt.Sprintf("in%d", len(b.data))
	return x
}

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

	// Gated linear units: fused halves (plain and swapped) and split.
	for g := runtime.GluOp(0); g < runtime.GluCount; g++ {
		types := []runtime.Type{f32, f16, bf16}
		glu := func(b *caseBuilder, a, gate *runtime.Tensor, swapped bool) *runtime.Tensor {
			switch g {
			case runtime.GluSwigluOai:
				if swapped {
					return b.Glu(a, g, true) // alpha and limit 0
				}
				return b.SwigluOai(a, gate, 1.702, 7)
			case runtime.GluSwigluClamp:
				if swapped {
					return b.Glu(a, g, true)
				}
				return b.SwigluClamp(a, gate, 2.5)
			}
			if gate != nil {
				return b.GluSplit(a, gate, g)
			}
			return b.Glu(a, g, swapped)
		}
		for _, typ := range types {
			add(typ != f32, fmt.Sprintf("GLU_%s_%s", g, typ), half(typ), func(b *caseBuilder) *runtime.Tensor {
				return glu(b, b.uniform(typ, -4, 4, 66, 5, 3), nil, false)
			})
			add(true, fmt.Sprintf("GLU_%s_%s_swapped", g, typ), half(typ), func(b *caseBuilder) *runtime.Tensor {
				return glu(b, b.uniform(typ, -4, 4, 34, 5, 2), nil, true)
			})
			add(typ != f32, fmt.Sprintf("GLU_%s_%s_split", g, typ), half(typ), func(b *caseBuilder) *runtime.Tensor {
				return glu(b, b.uniform(typ, -4, 4, 33, 5, 3), b.uniform(typ, -4, 4, 33, 5, 3), false)
			})
		}
	}
	add(true, "GLU_SWIGLU_split_padded", NMSEF32, func(b *caseBuilder) *runtime.Tensor {
		return b.SwigluSplit(b.padded(f32, 17, 5), b.padded(f32, 17, 5))
	})

	// SET_ROWS: the KV-cache write of llama.cpp.
	for _, dt := range []runtime.Type{f32, f16, bf16} {
		for _, it := range []runtime.Type{runtime.TypeI64, runtime.TypeI32} {
			for _, st := range []runtime.Type{f32, f16} {
				full := dt != f16 || st != f32
				if it != runtime.TypeI64 {
					full = true
				}
				add(full, fmt.Sprintf("SET_ROWS_%s_%s_ids_%s", st, dt, it), half(dt), func(b *caseBuilder) *runtime.Tensor {
					return b.SetRows(b.in(dt, 32, 20, 3), b.in(st, 32, 7, 3), b.rowIDs(it, 20, 7, 1))
				})
			}
		}
	}
	add(true, "SET_ROWS_broadcast_ids", NMSEF32, func(b *caseBuilder) *runtime.Tensor {
		return b.SetRows(b.in(f32, 16, 9, 4, 2), b.in(f32, 16, 5, 4, 2), b.rowIDs(runtime.TypeI64, 9, 5, 2, 1))
	})
	add(true, "SET_ROWS_into_view", NMSEHalf, func(b *caseBuilder) *runtime.Tensor {
		cache := b.in(f16, 16, 12, 2)
		v := b.View3D(cache, 16, 10, 2, cache.Nb[1], cache.Nb[2], cache.Nb[1])
		return b.SetRows(v, b.in(f32, 16, 4, 2), b.rowIDs(runtime.TypeI32, 10, 4))
	})

	// Soft-max with sinks.
	add(false, "SOFT_MAX_sinks", NMSEF32, func(b *caseBuilder) *runtime.Tensor {
		x := b.in(f32, 33, 7, 4)
		return b.SoftMaxAddSinks(b.SoftMaxExt(x, b.in(f16, 33, 7), 0.125, 0), b.in(f32, 4))
	})
	add(true, "SOFT_MAX_sinks_alibi_no_mask_broadcast", NMSEF32, func(b *caseBuilder) *runtime.Tensor {
		return b.SoftMaxAddSinks(b.SoftMaxExt(b.in(f32, 17, 4, 6, 2), b.in(f32, 17, 4, 2, 1), 1, 8), b.in(f32, 6))
	})
	add(true, "SOFT_MAX_sinks_no_mask", NMSEF32, func(b *caseBuilder) *runtime.Tensor {
		return b.SoftMaxAddSinks(b.SoftMax(b.in(f32, 16, 3, 2)), b.in(f32, 2))
	})

	// Reductions, trigonometry, norms, sorting.
	for _, typ := range []runtime.Type{f32, f16, bf16} {
		add(typ != f32, "SUM_"+typ.String(), half(typ), func(b *caseBuilder) *runtime.Tensor { return b.Sum(b.in(typ, 33, 5, 3, 2)) })
		add(typ != f32, "SIN_"+typ.String(), half(typ), func(b *caseBuilder) *runtime.Tensor { return b.Sin(b.uniform(typ, -10, 10, 33, 5, 3)) })
		add(typ != f32, "COS_"+typ.String(), half(typ), func(b *caseBuilder) *runtime.Tensor { return b.Cos(b.uniform(typ, -10, 10, 33, 5, 3)) })
	}
	add(true, "SUM_permuted", NMSEF32, func(b *caseBuilder) *runtime.Tensor { return b.Sum(b.permuted(f32, [4]int{1, 0, 2, 3}, 9, 5, 2)) })
	add(false, "L2_NORM", NMSEF32, func(b *caseBuilder) *runtime.Tensor { return b.L2Norm(b.in(f32, 64, 7, 3), 1e-12) })
	add(true, "L2_NORM_eps_wins", NMSEF32, func(b *caseBuilder) *runtime.Tensor { return b.L2Norm(b.uniform(f32, -1e-3, 1e-3, 9, 4), 0.5) })
	for _, order := range []int32{runtime.SortAsc, runtime.SortDesc} {
		add(order != runtime.SortAsc, fmt.Sprintf("ARGSORT_%d", order), NMSEF32, func(b *caseBuilder) *runtime.Tensor {
			return b.Argsort(b.in(f32, 67, 5, 3), order)
		})
	}
	add(true, "ARGSORT_permuted", NMSEF32, func(b *caseBuilder) *runtime.Tensor {
		return b.Argsort(b.permuted(f32, [4]int{1, 0, 2, 3}, 16, 5), runtime.SortDesc)
	})
	add(false, "TOP_K", NMSEF32, func(b *caseBuilder) *runtime.Tensor { return b.TopK(b.in(f32, 67, 5, 3), 9) })
	add(true, "TOP_K_1", NMSEF32, func(b *caseBuilder) *runtime.Tensor { return b.TopK(b.in(f32, 20, 4), 1) })
	add(false, "ADD_ID", NMSEF32, func(b *caseBuilder) *runtime.Tensor {
		return b.AddId(b.in(f32, 32, 4, 5), b.in(f32, 32, 8), b.ints(8, 4, 5))
	})
	add(false, "CPY_f32_i32", NMSEF32, func(b *caseBuilder) *runtime.Tensor {
		return b.Cpy(b.uniform(f32, -100, 100, 33, 5), b.ints(10, 33, 5))
	})
	add(true, "CPY_i32_f32_transposed", NMSEF32, func(b *caseBuilder) *runtime.Tensor {
		return b.Cpy(b.Transpose(b.ints(1000, 5, 7)), b.in(f32, 7, 5))
	})

	// Flash attention: grouped heads, padded f16 mask, ALiBi, softcap, sinks.
	faMask := func(b *caseBuilder, nkv, n int64) *runtime.Tensor {
		return b.fill(b.NewTensor(f16, nkv+3, n), func(i int) float32 {
			if b.rng.IntN(6) == 0 && i%int(nkv+3) != 0 {
				return float32(math.Inf(-1))
			}
			return float32(b.rng.NormFloat64())
		})
	}
	for _, kv := range []runtime.Type{f16, f32, bf16} {
		add(kv == bf16, "FLASH_ATTN_EXT_kv_"+kv.String(), half(kv), func(b *caseBuilder) *runtime.Tensor {
			return b.FlashAttnExt(b.in(f32, 64, 7, 4), b.in(kv, 64, 19, 2), b.in(kv, 64, 19, 2), faMask(b, 19, 7), 0.125, 0, 0)
		})
	}
	add(false, "FLASH_ATTN_EXT_softcap_alibi_sinks", NMSEHalf, func(b *caseBuilder) *runtime.Tensor {
		fa := b.FlashAttnExt(b.in(f32, 32, 5, 4, 2), b.in(f16, 32, 11, 4, 2), b.in(f16, 48, 11, 4, 2), faMask(b, 11, 5), 0.2, 8, 30)
		return b.FlashAttnExtAddSinks(fa, b.in(f32, 4))
	})
	add(true, "FLASH_ATTN_EXT_no_mask_prec_f32", NMSEF32, func(b *caseBuilder) *runtime.Tensor {
		return b.FlashAttnExtSetPrec(b.FlashAttnExt(b.in(f32, 16, 1, 6), b.in(f32, 16, 9, 3), b.in(f32, 16, 9, 3), nil, 0.25, 0, 0), runtime.PrecF32)
	})
	add(true, "FLASH_ATTN_EXT_permuted_kv", NMSEHalf, func(b *caseBuilder) *runtime.Tensor {
		k := b.permuted(f16, [4]int{0, 2, 1, 3}, 32, 13, 2)
		v := b.permuted(f16, [4]int{0, 2, 1, 3}, 32, 13, 2)
		return b.FlashAttnExt(b.permuted(f32, [4]int{0, 2, 1, 3}, 32, 4, 4), k, v, faMask(b, 13, 4), 0.17, 0, 0)
	})

	// Mixture-of-experts products.
	for _, at := range []runtime.Type{f32, f16, bf16, runtime.TypeQ4_0, runtime.TypeQ8_0} {
		nm := NMSEF32
		if at != f32 {
			nm = NMSEQuant
		}
		add(at != f32, "MUL_MAT_ID_"+at.String(), nm, func(b *caseBuilder) *runtime.Tensor {
			return b.MulMatId(b.in(at, 64, 17, 6), b.in(f32, 64, 4, 5), b.ints(6, 4, 5))
		})
	}
	add(true, "MUL_MAT_ID_b_broadcast", NMSEF32, func(b *caseBuilder) *runtime.Tensor {
		return b.MulMatId(b.in(f32, 32, 9, 4), b.in(f32, 32, 1, 7), b.ints(4, 2, 7))
	})
	cs = append(cs, opCases3(reduced)...)
	return cs
}
