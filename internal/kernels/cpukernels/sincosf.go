package cpukernels

import "math"

// sincosTab is one of the two polynomial sets of Sincosf: the second
// computes -cos instead of cos (and the same sine), which gives the
// negation of quadrants 2 and 3 for free.
type sincosTab struct {
	c0, c1, c2, c3, c4, s1, s2, s3 float64
}

// The coefficients of Sincosf's polynomials on [-π/4, π/4] (those of
// glibc's and Arm's optimized-routines' sinf, cosf and sincosf), and the
// reduction's constants: 2/π·2^24, π/2, π·2^-64.
var (
	sincosTabs = [2]sincosTab{
		{c0: 1, c1: -0x1.ffffffd0c621cp-2, c2: 0x1.55553e1068f19p-5, c3: -0x1.6c087e89a359dp-10, c4: 0x1.99343027bf8c3p-16,
			s1: -0x1.555545995a603p-3, s2: 0x1.1107605230bc4p-7, s3: -0x1.994eb3774cf24p-13},
		{c0: -1, c1: 0x1.ffffffd0c621cp-2, c2: -0x1.55553e1068f19p-5, c3: 0x1.6c087e89a359dp-10, c4: -0x1.99343027bf8c3p-16,
			s1: -0x1.555545995a603p-3, s2: 0x1.1107605230bc4p-7, s3: -0x1.994eb3774cf24p-13},
	}
	sincosSign = [4]float64{1, -1, -1, 1}
	// invPio4 holds 4/π to 192 bits, 8 new bits an entry (a 32-bit
	// window at each byte offset).
	invPio4 = [24]uint32{
		0xa2, 0xa2f9, 0xa2f983, 0xa2f9836e, 0xf9836e4e, 0x836e4e44, 0x6e4e4415, 0x4e441529,
		0x441529fc, 0x1529fc27, 0x29fc2757, 0xfc2757d1, 0x2757d1f5, 0x57d1f534, 0xd1f534dd, 0xf534ddc0,
		0x34ddc0db, 0xddc0db62, 0xc0db6295, 0xdb629599, 0x6295993c, 0x95993c43, 0x993c4390, 0x3c439041,
	}
)

const (
	sincosHpiInv = 0x1.45F306DC9C883p+23 // 2/π · 2^24
	sincosHpi    = 0x1.921FB54442D18p0   // π/2
	sincosPi64   = 0x1.921FB54442D18p-62 // π · 2^-64
)

// Sincosf returns sin(x) and cos(x) as glibc's sinf and cosf compute them
// on a CPU with FMA (the libm that ggml's CPU backend calls in its ROPE
// cache, ggml_rope_cache_init): float64 polynomials on [-π/4, π/4] after
// a one-step reduction below 120 and a 192-bit integer one above, each
// a + b·c fused as GCC compiles glibc's FMA variant. The results are
// within 0.56 ULP of the true values and the same bits as glibc's.
func Sincosf(y float32) (sin, cos float32) {
	top := math.Float32bits(y) >> 20 & 0x7ff
	x := float64(y)
	switch {
	case top < 0x3f4: // |y| < 0.75 (glibc's abstop12(y) < abstop12(π/4))
		if top < 0x398 { // |y| < 2^-12
			return y, 1
		}
		return sincosPoly(x, x*x, &sincosTabs[0], 0)
	case top < 0x42f: // |y| < 120
		r := x * sincosHpiInv
		n := (int32(r) + 0x800000) >> 24
		x = math.FMA(-float64(n), sincosHpi, x)
		t := &sincosTabs[0]
		if n&2 != 0 {
			t = &sincosTabs[1]
		}
		return sincosPoly(x*sincosSign[n&3], x*x, t, n)
	case top < 0x7f8:
		xi := math.Float32bits(y)
		sign := int32(xi >> 31)
		var n int32
		x, n = sincosReduceLarge(xi)
		t := &sincosTabs[0]
		if (n+sign)&2 != 0 {
			t = &sincosTabs[1]
		}
		return sincosPoly(x*sincosSign[(n+sign)&3], x*x, t, n)
	}
	nan := y - y
	return nan, nan
}

// sincosPoly evaluates Sincosf's polynomials at x (x2 = x·x): the sine's
// odd one and the cosine's even one, swapped for an odd quadrant n.
func sincosPoly(x, x2 float64, t *sincosTab, n int32) (sin, cos float32) {
	x4 := x2 * x2
	x3 := x2 * x
	c2 := math.FMA(x2, t.c4, t.c3)
	s1 := math.FMA(x2, t.s3, t.s2)
	c1 := math.FMA(x2, t.c1, t.c0)
	x5 := x3 * x2
	x6 := x4 * x2
	s := math.FMA(x3, t.s1, x)
	c := math.FMA(x4, t.c2, c1)
	sp, cp := float32(math.FMA(x5, s1, s)), float32(math.FMA(x6, c2, c))
	if n&1 != 0 {
		return cp, sp
	}
	return sp, cp
}

// sincosReduceLarge reduces the float32 of bits xi (|x| ≥ 2, sign
// ignored) modulo π/2 with invPio4: a 32×96-bit product gives x·4/π's
// fraction exactly as a 2.62-bit fixed-point number, whose nearest
// integer is the quadrant n and whose rest times π/4 the reduced value.
func sincosReduceLarge(xi uint32) (float64, int32) {
	arr := invPio4[(xi>>26)&15:]
	shift := (xi >> 23) & 7
	xi = (xi&0xffffff | 0x800000) << shift
	res0 := uint64(xi * arr[0])
	res1 := uint64(xi) * uint64(arr[4])
	res2 := uint64(xi) * uint64(arr[8])
	res0 = res2>>32 | res0<<32
	res0 += res1
	n := (res0 + 1<<61) >> 62
	res0 -= n << 62
	return float64(int64(res0)) * sincosPi64, int32(n)
}
