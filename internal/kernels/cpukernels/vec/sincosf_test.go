package vec

import (
	"math"
	"testing"

	cpukernels "github.com/gogml/gogml/internal/kernels/cpukernels"
)

// TestSincosf checks Sincosf against cpukernels.Sincosf, bit for bit, on
// one float32 in 997 of every sign and exponent (every branch: tiny,
// below 0.75, the one-step reduction, the large one, Inf and NaN), with
// lengths that leave a tail past the 8-lane steps.
func TestSincosf(t *testing.T) {
	const step = 997
	x := make([]float32, 0, 1<<32/step+3)
	for b := uint64(0); b < 1<<32; b += step {
		x = append(x, math.Float32frombits(uint32(b)))
	}
	x = append(x, 0, float32(math.Inf(1)), float32(math.NaN()))
	for _, n := range []int{len(x), len(x) - 5, 7} {
		xs := x[len(x)-n:]
		sin, cos := make([]float32, n), make([]float32, n)
		Sincosf(sin, cos, xs)
		for i, v := range xs {
			ws, wc := cpukernels.Sincosf(v)
			if math.Float32bits(sin[i]) != math.Float32bits(ws) || math.Float32bits(cos[i]) != math.Float32bits(wc) {
				if math.IsNaN(float64(ws)) && math.IsNaN(float64(sin[i])) && math.IsNaN(float64(cos[i])) {
					continue
				}
				t.Fatalf("Sincosf(%g) = %g, %g; cpukernels.Sincosf %g, %g", v, sin[i], cos[i], ws, wc)
			}
		}
	}
}
