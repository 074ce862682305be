package ggmlpeer

// Claimed lists, per gogml backend, the ggml ops (test-backend-ops names)
// for which gogml rpc-server passes every case of ggml 0.27.0's
// test-backend-ops. The peer tests assert it (GOGML_PEER_OPS=claimed) and
// make test-ggml-full checks it; make ggml-conformance measures every op
// (docs/ggml-conformance.md). An op joins a list only after a clean run of
// all its cases; these are from the run of 2026-12-01 (rpc-server branch,
// commit 06cc7a2).
var Claimed = map[string][]string{
	"cpu": {
		"ABS", "ADD", "CLAMP", "CONT", "DIAG_MASK_INF", "DIV", "DUP", "GELU", "LOG", "MEAN",
		"MUL", "NEG", "NORM", "RELU", "REPEAT", "RMS_NORM", "RMS_NORM_BACK", "SIGMOID", "SILU",
		"SILU_BACK", "SOFT_MAX_BACK", "SQR", "SQRT", "SUB", "SUM_ROWS", "TANH",
	},
	"opengl": {
		"ABS", "ADD", "CLAMP", "CONT", "DIAG_MASK_INF", "DIV", "EXP", "GELU", "LOG", "MEAN",
		"MUL", "NEG", "NORM", "RELU", "RMS_NORM", "RMS_NORM_BACK", "SIGMOID", "SILU",
		"SILU_BACK", "SOFT_MAX_BACK", "SQR", "SQRT", "SUB", "SUM_ROWS", "TANH",
	},
}

// CISubset lists, per backend, the claimed ops make test-ggml runs on
// every CI run: those whose cases finish in seconds (unary, clamp, mask,
// reductions, norms). ADD/SUB/MUL/DIV/CONT take minutes each over RPC on
// two cores; make test-ggml-full runs every op.
var CISubset = map[string][]string{
	"cpu":    {"ABS", "CLAMP", "DIAG_MASK_INF", "GELU", "LOG", "MEAN", "NEG", "NORM", "RELU", "RMS_NORM", "SILU", "SQR", "SUM_ROWS", "TANH"},
	"opengl": {"ABS", "CLAMP", "DIAG_MASK_INF", "EXP", "GELU", "LOG", "MEAN", "NEG", "RELU", "SILU", "SQR", "SUM_ROWS", "TANH"},
}

// ClaimedArchs lists, per backend, the test-llama-archs rows ("arch/Config",
// e.g. "llama/Dense") whose RPC-device row is OK against gogml rpc-server;
// the peer tests assert them. None yet: llama-family graphs need SET_ROWS
// (the KV cache) and GET_ROWS, which gogml does not run fully.
var ClaimedArchs = map[string][]string{
	"cpu":    {},
	"opengl": {},
}
