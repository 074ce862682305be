package rpcwire

import (
	"fmt"
	"strings"

	"github.com/gogml/gogml/runtime"
)

// The numbering of ggml 0.27.0 (libggml 0.27.0, RPC protocol 8.0.0): the
// one table through which every type and op number on the wire passes. It
// is pinned here by name, in the header's order, so that a renumbering in
// gogml's runtime cannot silently change what the wire means;
// TestPinnedTablesMatchHeader checks it against ggml.h.

// ggmlOps are the names of enum ggml_op, index = wire value.
var ggmlOps = [...]string{
	"NONE", "DUP", "ADD", "ADD_ID", "ADD1", "ACC", "SUB", "MUL", "DIV", "SQR", "SQRT", "LOG", "SIN",
	"COS", "SUM", "SUM_ROWS", "CUMSUM", "MEAN", "ARGMAX", "COUNT_EQUAL", "REPEAT", "REPEAT_BACK",
	"CONCAT", "SILU_BACK", "NORM", "RMS_NORM", "RMS_NORM_BACK", "GROUP_NORM", "L2_NORM", "MUL_MAT",
	"MUL_MAT_ID", "OUT_PROD", "SCALE", "SET", "CPY", "CONT", "RESHAPE", "VIEW", "PERMUTE", "TRANSPOSE",
	"GET_ROWS", "GET_ROWS_BACK", "SET_ROWS", "DIAG", "DIAG_MASK_INF", "DIAG_MASK_ZERO", "SOFT_MAX",
	"SOFT_MAX_BACK", "ROPE", "ROPE_BACK", "CLAMP", "CONV_TRANSPOSE_1D", "IM2COL", "IM2COL_BACK",
	"IM2COL_3D", "COL2IM_1D", "CONV_2D", "CONV_3D", "CONV_2D_DW", "CONV_TRANSPOSE_2D", "POOL_1D",
	"POOL_2D", "POOL_2D_BACK", "UPSCALE", "PAD", "PAD_REFLECT_1D", "ROLL", "ARANGE",
	"TIMESTEP_EMBEDDING", "ARGSORT", "TOP_K", "LEAKY_RELU", "TRI", "FILL", "FLASH_ATTN_EXT",
	"FLASH_ATTN_BACK", "SSM_CONV", "SSM_SCAN", "WIN_PART", "WIN_UNPART", "GET_REL_POS", "ADD_REL_POS",
	"RWKV_WKV6", "GATED_LINEAR_ATTN", "RWKV_WKV7", "SOLVE_TRI", "GATED_DELTA_NET", "LIGHTNING_INDEXER",
	"DSV4_HC_COMB", "DSV4_HC_PRE", "DSV4_HC_POST", "UNARY", "MAP_CUSTOM1", "MAP_CUSTOM2",
	"MAP_CUSTOM3", "CUSTOM", "CROSS_ENTROPY_LOSS", "CROSS_ENTROPY_LOSS_BACK", "OPT_STEP_ADAMW",
	"OPT_STEP_SGD", "GLU",
}

// ggmlUnary are the names of enum ggml_unary_op, index = value.
var ggmlUnary = [...]string{
	"ABS", "SGN", "NEG", "STEP", "TANH", "ELU", "RELU", "SIGMOID", "GELU", "GELU_QUICK", "SILU",
	"HARDSWISH", "HARDSIGMOID", "EXP", "EXPM1", "SOFTPLUS", "GELU_ERF", "XIELU", "FLOOR", "CEIL",
	"ROUND", "TRUNC",
}

// ggmlGlu are the names of enum ggml_glu_op, index = value.
var ggmlGlu = [...]string{
	"REGLU", "GEGLU", "SWIGLU", "SWIGLU_OAI", "GEGLU_ERF", "GEGLU_QUICK", "SWIGLU_CLAMP",
}

// ggmlTypeCount is GGML_TYPE_COUNT of 0.27.0.
const ggmlTypeCount = 43

// ggmlTypes are the names of enum ggml_type by value; "" marks the values
// ggml removed.
var ggmlTypes = [ggmlTypeCount]string{
	0: "F32", 1: "F16", 2: "Q4_0", 3: "Q4_1", 6: "Q5_0", 7: "Q5_1", 8: "Q8_0", 9: "Q8_1", 10: "Q2_K",
	11: "Q3_K", 12: "Q4_K", 13: "Q5_K", 14: "Q6_K", 15: "Q8_K", 16: "IQ2_XXS", 17: "IQ2_XS", 18: "IQ3_XXS",
	19: "IQ1_S", 20: "IQ4_NL", 21: "IQ3_S", 22: "IQ2_S", 23: "IQ4_XS", 24: "I8", 25: "I16",
	26: "I32", 27: "I64", 28: "F64", 29: "IQ1_M", 30: "BF16", 34: "TQ1_0", 35: "TQ2_0", 39: "MXFP4",
	40: "NVFP4", 41: "Q1_0", 42: "Q2_0",
}

// Table translates ggml 0.27.0's wire numbers into gogml's runtime values
// and back. A wire value whose ggml name gogml's runtime does not know
// translates to ok == false.
type Table struct {
	ops      [len(ggmlOps)]runtime.Op
	opOK     [len(ggmlOps)]bool
	types    [ggmlTypeCount]runtime.Type
	typeOK   [ggmlTypeCount]bool
	unary    [len(ggmlUnary)]runtime.UnaryOp
	unaryOK  [len(ggmlUnary)]bool
	glu      [len(ggmlGlu)]runtime.GluOp
	gluOK    [len(ggmlGlu)]bool
	opBack   map[runtime.Op]uint32
	typeBack map[runtime.Type]uint32
}

// GGML027 returns the translation table of ggml 0.27.0.
func GGML027() *Table {
	t := &Table{opBack: map[runtime.Op]uint32{}, typeBack: map[runtime.Type]uint32{}}
	for i, n := range ggmlOps {
		if op, err := runtime.ParseOp(n); err == nil {
			t.ops[i], t.opOK[i] = op, true
			t.opBack[op] = uint32(i)
		}
	}
	for i, n := range ggmlTypes {
		if n == "" {
			continue
		}
		if ty, err := runtime.ParseType(strings.ToLower(n)); err == nil {
			t.types[i], t.typeOK[i] = ty, true
			t.typeBack[ty] = uint32(i)
		}
	}
	for i, n := range ggmlUnary {
		if u, err := runtime.ParseUnaryOp(n); err == nil {
			t.unary[i], t.unaryOK[i] = u, true
		}
	}
	for i, n := range ggmlGlu {
		if g, err := runtime.ParseGluOp(n); err == nil {
			t.glu[i], t.gluOK[i] = g, true
		}
	}
	return t
}

// Op translates a wire op number.
func (t *Table) Op(wire uint32) (runtime.Op, bool) {
	if wire >= uint32(len(t.ops)) || !t.opOK[wire] {
		return 0, false
	}
	return t.ops[wire], true
}

// Type translates a wire type number.
func (t *Table) Type(wire uint32) (runtime.Type, bool) {
	if wire >= ggmlTypeCount || !t.typeOK[wire] {
		return 0, false
	}
	return t.types[wire], true
}

// Unary translates the unary function number of a UNARY op.
func (t *Table) Unary(wire int32) (runtime.UnaryOp, bool) {
	if wire < 0 || int(wire) >= len(t.unary) || !t.unaryOK[wire] {
		return 0, false
	}
	return t.unary[wire], true
}

// Glu translates the function number of a GLU op.
func (t *Table) Glu(wire int32) (runtime.GluOp, bool) {
	if wire < 0 || int(wire) >= len(t.glu) || !t.gluOK[wire] {
		return 0, false
	}
	return t.glu[wire], true
}

// WireOp returns the wire number of a runtime op.
func (t *Table) WireOp(op runtime.Op) (uint32, bool) {
	w, ok := t.opBack[op]
	return w, ok
}

// WireType returns the wire number of a runtime type.
func (t *Table) WireType(ty runtime.Type) (uint32, bool) {
	w, ok := t.typeBack[ty]
	return w, ok
}

// OpName returns ggml 0.27.0's name of a wire op number.
func OpName(wire uint32) string {
	if wire < uint32(len(ggmlOps)) {
		return ggmlOps[wire]
	}
	return fmt.Sprintf("op(%d)", wire)
}

// TypeName returns ggml 0.27.0's name of a wire type number.
func TypeName(wire uint32) string {
	if wire < ggmlTypeCount && ggmlTypes[wire] != "" {
		return strings.ToLower(ggmlTypes[wire])
	}
	return fmt.Sprintf("type(%d)", wire)
}
