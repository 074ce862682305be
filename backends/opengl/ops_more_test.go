//go:build opengl

package opengl

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/gogml/gogml/runtime"
)

// permFill fills the integer input named "ids" with a permutation of
// [0, n) per column (i32 or i64), so that every row id is distinct.
func permFill(n int) func(*runtime.Tensor, int, *rand.Rand) []byte {
	return func(tt *runtime.Tensor, i int, r *rand.Rand) []byte {
		if tt.Name != "ids" {
			return nil
		}
		es := int(tt.Type.Size())
		out := make([]byte, int(tt.Nelements())*es)
		for col := 0; col < int(tt.Nelements()/tt.Ne[0]); col++ {
			p := r.Perm(n)
			for j := 0; j < int(tt.Ne[0]); j++ {
				o := (col*int(tt.Ne[0]) + j) * es
				if es == 8 {
					binary.LittleEndian.PutUint64(out[o:], uint64(p[j]))
				} else {
					binary.LittleEndian.PutUint32(out[o:], uint32(p[j]))
				}
			}
		}
		return out
	}
}

func TestOpsMore(t *testing.T) {
	b := open(t, Config{Upload: UploadSubData})
	f32, f16, bf16 := runtime.TypeF32, runtime.TypeF16, runtime.TypeBF16
	var cases []opCase
	for _, tc := range []struct {
		dst, src, idx runtime.Type
		idsNe         []int64
	}{
		{f32, f32, runtime.TypeI64, []int64{3, 2, 1}},
		{f16, f32, runtime.TypeI64, []int64{3, 1, 1}},
		{bf16, f16, runtime.TypeI32, []int64{3, 2, 3}},
		{f32, f16, runtime.TypeI32, []int64{3, 1, 3}},
	} {
		cases = append(cases, opCase{
			name: fmt.Sprintf("set_rows_%s_%s_%s_%v", tc.src, tc.dst, tc.idx, tc.idsNe),
			build: func(c *runtime.Context) *runtime.Tensor {
				return c.SetRows(in(c, tc.dst, "a", 7, 5, 2, 3), in(c, tc.src, "b", 7, 3, 2, 3), in(c, tc.idx, "ids", tc.idsNe...))
			},
			fill: permFill(5), tol: 1e-5,
		})
	}
	for g := runtime.GluOp(0); g < runtime.GluCount; g++ {
		for _, typ := range []runtime.Type{f32, f16} {
			tol := 1e-7
			if typ == f16 {
				tol = 1e-5
			}
			cases = append(cases,
				opCase{name: fmt.Sprintf("glu_%s_%s", g, typ), build: func(c *runtime.Context) *runtime.Tensor {
					return c.Glu(in(c, typ, "a", 20, 3, 2), g, false)
				}, tol: tol},
				opCase{name: fmt.Sprintf("glu_%s_%s_swapped", g, typ), build: func(c *runtime.Context) *runtime.Tensor {
					return c.Glu(in(c, typ, "a", 20, 3, 2), g, true)
				}, tol: tol},
				opCase{name: fmt.Sprintf("glu_%s_%s_split", g, typ), build: func(c *runtime.Context) *runtime.Tensor {
					return c.GluSplit(in(c, typ, "a", 10, 3, 2), in(c, typ, "b", 10, 3, 2), g)
				}, tol: tol},
			)
		}
	}
	cases = append(cases,
		opCase{name: "soft_max_sinks", build: func(c *runtime.Context) *runtime.Tensor {
			return c.SoftMaxAddSinks(c.SoftMaxExt(in(c, f32, "x", 40, 5, 6), in(c, f16, "mask", 40, 5), 0.5, 8), in(c, f32, "sinks", 6))
		}},
		opCase{name: "soft_max_sinks_nomask", build: func(c *runtime.Context) *runtime.Tensor {
			return c.SoftMaxAddSinks(c.SoftMaxExt(in(c, f32, "x", 40, 5, 6), nil, 0.5, 0), in(c, f32, "sinks", 6))
		}},
		opCase{name: "scale_bias", build: func(c *runtime.Context) *runtime.Tensor {
			return c.ScaleBias(in(c, f32, "a", 33, 4), 2, 1)
		}},
		opCase{name: "sin", build: func(c *runtime.Context) *runtime.Tensor { return c.Sin(in(c, f32, "a", 33, 4)) }},
		opCase{name: "cos", build: func(c *runtime.Context) *runtime.Tensor { return c.Cos(in(c, f32, "a", 33, 4)) }},
		opCase{name: "leaky_relu", build: func(c *runtime.Context) *runtime.Tensor {
			return c.LeakyRelu(in(c, f32, "a", 33, 4), 0.1, false)
		}},
	)
	ropeFill := func(tt *runtime.Tensor, i int, r *rand.Rand) []byte {
		switch tt.Name {
		case "pos":
			f := make([]float32, tt.Nelements())
			for j := range f {
				f[j] = float32(r.IntN(100))
			}
			return encode(runtime.TypeI32, f)
		case "ff":
			return randomBytes(tt, r, 1, 4)
		}
		return nil
	}
	for _, mode := range []int32{runtime.RopeMrope, runtime.RopeImrope, runtime.RopeVision} {
		for _, ff := range []bool{false, true} {
			cases = append(cases, opCase{
				name: fmt.Sprintf("rope_multi_mode%d_ff%v", mode, ff),
				build: func(c *runtime.Context) *runtime.Tensor {
					a := in(c, f32, "a", 32, 3, 4)
					pos := in(c, runtime.TypeI32, "pos", 16)
					nd := 24
					if mode == runtime.RopeVision {
						nd = 16
					}
					var fft *runtime.Tensor
					if ff {
						fft = in(c, f32, "ff", 16)
					}
					p := runtime.DefaultRopeParams()
					p.NCtxOrig, p.FreqScale, p.ExtFactor = 512, 0.5, 0.5
					return c.RopeMulti(a, pos, fft, nd, [runtime.MropeSections]int32{4, 3, 3, 2}, mode, p)
				},
				fill: ropeFill, tol: 1e-6,
			})
		}
	}
	for _, mode := range []int32{runtime.RopeNormal, runtime.RopeNeoX} {
		cases = append(cases, opCase{
			name: fmt.Sprintf("rope_offset_mode%d", mode),
			build: func(c *runtime.Context) *runtime.Tensor {
				p := runtime.DefaultRopeParams()
				r := c.RopeExt(in(c, f32, "a", 32, 3, 4), in(c, runtime.TypeI32, "pos", 4), nil, 12, mode, p)
				return c.RopeSetOffset(r, 8)
			},
			fill: ropeFill, tol: 1e-6,
		})
	}
	checkCases(t, b, cases)
}
