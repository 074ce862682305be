package opengl

import (
	"fmt"
	"strings"

	"github.com/gogml/gogml/runtime"
)

// This file maps the ops added to the GL backend after its first set
// (SET_ROWS, GLU, more unary functions, ...) to their kernels. Like
// kernels.go it has no GL calls and no build tag.

// Unary function codes of unary.comp beyond those of kernels.go.
const (
	fGeluErf uint32 = iota + fAdd1 + 1
	fGeluQuick
	fSgn
	fStep
	fElu
	fHardswish
	fHardsigmoid
	fExpm1
	fSoftplus
	fFloor
	fCeil
	fRound
	fTrunc
	fSin
	fCos
	fLeakyRelu
	fXielu
	fDiagMaskZero
)

// moreUnary maps the unary functions of this file to their codes.
var moreUnary = map[runtime.UnaryOp]uint32{
	runtime.UnaryGeluErf: fGeluErf, runtime.UnaryGeluQuick: fGeluQuick, runtime.UnarySgn: fSgn,
	runtime.UnaryStep: fStep, runtime.UnaryElu: fElu, runtime.UnaryHardswish: fHardswish,
	runtime.UnaryHardsigmoid: fHardsigmoid, runtime.UnaryExpm1: fExpm1, runtime.UnarySoftplus: fSoftplus,
	runtime.UnaryFloor: fFloor, runtime.UnaryCeil: fCeil, runtime.UnaryRound: fRound, runtime.UnaryTrunc: fTrunc,
	runtime.UnaryXielu: fXielu,
}

// setRowsQuant lists the quantized types set_rows.comp writes.
var setRowsQuant = map[runtime.Type]bool{
	runtime.TypeQ4_0: true, runtime.TypeQ4_1: true, runtime.TypeQ5_0: true, runtime.TypeQ5_1: true, runtime.TypeQ8_0: true,
}

// planMore maps the ops of this file; why says what is missing.
func planMore(t *runtime.Tensor) (*launch, string) {
	s0, s1 := t.Src[0], t.Src[1]
	switch t.Op {
	case runtime.OpUnary:
		f, ok := moreUnary[t.UnaryOp()]
		if !ok {
			return nil, fmt.Sprintf("unary %s", t.UnaryOp())
		}
		return unaryLaunch(t, f)
	case runtime.OpSin:
		return unaryLaunch(t, fSin)
	case runtime.OpCos:
		return unaryLaunch(t, fCos)
	case runtime.OpLeakyRelu:
		return unaryLaunch(t, fLeakyRelu)
	case runtime.OpSetRows:
		if why := need(t, 3); why != "" {
			return nil, why
		}
		if s0.Type != runtime.TypeF32 && s0.Type != runtime.TypeF16 {
			return nil, "values must be f32 or f16"
		}
		if s1.Type != runtime.TypeI32 && s1.Type != runtime.TypeI64 {
			return nil, "row ids must be i32 or i64"
		}
		quant := setRowsQuant[t.Type]
		if !isFloat(t.Type) && !quant {
			return nil, fmt.Sprintf("rows into %s (the GL kernel writes f32, f16, bf16, q4_0, q4_1, q5_0, q5_1 and q8_0)", t.Type)
		}
		if t.Ne[0] != s0.Ne[0] || t.Ne[2] != s0.Ne[2] || t.Ne[3] != s0.Ne[3] || s0.Ne[1] != s1.Ne[0] ||
			s1.Ne[1] == 0 || s1.Ne[2] == 0 || s0.Ne[2]%s1.Ne[1] != 0 || s0.Ne[3]%s1.Ne[2] != 0 || s1.Ne[3] != 1 {
			return nil, "shapes do not fit"
		}
		l := &launch{kernel: "set_rows", grid: gridSource, local: 128, srcs: [3]*runtime.Tensor{s0, s1}, status: true}
		if quant {
			// One invocation per block of 32 values.
			if !t.IsContiguousRows() || s0.Ne[0]%32 != 0 {
				return nil, "quantized rows must be dense and whole blocks"
			}
			l.grid, l.defines = gridCount, []string{"QUANT"}
			l.count = (uint64(s0.Nelements()/32) + l.local - 1) / l.local
		}
		return l, ""
	case runtime.OpGlu:
		if why := need(t, 1); why != "" {
			return nil, why
		}
		g := runtime.GluOp(t.OpParamI32(0))
		if g < 0 || g >= runtime.GluCount {
			return nil, fmt.Sprintf("glu function %d", int32(g))
		}
		if !isFloat(t.Type) || s0.Type != t.Type {
			return nil, "want f32, f16 or bf16 source and result of one type"
		}
		nc := s0.Ne[0] / 2
		l := &launch{kernel: "glu", grid: gridElements, local: 128, srcs: [3]*runtime.Tensor{s0}}
		if s1 != nil {
			if s1.Type != s0.Type || s1.Ne != s0.Ne {
				return nil, "the two halves must have one type and shape"
			}
			nc = s0.Ne[0]
			l.srcs[1] = s1
			l.extra[0] = 1
		}
		if nc < 1 || t.Ne != [4]int64{nc, s0.Ne[1], s0.Ne[2], s0.Ne[3]} {
			return nil, "result shape does not fit the source"
		}
		return l, ""
	}
	return planMisc(t)
}

// unaryLaunch is the element-wise launch of unary.comp function f.
func unaryLaunch(t *runtime.Tensor, f uint32) (*launch, string) {
	s0 := t.Src[0]
	if why := need(t, 1); why != "" {
		return nil, why
	}
	if !isFloat(t.Type) || s0.Type != t.Type || s0.Ne != t.Ne {
		return nil, "want f32, f16 or bf16 source and result of one type and shape"
	}
	l := &launch{kernel: "unary", grid: gridElements, local: 128, srcs: [3]*runtime.Tensor{s0}, extra: [8]uint32{f, 0}}
	if denseF32(t, s0) {
		l.dense = true
		l.extra[2] = uint32(t.Nelements())
	}
	return l, ""
}

// fL2Norm is rows.comp's L2_NORM (after the codes of kernels.go).
const fL2Norm = fRmsNormBack + 1

// Modes of misc.comp.
const (
	miscPad uint32 = iota
	miscAcc
	miscSet
	miscAddID
	miscIm2col
	miscFill
	miscArange
	miscTri
	miscRoll
	miscPadReflect
	miscRepeatBack
)

// planMisc maps the ops of misc.comp, group_norm.comp and argmax.comp.
func planMisc(t *runtime.Tensor) (*launch, string) {
	s0, s1, s2 := t.Src[0], t.Src[1], t.Src[2]
	misc := func(mode uint32, srcs ...*runtime.Tensor) *launch {
		l := &launch{kernel: "misc", grid: gridElements, local: 128, extra: [8]uint32{mode}}
		copy(l.srcs[:], srcs)
		return l
	}
	switch t.Op {
	case runtime.OpPad:
		if why := need(t, 1); why != "" {
			return nil, why
		}
		if !isFloat(t.Type) || s0.Type != t.Type {
			return nil, "want a float source and result of one type"
		}
		for d := 0; d < 4; d++ {
			if t.Ne[d] != s0.Ne[d]+int64(t.OpParamI32(2*d))+int64(t.OpParamI32(2*d+1)) || t.OpParamI32(2*d) < 0 {
				return nil, "result shape is not the padded source's"
			}
		}
		return misc(miscPad, s0), ""
	case runtime.OpAcc, runtime.OpSet:
		if why := need(t, 2); why != "" {
			return nil, why
		}
		es := t.Type.Size()
		if t.Op == runtime.OpAcc && (t.Type != runtime.TypeF32 || s1.Type != runtime.TypeF32) {
			return nil, "acc wants f32 tensors"
		}
		if t.Op == runtime.OpSet && (rawSize(t.Type) != 4 || s1.Type != t.Type) {
			return nil, "set wants 4-byte elements of one type"
		}
		if s0.Type != t.Type || s0.Ne != t.Ne || !s0.IsContiguous() || !t.IsContiguous() {
			return nil, "want a dense source and result of one type and shape"
		}
		nb1, nb2, nb3, off := int64(t.OpParamI32(0)), int64(t.OpParamI32(1)), int64(t.OpParamI32(2)), int64(t.OpParamI32(3))
		// The kernel finds an element's place in the view by dividing by
		// the strides, which needs them nested.
		if off < 0 || nb1 < int64(es)*s1.Ne[0] || nb2 < nb1*s1.Ne[1] || nb3 < nb2*s1.Ne[2] ||
			off+nb3*(s1.Ne[3]-1)+nb2*(s1.Ne[2]-1)+nb1*(s1.Ne[1]-1)+int64(es)*s1.Ne[0] > int64(t.NBytes()) {
			return nil, "view strides must be nested and the view inside the result"
		}
		l := misc(miscAcc, s0, s1)
		if t.Op == runtime.OpSet {
			l.extra[0] = miscSet
		}
		l.extra[1] = uint32(es)
		return l, ""
	case runtime.OpAddId:
		if why := need(t, 3); why != "" {
			return nil, why
		}
		if !isFloat(t.Type) || s0.Type != t.Type || !isFloat(s1.Type) || s2.Type != runtime.TypeI32 {
			return nil, "want float a, b and result, i32 ids"
		}
		if s0.Ne != t.Ne || s1.Ne[0] != t.Ne[0] || s2.Ne[0] < t.Ne[1] || s2.Ne[1] < t.Ne[2] || t.Ne[3] != 1 {
			return nil, "shapes do not fit"
		}
		l := misc(miscAddID, s0, s1, s2)
		l.status = true
		return l, ""
	case runtime.OpIm2col:
		if why := need(t, 2); why != "" {
			return nil, why
		}
		if !isFloat(s1.Type) || (t.Type != runtime.TypeF32 && t.Type != runtime.TypeF16) {
			return nil, "want a float input and an f32 or f16 result"
		}
		kw, kh, ic, ih := s0.Ne[0], int64(1), s0.Ne[1], int64(1)
		if t.OpParamI32(6) != 0 {
			kh, ic, ih = s0.Ne[1], s0.Ne[2], s1.Ne[1]
		}
		if t.Ne[0] != ic*kh*kw || kw > maxElements || kh > maxElements || ih > maxElements {
			return nil, "result rows do not fit the kernel"
		}
		l := misc(miscIm2col, s1)
		l.extra[1], l.extra[2], l.extra[3] = uint32(kw), uint32(kh), uint32(ih)
		return l, ""
	case runtime.OpGroupNorm:
		if why := need(t, 1); why != "" {
			return nil, why
		}
		if !isFloat(t.Type) || s0.Type != t.Type || s0.Ne != t.Ne {
			return nil, "want a float source and result of one type and shape"
		}
		ng := int64(t.OpParamI32(0))
		if ng < 1 || ng*t.Ne[3] > maxElements {
			return nil, fmt.Sprintf("%d groups", ng)
		}
		per := (t.Ne[2] + ng - 1) / ng
		if t.Ne[0]*t.Ne[1]*per > 64*20000 { // three walks of a 64th of the group each
			return nil, "groups of more than 1280000 elements (llvmpipe's loop limit)"
		}
		return &launch{kernel: "group_norm", grid: gridCount, count: uint64(ng * t.Ne[3]), local: 64,
			srcs: [3]*runtime.Tensor{s0}, extra: [8]uint32{uint32(per)}}, ""
	case runtime.OpArgsort, runtime.OpTopK:
		if why := need(t, 1); why != "" {
			return nil, why
		}
		if !isFloat(s0.Type) || t.Type != runtime.TypeI32 || t.Ne[1] != s0.Ne[1] || t.Ne[2] != s0.Ne[2] || t.Ne[3] != s0.Ne[3] {
			return nil, "want a float source and an i32 result with its rows"
		}
		l := &launch{kernel: "argsort", grid: gridSource, local: 128, srcs: [3]*runtime.Tensor{s0}}
		if t.Op == runtime.OpArgsort {
			if o := t.OpParamI32(0); t.Ne[0] != s0.Ne[0] || (o != 0 && o != 1) {
				return nil, "argsort needs the source's row length and order 0 or 1"
			}
		} else {
			if t.Ne[0] > s0.Ne[0] {
				return nil, "top_k needs k ≤ ne[0]"
			}
			l.extra[0] = 1
		}
		if s0.Ne[0] > 60000 { // llvmpipe's 65535 loop iterations per invocation
			return nil, "rows longer than 60000 elements (llvmpipe's loop limit)"
		}
		return l, ""
	case runtime.OpFlashAttnExt:
		return planFlashAttn(t)
	case runtime.OpSsmScan, runtime.OpRwkvWkv6, runtime.OpRwkvWkv7, runtime.OpGatedLinearAttn, runtime.OpGatedDeltaNet,
		runtime.OpSolveTri, runtime.OpLightningIndexer, runtime.OpDsv4HcComb, runtime.OpDsv4HcPre, runtime.OpDsv4HcPost:
		return planSeq(t)
	case runtime.OpCumsum:
		if why := need(t, 1); why != "" {
			return nil, why
		}
		if !isFloat(t.Type) || s0.Type != t.Type || s0.Ne != t.Ne {
			return nil, "want a float source and result of one type and shape"
		}
		// llvmpipe runs at most 65535 loop iterations per invocation; each
		// of a row's 64 invocations walks its chunk twice.
		if t.Ne[0] > 64*30000 {
			return nil, "rows longer than 1920000 elements (llvmpipe's loop limit)"
		}
		return &launch{kernel: "cumsum", grid: gridRows, local: 64, srcs: [3]*runtime.Tensor{s0}}, ""
	case runtime.OpRepeatBack:
		if why := need(t, 1); why != "" {
			return nil, why
		}
		if !isFloat(t.Type) || !isFloat(s0.Type) || !runtime.CanRepeat(t, s0) {
			return nil, "want float tensors and a source that repeats the result"
		}
		return misc(miscRepeatBack, s0), ""
	case runtime.OpFill:
		if !isFloat(t.Type) {
			return nil, "want a float result"
		}
		return misc(miscFill), ""
	case runtime.OpArange:
		if t.Type != runtime.TypeF32 || !t.IsVector() {
			return nil, "want an f32 vector"
		}
		return misc(miscArange), ""
	case runtime.OpTri, runtime.OpRoll, runtime.OpPadReflect1D:
		if why := need(t, 1); why != "" {
			return nil, why
		}
		if !isFloat(t.Type) || s0.Type != t.Type {
			return nil, "want a float source and result of one type"
		}
		switch t.Op {
		case runtime.OpTri:
			if tt := t.OpParamI32(0); tt < 0 || tt > 3 || s0.Ne != t.Ne {
				return nil, "tri type 0..3 and the source's shape"
			}
			return misc(miscTri, s0), ""
		case runtime.OpRoll:
			if s0.Ne != t.Ne {
				return nil, "roll keeps the source's shape"
			}
			for d := 0; d < 4; d++ {
				if sh := int64(t.OpParamI32(d)); sh <= -t.Ne[d] || sh >= t.Ne[d] {
					return nil, fmt.Sprintf("shift %d of dimension %d not inside ±ne", sh, d)
				}
			}
			return misc(miscRoll, s0), ""
		}
		p0, p1 := int64(t.OpParamI32(0)), int64(t.OpParamI32(1))
		if p0 < 0 || p1 < 0 || p0 >= s0.Ne[0] || p1 >= s0.Ne[0] || t.Ne != [4]int64{s0.Ne[0] + p0 + p1, s0.Ne[1], s0.Ne[2], s0.Ne[3]} {
			return nil, "pads must be below ne0 and the result the padded rows"
		}
		return misc(miscPadReflect, s0), ""
	case runtime.OpL2Norm:
		if why := need(t, 1); why != "" {
			return nil, why
		}
		if t.Type != runtime.TypeF32 || s0.Type != runtime.TypeF32 || s0.Ne != t.Ne {
			return nil, "want f32 source and result of one shape"
		}
		if t.Ne[0] > 64*30000 {
			return nil, "rows longer than 1920000 elements (llvmpipe's loop limit)"
		}
		return &launch{kernel: "rows", grid: gridRows, local: 64, srcs: [3]*runtime.Tensor{s0}, extra: [8]uint32{fL2Norm}}, ""
	case runtime.OpArgmax:
		if why := need(t, 1); why != "" {
			return nil, why
		}
		if !isFloat(s0.Type) || t.Type != runtime.TypeI32 || t.Ne[0] != s0.Ne[1] || s0.Ne[2] != 1 || s0.Ne[3] != 1 {
			return nil, "want a float matrix and an i32 index per row"
		}
		if s0.Ne[0] > 64*60000 {
			return nil, "rows longer than 3840000 elements (llvmpipe's loop limit)"
		}
		return &launch{kernel: "argmax", grid: gridCount, count: uint64(s0.Ne[1]), local: 64, srcs: [3]*runtime.Tensor{s0}}, ""
	}
	if l, why, ok := planSpatial(t); ok {
		return l, why
	}
	return nil, fmt.Sprintf("op %s", t.Op)
}

// planUnits maps the byte moves of types the float kernels do not handle
// (1-, 2- and 8-byte integers, quantized blocks) to elems.comp: CONCAT of
// any such type, REPEAT and same-type DUP/CONT/CPY of the element types.
// ok is false for the nodes it leaves to planOp.
func planUnits(t *runtime.Tensor) (l *launch, why string, ok bool) {
	s0, s1 := t.Src[0], t.Src[1]
	if s0 == nil || s0.Type != t.Type || rawSize(t.Type) != 0 || t.Type.Size() > 8 && t.Type.BlockSize() == 1 {
		return nil, "", false
	}
	bs, es := t.Type.BlockSize(), t.Type.Size()
	l = &launch{kernel: "elems", grid: gridCount, local: 128, srcs: [3]*runtime.Tensor{s0}, extra: [8]uint32{0, uint32(es), uint32(bs)}}
	units := func(x *runtime.Tensor) int64 { return x.Nelements() / bs }
	switch t.Op {
	case runtime.OpConcat:
		if s1 == nil || s1.Type != t.Type {
			return nil, "want sources and result of one type", true
		}
		dim := int(t.OpParamI32(0))
		if dim < 0 || dim > 3 {
			return nil, fmt.Sprintf("concat dimension %d", dim), true
		}
		for d := 0; d < 4; d++ {
			want := s0.Ne[d]
			if d == dim {
				want += s1.Ne[d]
			} else if s1.Ne[d] != s0.Ne[d] {
				return nil, "source shapes differ", true
			}
			if t.Ne[d] != want {
				return nil, "result shape does not join the sources", true
			}
		}
		if s0.Ne[0]%bs != 0 || s1.Ne[0]%bs != 0 {
			return nil, "rows must hold whole blocks", true
		}
		l.srcs[1] = s1
		l.extra[0] = 2
	case runtime.OpRepeat:
		if bs != 1 || !runtime.CanRepeat(s0, t) {
			return nil, "want an element type and a result shape that repeats the source", true
		}
	case runtime.OpDup, runtime.OpCont, runtime.OpCpy:
		if bs != 1 {
			return nil, "", false // quantized copies: planOp
		}
		if s0.Nelements() != t.Nelements() {
			return nil, "element counts differ", true
		}
		l.extra[0] = 1
	default:
		return nil, "", false
	}
	l.count = (uint64(units(t)) + l.local - 1) / l.local
	return l, "", true
}

// faBlockTypes are the key/value block types flash_attn.comp reads (the
// KV cache types llama.cpp offers, as ggml's CPU kernel takes them).
var faBlockTypes = map[runtime.Type]bool{
	runtime.TypeQ4_0: true, runtime.TypeQ4_1: true, runtime.TypeQ5_0: true, runtime.TypeQ5_1: true,
	runtime.TypeQ8_0: true, runtime.TypeIQ4_NL: true,
}

// faIters bounds the loop iterations of one flash_attn.comp invocation
// over nkv keys: the loop over the keys is its only loop (everything per
// element is unrolled). TestOpsFlashAttnLoopGuard runs the planner's
// largest nkv.
func faIters(nkv int64) int64 { return nkv }

// faWideIters bounds the loop iterations of one flash_attn_wide.comp
// invocation with dk-element keys, dv-element values and nkv keys: per
// chunk of 4096 keys its share of the keys (8 elements per iteration, and
// up to 7 more, or 4 per block) and their weights, 8 keys per iteration
// for each of its values, the reductions, and q's conversion (two walks
// of a block). TestOpsFlashAttnLoopGuard runs the largest heads at the
// bound.
func faWideIters(dk, dv, nkv int64) int64 {
	chunks := (nkv + 4095) / 4096
	perKey := dk/8 + 8
	return (nkv+63)/64*(perKey+1) + (dv+63)/64*(nkv/8+8*chunks) + chunks*(8+2*7) + 64 + (dk+63)/64 + 16
}

// faMaxIters is the most loop iterations planFlashAttn lets an
// invocation run (llvmpipe stops one after 65535).
const faMaxIters = 60000

// faUnrolled is the most key plus value elements per head that
// flash_attn.comp unrolls: its compile time on llvmpipe grows with the
// square of the unrolled code (measured with the shader cache off: f16
// heads of 64/64 1.7 s, 128/128 4.4 s, 256/256 19 s, f32 576/512 over
// three minutes), so larger heads go to flash_attn_wide.comp.
const faUnrolled = 256

// faWideMaxDK and faWideMaxDV bound flash_attn_wide.comp's heads: q's
// converted copy lives in its shared memory, its values in 8 accumulators
// per invocation.
const faWideMaxDK, faWideMaxDV = 576, 512

// faLocal is flash_attn.comp's work group size (one invocation per query
// row).
const faLocal = 32

// seqMacro is the define "name(M) M(0) M(1) ... M(n-1)": a list that
// unrolls a kernel's per-element code with constant indices.
func seqMacro(name string, n int64) string {
	var sb strings.Builder
	sb.WriteString(name + "(M)")
	for i := int64(0); i < n; i++ {
		fmt.Fprintf(&sb, " M(%d)", i)
	}
	return sb.String()
}

// rowAlign is the largest of 16, 4 and 2 that every row start of x is a
// multiple of.
func rowAlign(x *runtime.Tensor) int64 {
	for _, a := range []uint64{16, 4} {
		if x.Offset%a == 0 && x.Nb[1]%a == 0 && x.Nb[2]%a == 0 && x.Nb[3]%a == 0 {
			return int64(a)
		}
	}
	return 2
}

// faDefines are flash_attn.comp's compile-time parameters for keys k and
// values v (see the kernel's header).
func faDefines(k, v *runtime.Tensor) []string {
	defs := []string{fmt.Sprintf("KT %d", k.Type), fmt.Sprintf("VT %d", v.Type),
		fmt.Sprintf("DK %d", k.Ne[0]), fmt.Sprintf("DV %d", v.Ne[0])}
	for _, x := range []struct {
		t             *runtime.Tensor
		a, w, e, b, q string
	}{{k, "KA", "KW", "DK", "KB", "KQ"}, {v, "VA", "VW", "DV", "VB", "VQ"}} {
		words := (int64(x.t.Type.RowSize(x.t.Ne[0])) + 3) / 4
		al, quads := 0, int64(0)
		switch rowAlign(x.t) {
		case 16:
			al, quads = 2, (words+3)/4
			words = 4 * quads
		case 4:
			al = 1
		}
		blocks := int64(0)
		if !isFloat(x.t.Type) {
			blocks = x.t.Ne[0] / 32
		}
		defs = append(defs, fmt.Sprintf("%s %d", x.a, al), fmt.Sprintf("N%s %d", x.w, words),
			seqMacro("EACH_"+x.e, x.t.Ne[0]), seqMacro("EACH_"+x.w, words), seqMacro("EACH_"+x.b, blocks), seqMacro("EACH_"+x.q, quads))
	}
	return defs
}

// planFlashAttn maps FLASH_ATTN_EXT with f32, f16, bf16 or faBlockTypes
// keys and values, an optional f16 mask and optional f32 sinks to
// flash_attn.comp (heads of up to faUnrolled key plus value elements) or
// flash_attn_wide.comp.
func planFlashAttn(t *runtime.Tensor) (*launch, string) {
	q, k, v, m, sinks := t.Src[0], t.Src[1], t.Src[2], t.Src[3], t.Src[4]
	if why := need(t, 3); why != "" {
		return nil, why
	}
	kv := func(x *runtime.Tensor) bool {
		// Dense elements; block rows of whole blocks, each row's blocks
		// adjacent.
		return (isFloat(x.Type) || faBlockTypes[x.Type] && x.Ne[0]%32 == 0) && x.Nb[0] == x.Type.Size()
	}
	if t.Type != runtime.TypeF32 || q.Type != runtime.TypeF32 || !kv(k) || !kv(v) || q.Nb[0] != 4 || t.Nb[0] != 4 {
		return nil, "want f32 q and result; f32, f16, bf16, q4_0, q4_1, q5_0, q5_1, q8_0 or iq4_nl k and v (block rows of whole blocks); dense elements"
	}
	if k.Ne[0] != q.Ne[0] || k.Ne[1] != v.Ne[1] || k.Ne[2] == 0 || v.Ne[2] == 0 || k.Ne[3] == 0 || v.Ne[3] == 0 ||
		q.Ne[2]%k.Ne[2] != 0 || q.Ne[2]%v.Ne[2] != 0 || q.Ne[3]%k.Ne[3] != 0 || q.Ne[3]%v.Ne[3] != 0 ||
		t.Ne != [4]int64{v.Ne[0], q.Ne[2], q.Ne[1], q.Ne[3]} {
		return nil, "q, k and v shapes do not fit"
	}
	nkv := k.Ne[1]
	var l *launch
	if k.Ne[0]+v.Ne[0] <= faUnrolled {
		if faIters(nkv) > faMaxIters {
			return nil, fmt.Sprintf("%d keys (llvmpipe's loop limit)", nkv)
		}
		l = &launch{kernel: "flash_attn", grid: gridCount, local: faLocal, srcs: [3]*runtime.Tensor{q, k, v},
			count: uint64(q.Ne[1]*q.Ne[2]*q.Ne[3]+faLocal-1) / faLocal, defines: faDefines(k, v)}
	} else {
		if q.Ne[0] > faWideMaxDK || v.Ne[0] > faWideMaxDV || faWideIters(q.Ne[0], v.Ne[0], nkv) > faMaxIters {
			return nil, fmt.Sprintf("%d keys of %d and %d elements (shared memory, llvmpipe's loop limit)", nkv, q.Ne[0], v.Ne[0])
		}
		l = &launch{kernel: "flash_attn_wide", grid: gridCount, local: 64, srcs: [3]*runtime.Tensor{q, k, v},
			count: uint64(q.Ne[1] * q.Ne[2] * q.Ne[3]), defines: []string{fmt.Sprintf("KT %d", k.Type), fmt.Sprintf("VT %d", v.Type)}}
	}
	if m == nil && t.OpParamF32(1) > 0 {
		return nil, "max_bias > 0 needs a mask"
	}
	if m != nil {
		if m.Type != runtime.TypeF16 || m.Nb[0] != 2 || m.Ne[0] < k.Ne[1] || m.Ne[1] < q.Ne[1] || m.Ne[2] == 0 || m.Ne[3] == 0 ||
			q.Ne[2]%m.Ne[2] != 0 || q.Ne[3]%m.Ne[3] != 0 || !stridesOK(m) || m.Nelements() > maxElements {
			return nil, "mask must be dense f16 rows with n_kv columns, q.ne1 rows and broadcastable heads"
		}
		l.binds[0] = m
		l.extra = [8]uint32{uint32(m.Offset), uint32(m.Nb[1]), uint32(m.Nb[2]), uint32(m.Nb[3]), uint32(m.Ne[2]), uint32(m.Ne[3]), 1}
	}
	if sinks != nil {
		if sinks.Type != runtime.TypeF32 || !sinks.IsContiguous() || sinks.Nelements() != q.Ne[2] {
			return nil, "sinks must be contiguous f32, one per head"
		}
		l.binds[1], l.bindOff[1] = sinks, 7
		l.extra[6] |= 2
		l.extra[7] = uint32(sinks.Offset)
	}
	return l, ""
}
