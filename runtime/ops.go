package runtime

import "fmt"

// Op is a ggml operation. The numeric values follow ggml 0.27.0's enum
// (GGML_OP_COUNT = 101), the version whose RPC protocol and files gogml
// speaks.
type Op int32

// The ops of ggml 0.27.0, in its order.
const (
	OpNone Op = iota
	OpDup
	OpAdd
	OpAddId
	OpAdd1
	OpAcc
	OpSub
	OpMul
	OpDiv
	OpSqr
	OpSqrt
	OpLog
	OpSin
	OpCos
	OpSum
	OpSumRows
	OpCumsum
	OpMean
	OpArgmax
	OpCountEqual
	OpRepeat
	OpRepeatBack
	OpConcat
	OpSiluBack
	OpNorm
	OpRmsNorm
	OpRmsNormBack
	OpGroupNorm
	OpL2Norm
	OpMulMat
	OpMulMatId
	OpOutProd
	OpScale
	OpSet
	OpCpy
	OpCont
	OpReshape
	OpView
	OpPermute
	OpTranspose
	OpGetRows
	OpGetRowsBack
	OpSetRows
	OpDiag
	OpDiagMaskInf
	OpDiagMaskZero
	OpSoftMax
	OpSoftMaxBack
	OpRope
	OpRopeBack
	OpClamp
	OpConvTranspose1D
	OpIm2col
	OpIm2colBack
	OpIm2col3D
	OpCol2im1D
	OpConv2D
	OpConv3D
	OpConv2DDw
	OpConvTranspose2D
	OpPool1D
	OpPool2D
	OpPool2DBack
	OpUpscale
	OpPad
	OpPadReflect1D
	OpRoll
	OpArange
	OpTimestepEmbedding
	OpArgsort
	OpTopK
	OpLeakyRelu
	OpTri
	OpFill
	OpFlashAttnExt
	OpFlashAttnBack
	OpSsmConv
	OpSsmScan
	OpWinPart
	OpWinUnpart
	OpGetRelPos
	OpAddRelPos
	OpRwkvWkv6
	OpGatedLinearAttn
	OpRwkvWkv7
	OpSolveTri
	OpGatedDeltaNet
	OpLightningIndexer
	OpDsv4HcComb
	OpDsv4HcPre
	OpDsv4HcPost
	OpUnary
	OpMapCustom1
	OpMapCustom2
	OpMapCustom3
	OpCustom
	OpCrossEntropyLoss
	OpCrossEntropyLossBack
	OpOptStepAdamw
	OpOptStepSgd
	OpGlu

	// OpCount is the number of ops.
	OpCount
)

var opNames = [OpCount]string{
	OpNone:                 "NONE",
	OpDup:                  "DUP",
	OpAdd:                  "ADD",
	OpAddId:                "ADD_ID",
	OpAdd1:                 "ADD1",
	OpAcc:                  "ACC",
	OpSub:                  "SUB",
	OpMul:                  "MUL",
	OpDiv:                  "DIV",
	OpSqr:                  "SQR",
	OpSqrt:                 "SQRT",
	OpLog:                  "LOG",
	OpSin:                  "SIN",
	OpCos:                  "COS",
	OpSum:                  "SUM",
	OpSumRows:              "SUM_ROWS",
	OpCumsum:               "CUMSUM",
	OpMean:                 "MEAN",
	OpArgmax:               "ARGMAX",
	OpCountEqual:           "COUNT_EQUAL",
	OpRepeat:               "REPEAT",
	OpRepeatBack:           "REPEAT_BACK",
	OpConcat:               "CONCAT",
	OpSiluBack:             "SILU_BACK",
	OpNorm:                 "NORM",
	OpRmsNorm:              "RMS_NORM",
	OpRmsNormBack:          "RMS_NORM_BACK",
	OpGroupNorm:            "GROUP_NORM",
	OpL2Norm:               "L2_NORM",
	OpMulMat:               "MUL_MAT",
	OpMulMatId:             "MUL_MAT_ID",
	OpOutProd:              "OUT_PROD",
	OpScale:                "SCALE",
	OpSet:                  "SET",
	OpCpy:                  "CPY",
	OpCont:                 "CONT",
	OpReshape:              "RESHAPE",
	OpView:                 "VIEW",
	OpPermute:              "PERMUTE",
	OpTranspose:            "TRANSPOSE",
	OpGetRows:              "GET_ROWS",
	OpGetRowsBack:          "GET_ROWS_BACK",
	OpSetRows:              "SET_ROWS",
	OpDiag:                 "DIAG",
	OpDiagMaskInf:          "DIAG_MASK_INF",
	OpDiagMaskZero:         "DIAG_MASK_ZERO",
	OpSoftMax:              "SOFT_MAX",
	OpSoftMaxBack:          "SOFT_MAX_BACK",
	OpRope:                 "ROPE",
	OpRopeBack:             "ROPE_BACK",
	OpClamp:                "CLAMP",
	OpConvTranspose1D:      "CONV_TRANSPOSE_1D",
	OpIm2col:               "IM2COL",
	OpIm2colBack:           "IM2COL_BACK",
	OpIm2col3D:             "IM2COL_3D",
	OpCol2im1D:             "COL2IM_1D",
	OpConv2D:               "CONV_2D",
	OpConv3D:               "CONV_3D",
	OpConv2DDw:             "CONV_2D_DW",
	OpConvTranspose2D:      "CONV_TRANSPOSE_2D",
	OpPool1D:               "POOL_1D",
	OpPool2D:               "POOL_2D",
	OpPool2DBack:           "POOL_2D_BACK",
	OpUpscale:              "UPSCALE",
	OpPad:                  "PAD",
	OpPadReflect1D:         "PAD_REFLECT_1D",
	OpRoll:                 "ROLL",
	OpArange:               "ARANGE",
	OpTimestepEmbedding:    "TIMESTEP_EMBEDDING",
	OpArgsort:              "ARGSORT",
	OpTopK:                 "TOP_K",
	OpLeakyRelu:            "LEAKY_RELU",
	OpTri:                  "TRI",
	OpFill:                 "FILL",
	OpFlashAttnExt:         "FLASH_ATTN_EXT",
	OpFlashAttnBack:        "FLASH_ATTN_BACK",
	OpSsmConv:              "SSM_CONV",
	OpSsmScan:              "SSM_SCAN",
	OpWinPart:              "WIN_PART",
	OpWinUnpart:            "WIN_UNPART",
	OpGetRelPos:            "GET_REL_POS",
	OpAddRelPos:            "ADD_REL_POS",
	OpRwkvWkv6:             "RWKV_WKV6",
	OpGatedLinearAttn:      "GATED_LINEAR_ATTN",
	OpRwkvWkv7:             "RWKV_WKV7",
	OpSolveTri:             "SOLVE_TRI",
	OpGatedDeltaNet:        "GATED_DELTA_NET",
	OpLightningIndexer:     "LIGHTNING_INDEXER",
	OpDsv4HcComb:           "DSV4_HC_COMB",
	OpDsv4HcPre:            "DSV4_HC_PRE",
	OpDsv4HcPost:           "DSV4_HC_POST",
	OpUnary:                "UNARY",
	OpMapCustom1:           "MAP_CUSTOM1",
	OpMapCustom2:           "MAP_CUSTOM2",
	OpMapCustom3:           "MAP_CUSTOM3",
	OpCustom:               "CUSTOM",
	OpCrossEntropyLoss:     "CROSS_ENTROPY_LOSS",
	OpCrossEntropyLossBack: "CROSS_ENTROPY_LOSS_BACK",
	OpOptStepAdamw:         "OPT_STEP_ADAMW",
	OpOptStepSgd:           "OPT_STEP_SGD",
	OpGlu:                  "GLU",
}

// UnaryOp selects the function of an OpUnary tensor; it is stored in the
// tensor's first op parameter, as in ggml.
type UnaryOp int32

// The unary functions of ggml 0.27.0, in its order.
const (
	UnaryAbs UnaryOp = iota
	UnarySgn
	UnaryNeg
	UnaryStep
	UnaryTanh
	UnaryElu
	UnaryRelu
	UnarySigmoid
	UnaryGelu
	UnaryGeluQuick
	UnarySilu
	UnaryHardswish
	UnaryHardsigmoid
	UnaryExp
	UnaryExpm1
	UnarySoftplus
	UnaryGeluErf
	UnaryXielu
	UnaryFloor
	UnaryCeil
	UnaryRound
	UnaryTrunc

	// UnaryCount is the number of unary functions.
	UnaryCount
)

var unaryNames = [UnaryCount]string{
	UnaryAbs:         "ABS",
	UnarySgn:         "SGN",
	UnaryNeg:         "NEG",
	UnaryStep:        "STEP",
	UnaryTanh:        "TANH",
	UnaryElu:         "ELU",
	UnaryRelu:        "RELU",
	UnarySigmoid:     "SIGMOID",
	UnaryGelu:        "GELU",
	UnaryGeluQuick:   "GELU_QUICK",
	UnarySilu:        "SILU",
	UnaryHardswish:   "HARDSWISH",
	UnaryHardsigmoid: "HARDSIGMOID",
	UnaryExp:         "EXP",
	UnaryExpm1:       "EXPM1",
	UnarySoftplus:    "SOFTPLUS",
	UnaryGeluErf:     "GELU_ERF",
	UnaryXielu:       "XIELU",
	UnaryFloor:       "FLOOR",
	UnaryCeil:        "CEIL",
	UnaryRound:       "ROUND",
	UnaryTrunc:       "TRUNC",
}

// GluOp selects the function of an OpGlu tensor; it is stored in the
// tensor's first op parameter, as in ggml.
type GluOp int32

// The gated linear unit functions of ggml 0.27.0, in its order.
const (
	GluReglu GluOp = iota
	GluGeglu
	GluSwiglu
	GluSwigluOai
	GluGegluErf
	GluGegluQuick
	GluSwigluClamp

	// GluCount is the number of GLU functions.
	GluCount
)

var gluNames = [GluCount]string{
	GluReglu:       "REGLU",
	GluGeglu:       "GEGLU",
	GluSwiglu:      "SWIGLU",
	GluSwigluOai:   "SWIGLU_OAI",
	GluGegluErf:    "GEGLU_ERF",
	GluGegluQuick:  "GEGLU_QUICK",
	GluSwigluClamp: "SWIGLU_CLAMP",
}

// String returns ggml's name of the GLU function.
func (g GluOp) String() string {
	if g < 0 || g >= GluCount {
		return fmt.Sprintf("glu(%d)", int32(g))
	}
	return gluNames[g]
}

// ParseGluOp looks up a GLU function by its ggml name.
func ParseGluOp(name string) (GluOp, error) {
	for g, n := range gluNames {
		if n == name {
			return GluOp(g), nil
		}
	}
	return 0, fmt.Errorf("%w: glu %q", ErrUnknownOp, name)
}

// String returns ggml's name of the op without the GGML_OP_ prefix.
func (op Op) String() string {
	if op < 0 || op >= OpCount {
		return fmt.Sprintf("op(%d)", int32(op))
	}
	return opNames[op]
}

// Valid reports whether op is one of ggml's ops.
func (op Op) Valid() bool { return op >= 0 && op < OpCount }

// ParseOp looks up an op by its ggml name (without the GGML_OP_ prefix).
func ParseOp(name string) (Op, error) {
	for op, n := range opNames {
		if n == name {
			return Op(op), nil
		}
	}
	return 0, fmt.Errorf("%w: %q", ErrUnknownOp, name)
}

// String returns ggml's name of the unary function.
func (u UnaryOp) String() string {
	if u < 0 || u >= UnaryCount {
		return fmt.Sprintf("unary(%d)", int32(u))
	}
	return unaryNames[u]
}

// ParseUnaryOp looks up a unary function by its ggml name.
func ParseUnaryOp(name string) (UnaryOp, error) {
	for u, n := range unaryNames {
		if n == name {
			return UnaryOp(u), nil
		}
	}
	return 0, fmt.Errorf("%w: unary %q", ErrUnknownOp, name)
}

// CanInplace reports whether a tensor computed by op may take over the
// memory of one of its sources. The list is the reference allocator's,
// backward ops included; kernels of these ops must stay correct when their
// output aliases an input.
func (op Op) CanInplace() bool {
	switch op {
	case OpScale, OpDiagMaskZero, OpDiagMaskInf, OpAdd, OpAdd1, OpSub, OpMul,
		OpDiv, OpSqr, OpSqrt, OpLog, OpUnary, OpRope, OpRopeBack, OpSiluBack,
		OpRmsNorm, OpRmsNormBack, OpSoftMax, OpSoftMaxBack:
		return true
	}
	return false
}

// IsViewOp reports whether op only reinterprets its source's memory.
func (op Op) IsViewOp() bool {
	switch op {
	case OpView, OpReshape, OpPermute, OpTranspose:
		return true
	}
	return false
}
