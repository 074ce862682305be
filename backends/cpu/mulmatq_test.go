package cpu

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gogml/gogml/gallocr"
	cpukernels "github.com/gogml/gogml/internal/kernels/cpukernels"
	"github.com/gogml/gogml/runtime"
)

// TestMulMatQuant runs quantized, f16 and bf16 MUL_MAT through the
// backend (both phases, tiles, broadcasting over dims 2 and 3, more than 96
// activation rows and fewer than 4 weight rows; with the rounded
// activations staged whole and, "blocked", rounded a block at a time inside
// the product as for millions of rows, including blocks that end inside an
// activation matrix and at its end) and compares it with
// ggml's arithmetic done plainly: dequantized weights times the activations
// rounded to the weights' vec_dot type, in float64.
func TestMulMatQuant(t *testing.T) {
	shapes := []struct{ k, n, m, a2, a3, b2, b3 int64 }{
		{32, 4, 1, 1, 1, 1, 1},
		{64, 17, 5, 1, 1, 1, 1},
		{128, 37, 70, 2, 1, 4, 3},
		{256, 130, 3, 1, 1, 1, 1},
		{512, 3, 130, 1, 1, 1, 1},
		{256, 5, 1100, 1, 1, 2, 1}, // more rows than one block of mulMatRoundedBlocked
		{256, 37, 1, 2, 1, 4, 3},   // decode (packed q4_0 and q4_K dots) over broadcast batches
		{512, 130, 1, 1, 1, 1, 1},
	}
	for _, typ := range []runtime.Type{runtime.TypeQ8_0, runtime.TypeQ4_0, runtime.TypeQ4_1, runtime.TypeQ5_0, runtime.TypeQ5_1,
		runtime.TypeQ2_K, runtime.TypeQ3_K, runtime.TypeQ4_K, runtime.TypeQ5_K, runtime.TypeQ6_K, runtime.TypeF16, runtime.TypeBF16} {
		for _, s := range shapes {
			if s.k%typ.BlockSize() != 0 {
				continue
			}
			for _, threads := range []int{1, 3} {
				for _, blocked := range []bool{false, true} {
					t.Run(fmt.Sprintf("%s/k%d_n%d_m%d_b%dx%d/threads%d/blocked=%v", typ, s.k, s.n, s.m, s.b2, s.b3, threads, blocked), func(t *testing.T) {
						testMulMatQuant(t, typ, s.k, s.n, s.m, [2]int64{s.a2, s.a3}, [2]int64{s.b2, s.b3}, threads, blocked)
					})
				}
			}
		}
	}
}

func testMulMatQuant(t *testing.T, typ runtime.Type, k, n, m int64, ae, be [2]int64, threads int, blocked bool) {
	r := rand.New(rand.NewPCG(uint64(k), uint64(n*m)))
	ctx := runtime.NewContext()
	a := ctx.NewTensor(typ, k, n, ae[0], ae[1])
	b := ctx.NewTensor(runtime.TypeF32, k, m, be[0], be[1])
	out := ctx.MulMat(a, b)
	if err := ctx.Err(); err != nil {
		t.Fatal(err)
	}
	buf, err := gallocr.AllocCtxTensors(ctx, DefaultBufferType())
	if err != nil {
		t.Fatal(err)
	}
	defer buf.Free()
	rand32 := func(n int64) []float32 {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(r.NormFloat64())
		}
		return x
	}
	af := rand32(k * n * ae[0] * ae[1])
	aq := make([]byte, a.NBytes())
	rowBytes := int64(typ.RowSize(k))
	for i := int64(0); i < n*ae[0]*ae[1]; i++ {
		if err := cpukernels.FromFloat(typ, af[i*k:(i+1)*k], aq[i*rowBytes:(i+1)*rowBytes]); err != nil {
			t.Fatal(err)
		}
		if err := cpukernels.ToFloat(typ, aq[i*rowBytes:(i+1)*rowBytes], af[i*k:(i+1)*k]); err != nil {
			t.Fatal(err)
		}
	}
	bf := rand32(k * m * be[0] * be[1])
	var configure []func(*Backend)
	if blocked {
		configure = append(configure, func(b *Backend) { StageRoundedUpTo(b, 0) })
	}
	raw := runMulMat(t, out, aq, bf, threads, true, configure...)
	// The activations as ggml rounds them.
	for i := int64(0); i < m*be[0]*be[1]; i++ {
		if err := cpukernels.RoundActivations(typ, bf[i*k:(i+1)*k]); err != nil {
			t.Fatal(err)
		}
	}
	// q4_1 and q5_1 weights add min·s per block, where ggml stores
	// s = d·Σq of the q8_1 activations as f16 (relative error 2^-11).
	tol := 1e-5
	if cpukernels.VecDotType(typ) == runtime.TypeQ8_1 {
		tol = 1e-3
	}
	for i3 := int64(0); i3 < be[1]; i3++ {
		for i2 := int64(0); i2 < be[0]; i2++ {
			for i := int64(0); i < m; i++ {
				for j := int64(0); j < n; j++ {
					ar := af[((i3/(be[1]/ae[1])*ae[0]+i2/(be[0]/ae[0]))*n+j)*k:][:k]
					br := bf[((i3*be[0]+i2)*m+i)*k:][:k]
					var want, mag float64
					for x := range ar {
						want += float64(ar[x]) * float64(br[x])
						mag += math.Abs(float64(ar[x]) * float64(br[x]))
					}
					got := math.Float32frombits(binary.LittleEndian.Uint32(raw[4*(((i3*be[0]+i2)*m+i)*n+j):]))
					if math.Abs(float64(got)-want) > tol*mag {
						t.Fatalf("out[%d,%d,%d,%d] = %v, want %v (magnitude %v)", j, i, i2, i3, got, want, mag)
					}
				}
			}
		}
	}
}

func f32Bytes(x []float32) []byte {
	b := make([]byte, 4*len(x))
	for i, v := range x {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
	}
	return b
}

// runMulMat writes the weight bytes aq and the activations bf into the
// sources of the MUL_MAT node out, computes it on a backend of threads
// workers (every node on its own split when split is set, then configured
// by each of configure) and returns the result's bytes.
func runMulMat(t *testing.T, out *runtime.Tensor, aq []byte, bf []float32, threads int, split bool, configure ...func(*Backend)) []byte {
	t.Helper()
	if err := runtime.SetTensorData(out.Src[0], aq, 0); err != nil {
		t.Fatal(err)
	}
	if err := runtime.SetTensorData(out.Src[1], f32Bytes(bf), 0); err != nil {
		t.Fatal(err)
	}
	be := NewBackend(BackendOptions{Threads: threads})
	if split {
		SplitEverything(be)
	}
	for _, c := range configure {
		c(be)
	}
	defer be.Close()
	g := runtime.NewGraph()
	if err := g.BuildForwardExpand(out); err != nil {
		t.Fatal(err)
	}
	if err := be.Compute(g); err != nil {
		t.Fatal(err)
	}
	raw := make([]byte, out.NBytes())
	if err := runtime.GetTensorData(out, raw, 0); err != nil {
		t.Fatal(err)
	}
	return raw
}
