package cpu

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gogml/gogml/gallocr"
	cpukernels "github.com/gogml/gogml/internal/kernels/cpukernels"
	"github.com/gogml/gogml/runtime"
)

// TestRepackedMulMat runs MUL_MAT with q4_0, q8_0 and q4_K weights placed in the
// repacking buffer type (set in uneven chunks, so that groups of four rows
// are completed across calls) against the same weights in a plain buffer:
// decode, the row-dot tiles and the GEMM paths must give the same bits,
// GetTensor must give back the bytes set, and any other use of repacked
// weights must fail.
func TestRepackedMulMat(t *testing.T) {
	rbt, ok := NewRepackBufferType()
	if !ok {
		t.Skip("no repacked kernels at this SIMD level")
	}
	for _, typ := range []runtime.Type{runtime.TypeQ4_0, runtime.TypeQ8_0, runtime.TypeQ4_K} {
		for _, s := range []struct{ k, n, m, b2 int64 }{
			{256, 37, 1, 1}, {512, 64, 1, 1}, {256, 16, 1, 3}, {256, 21, 3, 1}, {512, 37, 20, 1}, {256, 35, 40, 2},
		} {
			for _, threads := range []int{1, 3} {
				t.Run(fmt.Sprintf("%s/k%d_n%d_m%d_b%d/t%d", typ, s.k, s.n, s.m, s.b2, threads), func(t *testing.T) {
					testRepackedMulMat(t, rbt, typ, s.k, s.n, s.m, s.b2, threads)
				})
			}
		}
	}
}

func testRepackedMulMat(t *testing.T, rbt *RepackBufferType, typ runtime.Type, k, n, m, b2 int64, threads int) {
	r := rand.New(rand.NewPCG(uint64(k*n), uint64(m)))
	rowBytes := int64(typ.RowSize(k))
	aq := make([]byte, n*rowBytes)
	af := make([]float32, k)
	for i := range n {
		for j := range af {
			af[j] = float32(r.NormFloat64())
		}
		if err := cpukernels.FromFloat(typ, af, aq[i*rowBytes:(i+1)*rowBytes]); err != nil {
			t.Fatal(err)
		}
	}
	bf := make([]byte, 4*k*m*b2)
	for i := 0; i < len(bf); i += 4 {
		putF32(bf[i:], float32(r.NormFloat64()))
	}
	var outs [2][]byte
	be := NewBackend(BackendOptions{Threads: threads})
	defer be.Close()
	for side, repack := range []bool{false, true} {
		wctx, ctx := runtime.NewContext(), runtime.NewContext()
		a := wctx.NewTensor(typ, k, n)
		a.Name = "w"
		b := ctx.NewTensor(runtime.TypeF32, k, m, b2)
		out := ctx.MulMat(a, b)
		if err := ctx.Err(); err != nil {
			t.Fatal(err)
		}
		var wbt runtime.BufferType = DefaultBufferType()
		if repack {
			wbt = rbt
		}
		wbuf, err := gallocr.AllocCtxTensors(wctx, wbt)
		if err != nil {
			t.Fatal(err)
		}
		defer wbuf.Free()
		if repack != Repacked(a) {
			t.Fatalf("Repacked = %v in %s", Repacked(a), wbt.Name())
		}
		buf, err := gallocr.AllocCtxTensors(ctx, DefaultBufferType())
		if err != nil {
			t.Fatal(err)
		}
		defer buf.Free()
		// Uneven chunks: groups of four rows cut across calls.
		for off := 0; off < len(aq); off += 1000 {
			if err := runtime.SetTensorData(a, aq[off:min(off+1000, len(aq))], uint64(off)); err != nil {
				t.Fatal(err)
			}
		}
		back := make([]byte, len(aq)-7)
		if err := runtime.GetTensorData(a, back, 7); err != nil || !bytes.Equal(back, aq[7:]) {
			t.Fatalf("GetTensor: %v, same bytes %v", err, bytes.Equal(back, aq[7:]))
		}
		if err := runtime.SetTensorData(b, bf, 0); err != nil {
			t.Fatal(err)
		}
		g := runtime.NewGraph()
		if err := g.BuildForwardExpand(out); err != nil {
			t.Fatal(err)
		}
		if err := be.Compute(g); err != nil {
			t.Fatal(err)
		}
		outs[side] = make([]byte, out.NBytes())
		if err := runtime.GetTensorData(out, outs[side], 0); err != nil {
			t.Fatal(err)
		}
		if repack {
			// Any other reader of the repacked rows fails.
			ids := ctx.NewTensor1D(runtime.TypeI32, 1)
			gr := ctx.GetRows(a, ids)
			if _, err := gallocr.AllocCtxTensors(ctx, DefaultBufferType()); err != nil {
				t.Fatal(err)
			}
			g := runtime.NewGraph()
			if err := g.BuildForwardExpand(gr); err != nil {
				t.Fatal(err)
			}
			if err := be.Compute(g); !errors.Is(err, runtime.ErrUnsupported) {
				t.Errorf("GET_ROWS of repacked weights: %v, want ErrUnsupported", err)
			}
			// A view's bytes read through GetTensor are ggml's; a
			// product of a view is refused.
			v := ctx.View2D(a, k, 2, a.Nb[1], uint64(4*rowBytes))
			mv := ctx.MulMat(v, b)
			if _, err := gallocr.AllocCtxTensors(ctx, DefaultBufferType()); err != nil {
				t.Fatal(err)
			}
			vb := make([]byte, 2*rowBytes)
			if err := runtime.GetTensorData(v, vb, 0); err != nil || !bytes.Equal(vb, aq[4*rowBytes:6*rowBytes]) {
				t.Errorf("GetTensor of a view: %v, same bytes %v", err, bytes.Equal(vb, aq[4*rowBytes:6*rowBytes]))
			}
			g = runtime.NewGraph()
			if err := g.BuildForwardExpand(mv); err != nil {
				t.Fatal(err)
			}
			if err := be.Compute(g); !errors.Is(err, runtime.ErrUnsupported) {
				t.Errorf("MUL_MAT of a view of repacked weights: %v, want ErrUnsupported", err)
			}
		}
	}
	for i := 0; i < len(outs[0]); i += 4 {
		if g, w := getF32(outs[1][i:]), getF32(outs[0][i:]); math.Float32bits(g) != math.Float32bits(w) {
			t.Fatalf("element %d: repacked %v, plain %v", i/4, g, w)
		}
	}
}

func putF32(b []byte, v float32) { binary.LittleEndian.PutUint32(b, math.Float32bits(v)) }

func getF32(b []byte) float32 { return math.Float32frombits(binary.LittleEndian.Uint32(b)) }

// TestBelongs: the matrices a loader places in the repacking buffer are
// the repacked types' and q8_0's (in ggml's layout), of four rows or more,
// 2-D and contiguous; nothing else.
func TestBelongs(t *testing.T) {
	ctx := runtime.NewContext()
	q8 := ctx.NewTensor(runtime.TypeQ8_0, 256, 8)
	for _, tc := range []struct {
		name string
		t    *runtime.Tensor
		want bool
	}{
		{"q8_0 matrix", q8, true},
		{"q8_0 three rows", ctx.NewTensor(runtime.TypeQ8_0, 256, 3), false},
		{"q8_0 3-D", ctx.NewTensor(runtime.TypeQ8_0, 256, 8, 2), false},
		{"q8_0 view", ctx.View2D(q8, 256, 4, q8.Nb[1], 0), false},
		{"f16 matrix", ctx.NewTensor(runtime.TypeF16, 256, 8), false},
		{"q4_K matrix", ctx.NewTensor(runtime.TypeQ4_K, 256, 8), Repackable(ctx.NewTensor(runtime.TypeQ4_K, 256, 8))},
	} {
		if got := Belongs(tc.t); got != tc.want {
			t.Errorf("%s: Belongs = %v, want %v", tc.name, got, tc.want)
		}
	}
}
