//go:build amd64 && !purego

package vec

import (
	"math"
	"math/rand/v2"
	"testing"
	"unsafe"
)

// TestRowDotFourRowsExact: the four-row AVX-512 row dots (their lane sums
// finished together, hsum4Store) give each row the bits of the one-row
// kernel, for f32, f16 and bf16 rows of one to several loop trips.
func TestRowDotFourRowsExact(t *testing.T) {
	if !useAVX512 || !useF16C {
		t.Skip("no AVX-512 or F16C")
	}
	r := rand.New(rand.NewPCG(21, 22))
	for _, c := range []struct {
		name   string
		size   int // bytes per weight
		x4, x1 func(*byte, int, *float32, int, *float32)
	}{
		{"f32", 4, dotF32x4AVX512, dotF32x1AVX512},
		{"f16", 2, dotF16x4AVX512, dotF16x1AVX512},
		{"bf16", 2, dotBF16x4AVX512, dotBF16x1AVX512},
	} {
		for _, n := range []int{32, 64, 96, 256} {
			x := make([]float32, n)
			for i := range x {
				x[i] = float32(r.NormFloat64())
			}
			stride := n*c.size + 64 // rows apart by more than their length
			w := make([]byte, 4*stride)
			for i := range w {
				w[i] = byte(r.IntN(256))
			}
			if c.size == 2 { // finite halves and bfloat16s: no exponent of all ones
				for i := 1; i < len(w); i += 2 {
					w[i] &= 0x3f
				}
			} else {
				for i := 0; i < len(w); i += 4 {
					v := float32(r.NormFloat64())
					*(*float32)(unsafe.Pointer(&w[i])) = v
				}
			}
			var got, want [4]float32
			c.x4(&w[0], stride, &x[0], n, &got[0])
			for i := range 4 {
				c.x1(&w[i*stride], stride, &x[0], n, &want[i])
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Errorf("%s, n %d, row %d: four-row %v, one-row %v", c.name, n, i, got[i], want[i])
				}
			}
		}
	}
}
