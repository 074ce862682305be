package main

import (
	"github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// genQDot writes qdot_amd64.s: the AVX2 q8_0 and q4_0 dots against q8_0
// (four rows or one; qDot2's kernels), and the AVX2 q4_K, q5_K and q6_K
// row kernels against q8_K.
func genQDot(c *build.Context) {
	k := qConstants{
		ones16: rep4(c, "qones16", 0x0001000100010001),
		nib:    rep4(c, "qnib", 0x0f0f0f0f0f0f0f0f),
		eight:  rep4(c, "qeight", 0x0808080808080808),
	}
	qDot2(c, "dotQ8x4AVX2", qRowsSig, q8_0Block, 4, k)
	qDot2(c, "dotQ8x1AVX2", qRowSig, q8_0Block, 1, k)
	qDot2(c, "dotQ4x4AVX2", qRowsSig, q4_0Block, 4, k)
	qDot2(c, "dotQ4x1AVX2", qRowSig, q4_0Block, 1, k)
	kk := kConstants{nib: k.nib, three: rep4(c, "kthree", 0x0303030303030303), one: rep4(c, "kone", 0x0101010101010101)}
	k45Row(c, "q4KRowAVX2", false, kk)
	k45Row(c, "q5KRowAVX2", true, kk)
	k6Row(c, kk)
}

// kConstants are the tables of the q4_K, q5_K and q6_K row kernels.
type kConstants struct {
	nib, three, one operand.Mem
}

// The row kernels run nb ≥ 1 super-blocks of one weight row (R8) against
// one q8_K row (R9) and return the float32 dot, with the float steps of
// the Go kernels (qdot_k.go) in order: per super-block the exact int32
// sums, then d·dy times them (no FMA), summed in X15. The unsigned weight
// quants are multiplied with the signed q8_K bytes by VPMADDUBSW into
// 16-bit pair sums (at most 2·63·127, no saturation), which VPMADDWD
// multiplies by the 16-bit group scales and widens to 32-bit sums,
// accumulated in Y0. The group scales go through the frame as 16-bit
// words (BX).

// kRowStart loads (w, y, nb) to R8, R9, CX, points BX at the frame's
// scale words (frame bytes) and loads the nibble mask to Y14.
func kRowStart(c *build.Context, name string, frame int, k kConstants) {
	fn(c, name, "func(w *byte, y *byte, nb int) float32",
		"The dot of one weight row (nb super-blocks) with one q8_K row.")
	c.AllocLocal(frame)
	c.Load(c.Param("w"), reg.R8)
	c.Load(c.Param("y"), reg.R9)
	c.Load(c.Param("nb"), reg.RCX)
	c.LEAQ(operand.Mem{Symbol: operand.Symbol{Name: "sc"}, Disp: -frame, Base: reg.StackPointer}, reg.RBX)
	c.VMOVDQU(k.nib, reg.Y14)
}

// kRowEnd steps R8 by the weight block's bytes and R9 by a q8_K block's,
// loops, and returns X15.
func kRowEnd(c *build.Context, loop string, blockBytes int) {
	c.ADDQ(operand.I32(blockBytes), reg.R8)
	c.ADDQ(operand.I32(292), reg.R9)
	c.DECQ(reg.RCX)
	c.JNZ(lbl(loop))
	c.VMOVSS(reg.X15, ret(c))
	end(c, false)
}

// k45Row writes the q4_K (q5: q5_K) row kernel: per super-block the
// scales (k4Scales), four steps of 64 elements (k4Step), the float sum
// (k4Float).
func k45Row(c *build.Context, name string, q5 bool, k kConstants) {
	kRowStart(c, name, 16, k)
	if q5 {
		c.VMOVDQU(k.one, reg.Y12)
	}
	c.VXORPS(reg.X15, reg.X15, reg.X15)
	loop, qs, bs := "q4krow", 16, 144
	if q5 {
		loop, qs, bs = "q5krow", 48, 176
	}
	c.Label(loop)
	k4Scales(c)
	if q5 {
		c.VMOVDQU(at(reg.R8, 16), reg.Y5) // the fifth bits
	}
	c.LEAQ(at(reg.R8, qs), reg.RSI)
	c.LEAQ(at(reg.R9, 4), reg.RDX)
	c.VPXOR(reg.Y0, reg.Y0, reg.Y0)
	for j := range 4 {
		k4Step(c, j, q5)
	}
	k4Float(c)
	kRowEnd(c, loop, bs)
}

// k4Scales unpacks the 6-bit scales and mins of the q4_K/q5_K block at
// R8 (12 bytes at 4(R8)) to scale words at (BX) and the mins, each twice,
// in the words of Y7 multiplied with the block's 16-quant sums (260(R9)).
func k4Scales(c *build.Context) {
	c.MOVL(at(reg.R8, 4), reg.EAX)
	c.MOVL(at(reg.R8, 8), reg.R10L)
	c.MOVL(at(reg.R8, 12), reg.R11L)
	c.MOVL(reg.EAX, reg.EDI)
	c.ANDL(operand.U32(0x3f3f3f3f), reg.EDI)
	c.MOVL(reg.R11L, reg.R12L)
	c.ANDL(operand.U32(0x0f0f0f0f), reg.R12L)
	c.SHRL(operand.Imm(6), reg.EAX)
	c.ANDL(operand.U32(0x03030303), reg.EAX)
	c.SHLL(operand.Imm(4), reg.EAX)
	c.ORL(reg.EAX, reg.R12L)
	c.MOVL(reg.R10L, reg.R13L)
	c.ANDL(operand.U32(0x3f3f3f3f), reg.R13L)
	c.SHRL(operand.Imm(4), reg.R11L)
	c.ANDL(operand.U32(0x0f0f0f0f), reg.R11L)
	c.SHRL(operand.Imm(6), reg.R10L)
	c.ANDL(operand.U32(0x03030303), reg.R10L)
	c.SHLL(operand.Imm(4), reg.R10L)
	c.ORL(reg.R10L, reg.R11L)
	c.SHLQ(operand.Imm(32), reg.R12)
	c.ORQ(reg.R12, reg.RDI)
	c.SHLQ(operand.Imm(32), reg.R11)
	c.ORQ(reg.R11, reg.R13)
	c.VMOVQ(reg.RDI, reg.X1)
	c.VPMOVZXBW(reg.X1, reg.X1)
	c.VMOVDQU(reg.X1, at(reg.RBX, 0))
	c.VMOVQ(reg.R13, reg.X2)
	c.VPMOVZXBW(reg.X2, reg.X2)
	c.VPUNPCKLWD(reg.X2, reg.X2, reg.X3)
	c.VPUNPCKHWD(reg.X2, reg.X2, reg.X4)
	c.VINSERTI128(operand.Imm(1), reg.X4, reg.Y3, reg.Y3)
	c.VPMADDWD(at(reg.R9, 260), reg.Y3, reg.Y7)
}

// k4Step is step j of a q4_K super-block, 64 elements: the low nibbles of
// the 32 bytes at 32j(SI) against the q8 bytes at 64j(DX) with scale word
// 2j, the high nibbles against 64j+32(DX) with scale 2j+1. With q5 the
// fifth bits are bits 2j and 2j+1 of the qh bytes in Y5 (Y12 ones).
func k4Step(c *build.Context, j int, q5 bool) {
	c.VMOVDQU(at(reg.RSI, 32*j), reg.Y1)
	c.VPSRLW(operand.Imm(4), reg.Y1, reg.Y2)
	c.VPAND(reg.Y14, reg.Y1, reg.Y1)
	c.VPAND(reg.Y14, reg.Y2, reg.Y2)
	if q5 {
		for h, q := range []reg.VecPhysical{reg.Y1, reg.Y2} {
			c.VPSRLW(operand.Imm(uint64(2*j+h)), reg.Y5, reg.Y6)
			c.VPAND(reg.Y12, reg.Y6, reg.Y6)
			c.VPSLLW(operand.Imm(4), reg.Y6, reg.Y6)
			c.VPOR(reg.Y6, q, q)
		}
	}
	c.VPMADDUBSW(at(reg.RDX, 64*j), reg.Y1, reg.Y1)
	c.VPMADDUBSW(at(reg.RDX, 64*j+32), reg.Y2, reg.Y2)
	c.VPBROADCASTW(at(reg.RBX, 4*j), reg.Y3)
	c.VPBROADCASTW(at(reg.RBX, 4*j+2), reg.Y4)
	c.VPMADDWD(reg.Y3, reg.Y1, reg.Y1)
	c.VPMADDWD(reg.Y4, reg.Y2, reg.Y2)
	c.VPADDD(reg.Y1, reg.Y0, reg.Y0)
	c.VPADDD(reg.Y2, reg.Y0, reg.Y0)
}

// k4Float: X15 += (d·dy)·isum − (dmin·dy)·summs for the block at R8, with
// the scaled dots in Y0 and the min sums in Y7.
func k4Float(c *build.Context) {
	c.VPHADDD(reg.Y7, reg.Y0, reg.Y1)
	c.VEXTRACTI128(operand.Imm(1), reg.Y1, reg.X2)
	c.VPADDD(reg.X2, reg.X1, reg.X1)
	c.VPHADDD(reg.X1, reg.X1, reg.X1)
	c.VCVTDQ2PS(reg.X1, reg.X1)
	c.VMOVSHDUP(reg.X1, reg.X2)
	c.VMOVSS(at(reg.R9, 0), reg.X3)
	for i, x := range []reg.VecPhysical{reg.X4, reg.X5} {
		c.VPBROADCASTW(at(reg.R8, 2*i), x)
		c.VCVTPH2PS(x, x)
		c.VMULSS(reg.X3, x, x)
		c.VMULSS([]reg.VecPhysical{reg.X1, reg.X2}[i], x, x)
	}
	c.VSUBSS(reg.X5, reg.X4, reg.X4)
	c.VADDSS(reg.X4, reg.X15, reg.X15)
}

// k6Row writes the q6_K row kernel: per super-block the 16 signed scales
// to words at (BX) and, times the q8_K group sums, in Y12 (the −32 offset
// of every quant is subtracted as 32·Σ scale·bsum), two halves of 128
// elements (k6Half), then the float sum.
func k6Row(c *build.Context, k kConstants) {
	kRowStart(c, "q6KRowAVX2", 32, k)
	c.VMOVDQU(k.three, reg.Y13)
	c.VXORPS(reg.X15, reg.X15, reg.X15)
	c.Label("q6krow")
	c.VPMOVSXBW(at(reg.R8, 192), reg.Y11)
	c.VMOVDQU(reg.Y11, at(reg.RBX, 0))
	c.VPMADDWD(at(reg.R9, 260), reg.Y11, reg.Y12)
	c.MOVQ(reg.R8, reg.RSI)
	c.LEAQ(at(reg.R8, 128), reg.RDI)
	c.LEAQ(at(reg.R9, 4), reg.RDX)
	c.VPXOR(reg.Y0, reg.Y0, reg.Y0)
	k6Half(c, 0)
	k6Half(c, 1)
	c.VPSLLD(operand.Imm(5), reg.Y12, reg.Y12)
	c.VPSUBD(reg.Y12, reg.Y0, reg.Y0)
	// The int32 lanes of Y0 summed into lane 0 of X0.
	hsumI32(c, reg.Y0, reg.X1)
	c.VCVTDQ2PS(reg.X0, reg.X0)
	c.VMOVSS(at(reg.R9, 0), reg.X3)
	c.VPBROADCASTW(at(reg.R8, 208), reg.X4)
	c.VCVTPH2PS(reg.X4, reg.X4)
	c.VMULSS(reg.X3, reg.X4, reg.X4)
	c.VMULSS(reg.X0, reg.X4, reg.X4)
	c.VADDSS(reg.X4, reg.X15, reg.X15)
	kRowEnd(c, "q6krow", 210)
}

// k6Half is half h of a q6_K super-block, 128 elements: 64 ql bytes at
// 64h(SI) and 32 qh bytes at 32h(DI) make four vectors of 32 6-bit quants
// (low or high nibbles of either 32 ql bytes, two bits of qh above), each
// multiplied with 32 q8 bytes from 128h+32j(DX) and the scale words
// 16h+4j and 16h+4j+2 (BX) of its two 16-byte lanes.
func k6Half(c *build.Context, h int) {
	ql := []reg.VecPhysical{reg.Y1, reg.Y2}
	c.VMOVDQU(at(reg.RSI, 64*h), reg.Y1)
	c.VMOVDQU(at(reg.RSI, 64*h+32), reg.Y2)
	c.VMOVDQU(at(reg.RDI, 32*h), reg.Y3)
	q := []reg.VecPhysical{reg.Y4, reg.Y6, reg.Y7, reg.Y8}
	for j, d := range q {
		if j < 2 {
			c.VPAND(reg.Y14, ql[j%2], d)
		} else {
			c.VPSRLW(operand.Imm(4), ql[j%2], d)
			c.VPAND(reg.Y14, d, d)
		}
		if j == 0 {
			c.VPAND(reg.Y13, reg.Y3, reg.Y5)
		} else {
			c.VPSRLW(operand.Imm(uint64(2*j)), reg.Y3, reg.Y5)
			c.VPAND(reg.Y13, reg.Y5, reg.Y5)
		}
		c.VPSLLW(operand.Imm(4), reg.Y5, reg.Y5)
		c.VPOR(reg.Y5, d, d)
	}
	for j, a := range q {
		c.VPMADDUBSW(at(reg.RDX, 128*h+32*j), a, a)
		c.VPBROADCASTW(at(reg.RBX, 16*h+4*j), reg.X9)
		c.VPBROADCASTW(at(reg.RBX, 16*h+4*j+2), reg.X10)
		c.VINSERTI128(operand.Imm(1), reg.X10, reg.Y9, reg.Y9)
		c.VPMADDWD(reg.Y9, a, a)
		c.VPADDD(a, reg.Y0, reg.Y0)
	}
}

// hsumI32 adds the eight int32 lanes of y into lane 0 of y's X half
// (the other lanes hold partial sums), with t's X half as scratch.
func hsumI32(c *build.Context, y, t reg.VecPhysical) {
	x, tx := y.AsX(), t.AsX()
	c.VEXTRACTI128(operand.Imm(1), y.AsY(), tx)
	c.VPADDD(tx, x, x)
	c.VPSHUFD(operand.Imm(0x4e), x, tx)
	c.VPADDD(tx, x, x)
	c.VPSHUFD(operand.Imm(0xb1), x, tx)
	c.VPADDD(tx, x, x)
}
