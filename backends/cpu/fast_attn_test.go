package cpu

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/gogml/gogml/gallocr"
	cpukernels "github.com/gogml/gogml/internal/kernels/cpukernels"
	"github.com/gogml/gogml/runtime"
)

// TestFlashAttnMatchesReference runs FLASH_ATTN_EXT through the backend
// (3 workers, fast_attn.go) and through the reference kernels, for K/V
// types, masks with -Inf, sinks, softcap, ALiBi and head broadcast; the
// two may differ only by float32 against float64 dot products.
func TestFlashAttnMatchesReference(t *testing.T) {
	f32, f16, bf16 := runtime.TypeF32, runtime.TypeF16, runtime.TypeBF16
	q8, q4 := runtime.TypeQ8_0, runtime.TypeQ4_1
	cases := []struct {
		name                 string
		kv                   runtime.Type
		d, nh, nhkv, nkv, nq int64
		mask, sinks          bool
		scale, maxBias, cap  float32
	}{
		{"f16", f16, 64, 4, 4, 113, 3, true, false, 0.125, 0, 0},
		{"f32 no mask", f32, 40, 2, 2, 33, 5, false, false, 0.2, 0, 0},
		{"bf16 sinks", bf16, 64, 4, 2, 64, 2, true, true, 0.125, 0, 0},
		{"q8_0 gqa", q8, 64, 8, 2, 96, 4, true, false, 0.125, 0, 0},
		{"q4_1 sinks", q4, 64, 4, 4, 70, 3, true, true, 0.125, 0, 0},
		{"f16 alibi softcap", f16, 128, 4, 4, 50, 2, true, false, 0.09, 8, 10},
		{"f16 decode gqa", f16, 128, 8, 2, 300, 1, true, false, 0.088, 0, 0},
		{"f16 decode sinks odd width", f16, 40, 4, 4, 77, 1, false, true, 0.15, 0, 0},
		{"f16 decode alibi softcap", f16, 64, 4, 1, 129, 1, true, false, 0.125, 8, 10},
		{"f16 three rows", f16, 64, 4, 2, 65, 3, true, true, 0.125, 0, 0},
		{"f16 decode 16 heads on 1 width 80", f16, 80, 16, 1, 200, 1, true, false, 0.1, 0, 0},
		{"f16 decode split sinks", f16, 64, 4, 1, 1000, 1, true, true, 0.125, 0, 0},
		{"f16 decode split groups of 3 alibi", f16, 128, 6, 2, 700, 1, true, false, 0.088, 8, 0},
		{"f16 decode two rows split softcap", f16, 64, 2, 2, 900, 2, false, true, 0.125, 0, 20},
	}
	be := NewBackend(BackendOptions{Threads: 3})
	defer be.Close()
	SplitEverything(be)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := runtime.NewContext()
			q := ctx.NewTensor(f32, c.d, c.nq, c.nh, 1)
			k := ctx.NewTensor(c.kv, c.d, c.nkv, c.nhkv, 1)
			v := ctx.NewTensor(c.kv, c.d, c.nkv, c.nhkv, 1)
			var mask, sinks *runtime.Tensor
			if c.mask {
				mask = ctx.NewTensor(f16, c.nkv, c.nq, 1, 1)
			}
			out := ctx.FlashAttnExt(q, k, v, mask, c.scale, c.maxBias, c.cap)
			if c.sinks {
				sinks = ctx.NewTensor(f32, c.nh)
				out = ctx.FlashAttnExtAddSinks(out, sinks)
			}
			if err := ctx.Err(); err != nil {
				t.Fatal(err)
			}
			buf, err := gallocr.AllocCtxTensors(ctx, DefaultBufferType())
			if err != nil {
				t.Fatal(err)
			}
			defer buf.Free()
			for li, x := range []*runtime.Tensor{q, k, v, mask, sinks} {
				if x != nil {
					fillAttn(t, x, li)
				}
			}
			got, want := backendThenReference(t, be, out)
			var num, den float64
			for i := 0; i < len(got); i += 4 {
				a := float64(math.Float32frombits(binary.LittleEndian.Uint32(got[i:])))
				b := float64(math.Float32frombits(binary.LittleEndian.Uint32(want[i:])))
				num += (a - b) * (a - b)
				den += b * b
			}
			if !(num/den < 1e-10) || den == 0 {
				t.Fatalf("NMSE %g of the backend against the reference (sum of squares %g)", num/den, den)
			}
		})
	}
}

// fillAttn gives x deterministic values in [-1, 1] (q, k, v, sinks), or
// mask values of 0 and -Inf, seeded by li.
func fillAttn(t *testing.T, x *runtime.Tensor, li int) {
	t.Helper()
	vals := make([]float32, x.Nelements())
	for i := range vals {
		vals[i] = float32(math.Sin(float64(i)*0.37 + float64(li)*1.7))
		if li == 3 && (i*7)%5 == 0 { // mask
			vals[i] = float32(math.Inf(-1))
		}
	}
	data := make([]byte, x.NBytes())
	rb := x.Type.RowSize(x.Ne[0])
	for r := range x.Nrows() {
		row := vals[r*x.Ne[0] : (r+1)*x.Ne[0]]
		if err := cpukernels.FromFloatCPU(x.Type, row, data[uint64(r)*rb:uint64(r+1)*rb]); err != nil {
			t.Fatal(err)
		}
	}
	if err := runtime.SetTensorData(x, data, 0); err != nil {
		t.Fatal(err)
	}
}

// backendThenReference computes out's graph with be, then out alone with
// the reference kernels (2 parts) over the same inputs (an in-place op's
// source restored first), and returns both results' bytes.
func backendThenReference(t *testing.T, be *Backend, out *runtime.Tensor) (got, want []byte) {
	t.Helper()
	g := runtime.NewGraph()
	if err := g.BuildForwardExpand(out); err != nil {
		t.Fatal(err)
	}
	// The source of an in-place op is overwritten: keep its input.
	src0 := make([]byte, out.Src[0].NBytes())
	if err := runtime.GetTensorData(out.Src[0], src0, 0); err != nil {
		t.Fatal(err)
	}
	if err := be.Compute(g); err != nil {
		t.Fatal(err)
	}
	got = make([]byte, out.NBytes())
	if err := runtime.GetTensorData(out, got, 0); err != nil {
		t.Fatal(err)
	}
	if err := runtime.SetTensorData(out.Src[0], src0, 0); err != nil {
		t.Fatal(err)
	}
	for ith := range 2 {
		if err := cpukernels.Compute(out, hostMem, ith, 2); err != nil {
			t.Fatal(err)
		}
	}
	want = make([]byte, out.NBytes())
	if err := runtime.GetTensorData(out, want, 0); err != nil {
		t.Fatal(err)
	}
	return got, want
}
