package main

import (
	"math"

	"github.com/mmcloughlin/avo/attr"
	"github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// sincosfDoubles are sincosfAVX512's float64 constants, in the order of
// its table: 2/π·2^24, π/2, then cpukernels.Sincosf's first polynomial
// set (c0..c4, s1..s3).
var sincosfDoubles = []float64{
	0x1.45F306DC9C883p+23, 0x1.921FB54442D18p0,
	1, -0x1.ffffffd0c621cp-2, 0x1.55553e1068f19p-5, -0x1.6c087e89a359dp-10, 0x1.99343027bf8c3p-16,
	-0x1.555545995a603p-3, 0x1.1107605230bc4p-7, -0x1.994eb3774cf24p-13,
}

// genSincosf writes sincosf_amd64.s: cpukernels.Sincosf's one-step branch
// (|x| < 120) for 8 float32 lanes a step in float64 at AVX-512, each
// operation Sincosf's (the same FMAs, the same truncation to the
// quadrant n): the sine's and cosine's polynomials of the reduced value,
// swapped for odd n (a blend), each negated where glibc's sign table or
// its second polynomial set negates it (an XOR of the float32 sign: the
// rounding to float32 is symmetric). Lanes outside that branch (tiny,
// ≥ 120, not finite) get garbage the caller replaces (vec.Sincosf).
func genSincosf(c *build.Context) {
	tab := c.StaticGlobal("sincosfconsts")
	c.DataAttributes(attr.RODATA | attr.NOPTR)
	for i, v := range sincosfDoubles {
		c.AddDatum(8*i, operand.U64(math.Float64bits(v)))
	}
	ints := 8 * len(sincosfDoubles)
	for i, v := range []uint32{0x800000, 1, 0x80000000} {
		c.AddDatum(ints+4*i, operand.U32(v))
	}
	fn(c, "sincosfAVX512", "func(sin, cos, x *float32, n int)",
		"sin[i], cos[i] = cpukernels.Sincosf(x[i]) for 0.75 ≤ |x[i]| < 120 (and for 2^-12 ≤ |x[i]| < 0.75, where",
		"the quadrant is 0 and the reduction exact), i < n, n a multiple of 8.")
	c.Load(c.Param("sin"), reg.RDI)
	c.Load(c.Param("cos"), reg.R8)
	c.Load(c.Param("x"), reg.RSI)
	c.Load(c.Param("n"), reg.RCX)
	z := avx512.v
	k := func(i int) reg.VecPhysical { return z[16+i] }
	for i := range sincosfDoubles {
		c.VBROADCASTSD(tab.Offset(8*i), k(i))
	}
	hpiInv, hpi, c0, c1, c2, c3, c4, s1, s2, s3 := k(0), k(1), k(2), k(3), k(4), k(5), k(6), k(7), k(8), k(9)
	round, one, sign := reg.Y28, reg.Y29, reg.Y30
	c.VPBROADCASTD(tab.Offset(ints), round)
	c.VPBROADCASTD(tab.Offset(ints+4), one)
	c.VPBROADCASTD(tab.Offset(ints+8), sign)
	y := avx2.v
	c.Label("loop")
	c.VCVTPS2PD(at(reg.RSI, 0), z[0])     // x
	c.VMULPD(hpiInv, z[0], z[1])          // r = x·2/π·2^24
	c.VCVTTPD2DQ(z[1], y[2])              // (int32)r
	c.VPADDD(round, y[2], y[2])           //
	c.VPSRAD(operand.Imm(24), y[2], y[2]) // n
	c.VCVTDQ2PD(y[2], z[3])               //
	c.VFNMADD231PD(hpi, z[3], z[0])       // x -= n·π/2, one rounding
	c.VMULPD(z[0], z[0], z[4])            // x2
	c.VMULPD(z[4], z[4], z[5])            // x4
	c.VMULPD(z[0], z[4], z[6])            // x3
	c.VMOVAPD(c3, z[7])
	c.VFMADD231PD(c4, z[4], z[7]) // c2 = x2·c4 + c3
	c.VMOVAPD(s2, z[8])
	c.VFMADD231PD(s3, z[4], z[8]) // s1 = x2·s3 + s2
	c.VMOVAPD(c0, z[9])
	c.VFMADD231PD(c1, z[4], z[9])    // c1 = x2·c1 + c0
	c.VMULPD(z[4], z[6], z[10])      // x5
	c.VMULPD(z[4], z[5], z[11])      // x6
	c.VFMADD231PD(s1, z[6], z[0])    // s = x3·s1 + x
	c.VFMADD231PD(c2, z[5], z[9])    // c = x4·c2 + c1
	c.VFMADD231PD(z[8], z[10], z[0]) // sin poly = x5·s1 + s
	c.VFMADD231PD(z[7], z[11], z[9]) // cos poly = x6·c2 + c
	c.VCVTPD2PS(z[0], y[12])
	c.VCVTPD2PS(z[9], y[13])
	c.VPTESTMD(one, y[2], reg.K1) // odd quadrant: swap
	c.VBLENDMPS(y[13], y[12], reg.K1, y[14])
	c.VBLENDMPS(y[12], y[13], reg.K1, y[15])
	c.VPSLLD(operand.Imm(30), y[2], y[3]) // sin negated for n&2
	c.VPANDD(sign, y[3], y[3])
	c.VPXORD(y[3], y[14], y[14])
	c.VPADDD(one, y[2], y[2]) // cos negated for (n+1)&2
	c.VPSLLD(operand.Imm(30), y[2], y[2])
	c.VPANDD(sign, y[2], y[2])
	c.VPXORD(y[2], y[15], y[15])
	c.VMOVUPS(y[14], at(reg.RDI, 0))
	c.VMOVUPS(y[15], at(reg.R8, 0))
	advance(c, 32, 8, reg.RSI, reg.RDI, reg.R8)
	c.JNZ(lbl("loop"))
	c.VZEROUPPER()
	c.RET()
}
