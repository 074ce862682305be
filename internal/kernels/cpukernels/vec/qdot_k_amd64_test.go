//go:build amd64 && !purego

package vec

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	cpukernels "github.com/gogml/gogml/internal/kernels/cpukernels"
)

// TestKQuantAVX2MatchesGo checks the AVX2 q4_K, q5_K and q6_K dots bit for bit
// against the Go ones on random blocks: arbitrary weight bytes (any
// scales, quants at their extremes) and q8_K quants in [-127, 127] with
// consistent group sums.
func TestKQuantAVX2MatchesGo(t *testing.T) {
	if !useAVX2 {
		t.Skip("no AVX2")
	}
	r := rand.New(rand.NewPCG(11, 12))
	randQ8K := func(nb int) []byte {
		y := make([]byte, nb*Q8_KBlockSize)
		for i := 0; i < nb; i++ {
			b := y[i*Q8_KBlockSize:]
			binary.LittleEndian.PutUint32(b, math.Float32bits(float32(r.Float64()*0.1)))
			for g := 0; g < 16; g++ {
				var s int32
				for l := 0; l < 16; l++ {
					q := int8(r.IntN(255) - 127)
					if r.IntN(8) == 0 {
						q = []int8{127, -127}[r.IntN(2)]
					}
					b[4+16*g+l] = byte(q)
					s += int32(q)
				}
				binary.LittleEndian.PutUint16(b[4+QKK+2*g:], uint16(int16(s)))
			}
		}
		return y
	}
	randW := func(nb, bs, d0 int) []byte {
		w := make([]byte, nb*bs)
		for i := range w {
			w[i] = byte(r.Uint32())
			if r.IntN(8) == 0 {
				w[i] = 0xff
			}
		}
		for i := 0; i < nb; i++ { // finite scales
			binary.LittleEndian.PutUint16(w[i*bs+d0:], cpukernels.F32ToF16(float32(r.NormFloat64())))
			if bs == Q4_KBlockSize {
				binary.LittleEndian.PutUint16(w[i*bs+2:], cpukernels.F32ToF16(float32(r.NormFloat64())))
			}
		}
		return w
	}
	for rep := 0; rep < 200; rep++ {
		nb := 1 + r.IntN(6)
		y := randQ8K(nb)
		w4 := randW(nb, Q4_KBlockSize, 0)
		if g, want := dotQ4_KAVX2(w4, y, nb), dotQ4_K(w4, y, nb); math.Float32bits(g) != math.Float32bits(want) {
			t.Fatalf("q4_K rep %d: AVX2 %v, Go %v", rep, g, want)
		}
		w5 := randW(nb, Q5_KBlockSize, 0)
		binary.LittleEndian.PutUint16(w5[2:], 0x3c00)
		if g, want := dotQ4_5KAVX2(w5, y, nb, Q5_KBlockSize), dotQ5_K(w5, y, nb); math.Float32bits(g) != math.Float32bits(want) {
			t.Fatalf("q5_K rep %d: AVX2 %v, Go %v", rep, g, want)
		}
		w6 := randW(nb, Q6_KBlockSize, 208)
		if g, want := dotQ6_KAVX2(w6, y, nb), dotQ6_K(w6, y, nb); math.Float32bits(g) != math.Float32bits(want) {
			t.Fatalf("q6_K rep %d: AVX2 %v, Go %v", rep, g, want)
		}
	}
}
