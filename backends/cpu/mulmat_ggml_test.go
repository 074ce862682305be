package cpu

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"testing"

	"github.com/gogml/gogml/gallocr"
	cpukernels "github.com/gogml/gogml/internal/kernels/cpukernels"
	"github.com/gogml/gogml/runtime"
)

// TestMulMatMatchesGGML compares MUL_MAT with ggml 0.27.0's CPU backend on
// the same inputs. testdata/ggml-mulmat.bin holds the f32 results a
// throwaway C program got from Debian's libggml-base.so.0.27.0 and
// libggml-cpu-haswell.so (ggml_mul_mat, ggml_graph_compute_with_ctx, one
// thread): weights of 512×8 values quantized with ggml_quantize_chunk,
// activations 512×m, both from the generator below (xorshift32 from 12345,
// weights first, then activations, restarted for every case), for every
// type with m = 3 (the integer dots) and for q4_K also with m = 130 (more
// than 96 rows: the GEMM on rounded activations). Only the order of float
// sums may differ: with ggml's activation rounding the NMSE is ~1e-14,
// without it ~1e-5.
func TestMulMatMatchesGGML(t *testing.T) {
	ref, err := os.ReadFile("testdata/ggml-mulmat.bin")
	if err != nil {
		t.Fatal(err)
	}
	const k, n = 512, 8
	type tc struct {
		typ runtime.Type
		m   int64
	}
	var cases []tc
	for _, typ := range []runtime.Type{runtime.TypeQ4_0, runtime.TypeQ4_1, runtime.TypeQ5_0, runtime.TypeQ5_1, runtime.TypeQ8_0,
		runtime.TypeQ2_K, runtime.TypeQ3_K, runtime.TypeQ4_K, runtime.TypeQ5_K, runtime.TypeQ6_K, runtime.TypeF16, runtime.TypeBF16} {
		cases = append(cases, tc{typ, 3})
		if typ == runtime.TypeQ4_K {
			cases = append(cases, tc{typ, 130})
		}
	}
	off := 0
	for _, c := range cases {
		want := ref[off : off+int(4*n*c.m)]
		off += len(want)
		t.Run(fmt.Sprintf("%s/m%d", c.typ, c.m), func(t *testing.T) {
			st := uint32(12345)
			uni := func() float32 {
				st ^= st << 13
				st ^= st >> 17
				st ^= st << 5
				return float32(int32(st)) * (1.0 / 2147483648.0)
			}
			af := make([]float32, k*n)
			for i := range af {
				af[i] = uni()
			}
			bf := make([]float32, k*c.m)
			for i := range bf {
				bf[i] = uni()
			}
			ctx := runtime.NewContext()
			a := ctx.NewTensor(c.typ, k, n)
			b := ctx.NewTensor(runtime.TypeF32, k, c.m)
			out := ctx.MulMat(a, b)
			buf, err := gallocr.AllocCtxTensors(ctx, DefaultBufferType())
			if err != nil {
				t.Fatal(err)
			}
			defer buf.Free()
			aq := make([]byte, a.NBytes())
			if err := cpukernels.FromFloat(c.typ, af, aq); err != nil {
				t.Fatal(err)
			}
			raw := runMulMat(t, out, aq, bf, 2, false)
			var num, den float64
			for i := 0; i < len(raw)/4; i++ {
				gv := float64(math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:])))
				wv := float64(math.Float32frombits(binary.LittleEndian.Uint32(want[4*i:])))
				num += (gv - wv) * (gv - wv)
				den += wv * wv
			}
			if nmse := num / den; !(nmse <= 1e-10) {
				t.Errorf("NMSE %.3g against ggml, want ≤ 1e-10", nmse)
			}
		})
	}
}
