//go:build amd64 && !purego

package vec

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestKernel6x32MatchesKernel6x16 checks that the AVX-512 micro-kernel
// gives the same bits as two AVX2 kernel6x16 tiles, overwriting and
// accumulating, for several k.
func TestKernel6x32MatchesKernel6x16(t *testing.T) {
	if hwLevel < levelAVX512 || !useAVX2 {
		t.Skip("no AVX-512 on this CPU (or GOGML_CPU below avx2)")
	}
	r := rand.New(rand.NewPCG(5, 6))
	for _, k := range []int{1, 3, 4, 17, 256} {
		const lda, ldc = 300, 40
		a := make([]float32, 6*lda)
		b0, b1 := make([]float32, 16*k), make([]float32, 16*k)
		for _, s := range [][]float32{a, b0, b1} {
			for i := range s {
				s[i] = r.Float32()*2 - 1
			}
		}
		for _, acc := range []bool{false, true} {
			got, want := make([]float32, 6*ldc), make([]float32, 6*ldc)
			for i := range got {
				got[i] = float32(i) * 0.25
				want[i] = got[i]
			}
			kernel6x32AVX512(k, &a[0], lda, &b0[0], &b1[0], &got[0], ldc, acc)
			kernel6x16(k, &a[0], lda, &b0[0], &want[0], ldc, acc)
			kernel6x16(k, &a[0], lda, &b1[0], &want[16], ldc, acc)
			for i := range got {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("k=%d acc=%v: c[%d] = %g, want %g", k, acc, i, got[i], want[i])
				}
			}
		}
	}
}
