package cpukernels

import (
	"math"
	"testing"

	"github.com/gogml/gogml/runtime"
)

func TestClampGGML(t *testing.T) {
	nan := float32(math.NaN())
	tests := []struct {
		name         string
		x, lo, hi, w float32
	}{
		{"inside", 0.25, -1, 1, 0.25},
		{"below", -3, -1, 1, -1},
		{"above", 3, -1, 1, 1},
		{"NaN becomes max", nan, -1, 1, 1},
		{"min above max: min wins", 0, 0.5, -0.5, 0.5},
		{"min above max, NaN", nan, 0.5, -0.5, 0.5},
		{"infinity", float32(math.Inf(1)), -1, 1, 1},
	}
	for _, tc := range tests {
		if got := Clamp(tc.x, tc.lo, tc.hi); got != tc.w {
			t.Errorf("%s: Clamp(%v, %v, %v) = %v, want %v", tc.name, tc.x, tc.lo, tc.hi, got, tc.w)
		}
	}
}

func TestUnaryFunctions(t *testing.T) {
	nan := float32(math.NaN())
	tests := []struct {
		u    runtime.UnaryOp
		x, w float32
	}{
		{runtime.UnarySgn, -2, -1}, {runtime.UnarySgn, 0, 0}, {runtime.UnarySgn, 3, 1},
		{runtime.UnaryStep, 0, 0}, {runtime.UnaryStep, 0.1, 1},
		{runtime.UnaryElu, 2, 2}, {runtime.UnaryElu, -1, float32(math.Expm1(-1))},
		{runtime.UnaryHardswish, 1, 1 * 4.0 / 6}, {runtime.UnaryHardswish, -4, 0}, {runtime.UnaryHardswish, 4, 4},
		{runtime.UnaryHardsigmoid, 0, 0.5}, {runtime.UnaryHardsigmoid, nan, 0}, // fmaxf(0, NaN) is 0
		{runtime.UnaryExpm1, 0, 0}, {runtime.UnarySoftplus, 30, 30}, {runtime.UnarySoftplus, 0, float32(math.Log(2))},
		{runtime.UnaryGeluErf, 0, 0}, {runtime.UnaryGeluErf, 1, float32(0.5 * (1 + math.Erf(1/math.Sqrt2)))},
		{runtime.UnaryFloor, -1.5, -2}, {runtime.UnaryCeil, -1.5, -1}, {runtime.UnaryRound, 2.5, 3},
		{runtime.UnaryRound, -2.5, -3}, {runtime.UnaryTrunc, -1.7, -1},
		{runtime.UnaryGelu, -11, 0}, {runtime.UnaryGelu, 12.5, 12.5},
	}
	for _, tc := range tests {
		f := UnaryFunc(tc.u)
		if f == nil {
			t.Fatalf("%s: no function", tc.u)
		}
		if got := f(tc.x); got != tc.w && math.Abs(float64(got-tc.w)) > 1e-6 {
			t.Errorf("%s(%v) = %v, want %v", tc.u, tc.x, got, tc.w)
		}
	}
	if UnaryFunc(runtime.UnaryXielu) != nil {
		t.Error("XIELU needs its op parameters: UnaryFunc must return nil")
	}
}

// TestGeluHalfTable checks that GELU and GELU_QUICK take ggml's
// half-precision table: the result is a half value, and the input is
// rounded to half precision first.
func TestGeluHalfTable(t *testing.T) {
	for _, f := range []func(float32) float32{Gelu, GeluQuick} {
		for x := float32(-9.9); x < 9.9; x += 0.0137 {
			y := f(x)
			if halfRound(y) != y {
				t.Fatalf("%v → %v is not a half value", x, y)
			}
			if y != f(halfRound(x)) {
				t.Fatalf("%v and its half rounding %v give %v and %v", x, halfRound(x), y, f(halfRound(x)))
			}
		}
	}
	exact := float32(0.5 * 1.3 * (1 + math.Tanh(math.Sqrt(2/math.Pi)*1.3*(1+0.044715*1.3*1.3))))
	if d := math.Abs(float64(Gelu(1.3) - exact)); d > 1e-3 {
		t.Fatalf("Gelu(1.3) = %v, want about %v", Gelu(1.3), exact)
	}
}
