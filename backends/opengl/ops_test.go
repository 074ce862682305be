//go:build opengl

package opengl

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gogml/gogml/backends/cpu"
	"github.com/gogml/gogml/gallocr"
	cpukernels "github.com/gogml/gogml/internal/kernels/cpukernels"
	"github.com/gogml/gogml/runtime"
)

// opCase builds a graph whose output is compared between the CPU backend
// and the GL backend.
type opCase struct {
	name  string
	build func(c *runtime.Context) *runtime.Tensor
	// fill gives the bytes of input i (nil: random data by type).
	fill func(t *runtime.Tensor, i int, r *rand.Rand) []byte
	tol  float64 // NMSE bound; 0 means 1e-7
}

// randomBytes fills t with values in [lo, hi) of its type.
func randomBytes(t *runtime.Tensor, r *rand.Rand, lo, hi float32) []byte {
	n := t.Nelements()
	f := make([]float32, n)
	for i := range f {
		f[i] = lo + (hi-lo)*r.Float32()
	}
	return encode(t.Type, f)
}

// encode stores f (dense, row-major) in type typ.
func encode(typ runtime.Type, f []float32) []byte {
	out := make([]byte, typ.RowSize(int64(len(f))))
	if typ == runtime.TypeI32 {
		for i, v := range f {
			binary.LittleEndian.PutUint32(out[4*i:], uint32(int32(v)))
		}
		return out
	}
	if err := cpukernels.FromFloat(typ, f, out); err != nil {
		panic("encode: " + err.Error())
	}
	return out
}

// decode reads t's bytes (dense) as float64 values.
func decode(typ runtime.Type, b []byte) []float64 {
	if typ == runtime.TypeI32 {
		out := make([]float64, len(b)/4)
		for i := range out {
			out[i] = float64(int32(binary.LittleEndian.Uint32(b[4*i:])))
		}
		return out
	}
	if !cpukernels.IsFloat(typ) {
		panic("decode: type " + typ.String())
	}
	f := make([]float32, uint64(len(b))/typ.Size())
	if err := cpukernels.ToFloat(typ, b, f); err != nil {
		panic("decode: " + err.Error())
	}
	out := make([]float64, len(f))
	for i, v := range f {
		out[i] = float64(v)
	}
	return out
}

// nmse is the normalized mean squared error of got against want.
func nmse(want, got []float64) float64 {
	var num, den float64
	for i := range want {
		if math.IsNaN(want[i]) && math.IsNaN(got[i]) {
			continue
		}
		if math.IsInf(want[i], 0) && want[i] == got[i] {
			continue
		}
		d := want[i] - got[i]
		num += d * d
		den += want[i] * want[i]
	}
	if den == 0 {
		return num
	}
	return num / den
}

// runOn builds the case in a fresh context, allocates every tensor in bt,
// fills the inputs deterministically, computes on be and returns the
// output's bytes.
func runOn(t *testing.T, oc opCase, be runtime.Backend, bt runtime.BufferType) ([]byte, *runtime.Tensor) {
	t.Helper()
	c := runtime.NewContext()
	out := oc.build(c)
	if err := c.Err(); err != nil || out == nil {
		t.Fatalf("build: %v", err)
	}
	g := runtime.NewGraph()
	if err := g.BuildForwardExpand(out); err != nil {
		t.Fatal(err)
	}
	buf, err := gallocr.AllocCtxTensors(c, bt)
	if err != nil {
		t.Fatalf("alloc: %v", err)
	}
	t.Cleanup(func() { _ = buf.Free() })
	r := rand.New(rand.NewPCG(1, 2))
	for i, l := range g.Leafs() {
		var data []byte
		if oc.fill != nil {
			data = oc.fill(l, i, r)
		}
		if data == nil {
			data = randomBytes(l, r, -1, 1)
		}
		if err := runtime.SetTensorData(l, data, 0); err != nil {
			t.Fatalf("set %s: %v", l, err)
		}
	}
	for _, n := range g.Nodes() {
		if !be.SupportsOp(n) {
			t.Fatalf("%s does not support %s", be.Name(), n)
		}
	}
	if err := be.Compute(g); err != nil {
		t.Fatalf("%s compute: %v", be.Name(), err)
	}
	res := make([]byte, out.NBytes())
	if err := runtime.GetTensorData(out, res, 0); err != nil {
		t.Fatal(err)
	}
	return res, out
}

func checkCases(t *testing.T, gl *Backend, cases []opCase) {
	ref := cpu.NewBackend(cpu.BackendOptions{Threads: 1})
	for _, oc := range cases {
		t.Run(oc.name, func(t *testing.T) {
			want, wt := runOn(t, oc, ref, cpu.DefaultBufferType())
			got, _ := runOn(t, oc, gl, gl.DefaultBufferType())
			if !wt.IsContiguous() {
				t.Fatalf("output %s is not contiguous; test cases must end in a dense tensor", wt)
			}
			w, g := decode(wt.Type, want), decode(wt.Type, got)
			tol := oc.tol
			if tol == 0 {
				tol = 1e-7
			}
			if e := nmse(w, g); !(e <= tol) {
				n := min(len(w), 8)
				t.Fatalf("NMSE %.3g > %.3g\nwant %v\ngot  %v", e, tol, w[:n], g[:n])
			}
		})
	}
}

func in(c *runtime.Context, typ runtime.Type, name string, ne ...int64) *runtime.Tensor {
	x := c.NewTensor(typ, ne...)
	if x != nil {
		x.Name = name
	}
	return x
}

func TestOpsF32(t *testing.T) {
	// The conformance suite runs with the automatic upload mode (mapped on
	// llvmpipe); these cases use glBufferSubData.
	b := open(t, Config{Upload: UploadSubData})
	f32 := runtime.TypeF32
	positive := func(tt *runtime.Tensor, i int, r *rand.Rand) []byte { return randomBytes(tt, r, 0.1, 2) }
	var cases []opCase
	for _, op := range []struct {
		name string
		f    func(c *runtime.Context, a, b *runtime.Tensor) *runtime.Tensor
	}{
		{"add", (*runtime.Context).Add}, {"sub", (*runtime.Context).Sub},
		{"mul", (*runtime.Context).Mul}, {"div", (*runtime.Context).Div},
	} {
		for _, bs := range [][]int64{{7, 5, 3, 2}, {7, 1, 3, 1}, {1, 5, 1, 2}, {1, 1, 1, 1}} {
			cases = append(cases, opCase{
				name: fmt.Sprintf("%s/b%v", op.name, bs),
				build: func(c *runtime.Context) *runtime.Tensor {
					return op.f(c, in(c, f32, "a", 7, 5, 3, 2), in(c, f32, "b", bs...))
				},
				fill: func(tt *runtime.Tensor, i int, r *rand.Rand) []byte {
					if op.name == "div" && i == 1 {
						return randomBytes(tt, r, 0.5, 2)
					}
					return nil
				},
			})
		}
	}
	un := func(name string, f func(c *runtime.Context, a *runtime.Tensor) *runtime.Tensor, pos bool) opCase {
		oc := opCase{name: name, build: func(c *runtime.Context) *runtime.Tensor { return f(c, in(c, f32, "a", 33, 4, 3)) }}
		if pos {
			oc.fill = positive
		}
		return oc
	}
	cases = append(cases,
		un("sqr", (*runtime.Context).Sqr, false),
		un("sqrt", (*runtime.Context).Sqrt, true),
		un("log", (*runtime.Context).Log, true),
		un("scale", func(c *runtime.Context, a *runtime.Tensor) *runtime.Tensor { return c.Scale(a, 0.37) }, false),
		un("clamp", func(c *runtime.Context, a *runtime.Tensor) *runtime.Tensor { return c.Clamp(a, -0.3, 0.5) }, false),
		un("sum_rows", (*runtime.Context).SumRows, false),
		un("mean", (*runtime.Context).Mean, false),
		un("norm", func(c *runtime.Context, a *runtime.Tensor) *runtime.Tensor { return c.Norm(a, 1e-5) }, false),
		un("rms_norm", func(c *runtime.Context, a *runtime.Tensor) *runtime.Tensor { return c.RMSNorm(a, 1e-6) }, false),
		un("diag_mask_inf", func(c *runtime.Context, a *runtime.Tensor) *runtime.Tensor { return c.DiagMaskInf(a, 2) }, false),
		un("soft_max", (*runtime.Context).SoftMax, false),
		un("cont_transposed", func(c *runtime.Context, a *runtime.Tensor) *runtime.Tensor { return c.Cont(c.Transpose(a)) }, false),
		un("cont_permuted", func(c *runtime.Context, a *runtime.Tensor) *runtime.Tensor { return c.Cont(c.Permute(a, 2, 0, 1, 3)) }, false),
		un("dup", (*runtime.Context).Dup, false),
		un("scale_inplace", func(c *runtime.Context, a *runtime.Tensor) *runtime.Tensor {
			return c.Cont(c.ScaleInplace(c.Sqr(a), 2))
		}, false),
	)
	for u := runtime.UnaryOp(0); u < runtime.UnaryCount; u++ {
		tt := &runtime.Tensor{Op: runtime.OpUnary, Type: f32}
		tt.OpParams[0] = int32(u)
		tt.Src[0] = &runtime.Tensor{Type: f32}
		tt.Ne, tt.Nb = [4]int64{4, 1, 1, 1}, runtime.ContiguousStrides(f32, [4]int64{4, 1, 1, 1})
		tt.Src[0].Ne, tt.Src[0].Nb = tt.Ne, tt.Nb
		if cpukernels.Supports(tt) != nil {
			continue
		}
		if _, why := plan(tt); why != nil {
			continue // a function the GL kernel does not have
		}
		cases = append(cases, un("unary_"+u.String(), func(c *runtime.Context, a *runtime.Tensor) *runtime.Tensor {
			return c.Scale(c.Unary(c.Scale(a, 4), u), 1)
		}, false))
	}
	cases = append(cases,
		opCase{name: "add1", build: func(c *runtime.Context) *runtime.Tensor {
			return c.Add1(in(c, f32, "a", 9, 4), in(c, f32, "b", 1))
		}},
		opCase{name: "repeat", build: func(c *runtime.Context) *runtime.Tensor {
			return c.Repeat(in(c, f32, "a", 3, 1, 2), in(c, f32, "shape", 6, 4, 2, 3))
		}},
		opCase{name: "concat", build: func(c *runtime.Context) *runtime.Tensor {
			return c.Concat(in(c, f32, "a", 4, 3, 2), in(c, f32, "b", 4, 5, 2), 1)
		}},
		opCase{name: "concat0", build: func(c *runtime.Context) *runtime.Tensor {
			return c.Concat(in(c, f32, "a", 4, 3, 2), in(c, f32, "b", 1, 3, 2), 0)
		}},
		opCase{name: "cpy_reshape", build: func(c *runtime.Context) *runtime.Tensor {
			return c.Cpy(c.Transpose(in(c, f32, "a", 6, 4)), in(c, f32, "dst", 3, 8))
		}},
		opCase{name: "silu_back", build: func(c *runtime.Context) *runtime.Tensor {
			return c.SiluBack(in(c, f32, "dy", 17, 3), in(c, f32, "x", 17, 3))
		}},
		opCase{name: "rms_norm_back", build: func(c *runtime.Context) *runtime.Tensor {
			return c.RMSNormBack(in(c, f32, "dz", 70, 3), in(c, f32, "x", 70, 3), 1e-6)
		}},
		opCase{name: "soft_max_back", build: func(c *runtime.Context) *runtime.Tensor {
			return c.SoftMaxBack(in(c, f32, "dy", 70, 3), c.SoftMax(in(c, f32, "x", 70, 3)))
		}},
		opCase{name: "soft_max_ext_mask", build: func(c *runtime.Context) *runtime.Tensor {
			return c.SoftMaxExt(in(c, f32, "x", 130, 5, 4), in(c, f32, "mask", 130, 7), 0.125, 0)
		}},
		opCase{name: "soft_max_ext_alibi", build: func(c *runtime.Context) *runtime.Tensor {
			return c.SoftMaxExt(in(c, f32, "x", 40, 5, 6), in(c, f32, "mask", 40, 5), 0.5, 8)
		}},
		opCase{name: "mul_mat", build: func(c *runtime.Context) *runtime.Tensor {
			return c.MulMat(in(c, f32, "a", 100, 70, 2), in(c, f32, "b", 100, 9, 4))
		}},
		opCase{name: "mul_mat_transposed_b", build: func(c *runtime.Context) *runtime.Tensor {
			return c.MulMat(in(c, f32, "a", 30, 7), c.Transpose(in(c, f32, "b", 5, 30)))
		}},
		opCase{name: "get_rows", build: func(c *runtime.Context) *runtime.Tensor {
			return c.GetRows(in(c, f32, "a", 10, 8, 2), in(c, runtime.TypeI32, "idx", 5, 2))
		}, fill: rowsFill(8)},
	)
	for _, mode := range []int32{runtime.RopeNormal, runtime.RopeNeoX} {
		for _, back := range []bool{false, true} {
			cases = append(cases, opCase{
				name: fmt.Sprintf("rope_mode%d_back%v", mode, back),
				build: func(c *runtime.Context) *runtime.Tensor {
					a := in(c, f32, "a", 16, 3, 5)
					pos := in(c, runtime.TypeI32, "pos", 5)
					p := runtime.DefaultRopeParams()
					if back {
						return c.RopeBack(a, pos, nil, 12, mode, p)
					}
					return c.RopeExt(a, pos, nil, 12, mode, p)
				},
				fill: func(tt *runtime.Tensor, i int, r *rand.Rand) []byte {
					if tt.Type == runtime.TypeI32 {
						return encode(runtime.TypeI32, []float32{0, 1, 7, 30, 100})
					}
					return nil
				},
			})
		}
	}
	cases = append(cases, opCase{
		name: "rope_yarn_freq_factors",
		build: func(c *runtime.Context) *runtime.Tensor {
			a := in(c, f32, "a", 16, 3, 4)
			pos := in(c, runtime.TypeI32, "pos", 4)
			ff := in(c, f32, "ff", 4)
			p := runtime.DefaultRopeParams()
			p.NCtxOrig, p.FreqScale, p.ExtFactor = 4096, 0.25, 1
			return c.RopeExt(a, pos, ff, 8, runtime.RopeNeoX, p)
		},
		fill: func(tt *runtime.Tensor, i int, r *rand.Rand) []byte {
			switch tt.Name {
			case "pos":
				return encode(runtime.TypeI32, []float32{3, 9, 17, 60})
			case "ff":
				return randomBytes(tt, r, 1, 4)
			}
			return nil
		},
	})
	checkCases(t, b, cases)
}

// rowsFill fills i32 inputs with row indices below n.
func rowsFill(n int) func(*runtime.Tensor, int, *rand.Rand) []byte {
	return func(tt *runtime.Tensor, i int, r *rand.Rand) []byte {
		if tt.Type != runtime.TypeI32 {
			return nil
		}
		f := make([]float32, tt.Nelements())
		for j := range f {
			f[j] = float32(r.IntN(n))
		}
		return encode(runtime.TypeI32, f)
	}
}

func TestOpsTypes(t *testing.T) {
	b := open(t, Config{Upload: UploadSubData})
	f32, f16 := runtime.TypeF32, runtime.TypeF16
	var cases []opCase
	for _, typ := range []runtime.Type{runtime.TypeF16, runtime.TypeBF16, runtime.TypeQ4_0, runtime.TypeQ8_0} {
		// The CPU backend, like ggml's, rounds activations to q8_0 before a
		// quantized product (and to bf16 before a bf16 one); this backend
		// multiplies them in f32. Both are within the suite's quantized
		// bound of the reference (bf16 activations: about 2e-6).
		tol := 1e-6
		switch {
		case typ.IsQuantized():
			tol = 5e-4
		case typ == runtime.TypeBF16:
			tol = 1e-5
		}
		cases = append(cases,
			opCase{name: "mul_mat_" + typ.String(), build: func(c *runtime.Context) *runtime.Tensor {
				return c.MulMat(in(c, typ, "a", 96, 33, 2), in(c, f32, "b", 96, 5, 2))
			}, tol: tol},
			opCase{name: "get_rows_" + typ.String(), build: func(c *runtime.Context) *runtime.Tensor {
				return c.GetRows(in(c, typ, "a", 64, 9), in(c, runtime.TypeI32, "idx", 6))
			}, fill: rowsFill(9)},
		)
	}
	cases = append(cases,
		opCase{name: "cpy_f32_f16", build: func(c *runtime.Context) *runtime.Tensor {
			return c.Cpy(in(c, f32, "a", 9, 5), in(c, f16, "dst", 9, 5))
		}, tol: 1e-6},
		opCase{name: "cpy_f16_f32_transposed", build: func(c *runtime.Context) *runtime.Tensor {
			return c.Cpy(c.Transpose(in(c, f16, "a", 9, 5)), in(c, f32, "dst", 5, 9))
		}},
		opCase{name: "add_f16", build: func(c *runtime.Context) *runtime.Tensor {
			return c.Add(in(c, f16, "a", 9, 5), in(c, f32, "b", 9, 1))
		}, tol: 1e-6},
		opCase{name: "soft_max_f16_mask", build: func(c *runtime.Context) *runtime.Tensor {
			return c.SoftMaxExt(in(c, f32, "x", 33, 4), in(c, f16, "mask", 33, 4), 1, 0)
		}},
		opCase{name: "rope_f16", build: func(c *runtime.Context) *runtime.Tensor {
			return c.RopeExt(in(c, f16, "a", 8, 2, 3), in(c, runtime.TypeI32, "pos", 3), nil, 8, runtime.RopeNormal, runtime.DefaultRopeParams())
		}, fill: rowsFill(50), tol: 1e-6},
		opCase{name: "get_rows_i32", build: func(c *runtime.Context) *runtime.Tensor {
			return c.GetRows(in(c, runtime.TypeI32, "a", 3, 9), in(c, runtime.TypeI32, "idx", 6))
		}, fill: func(tt *runtime.Tensor, i int, r *rand.Rand) []byte {
			f := make([]float32, tt.Nelements())
			for j := range f {
				f[j] = float32(r.IntN(9))
			}
			return encode(runtime.TypeI32, f)
		}},
	)
	checkCases(t, b, cases)
}
