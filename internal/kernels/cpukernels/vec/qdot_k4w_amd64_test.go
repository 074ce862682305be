//go:build amd64 && !purego

package vec

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestDotK4WMatchesDot1 checks the four-weight-row decode kernels (through
// DotQ*_KRows, one activation row, weight-row counts not a multiple of
// four, padded strides) bit for bit against the one-row AVX-512 kernels.
func TestDotK4WMatchesDot1(t *testing.T) {
	if !useK512 {
		t.Skip("no AVX-512 k-quant kernels at this level")
	}
	tests := []struct {
		name string
		bs   int
		d0   int
		rows func([]float32, []byte, int, []byte, int) error
		one  func(w, y *byte, nb int) float32
	}{
		{"q4_K", Q4_KBlockSize, 0, DotQ4_KRows, q4KDot1AVX512},
		{"q5_K", Q5_KBlockSize, 0, DotQ5_KRows, q5KDot1AVX512},
		{"q6_K", Q6_KBlockSize, 208, DotQ6_KRows, q6KDot1AVX512},
	}
	r := rand.New(rand.NewPCG(41, 42))
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for rep := 0; rep < 60; rep++ {
				nb, nw := 1+r.IntN(9), 1+r.IntN(14)
				stride := nb*tc.bs + r.IntN(4)
				w := make([]byte, (nw-1)*stride+nb*tc.bs)
				for i := 0; i < nw; i++ {
					copy(w[i*stride:], randKW(r, nb, tc.bs, tc.d0))
				}
				y := randQ8K(r, nb)
				dst := make([]float32, nw)
				if err := tc.rows(dst, w, stride, y, nb); err != nil {
					t.Fatal(err)
				}
				for i := range nw {
					want := tc.one(&w[i*stride], &y[0], nb)
					if math.Float32bits(dst[i]) != math.Float32bits(want) {
						t.Fatalf("rep %d (nb %d, %d rows, stride %d): row %d = %v, want %v", rep, nb, nw, stride, i, dst[i], want)
					}
				}
			}
		})
	}
}
