package vec_test

import (
	"math"
	"math/rand/v2"
	"testing"

	cpukernels "github.com/gogml/gogml/internal/kernels/cpukernels"
	"github.com/gogml/gogml/internal/kernels/cpukernels/vec"
)

// isNaN16 reports whether h is a half-precision NaN.
func isNaN16(h uint16) bool { return h&0x7c00 == 0x7c00 && h&0x3ff != 0 }

// TestF16ToF32 converts every half value with vec.F16ToF32 (whatever level
// GOGML_CPU selects) and checks each against cpukernels.F16ToF32: the same
// bits, except that a NaN only has to stay a NaN of the same sign.
func TestF16ToF32(t *testing.T) {
	src := make([]uint16, 1<<16+5) // a tail the caller converts
	for i := range src {
		src[i] = uint16(i)
	}
	dst := make([]float32, len(src))
	n := vec.F16ToF32(dst, src)
	if n > len(src) {
		t.Fatalf("converted %d of %d", n, len(src))
	}
	t.Logf("level %s: %d of %d converted by the CPU", vec.Level(), n, len(src))
	for i, h := range src[:n] {
		got, want := math.Float32bits(dst[i]), math.Float32bits(cpukernels.F16ToF32(h))
		if isNaN16(h) {
			if !math.IsNaN(float64(dst[i])) || got>>31 != want>>31 {
				t.Fatalf("%#04x: got %#08x, want a NaN like %#08x", h, got, want)
			}
			continue
		}
		if got != want {
			t.Fatalf("%#04x: got %#08x, want %#08x", h, got, want)
		}
	}
}

// TestF32ToF16 checks vec.F32ToF16 against cpukernels.F32ToF16 on every
// half boundary and tie (each half value's float32, ±1 ulp, and the
// midpoints to its neighbours), the overflow and underflow edges, and
// random bit patterns.
func TestF32ToF16(t *testing.T) {
	var src []float32
	for h := range 1 << 16 {
		if isNaN16(uint16(h)) {
			continue
		}
		f := cpukernels.F16ToF32(uint16(h))
		b := math.Float32bits(f)
		src = append(src, f, math.Float32frombits(b+1), math.Float32frombits(b-1))
		if next := cpukernels.F16ToF32(uint16(h + 1)); !math.IsInf(float64(f), 0) && !math.IsNaN(float64(next)) {
			mid := (float64(f) + float64(next)) / 2
			src = append(src, float32(mid))
			mb := math.Float32bits(float32(mid))
			src = append(src, math.Float32frombits(mb+1), math.Float32frombits(mb-1))
		}
	}
	src = append(src, 65504, 65519.99, 65520, 1e30, -1e30, 1e-8, 2.98e-8, 2.99e-8, 5.96e-8, 1e-45, float32(math.Copysign(0, -1)),
		float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), -float32(math.NaN()))
	r := rand.New(rand.NewPCG(1, 2))
	for range 1 << 18 {
		src = append(src, math.Float32frombits(r.Uint32()))
	}
	dst := make([]uint16, len(src))
	n := vec.F32ToF16(dst, src)
	if n > len(src) {
		t.Fatalf("converted %d of %d", n, len(src))
	}
	t.Logf("level %s: %d of %d converted by the CPU", vec.Level(), n, len(src))
	for i, f := range src[:n] {
		want := cpukernels.F32ToF16(f)
		if math.IsNaN(float64(f)) {
			if !isNaN16(dst[i]) || dst[i]>>15 != want>>15 {
				t.Fatalf("%#08x: got %#04x, want a NaN like %#04x", math.Float32bits(f), dst[i], want)
			}
			continue
		}
		if dst[i] != want {
			t.Fatalf("%g (%#08x): got %#04x, want %#04x", f, math.Float32bits(f), dst[i], want)
		}
	}
}

// TestDequantQ8_0 checks vec.DequantQ8_0 against
// cpukernels.DequantizeRowQ8_0 on random blocks (scales that are not NaN).
func TestDequantQ8_0(t *testing.T) {
	const nb = 1000
	r := rand.New(rand.NewPCG(3, 4))
	src := make([]byte, nb*cpukernels.BlockQ8_0Size)
	for i := range src {
		src[i] = byte(r.Uint32())
	}
	for b := range nb {
		if isNaN16(uint16(src[b*34]) | uint16(src[b*34+1])<<8) {
			src[b*34+1] &^= 0x7c // not a NaN
		}
	}
	got := make([]float32, nb*cpukernels.QK)
	want := make([]float32, len(got))
	n := vec.DequantQ8_0(got, src)
	t.Logf("level %s: %d of %d blocks converted by the CPU", vec.Level(), n, nb)
	if err := cpukernels.DequantizeRowQ8_0(src, want); err != nil {
		t.Fatal(err)
	}
	for i := range got[:n*cpukernels.QK] {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Fatalf("element %d: got %g, want %g", i, got[i], want[i])
		}
	}
}
