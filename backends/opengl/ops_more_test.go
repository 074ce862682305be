//go:build opengl

package opengl

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gogml/gogml/backends/cpu"
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
	for _, fa := range []struct {
		kv              runtime.Type
		mask            bool
		maxBias, cap    float32
		nkv, nh, nhk, d int64
	}{
		{f16, true, 0, 0, 40, 4, 2, 64},
		{f16, true, 8, 0, 70, 4, 4, 80},
		{f32, false, 0, 30, 33, 2, 1, 32},
		{f16, true, 0, 20, 200, 8, 2, 128},
		{runtime.TypeBF16, true, 0, 0, 50, 4, 2, 64},
		{runtime.TypeQ8_0, true, 0, 0, 70, 4, 2, 64},
		{runtime.TypeQ4_0, true, 8, 0, 40, 4, 4, 32},
		{runtime.TypeQ4_1, false, 0, 10, 33, 2, 1, 64},
		{runtime.TypeQ5_0, true, 0, 0, 65, 4, 2, 96},
		{runtime.TypeQ5_1, true, 0, 0, 40, 4, 2, 64},
		{runtime.TypeIQ4_NL, true, 0, 0, 40, 4, 2, 64},
		// Heads past faUnrolled: flash_attn_wide.comp.
		{f32, true, 8, 0, 50, 4, 2, 160},
		{runtime.TypeQ5_1, true, 0, 20, 45, 4, 2, 192},
		{runtime.TypeIQ4_NL, false, 0, 0, 30, 2, 1, 256},
		// More keys than one chunk of scores in shared memory (4096).
		{f16, true, 0, 0, 5003, 2, 1, 128},
		{runtime.TypeQ8_0, false, 0, 0, 8200, 2, 1, 64},
	} {
		cases = append(cases, opCase{
			name: fmt.Sprintf("flash_attn_%s_mask%v_bias%v_cap%v_d%d", fa.kv, fa.mask, fa.maxBias, fa.cap, fa.d),
			build: func(c *runtime.Context) *runtime.Tensor {
				var m *runtime.Tensor
				if fa.mask {
					m = in(c, f16, "mask", fa.nkv, 5)
				}
				return c.FlashAttnExt(in(c, f32, "q", fa.d, 3, fa.nh), in(c, fa.kv, "k", fa.d, fa.nkv, fa.nhk),
					in(c, fa.kv, "v", fa.d, fa.nkv, fa.nhk), m, 0.125, fa.maxBias, fa.cap)
			},
			fill: func(tt *runtime.Tensor, i int, r *rand.Rand) []byte {
				if tt.Name != "mask" {
					return nil
				}
				f := make([]float32, tt.Nelements())
				for j := range f {
					f[j] = -2 * r.Float32()
					if r.IntN(5) == 0 {
						f[j] = float32(math.Inf(-1))
					}
				}
				return encode(f16, f)
			},
			tol: 1e-6,
		})
	}
	// Sinks: one f32 score per head joins each soft-max (with a mask, a
	// fully masked row, and without a mask).
	for _, withMask := range []bool{true, false} {
		cases = append(cases, opCase{
			name: fmt.Sprintf("flash_attn_sinks_mask%v", withMask),
			build: func(c *runtime.Context) *runtime.Tensor {
				var m *runtime.Tensor
				if withMask {
					m = in(c, f16, "mask", 48, 3)
				}
				r := c.FlashAttnExt(in(c, f32, "q", 64, 3, 4), in(c, runtime.TypeQ8_0, "k", 64, 48, 2),
					in(c, runtime.TypeQ8_0, "v", 64, 48, 2), m, 0.125, 0, 0)
				return c.FlashAttnExtAddSinks(r, in(c, f32, "sinks", 4))
			},
			fill: func(tt *runtime.Tensor, i int, r *rand.Rand) []byte {
				switch tt.Name {
				case "mask":
					f := make([]float32, tt.Nelements())
					for j := range f {
						f[j] = -2 * r.Float32()
						if j < 48 || r.IntN(5) == 0 {
							f[j] = float32(math.Inf(-1)) // row 0 fully masked
						}
					}
					return encode(f16, f)
				case "sinks":
					return randomBytes(tt, r, -2, 4)
				}
				return nil
			},
			tol: 1e-6,
		})
	}
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

func TestOpsMisc(t *testing.T) {
	b := open(t, Config{Upload: UploadSubData})
	f32, f16 := runtime.TypeF32, runtime.TypeF16
	ties := func(tt *runtime.Tensor, i int, r *rand.Rand) []byte {
		f := make([]float32, tt.Nelements())
		for j := range f {
			f[j] = float32(r.IntN(9))
		}
		return encode(f32, f)
	}
	cases := []opCase{
		{name: "pad", build: func(c *runtime.Context) *runtime.Tensor {
			return c.PadExt(in(c, f32, "a", 5, 4, 3, 2), 1, 2, 0, 1, 2, 0, 1, 1)
		}},
		{name: "pad_circular", build: func(c *runtime.Context) *runtime.Tensor {
			return c.PadExtCircular(in(c, f32, "a", 5, 4, 3, 2), 1, 2, 0, 1, 2, 0, 1, 1)
		}},
		{name: "acc", build: func(c *runtime.Context) *runtime.Tensor {
			a := in(c, f32, "a", 16, 7, 2, 3)
			return c.Acc(a, in(c, f32, "b", 8, 5, 2, 3), a.Nb[1], a.Nb[2], a.Nb[3], 12)
		}},
		{name: "set", build: func(c *runtime.Context) *runtime.Tensor {
			a := in(c, f32, "a", 16, 7, 2, 3)
			return c.Set(a, in(c, f32, "b", 8, 5, 2, 3), a.Nb[1], a.Nb[2], a.Nb[3], a.Nb[1])
		}},
		{name: "add_id", build: func(c *runtime.Context) *runtime.Tensor {
			return c.AddId(in(c, f32, "a", 16, 2, 3), in(c, f32, "b", 16, 4), in(c, runtime.TypeI32, "ids", 2, 3))
		}, fill: rowsFill(4)},
		{name: "im2col_1d", build: func(c *runtime.Context) *runtime.Tensor {
			return c.Im2col(in(c, f32, "k", 3, 4, 6), in(c, f32, "x", 20, 4, 2), 2, 0, 1, 0, 1, 0, false, f32)
		}},
		{name: "im2col_2d_f16", build: func(c *runtime.Context) *runtime.Tensor {
			return c.Im2col(in(c, f16, "k", 3, 2, 3, 4), in(c, f32, "x", 9, 7, 3, 2), 1, 2, 1, 1, 2, 1, true, f16)
		}, tol: 1e-6},
		{name: "group_norm", build: func(c *runtime.Context) *runtime.Tensor {
			return c.GroupNorm(in(c, f32, "a", 9, 8, 10, 2), 4, 1e-6)
		}},
		{name: "argsort_asc", build: func(c *runtime.Context) *runtime.Tensor { return c.Argsort(in(c, f32, "a", 37, 4, 2), 0) }, fill: ties},
		{name: "argsort_desc", build: func(c *runtime.Context) *runtime.Tensor { return c.Argsort(in(c, f32, "a", 37, 4, 2), 1) }, fill: ties},
		{name: "top_k", build: func(c *runtime.Context) *runtime.Tensor { return c.TopK(in(c, f32, "a", 37, 4, 2), 5) }, fill: ties},
		{name: "xielu", build: func(c *runtime.Context) *runtime.Tensor {
			return c.Xielu(c.Scale(in(c, f32, "a", 33, 4), 3), 0.8, 0.8, 0.5, -1e-6)
		}},
		{name: "cumsum", build: func(c *runtime.Context) *runtime.Tensor { return c.Cumsum(in(c, f32, "a", 100, 5, 3)) }},
		// Longer than llvmpipe's 65535 loop iterations per invocation.
		{name: "cumsum_long", build: func(c *runtime.Context) *runtime.Tensor { return c.Cumsum(in(c, f32, "a", 100000)) }},
		{name: "repeat_back", build: func(c *runtime.Context) *runtime.Tensor {
			return c.RepeatBack(in(c, f32, "a", 8, 6, 4, 2), in(c, f32, "b", 4, 3, 2, 1))
		}},
		{name: "fill", build: func(c *runtime.Context) *runtime.Tensor { return c.Fill(in(c, f32, "a", 7, 3), 2.5) }},
		{name: "arange", build: func(c *runtime.Context) *runtime.Tensor { return c.Arange(1, 30, 0.7) }},
		{name: "tri", build: func(c *runtime.Context) *runtime.Tensor {
			return c.Add(c.Add(c.Tri(in(c, f32, "a", 6, 6, 2), 0), c.Tri(in(c, f32, "b", 6, 6, 2), 1)),
				c.Add(c.Tri(in(c, f32, "c", 6, 6, 2), 2), c.Tri(in(c, f32, "d", 6, 6, 2), 3)))
		}},
		{name: "roll", build: func(c *runtime.Context) *runtime.Tensor { return c.Roll(in(c, f32, "a", 7, 5, 3, 2), 3, -2, 1, -1) }},
		{name: "pad_reflect_1d", build: func(c *runtime.Context) *runtime.Tensor {
			return c.PadReflect1D(in(c, f32, "a", 9, 4, 2), 3, 5)
		}},
		{name: "l2_norm", build: func(c *runtime.Context) *runtime.Tensor {
			return c.L2Norm(in(c, f32, "a", 70, 3, 2), 1e-12)
		}},
		{name: "argmax", build: func(c *runtime.Context) *runtime.Tensor {
			return c.Argmax(in(c, f32, "a", 300, 7))
		}},
		{name: "argmax_ties", build: func(c *runtime.Context) *runtime.Tensor {
			return c.Argmax(in(c, f32, "a", 130, 3))
		}, fill: func(tt *runtime.Tensor, i int, r *rand.Rand) []byte {
			f := make([]float32, tt.Nelements())
			for j := range f {
				f[j] = float32(r.IntN(3))
			}
			return encode(f32, f)
		}},
	}
	checkCases(t, b, cases)
}

// TestOpsBytes compares byte for byte the moves of types without a float
// reading (i8, i16, i64, quantized blocks) with the CPU backend's.
func TestOpsBytes(t *testing.T) {
	gl := open(t, Config{Upload: UploadSubData})
	ref := cpu.NewBackend(cpu.BackendOptions{Threads: 1})
	anyBytes := func(tt *runtime.Tensor, i int, r *rand.Rand) []byte {
		out := make([]byte, tt.NBytes())
		for j := range out {
			out[j] = byte(r.IntN(256))
		}
		if tt.Type.IsQuantized() { // keep the f16 scales finite
			for j := 0; j+1 < len(out); j += int(tt.Type.Size()) {
				out[j+1] &= 0x3b
			}
		}
		return out
	}
	var cases []opCase
	for _, typ := range []runtime.Type{runtime.TypeI8, runtime.TypeI16, runtime.TypeI64, runtime.TypeQ4_1, runtime.TypeQ8_0} {
		for dim := 0; dim < 4; dim++ {
			cases = append(cases, opCase{name: fmt.Sprintf("concat_%s_dim%d", typ, dim), build: func(c *runtime.Context) *runtime.Tensor {
				ne := []int64{64, 3, 2, 2}
				ne2 := append([]int64(nil), ne...)
				ne2[dim] = map[bool]int64{true: 32, false: 1}[dim == 0]
				return c.Concat(in(c, typ, "a", ne...), in(c, typ, "b", ne2...), dim)
			}, fill: anyBytes})
		}
		if typ.BlockSize() == 1 {
			cases = append(cases,
				opCase{name: "repeat_" + typ.String(), build: func(c *runtime.Context) *runtime.Tensor {
					return c.Repeat(in(c, typ, "a", 3, 1, 2), in(c, typ, "shape", 6, 4, 2, 3))
				}, fill: anyBytes},
				opCase{name: "cont_transposed_" + typ.String(), build: func(c *runtime.Context) *runtime.Tensor {
					return c.Cont(c.Transpose(in(c, typ, "a", 5, 7, 2)))
				}, fill: anyBytes},
			)
		}
	}
	// SET_ROWS into quantized rows: the blocks must equal the CPU's.
	for _, q := range []runtime.Type{runtime.TypeQ4_0, runtime.TypeQ4_1, runtime.TypeQ5_0, runtime.TypeQ5_1, runtime.TypeQ8_0} {
		for _, src := range []runtime.Type{runtime.TypeF32, runtime.TypeF16} {
			idx := map[runtime.Type]runtime.Type{runtime.TypeF32: runtime.TypeI64, runtime.TypeF16: runtime.TypeI32}[src]
			cases = append(cases, opCase{
				name: fmt.Sprintf("set_rows_%s_%s", src, q),
				build: func(c *runtime.Context) *runtime.Tensor {
					return c.SetRows(in(c, q, "a", 96, 5, 2, 3), in(c, src, "b", 96, 3, 2, 3), in(c, idx, "ids", 3, 2, 1))
				},
				fill: func(tt *runtime.Tensor, i int, r *rand.Rand) []byte {
					switch tt.Name {
					case "a":
						return make([]byte, tt.NBytes()) // zero blocks
					case "b":
						return randomBytes(tt, r, -1, 1)
					}
					return permFill(5)(tt, i, r)
				},
			})
		}
	}
	for _, oc := range cases {
		t.Run(oc.name, func(t *testing.T) {
			want, _ := runOn(t, oc, ref, cpu.DefaultBufferType())
			got, _ := runOn(t, oc, gl, gl.DefaultBufferType())
			if !bytes.Equal(want, got) {
				t.Fatalf("bytes differ\nwant %x\ngot  %x", want[:min(len(want), 32)], got[:min(len(got), 32)])
			}
		})
	}
}
