package main

import (
	"github.com/mmcloughlin/avo/attr"
	"github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// expBits are the constants of the exp that vec_amd64.s's kernels and
// swigluAVX512 compute (genVec's expConsts take their bits from here), in
// the order swigluAVX512 keeps them in Z16..Z27.
var expBits = []struct {
	name string
	bits uint32
}{
	{"log2e", 0x3fb8aa3b}, {"magic", 0x4b40007f}, {"ln2hi", 0x3f318000}, {"ln2lo", 0xb95e8083},
	{"c6", 0x3ab43e11}, {"c5", 0x3c091dc7}, {"one", 0x3f800000}, {"exphi", 0x42b20000},
	{"explo", 0xc2d00000}, {"c4", 0x3d2aadac}, {"c3", 0x3e2aaa47}, {"c2", 0x3efffffc},
}

// genSwiglu writes swiglu_amd64.s: SWIGLU's fused row kernel at AVX-512.
func genSwiglu(c *build.Context) {
	tab := c.StaticGlobal("swigluconsts")
	c.DataAttributes(attr.RODATA | attr.NOPTR)
	for i, k := range expBits {
		c.AddDatum(4*i, operand.U32(k.bits))
	}
	fn(c, "swigluAVX512", "func(dst, x, gate *float32, n int)",
		"dst[i] = x[i] / (1 + exp(-x[i])) * gate[i] for n a multiple of 32: one pass over the",
		"three rows, 32 elements a step, exp(-x) as vec_amd64.s's EXPV computes it (the same",
		"operations in the same order, 16 lanes wide), so results are bit for bit those of",
		"siluAVX2 then mulAVX2.")
	c.Load(c.Param("dst"), reg.RDI)
	c.Load(c.Param("x"), reg.RSI)
	c.Load(c.Param("gate"), reg.RDX)
	c.Load(c.Param("n"), reg.RCX)
	c.SHRQ(operand.Imm(5), reg.RCX)
	k := func(i int) reg.VecPhysical { return avx512.v[16+i] }
	for i := range expBits {
		c.VBROADCASTSS(tab.Offset(4*i), k(i))
	}
	log2e, magic, ln2hi, ln2lo, c6, c5, one, exphi, explo, c4, c3, c2 := k(0), k(1), k(2), k(3), k(4), k(5), k(6), k(7), k(8), k(9), k(10), k(11)
	zero := avx512.v[28]
	c.VPXORD(zero, zero, zero)
	c.Label("swigluloop")
	for half := range 2 {
		b := 6 * half
		xv, X, T, P, R, Q := avx512.v[b], avx512.v[b+1], avx512.v[b+2], avx512.v[b+3], avx512.v[b+4], avx512.v[b+5]
		c.VMOVUPS(at(reg.RSI, 64*half), xv)
		c.VSUBPS(xv, zero, X) // X = -x
		// EXPV(X, T, P, R, Q): P = exp(X).
		c.VMINPS(X, exphi, X)
		c.VMAXPS(X, explo, X)
		c.VMOVAPS(magic, T)
		c.VFMADD231PS(log2e, X, T)
		c.VSUBPS(magic, T, P)
		c.VMOVAPS(X, R)
		c.VFNMADD231PS(ln2hi, P, R)
		c.VFNMADD231PS(ln2lo, P, R)
		c.VCVTPS2DQ(P, X)
		c.VMULPS(R, R, Q)
		c.VMOVAPS(c5, T)
		c.VFMADD213PS(c4, R, T)
		c.VMOVAPS(c3, P)
		c.VFMADD213PS(c2, R, P)
		c.VFMADD231PS(c6, Q, T)
		c.VFMADD213PS(P, Q, T)
		c.VADDPS(one, R, P)
		c.VFMADD213PS(P, Q, T)
		c.VPSRAD(operand.Imm(1), X, R)
		c.VPSUBD(R, X, X)
		c.VPSLLD(operand.Imm(23), R, R)
		c.VPADDD(one, R, R)
		c.VPSLLD(operand.Imm(23), X, X)
		c.VPADDD(one, X, X)
		c.VMULPS(R, T, T)
		c.VMULPS(X, T, P)
		// silu: x / (1 + exp(-x)); then the gate.
		c.VADDPS(one, P, P)
		c.VDIVPS(P, xv, xv)
		c.VMULPS(at(reg.RDX, 64*half), xv, xv)
		c.VMOVUPS(xv, at(reg.RDI, 64*half))
	}
	c.ADDQ(operand.I32(128), reg.RSI)
	c.ADDQ(operand.I32(128), reg.RDX)
	c.ADDQ(operand.I32(128), reg.RDI)
	c.DECQ(reg.RCX)
	c.JNZ(operand.LabelRef("swigluloop"))
	c.VZEROUPPER()
	c.RET()
}

// expBit returns the bits of expBits' constant called name.
func expBit(name string) uint32 {
	for _, k := range expBits {
		if k.name == name {
			return k.bits
		}
	}
	panic("asmgen: no exp constant " + name)
}
