//go:build opengl

package opengl

import (
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/gogml/gogml/gallocr"
	"github.com/gogml/gogml/runtime"
)

// TestRangeBinding lowers the shader storage block to 64 KiB so that the
// graphs' buffers exceed it: each dispatch must bind ranges around its
// tensors (a view at an offset past the block, a mask at binding 5), as
// it does on llvmpipe for ggml's ROPE views of 200 MB sources.
func TestRangeBinding(t *testing.T) {
	b := open(t, Config{Upload: UploadSubData})
	b.bt.block = 64 << 10
	f32, f16 := runtime.TypeF32, runtime.TypeF16
	ropeFill := func(tt *runtime.Tensor, i int, r *rand.Rand) []byte {
		if tt.Name != "pos" {
			return nil
		}
		f := make([]float32, tt.Nelements())
		for j := range f {
			f[j] = float32(r.IntN(100))
		}
		return encode(runtime.TypeI32, f)
	}
	cases := []opCase{
		{name: "rope_view", build: func(c *runtime.Context) *runtime.Tensor {
			// ggml's v=1 rope source: a [16,16,8] view of a [32,64,24]
			// tensor (192 KiB), starting past the first block.
			a := in(c, f32, "a", 32, 64, 24)
			v := c.View3D(a, 16, 16, 8, a.Nb[1], a.Nb[2], 10*a.Nb[2]+4*a.Nb[1])
			return c.RopeExt(v, in(c, runtime.TypeI32, "pos", 8), nil, 16, runtime.RopeNeoX, runtime.DefaultRopeParams())
		}, fill: ropeFill, tol: 1e-6},
		{name: "add", build: func(c *runtime.Context) *runtime.Tensor {
			return c.Add(in(c, f32, "a", 8192), in(c, f32, "b", 8192))
		}},
		{name: "flash_attn_mask", build: func(c *runtime.Context) *runtime.Tensor {
			return c.FlashAttnExt(in(c, f32, "q", 64, 4, 8), in(c, f16, "k", 64, 128, 2),
				in(c, f16, "v", 64, 128, 2), in(c, f16, "mask", 128, 4), 0.125, 0, 0)
		}, fill: func(tt *runtime.Tensor, i int, r *rand.Rand) []byte {
			if tt.Name != "mask" {
				return nil
			}
			f := make([]float32, tt.Nelements())
			for j := range f {
				f[j] = -2 * r.Float32()
			}
			return encode(f16, f)
		}, tol: 1e-6},
	}
	checkCases(t, b, cases)

	// A tensor larger than one block is refused by SupportsOp, and Compute
	// says why instead of binding a short range.
	c := runtime.NewContext()
	out := c.Add(in(c, f32, "a", 20000), in(c, f32, "b", 20000))
	if b.SupportsOp(out) {
		t.Fatalf("SupportsOp(%s) with 80 KB tensors and a 64 KiB block = true", out)
	}
	g := runtime.NewGraph()
	if err := g.BuildForwardExpand(out); err != nil {
		t.Fatal(err)
	}
	buf, err := gallocr.AllocCtxTensors(c, b.DefaultBufferType())
	if err != nil {
		t.Fatal(err)
	}
	defer buf.Free()
	if err := b.Compute(g); !errors.Is(err, runtime.ErrUnsupported) {
		t.Fatalf("Compute with an 80 KB tensor and a 64 KiB block: %v, want ErrUnsupported", err)
	}
}
