package cpukernels

import (
	"math"
	"testing"
)

// cvtpsRef is cvtps through float64 alone: x86's conversion in the
// default rounding mode.
func cvtpsRef(v float32) int32 {
	r := math.RoundToEven(float64(v))
	if !(r >= -2147483648 && r < 2147483648) {
		return math.MinInt32
	}
	return int32(r)
}

// TestCvtpsFastPath checks cvtps's float32 rounding against the float64
// reference: every half-integer up to 1024 in magnitude (the ties), a
// stride through the float32s of magnitude 2^-2..2^9 (where quantized
// activations fall) and through all others, and the fast path's edges.
func TestCvtpsFastPath(t *testing.T) {
	check := func(v float32) {
		if got, want := cvtps(v), cvtpsRef(v); got != want {
			t.Fatalf("cvtps(%v [%#08x]) = %d, want %d", v, math.Float32bits(v), got, want)
		}
	}
	for h := -2048; h <= 2048; h++ {
		check(float32(h) / 2)
	}
	for b := math.Float32bits(0.25); b <= math.Float32bits(512); b += 31 {
		check(math.Float32frombits(b))
		check(-math.Float32frombits(b))
	}
	for b := uint64(0); b < 1<<32; b += 99991 {
		check(math.Float32frombits(uint32(b)))
	}
	for _, v := range []float32{1 << 22, -1 << 22, 1<<22 - 0.5, -(1<<22 - 0.5), 1<<22 + 1, 0, float32(math.Copysign(0, -1)), 0.5, 1.5, 2.5, -0.5, -1.5, -2.5,
		127.5, -127.5, 126.5, float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), 3e9, -3e9} {
		check(v)
	}
}
