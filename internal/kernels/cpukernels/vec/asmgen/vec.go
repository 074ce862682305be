package main

import (
	"github.com/mmcloughlin/avo/attr"
	"github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// vecOp is an avo vector instruction (OP src, b, dst).
type vecOp func(ops ...operand.Op)

// genVec writes vec_amd64.s: the AVX2 float32 row kernels (element-wise
// ops, dot, sums, max, exp, SiLU, the soft-max prelude), a family per
// function below.
func genVec(c *build.Context) {
	k := expConsts(c)
	for _, op := range []struct {
		name string
		f    vecOp
	}{{"add", c.VADDPS}, {"sub", c.VSUBPS}, {"mul", c.VMULPS}, {"div", c.VDIVPS}} {
		binOp(c, op.name+"AVX2", op.f, false)
		binOp(c, op.name+"NTAVX2", op.f, true)
	}
	for _, op := range []struct {
		name string
		f    vecOp
	}{{"scale", c.VMULPS}, {"addScalar", c.VADDPS}} {
		scalarOp(c, op.name+"AVX2", op.f, false)
		scalarOp(c, op.name+"NTAVX2", op.f, true)
	}
	scaleAdd(c)
	dot(c)
	sum(c, "sumAVX2", "sum", false)
	sum(c, "sumSqAVX2", "sq", true)
	maxK(c)
	expSub(c, "expSubAVX2", k, true)
	expSub(c, "expSub1AVX2", k, false)
	silu(c, k)
	scaleMaskMax(c)
}

// y is the AVX2 register file; lbl names a label of the active function.
var y = avx2.v

func lbl(s string) operand.LabelRef { return operand.LabelRef(s) }

// ret is the frame address of the active function's result.
func ret(c *build.Context) operand.Mem {
	b, err := c.ReturnIndex(0).Resolve()
	if err != nil {
		panic(err) // a signature without a result in this generator
	}
	return b.Addr
}

// store writes a result vector with an ordinary or a non-temporal store.
func store(c *build.Context, nt bool, v reg.VecPhysical, m operand.Mem) {
	if nt {
		c.VMOVNTPS(v, m)
	} else {
		c.VMOVUPS(v, m)
	}
}

// end ends a kernel: SFENCE after non-temporal stores (nt), VZEROUPPER,
// RET.
func end(c *build.Context, nt bool) {
	if nt {
		c.SFENCE()
	}
	c.VZEROUPPER()
	c.RET()
}

// ntDoc is the note every NT variant carries.
const ntDoc = "With NT the stores are non-temporal (dst 32-byte aligned) and end with SFENCE: for outputs too large to stay in cache."

// countLoop writes "label: CMPQ CX, $n; JL next" (the head of a loop that
// takes n elements a step while CX has them).
func countLoop(c *build.Context, label string, n int, next string) {
	c.Label(label)
	c.CMPQ(reg.RCX, operand.Imm(uint64(n)))
	c.JL(lbl(next))
}

// advance adds bytes to each pointer and subtracts n from CX.
func advance(c *build.Context, bytes, n int, ptrs ...reg.GPPhysical) {
	for _, p := range ptrs {
		c.ADDQ(operand.Imm(uint64(bytes)), p)
	}
	c.SUBQ(operand.Imm(uint64(n)), reg.RCX)
}

// binOp: dst[i] = a[i] OP b[i] over n (a multiple of 8) float32s, four
// vectors a step, then one.
func binOp(c *build.Context, name string, op vecOp, nt bool) {
	fn(c, name, "func(dst, a, b *float32, n int)", "dst[i] = a[i] OP b[i] for n a multiple of 8.", ntDoc)
	c.Load(c.Param("dst"), reg.RDI)
	c.Load(c.Param("a"), reg.RSI)
	c.Load(c.Param("b"), reg.RDX)
	c.Load(c.Param("n"), reg.RCX)
	countLoop(c, "loop32", 32, "loop8")
	for i := range 4 {
		c.VMOVUPS(at(reg.RSI, 32*i), y[i])
	}
	for i := range 4 {
		op(at(reg.RDX, 32*i), y[i], y[i])
	}
	for i := range 4 {
		store(c, nt, y[i], at(reg.RDI, 32*i))
	}
	advance(c, 128, 32, reg.RSI, reg.RDX, reg.RDI)
	c.JMP(lbl("loop32"))
	countLoop(c, "loop8", 8, "done")
	c.VMOVUPS(at(reg.RSI, 0), y[0])
	op(at(reg.RDX, 0), y[0], y[0])
	store(c, nt, y[0], at(reg.RDI, 0))
	advance(c, 32, 8, reg.RSI, reg.RDX, reg.RDI)
	c.JMP(lbl("loop8"))
	c.Label("done")
	end(c, nt)
}

// scalarArgs loads (dst, a, n, s) to DI, SI, CX and s broadcast in Y15.
func scalarArgs(c *build.Context) {
	c.Load(c.Param("dst"), reg.RDI)
	c.Load(c.Param("a"), reg.RSI)
	c.Load(c.Param("n"), reg.RCX)
	c.VBROADCASTSS(param(c, "s"), reg.Y15)
}

const scalarSig = "func(dst, a *float32, n int, s float32)"

// scalarOp: dst[i] = a[i] OP s over n (a multiple of 8), s in Y15.
func scalarOp(c *build.Context, name string, op vecOp, nt bool) {
	fn(c, name, scalarSig, "dst[i] = a[i] OP s for n a multiple of 8.", ntDoc)
	scalarArgs(c)
	countLoop(c, "sloop32", 32, "sloop8")
	for i := range 4 {
		op(at(reg.RSI, 32*i), reg.Y15, y[i])
	}
	for i := range 4 {
		store(c, nt, y[i], at(reg.RDI, 32*i))
	}
	advance(c, 128, 32, reg.RSI, reg.RDI)
	c.JMP(lbl("sloop32"))
	countLoop(c, "sloop8", 8, "sdone")
	op(at(reg.RSI, 0), reg.Y15, y[0])
	store(c, nt, y[0], at(reg.RDI, 0))
	advance(c, 32, 8, reg.RSI, reg.RDI)
	c.JMP(lbl("sloop8"))
	c.Label("sdone")
	end(c, nt)
}

// scaleAdd: dst[i] += s*a[i].
func scaleAdd(c *build.Context) {
	fn(c, "scaleAddAVX2", scalarSig, "dst[i] += s*a[i] for n a multiple of 8.")
	scalarArgs(c)
	countLoop(c, "saloop32", 32, "saloop8")
	for i := range 4 {
		c.VMOVUPS(at(reg.RDI, 32*i), y[i])
	}
	for i := range 4 {
		c.VFMADD231PS(at(reg.RSI, 32*i), reg.Y15, y[i])
	}
	for i := range 4 {
		c.VMOVUPS(y[i], at(reg.RDI, 32*i))
	}
	advance(c, 128, 32, reg.RSI, reg.RDI)
	c.JMP(lbl("saloop32"))
	countLoop(c, "saloop8", 8, "sadone")
	c.VMOVUPS(at(reg.RDI, 0), y[0])
	c.VFMADD231PS(at(reg.RSI, 0), reg.Y15, y[0])
	c.VMOVUPS(y[0], at(reg.RDI, 0))
	advance(c, 32, 8, reg.RSI, reg.RDI)
	c.JMP(lbl("saloop8"))
	c.Label("sadone")
	end(c, false)
}

// fold4 adds (pd: as float64) the accumulators Y0..Y3 into Y0.
func fold4(c *build.Context, pd bool) {
	add := c.VADDPS
	if pd {
		add = c.VADDPD
	}
	add(y[1], y[0], y[0])
	add(y[3], y[2], y[2])
	add(y[2], y[0], y[0])
}

// hsumPS leaves the sum of Y0's eight float32 lanes in X0's low lane.
func hsumPS(c *build.Context) {
	c.VEXTRACTF128(operand.Imm(1), reg.Y0, reg.X1)
	c.VADDPS(reg.X1, reg.X0, reg.X0)
	c.VMOVHLPS(reg.X0, reg.X1, reg.X1)
	c.VADDPS(reg.X1, reg.X0, reg.X0)
	c.VMOVSHDUP(reg.X0, reg.X1)
	c.VADDSS(reg.X1, reg.X0, reg.X0)
}

// hsumPD leaves the sum of Y0's four float64 lanes in X0's low lane.
func hsumPD(c *build.Context) {
	c.VEXTRACTF128(operand.Imm(1), reg.Y0, reg.X1)
	c.VADDPD(reg.X1, reg.X0, reg.X0)
	c.VUNPCKHPD(reg.X0, reg.X0, reg.X1)
	c.VADDSD(reg.X1, reg.X0, reg.X0)
}

// hmaxPS leaves the largest of Y0's eight lanes in X0's low lane; the
// operand order keeps the running maximum when the other lane is NaN.
func hmaxPS(c *build.Context) {
	c.VEXTRACTF128(operand.Imm(1), reg.Y0, reg.X1)
	c.VMAXPS(reg.X0, reg.X1, reg.X0)
	c.VMOVHLPS(reg.X0, reg.X1, reg.X1)
	c.VMAXPS(reg.X0, reg.X1, reg.X0)
	c.VMOVSHDUP(reg.X0, reg.X1)
	c.VMAXSS(reg.X0, reg.X1, reg.X0)
}

// dot: the sum of a[i]*b[i], four accumulators.
func dot(c *build.Context) {
	fn(c, "dotAVX2", "func(a, b *float32, n int) float32", "sum_i a[i]*b[i] for n a multiple of 8.")
	c.Load(c.Param("a"), reg.RSI)
	c.Load(c.Param("b"), reg.RDX)
	c.Load(c.Param("n"), reg.RCX)
	for i := range 4 {
		c.VXORPS(y[i], y[i], y[i])
	}
	countLoop(c, "dloop32", 32, "dloop8")
	for i := range 4 {
		c.VMOVUPS(at(reg.RSI, 32*i), y[4+i])
	}
	for i := range 4 {
		c.VFMADD231PS(at(reg.RDX, 32*i), y[4+i], y[i])
	}
	advance(c, 128, 32, reg.RSI, reg.RDX)
	c.JMP(lbl("dloop32"))
	countLoop(c, "dloop8", 8, "ddone")
	c.VMOVUPS(at(reg.RSI, 0), y[4])
	c.VFMADD231PS(at(reg.RDX, 0), y[4], y[0])
	advance(c, 32, 8, reg.RSI, reg.RDX)
	c.JMP(lbl("dloop8"))
	c.Label("ddone")
	fold4(c, false)
	hsumPS(c)
	c.VMOVSS(reg.X0, ret(c))
	end(c, false)
}

// sum: the float64 sum of a[i] (sq: of a[i]²), 16 elements a step in four
// float64 accumulators, then at most one step of 8.
func sum(c *build.Context, name, tag string, sq bool) {
	doc := "sum_i a[i] for n a multiple of 8, accumulated in float64."
	if sq {
		doc = "sum_i a[i]² for n a multiple of 8, accumulated in float64."
	}
	fn(c, name, "func(a *float32, n int) float64", doc)
	c.Load(c.Param("a"), reg.RSI)
	c.Load(c.Param("n"), reg.RCX)
	for i := range 4 {
		c.VXORPD(y[i], y[i], y[i])
	}
	acc := func(i int) {
		if sq {
			c.VFMADD231PD(y[4+i], y[4+i], y[i])
		} else {
			c.VADDPD(y[4+i], y[i], y[i])
		}
	}
	loop16, loop8, done := tag+"loop16", tag+"loop8", tag+"done"
	countLoop(c, loop16, 16, loop8)
	for i := range 4 {
		c.VCVTPS2PD(at(reg.RSI, 16*i), y[4+i])
	}
	for i := range 4 {
		acc(i)
	}
	c.ADDQ(operand.Imm(64), reg.RSI)
	c.SUBQ(operand.Imm(16), reg.RCX)
	c.JMP(lbl(loop16))
	countLoop(c, loop8, 8, done)
	for i := range 2 {
		c.VCVTPS2PD(at(reg.RSI, 16*i), y[4+i])
	}
	for i := range 2 {
		acc(i)
	}
	c.Label(done)
	fold4(c, true)
	hsumPD(c)
	c.VMOVSD(reg.X0, ret(c))
	end(c, false)
}

// maxK: the largest a[i], four running maxima started from the first
// vector. A NaN element never replaces a running maximum.
func maxK(c *build.Context) {
	fn(c, "maxAVX2", "func(a *float32, n int) float32",
		"max_i a[i] for n a multiple of 8 and at least 8. A NaN element never replaces the",
		"running maximum (the operand order of VMAXPS keeps the accumulator).")
	c.Load(c.Param("a"), reg.RSI)
	c.Load(c.Param("n"), reg.RCX)
	c.VMOVUPS(at(reg.RSI, 0), y[0])
	for i := 1; i < 4; i++ {
		c.VMOVUPS(y[0], y[i])
	}
	advance(c, 32, 8, reg.RSI)
	countLoop(c, "mxloop32", 32, "mxloop8")
	for i := range 4 {
		c.VMOVUPS(at(reg.RSI, 32*i), y[4+i])
	}
	for i := range 4 {
		c.VMAXPS(y[i], y[4+i], y[i])
	}
	advance(c, 128, 32, reg.RSI)
	c.JMP(lbl("mxloop32"))
	countLoop(c, "mxloop8", 8, "mxdone")
	c.VMOVUPS(at(reg.RSI, 0), y[4])
	c.VMAXPS(y[0], y[4], y[0])
	advance(c, 32, 8, reg.RSI)
	c.JMP(lbl("mxloop8"))
	c.Label("mxdone")
	c.VMAXPS(y[0], y[1], y[0])
	c.VMAXPS(y[2], y[3], y[2])
	c.VMAXPS(y[0], y[2], y[0])
	hmaxPS(c)
	c.VMOVSS(reg.X0, ret(c))
	end(c, false)
}

// expConstants are the tables of the exp kernel: eight copies each of one
// float32 constant.
type expConstants struct {
	log2e, magic, ln2hi, ln2lo, c6, c5, c4, c3, c2, one, exphi, explo operand.Mem
}

// const8 writes a 32-byte table of eight copies of the float32 bits.
func const8(c *build.Context, name string, bits uint32) operand.Mem {
	m := c.StaticGlobal(name)
	c.DataAttributes(attr.RODATA | attr.NOPTR)
	for i := range 8 {
		c.AddDatum(4*i, operand.U32(bits))
	}
	return m
}

func expConsts(c *build.Context) expConstants {
	return expConstants{
		log2e: const8(c, "log2e", expBit("log2e")), // log2(e)
		magic: const8(c, "magic", expBit("magic")), // 1.5·2^23 + 127: rounds to an integer, biased
		ln2hi: const8(c, "ln2hi", expBit("ln2hi")), // ln 2 = ln2hi + ln2lo
		ln2lo: const8(c, "ln2lo", expBit("ln2lo")),
		c6:    const8(c, "c6", expBit("c6")), // e^r ≈ 1 + r + r²(c2 + c3 r + ... + c6 r⁴)
		c5:    const8(c, "c5", expBit("c5")),
		c4:    const8(c, "c4", expBit("c4")),
		c3:    const8(c, "c3", expBit("c3")),
		c2:    const8(c, "c2", expBit("c2")),
		one:   const8(c, "one", expBit("one")),
		exphi: const8(c, "exphi", expBit("exphi")), // 89: inputs above overflow to +Inf anyway
		explo: const8(c, "explo", expBit("explo")), // -104: inputs below round to 0 anyway
	}
}

// loadExpConsts loads the register-held constants of expV into Y5..Y10
// and Y12 (Y11 is left to the caller).
func loadExpConsts(c *build.Context, k expConstants) {
	for i, m := range []operand.Mem{k.log2e, k.magic, k.ln2hi, k.ln2lo, k.c6, k.c5} {
		c.VMOVUPS(m, y[5+i])
	}
	c.VMOVUPS(k.one, reg.Y12)
}

// expV sets p = exp(x) for eight float32s (x is clobbered; t, r and q are
// scratch; constants from loadExpConsts). x is clamped to [-104, 89] (NaN
// kept), n = round(x·log2 e) comes from adding a magic number, r = x - n·ln 2
// with a two-part ln 2, and e^r is a degree-6 least-squares polynomial
// (relative error 4e-9 on |r| ≤ ln2/2) evaluated in Estrin's order for a
// short dependency chain. 2^n is applied as two normal factors 2^(n>>1) and
// 2^(n-(n>>1)), one multiply each: e^r·2^(n>>1) is exact-range, and the
// second multiply rounds once, so results past 2^127 stay finite up to
// FLT_MAX (x up to 88.7228) and results below 2^-126 come out as correctly
// rounded subnormals instead of 0. A NaN n converts to 0x80000000, whose
// factors are 1, so NaN stays NaN.
func expV(c *build.Context, k expConstants, x, t, p, r, q reg.VecPhysical) {
	c.VMOVUPS(k.exphi, t)
	c.VMINPS(x, t, x)
	c.VMOVUPS(k.explo, t)
	c.VMAXPS(x, t, x)
	c.VMOVAPS(reg.Y6, t)
	c.VFMADD231PS(reg.Y5, x, t)
	c.VSUBPS(reg.Y6, t, p)
	c.VMOVAPS(x, r)
	c.VFNMADD231PS(reg.Y7, p, r)
	c.VFNMADD231PS(reg.Y8, p, r)
	c.VCVTPS2DQ(p, x)
	c.VMULPS(r, r, q)
	c.VMOVAPS(reg.Y10, t)
	c.VFMADD213PS(k.c4, r, t)
	c.VMOVUPS(k.c3, p)
	c.VFMADD213PS(k.c2, r, p)
	c.VFMADD231PS(reg.Y9, q, t)
	c.VFMADD213PS(p, q, t)
	c.VADDPS(reg.Y12, r, p)
	c.VFMADD213PS(p, q, t)
	c.VPSRAD(operand.Imm(1), x, r)
	c.VPSUBD(r, x, x)
	c.VPSLLD(operand.Imm(23), r, r)
	c.VPADDD(reg.Y12, r, r)
	c.VPSLLD(operand.Imm(23), x, x)
	c.VPADDD(reg.Y12, x, x)
	c.VMULPS(r, t, t)
	c.VMULPS(x, t, p)
}

// expSub: dst[i] = exp(s*a[i]-m) (scaled), or exp(a[i]-m), and the sum.
func expSub(c *build.Context, name string, k expConstants, scaled bool) {
	doc := []string{
		"dst[i] = exp(s*a[i]-m) for n a multiple of 8; returns the sum. Blocks of",
		"up to 128 results are summed in float32 lanes (Y14), each block's sum",
		"then in float64 (Y13). The n floats at pf are prefetched meanwhile (the",
		"next row of a soft-max), so that its memory traffic overlaps this row's",
		"arithmetic.",
	}
	if !scaled {
		doc = []string{
			"expSubAVX2 for s = 1 (s is ignored): a subtraction instead of a",
			"multiply-add, which frees the busier multiply pipes.",
		}
	}
	fn(c, name, "func(dst, a *float32, n int, s, m float32, pf *float32) float64", doc...)
	c.Load(c.Param("dst"), reg.RDI)
	c.Load(c.Param("a"), reg.RSI)
	c.Load(c.Param("n"), reg.RCX)
	c.Load(c.Param("pf"), reg.R8)
	c.SHRQ(operand.Imm(3), reg.RCX)
	c.VBROADCASTSS(param(c, "s"), reg.Y11)
	c.VBROADCASTSS(param(c, "m"), reg.Y15)
	loadExpConsts(c, k)
	c.VXORPD(reg.Y13, reg.Y13, reg.Y13)
	c.Label("eblock")
	c.TESTQ(reg.RCX, reg.RCX)
	c.JZ(lbl("edone"))
	c.MOVQ(operand.I32(16), reg.RDX)
	c.CMPQ(reg.RCX, reg.RDX)
	c.CMOVQLT(reg.RCX, reg.RDX)
	c.SUBQ(reg.RDX, reg.RCX)
	c.VXORPS(reg.Y14, reg.Y14, reg.Y14)
	c.Label("eloop")
	c.PREFETCHT0(at(reg.R8, 0))
	c.ADDQ(operand.Imm(32), reg.R8)
	c.VMOVUPS(at(reg.RSI, 0), reg.Y0)
	if scaled {
		c.VFMSUB213PS(reg.Y15, reg.Y11, reg.Y0)
	} else {
		c.VSUBPS(reg.Y15, reg.Y0, reg.Y0)
	}
	expV(c, k, y[0], y[1], y[2], y[3], y[4])
	c.VMOVUPS(reg.Y2, at(reg.RDI, 0))
	c.VADDPS(reg.Y2, reg.Y14, reg.Y14)
	c.ADDQ(operand.Imm(32), reg.RSI)
	c.ADDQ(operand.Imm(32), reg.RDI)
	c.DECQ(reg.RDX)
	c.JNZ(lbl("eloop"))
	c.VCVTPS2PD(reg.X14, reg.Y0)
	c.VADDPD(reg.Y0, reg.Y13, reg.Y13)
	c.VEXTRACTF128(operand.Imm(1), reg.Y14, reg.X14)
	c.VCVTPS2PD(reg.X14, reg.Y0)
	c.VADDPD(reg.Y0, reg.Y13, reg.Y13)
	c.JMP(lbl("eblock"))
	c.Label("edone")
	c.VMOVAPD(reg.Y13, reg.Y0)
	hsumPD(c)
	c.VMOVSD(reg.X0, ret(c))
	end(c, false)
}

// silu: dst[i] = a[i] / (1 + exp(-a[i])).
func silu(c *build.Context, k expConstants) {
	fn(c, "siluAVX2", "func(dst, a *float32, n int)", "dst[i] = a[i] / (1 + exp(-a[i])) for n a multiple of 8.")
	c.Load(c.Param("dst"), reg.RDI)
	c.Load(c.Param("a"), reg.RSI)
	c.Load(c.Param("n"), reg.RCX)
	loadExpConsts(c, k)
	c.VXORPS(reg.Y15, reg.Y15, reg.Y15)
	countLoop(c, "siloop", 8, "sidone")
	c.VMOVUPS(at(reg.RSI, 0), reg.Y13)
	c.VSUBPS(reg.Y13, reg.Y15, reg.Y0)
	expV(c, k, y[0], y[1], y[2], y[3], y[4])
	c.VADDPS(reg.Y12, reg.Y2, reg.Y2)
	c.VDIVPS(reg.Y2, reg.Y13, reg.Y13)
	c.VMOVUPS(reg.Y13, at(reg.RDI, 0))
	advance(c, 32, 8, reg.RSI, reg.RDI)
	c.JMP(lbl("siloop"))
	c.Label("sidone")
	end(c, false)
}

// scaleMaskMax: dst[i] = s*x[i] + t*mask[i] and the largest of them.
func scaleMaskMax(c *build.Context) {
	fn(c, "scaleMaskMaxAVX2", "func(dst, x, mask *float32, n int, s, t float32) float32",
		"dst[i] = s*x[i] + t*mask[i] for n a multiple of 8 (n ≥ 8); returns the",
		"largest dst[i] (a NaN never replaces the running maximum).")
	c.Load(c.Param("dst"), reg.RDI)
	c.Load(c.Param("x"), reg.RSI)
	c.Load(c.Param("mask"), reg.RDX)
	c.Load(c.Param("n"), reg.RCX)
	c.VBROADCASTSS(param(c, "s"), reg.Y14)
	c.VBROADCASTSS(param(c, "t"), reg.Y15)
	c.VMOVUPS(at(reg.RSI, 0), reg.Y0)
	c.VMULPS(reg.Y14, reg.Y0, reg.Y0)
	c.VFMADD231PS(at(reg.RDX, 0), reg.Y15, reg.Y0)
	c.VMOVUPS(reg.Y0, at(reg.RDI, 0))
	c.VMOVAPS(reg.Y0, reg.Y1)
	advance(c, 32, 8, reg.RSI, reg.RDX, reg.RDI)
	countLoop(c, "smloop16", 16, "smloop8")
	for i := range 2 {
		c.VMOVUPS(at(reg.RSI, 32*i), y[2+i])
	}
	for i := range 2 {
		c.VMULPS(reg.Y14, y[2+i], y[2+i])
	}
	for i := range 2 {
		c.VFMADD231PS(at(reg.RDX, 32*i), reg.Y15, y[2+i])
	}
	for i := range 2 {
		c.VMOVUPS(y[2+i], at(reg.RDI, 32*i))
	}
	for i := range 2 {
		c.VMAXPS(y[i], y[2+i], y[i])
	}
	advance(c, 64, 16, reg.RSI, reg.RDX, reg.RDI)
	c.JMP(lbl("smloop16"))
	countLoop(c, "smloop8", 8, "smdone")
	c.VMOVUPS(at(reg.RSI, 0), reg.Y2)
	c.VMULPS(reg.Y14, reg.Y2, reg.Y2)
	c.VFMADD231PS(at(reg.RDX, 0), reg.Y15, reg.Y2)
	c.VMOVUPS(reg.Y2, at(reg.RDI, 0))
	c.VMAXPS(reg.Y0, reg.Y2, reg.Y0)
	c.Label("smdone")
	c.VMAXPS(reg.Y0, reg.Y1, reg.Y0)
	hmaxPS(c)
	c.VMOVSS(reg.X0, ret(c))
	end(c, false)
}
