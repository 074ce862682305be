package cpukernels

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"
)

func TestF16RoundTripAllHalves(t *testing.T) {
	for h := 0; h < 1<<16; h++ {
		f := F16ToF32(uint16(h))
		got := F32ToF16(f)
		if math.IsNaN(float64(f)) {
			if got != uint16(h)&0x8000|0x7e00 {
				t.Fatalf("NaN %#04x -> %#04x, want quiet NaN", h, got)
			}
			continue
		}
		if got != uint16(h) {
			t.Fatalf("%#04x -> %g -> %#04x", h, f, got)
		}
	}
}

// nearestHalf checks that h is a nearest half to f, ties to even.
func nearestHalf(t *testing.T, f float32, h uint16) {
	t.Helper()
	if math.IsInf(float64(F16ToF32(h)), 0) {
		if math.Abs(float64(f)) < 65520 {
			t.Fatalf("%g -> Inf", f)
		}
		return
	}
	d := math.Abs(float64(f) - float64(F16ToF32(h)))
	for _, nb := range []uint16{h - 1, h + 1} {
		if nb&0x7fff >= 0x7c00 || (h&0x7fff == 0 && nb&0x7fff == 0x7fff) {
			continue
		}
		dn := math.Abs(float64(f) - float64(F16ToF32(nb)))
		if dn < d || (dn == d && h&1 == 1) {
			t.Fatalf("%g (%#08x) -> %#04x (%g), neighbour %#04x (%g) is nearer or even", f, math.Float32bits(f), h, F16ToF32(h), nb, F16ToF32(nb))
		}
	}
}

func TestF32ToF16Rounding(t *testing.T) {
	tests := []struct {
		f    float32
		want uint16
	}{
		{0, 0}, {float32(math.Copysign(0, -1)), 0x8000}, {1, 0x3c00}, {-2, 0xc000},
		{65504, 0x7bff}, {65519, 0x7bff}, {65520, 0x7c00}, {1e9, 0x7c00},
		{float32(math.Inf(-1)), 0xfc00}, {float32(math.NaN()), 0x7e00},
		{5.960464477539063e-08, 0x0001}, {2.9802322387695312e-08, 0x0000}, {2.98023259e-08, 0x0001},
		{6.103515625e-05, 0x0400}, {6.1e-05, 0x03ff},
		{1 + 1.0/2048, 0x3c00}, {1 + 3.0/2048, 0x3c02}, // ties to even
	}
	for _, tc := range tests {
		if got := F32ToF16(tc.f); got != tc.want {
			t.Errorf("F32ToF16(%g) = %#04x, want %#04x", tc.f, got, tc.want)
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 200000; i++ {
		f := math.Float32frombits(r.Uint32())
		if math.IsNaN(float64(f)) {
			continue
		}
		if i%2 == 0 { // concentrate on the half range
			f = float32(r.NormFloat64() * math.Pow(2, float64(r.IntN(40)-25)))
		}
		nearestHalf(t, f, F32ToF16(f))
	}
}

func TestBF16(t *testing.T) {
	tests := []struct {
		bits uint32
		want uint16
	}{
		{0x3f800000, 0x3f80},      // 1
		{0x3f808000, 0x3f80},      // tie, even stays
		{0x3f818000, 0x3f82},      // tie, odd rounds up
		{0x3f808001, 0x3f81},      // above half
		{0x7f7fffff, 0x7f80},      // max float rounds to Inf
		{0x7f800001, 0x7f80 | 64}, // signalling NaN made quiet
		{0xffc00001, 0xffc0},      // quiet NaN keeps bits
		{0x80000000, 0x8000},      // -0
	}
	for _, tc := range tests {
		if got := F32ToBF16(math.Float32frombits(tc.bits)); got != tc.want {
			t.Errorf("F32ToBF16(%#08x) = %#04x, want %#04x", tc.bits, got, tc.want)
		}
	}
	for h := 0; h < 1<<16; h++ {
		f := BF16ToF32(uint16(h))
		if !math.IsNaN(float64(f)) && F32ToBF16(f) != uint16(h) {
			t.Fatalf("bf16 %#04x does not round-trip", h)
		}
	}
}

func TestQ8_0Block(t *testing.T) {
	x := make([]float32, 32)
	for j := range x {
		x[j] = float32(j - 16)
	}
	blk := make([]byte, BlockQ8_0Size)
	if err := QuantizeRowQ8_0(x, blk); err != nil {
		t.Fatal(err)
	}
	if d := binary.LittleEndian.Uint16(blk); d != F32ToF16(16.0/127) {
		t.Errorf("d = %#04x", d)
	}
	// q = round(x * 127/16)
	want := map[int]int8{0: -127, 31: 119, 16: 0, 17: 8, 18: 16, 14: -16, 8: -64}
	for j, q := range want {
		if int8(blk[2+j]) != q {
			t.Errorf("q[%d] = %d, want %d", j, int8(blk[2+j]), q)
		}
	}
	y := make([]float32, 32)
	if err := DequantizeRowQ8_0(blk, y); err != nil {
		t.Fatal(err)
	}
	for j := range y {
		if y[j] != float32(int8(blk[2+j]))*F16ToF32(F32ToF16(16.0/127)) {
			t.Fatalf("y[%d] = %g", j, y[j])
		}
		if math.Abs(float64(y[j]-x[j])) > 0.07 {
			t.Errorf("y[%d] = %g, x = %g", j, y[j], x[j])
		}
	}
	zero := make([]float32, 32)
	QuantizeRowQ8_0(zero, blk)
	for _, b := range blk {
		if b != 0 {
			t.Fatal("zero block not zero")
		}
	}
	if QuantizeRowQ8_0(x[:31], blk) == nil || DequantizeRowQ8_0(blk[:10], y) == nil {
		t.Error("bad sizes accepted")
	}
}

func TestQ4_0Block(t *testing.T) {
	x := make([]float32, 32)
	for j := range x {
		x[j] = float32(j - 16)
	}
	blk := make([]byte, BlockQ4_0Size)
	if err := QuantizeRowQ4_0(x, blk); err != nil {
		t.Fatal(err)
	}
	// max-abs keeping sign is -16: d = 2, q = min(15, trunc(x/2 + 8.5)).
	if d := F16ToF32(binary.LittleEndian.Uint16(blk)); d != 2 {
		t.Fatalf("d = %g, want 2", d)
	}
	for j := 0; j < 16; j++ {
		lo := byte(min(15, int((x[j]/2)+8.5)))
		hi := byte(min(15, int((x[j+16]/2)+8.5)))
		if blk[2+j] != lo|hi<<4 {
			t.Errorf("byte %d = %#02x, want %#02x", j, blk[2+j], lo|hi<<4)
		}
	}
	if blk[2] != 0x80 {
		t.Errorf("byte 0 = %#02x, want 0x80", blk[2])
	}
	y := make([]float32, 32)
	if err := DequantizeRowQ4_0(blk, y); err != nil {
		t.Fatal(err)
	}
	want := map[int]float32{0: -16, 31: 14, 17: 2, 15: 0, 16: 0}
	for j, w := range want {
		if y[j] != w {
			t.Errorf("y[%d] = %g, want %g", j, y[j], w)
		}
	}
	r := rand.New(rand.NewPCG(3, 4))
	xs := make([]float32, 32*64)
	for i := range xs {
		xs[i] = float32(r.NormFloat64())
	}
	q := make([]byte, 64*BlockQ4_0Size)
	ys := make([]float32, len(xs))
	QuantizeRowQ4_0(xs, q)
	DequantizeRowQ4_0(q, ys)
	var num, den float64
	for i := range xs {
		num += float64(xs[i]-ys[i]) * float64(xs[i]-ys[i])
		den += float64(xs[i]) * float64(xs[i])
	}
	if num/den > 0.02 {
		t.Errorf("q4_0 relative error %g", num/den)
	}
}

func FuzzF32ToF16(f *testing.F) {
	f.Add(uint32(0x3f800000))
	f.Add(uint32(0x33800001))
	f.Fuzz(func(t *testing.T, bits uint32) {
		v := math.Float32frombits(bits)
		if math.IsNaN(float64(v)) {
			if F32ToF16(v)&0x7fff != 0x7e00 {
				t.Fatal("NaN not quiet")
			}
			return
		}
		nearestHalf(t, v, F32ToF16(v))
	})
}
