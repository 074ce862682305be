package ggmlpeer

// Claimed lists, per gogml backend, the ggml ops (test-backend-ops names)
// for which gogml rpc-server passes every case of ggml 0.27.0's
// test-backend-ops. The peer tests assert it (GOGML_PEER_OPS=claimed) and
// make test-ggml-full checks it; make ggml-conformance measures every op
// (docs/ggml-conformance.md). An op joins a list only after a clean run of
// all its cases; the cpu list is from the run of 2026-12-02 00:34 UTC that
// wrote docs/ggml-conformance.md, where all 11629 judged cases passed (an op
// cut short by the time limit, such as MUL_MAT, is not claimed), and the
// opengl list from the run of 2026-12-01 21:50 UTC and, for the ops the GL
// kernels gained since (SOFT_MAX with sinks, SET_ROWS's float rows, GLU,
// ROPE_BACK, IM2COL, ...), per-op runs of 2026-12-02 01:00-01:40 UTC.
// ROPE, FLASH_ATTN_EXT and LIGHTNING_INDEXER joined the cpu list from runs
// of each op alone with no time limit short of their end (2026-12-02 01:28
// UTC: ROPE 470 of 470 cases passed; 02:07 UTC: FLASH_ATTN_EXT 5343 of
// 5343; 02:18 UTC: LIGHTNING_INDEXER 210 of 210). UPSCALE, SUM, COUNT_EQUAL,
// DIAG, POOL_1D, POOL_2D and CONV_TRANSPOSE_1D joined the opengl list from
// a run of 2026-12-02 03:4x UTC (branch glops2: 22, 8, 2, 3, 216, 144 and
// 116 cases, all passed), SSM_CONV, TIMESTEP_EMBEDDING and GET_ROWS_BACK
// from one of 04:0x UTC (45, 1 and 6), CONV_2D_DW, CONV_TRANSPOSE_2D and
// COL2IM_1D from one of 04:12 UTC (8, 8 and 33), CROSS_ENTROPY_LOSS(_BACK)
// and OPT_STEP_SGD/ADAMW from one of 04:16 UTC (2, 2, 1 and 1), IM2COL_3D
// from one of 04:35 UTC (2051). SSM_SCAN, RWKV_WKV6, RWKV_WKV7,
// GATED_LINEAR_ATTN, GATED_DELTA_NET, SOLVE_TRI, DSV4_HC_PRE, DSV4_HC_POST,
// DSV4_HC_COMB, CONV_3D and LIGHTNING_INDEXER joined from a run of
// 2026-12-03 01:3x-01:5x UTC (branch glops: 15, 4, 5, 4, 43, 24, 18, 9,
// 11, 276 and 210 cases, all passed, none declined). MUL_MAT_ID and OUT_PROD pass every
// case of the weight types the GL kernels read (511 and 151) but not the
// rest (buffers past llvmpipe's 128 MiB, iq/fp4/q1_0/q2_0 weights).
// ROPE and ROPE_BACK left the opengl list when the log parser learned to
// count the cases ggml lists as failing without an outcome line: six of
// each (ne [16,16,8192] views, v=1) were never judged OK on GL. The cpu
// list keeps FLASH_ATTN_EXT after its grouped decode path: a run of 04:xx
// UTC passed 5142 cases before its 30-minute limit and the 200 after them
// passed in runs filtered with -p (branch fadecode). ROPE and ROPE_BACK
// rejoined the opengl list once GL buffers bound by range let those views'
// 200 MB sources allocate (branch gl-llama, 2026-12-02 06:2x-06:4x UTC:
// ROPE 320 cases before a 10-minute limit and the other 150 with -p, all
// passed; ROPE_BACK 404 of 404). MUL_MAT and MUL_MAT_ID joined the cpu
// list once conformance ran them in chunks of their cases (RATIONALE, "The
// longest ops run in chunks of their cases"): at commit 7507169, MUL_MAT
// 2510 of 2510 judged cases (and 359 the reference cannot run), 2026-12-02
// 07:42-07:55 UTC, and MUL_MAT_ID 945 of 945, 08:12-08:2x UTC (and at
// 608293d before it, 06:49-07:24 UTC). CONV_2D joined the opengl list
// when a run given 25 minutes reached its two largest cases (192 channels
// of 256×256, about 11 GFLOP each): 2030 of 2030 judged, and 1114 the
// reference cannot run (docs/ggml-conformance-opengl.md, 18:00-18:13 UTC).
var Claimed = map[string][]string{
	"cpu": {
		"ABS", "ACC", "ADD", "ADD_ID", "ARANGE", "ARGMAX", "ARGSORT", "CEIL", "CLAMP", "COL2IM_1D",
		"CONCAT", "CONT", "CONV_2D", "CONV_2D_DW", "CONV_3D", "CONV_TRANSPOSE_1D", "CONV_TRANSPOSE_2D",
		"COS", "COUNT_EQUAL", "CPY", "CROSS_ENTROPY_LOSS", "CROSS_ENTROPY_LOSS_BACK", "CUMSUM", "DIAG",
		"DIAG_MASK_INF", "DIV", "DSV4_HC_COMB", "DSV4_HC_POST", "DSV4_HC_PRE", "DUP", "ELU", "EXP",
		"EXPM1", "FILL", "FLASH_ATTN_EXT", "FLOOR", "GATED_DELTA_NET", "GATED_LINEAR_ATTN", "GEGLU", "GEGLU_ERF",
		"GEGLU_QUICK", "GELU", "GELU_ERF", "GELU_QUICK", "GET_ROWS", "GET_ROWS_BACK", "GROUP_NORM",
		"HARDSIGMOID", "HARDSWISH", "IM2COL", "IM2COL_3D", "L2_NORM", "LEAKY_RELU", "LIGHTNING_INDEXER", "LOG", "MEAN", "MUL",
		"MUL_MAT", "MUL_MAT_ID",
		"NEG", "NORM", "OPT_STEP_ADAMW", "OPT_STEP_SGD", "OUT_PROD", "PAD", "PAD_REFLECT_1D", "POOL_1D",
		"POOL_2D", "REGLU", "RELU", "REPEAT", "REPEAT_BACK", "RMS_NORM", "RMS_NORM_BACK", "ROLL",
		"ROPE", "ROPE_BACK", "ROUND", "RWKV_WKV6", "RWKV_WKV7", "SCALE", "SET", "SET_ROWS", "SGN", "SIGMOID",
		"SILU", "SILU_BACK", "SIN", "SOFTPLUS", "SOFT_MAX", "SOFT_MAX_BACK", "SOLVE_TRI", "SQR", "SQRT",
		"SSM_CONV", "SSM_SCAN", "STEP", "SUB", "SUM", "SUM_ROWS", "SWIGLU", "SWIGLU_CLAMP", "SWIGLU_OAI",
		"TANH", "TIMESTEP_EMBEDDING", "TOP_K", "TRI", "TRUNC", "UPSCALE", "XIELU",
	},
	"opengl": {
		"ABS", "ACC", "ADD", "ADD_ID", "ARANGE", "ARGMAX", "CEIL", "CLAMP", "COL2IM_1D", "CONCAT",
		"CONT", "CONV_2D", "CONV_2D_DW", "CONV_3D", "CONV_TRANSPOSE_1D", "CONV_TRANSPOSE_2D", "COS",
		"COUNT_EQUAL", "CROSS_ENTROPY_LOSS", "CROSS_ENTROPY_LOSS_BACK", "CUMSUM", "DIAG",
		"DIAG_MASK_INF", "DIV", "DSV4_HC_COMB", "DSV4_HC_POST", "DSV4_HC_PRE", "DUP", "ELU", "EXP",
		"EXPM1", "FILL", "FLOOR", "GATED_DELTA_NET", "GATED_LINEAR_ATTN", "GEGLU", "GEGLU_ERF",
		"GEGLU_QUICK", "GELU", "GELU_ERF", "GELU_QUICK", "GET_ROWS_BACK", "GROUP_NORM", "HARDSIGMOID",
		"HARDSWISH", "IM2COL", "IM2COL_3D", "L2_NORM", "LEAKY_RELU", "LIGHTNING_INDEXER", "LOG", "MEAN",
		"MUL", "NEG", "NORM", "OPT_STEP_ADAMW", "OPT_STEP_SGD", "PAD", "PAD_REFLECT_1D", "POOL_1D",
		"POOL_2D", "REGLU", "RELU", "REPEAT", "REPEAT_BACK", "RMS_NORM", "RMS_NORM_BACK", "ROLL", "ROPE",
		"ROPE_BACK", "ROUND", "RWKV_WKV6", "RWKV_WKV7", "SCALE", "SET", "SGN", "SIGMOID", "SILU",
		"SILU_BACK", "SIN", "SOFTPLUS", "SOFT_MAX", "SOFT_MAX_BACK", "SOLVE_TRI", "SQR", "SQRT",
		"SSM_CONV", "SSM_SCAN", "STEP", "SUB", "SUM", "SUM_ROWS", "SWIGLU", "SWIGLU_CLAMP", "SWIGLU_OAI",
		"TANH", "TIMESTEP_EMBEDDING", "TRI", "TRUNC", "UPSCALE", "XIELU",
	},
}

// ClaimedDeclining lists, per backend, the ops for which every case the
// backend runs passes while it declines the rest: its SupportsOp says no,
// and test-backend-ops, asking through gogml's op-support query
// (rpcwire.CmdGogmlSupportsOp), reports those cases "not supported". A
// weaker claim than Claimed's, for kernels that cover some of an op's
// types or shapes; an op moves to Claimed once it declines nothing. From
// the run of 2026-12-02 14:06-15:28 UTC (make ggml-conformance's method on
// the ops whose OpenGL cases had failed before the query; LP_NUM_THREADS=1,
// docs/ggml-conformance-opengl.md now): ARGSORT 78 passed and 20
// declined (rows past 65535), MUL_MAT_ID 511 and 434,
// OUT_PROD 151 and 80, GET_ROWS 116 and 124, SET_ROWS 299 and 260, CPY 345
// and 150, MUL_MAT 1667 and 843 (the iq, tq, fp4, q1_0/q2_0 types,
// k-quant rows to set, buffers past llvmpipe's 128 MiB), none failed.
// TOP_K joined from the full OpenGL run of 2026-12-02 16:13-18:14 UTC
// (docs/ggml-conformance-opengl.md): 385 passed and 148 declined (rows
// past llvmpipe's 60,000-iteration loop limit), once its kernel stopped
// counting at rank k; the same run gave the counts above again.
// FLASH_ATTN_EXT joined from its run in 12 chunks of 2026-12-03 (02:17 UTC
// to 05:11 UTC, resumed across sessions with conformance -reuse, one
// build, f3bee71): 5,335 passed and 8 declined (q1_0/q2_0 K or V), none
// failed, every chunk finished.
var ClaimedDeclining = map[string][]string{
	"opengl": {"ARGSORT", "CPY", "FLASH_ATTN_EXT", "GET_ROWS", "MUL_MAT", "MUL_MAT_ID", "OUT_PROD", "SET_ROWS", "TOP_K"},
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
	"opengl": {
		"ABS", "ACC", "ADD_ID", "ARANGE", "ARGMAX", "CLAMP", "COL2IM_1D", "CONV_2D_DW",
		"CONV_TRANSPOSE_1D", "COUNT_EQUAL", "CROSS_ENTROPY_LOSS", "CROSS_ENTROPY_LOSS_BACK", "CUMSUM",
		"DIAG_MASK_INF", "DSV4_HC_COMB", "DSV4_HC_POST", "DSV4_HC_PRE", "DUP", "ELU", "EXP", "FILL",
		"GATED_LINEAR_ATTN", "GEGLU", "GEGLU_ERF", "GEGLU_QUICK", "GELU", "GELU_ERF", "GELU_QUICK",
		"GET_ROWS_BACK", "GROUP_NORM", "HARDSIGMOID", "HARDSWISH", "LOG", "MEAN", "NEG",
		"OPT_STEP_ADAMW", "OPT_STEP_SGD", "PAD_REFLECT_1D", "POOL_1D", "POOL_2D", "REGLU", "RELU",
		"REPEAT", "REPEAT_BACK", "ROLL", "RWKV_WKV6", "SCALE", "SET", "SILU", "SOLVE_TRI", "SQR", "STEP",
		"SUM", "SUM_ROWS", "SWIGLU", "SWIGLU_CLAMP", "SWIGLU_OAI", "TANH", "TIMESTEP_EMBEDDING", "TRI",
		"XIELU",
	},
}

// ClaimedArchs lists, per backend, the test-llama-archs rows ("arch/Config",
// e.g. "llama/Dense") whose RPC-device row is OK against gogml rpc-server
// (NMSE vs. ggml's CPU, roundtrip and mixed batch): 131 rows of 124
// architectures on the CPU, from per-architecture runs of 2026-12-02
// (test-llama-archs -a ^ARCH$ -s 1). make test-ggml-full checks them all
// (one run per architecture); make test-ggml runs CIArchs. That is every
// architecture test-llama-archs 0.7.0 builds (deepseek4's run takes about
// five minutes on two shared cores). On OpenGL the Dense rows of llama,
// mistral3, qwen3, granite and smollm3 all passed on 2026-12-02 (logits
// NMSE ~1e-13 against ggml's CPU, flash attention on the GL kernels);
// llama/Dense is claimed. With MUL_MAT_ID's GL kernel llama/MoE and
// qwen3moe/MoE passed too (2026-12-02 04:09 UTC, branch glops2: logits NMSE
// ~1e-13, roundtrip and mixed batch OK).
var ClaimedArchs = map[string][]string{
	"cpu": {
		"afmoe/MoE", "arcee/Dense", "arctic/MoE", "baichuan/Dense", "bailingmoe/MoE", "bailingmoe2/MoE",
		"bailingmoe3/MoE", "bloom/Dense", "chatglm/Dense", "codeshell/Dense", "cogvlm/Dense",
		"cohere2/Dense", "cohere2moe/MoE", "command-r/Dense", "dbrx/MoE", "deci/Dense", "deepseek/MoE",
		"deepseek2/MoE", "deepseek32/MoE", "deepseek4/MoE", "dots1/MoE", "dots3note/MoE", "dream/Dense",
		"ernie4_5-moe/MoE", "ernie4_5/MoE", "exaone-moe/MoE", "exaone/Dense", "exaone4/Dense",
		"falcon-h1/Dense", "falcon/Dense", "gemma/Dense", "gemma2/Dense", "gemma3/Dense", "glm-dsa/MoE",
		"glm4/Dense", "glm4moe/MoE", "glm5-next/MoE", "gpt-oss/MoE", "gpt2/Dense", "gptneox/Dense",
		"granite/Dense", "granite/MoE", "granite_swa/Dense", "granitehybrid/Dense", "granitemoe/Dense",
		"granitemoe/MoE", "grok/MoE", "grovemoe/MoE", "hrm_text/Dense", "hunyuan-dense/Dense",
		"hunyuan-moe/MoE", "hunyuan_vl/Dense", "hy_v3/MoE", "hy_v4/MoE", "internlm2/Dense", "jais/Dense",
		"jais2/Dense", "jamba/Dense", "k2-horizon/Dense", "k2-horizon/MoE", "kimi-k3/MoE",
		"kimi-linear/MoE", "laguna/MoE", "lfm2/Dense", "lfm2moe/MoE", "llada-moe/MoE", "llada/Dense",
		"llama/Dense", "llama/MoE", "llama4/MoE", "maincoder/Dense", "maion-coder/MoE", "mamba/Dense",
		"mamba2/Dense", "maple/MoE", "mellum/MoE", "mimo2/MoE", "minicpm/Dense", "minicpm/MoE",
		"minicpm3/Dense", "minimax-01/MoE", "minimax-m2/MoE", "minimax-m3/MoE", "mistral3/Dense",
		"mistral3/MoE", "mistral4/MoE", "mpt/Dense", "muse-glimmer/Dense", "nanbeige/Dense",
		"nemotron/Dense", "nemotron_h/Dense", "nemotron_h_moe/Dense", "olmo/Dense", "olmo2/Dense",
		"olmoe/MoE", "openelm/Dense", "orion/Dense", "paddleocr/MoE", "pangu-embedded/Dense",
		"phi2/Dense", "phi3/Dense", "phimoe/MoE", "plamo/Dense", "plamo2/Dense", "plamo3/Dense",
		"pockettts/Dense", "qwen/Dense", "qwen2/Dense", "qwen2moe/MoE", "qwen2vl/Dense", "qwen3/Dense",
		"qwen35/Dense", "qwen35moe/MoE", "qwen3moe/MoE", "qwen3next/MoE", "qwen3tts/Dense",
		"qwen3vl/Dense", "qwen3vlmoe/MoE", "qwen4exp/MoE", "refact/Dense", "refact/MoE", "rnd1/MoE",
		"seed_oss/Dense", "smallthinker/MoE", "smollm3/Dense", "spark2_5/Dense", "stablelm/Dense",
		"starcoder/Dense", "starcoder2/Dense", "talkie/Dense", "xverse/Dense",
	},
	// opengl: every row of the six architectures conformance runs by
	// default, all OK in the run of 2026-12-02 07:44 UTC (MUL_MAT_ID and
	// the GL buffers bound by range in).
	"opengl": {"granite/Dense", "granite/MoE", "llama/Dense", "llama/MoE", "mistral3/Dense", "mistral3/MoE",
		"qwen3/Dense", "qwen3moe/MoE", "smollm3/Dense"},
}

// CIArchs are the claimed rows make test (make test-ggml) asserts on every
// CI run: llama's dense and MoE rows (one test-llama-archs run) and qwen3's
// dense row (a second), about a minute on two cores; the rest of
// ClaimedArchs runs in make test-ggml-full.
var CIArchs = map[string][]string{
	"cpu":    {"llama/Dense", "llama/MoE", "qwen3/Dense"},
	"opengl": {"llama/Dense", "llama/MoE"},
}
