package backendtest

import (
	"github.com/gogml/gogml/runtime"
)

// opCases3 returns the cases of the rest of ggml 0.27.0's tensor ops
// (ref_ops3.go of package cpukernels).
func opCases3(reduced bool) []opCase {
	const (
		f32 = runtime.TypeF32
		f16 = runtime.TypeF16
	)
	var cs []opCase
	add := func(full bool, name string, nmse float64, build func(b *caseBuilder) *runtime.Tensor) {
		if full && reduced {
			return
		}
		cs = append(cs, opCase{name: name, nmse: nmse, build: build})
	}
	add(false, "ARGMAX", NMSEF32, func(b *caseBuilder) *runtime.Tensor { return b.Argmax(b.in(f32, 67, 9)) })
	add(false, "COUNT_EQUAL", NMSEF32, func(b *caseBuilder) *runtime.Tensor {
		return b.CountEqual(b.ints(3, 33, 5, 2), b.ints(3, 33, 5, 2))
	})
	add(false, "DIAG", NMSEF32, func(b *caseBuilder) *runtime.Tensor { return b.Diag(b.in(f32, 7, 1, 3)) })
	add(false, "DIAG_MASK_ZERO", NMSEF32, func(b *caseBuilder) *runtime.Tensor { return b.DiagMaskZero(b.in(f32, 9, 5, 2), 2) })
	add(true, "DIAG_MASK_ZERO_f16", NMSEHalf, func(b *caseBuilder) *runtime.Tensor { return b.DiagMaskZero(b.in(f16, 9, 5, 2), 0) })
	add(false, "PAD", NMSEF32, func(b *caseBuilder) *runtime.Tensor { return b.Pad(b.in(f32, 7, 5, 3, 2), 2, 1, 3, 0) })
	add(false, "PAD_EXT", NMSEF32, func(b *caseBuilder) *runtime.Tensor {
		return b.PadExt(b.in(f32, 7, 5, 3, 2), 1, 2, 3, 0, 0, 2, 1, 1)
	})
	add(true, "PAD_EXT_circular_permuted", NMSEF32, func(b *caseBuilder) *runtime.Tensor {
		return b.PadExtCircular(b.permuted(f32, [4]int{1, 0, 2, 3}, 7, 5, 3), 2, 3, 1, 4, 0, 1, 0, 0)
	})
	add(false, "PAD_REFLECT_1D", NMSEF32, func(b *caseBuilder) *runtime.Tensor { return b.PadReflect1D(b.in(f32, 9, 5, 2), 3, 8) })
	add(false, "ROLL", NMSEF32, func(b *caseBuilder) *runtime.Tensor { return b.Roll(b.in(f32, 7, 5, 3, 2), 3, -2, 1, 0) })
	add(false, "ARANGE", NMSEF32, func(b *caseBuilder) *runtime.Tensor { return b.Arange(-3, 17.5, 0.7) })
	add(false, "TIMESTEP_EMBEDDING", NMSEF32, func(b *caseBuilder) *runtime.Tensor {
		return b.TimestepEmbedding(b.uniform(f32, 0, 1000, 5), 64, 10000)
	})
	add(true, "TIMESTEP_EMBEDDING_odd", NMSEF32, func(b *caseBuilder) *runtime.Tensor {
		return b.TimestepEmbedding(b.uniform(f32, 0, 1000, 3), 15, 100)
	})
	for _, typ := range []runtime.Type{f32, f16} {
		nm := NMSEF32
		if typ != f32 {
			nm = NMSEHalf
		}
		add(typ != f32, "LEAKY_RELU_"+typ.String(), nm, func(b *caseBuilder) *runtime.Tensor {
			return b.LeakyRelu(b.in(typ, 33, 5, 3), 0.1, false)
		})
		add(typ != f32, "FILL_"+typ.String(), nm, func(b *caseBuilder) *runtime.Tensor { return b.Fill(b.in(typ, 33, 5), -2.5) })
	}
	for tt := runtime.TriUpperDiag; tt <= runtime.TriLower; tt++ {
		add(tt != runtime.TriLower, "TRI_"+string(rune('0'+tt)), NMSEF32, func(b *caseBuilder) *runtime.Tensor {
			return b.Tri(b.in(f32, 9, 9, 2), tt)
		})
	}
	add(false, "CUMSUM", NMSEF32, func(b *caseBuilder) *runtime.Tensor { return b.Cumsum(b.in(f32, 67, 5, 3)) })
	add(true, "CUMSUM_permuted", NMSEF32, func(b *caseBuilder) *runtime.Tensor {
		return b.Cumsum(b.permuted(f32, [4]int{1, 0, 2, 3}, 9, 5, 2))
	})
	add(false, "ACC", NMSEF32, func(b *caseBuilder) *runtime.Tensor {
		a := b.in(f32, 16, 8, 3)
		return b.Acc(a, b.in(f32, 5, 4, 2), a.Nb[1], a.Nb[2], a.Nb[3], a.Nb[1]+2*4)
	})
	add(false, "SET", NMSEF32, func(b *caseBuilder) *runtime.Tensor {
		a := b.in(f32, 16, 8, 3)
		return b.Set(a, b.in(f32, 5, 4, 2), a.Nb[1], a.Nb[2], a.Nb[3], a.Nb[2]+3*4)
	})
	add(true, "SET_i32", NMSEF32, func(b *caseBuilder) *runtime.Tensor {
		a := b.ints(50, 16, 8)
		return b.Set(a, b.ints(50, 16, 2), a.Nb[1], a.Nb[2], a.Nb[3], 5*a.Nb[1])
	})
	add(false, "REPEAT_BACK", NMSEF32, func(b *caseBuilder) *runtime.Tensor {
		return b.RepeatBack(b.in(f32, 9, 4, 6, 2), b.NewTensor(f32, 3, 2, 3, 1))
	})
	add(false, "GROUP_NORM", NMSEF32, func(b *caseBuilder) *runtime.Tensor { return b.GroupNorm(b.in(f32, 8, 5, 12, 2), 5, 1e-6) })
	add(false, "OUT_PROD", NMSEF32, func(b *caseBuilder) *runtime.Tensor {
		return b.OutProd(b.in(f32, 17, 9, 2), b.in(f32, 13, 9, 4, 2))
	})
	add(true, "OUT_PROD_f16_a", NMSEHalf, func(b *caseBuilder) *runtime.Tensor {
		return b.OutProd(b.in(f16, 17, 9), b.in(f32, 13, 9))
	})
	add(false, "GET_ROWS_BACK", NMSEF32, func(b *caseBuilder) *runtime.Tensor {
		return b.GetRowsBack(b.in(f32, 9, 12), b.ints(6, 12), b.NewTensor(f32, 9, 6))
	})
	for _, typ := range []runtime.Type{f32, f16} {
		nm := NMSEF32
		if typ != f32 {
			nm = NMSEHalf
		}
		add(typ != f32, "IM2COL_2D_"+typ.String(), nm, func(b *caseBuilder) *runtime.Tensor {
			return b.Im2col(b.in(f16, 3, 3, 4, 5), b.in(f32, 10, 9, 4, 2), 2, 1, 1, 1, 1, 2, true, typ)
		})
		add(typ != f32, "IM2COL_1D_"+typ.String(), nm, func(b *caseBuilder) *runtime.Tensor {
			return b.Im2col(b.in(f16, 5, 3, 2), b.in(f32, 20, 3, 2), 2, 0, 2, 0, 1, 0, false, typ)
		})
	}
	for _, op := range []int32{runtime.PoolMax, runtime.PoolAvg} {
		add(op != runtime.PoolMax, "POOL_1D_"+string(rune('0'+op)), NMSEF32, func(b *caseBuilder) *runtime.Tensor {
			return b.Pool1D(b.in(f32, 12, 5, 3), op, 3, 3, 0)
		})
		add(false, "POOL_2D_"+string(rune('0'+op)), NMSEF32, func(b *caseBuilder) *runtime.Tensor {
			return b.Pool2D(b.in(f32, 11, 9, 3, 2), op, 3, 2, 2, 1, 1, 1)
		})
	}
	for _, mode := range []uint32{runtime.ScaleNearest, runtime.ScaleBilinear, runtime.ScaleBilinear | runtime.ScaleAlignCorners} {
		add(mode != runtime.ScaleNearest, "UPSCALE_"+string(rune('a'+mode%8))+map[bool]string{true: "_align"}[mode > 8], NMSEF32, func(b *caseBuilder) *runtime.Tensor {
			return b.Interpolate(b.in(f32, 5, 4, 3, 2), 11, 7, 3, 2, mode)
		})
	}
	add(true, "UPSCALE_bicubic", NMSEF32, func(b *caseBuilder) *runtime.Tensor {
		return b.Interpolate(b.in(f32, 5, 4, 3, 2), 11, 7, 3, 2, runtime.ScaleBicubic)
	})
	add(true, "UPSCALE_bilinear_antialias_down", NMSEF32, func(b *caseBuilder) *runtime.Tensor {
		return b.Interpolate(b.in(f32, 13, 11, 3, 2), 5, 4, 3, 2, runtime.ScaleBilinear|runtime.ScaleAntialias)
	})
	for _, kt := range []runtime.Type{f32, runtime.TypeF16} {
		add(kt != f32, "CONV_TRANSPOSE_1D_"+kt.String(), NMSEF32, func(b *caseBuilder) *runtime.Tensor {
			return b.ConvTranspose1D(b.in(kt, 5, 3, 4), b.in(f32, 9, 4), 2, 0, 1)
		})
	}
	for _, kt := range []runtime.Type{f32, runtime.TypeF16} {
		add(kt != f32, "CONV_2D_DW_"+kt.String(), NMSEF32, func(b *caseBuilder) *runtime.Tensor {
			return b.Conv2DDwDirect(b.in(kt, 3, 3, 1, 4), b.in(f32, 9, 7, 4, 2), 2, 1, 1, 0, 1, 2)
		})
		add(kt != f32, "CONV_2D_"+kt.String(), NMSEF32, func(b *caseBuilder) *runtime.Tensor {
			return b.Conv2DDirect(b.in(kt, 3, 2, 4, 5), b.in(f32, 9, 7, 4, 2), 2, 1, 1, 0, 1, 2)
		})
		add(kt != f32, "CONV_TRANSPOSE_2D_"+kt.String(), NMSEF32, func(b *caseBuilder) *runtime.Tensor {
			return b.ConvTranspose2DP0(b.in(kt, 3, 2, 5, 4), b.in(f32, 6, 4, 4, 2), 2)
		})
	}
	for _, typ := range []runtime.Type{f32, runtime.TypeF16} {
		add(typ != f32, "IM2COL_3D_"+typ.String(), NMSEF32, func(b *caseBuilder) *runtime.Tensor {
			return b.Im2col3D(b.in(f32, 3, 2, 2, 2), b.in(f32, 7, 6, 5, 2*3), 2, 1, 2, 1, 1, 0, 1, 1, 1, 2, typ)
		})
	}
	add(false, "COL2IM_1D", NMSEF32, func(b *caseBuilder) *runtime.Tensor {
		return b.Col2im1D(b.in(f32, 5*3, 11), 2, 3, 1)
	})
	add(true, "UPSCALE_nearest_down", NMSEF32, func(b *caseBuilder) *runtime.Tensor {
		return b.Upscale(b.Interpolate(b.in(f32, 9, 8, 6), 4, 3, 3, 1, runtime.ScaleNearest), 2, runtime.ScaleNearest)
	})
	add(false, "SSM_CONV", NMSEF32, func(b *caseBuilder) *runtime.Tensor { return b.SsmConv(b.in(f32, 3+7, 16, 2), b.in(f32, 4, 16)) })
	add(false, "CROSS_ENTROPY_LOSS", NMSEF32, func(b *caseBuilder) *runtime.Tensor {
		return b.CrossEntropyLoss(b.in(f32, 33, 5, 2), b.uniform(f32, 0, 1, 33, 5, 2))
	})
	add(false, "CROSS_ENTROPY_LOSS_BACK", NMSEF32, func(b *caseBuilder) *runtime.Tensor {
		return b.CrossEntropyLossBack(b.in(f32, 1), b.in(f32, 33, 5, 2), b.uniform(f32, 0, 1, 33, 5, 2))
	})
	add(false, "OPT_STEP_ADAMW", NMSEF32, func(b *caseBuilder) *runtime.Tensor {
		w := b.in(f32, 33, 5)
		w.SetFlag(runtime.FlagParam)
		pr := b.fill(b.NewTensor(f32, 7), func(i int) float32 { return []float32{1e-3, 0.9, 0.999, 1e-8, 0.01, 1.2, 1.1}[i] })
		return b.OptStepAdamw(w, b.in(f32, 33, 5), b.in(f32, 33, 5), b.uniform(f32, 0, 1, 33, 5), pr)
	})
	add(false, "OPT_STEP_SGD", NMSEF32, func(b *caseBuilder) *runtime.Tensor {
		w := b.in(f32, 33, 5)
		w.SetFlag(runtime.FlagParam)
		return b.OptStepSgd(w, b.in(f32, 33, 5), b.fill(b.NewTensor(f32, 2), func(i int) float32 { return []float32{0.1, 0.01}[i] }))
	})
	return append(cs, opCasesSeq(reduced)...)
}
