package backendtest

import (
	"fmt"
	"math"

	"github.com/gogml/gogml/runtime"
)

// opCases returns the op table. reduced keeps one representative case per
// op and type.
func opCases(reduced bool) []opCase {
	const (
		f32  = runtime.TypeF32
		f16  = runtime.TypeF16
		bf16 = runtime.TypeBF16
		q8   = runtime.TypeQ8_0
		q4   = runtime.TypeQ4_0
	)
	var cs []opCase
	add := func(full bool, name string, nmse float64, build func(b *caseBuilder) *runtime.Tensor) {
		if full && reduced {
			return
		}
		cs = append(cs, opCase{name: name, nmse: nmse, build: build})
	}
	bound := func(types ...runtime.Type) float64 {
		e := NMSEF32
		for _, t := range types {
			switch {
			case t.IsQuantized():
				return NMSEQuant
			case t == f16 || t == bf16:
				e = NMSEHalf
			}
		}
		return e
	}

	// Copies: DUP, CONT, CPY with conversions, reshapes and views.
	for _, pair := range [][2]runtime.Type{{f32, f32}, {f32, f16}, {f16, f32}, {f32, bf16}, {bf16, f16}, {f32, q8}, {f32, q4}, {q8, f32}, {q4, f16}, {q8, q8}} {
		st, dt := pair[0], pair[1]
		add(false, fmt.Sprintf("CPY_%s_%s", st, dt), bound(st, dt), func(b *caseBuilder) *runtime.Tensor {
			return b.Cpy(b.in(st, 64, 3, 2), b.in(dt, 64, 3, 2))
		})
	}
	add(true, "CPY_f32_f16_reshaped", NMSEHalf, func(b *caseBuilder) *runtime.Tensor {
		return b.Cpy(b.in(f32, 6, 4, 5), b.in(f16, 8, 15))
	})
	add(true, "CPY_f32_f16_permuted", NMSEHalf, func(b *caseBuilder) *runtime.Tensor {
		return b.Cpy(b.permuted(f32, [4]int{0, 2, 1, 3}, 7, 5, 3), b.in(f16, 7, 5, 3))
	})
	add(false, "CPY_into_view", NMSEHalf, func(b *caseBuilder) *runtime.Tensor {
		cache := b.in(f16, 16, 9) // a KV cache written at rows 3..6
		return b.Cpy(b.in(f32, 16, 4), b.View2D(cache, 16, 4, cache.Nb[1], 3*cache.Nb[1]))
	})
	add(true, "CPY_i32", NMSEF32, func(b *caseBuilder) *runtime.Tensor {
		return b.Cpy(b.Transpose(b.ints(100, 5, 3)), b.ints(100, 3, 5))
	})
	add(false, "DUP_f32", NMSEF32, func(b *caseBuilder) *runtime.Tensor { return b.Dup(b.in(f32, 7, 5, 3, 2)) })
	add(true, "DUP_f16_transposed", NMSEHalf, func(b *caseBuilder) *runtime.Tensor { return b.Dup(b.Transpose(b.in(f16, 7, 5))) })
	add(false, "CONT_permuted", NMSEF32, func(b *caseBuilder) *runtime.Tensor {
		return b.Cont(b.permuted(f32, [4]int{0, 2, 1, 3}, 6, 5, 4, 3))
	})
	add(true, "CONT_permuted_3012", NMSEF32, func(b *caseBuilder) *runtime.Tensor {
		return b.Cont(b.permuted(f32, [4]int{3, 0, 1, 2}, 6, 5, 4, 3))
	})
	add(true, "CONT_4D_reshape", NMSEF32, func(b *caseBuilder) *runtime.Tensor {
		return b.Cont4D(b.Transpose(b.in(f32, 6, 10)), 5, 4, 3, 1)
	})
	add(true, "CONT_padded_bf16", NMSEHalf, func(b *caseBuilder) *runtime.Tensor { return b.Cont(b.padded(bf16, 9, 4, 3)) })

	// Binary ops with broadcasting.
	type binop struct {
		name string
		f    func(b *caseBuilder, x, y *runtime.Tensor) *runtime.Tensor
	}
	binops := []binop{
		{"ADD", func(b *caseBuilder, x, y *runtime.Tensor) *runtime.Tensor { return b.Add(x, y) }},
		{"SUB", func(b *caseBuilder, x, y *runtime.Tensor) *runtime.Tensor { return b.Sub(x, y) }},
		{"MUL", func(b *caseBuilder, x, y *runtime.Tensor) *runtime.Tensor { return b.Mul(x, y) }},
		{"DIV", func(b *caseBuilder, x, y *runtime.Tensor) *runtime.Tensor { return b.Div(x, y) }},
	}
	bshapes := [][]int64{{7, 5, 3, 2}, {7, 1, 3, 1}, {1, 5, 1, 2}, {7}, {1}}
	for _, op := range binops {
		for _, at := range []runtime.Type{f32, f16, bf16} {
			for si, bs := range bshapes {
				if (reduced || at != f32) && si != 0 && si != 1 {
					continue
				}
				if at == bf16 && si != 0 {
					continue
				}
				add(false, fmt.Sprintf("%s_%s_b%v", op.name, at, bs), bound(at), func(b *caseBuilder) *runtime.Tensor {
					y := b.uniform(f32, 0.5, 2, bs...)
					return op.f(b, b.in(at, 7, 5, 3, 2), y)
				})
			}
		}
		add(true, op.name+"_padded_permuted", NMSEF32, func(b *caseBuilder) *runtime.Tensor {
			y := b.Transpose(b.uniform(f32, 0.5, 2, 6, 9)) // ne {9, 6}, not contiguous
			return op.f(b, b.padded(f32, 9, 6), y)
		})
		add(true, op.name+"_b_permuted", NMSEF32, func(b *caseBuilder) *runtime.Tensor {
			return op.f(b, b.in(f32, 8, 6, 4), b.Permute(b.uniform(f32, 0.5, 2, 8, 4, 6), 0, 2, 1, 3))
		})
		add(true, op.name+"_f16_b_f16", NMSEHalf, func(b *caseBuilder) *runtime.Tensor {
			return op.f(b, b.in(f16, 33, 3), b.uniform(f16, 0.5, 2, 33))
		})
	}
	add(false, "ADD1_f32", NMSEF32, func(b *caseBuilder) *runtime.Tensor { return b.Add1(b.in(f32, 7, 5, 3), b.in(f32, 1)) })
	add(true, "ADD1_f16", NMSEHalf, func(b *caseBuilder) *runtime.Tensor { return b.Add1(b.in(f16, 7, 5), b.in(f32, 1)) })
	add(false, "SCALE_f32", NMSEF32, func(b *caseBuilder) *runtime.Tensor { return b.Scale(b.in(f32, 33, 5, 3), 0.37) })
	add(true, "SCALE_padded", NMSEF32, func(b *caseBuilder) *runtime.Tensor {
		x := b.in(f32, 12, 5)
		return b.Scale(b.View2D(x, 9, 5, x.Nb[1], 4), -2.5)
	})
	add(true, "SCALE_f16", NMSEHalf, func(b *caseBuilder) *runtime.Tensor { return b.Scale(b.in(f16, 33, 5), 3) })
	for _, typ := range []runtime.Type{f32, f16} {
		add(typ != f32, "SQR_"+typ.String(), bound(typ), func(b *caseBuilder) *runtime.Tensor { return b.Sqr(b.in(typ, 33, 5, 3)) })
		add(typ != f32, "SQRT_"+typ.String(), bound(typ), func(b *caseBuilder) *runtime.Tensor {
			return b.Sqrt(b.uniform(typ, 0.01, 10, 33, 5, 3))
		})
		add(typ != f32, "LOG_"+typ.String(), bound(typ), func(b *caseBuilder) *runtime.Tensor {
			return b.Log(b.uniform(typ, 0.01, 10, 33, 5, 3))
		})
	}
	add(true, "SQR_transposed", NMSEF32, func(b *caseBuilder) *runtime.Tensor { return b.Sqr(b.Transpose(b.in(f32, 7, 5))) })

	// Reductions and reshuffles.
	add(false, "SUM_ROWS_f32", NMSEF32, func(b *caseBuilder) *runtime.Tensor { return b.SumRows(b.in(f32, 33, 5, 3, 2)) })
	add(true, "SUM_ROWS_f16_padded", NMSEHalf, func(b *caseBuilder) *runtime.Tensor { return b.SumRows(b.padded(f16, 33, 5)) })
	add(false, "MEAN_f32", NMSEF32, func(b *caseBuilder) *runtime.Tensor { return b.Mean(b.in(f32, 33, 5, 3)) })
	add(true, "MEAN_permuted", NMSEF32, func(b *caseBuilder) *runtime.Tensor {
		return b.Mean(b.permuted(f32, [4]int{1, 0, 2, 3}, 9, 5, 2))
	})
	add(false, "REPEAT_f32", NMSEF32, func(b *caseBuilder) *runtime.Tensor {
		return b.Repeat(b.in(f32, 3, 2, 1, 1), b.NewTensor(f32, 9, 4, 3, 2))
	})
	add(true, "REPEAT_f16_transposed", NMSEHalf, func(b *caseBuilder) *runtime.Tensor {
		return b.Repeat(b.Transpose(b.in(f16, 2, 3)), b.NewTensor(f16, 6, 4, 2))
	})
	for dim := 0; dim < 4; dim++ {
		add(dim == 3, fmt.Sprintf("CONCAT_dim%d", dim), NMSEF32, func(b *caseBuilder) *runtime.Tensor {
			ne := []int64{5, 3, 2, 2}
			ne2 := append([]int64{}, ne...)
			ne2[dim] = 4
			return b.Concat(b.in(f32, ne...), b.in(f32, ne2...), dim)
		})
	}
	add(true, "CONCAT_f16_permuted", NMSEHalf, func(b *caseBuilder) *runtime.Tensor {
		return b.Concat(b.permuted(f16, [4]int{1, 0, 2, 3}, 5, 3), b.in(f16, 5, 2), 1)
	})
	add(true, "CONCAT_i32", NMSEF32, func(b *caseBuilder) *runtime.Tensor { return b.Concat(b.ints(9, 3, 2), b.ints(9, 3, 2), 2) })

	// Norms.
	for _, typ := range []runtime.Type{f32, f16} {
		add(typ != f32, "NORM_"+typ.String(), bound(typ), func(b *caseBuilder) *runtime.Tensor { return b.Norm(b.in(typ, 33, 7, 3), 1e-5) })
		add(typ != f32, "RMS_NORM_"+typ.String(), bound(typ), func(b *caseBuilder) *runtime.Tensor {
			return b.RMSNorm(b.in(typ, 33, 7, 3), 1e-6)
		})
	}
	add(true, "NORM_padded", NMSEF32, func(b *caseBuilder) *runtime.Tensor { return b.Norm(b.padded(f32, 64, 5), 1e-5) })
	add(true, "RMS_NORM_permuted", NMSEF32, func(b *caseBuilder) *runtime.Tensor {
		return b.RMSNorm(b.permuted(f32, [4]int{0, 2, 1, 3}, 64, 3, 5), 1e-5)
	})
	add(true, "RMS_NORM_large", NMSEF32, func(b *caseBuilder) *runtime.Tensor { return b.RMSNorm(b.in(f32, 1024, 9), 1e-5) })

	// Matrix products: weights a of every type, activations b.
	type mm struct {
		k, n, m int64
		ae, be  [2]int64 // dims 2, 3 of a and b
	}
	mms := []mm{
		{64, 17, 5, [2]int64{1, 1}, [2]int64{1, 1}},
		{32, 1, 8, [2]int64{1, 1}, [2]int64{1, 1}}, // one element's NMSE would be noise: 8
		{96, 33, 20, [2]int64{2, 1}, [2]int64{6, 2}},
		{256, 67, 29, [2]int64{1, 1}, [2]int64{1, 1}},
	}
	for _, at := range []runtime.Type{f32, f16, bf16, q8, q4} {
		for i, s := range mms {
			if reduced && i != 2 {
				continue
			}
			nm := bound(at)
			if at != f32 {
				nm = NMSEQuant
			}
			add(false, fmt.Sprintf("MUL_MAT_%s_k%d_n%d_m%d_a%v_b%v", at, s.k, s.n, s.m, s.ae, s.be), nm, func(b *caseBuilder) *runtime.Tensor {
				return b.MulMat(b.in(at, s.k, s.n, s.ae[0], s.ae[1]), b.in(f32, s.k, s.m, s.be[0], s.be[1]))
			})
		}
	}
	add(true, "MUL_MAT_b_permuted", NMSEF32, func(b *caseBuilder) *runtime.Tensor {
		return b.MulMat(b.in(f32, 64, 16, 2), b.permuted(f32, [4]int{0, 2, 1, 3}, 64, 9, 6))
	})
	add(true, "MUL_MAT_a_permuted_q8_0", NMSEQuant, func(b *caseBuilder) *runtime.Tensor {
		return b.MulMat(b.permuted(q8, [4]int{0, 2, 1, 3}, 64, 16, 2), b.in(f32, 64, 9, 4))
	})
	add(true, "MUL_MAT_b_transposed_view", NMSEF32, func(b *caseBuilder) *runtime.Tensor {
		return b.MulMat(b.in(f32, 7, 5), b.Transpose(b.in(f32, 3, 7)))
	})
	add(true, "MUL_MAT_padded", NMSEF32, func(b *caseBuilder) *runtime.Tensor {
		return b.MulMat(b.padded(f32, 40, 11), b.padded(f32, 40, 6))
	})
	add(false, "MUL_MAT_b_f16", NMSEQuant, func(b *caseBuilder) *runtime.Tensor {
		return b.MulMat(b.in(f16, 64, 17), b.in(f16, 64, 5))
	})

	// Row gathers.
	for _, at := range []runtime.Type{f32, f16, bf16, q8, q4} {
		add(false, "GET_ROWS_"+at.String(), bound(at), func(b *caseBuilder) *runtime.Tensor {
			return b.GetRows(b.in(at, 64, 10, 3), b.ints(10, 5, 3))
		})
	}
	add(true, "GET_ROWS_4D", NMSEF32, func(b *caseBuilder) *runtime.Tensor {
		return b.GetRows(b.in(f32, 7, 10, 3, 2), b.ints(10, 4, 3, 2))
	})
	add(true, "GET_ROWS_i32", NMSEF32, func(b *caseBuilder) *runtime.Tensor {
		return b.GetRows(b.ints(1000, 5, 10), b.ints(10, 7))
	})
	add(true, "GET_ROWS_padded", NMSEF32, func(b *caseBuilder) *runtime.Tensor {
		return b.GetRows(b.padded(f32, 9, 10), b.ints(10, 4))
	})

	// Masks and soft-max.
	add(false, "DIAG_MASK_INF", NMSEF32, func(b *caseBuilder) *runtime.Tensor { return b.DiagMaskInf(b.in(f32, 7, 7, 3), 0) })
	add(true, "DIAG_MASK_INF_past", NMSEF32, func(b *caseBuilder) *runtime.Tensor { return b.DiagMaskInf(b.in(f32, 9, 5, 2), 3) })
	add(true, "DIAG_MASK_INF_f16", NMSEHalf, func(b *caseBuilder) *runtime.Tensor { return b.DiagMaskInf(b.in(f16, 9, 5, 2), 2) })
	mask := func(b *caseBuilder, typ runtime.Type, ne ...int64) *runtime.Tensor {
		return b.fill(b.NewTensor(typ, ne...), func(i int) float32 {
			if i%int(ne[0]) != 0 && b.rng.IntN(5) == 0 {
				return float32(math.Inf(-1))
			}
			return float32(b.rng.NormFloat64())
		})
	}
	add(false, "SOFT_MAX", NMSEF32, func(b *caseBuilder) *runtime.Tensor { return b.SoftMax(b.in(f32, 33, 7, 3)) })
	add(true, "SOFT_MAX_large", NMSEF32, func(b *caseBuilder) *runtime.Tensor { return b.SoftMax(b.uniform(f32, -30, 30, 1000, 3)) })
	add(false, "SOFT_MAX_EXT_mask_f32", NMSEF32, func(b *caseBuilder) *runtime.Tensor {
		return b.SoftMaxExt(b.in(f32, 33, 7, 3), mask(b, f32, 33, 9), 0.125, 0)
	})
	add(true, "SOFT_MAX_EXT_mask_f16", NMSEF32, func(b *caseBuilder) *runtime.Tensor {
		return b.SoftMaxExt(b.in(f32, 33, 7, 3), mask(b, f16, 33, 7), 0.5, 0)
	})
	add(true, "SOFT_MAX_EXT_alibi", NMSEF32, func(b *caseBuilder) *runtime.Tensor {
		return b.SoftMaxExt(b.in(f32, 17, 4, 6), mask(b, f32, 17, 4), 1, 8)
	})
	add(true, "SOFT_MAX_EXT_mask_broadcast", NMSEF32, func(b *caseBuilder) *runtime.Tensor {
		return b.SoftMaxExt(b.in(f32, 17, 4, 4, 2), mask(b, f32, 17, 4, 2, 1), 0.3, 0)
	})
	add(true, "SOFT_MAX_EXT_alias_mask", NMSEF32, func(b *caseBuilder) *runtime.Tensor {
		return b.SoftMaxExt(b.in(f32, 17, 4), b.in(f32, 17, 4), 1, 0)
	})

	// Rotary embeddings.
	yarn := runtime.RopeParams{NCtxOrig: 512, FreqBase: 10000, FreqScale: 0.25, ExtFactor: 1, AttnFactor: 1, BetaFast: 32, BetaSlow: 1}
	for _, mode := range []int32{runtime.RopeNormal, runtime.RopeNeoX} {
		mname := map[int32]string{runtime.RopeNormal: "normal", runtime.RopeNeoX: "neox"}[mode]
		for _, typ := range []runtime.Type{f32, f16} {
			add(typ != f32, fmt.Sprintf("ROPE_%s_%s", mname, typ), bound(typ), func(b *caseBuilder) *runtime.Tensor {
				return b.Rope(b.in(typ, 64, 5, 7), b.ints(100, 7), 64, mode)
			})
		}
		add(true, "ROPE_partial_"+mname, NMSEF32, func(b *caseBuilder) *runtime.Tensor {
			return b.Rope(b.in(f32, 64, 3, 4, 2), b.ints(100, 4), 32, mode)
		})
		add(true, "ROPE_yarn_freq_factors_"+mname, NMSEF32, func(b *caseBuilder) *runtime.Tensor {
			return b.RopeExt(b.in(f32, 32, 3, 5), b.ints(2000, 5), b.uniform(f32, 1, 4, 16), 32, mode, yarn)
		})
		add(true, "ROPE_padded_"+mname, NMSEF32, func(b *caseBuilder) *runtime.Tensor {
			return b.Rope(b.padded(f32, 16, 3, 5), b.ints(100, 5), 16, mode)
		})
		add(false, "ROPE_BACK_"+mname, NMSEF32, func(b *caseBuilder) *runtime.Tensor {
			return b.RopeBack(b.in(f32, 32, 3, 5), b.ints(100, 5), nil, 24, mode, yarn)
		})
	}

	// Unary functions and clamp.
	for _, u := range []runtime.UnaryOp{runtime.UnaryGelu, runtime.UnarySilu, runtime.UnaryRelu, runtime.UnaryTanh,
		runtime.UnarySigmoid, runtime.UnaryNeg, runtime.UnaryAbs, runtime.UnaryExp} {
		for _, typ := range []runtime.Type{f32, f16} {
			add(typ != f32, fmt.Sprintf("UNARY_%s_%s", u, typ), bound(typ), func(b *caseBuilder) *runtime.Tensor {
				return b.Unary(b.uniform(typ, -6, 6, 33, 5, 3), u)
			})
		}
		add(true, fmt.Sprintf("UNARY_%s_padded", u), NMSEF32, func(b *caseBuilder) *runtime.Tensor {
			return b.Unary(b.padded(f32, 17, 5), u)
		})
	}
	add(false, "CLAMP", NMSEF32, func(b *caseBuilder) *runtime.Tensor { return b.Clamp(b.in(f32, 33, 5), -0.5, 0.7) })
	add(true, "CLAMP_f16", NMSEHalf, func(b *caseBuilder) *runtime.Tensor { return b.Clamp(b.in(f16, 33, 5), -1, 0.25) })

	// Backward ops.
	add(false, "SILU_BACK", NMSEF32, func(b *caseBuilder) *runtime.Tensor {
		return b.SiluBack(b.in(f32, 33, 5, 3), b.uniform(f32, -6, 6, 33, 5, 3))
	})
	add(false, "RMS_NORM_BACK", NMSEF32, func(b *caseBuilder) *runtime.Tensor {
		return b.RMSNormBack(b.in(f32, 33, 5, 3), b.in(f32, 33, 5, 3), 1e-5)
	})
	add(false, "SOFT_MAX_BACK", NMSEF32, func(b *caseBuilder) *runtime.Tensor {
		return b.SoftMaxBack(b.in(f32, 33, 5, 3), b.uniform(f32, 0, 0.1, 33, 5, 3))
	})
	add(true, "SOFT_MAX_EXT_BACK_scale", NMSEF32, func(b *caseBuilder) *runtime.Tensor {
		return b.SoftMaxExtBack(b.in(f32, 17, 4), b.uniform(f32, 0, 0.1, 17, 4), 0.25, 0)
	})
	return append(cs, opCases2(reduced)...)
}
