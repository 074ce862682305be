package vec

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestSwiGLU checks the fused kernel against SiLU then Mul, bit for bit
// (the same operations in the same order at every level), over lengths
// around the 32-element step and the chunk, in place too, with inputs
// from large negative (exp overflow) to large positive, and a NaN.
func TestSwiGLU(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	for _, n := range []int{1, 7, 31, 32, 33, 64, 100, 257, 4096, 4099} {
		x, g := make([]float32, n), make([]float32, n)
		for i := range x {
			x[i] = float32(r.NormFloat64() * 30)
			g[i] = float32(r.NormFloat64())
		}
		x[0] = float32(math.NaN())
		want := make([]float32, n)
		SiLU(want, x)
		Mul(want, want, g)
		got := make([]float32, n+1)
		got[n] = 42
		SwiGLU(got[:n], x, g)
		if got[n] != 42 {
			t.Fatalf("n %d: wrote past dst", n)
		}
		inplace := append([]float32(nil), g...)
		SwiGLU(inplace, x, inplace)
		for i := range n {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) || math.Float32bits(inplace[i]) != math.Float32bits(want[i]) {
				t.Fatalf("n %d: [%d] = %v (in place %v), want %v (x %v, g %v)", n, i, got[i], inplace[i], want[i], x[i], g[i])
			}
		}
	}
}
