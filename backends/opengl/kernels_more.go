package opengl

import (
	"fmt"

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
)

// moreUnary maps the unary functions of this file to their codes.
var moreUnary = map[runtime.UnaryOp]uint32{
	runtime.UnaryGeluErf: fGeluErf, runtime.UnaryGeluQuick: fGeluQuick, runtime.UnarySgn: fSgn,
	runtime.UnaryStep: fStep, runtime.UnaryElu: fElu, runtime.UnaryHardswish: fHardswish,
	runtime.UnaryHardsigmoid: fHardsigmoid, runtime.UnaryExpm1: fExpm1, runtime.UnarySoftplus: fSoftplus,
	runtime.UnaryFloor: fFloor, runtime.UnaryCeil: fCeil, runtime.UnaryRound: fRound, runtime.UnaryTrunc: fTrunc,
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
		if !isFloat(t.Type) {
			return nil, fmt.Sprintf("rows into %s (the GL kernel writes f32, f16 and bf16)", t.Type)
		}
		if t.Ne[0] != s0.Ne[0] || t.Ne[2] != s0.Ne[2] || t.Ne[3] != s0.Ne[3] || s0.Ne[1] != s1.Ne[0] ||
			s1.Ne[1] == 0 || s1.Ne[2] == 0 || s0.Ne[2]%s1.Ne[1] != 0 || s0.Ne[3]%s1.Ne[2] != 0 || s1.Ne[3] != 1 {
			return nil, "shapes do not fit"
		}
		// One invocation per value element; the grid follows source 0.
		return &launch{kernel: "set_rows", grid: gridSource, local: 128, srcs: [3]*runtime.Tensor{s0, s1}, status: true}, ""
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
	return nil, fmt.Sprintf("op %s", t.Op)
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

// ropeShapeOK checks a ROPE/ROPE_BACK node's mode, sections, offset,
// positions and frequency factors against what rope.comp does, returning
// why not or "".
func ropeShapeOK(t *runtime.Tensor) string {
	nDims, mode, nOffs := t.OpParamI32(1), t.OpParamI32(2), t.OpParamI32(15)
	switch mode {
	case runtime.RopeNormal, runtime.RopeNeoX, runtime.RopeMrope, runtime.RopeVision, runtime.RopeImrope:
	default:
		return fmt.Sprintf("rope mode %d", mode)
	}
	if nDims <= 0 || nDims%2 != 0 || int64(nDims) > t.Ne[0] || t.Ne[0]%2 != 0 {
		return fmt.Sprintf("n_dims %d with ne[0] %d", nDims, t.Ne[0])
	}
	if nOffs < 0 || nOffs%2 != 0 || int64(nOffs)+int64(nDims) > t.Ne[0] {
		return fmt.Sprintf("rope offset %d with n_dims %d and ne[0] %d", nOffs, nDims, t.Ne[0])
	}
	pairs := int64(nDims / 2) // rotation pairs of a row
	npos := t.Ne[2]
	if mode&runtime.RopeMrope != 0 {
		npos *= 4
		var sum int64
		for i := 11; i < 15; i++ {
			s := t.OpParamI32(i)
			if s < 0 {
				return "negative rope section"
			}
			sum += int64(s)
		}
		if sum <= 0 || sum > t.Ne[0] {
			return "rope sections must sum to between 1 and ne[0]"
		}
		if mode == runtime.RopeVision {
			if int64(nDims) != t.Ne[0]/2 || nOffs != 0 {
				return "vision rope needs n_dims == ne[0]/2 and no offset"
			}
			pairs = int64(nDims)
		}
	}
	if p := t.Src[1]; p.Ne[0] < npos {
		return fmt.Sprintf("positions: want %d i32, have %d", npos, p.Ne[0])
	}
	if f := t.Src[2]; f != nil && (f.Type != runtime.TypeF32 || f.Ne[0] < pairs) {
		return fmt.Sprintf("freq factors must be f32 with %d elements", pairs)
	}
	return ""
}
