package cpu

import (
	"math"
	"testing"

	cpukernels "github.com/gogml/gogml/internal/kernels/cpukernels"
)

// TestRoundHalves checks roundHalves against the scalar rounding
// (cpukernels.F32ToF16 then F16ToF32) bit for bit on runs of 600
// consecutive float32s (more than its 512-element block) every 2^16 of
// the range, subnormals, infinities and the rounding boundaries of every
// exponent included; a NaN must stay a NaN (its payload is the
// hardware's, as ggml's).
func TestRoundHalves(t *testing.T) {
	x := make([]float32, 600)
	for b := uint64(0); b < 1<<32; b += 1 << 16 {
		for i := range x {
			x[i] = math.Float32frombits(uint32(b) + uint32(i)*7)
		}
		y := append([]float32(nil), x...)
		roundHalves(y)
		for i, v := range x {
			want := cpukernels.F16ToF32(cpukernels.F32ToF16(v))
			if v != v {
				if y[i] == y[i] {
					t.Fatalf("NaN %#x rounded to %v", math.Float32bits(v), y[i])
				}
				continue
			}
			if math.Float32bits(y[i]) != math.Float32bits(want) {
				t.Fatalf("%v (%#x): got %v, want %v", v, math.Float32bits(v), y[i], want)
			}
		}
	}
}
