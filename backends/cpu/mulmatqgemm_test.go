package cpu

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gogml/gogml/gallocr"
	cpukernels "github.com/gogml/gogml/internal/kernels/cpukernels"
	"github.com/gogml/gogml/internal/kernels/cpukernels/vec"
	"github.com/gogml/gogml/runtime"
)

// TestMulMatQGemmMatchesRowDots runs q4_0 and q8_0 MUL_MAT through the
// backend at prompt batch sizes (the GEMM tile where the AVX-512 kernels
// run, the row dots elsewhere) and compares every result with the row dots
// on the same quantized activations: the integer block sums are exact, so
// only the order of float additions differs (NMSE ≤ 1e-7). Shapes cover
// partial panels and groups, broadcast batches, and more units than
// workers as well as fewer.
func TestMulMatQGemmMatchesRowDots(t *testing.T) {
	shapes := []struct{ k, n, m, a2, b2 int64 }{
		{32, 16, 16, 1, 1},
		{64, 20, 8, 1, 1},
		{256, 37, 21, 1, 2},
		{512, 64, 130, 2, 2},
		{128, 3, 40, 1, 3},
	}
	for _, typ := range []runtime.Type{runtime.TypeQ4_0, runtime.TypeQ8_0} {
		for _, s := range shapes {
			for _, threads := range []int{1, 2, 3} {
				t.Run(fmt.Sprintf("%s/k%d_n%d_m%d_b%d/threads%d", typ, s.k, s.n, s.m, s.b2, threads), func(t *testing.T) {
					testQGemmRowDots(t, typ, s.k, s.n, s.m, s.a2, s.b2, threads)
				})
			}
		}
	}
}

// TestMulMatQKGemmMatchesRowDots is TestMulMatQGemmMatchesRowDots for
// the k-quants with tiles (q4_K, q5_K, q6_K), whose results must be the
// row dots' bits exactly: full and partial panels, activation groups with
// a partial last one (its rows on the row tiles), broadcast batches,
// chunked panels.
func TestMulMatQKGemmMatchesRowDots(t *testing.T) {
	shapes := []struct{ k, n, m, a2, b2 int64 }{
		{256, 16, 16, 1, 1},
		{512, 20, 17, 1, 1},
		{256, 37, 21, 1, 2},
		{1024, 64, 130, 2, 2},
		{256, 3, 40, 1, 3},
		{256, 16, 8, 1, 1},
	}
	for _, typ := range []runtime.Type{runtime.TypeQ4_K, runtime.TypeQ5_K, runtime.TypeQ6_K} {
		for _, s := range shapes {
			for _, threads := range []int{1, 2, 3} {
				t.Run(fmt.Sprintf("%s/k%d_n%d_m%d_b%d/threads%d", typ, s.k, s.n, s.m, s.b2, threads), func(t *testing.T) {
					testQGemmRowDots(t, typ, s.k, s.n, s.m, s.a2, s.b2, threads)
				})
			}
		}
	}
}

func testQGemmRowDots(t *testing.T, typ runtime.Type, k, n, m, a2, b2 int64, threads int) {
	r := rand.New(rand.NewPCG(uint64(k), uint64(n*m)))
	ctx := runtime.NewContext()
	a := ctx.NewTensor(typ, k, n, a2, 1)
	b := ctx.NewTensor(runtime.TypeF32, k, m, b2, 1)
	out := ctx.MulMat(a, b)
	if err := ctx.Err(); err != nil {
		t.Fatal(err)
	}
	buf, err := gallocr.AllocCtxTensors(ctx, DefaultBufferType())
	if err != nil {
		t.Fatal(err)
	}
	defer buf.Free()
	af := make([]float32, k*n*a2)
	for i := range af {
		af[i] = float32(r.NormFloat64())
	}
	rowBytes := int64(typ.RowSize(k))
	aq := make([]byte, a.NBytes())
	for i := range n * a2 {
		if err := cpukernels.FromFloat(typ, af[i*k:(i+1)*k], aq[i*rowBytes:(i+1)*rowBytes]); err != nil {
			t.Fatal(err)
		}
	}
	bf := make([]float32, k*m*b2)
	for i := range bf {
		bf[i] = float32(r.NormFloat64())
	}
	raw := runMulMat(t, out, aq, bf, threads, true)
	// The row dots on the activations rounded as the backend rounds them.
	// Where SIMD kernels run, k-quant products stay on integer dots at
	// every batch size (the tile where it runs, else the row tiles), which
	// give those bits exactly; at the generic level they go through the
	// f32 GEMM (only NMSE holds).
	dots, quant := vec.DotQ8_0Rows, cpukernels.QuantizeRowQ8_0CPU
	kq := vec.Implementation() != "go"
	exact := false
	switch typ {
	case runtime.TypeQ4_0:
		dots = vec.DotQ4_0Rows
	case runtime.TypeQ4_K:
		dots, quant, exact = vec.DotQ4_KRows, vec.QuantizeRowQ8_K, kq
	case runtime.TypeQ5_K:
		dots, quant, exact = vec.DotQ5_KRows, vec.QuantizeRowQ8_K, kq
	case runtime.TypeQ6_K:
		dots, quant, exact = vec.DotQ6_KRows, vec.QuantizeRowQ8_K, kq
	}
	act := cpukernels.VecDotType(typ)
	nb := int(k / act.BlockSize())
	y := make([]byte, act.RowSize(k))
	want := make([]float32, n)
	var num, den float64
	for i2 := range b2 {
		w := aq[(i2/(b2/a2))*n*rowBytes:]
		for i := range m {
			if err := quant(bf[(i2*m+i)*k:][:k], y); err != nil {
				t.Fatal(err)
			}
			if err := dots(want, w, int(rowBytes), y, nb); err != nil {
				t.Fatal(err)
			}
			for j := range n {
				got := math.Float32frombits(binary.LittleEndian.Uint32(raw[4*((i2*m+i)*n+j):]))
				if exact && math.Float32bits(got) != math.Float32bits(want[j]) {
					t.Fatalf("[%d,%d,%d] = %v, want the row dot's %v (level %s, tile %v)", i2, i, j, got, want[j], vec.Level(), vec.QKGemmAVX512())
				}
				d := float64(got) - float64(want[j])
				num += d * d
				den += float64(want[j]) * float64(want[j])
			}
		}
	}
	t.Logf("NMSE %g (tile %v)", num/den, vec.QGemmAVX512())
	if num > 1e-7*den {
		t.Fatalf("NMSE %g against the row dots (level %s, tile %v)", num/den, vec.Level(), vec.QGemmAVX512())
	}
}
