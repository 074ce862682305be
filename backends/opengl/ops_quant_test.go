//go:build opengl

package opengl

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/gogml/gogml/backends/cpu"
	"github.com/gogml/gogml/runtime"
)

// dequantTypes are the block types of dequant.glsl.
var dequantTypes = []runtime.Type{
	runtime.TypeQ4_1, runtime.TypeQ5_0, runtime.TypeQ5_1,
	runtime.TypeQ2_K, runtime.TypeQ3_K, runtime.TypeQ4_K, runtime.TypeQ5_K, runtime.TypeQ6_K,
}

// TestOpsQuantTypes checks MUL_MAT, GET_ROWS and CPY with the block types
// beyond q4_0/q8_0 against the CPU backend.
func TestOpsQuantTypes(t *testing.T) {
	b := open(t, Config{Upload: UploadSubData})
	f32 := runtime.TypeF32
	var cases []opCase
	for _, typ := range dequantTypes {
		k := 2 * typ.BlockSize() // two blocks per row
		cases = append(cases,
			// The CPU backend quantizes activations (q8_0 / q8_K) first,
			// this one multiplies them in f32: test-backend-ops' bound.
			opCase{name: "mul_mat_" + typ.String(), build: func(c *runtime.Context) *runtime.Tensor {
				return c.MulMat(in(c, typ, "a", k, 7, 2), in(c, f32, "b", k, 5, 2))
			}, tol: 5e-4},
			opCase{name: "mul_mat_vec_" + typ.String(), build: func(c *runtime.Context) *runtime.Tensor {
				return c.MulMat(in(c, typ, "a", k, 9), in(c, f32, "b", k, 1))
			}, tol: 5e-4},
			opCase{name: "get_rows_" + typ.String(), build: func(c *runtime.Context) *runtime.Tensor {
				return c.GetRows(in(c, typ, "a", k, 9), in(c, runtime.TypeI32, "idx", 6))
			}, fill: rowsFill(9)},
			opCase{name: "cpy_" + typ.String() + "_f32", build: func(c *runtime.Context) *runtime.Tensor {
				return c.Cpy(in(c, typ, "a", k, 3, 2), in(c, f32, "dst", k, 3, 2))
			}},
			opCase{name: "cpy_" + typ.String() + "_same_permuted", build: func(c *runtime.Context) *runtime.Tensor {
				x := c.Cpy(c.Permute(in(c, typ, "a", k, 3, 2), 0, 2, 1, 3), in(c, typ, "dst", k, 2, 3))
				return c.Cpy(x, in(c, f32, "out", k, 2, 3))
			}},
		)
	}
	for _, typ := range append([]runtime.Type{runtime.TypeQ4_0, runtime.TypeQ8_0}, dequantTypes...) {
		k := 2 * typ.BlockSize()
		for _, src := range []runtime.Type{f32, runtime.TypeF16, runtime.TypeBF16} {
			cases = append(cases, opCase{name: "cpy_" + src.String() + "_" + typ.String(), build: func(c *runtime.Context) *runtime.Tensor {
				x := c.Cpy(in(c, src, "a", k, 3, 2), in(c, typ, "dst", k, 3, 2))
				return c.Cpy(x, in(c, f32, "out", k, 3, 2))
			}, fill: func(tt *runtime.Tensor, i int, r *rand.Rand) []byte {
				return randomBytes(tt, r, -150, 150)
			}, tol: 1e-9})
		}
	}
	cases = append(cases,
		opCase{name: "cpy_f32_i32_f32", build: func(c *runtime.Context) *runtime.Tensor {
			x := c.Cpy(c.Transpose(in(c, f32, "a", 9, 5)), in(c, runtime.TypeI32, "dst", 5, 9))
			return c.Cpy(x, in(c, f32, "out", 5, 9))
		}, fill: func(tt *runtime.Tensor, i int, r *rand.Rand) []byte {
			return randomBytes(tt, r, -150, 150)
		}},
	)
	checkCases(t, b, cases)
}

// TestSupportsQuantCopies pins what SupportsOp says for copies between
// block types and floats.
func TestSupportsQuantCopies(t *testing.T) {
	b := open(t, Config{})
	for _, tc := range []struct {
		src, dst runtime.Type
		want     bool
	}{
		{runtime.TypeF32, runtime.TypeQ4_K, true},
		{runtime.TypeBF16, runtime.TypeQ2_K, true},
		{runtime.TypeI32, runtime.TypeQ4_K, false},
		{runtime.TypeF32, runtime.TypeQ5_1, true},
		{runtime.TypeQ4_K, runtime.TypeF32, true},
		{runtime.TypeQ6_K, runtime.TypeQ6_K, true},
		{runtime.TypeQ4_K, runtime.TypeQ6_K, false},
	} {
		c := runtime.NewContext()
		n := c.Cpy(c.NewTensor(tc.src, 256, 2), c.NewTensor(tc.dst, 256, 2))
		if err := c.Err(); err != nil {
			t.Fatal(err)
		}
		if got := b.SupportsOp(n); got != tc.want {
			t.Errorf("cpy %s -> %s: SupportsOp %v, want %v", tc.src, tc.dst, got, tc.want)
		}
	}
}

// TestQuantizeBytes checks that a CPY from f32 into each block type the
// GL backend writes gives the CPU backend's bytes (ggml's quantizers),
// over values in [-150, 150) as test-backend-ops uses, and over a row of
// small values and zeros.
func TestQuantizeBytes(t *testing.T) {
	b := open(t, Config{Upload: UploadSubData})
	ref := cpu.NewBackend(cpu.BackendOptions{Threads: 1})
	for _, typ := range append([]runtime.Type{runtime.TypeQ4_0, runtime.TypeQ8_0}, dequantTypes...) {
		oc := opCase{build: func(c *runtime.Context) *runtime.Tensor {
			return c.Cpy(in(c, runtime.TypeF32, "a", 1024, 6), in(c, typ, "dst", 1024, 6))
		}, fill: func(tt *runtime.Tensor, i int, r *rand.Rand) []byte {
			if tt.Type != runtime.TypeF32 {
				return nil
			}
			f := make([]float32, tt.Nelements())
			for j := range f {
				switch {
				case j < 1024: // first row: tiny values, some zeros
					if j%7 != 0 {
						f[j] = 1e-3 * (r.Float32() - 0.5)
					}
				default:
					f[j] = -150 + 300*r.Float32()
				}
			}
			return encode(runtime.TypeF32, f)
		}}
		t.Run(typ.String(), func(t *testing.T) {
			want, _ := runOn(t, oc, ref, cpu.DefaultBufferType())
			got, _ := runOn(t, oc, b, b.DefaultBufferType())
			bs := int(typ.RowSize(typ.BlockSize()))
			bad := 0
			for i := 0; i < len(want); i += bs {
				if !bytes.Equal(want[i:i+bs], got[i:i+bs]) {
					if bad == 0 {
						t.Errorf("block %d differs:\nwant %x\ngot  %x", i/bs, want[i:i+bs], got[i:i+bs])
					}
					bad++
				}
			}
			if bad > 0 {
				t.Errorf("%d of %d blocks differ", bad, len(want)/bs)
			}
		})
	}
}
