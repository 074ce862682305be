package runtime

import "fmt"

// Op is a ggml operation. The numeric values follow ggml's enum at the
// reference version.
type Op int32

// The ops of ggml at the reference version.
const (
	OpNone Op = iota
	OpDup
	OpAdd
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
	OpConvTranspose2D
	OpPool1D
	OpPool2D
	OpPool2DBack
	OpUpscale
	OpPad
	OpPadReflect1D
	OpArange
	OpTimestepEmbedding
	OpArgsort
	OpLeakyRelu
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
	OpUnary
	OpMapUnary
	OpMapBinary
	OpMapCustom1F32
	OpMapCustom2F32
	OpMapCustom3F32
	OpMapCustom1
	OpMapCustom2
	OpMapCustom3
	OpCrossEntropyLoss
	OpCrossEntropyLossBack
	OpOptStepAdamw

	// OpCount is the number of ops.
	OpCount
)

var opNames = [OpCount]string{
	OpNone:                 "NONE",
	OpDup:                  "DUP",
	OpAdd:                  "ADD",
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
	OpConvTranspose2D:      "CONV_TRANSPOSE_2D",
	OpPool1D:               "POOL_1D",
	OpPool2D:               "POOL_2D",
	OpPool2DBack:           "POOL_2D_BACK",
	OpUpscale:              "UPSCALE",
	OpPad:                  "PAD",
	OpPadReflect1D:         "PAD_REFLECT_1D",
	OpArange:               "ARANGE",
	OpTimestepEmbedding:    "TIMESTEP_EMBEDDING",
	OpArgsort:              "ARGSORT",
	OpLeakyRelu:            "LEAKY_RELU",
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
	OpUnary:                "UNARY",
	OpMapUnary:             "MAP_UNARY",
	OpMapBinary:            "MAP_BINARY",
	OpMapCustom1F32:        "MAP_CUSTOM1_F32",
	OpMapCustom2F32:        "MAP_CUSTOM2_F32",
	OpMapCustom3F32:        "MAP_CUSTOM3_F32",
	OpMapCustom1:           "MAP_CUSTOM1",
	OpMapCustom2:           "MAP_CUSTOM2",
	OpMapCustom3:           "MAP_CUSTOM3",
	OpCrossEntropyLoss:     "CROSS_ENTROPY_LOSS",
	OpCrossEntropyLossBack: "CROSS_ENTROPY_LOSS_BACK",
	OpOptStepAdamw:         "OPT_STEP_ADAMW",
}

// UnaryOp selects the function of an OpUnary tensor; it is stored in the
// tensor's first op parameter, as in ggml.
type UnaryOp int32

// The unary functions of ggml at the reference version.
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
