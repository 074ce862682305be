package opengl

import (
	"fmt"
	"math"

	cpukernels "github.com/gogml/gogml/internal/kernels/cpukernels"
	"github.com/gogml/gogml/runtime"
)

// This file maps graph nodes to GLSL kernels. It has no GL calls and no
// build tag, so the mapping (and SupportsOp) is tested in every build.

// Kernel function codes; they match the F_* defines of the .comp files.
const (
	fRaw uint32 = iota
	fConvert
	fScale
	fSqr
	fSqrt
	fLog
	fClamp
	fAbs
	fNeg
	fTanh
	fRelu
	fSigmoid
	fGelu
	fSilu
	fExp
	fDiagMaskInf
	fAdd1
)

const (
	fAdd uint32 = iota
	fSub
	fMul
	fDiv
	fSiluBack
)

const (
	fSumRows uint32 = iota
	fMean
	fNorm
	fRmsNorm
	fSoftMax
	fSoftMaxBack
	fRmsNormBack
)

// Layout of the parameter array P of every kernel (see common.glsl).
const (
	numParams   = 64
	slotWords   = 10
	opParamBase = 40
	extraBase   = 56
	numSlots    = 4
	numBinds    = 4 // further sources at bindings numSlots+1.. (launch.binds)
)

// grid says how a kernel's work groups cover the result.
type grid int

const (
	gridElements grid = iota // one invocation per result element
	gridRows                 // one work group per result row
	gridPairs                // one invocation per element pair (rope)
	gridMulMat               // one invocation per 4 x tn block of the result
	gridBlocks               // one invocation per quantized block of the result
	gridUnits                // one invocation per 2 bytes of the result's rows
	gridSuper                // one invocation per 256-element block of the result
	gridSource               // one invocation per element of source 0
	gridCount                // launch.count work groups
)

// Modes of the quant kernel.
const (
	dequantize uint32 = iota
	copyBlocks
	quantize
	castInt
)

// launch is a node prepared for dispatch: kernel, grid, source slots and
// parameters (descriptors are filled in when buffers are known).
type launch struct {
	kernel  string
	grid    grid
	local   uint64
	srcs    [numSlots - 1]*runtime.Tensor // tensors of slots 1..3
	extra   [8]uint32
	status  bool                      // kernel may raise the status word
	dense   bool                      // compile with DENSE: all f32, contiguous, flat indexing
	defines []string                  // further compile-time parameters
	tn      uint64                    // mul_mat: result columns per invocation
	count   uint64                    // gridCount: the number of work groups
	binds   [numBinds]*runtime.Tensor // further sources, bound at bindings 5.. (flash_attn's mask and sinks)
	bindOff [numBinds]int             // the extra word that holds each one's byte offset
}

// mulMatTM is the number of result rows a mul_mat invocation computes.
const mulMatTM = 4

// denseF32 reports whether every tensor is f32 and contiguous.
func denseF32(ts ...*runtime.Tensor) bool {
	for _, t := range ts {
		if t.Type != runtime.TypeF32 || !t.IsContiguous() {
			return false
		}
	}
	return true
}

// densePrefix reports whether b's shape is a's shape cut after some
// dimension (the rest 1), so that b's flat index is a's modulo b's size.
func densePrefix(b, a *runtime.Tensor) bool {
	d := 0
	for d < 4 && b.Ne[d] == a.Ne[d] {
		d++
	}
	for ; d < 4; d++ {
		if b.Ne[d] != 1 {
			return false
		}
	}
	return true
}

// maxElements bounds element counts so that flat indices fit in 32 bits.
const maxElements = 1<<31 - 1

func isFloat(t runtime.Type) bool {
	return t == runtime.TypeF32 || t == runtime.TypeF16 || t == runtime.TypeBF16
}

// isRowType reports the types ldrow reads: the float types and the block
// types of q4_0/q8_0 and dequant.glsl.
func isRowType(t runtime.Type) bool {
	switch t {
	case runtime.TypeQ4_0, runtime.TypeQ4_1, runtime.TypeQ5_0, runtime.TypeQ5_1, runtime.TypeQ8_0,
		runtime.TypeQ2_K, runtime.TypeQ3_K, runtime.TypeQ4_K, runtime.TypeQ5_K, runtime.TypeQ6_K:
		return true
	}
	return isFloat(t)
}

// isKQuant reports the k-quants, which the quant_k kernel writes from
// floats with ggml's reference quantizers.
func isKQuant(t runtime.Type) bool {
	return t >= runtime.TypeQ2_K && t <= runtime.TypeQ6_K
}

// isQuantizeType reports the block types the quant kernel writes from
// floats: those whose ggml reference quantizer is a closed formula per
// block of 32.
func isQuantizeType(t runtime.Type) bool {
	switch t {
	case runtime.TypeQ4_0, runtime.TypeQ4_1, runtime.TypeQ5_0, runtime.TypeQ5_1, runtime.TypeQ8_0:
		return true
	}
	return false
}

// rawSize is the element size of types copied as raw bits (0: none).
func rawSize(t runtime.Type) uint64 {
	switch t {
	case runtime.TypeF32, runtime.TypeI32:
		return 4
	case runtime.TypeF16, runtime.TypeBF16:
		return 2
	}
	return 0
}

// stridesOK checks that a non-block tensor's strides keep its elements
// aligned to their size, as the kernels' word addressing needs.
func stridesOK(t *runtime.Tensor) bool {
	if t.Type.BlockSize() != 1 {
		// Block types: blocks are addressed by bytes; rows need 2-byte
		// alignment for the f16 scale.
		return t.Nb[1]%2 == 0 && t.Nb[2]%2 == 0 && t.Nb[3]%2 == 0
	}
	es := min(t.Type.Size(), 4) // i64 is read as two words
	if t.Type.Size() > 8 {
		return false
	}
	for _, n := range t.Nb {
		if n%es != 0 {
			return false
		}
	}
	return true
}

func f32bits(v float32) uint32 { return math.Float32bits(v) }

// plan maps node t to its kernel, or explains why there is none. View ops
// and NONE give a nil launch.
func plan(t *runtime.Tensor) (*launch, error) {
	if t == nil {
		return nil, fmt.Errorf("nil tensor: %w", runtime.ErrUnsupported)
	}
	switch t.Op {
	case runtime.OpNone, runtime.OpView, runtime.OpReshape, runtime.OpPermute, runtime.OpTranspose:
		return nil, nil
	}
	l, why := planOp(t)
	if why != "" {
		return nil, fmt.Errorf("opengl: tensor %s: %s: %w", t, why, runtime.ErrUnsupported)
	}
	for _, s := range append(append([]*runtime.Tensor{t}, l.srcs[:]...), l.binds[:]...) {
		if s == nil {
			continue
		}
		if s.Nelements() > maxElements {
			return nil, fmt.Errorf("opengl: tensor %s: more than 2^31 elements: %w", s, runtime.ErrUnsupported)
		}
		if !stridesOK(s) {
			return nil, fmt.Errorf("opengl: tensor %s: strides %v not aligned to its elements: %w", s, s.Nb, runtime.ErrUnsupported)
		}
	}
	return l, nil
}

// maxRowsKernelRow is the longest row the "rows" kernel reduces exactly:
// each of its 64 invocations walks a 64th of the row up to three times,
// and llvmpipe stops an invocation after 65535 loop iterations in all
// (RATIONALE: "OpenGL's later ops"), so longer rows are refused rather
// than left partly unwritten.
const maxRowsKernelRow = 1 << 20

// rowsTooLong says why a "rows" kernel over rows of n elements is refused,
// or "" when it is not.
func rowsTooLong(n int64) string {
	if n > maxRowsKernelRow {
		return fmt.Sprintf("rows of %d elements exceed the row kernel's %d (llvmpipe's loop guard)", n, maxRowsKernelRow)
	}
	return ""
}

func need(t *runtime.Tensor, n int) string {
	for i := 0; i < n; i++ {
		if t.Src[i] == nil {
			return fmt.Sprintf("source %d missing", i)
		}
	}
	return ""
}

func planOp(t *runtime.Tensor) (*launch, string) {
	if l, why, ok := planUnits(t); ok {
		return l, why
	}
	s0, s1, s2 := t.Src[0], t.Src[1], t.Src[2]
	elementwise := func(f uint32) (*launch, string) {
		if why := need(t, 1); why != "" {
			return nil, why
		}
		if !isFloat(t.Type) || s0.Type != t.Type || s0.Ne != t.Ne {
			return nil, "want f32, f16 or bf16 source and result of one type and shape"
		}
		l := &launch{kernel: "unary", grid: gridElements, local: 128, srcs: [3]*runtime.Tensor{s0}, extra: [8]uint32{f, 0}}
		if f != fDiagMaskInf && denseF32(t, s0) {
			l.dense = true
			l.extra[2] = uint32(t.Nelements())
		}
		return l, ""
	}
	switch t.Op {
	case runtime.OpDup, runtime.OpCont, runtime.OpCpy:
		if why := need(t, 1); why != "" {
			return nil, why
		}
		if s0.Nelements() != t.Nelements() {
			return nil, "element counts differ"
		}
		l := &launch{kernel: "unary", grid: gridElements, local: 128, srcs: [3]*runtime.Tensor{s0}, extra: [8]uint32{fRaw, 1}}
		switch {
		case s0.Type == t.Type && rawSize(t.Type) != 0:
		case isFloat(s0.Type) && isFloat(t.Type):
			l.extra[0] = fConvert
		case (s0.Type == runtime.TypeF32 && t.Type == runtime.TypeI32) || (s0.Type == runtime.TypeI32 && t.Type == runtime.TypeF32):
			return &launch{kernel: "quant", grid: gridElements, local: 128, srcs: [3]*runtime.Tensor{s0}, extra: [8]uint32{castInt}}, ""
		case isFloat(s0.Type) && isQuantizeType(t.Type):
			if !t.IsContiguousRows() {
				return nil, "quantized result rows must be dense"
			}
			return &launch{kernel: "quant", grid: gridBlocks, local: 128, srcs: [3]*runtime.Tensor{s0}, extra: [8]uint32{quantize}}, ""
		case isFloat(s0.Type) && isKQuant(t.Type):
			if !t.IsContiguousRows() {
				return nil, "quantized result rows must be dense"
			}
			return &launch{kernel: "quant_k", grid: gridSuper, local: 64, srcs: [3]*runtime.Tensor{s0}, defines: []string{fmt.Sprintf("QT %d", t.Type)}}, ""
		case s0.Type.IsQuantized() && isRowType(s0.Type) && (isFloat(t.Type) || t.Type == s0.Type):
			if s0.Ne[0] != t.Ne[0] || !s0.IsContiguousRows() || !t.IsContiguousRows() {
				return nil, "copy from a quantized type needs equal, dense rows"
			}
			if t.Type == s0.Type {
				return &launch{kernel: "quant", grid: gridUnits, local: 128, srcs: [3]*runtime.Tensor{s0}, extra: [8]uint32{copyBlocks, uint32(t.Type.RowSize(t.Ne[0]))}}, ""
			}
			return &launch{kernel: "quant", grid: gridElements, local: 128, srcs: [3]*runtime.Tensor{s0}, extra: [8]uint32{dequantize}}, ""
		default:
			return nil, fmt.Sprintf("copy %s to %s", s0.Type, t.Type)
		}
		return l, ""
	case runtime.OpAdd, runtime.OpSub, runtime.OpMul, runtime.OpDiv:
		if why := need(t, 2); why != "" {
			return nil, why
		}
		if !isFloat(t.Type) || s0.Type != t.Type || s0.Ne != t.Ne || !isFloat(s1.Type) || !runtime.CanRepeat(s1, t) {
			return nil, "want float a and result of one type and shape, float b broadcastable to a"
		}
		f := map[runtime.Op]uint32{runtime.OpAdd: fAdd, runtime.OpSub: fSub, runtime.OpMul: fMul, runtime.OpDiv: fDiv}[t.Op]
		return binaryLaunch(t, f), ""
	case runtime.OpAdd1:
		if why := need(t, 2); why != "" {
			return nil, why
		}
		l, why := elementwise(fAdd1)
		if why != "" {
			return nil, why
		}
		if !isFloat(s1.Type) || !s1.IsScalar() {
			return nil, "b must be a float scalar"
		}
		l.srcs[1] = s1
		return l, ""
	case runtime.OpScale:
		return elementwise(fScale)
	case runtime.OpSqr:
		return elementwise(fSqr)
	case runtime.OpSqrt:
		return elementwise(fSqrt)
	case runtime.OpLog:
		return elementwise(fLog)
	case runtime.OpClamp:
		if t.OpParamF32(0) > t.OpParamF32(1) {
			return nil, "clamp with min > max (ggml: min wins; the kernel lets max win)"
		}
		return elementwise(fClamp)
	case runtime.OpDiagMaskInf:
		return elementwise(fDiagMaskInf)
	case runtime.OpUnary:
		f, ok := map[runtime.UnaryOp]uint32{
			runtime.UnaryAbs: fAbs, runtime.UnaryNeg: fNeg, runtime.UnaryTanh: fTanh, runtime.UnaryRelu: fRelu,
			runtime.UnarySigmoid: fSigmoid, runtime.UnaryGelu: fGelu, runtime.UnarySilu: fSilu, runtime.UnaryExp: fExp,
		}[t.UnaryOp()]
		if !ok {
			return planMore(t)
		}
		return elementwise(f)
	case runtime.OpRepeat:
		if why := need(t, 1); why != "" {
			return nil, why
		}
		if s0.Type != t.Type || rawSize(t.Type) == 0 || !runtime.CanRepeat(s0, t) {
			return nil, "want a 2- or 4-byte type and a result shape that repeats the source"
		}
		return &launch{kernel: "unary", grid: gridElements, local: 128, srcs: [3]*runtime.Tensor{s0}, extra: [8]uint32{fRaw, 0}}, ""
	case runtime.OpConcat:
		if why := need(t, 2); why != "" {
			return nil, why
		}
		dim := t.OpParamI32(0)
		if s0.Type != t.Type || s1.Type != t.Type || rawSize(t.Type) == 0 || dim < 0 || dim > 3 {
			return nil, "want sources and result of one 2- or 4-byte type"
		}
		for d := 0; d < 4; d++ {
			want := s0.Ne[d]
			if d == int(dim) {
				want += s1.Ne[d]
			} else if s1.Ne[d] != s0.Ne[d] {
				return nil, "source shapes differ"
			}
			if t.Ne[d] != want {
				return nil, "result shape does not join the sources"
			}
		}
		return &launch{kernel: "concat", grid: gridElements, local: 128, srcs: [3]*runtime.Tensor{s0, s1}}, ""
	case runtime.OpSumRows, runtime.OpMean:
		if why := need(t, 1); why != "" {
			return nil, why
		}
		if !isFloat(s0.Type) || !isFloat(t.Type) || t.Ne != [4]int64{1, s0.Ne[1], s0.Ne[2], s0.Ne[3]} {
			return nil, "want float source and one element per row"
		}
		if why := rowsTooLong(s0.Ne[0]); why != "" {
			return nil, why
		}
		f := fSumRows
		if t.Op == runtime.OpMean {
			f = fMean
		}
		return &launch{kernel: "rows", grid: gridRows, local: 64, srcs: [3]*runtime.Tensor{s0}, extra: [8]uint32{f}}, ""
	case runtime.OpNorm, runtime.OpRmsNorm:
		l, why := elementwise(0)
		if why != "" {
			return nil, why
		}
		if why := rowsTooLong(t.Ne[0]); why != "" {
			return nil, why
		}
		f := fNorm
		if t.Op == runtime.OpRmsNorm {
			f = fRmsNorm
		}
		l.kernel, l.grid, l.local, l.extra = "rows", gridRows, 64, [8]uint32{f}
		return l, ""
	case runtime.OpSoftMax:
		if why := need(t, 1); why != "" {
			return nil, why
		}
		if s0.Type != runtime.TypeF32 || t.Type != runtime.TypeF32 || s0.Ne != t.Ne {
			return nil, "want f32 source and result of one shape"
		}
		if why := rowsTooLong(t.Ne[0]); why != "" {
			return nil, why
		}
		l := &launch{kernel: "rows", grid: gridRows, local: 64, srcs: [3]*runtime.Tensor{s0}, extra: [8]uint32{fSoftMax}}
		maxBias := t.OpParamF32(1)
		if m := s1; m != nil {
			if (m.Type != runtime.TypeF32 && m.Type != runtime.TypeF16) || m.Ne[0] != t.Ne[0] || m.Ne[1] < t.Ne[1] ||
				t.Ne[2]%m.Ne[2] != 0 || t.Ne[3]%m.Ne[3] != 0 {
				return nil, "mask must be f32 or f16 and fit the source"
			}
			l.srcs[1] = m
			l.extra[1] = 1
		}
		if s2 != nil {
			if s2.Type != runtime.TypeF32 || s2.Ne[0] < t.Ne[2] {
				return nil, "sinks must be f32 with one per index of dimension 2"
			}
			l.srcs[2] = s2
			l.extra[5] = 1
		}
		if maxBias > 0 && s1 != nil {
			nHead := t.Ne[2]
			nLog2 := int64(1) << uint(math.Floor(math.Log2(float64(nHead))))
			m0 := float32(math.Pow(2, float64(-maxBias/float32(nLog2))))
			m1 := float32(math.Pow(2, float64(-(maxBias/2)/float32(nLog2))))
			l.extra[2], l.extra[3], l.extra[4] = f32bits(m0), f32bits(m1), uint32(nLog2)
		}
		return l, ""
	case runtime.OpSoftMaxBack, runtime.OpSiluBack, runtime.OpRmsNormBack:
		if why := need(t, 2); why != "" {
			return nil, why
		}
		if t.Type != runtime.TypeF32 || s0.Type != runtime.TypeF32 || s1.Type != runtime.TypeF32 || s0.Ne != t.Ne || s1.Ne != t.Ne {
			return nil, "want f32 sources and result of one shape"
		}
		srcs := [3]*runtime.Tensor{s0, s1}
		if why := rowsTooLong(t.Ne[0]); why != "" && t.Op != runtime.OpSiluBack {
			return nil, why
		}
		switch t.Op {
		case runtime.OpSiluBack:
			return binaryLaunch(t, fSiluBack), ""
		case runtime.OpSoftMaxBack:
			if t.OpParamF32(1) != 0 {
				return nil, "max_bias must be 0"
			}
			return &launch{kernel: "rows", grid: gridRows, local: 64, srcs: srcs, extra: [8]uint32{fSoftMaxBack}}, ""
		}
		return &launch{kernel: "rows", grid: gridRows, local: 64, srcs: srcs, extra: [8]uint32{fRmsNormBack}}, ""
	case runtime.OpMulMat:
		if why := need(t, 2); why != "" {
			return nil, why
		}
		if !isRowType(s0.Type) || !isFloat(s1.Type) || t.Type != runtime.TypeF32 {
			return nil, "want a f32/f16/bf16/q4_0/q4_1/q5_0/q5_1/q8_0/q2_K..q6_K, b f32/f16/bf16, result f32"
		}
		if !s0.IsContiguousRows() || s0.Ne[0] != s1.Ne[0] || s1.Ne[2]%s0.Ne[2] != 0 || s1.Ne[3]%s0.Ne[3] != 0 ||
			t.Ne != [4]int64{s0.Ne[1], s1.Ne[1], s1.Ne[2], s1.Ne[3]} {
			return nil, "shapes do not multiply (or a's rows are not dense)"
		}
		if lim := mulMatKLimit(s0.Type); s0.Ne[0] > lim {
			return nil, fmt.Sprintf("k = %d exceeds the mul_mat kernel's %d for %s (llvmpipe's loop guard)", s0.Ne[0], lim, s0.Type)
		}
		l := &launch{kernel: "mul_mat", grid: gridMulMat, local: 64, srcs: [3]*runtime.Tensor{s0, s1}}
		l.tn = 4
		if s1.Ne[1] < 4 {
			l.tn = 1
		}
		l.defines = []string{fmt.Sprintf("TA %d", s0.Type), fmt.Sprintf("TB %d", s1.Type), fmt.Sprintf("TN %du", l.tn)}
		return l, ""
	case runtime.OpGetRows:
		if why := need(t, 2); why != "" {
			return nil, why
		}
		if s1.Type != runtime.TypeI32 {
			return nil, "indices must be i32"
		}
		if t.Ne != [4]int64{s0.Ne[0], s1.Ne[0], s1.Ne[1], s1.Ne[2]} || s0.Ne[2] != s1.Ne[1] || s1.Ne[3] != 1 {
			return nil, "shapes do not fit"
		}
		switch {
		case s0.Type == runtime.TypeI32 && t.Type == runtime.TypeI32:
		case isRowType(s0.Type) && isFloat(t.Type):
			if s0.Type.IsQuantized() && !s0.IsContiguousRows() {
				return nil, "quantized rows must be dense"
			}
		default:
			return nil, fmt.Sprintf("rows of %s into %s", s0.Type, t.Type)
		}
		return &launch{kernel: "get_rows", grid: gridElements, local: 128, srcs: [3]*runtime.Tensor{s0, s1}, status: true}, ""
	case runtime.OpRope, runtime.OpRopeBack:
		if why := need(t, 2); why != "" {
			return nil, why
		}
		if (t.Type != runtime.TypeF32 && t.Type != runtime.TypeF16) || s0.Type != t.Type || s0.Ne != t.Ne {
			return nil, "want f32 or f16 source and result of one shape"
		}
		if s1.Type != runtime.TypeI32 || s1.Ne[0] < t.Ne[2] {
			return nil, "positions must be i32 with one per index of dimension 2"
		}
		nDims, nCtxOrig := t.OpParamI32(1), t.OpParamI32(4)
		if why := cpukernels.RopeShapeOK(t); why != "" {
			return nil, why
		}
		freqBase := t.OpParamF32(5)
		lo, hi := cpukernels.RopeCorrDims(nDims, nCtxOrig, freqBase, t.OpParamF32(9), t.OpParamF32(10))
		sign := float32(1)
		if t.Op == runtime.OpRopeBack {
			sign = -1
		}
		l := &launch{kernel: "rope", grid: gridPairs, local: 128, srcs: [3]*runtime.Tensor{s0, s1, s2}}
		l.extra[0] = f32bits(sign)
		l.extra[1] = f32bits(cpukernels.RopeThetaScale(freqBase, nDims))
		l.extra[2], l.extra[3] = f32bits(lo), f32bits(hi)
		if s2 != nil {
			l.extra[4] = 1
		}
		return l, ""
	}
	return planMore(t)
}

// binaryLaunch is the launch of a binary kernel for t = f(src0, src1).
func binaryLaunch(t *runtime.Tensor, f uint32) *launch {
	s0, s1 := t.Src[0], t.Src[1]
	l := &launch{kernel: "binary", grid: gridElements, local: 128, srcs: [3]*runtime.Tensor{s0, s1}, extra: [8]uint32{f}}
	if denseF32(t, s0, s1) && densePrefix(s1, t) {
		l.dense = true
		l.extra[1], l.extra[2] = uint32(s1.Nelements()), uint32(t.Nelements())
	}
	return l
}

// groups returns the number of work groups a launch needs for result t.
func (l *launch) groups(t *runtime.Tensor) uint64 {
	switch l.grid {
	case gridRows:
		return uint64(t.Nrows())
	case gridPairs:
		return (uint64(t.Nelements()/2) + l.local - 1) / l.local
	case gridBlocks:
		return (uint64(t.Nelements()/32) + l.local - 1) / l.local
	case gridSuper:
		return (uint64(t.Nelements()/256) + l.local - 1) / l.local
	case gridUnits:
		return (t.Type.RowSize(t.Ne[0])/2*uint64(t.Nrows()) + l.local - 1) / l.local
	case gridCount:
		return l.count
	case gridSource:
		return (uint64(l.srcs[0].Nelements()) + l.local - 1) / l.local
	case gridMulMat:
		tiles := (uint64(t.Ne[0]) + mulMatTM - 1) / mulMatTM * ((uint64(t.Ne[1]) + l.tn - 1) / l.tn) * uint64(t.Ne[2]*t.Ne[3])
		return (tiles + l.local - 1) / l.local
	}
	return (uint64(t.Nelements()) + l.local - 1) / l.local
}

// describe writes the descriptor of tensor t (placed at byte offset off in
// its buffer) into slot s of p.
func describe(p *[numParams]uint32, s int, t *runtime.Tensor, off uint64) {
	b := s * slotWords
	p[b] = uint32(t.Type)
	p[b+1] = uint32(off)
	for d := 0; d < 4; d++ {
		p[b+2+d] = uint32(t.Ne[d])
		p[b+6+d] = uint32(t.Nb[d])
	}
}

// params builds the parameter array of node t from the tensors' shapes,
// strides and places (Offset), its op parameters and the launch's extras.
func (l *launch) params(t *runtime.Tensor) [numParams]uint32 {
	var p [numParams]uint32
	describe(&p, 0, t, t.Offset)
	for i, s := range l.srcs {
		if s != nil {
			describe(&p, i+1, s, s.Offset)
		}
	}
	for i, v := range t.OpParams {
		p[opParamBase+i] = uint32(v)
	}
	copy(p[extraBase:], l.extra[:])
	return p
}
