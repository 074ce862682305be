package ggmlpeer

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gogml/gogml/internal/rpcwire"
	"github.com/gogml/gogml/runtime"
)

// genericCase is one generic op of test-backend-ops' --test-file format.
type genericCase struct {
	op     runtime.Op
	typ    runtime.Type
	ne     [4]int64
	params []int32
	srcs   []TestFileSource
	name   string
}

func (g genericCase) line() (string, error) {
	op, ok := rpcwire.GGML027().WireOp(g.op)
	if !ok {
		return "", fmt.Errorf("%s has no ggml 0.27.0 number", g.op)
	}
	return TestFileLine(int(op), g.typ, g.ne, g.params, g.srcs, g.name), nil
}

// genericConvCases are the ops of the convolution family that ggml's
// test-backend-ops has no cases for, written as generic ops on shapes of
// our choosing, so that ggml's CPU backend judges gogml's kernels anyway.
func genericConvCases() []genericCase {
	f32, f16 := runtime.TypeF32, runtime.TypeF16
	src := func(typ runtime.Type, ne ...int64) TestFileSource {
		s := TestFileSource{Type: typ, Ne: [4]int64{1, 1, 1, 1}}
		copy(s.Ne[:], ne)
		return s
	}
	return []genericCase{
		{runtime.OpPool2DBack, f32, [4]int64{10, 10, 3, 1}, []int32{0, 3, 3, 2, 2, 1, 1},
			[]TestFileSource{src(f32, 5, 5, 3), src(f32, 10, 10, 3)}, "pool_2d_back_max"},
		{runtime.OpPool2DBack, f32, [4]int64{10, 10, 3, 1}, []int32{1, 3, 3, 2, 2, 1, 1},
			[]TestFileSource{src(f32, 5, 5, 3), src(f32, 10, 10, 3)}, "pool_2d_back_avg"},
		{runtime.OpPool2DBack, f32, [4]int64{9, 8, 2, 2}, []int32{1, 2, 2, 2, 2, 0, 0},
			[]TestFileSource{src(f32, 4, 4, 2, 2), src(f32, 9, 8, 2, 2)}, "pool_2d_back_avg_k2"},
		{runtime.OpIm2colBack, f32, [4]int64{8, 8, 2, 1}, []int32{1, 1, 1, 1, 1, 1, 1},
			[]TestFileSource{src(f32, 18, 8, 8, 1), src(f32, 3, 3, 2, 1)}, "im2col_back_2d"},
		{runtime.OpIm2colBack, f32, [4]int64{11, 9, 3, 2}, []int32{2, 2, 1, 0, 1, 2, 1},
			[]TestFileSource{src(f32, 3*2*3, 6, 3, 2), src(f32, 3, 2, 3, 1)}, "im2col_back_2d_strided"},
		{runtime.OpIm2colBack, f32, [4]int64{10, 3, 2, 1}, []int32{2, 0, 1, 0, 1, 0, 0},
			[]TestFileSource{src(f32, 9, 5, 2), src(f32, 3, 3, 1)}, "im2col_back_1d"},
		{runtime.OpWinPart, f32, [4]int64{4, 5, 5, 6}, []int32{3, 2, 5}, []TestFileSource{src(f32, 4, 14, 9)}, "win_part"},
		{runtime.OpWinUnpart, f32, [4]int64{4, 14, 9, 1}, []int32{5}, []TestFileSource{src(f32, 4, 5, 5, 6)}, "win_unpart"},
		{runtime.OpGetRelPos, f16, [4]int64{8, 7, 7, 1}, nil, []TestFileSource{src(f16, 8, 13)}, "get_rel_pos"},
		{runtime.OpAddRelPos, f32, [4]int64{9, 6, 2, 1}, []int32{0},
			[]TestFileSource{src(f32, 9, 6, 2), src(f32, 3, 2, 3, 2), src(f32, 3, 2, 3, 2)}, "add_rel_pos"},
		{runtime.OpAddRelPos, f32, [4]int64{16, 6, 3, 1}, []int32{1},
			[]TestFileSource{src(f32, 16, 6, 3), src(f32, 4, 3, 2, 3), src(f32, 4, 3, 2, 3)}, "add_rel_pos_inplace"},
	}
}

// TestRPCServerCPUGenericConvOps judges the convolution family's ops that
// test-backend-ops has no cases for (POOL_2D_BACK, IM2COL_BACK, WIN_PART,
// WIN_UNPART, GET_REL_POS, ADD_REL_POS) with generic cases of its
// --test-file format against gogml rpc-server -backend cpu.
func TestRPCServerCPUGenericConvOps(t *testing.T) {
	p, src := peerForTest(t)
	var lines []string
	ops := map[string]bool{}
	for _, g := range genericConvCases() {
		l, err := g.line()
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, l)
		ops[g.op.String()] = true
	}
	file := filepath.Join(t.TempDir(), "conv-ops.txt")
	if err := os.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
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
	for op := range ops {
		t.Run(op, func(t *testing.T) {
			run, err := p.BackendOps(ctx, srv, "RPC0", op, "--test-file", file)
			if err != nil {
				t.Fatalf("%v\nserver log:\n%s", err, tail([]byte(srv.Log()), 2000))
			}
			r := run.Report.Ops[op]
			switch {
			case r == nil:
				t.Fatalf("no %s cases in the output (exit %v)\n%s", op, run.Err, tail(run.Stdout, 2000))
			case !r.Clean() || r.Passed == 0:
				t.Fatalf("%s: %d passed, %d failed (first: %v), %d not supported\n%s", op, r.Passed, r.Failed, r.Failures, r.NotSupported, tail(run.Stdout, 3000))
			}
			t.Logf("%s: %d/%d cases passed", op, r.Passed, r.Total())
		})
	}
}
