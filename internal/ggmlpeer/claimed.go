package ggmlpeer

// Claimed lists, per gogml backend, the ggml ops (test-backend-ops names)
// for which gogml rpc-server passes every case of ggml 0.27.0's
// test-backend-ops. The peer tests assert it (GOGML_PEER_OPS=claimed) and
// make test-ggml-full checks it; make ggml-conformance measures every op
// (docs/ggml-conformance.md). An op joins a list only after a clean run of
// all its cases; the cpu list is from the run of 2026-12-02 00:34 UTC that
// wrote docs/ggml-conformance.md, where all 11629 judged cases passed (an op
// cut short by the time limit, such as MUL_MAT, is not claimed), and the
// opengl list from the run of 2026-12-01 21:50 UTC. ROPE, FLASH_ATTN_EXT
// and LIGHTNING_INDEXER joined the cpu list from runs of each op alone with
// no time limit short of their end (2026-12-02 01:28 UTC: ROPE 470 of 470
// cases passed; 02:07 UTC: FLASH_ATTN_EXT 5343 of 5343; 02:18 UTC:
// LIGHTNING_INDEXER 210 of 210).
var Claimed = map[string][]string{
	"cpu": {
		"ABS", "ACC", "ADD", "ADD_ID", "ARANGE", "ARGMAX", "ARGSORT", "CEIL", "CLAMP", "COL2IM_1D",
		"CONCAT", "CONT", "CONV_2D", "CONV_2D_DW", "CONV_3D", "CONV_TRANSPOSE_1D", "CONV_TRANSPOSE_2D",
		"COS", "COUNT_EQUAL", "CPY", "CROSS_ENTROPY_LOSS", "CROSS_ENTROPY_LOSS_BACK", "CUMSUM", "DIAG",
		"DIAG_MASK_INF", "DIV", "DSV4_HC_COMB", "DSV4_HC_POST", "DSV4_HC_PRE", "DUP", "ELU", "EXP",
		"EXPM1", "FILL", "FLASH_ATTN_EXT", "FLOOR", "GATED_DELTA_NET", "GATED_LINEAR_ATTN", "GEGLU", "GEGLU_ERF",
		"GEGLU_QUICK", "GELU", "GELU_ERF", "GELU_QUICK", "GET_ROWS", "GET_ROWS_BACK", "GROUP_NORM",
		"HARDSIGMOID", "HARDSWISH", "IM2COL", "IM2COL_3D", "L2_NORM", "LEAKY_RELU", "LIGHTNING_INDEXER", "LOG", "MEAN", "MUL",
		"NEG", "NORM", "OPT_STEP_ADAMW", "OPT_STEP_SGD", "OUT_PROD", "PAD", "PAD_REFLECT_1D", "POOL_1D",
		"POOL_2D", "REGLU", "RELU", "REPEAT", "REPEAT_BACK", "RMS_NORM", "RMS_NORM_BACK", "ROLL",
		"ROPE", "ROPE_BACK", "ROUND", "RWKV_WKV6", "RWKV_WKV7", "SCALE", "SET", "SET_ROWS", "SGN", "SIGMOID",
		"SILU", "SILU_BACK", "SIN", "SOFTPLUS", "SOFT_MAX", "SOFT_MAX_BACK", "SOLVE_TRI", "SQR", "SQRT",
		"SSM_CONV", "SSM_SCAN", "STEP", "SUB", "SUM", "SUM_ROWS", "SWIGLU", "SWIGLU_CLAMP", "SWIGLU_OAI",
		"TANH", "TIMESTEP_EMBEDDING", "TOP_K", "TRI", "TRUNC", "UPSCALE", "XIELU",
	},
	"opengl": {
		"ABS", "ADD", "CLAMP", "CONT", "DIAG_MASK_INF", "DIV", "EXP", "GELU", "LOG", "MEAN", "MUL",
		"NEG", "NORM", "RELU", "RMS_NORM", "RMS_NORM_BACK", "SIGMOID", "SILU", "SILU_BACK",
		"SOFT_MAX_BACK", "SQR", "SQRT", "SUB", "SUM_ROWS", "TANH",
	},
}

// CISubset lists, per backend, the claimed ops make test-ggml runs on
// every CI run: those whose cases finish in a few seconds over RPC on two
// cores. ADD/SUB/MUL/DIV/CONT, ARGSORT, TOP_K and ROPE_BACK take a minute
// or more each; make test-ggml-full runs every claimed op.
var CISubset = map[string][]string{
	"cpu": {
		"ABS", "ACC", "ADD_ID", "ARANGE", "ARGMAX", "CEIL", "CLAMP", "COL2IM_1D", "CONV_2D_DW",
		"CONV_TRANSPOSE_1D", "COS", "COUNT_EQUAL", "CROSS_ENTROPY_LOSS", "CROSS_ENTROPY_LOSS_BACK",
		"CUMSUM", "DIAG", "DIAG_MASK_INF", "DSV4_HC_COMB", "DSV4_HC_POST", "DSV4_HC_PRE", "DUP", "ELU",
		"EXP", "EXPM1", "FLOOR", "GEGLU", "GEGLU_ERF", "GEGLU_QUICK", "GELU", "GELU_ERF", "GELU_QUICK",
		"GET_ROWS_BACK", "GROUP_NORM", "HARDSIGMOID", "HARDSWISH", "L2_NORM", "LEAKY_RELU", "LOG",
		"MEAN", "NEG", "NORM", "OPT_STEP_ADAMW", "OPT_STEP_SGD", "PAD", "PAD_REFLECT_1D", "POOL_1D",
		"POOL_2D", "REGLU", "RELU", "REPEAT", "REPEAT_BACK", "RMS_NORM", "RMS_NORM_BACK", "ROLL",
		"ROUND", "SCALE", "SET", "SGN", "SIGMOID", "SILU", "SILU_BACK", "SIN", "SOFTPLUS", "SOFT_MAX",
		"SOLVE_TRI", "SQR", "SQRT", "SSM_CONV", "STEP", "SUM", "SUM_ROWS", "SWIGLU", "SWIGLU_CLAMP",
		"SWIGLU_OAI", "TANH", "TIMESTEP_EMBEDDING", "TRI", "TRUNC", "XIELU",
	},
	"opengl": {"ABS", "CLAMP", "DIAG_MASK_INF", "EXP", "GELU", "LOG", "MEAN", "NEG", "RELU", "SILU", "SQR", "SUM_ROWS", "TANH"},
}

// ClaimedArchs lists, per backend, the test-llama-archs rows ("arch/Config",
// e.g. "llama/Dense") whose RPC-device row is OK against gogml rpc-server;
// the peer tests assert them (one run per architecture). On OpenGL every
// row's logits are NaN: its kernels lack ops these graphs use (SET_ROWS,
// GLU, ...), which the server fills with NaN.
var ClaimedArchs = map[string][]string{
	"cpu":    {},
	"opengl": {},
}
