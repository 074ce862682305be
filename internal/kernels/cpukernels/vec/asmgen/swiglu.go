package main

import (
	"fmt"
	"math/bits"

	"github.com/mmcloughlin/avo/attr"
	"github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// expBits are the constants of the exp that vec_amd64.s's kernels and
// swigluAVX512 compute (genVec's expConsts and genSwiglu take their bits
// from here).
var expBits = []struct {
	name string
	bits uint32
}{
	{"log2e", 0x3fb8aa3b}, {"magic", 0x4b40007f}, {"ln2hi", 0x3f318000}, {"ln2lo", 0xb95e8083},
	{"c6", 0x3ab43e11}, {"c5", 0x3c091dc7}, {"one", 0x3f800000}, {"exphi", 0x42b20000},
	{"explo", 0xc2d00000}, {"c4", 0x3d2aadac}, {"c3", 0x3e2aaa47}, {"c2", 0x3efffffc},
}

// swigluVecs is how many 16-lane vectors swigluAVX512 computes side by
// side, each step of the exp issued for all of them before the next: the
// exp is a chain of about twenty dependent operations, and one vector's
// chain after another filled the scheduler with operations that wait.
const swigluVecs = 4

// swigluPrefetch is how far ahead (bytes) swigluStreamAVX512 prefetches x
// and the gate: the next 4 KB page, which the hardware prefetchers do not
// enter before the loads do.
const swigluPrefetch = 4096

// genSwiglu writes swiglu_amd64.s: SWIGLU's fused row kernel at AVX-512,
// swigluAVX512, and swigluStreamAVX512, the same kernel prefetching x and
// the gate swigluPrefetch bytes ahead (every line of both), for rows that
// come from memory rather than the cache. Both compute exp(-x) with
// EXPV's roundings but fewer operations:
//
//   - EXPV clamps -x to [-104, 89]; here |x| is clamped to 104 with x's
//     sign (one VRANGEPS): for -x in (89, 104] both give +Inf, as exp
//     overflows there anyway.
//   - EXPV's steps on -x are done on x with each sign flipped (round to
//     nearest is symmetric, so every rounding is the same): n =
//     round(-x·log2e) by the magic number, -r = x + n·ln2hi + n·ln2lo,
//     and the polynomial's odd terms take -r with their product's sign
//     flipped (VFNMADD), so no negation is needed.
//   - EXPV scales by 2^(n>>1), then by 2^(n-(n>>1)): both factors are
//     normal and the first product is exact, so its result is p·2^n
//     rounded once, which is what one VSCALEFPS computes.
//
// swigluVecs vectors go side by side, each step issued for all of them
// before the next; x is read again for the division (registers).
// TestSwiGLU and TestSwiGLUSweep check the bits against SiLU then Mul.
func genSwiglu(c *build.Context) {
	tab := c.StaticGlobal("swigluconsts")
	c.DataAttributes(attr.RODATA | attr.NOPTR)
	// Z20..Z28 hold the first nine (bound: the clamp of |x|); c5, c3 and
	// magic are also broadcast from memory into a vector's registers
	// (a load instead of a register move).
	consts := []uint32{expBit("log2e"), expBit("magic"), expBit("ln2hi"), expBit("ln2lo"), expBit("c6"),
		expBit("one"), 0x42d00000 /* 104 */, expBit("c4"), expBit("c2"), expBit("c5"), expBit("c3")}
	for i, b := range consts {
		c.AddDatum(4*i, operand.U32(b))
	}
	const step = 16 * swigluVecs
	fn(c, "swigluAVX512", "func(dst, x, gate *float32, n int)",
		fmt.Sprintf("dst[i] = x[i] / (1 + exp(-x[i])) * gate[i] for n a multiple of %d: one pass over the", step),
		fmt.Sprintf("three rows, %d elements a step, exp(-x) with the roundings of vec_amd64.s's EXPV", step),
		"(see genSwiglu), so results are bit for bit those of siluAVX2 then mulAVX2.")
	swigluBody(c, tab, "swigluloop", 0)
	fn(c, "swigluStreamAVX512", "func(dst, x, gate *float32, n int)",
		fmt.Sprintf("swigluAVX512, prefetching x and gate %d bytes ahead (the same bits).", swigluPrefetch))
	swigluBody(c, tab, "swiglustreamloop", swigluPrefetch)
}

// swigluBody is the body of genSwiglu's kernels, prefetching x and the
// gate prefetch bytes ahead where it is not 0.
func swigluBody(c *build.Context, tab operand.Mem, loop string, prefetch int) {
	const step = 16 * swigluVecs
	c.Load(c.Param("dst"), reg.RDI)
	c.Load(c.Param("x"), reg.RSI)
	c.Load(c.Param("gate"), reg.RDX)
	c.Load(c.Param("n"), reg.RCX)
	c.SHRQ(operand.Imm(uint64(bits.TrailingZeros(step))), reg.RCX)
	k := func(i int) reg.VecPhysical { return avx512.v[20+i] }
	for i := range 9 {
		c.VBROADCASTSS(tab.Offset(4*i), k(i))
	}
	log2e, magic, ln2hi, ln2lo, c6, one, bound, c4, c2 := k(0), k(1), k(2), k(3), k(4), k(5), k(6), k(7), k(8)
	magicMem, c5Mem, c3Mem := tab.Offset(4), tab.Offset(36), tab.Offset(40)
	type vregs struct{ X, T, N, Q, P reg.VecPhysical }
	vs := make([]vregs, swigluVecs)
	for i := range vs {
		v := avx512.v[5*i:]
		vs[i] = vregs{v[0], v[1], v[2], v[3], v[4]}
	}
	each := func(f func(i int, v vregs)) {
		for i, v := range vs {
			f(i, v)
		}
	}
	c.Label(loop)
	if prefetch != 0 {
		for i := range swigluVecs {
			c.PREFETCHT0(at(reg.RSI, prefetch+64*i))
			c.PREFETCHT0(at(reg.RDX, prefetch+64*i))
		}
	}
	each(func(i int, v vregs) { c.VMOVUPS(at(reg.RSI, 64*i), v.X) })
	each(func(i int, v vregs) { c.VRANGEPS(operand.Imm(2), bound, v.X, v.X) })
	each(func(i int, v vregs) { c.VBROADCASTSS(magicMem, v.T) })
	each(func(i int, v vregs) { c.VFNMADD231PS(log2e, v.X, v.T) })
	each(func(i int, v vregs) { c.VSUBPS(magic, v.T, v.N) })
	each(func(i int, v vregs) { c.VFMADD231PS(ln2hi, v.N, v.X) })
	each(func(i int, v vregs) { c.VFMADD231PS(ln2lo, v.N, v.X) })
	each(func(i int, v vregs) { c.VMULPS(v.X, v.X, v.Q) })
	each(func(i int, v vregs) { c.VBROADCASTSS(c5Mem, v.T) })
	each(func(i int, v vregs) { c.VFNMADD213PS(c4, v.X, v.T) })
	each(func(i int, v vregs) { c.VBROADCASTSS(c3Mem, v.P) })
	each(func(i int, v vregs) { c.VFNMADD213PS(c2, v.X, v.P) })
	each(func(i int, v vregs) { c.VFMADD231PS(c6, v.Q, v.T) })
	each(func(i int, v vregs) { c.VFMADD213PS(v.P, v.Q, v.T) })
	each(func(i int, v vregs) { c.VSUBPS(v.X, one, v.P) })
	each(func(i int, v vregs) { c.VFMADD213PS(v.P, v.Q, v.T) })
	each(func(i int, v vregs) { c.VSCALEFPS(v.N, v.T, v.T) })
	each(func(i int, v vregs) { c.VADDPS(one, v.T, v.T) })
	each(func(i int, v vregs) { c.VMOVUPS(at(reg.RSI, 64*i), v.Q) })
	each(func(i int, v vregs) { c.VDIVPS(v.T, v.Q, v.Q) })
	each(func(i int, v vregs) { c.VMULPS(at(reg.RDX, 64*i), v.Q, v.Q) })
	each(func(i int, v vregs) { c.VMOVUPS(v.Q, at(reg.RDI, 64*i)) })
	c.ADDQ(operand.I32(4*step), reg.RSI)
	c.ADDQ(operand.I32(4*step), reg.RDX)
	c.ADDQ(operand.I32(4*step), reg.RDI)
	c.DECQ(reg.RCX)
	c.JNZ(operand.LabelRef(loop))
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
