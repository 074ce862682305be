package cpu

import (
	"bytes"
	"encoding/binary"
	"math"
	"testing"
	"unsafe"

	"github.com/gogml/gogml/gallocr"
	cpukernels "github.com/gogml/gogml/internal/kernels/cpukernels"
	"github.com/gogml/gogml/internal/kernels/cpukernels/vec"
	"github.com/gogml/gogml/runtime"
)

// TestFastOpsMatchReference runs each op of fast_ops.go through the
// backend (3 workers, every node split) and then through the reference
// kernels into the same result, and requires the same bytes. Run it under
// each GOGML_CPU level (make test-simd-levels) to check every SIMD path.
func TestFastOpsMatchReference(t *testing.T) {
	rp := runtime.RopeParams{FreqBase: 10000, FreqScale: 1, AttnFactor: 1, BetaFast: 32, BetaSlow: 1}
	yarn := runtime.RopeParams{NCtxOrig: 4096, FreqBase: 500000, FreqScale: 0.25, ExtFactor: 1, AttnFactor: 1, BetaFast: 32, BetaSlow: 1}
	cases := []struct {
		name  string
		build func(ctx *runtime.Context) *runtime.Tensor
	}{
		{"cpy f32->f16", func(ctx *runtime.Context) *runtime.Tensor {
			return ctx.Cpy(ctx.NewTensor2D(runtime.TypeF32, 133, 7), ctx.NewTensor2D(runtime.TypeF16, 133, 7))
		}},
		{"cpy f16->f32", func(ctx *runtime.Context) *runtime.Tensor {
			return ctx.Cpy(ctx.NewTensor2D(runtime.TypeF16, 96, 9), ctx.NewTensor2D(runtime.TypeF32, 96, 9))
		}},
		{"cpy f32->f16 permuted", func(ctx *runtime.Context) *runtime.Tensor {
			a := ctx.Permute(ctx.NewTensor3D(runtime.TypeF32, 40, 5, 3), 0, 2, 1, 3)
			return ctx.Cpy(a, ctx.NewTensor3D(runtime.TypeF16, 40, 3, 5))
		}},
		{"cont f16->f16 permuted", func(ctx *runtime.Context) *runtime.Tensor {
			return ctx.Cont(ctx.Permute(ctx.NewTensor3D(runtime.TypeF16, 40, 5, 3), 0, 2, 1, 3))
		}},
		{"cont f32 permuted heads into rows", func(ctx *runtime.Context) *runtime.Tensor {
			// A decoder's attention output: {hd, N, H} -> {hd·H, N}.
			kqv := ctx.NewTensor3D(runtime.TypeF32, 16, 7, 5)
			return ctx.Cont4D(ctx.Permute(kqv, 0, 2, 1, 3), 16*5, 7, 1, 1)
		}},
		{"cpy f32 transposed into a cache view", func(ctx *runtime.Context) *runtime.Tensor {
			// A decoder's values into their cache slots: {dkv, N}^T into
			// N columns of a {ctx, dkv} cache from column 3 on.
			v := ctx.NewTensor2D(runtime.TypeF32, 24, 9)
			cache := ctx.NewTensor2D(runtime.TypeF32, 40, 24)
			slot := ctx.View2D(cache, 9, 24, cache.Nb[1], 3*4)
			return ctx.Cpy(ctx.Transpose(v), slot)
		}},
		{"cpy f32 one token transposed into a cache view", func(ctx *runtime.Context) *runtime.Tensor {
			// Decode: rows of one element (copyElemsKernel's strided loop).
			v := ctx.NewTensor3D(runtime.TypeF32, 12, 1, 2)
			cache := ctx.NewTensor3D(runtime.TypeF32, 40, 12, 2)
			slot := ctx.View3D(cache, 1, 12, 2, cache.Nb[1], cache.Nb[2], 5*4)
			return ctx.Cpy(ctx.Transpose(v), slot)
		}},
		{"cont f16 transposed", func(ctx *runtime.Context) *runtime.Tensor {
			return ctx.Cont(ctx.Transpose(ctx.NewTensor2D(runtime.TypeF16, 33, 6)))
		}},
		{"cont i32 permuted 4d into rows", func(ctx *runtime.Context) *runtime.Tensor {
			x := ctx.NewTensor(runtime.TypeI32, 6, 4, 3, 2)
			return ctx.Cont4D(ctx.Permute(x, 0, 3, 1, 2), 6*3, 4*2, 1, 1)
		}},
		{"diag_mask_inf f32", func(ctx *runtime.Context) *runtime.Tensor {
			return ctx.DiagMaskInf(ctx.NewTensor3D(runtime.TypeF32, 21, 9, 3), 5)
		}},
		{"diag_mask_inf f32 inplace", func(ctx *runtime.Context) *runtime.Tensor {
			return ctx.DiagMaskInfInplace(ctx.NewTensor3D(runtime.TypeF32, 16, 16, 2), 0)
		}},
		{"diag_mask_inf f32 of a permuted view", func(ctx *runtime.Context) *runtime.Tensor {
			return ctx.DiagMaskInf(ctx.Permute(ctx.NewTensor3D(runtime.TypeF32, 12, 4, 7), 0, 2, 1, 3), 2)
		}},
		{"get_rows f32", func(ctx *runtime.Context) *runtime.Tensor {
			return ctx.GetRows(ctx.NewTensor2D(runtime.TypeF32, 70, 11), ctx.NewTensor1D(runtime.TypeI32, 13))
		}},
		{"get_rows f16", func(ctx *runtime.Context) *runtime.Tensor {
			return ctx.GetRows(ctx.NewTensor2D(runtime.TypeF16, 70, 11), ctx.NewTensor1D(runtime.TypeI32, 13))
		}},
		{"get_rows q8_0", func(ctx *runtime.Context) *runtime.Tensor {
			return ctx.GetRows(ctx.NewTensor2D(runtime.TypeQ8_0, 96, 11), ctx.NewTensor1D(runtime.TypeI32, 13))
		}},
		{"rope normal", func(ctx *runtime.Context) *runtime.Tensor {
			return ctx.RopeExt(ctx.NewTensor3D(runtime.TypeF32, 64, 4, 9), ctx.NewTensor1D(runtime.TypeI32, 9), nil, 64, runtime.RopeNormal, rp)
		}},
		{"rope neox partial", func(ctx *runtime.Context) *runtime.Tensor {
			return ctx.RopeExt(ctx.NewTensor3D(runtime.TypeF32, 64, 4, 9), ctx.NewTensor1D(runtime.TypeI32, 9), nil, 32, runtime.RopeNeoX, rp)
		}},
		{"rope neox 80 of 96 dims", func(ctx *runtime.Context) *runtime.Tensor {
			return ctx.RopeExt(ctx.NewTensor3D(runtime.TypeF32, 96, 3, 11), ctx.NewTensor1D(runtime.TypeI32, 11), nil, 80, runtime.RopeNeoX, rp)
		}},
		{"rope yarn inplace", func(ctx *runtime.Context) *runtime.Tensor {
			return ctx.RopeExtInplace(ctx.NewTensor3D(runtime.TypeF32, 128, 3, 5), ctx.NewTensor1D(runtime.TypeI32, 5), nil, 96, runtime.RopeNormal, yarn)
		}},
	}
	be := NewBackend(BackendOptions{Threads: 3})
	defer be.Close()
	SplitEverything(be)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := runtime.NewContext()
			out := c.build(ctx)
			if err := ctx.Err(); err != nil {
				t.Fatal(err)
			}
			buf, err := gallocr.AllocCtxTensors(ctx, DefaultBufferType())
			if err != nil {
				t.Fatal(err)
			}
			defer buf.Free()
			var leaves []*runtime.Tensor
			for _, x := range ctx.Tensors() {
				if x.Op == runtime.OpNone && x.ViewSrc == nil {
					leaves = append(leaves, x)
				}
			}
			for li, x := range leaves {
				data := make([]byte, x.NBytes())
				if x.Type == runtime.TypeQ8_0 {
					row := make([]float32, x.Ne[0])
					rb := x.Type.RowSize(x.Ne[0])
					for r := range x.Nrows() {
						for i := range row {
							row[i] = float32(math.Sin(float64(r*x.Ne[0]+int64(i)) * 0.37))
						}
						if err := cpukernels.FromFloatCPU(x.Type, row, data[uint64(r)*rb:uint64(r+1)*rb]); err != nil {
							t.Fatal(err)
						}
					}
					if err := runtime.SetTensorData(x, data, 0); err != nil {
						t.Fatal(err)
					}
					continue
				}
				for i := range int(x.Nelements()) {
					v := float32(math.Sin(float64(i)*0.37+float64(li))) * float32(1+i%300) * 0.7
					switch x.Type {
					case runtime.TypeI32:
						binary.LittleEndian.PutUint32(data[4*i:], uint32((i*7)%11))
					case runtime.TypeF16:
						binary.LittleEndian.PutUint16(data[2*i:], cpukernels.F32ToF16(v))
					default:
						binary.LittleEndian.PutUint32(data[4*i:], math.Float32bits(v))
					}
				}
				if err := runtime.SetTensorData(x, data, 0); err != nil {
					t.Fatal(err)
				}
			}
			got, want := backendThenReference(t, be, out)
			if !bytes.Equal(got, want) {
				t.Fatalf("level %s: backend result differs from the reference kernels", vec.Level())
			}
		})
	}
}

// TestSwigluFastMatchesReference checks the SWIGLU fast path (vector SiLU
// and multiply) against the reference kernel's scalar x/(1+exp(-x))·g:
// split (rows of 133, and of 128, which take one call a worker), fused,
// swapped and in place over the gate, on 3 workers. The
// vector exp is not the scalar one bit for bit, so the bound is relative.
func TestSwigluFastMatchesReference(t *testing.T) {
	cases := []struct {
		name  string
		build func(ctx *runtime.Context) *runtime.Tensor
	}{
		{"split", func(ctx *runtime.Context) *runtime.Tensor {
			return ctx.GluSplit(ctx.NewTensor2D(runtime.TypeF32, 133, 7), ctx.NewTensor2D(runtime.TypeF32, 133, 7), runtime.GluSwiglu)
		}},
		{"split rows of 128", func(ctx *runtime.Context) *runtime.Tensor { // a worker's rows in one call
			return ctx.GluSplit(ctx.NewTensor3D(runtime.TypeF32, 128, 5, 2), ctx.NewTensor3D(runtime.TypeF32, 128, 5, 2), runtime.GluSwiglu)
		}},
		{"fused", func(ctx *runtime.Context) *runtime.Tensor {
			return ctx.Glu(ctx.NewTensor2D(runtime.TypeF32, 2*67, 9), runtime.GluSwiglu, false)
		}},
		{"fused swapped", func(ctx *runtime.Context) *runtime.Tensor {
			return ctx.Glu(ctx.NewTensor2D(runtime.TypeF32, 2*67, 9), runtime.GluSwiglu, true)
		}},
	}
	be := NewBackend(BackendOptions{Threads: 3})
	defer be.Close()
	SplitEverything(be)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := runtime.NewContext()
			out := c.build(ctx)
			if err := ctx.Err(); err != nil {
				t.Fatal(err)
			}
			buf, err := gallocr.AllocCtxTensors(ctx, DefaultBufferType())
			if err != nil {
				t.Fatal(err)
			}
			defer buf.Free()
			for li, x := range ctx.Tensors() {
				if x.Op != runtime.OpNone || x.ViewSrc != nil {
					continue
				}
				data := make([]byte, x.NBytes())
				for i := range int(x.Nelements()) {
					v := float32(math.Sin(float64(i)*0.37+float64(li))) * float32(1+i%30) * 0.7
					binary.LittleEndian.PutUint32(data[4*i:], math.Float32bits(v))
				}
				if err := runtime.SetTensorData(x, data, 0); err != nil {
					t.Fatal(err)
				}
			}
			got, want := backendThenReference(t, be, out)
			for i := 0; i+4 <= len(got); i += 4 {
				g := math.Float32frombits(binary.LittleEndian.Uint32(got[i:]))
				w := math.Float32frombits(binary.LittleEndian.Uint32(want[i:]))
				if d := math.Abs(float64(g - w)); d > 1e-5*math.Max(1, math.Abs(float64(w))) {
					t.Fatalf("level %s: element %d: %g, reference %g", vec.Level(), i/4, g, w)
				}
			}
		})
	}
}

// TestFastPathsTaken keeps TestSwigluFastMatchesReference and
// TestFlashAttnMatchesReference's decode cases meaningful: were the fast
// kernels to refuse these shapes, both would compare the reference with
// itself and pass.
func TestFastPathsTaken(t *testing.T) {
	ctx := runtime.NewContext()
	f32, f16 := runtime.TypeF32, runtime.TypeF16
	sw := ctx.GluSplit(ctx.NewTensor2D(f32, 133, 7), ctx.NewTensor2D(f32, 133, 7), runtime.GluSwiglu)
	q := ctx.NewTensor(f32, 64, 1, 4, 1)
	k := ctx.NewTensor(f16, 64, 129, 1, 1)
	v := ctx.NewTensor(f16, 64, 129, 1, 1)
	fa := ctx.FlashAttnExt(q, k, v, nil, 0.125, 0, 0)
	if err := ctx.Err(); err != nil {
		t.Fatal(err)
	}
	bytesOf := func(ts ...*runtime.Tensor) [][]byte {
		var out [][]byte
		for _, x := range ts {
			b := make([]byte, x.NBytes()+8)
			out = append(out, b[(4-uintptr(unsafe.Pointer(&b[0]))%4)%4:][:x.NBytes()])
		}
		return out
	}
	kqv := ctx.NewTensor3D(f32, 128, 128, 16)
	attnOut := ctx.Cont4D(ctx.Permute(kqv, 0, 2, 1, 3), 128*16, 128, 1, 1)
	vals := ctx.NewTensor2D(f32, 512, 128)
	cache := ctx.NewTensor2D(f32, 512, 512)
	cpyV := ctx.Cpy(ctx.Transpose(vals), ctx.View2D(cache, 128, 512, cache.Nb[1], 0))
	if err := ctx.Err(); err != nil {
		t.Fatal(err)
	}
	for _, n := range []*runtime.Tensor{attnOut, cpyV} {
		src := make([]byte, n.Src[0].NBytes()+4096)
		if copyElemsKernel(n, make([]byte, n.NBytes()+4096), src, &scratchPool{}) == nil {
			t.Errorf("%s: the element copy refuses a decoder's shape", n.Op)
		}
	}
	for _, c := range []struct {
		name string
		n    *runtime.Tensor
		srcs []*runtime.Tensor
	}{
		{"swiglu", sw, []*runtime.Tensor{sw.Src[0], sw.Src[1]}},
		{"flash_attn_ext decode", fa, []*runtime.Tensor{q, k, v, nil, nil}},
	} {
		var src [][]byte
		for _, s := range c.srcs {
			if s == nil {
				src = append(src, nil)
				continue
			}
			src = append(src, bytesOf(s)[0])
		}
		if fastKernelExtra(c.n, bytesOf(c.n)[0], src, &scratchPool{}, 1) == nil {
			t.Errorf("%s: the fast kernel refuses the tested shape", c.name)
		}
		if c.n == fa && !attnDirect(k, v, src[2]) {
			t.Errorf("%s: f16 K/V do not take the direct decode path", c.name)
		}
	}
}
