package cpukernels

import (
	"math"
	"testing"
)

// TestSincosfGlibcBits checks Sincosf against the bits of glibc 2.36's
// sinf and cosf (Debian 12, x86-64 with FMA: the libm ggml's ROPE calls),
// in each branch: tiny, |x| < 0.75, the one-step reduction below 120, the
// 192-bit one above, both signs. Most entries are values where the
// float64 math.Sin and math.Cos rounded to float32 give other bits
// (glibc is not correctly rounded there); when written, Sincosf matched
// glibc on 26 million values swept over the whole float32 range and ROPE
// angles p·base^(-2i/d).
func TestSincosfGlibcBits(t *testing.T) {
	for _, c := range []struct{ x, sin, cos uint32 }{
		{0x00000000, 0x00000000, 0x3f800000}, // 0
		{0x80000000, 0x80000000, 0x3f800000}, // -0
		{0x80100d8e, 0x80100d8e, 0x3f800000}, // -1.47423e-39
		{0x39921585, 0x39921585, 0x3f7fffff}, // 0.00027863323
		{0x3b860b27, 0x3b860b0f, 0x3f7fff74}, // 0.004090685
		{0xbb860b27, 0xbb860b0f, 0x3f7fff74}, // -0.004090685
		{0x3b9a7a78, 0x3b9a7a53, 0x3f7fff46}, // 0.0047143064
		{0x3f4003fe, 0x3f2e82cd, 0x3f3b4d3e}, // 0.7500609
		{0xbf403db0, 0xbf2eacff, 0x3f3b25e4}, // -0.7509413
		{0xbf8743f4, 0xbf5eeaa0, 0x3efbbf6d}, // -1.0567613
		{0x3f975255, 0x3f6ce9c2, 0x3ec1fdd5}, // 1.1822001
		{0x42f0172f, 0x3f1deb31, 0x3f497d19}, // 120.04528
		{0xc2f0172f, 0xbf1deb31, 0x3f497d19}, // -120.04528
		{0x42f039cd, 0x3f2b2ba7, 0x3f3e5bfa}, // 120.11289
		{0x431a6079, 0xbed98723, 0xbf67bf16}, // 154.37685
		{0xc34a89f6, 0xbf7edfce, 0x3dbfda9c}, // -202.53891
		{0x49744478, 0xbf33f9b7, 0xbf360ea7}, // 1.0005195e+06
		{0xc9744cb6, 0x3f266ef9, 0xbf4283b7}, // -1.0006514e+06
		{0xc9d03682, 0xbeb31b57, 0xbf6fd349}, // -1.7056802e+06
	} {
		s, co := Sincosf(math.Float32frombits(c.x))
		if math.Float32bits(s) != c.sin || math.Float32bits(co) != c.cos {
			t.Errorf("Sincosf(%g) = %#08x, %#08x; glibc %#08x, %#08x", math.Float32frombits(c.x),
				math.Float32bits(s), math.Float32bits(co), c.sin, c.cos)
		}
	}
	for _, x := range []float32{float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN())} {
		if s, c := Sincosf(x); !math.IsNaN(float64(s)) || !math.IsNaN(float64(c)) {
			t.Errorf("Sincosf(%g) = %g, %g; want NaN, NaN", x, s, c)
		}
	}
}

// TestSincosfNearMath sweeps float32 values of every magnitude and
// requires Sincosf within one float32 ULP of math.Sin and math.Cos.
func TestSincosfNearMath(t *testing.T) {
	for b := uint32(0); b < 0x7f800000; b += 40009 {
		for _, bits := range []uint32{b, b | 0x80000000} {
			x := math.Float32frombits(bits)
			s, c := Sincosf(x)
			ws, wc := math.Sin(float64(x)), math.Cos(float64(x))
			if !withinULP(s, ws) || !withinULP(c, wc) {
				t.Fatalf("Sincosf(%g) = %g, %g; math %g, %g", x, s, c, ws, wc)
			}
		}
	}
}

// withinULP reports whether got is within one float32 ULP of want.
func withinULP(got float32, want float64) bool {
	w := float32(want)
	return got == w || got == math.Nextafter32(w, float32(math.Inf(1))) || got == math.Nextafter32(w, float32(math.Inf(-1)))
}
