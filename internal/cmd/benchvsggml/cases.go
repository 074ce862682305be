package main

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/gogml/gogml/internal/ggmlpeer"
	"github.com/gogml/gogml/runtime"
)

// benchCase is one op at one shape, run on both sides.
type benchCase struct {
	name string // unique, [A-Za-z0-9_]: ggml's test-file name field
	op   string // the op as ggml names it
	desc string // the shape in words, for the report
	ggml ggmlOp
	// builtin, when set, is the start of the parameters of one of
	// test-backend-ops' own perf cases of op, which ggml runs instead of
	// a test-file line (see bigPromptCases).
	builtin string
	build   func(ctx *runtime.Context) *runtime.Tensor // gogml's graph
}

// ggmlOp is one line of test-backend-ops' --test-file format (a generic op:
// op, result type and shape, op_params as int32, sources with type, shape
// and byte strides).
type ggmlOp struct {
	op       string
	typ      runtime.Type
	ne       [4]int64
	params   []int32
	srcTypes []runtime.Type
	srcNe    [][4]int64
}

func (g ggmlOp) line(ops map[string]int, name string) (string, error) {
	op, ok := ops[g.op]
	if !ok {
		return "", fmt.Errorf("peer's ggml.h has no GGML_OP_%s", g.op)
	}
	srcs := make([]ggmlpeer.TestFileSource, len(g.srcTypes))
	for i, t := range g.srcTypes {
		srcs[i] = ggmlpeer.TestFileSource{Type: t, Ne: g.srcNe[i]}
	}
	return ggmlpeer.TestFileLine(op, g.typ, g.ne, g.params, srcs, name), nil
}

func f32bits(f float32) int32 { return int32(math.Float32bits(f)) }

// benchCases returns the cases: MUL_MAT of a k×k weight of each type by 1
// (decode) and by each prompt's count of f32 activation rows, the decode
// cases with weights larger than the cache (bigDecodeCases), then the row
// ops on the shapes of a 4096-wide model's prompt of 512 tokens, then
// FLASH_ATTN_EXT for decode and each prompt.
func benchCases(k int64, prompts []int64) []benchCase {
	var cs []benchCase
	ks := strconv.FormatInt(k, 10)
	for _, n := range append([]int64{1}, prompts...) {
		for _, t := range []runtime.Type{runtime.TypeF32, runtime.TypeF16, runtime.TypeQ4_0, runtime.TypeQ4_1, runtime.TypeQ5_0, runtime.TypeQ5_1, runtime.TypeQ8_0, runtime.TypeQ4_K, runtime.TypeQ6_K} {
			cs = append(cs, benchCase{
				name: fmt.Sprintf("mm_%s_n%d", t, n),
				op:   "MUL_MAT",
				desc: fmt.Sprintf("%s weights %s×%s, f32 activations n=%d", t, ks, ks, n),
				ggml: ggmlOp{op: "MUL_MAT", typ: runtime.TypeF32, ne: [4]int64{k, n, 1, 1},
					srcTypes: []runtime.Type{t, runtime.TypeF32}, srcNe: [][4]int64{{k, k, 1, 1}, {k, n, 1, 1}}},
				build: func(ctx *runtime.Context) *runtime.Tensor {
					return ctx.MulMat(ctx.NewTensor2D(t, k, k), ctx.NewTensor2D(runtime.TypeF32, k, n))
				},
			})
		}
	}
	cs = append(cs, bigDecodeCases(k)...)
	const w, rows = 4096, 512
	cs = append(cs,
		benchCase{
			name: "soft_max", op: "SOFT_MAX", desc: "f32 [4096, 512], scale 1, no mask",
			ggml: ggmlOp{op: "SOFT_MAX", typ: runtime.TypeF32, ne: [4]int64{w, rows, 1, 1}, params: []int32{f32bits(1), 0},
				srcTypes: []runtime.Type{runtime.TypeF32}, srcNe: [][4]int64{{w, rows, 1, 1}}},
			build: func(ctx *runtime.Context) *runtime.Tensor {
				return ctx.SoftMax(ctx.NewTensor2D(runtime.TypeF32, w, rows))
			},
		},
		benchCase{
			name: "rms_norm", op: "RMS_NORM", desc: "f32 [4096, 512], eps 1e-6",
			ggml: ggmlOp{op: "RMS_NORM", typ: runtime.TypeF32, ne: [4]int64{w, rows, 1, 1}, params: []int32{f32bits(1e-6)},
				srcTypes: []runtime.Type{runtime.TypeF32}, srcNe: [][4]int64{{w, rows, 1, 1}}},
			build: func(ctx *runtime.Context) *runtime.Tensor {
				return ctx.RMSNorm(ctx.NewTensor2D(runtime.TypeF32, w, rows), 1e-6)
			},
		},
	)
	for _, mode := range []int32{0, 2} {
		name, what := "rope", "normal"
		if mode == 2 {
			name, what = "rope_neox", "neox"
		}
		rp := runtime.RopeParams{FreqBase: 10000, FreqScale: 1, AttnFactor: 1, BetaFast: 32, BetaSlow: 1}
		cs = append(cs, benchCase{
			name: name, op: "ROPE", desc: "f32 [128, 32, 512] (" + what + "), 128 dims, i32 positions",
			ggml: ggmlOp{op: "ROPE", typ: runtime.TypeF32, ne: [4]int64{128, 32, rows, 1},
				params: []int32{0, 128, mode, 0, 0, f32bits(rp.FreqBase), f32bits(rp.FreqScale), f32bits(rp.ExtFactor),
					f32bits(rp.AttnFactor), f32bits(rp.BetaFast), f32bits(rp.BetaSlow)},
				srcTypes: []runtime.Type{runtime.TypeF32, runtime.TypeI32}, srcNe: [][4]int64{{128, 32, rows, 1}, {rows, 1, 1, 1}}},
			build: func(ctx *runtime.Context) *runtime.Tensor {
				return ctx.RopeExt(ctx.NewTensor3D(runtime.TypeF32, 128, 32, rows), ctx.NewTensor1D(runtime.TypeI32, rows), nil, 128, mode, rp)
			},
		})
	}
	cs = append(cs, benchCase{
		name: "swiglu", op: "GLU", desc: "SWIGLU split, f32 [4096, 512] × f32 [4096, 512]",
		ggml: ggmlOp{op: "GLU", typ: runtime.TypeF32, ne: [4]int64{w, rows, 1, 1}, params: []int32{int32(runtime.GluSwiglu), 0},
			srcTypes: []runtime.Type{runtime.TypeF32, runtime.TypeF32}, srcNe: [][4]int64{{w, rows, 1, 1}, {w, rows, 1, 1}}},
		build: func(ctx *runtime.Context) *runtime.Tensor {
			return ctx.SwigluSplit(ctx.NewTensor2D(runtime.TypeF32, w, rows), ctx.NewTensor2D(runtime.TypeF32, w, rows))
		},
	})
	cs = append(cs, flashAttnCases(prompts)...)
	for _, t := range []runtime.Type{runtime.TypeF32, runtime.TypeQ8_0} {
		cs = append(cs, benchCase{
			name: "get_rows_" + t.String(), op: "GET_ROWS", desc: fmt.Sprintf("%s [4096, 4096], 512 rows to f32", t),
			ggml: ggmlOp{op: "GET_ROWS", typ: runtime.TypeF32, ne: [4]int64{w, rows, 1, 1},
				srcTypes: []runtime.Type{t, runtime.TypeI32}, srcNe: [][4]int64{{w, 4096, 1, 1}, {rows, 1, 1, 1}}},
			build: func(ctx *runtime.Context) *runtime.Tensor {
				return ctx.GetRows(ctx.NewTensor2D(t, w, 4096), ctx.NewTensor1D(runtime.TypeI32, rows))
			},
		})
	}
	for _, p := range [][2]runtime.Type{{runtime.TypeF32, runtime.TypeF16}, {runtime.TypeF16, runtime.TypeF32}} {
		cs = append(cs, benchCase{
			name: fmt.Sprintf("cpy_%s_%s", p[0], p[1]), op: "CPY", desc: fmt.Sprintf("%s → %s [4096, 512]", p[0], p[1]),
			ggml: ggmlOp{op: "CPY", typ: p[1], ne: [4]int64{w, rows, 1, 1},
				srcTypes: []runtime.Type{p[0], p[1]}, srcNe: [][4]int64{{w, rows, 1, 1}, {w, rows, 1, 1}}},
			build: func(ctx *runtime.Context) *runtime.Tensor {
				return ctx.Cpy(ctx.NewTensor2D(p[0], w, rows), ctx.NewTensor2D(p[1], w, rows))
			},
		})
	}
	return cs
}

// bigDecodeM is the row count of the decode MUL_MAT cases whose weights
// are larger than the cache (32768 rows of k: 72 MiB of q4_0 at k=4096,
// 136 MiB of q8_0), where a decode product streams its weights from memory
// as a model's large matrices do.
const bigDecodeM = 32768

// bigDecodeCases are MUL_MAT of a k×bigDecodeM weight (bigDecodeM rows of
// k) of the types a model's weights come in most by one f32 activation
// row: decode with weights larger than the cache.
func bigDecodeCases(k int64) []benchCase {
	var cs []benchCase
	ks := strconv.FormatInt(k, 10)
	for _, t := range []runtime.Type{runtime.TypeQ4_0, runtime.TypeQ8_0, runtime.TypeQ4_K} {
		cs = append(cs, benchCase{
			name: fmt.Sprintf("mm_%s_n1_m%d", t, bigDecodeM),
			op:   "MUL_MAT",
			desc: fmt.Sprintf("%s weights %s×%d (k×m, larger than the cache), f32 activations n=1", t, ks, bigDecodeM),
			ggml: ggmlOp{op: "MUL_MAT", typ: runtime.TypeF32, ne: [4]int64{bigDecodeM, 1, 1, 1},
				srcTypes: []runtime.Type{t, runtime.TypeF32}, srcNe: [][4]int64{{k, bigDecodeM, 1, 1}, {k, 1, 1, 1}}},
			build: func(ctx *runtime.Context) *runtime.Tensor {
				return ctx.MulMat(ctx.NewTensor2D(t, k, bigDecodeM), ctx.NewTensor2D(runtime.TypeF32, k, 1))
			},
		})
	}
	return cs
}

// bigPromptM and bigPromptK are the weight shape of test-backend-ops' own
// MUL_MAT perf cases (m=4096 rows of k=14336) that have a batch of 512.
const bigPromptM, bigPromptK = 4096, 14336

// bigPromptCases are MUL_MAT of a 4096×14336 weight of each type by n f32
// activation rows, as test-backend-ops' own perf cases (n is 512 there):
// those are sized by their FLOPs (8 GFLOP and a second a case), where a
// test-file line is sized by its bytes (8 GB), which at n=512 means a
// hundred runs or more of 17+ GFLOP each (RATIONALE.md, "bench-vs-ggml:
// prompt rows at n=512 from ggml's own perf cases").
func bigPromptCases(n int64) []benchCase {
	var cs []benchCase
	for _, t := range []runtime.Type{runtime.TypeF32, runtime.TypeF16, runtime.TypeQ4_0, runtime.TypeQ8_0, runtime.TypeQ4_K, runtime.TypeQ6_K} {
		cs = append(cs, benchCase{
			name: fmt.Sprintf("mm_%s_n%d_k%d", t, n, bigPromptK),
			op:   "MUL_MAT",
			desc: fmt.Sprintf("%s weights %d×%d (k×m), f32 activations n=%d (ggml's own perf case)", t, bigPromptK, bigPromptM, n),
			ggml: ggmlOp{op: "MUL_MAT", typ: runtime.TypeF32, ne: [4]int64{bigPromptM, n, 1, 1},
				srcTypes: []runtime.Type{t, runtime.TypeF32}, srcNe: [][4]int64{{bigPromptK, bigPromptM, 1, 1}, {bigPromptK, n, 1, 1}}},
			builtin: fmt.Sprintf("type_a=%s,type_b=f32,m=%d,n=%d,k=%d,bs=[1,1],nr=[1,1],", ggmlTypeName(t), bigPromptM, n, bigPromptK),
			build: func(ctx *runtime.Context) *runtime.Tensor {
				return ctx.MulMat(ctx.NewTensor2D(t, bigPromptK, bigPromptM), ctx.NewTensor2D(runtime.TypeF32, bigPromptK, n))
			},
		})
	}
	return cs
}

// ggmlTypeName is ggml_type_name of t (ggml spells the k-quants q4_K).
func ggmlTypeName(t runtime.Type) string {
	s := t.String()
	if strings.HasSuffix(s, "_k") {
		s = strings.TrimSuffix(s, "_k") + "_K"
	}
	return s
}

// flashAttnCases are FLASH_ATTN_EXT of a llama-style layer (head size 128,
// 32 query heads over 8 f16 K/V heads, f16 mask, scale 1/√128): decode
// (1 token against 4096 keys) and each prompt (its tokens against 512
// keys).
func flashAttnCases(prompts []int64) []benchCase {
	const d, nh, nhkv = 128, 32, 8
	scale := float32(1 / math.Sqrt(d))
	var cs []benchCase
	shapes := [][2]int64{{1, 4096}}
	for _, n := range prompts {
		shapes = append(shapes, [2]int64{n, 512})
	}
	for _, s := range shapes {
		nq, nkv := s[0], s[1]
		cs = append(cs, benchCase{
			name: fmt.Sprintf("fa_n%d_kv%d", nq, nkv), op: "FLASH_ATTN_EXT",
			desc: fmt.Sprintf("q f32 [128, %d, 32], f16 K/V [128, %d, 8], f16 mask", nq, nkv),
			ggml: ggmlOp{op: "FLASH_ATTN_EXT", typ: runtime.TypeF32, ne: [4]int64{d, nh, nq, 1},
				params:   []int32{f32bits(scale), 0, 0, 0},
				srcTypes: []runtime.Type{runtime.TypeF32, runtime.TypeF16, runtime.TypeF16, runtime.TypeF16},
				srcNe:    [][4]int64{{d, nq, nh, 1}, {d, nkv, nhkv, 1}, {d, nkv, nhkv, 1}, {nkv, nq, 1, 1}}},
			build: func(ctx *runtime.Context) *runtime.Tensor {
				return ctx.FlashAttnExt(ctx.NewTensor3D(runtime.TypeF32, d, nq, nh),
					ctx.NewTensor3D(runtime.TypeF16, d, nkv, nhkv), ctx.NewTensor3D(runtime.TypeF16, d, nkv, nhkv),
					ctx.NewTensor2D(runtime.TypeF16, nkv, nq), scale, 0, 0)
			},
		})
	}
	return cs
}
