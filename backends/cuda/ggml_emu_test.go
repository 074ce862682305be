package cuda

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gogml/gogml/internal/ggmlpeer"
	"github.com/gogml/gogml/rpcserver"
	"github.com/gogml/gogml/runtime"
)

// ggml's judge on the kernels without a GPU: ggml 0.27.0's
// test-backend-ops (the Debian peer, internal/ggmlpeer) runs against a
// gogml RPC server served from this process on the emulated device, with
// gogml's op-support query, so a case the backend declines reads "not
// supported" and every case it runs must pass. What this proves and what
// it does not: RATIONALE, "ggml judges the CUDA kernels on the emulator".

// emuJudgeCase is one test-backend-ops run: an op and, for the ops with
// thousands of cases, a -p filter choosing a few kinds of them.
type emuJudgeCase struct {
	op, params string
	// stem names the run's log (stem.out) and subtest: the op, or OP.cN
	// for a chunk of its cases.
	stem string
}

// emuJudgeSubset is what TestGGMLJudgesEmulatedCUDA runs by default: the
// ops a llama-style decoder uses, the longer ones cut by a -p filter to its small
// shapes (the emulator runs a block at a time: SOFT_MAX's 1024x1024 rows,
// GET_ROWS' 70000-row results and ADD's 16M-element cases take minutes),
// under two minutes on two cores in all. GOGML_EMU_ALL=1 runs them whole.
var emuJudgeSubset = []emuJudgeCase{
	{op: "ADD", params: `type=(f32|f16|bf16),ne=\[(10|16),5,4,3\]`},
	{op: "MUL", params: `type=f32,ne=\[(10|16),5,4,3\]`},
	{op: "SCALE"},
	{op: "SOFT_MAX", params: `ne=\[(15|16),(2|15|16),`},
	{op: "RMS_NORM"},
	{op: "ROPE", params: `ne_a=\[(128,32|64,128),2,1\]`},
	{op: "GET_ROWS", params: `n=256,m=5,r=4,be1=(1|7),`},
	{op: "SET_ROWS"},
	{op: "CPY", params: `ne_src=\[(32|64|256),2,3,4\]`},
	{op: "SWIGLU"},
	{op: "MUL_MAT", params: `type_a=(f16|q8_0|q4_K),type_b=f32,m=16,n=(1|9),k=256,`},
	{op: "FLASH_ATTN_EXT", params: `hsk=64,hsv=64,nh=4,nr23=\[1,1\],kv=512,nb=(1|3),`},
	// Whole ops that finished in seconds in the full run.
	{op: "ABS"}, {op: "ADD_ID"}, {op: "CLAMP"}, {op: "CONCAT", params: `type=(f32|f16|i32),.*v=0`}, {op: "DIAG_MASK_INF"}, {op: "DUP"},
	{op: "EXP"}, {op: "GEGLU"}, {op: "GEGLU_QUICK"}, {op: "GELU"}, {op: "GELU_QUICK"}, {op: "MEAN"},
	{op: "REGLU"}, {op: "REPEAT"}, {op: "RMS_NORM_BACK"}, {op: "SILU"}, {op: "SILU_BACK"},
	{op: "SUM_ROWS"}, {op: "SWIGLU_OAI"}, {op: "TANH"}, {op: "SUM"}, {op: "FILL"}, {op: "L2_NORM"}, {op: "SSM_CONV"},
}

// TestGGMLJudgesEmulatedCUDA runs ggml's test-backend-ops against the
// emulated CUDA backend. Without the ggml peer (GOGML_PEER_ROOT, which
// make test sets) or g++ it skips, saying so. GOGML_EMU_ALL=1 runs every
// op test-backend-ops lists (hours) instead of emuJudgeSubset,
// GOGML_EMU_GGML_OPS=A,B names the ops to run and GOGML_EMU_GGML_P a -p
// filter for them, GOGML_EMU_GGML_LIMIT a time limit per op (default
// 60m; a run cut short is written and counted as far as it got), and
// GOGML_EMU_GGML_LOGS=DIR keeps each op's output as DIR/OP.out, the
// layout `conformance -cuda DIR` reads for its CUDA column. The subset
// asserts that every case the backend runs passes (declined ones aside);
// a chosen list, or all, logs each op's counts and fails the ops with a
// failing or unfinished case (an op declined whole, or one without cases
// on this device, is not a failure there).
func TestGGMLJudgesEmulatedCUDA(t *testing.T) {
	p, srv := emuPeerServer(t, "ggml's judge on the emulated CUDA kernels")
	cases, assert := emuJudgeSubset, true
	if v := os.Getenv("GOGML_EMU_GGML_OPS"); v != "" {
		cases, assert = emuJudgeRuns(strings.Split(v, ","), os.Getenv("GOGML_EMU_GGML_P")), false
	} else if os.Getenv("GOGML_EMU_ALL") == "1" {
		ops, err := p.ListOps(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		cases, assert = emuJudgeRuns(ops, ""), false
	}
	limit := 60 * time.Minute
	if v := os.Getenv("GOGML_EMU_GGML_LIMIT"); v != "" {
		var err error
		if limit, err = time.ParseDuration(v); err != nil {
			t.Fatalf("GOGML_EMU_GGML_LIMIT: %v", err)
		}
	}
	logs := os.Getenv("GOGML_EMU_GGML_LOGS")
	if logs != "" {
		if err := os.MkdirAll(logs, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range cases {
		if c.stem == "" {
			c.stem = c.op
		}
		t.Run(c.stem, func(t *testing.T) {
			var extra []string
			if c.params != "" {
				extra = []string{"-p", c.params}
			}
			ctx, cancel := context.WithTimeout(context.Background(), limit)
			defer cancel()
			start := time.Now()
			run, err := p.BackendOps(ctx, srv, "RPC0", c.op, extra...)
			if logs != "" && run != nil {
				if werr := os.WriteFile(filepath.Join(logs, c.stem+".out"), run.Stdout, 0o644); werr != nil {
					t.Error(werr)
				}
				_ = os.WriteFile(filepath.Join(logs, c.stem+".err"), run.Stderr, 0o644)
			}
			if err != nil {
				t.Fatalf("%v\nserver log:\n%s", err, lastBytes(srv.Log(), 2000))
			}
			r := run.Report.Ops[c.op]
			if r != nil {
				t.Logf("%s (-p %q): %d passed, %d failed, %d declined, %d not supported by the reference, in %v",
					c.op, c.params, r.Passed, r.Failed, r.NotSupported, r.RefNotSupported, time.Since(start).Round(time.Second))
			}
			if assert {
				err = run.Verdict(c.op, true)
			} else if r != nil && (r.Failed > 0 || r.Unfinished != "" || run.Report.Truncated) {
				err = fmt.Errorf("%s: %d failed (first: %v), unfinished at %q, truncated %v (exit %v)\nstderr:\n%s",
					c.op, r.Failed, r.Failures, r.Unfinished, run.Report.Truncated, run.Err, lastBytes(string(run.Stderr), 1000))
			}
			if err != nil {
				t.Errorf("%v\nserver log:\n%s", err, lastBytes(srv.Log(), 2000))
			}
			if !srv.Alive() {
				t.Fatalf("the in-process server stopped:\n%s", lastBytes(srv.Log(), 2000))
			}
		})
	}
}

// emuJudgeRuns is one run per op, with the -p filter params when given;
// without one, the ops conformance runs in chunks of their cases
// (ggmlpeer.Chunks: MUL_MAT, MUL_MAT_ID, FLASH_ATTN_EXT) run chunk by
// chunk, each under the time limit, logged as OP.c1, OP.c2, ... which
// conformance -cuda merges.
func emuJudgeRuns(ops []string, params string) []emuJudgeCase {
	var out []emuJudgeCase
	for _, op := range ops {
		chunks := ggmlpeer.Chunks(op)
		if params != "" || chunks == nil {
			out = append(out, emuJudgeCase{op: op, params: params})
			continue
		}
		for i, f := range chunks {
			out = append(out, emuJudgeCase{op: op, params: f, stem: fmt.Sprintf("%s.c%d", op, i+1)})
		}
	}
	return out
}

// lastBytes is the end of s, at most n bytes.
func lastBytes(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// TestLlamaArchsOnEmulatedCUDA runs llama.cpp's test-llama-archs (a model
// of each architecture with random weights, compared with ggml's CPU)
// with the emulated CUDA backend as the RPC device. The backend answers
// the op-support query, so llama.cpp's scheduler places what it declines
// on ggml's CPU, as for a local GPU backend that lacks an op: every row
// of the RPC device judges the CUDA kernels inside a whole model.
// GOGML_EMU_ARCHS=a,b names the architectures and runs it (llama's dense
// and MoE models take 22 s on two quiet cores, 9 minutes when they share
// them with other long runs; eleven architectures 295 s), so make test
// leaves it to make ggml-cuda-emu-archs; without the variable, or the
// peer or g++, it skips, saying so.
func TestLlamaArchsOnEmulatedCUDA(t *testing.T) {
	if os.Getenv("GOGML_EMU_ARCHS") == "" {
		t.Skip("SKIP: GOGML_EMU_ARCHS (architectures, e.g. llama,qwen3; make ggml-cuda-emu-archs) not set: test-llama-archs on the emulated CUDA kernels not run")
	}
	p, srv := emuPeerServer(t, "test-llama-archs on the emulated CUDA kernels")
	for _, arch := range strings.Split(os.Getenv("GOGML_EMU_ARCHS"), ",") {
		t.Run(arch, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
			defer cancel()
			start := time.Now()
			run, err := p.LlamaArchsPlaced(ctx, srv, arch, 1)
			if err != nil {
				t.Fatalf("%v\nserver log:\n%s", err, lastBytes(srv.Log(), 2000))
			}
			rows := run.Device(srv.Endpoint)
			if len(rows) == 0 {
				t.Fatalf("no row for the RPC device %s (exit %v)\nstdout:\n%s\nstderr:\n%s", srv.Endpoint, run.Err, lastBytes(string(run.Stdout), 2000), lastBytes(string(run.Stderr), 2000))
			}
			for _, r := range rows {
				if !r.OK() {
					t.Errorf("%s/%s: %v %v\nstderr:\n%s", arch, r.Config, r.Status, r.Detail, lastBytes(string(run.Stderr), 2000))
					continue
				}
				t.Logf("%s/%s: %v %v", arch, r.Config, r.Status, r.Detail)
			}
			t.Logf("%s: %d rows in %v", arch, len(rows), time.Since(start).Round(time.Second))
		})
	}
}

// emuPeerServer locates the ggml peer and serves the emulated CUDA
// backend in process with the op-support query, closed when t ends. It
// skips, naming what, without the peer (GOGML_PEER_ROOT, which make test
// sets, or a fetch that found no packages) or g++.
func emuPeerServer(t *testing.T, what string) (*ggmlpeer.Peer, *ggmlpeer.Server) {
	t.Helper()
	if os.Getenv("GOGML_PEER_ROOT") == "" {
		t.Skipf("SKIP: GOGML_PEER_ROOT (the ggml peer sysroot, `bash scripts/ggml-peer.sh path`; make test sets it) not set: %s not run", what)
	}
	b := newEmuBackend(t) // skips without g++
	root, err := ggmlpeer.RepoRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	p, err := ggmlpeer.Locate(ctx, root)
	cancel()
	if errors.Is(err, ggmlpeer.ErrUnavailable) {
		t.Skipf("SKIP (peer unavailable, %s not run): %v", what, err)
	}
	if err != nil {
		t.Fatal(err)
	}
	srv, err := ggmlpeer.StartInProcessServer(rpcserver.Options{Backends: []runtime.Backend{b}, SupportsOpQuery: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := srv.Close(); err != nil {
			t.Errorf("%v\n%s", err, srv.Log())
		}
	})
	return p, srv
}
