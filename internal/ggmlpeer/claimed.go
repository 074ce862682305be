package ggmlpeer

// Claimed lists, per gogml backend, the ggml ops (test-backend-ops names)
// for which gogml rpc-server passes every case of ggml 0.27.0's
// test-backend-ops. The peer tests assert it; make ggml-conformance
// measures the rest (docs/ggml-conformance.md). An op joins a list only
// after a clean run of all its cases.
var Claimed = map[string][]string{
	"cpu":    {"ADD"},
	"opengl": {},
}

// CISubset lists, per backend, the claimed ops make test-ggml runs on
// every CI run: ops whose cases finish in seconds, covering element-wise,
// row, matrix and copy paths. make test-ggml-full runs every claimed op.
var CISubset = map[string][]string{
	"cpu":    {"ADD"},
	"opengl": {},
}

// ClaimedArchs lists, per backend, the test-llama-archs rows ("arch/Config",
// e.g. "llama/Dense") whose RPC-device row is OK against gogml rpc-server;
// the peer tests assert them.
var ClaimedArchs = map[string][]string{
	"cpu":    {},
	"opengl": {},
}
