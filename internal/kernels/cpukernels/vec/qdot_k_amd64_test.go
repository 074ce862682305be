//go:build amd64 && !purego

package vec

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"
)

// TestKQuantAVX2MatchesGo checks the AVX2 q2_K..q6_K dots bit for bit
// against the Go ones on random blocks: arbitrary weight bytes (any
// scales, quants at their extremes) and q8_K quants in [-127, 127] with
// consistent group sums.
func TestKQuantAVX2MatchesGo(t *testing.T) {
	if !useQAVX2 {
		t.Skip("no AVX2 or F16C")
	}
	r := rand.New(rand.NewPCG(11, 12))
	for rep := 0; rep < 200; rep++ {
		nb := 1 + r.IntN(6)
		y := randQ8K(r, nb)
		w4 := randKW(r, nb, Q4_KBlockSize, 0)
		if g, want := dotQ4_KAVX2(w4, y, nb), dotQ4_K(w4, y, nb); math.Float32bits(g) != math.Float32bits(want) {
			t.Fatalf("q4_K rep %d: AVX2 %v, Go %v", rep, g, want)
		}
		w5 := randKW(r, nb, Q5_KBlockSize, 0)
		binary.LittleEndian.PutUint16(w5[2:], 0x3c00)
		if g, want := dotQ5_KAVX2(w5, y, nb), dotQ5_K(w5, y, nb); math.Float32bits(g) != math.Float32bits(want) {
			t.Fatalf("q5_K rep %d: AVX2 %v, Go %v", rep, g, want)
		}
		w6 := randKW(r, nb, Q6_KBlockSize, 208)
		if g, want := dotQ6_KAVX2(w6, y, nb), dotQ6_K(w6, y, nb); math.Float32bits(g) != math.Float32bits(want) {
			t.Fatalf("q6_K rep %d: AVX2 %v, Go %v", rep, g, want)
		}
		w2 := randKW(r, nb, Q2_KBlockSize, 80)
		if g, want := dotQ2_KAVX2(w2, y, nb), dotQ2_K(w2, y, nb); math.Float32bits(g) != math.Float32bits(want) {
			t.Fatalf("q2_K rep %d: AVX2 %v, Go %v", rep, g, want)
		}
		w3 := randKW(r, nb, Q3_KBlockSize, 108)
		if g, want := dotQ3_KAVX2(w3, y, nb), dotQ3_K(w3, y, nb); math.Float32bits(g) != math.Float32bits(want) {
			t.Fatalf("q3_K rep %d: AVX2 %v, Go %v", rep, g, want)
		}
	}
}
