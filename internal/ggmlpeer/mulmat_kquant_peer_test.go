package ggmlpeer

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gogml/gogml/runtime"
)

// TestRPCServerCPUKQuantPrompts judges gogml's k-quant GEMM tile (16 or
// more activation rows) against ggml's CPU backend: test-backend-ops' own
// MUL_MAT cases of q4_K, q5_K and q6_K with at least 16 activation rows,
// and generic cases of our own shapes (several panels, a partial panel, a
// partial last group of activation rows, k = 4096), all through gogml
// rpc-server -backend cpu.
func TestRPCServerCPUKQuantPrompts(t *testing.T) {
	p, src := peerForTest(t)
	var lines []string
	for _, typ := range []runtime.Type{runtime.TypeQ4_K, runtime.TypeQ5_K, runtime.TypeQ6_K} {
		for _, s := range []struct{ k, n, m int64 }{{4096, 40, 21}, {1024, 64, 128}, {512, 19, 16}} {
			g := genericCase{runtime.OpMulMat, runtime.TypeF32, [4]int64{s.n, s.m, 1, 1}, nil,
				[]TestFileSource{{Type: typ, Ne: [4]int64{s.k, s.n, 1, 1}}, {Type: runtime.TypeF32, Ne: [4]int64{s.k, s.m, 1, 1}}},
				"mul_mat_" + typ.String()}
			l, err := g.line()
			if err != nil {
				t.Fatal(err)
			}
			lines = append(lines, l)
		}
	}
	file := filepath.Join(t.TempDir(), "kquant-prompts.txt")
	if err := os.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	bin, err := BuildGogml(ctx, src, t.TempDir(), "")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := StartGogmlServer(bin, "cpu")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	for _, c := range []struct {
		name  string
		extra []string
	}{
		{"builtin", []string{"-p", `type_a=q[456]_K,.*,n=([1-9][0-9]+|1[6-9]),`}},
		{"generic", []string{"--test-file", file}},
	} {
		t.Run(c.name, func(t *testing.T) {
			run, err := p.BackendOps(ctx, srv, "RPC0", "MUL_MAT", c.extra...)
			if err != nil {
				t.Fatalf("%v\nserver log:\n%s", err, tail([]byte(srv.Log()), 2000))
			}
			r := run.Report.Ops["MUL_MAT"]
			switch {
			case r == nil:
				t.Fatalf("no MUL_MAT cases in the output (exit %v)\n%s", run.Err, tail(run.Stdout, 2000))
			case !r.Clean() || r.Passed == 0:
				t.Fatalf("%d passed, %d failed (first: %v), %d not supported\n%s", r.Passed, r.Failed, r.Failures, r.NotSupported, tail(run.Stdout, 3000))
			}
			t.Logf("MUL_MAT: %d/%d cases passed (%d skipped as large, %d the reference cannot run)", r.Passed, r.Total(), r.Skipped, r.RefNotSupported)
		})
	}
}
