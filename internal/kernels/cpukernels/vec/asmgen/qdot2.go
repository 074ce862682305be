package main

import (
	"fmt"

	"github.com/mmcloughlin/avo/attr"
	"github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// qBlock describes one weight block type of the AVX2 q5_0, q4_1 and q5_1
// dots: where its fields sit and against which activation block.
type qBlock struct {
	tag    string // label prefix
	size   int    // bytes of one weight block
	qh     int    // offset of the 32 high bits (q5), or -1 (q4_1)
	qs     int    // offset of the 16 nibble bytes
	signed bool   // weight value is x-16 (q5_0), else x unsigned (q4_1, q5_1)
	q81    bool   // activations are q8_1 (d, s, 32 quants: add m_w·s_y), else q8_0
}

var (
	q5_0Block = qBlock{tag: "q50", size: 22, qh: 2, qs: 6, signed: true}
	q4_1Block = qBlock{tag: "q41", size: 20, qh: -1, qs: 4, q81: true}
	q5_1Block = qBlock{tag: "q51", size: 24, qh: 4, qs: 8, q81: true}
)

// genQDot2 writes qdot2_amd64.s: the AVX2 integer dots of q5_0 (against
// q8_0), q4_1 and q5_1 (against q8_1), four weight rows or one per call,
// all from qDot2.
func genQDot2(c *build.Context) {
	k := qConsts(c)
	for _, b := range []struct {
		name string
		blk  qBlock
	}{{"Q5", q5_0Block}, {"Q41", q4_1Block}, {"Q51", q5_1Block}} {
		qDot2(c, "dot"+b.name+"x4AVX2", b.blk, 4, k)
		qDot2(c, "dot"+b.name+"x1AVX2", b.blk, 1, k)
	}
}

// qConstants are the read-only tables of the kernels.
type qConstants struct {
	ones16, nib, shuf, bits, f0, x10 operand.Mem
}

// rep4 writes a 32-byte table of the 8-byte word v four times.
func rep4(c *build.Context, name string, v ...uint64) operand.Mem {
	m := c.StaticGlobal(name)
	c.DataAttributes(attr.RODATA | attr.NOPTR)
	for i := range 4 {
		c.AddDatum(8*i, operand.U64(v[i%len(v)]))
	}
	return m
}

func qConsts(c *build.Context) qConstants {
	return qConstants{
		ones16: rep4(c, "q2ones16", 0x0001000100010001),
		nib:    rep4(c, "q2nib", 0x0f0f0f0f0f0f0f0f),
		// shuf spreads the 4 bytes of qh (broadcast to every dword) so
		// that byte i holds byte i/8 (VPSHUFB works within 16-byte lanes).
		shuf: rep4(c, "q2shuf", 0, 0x0101010101010101, 0x0202020202020202, 0x0303030303030303),
		// bits has every bit but bit i%8 set in byte i: OR-ed with the
		// spread qh it is all ones exactly where bit i of qh is set.
		bits: rep4(c, "q2bits", 0x7fbfdfeff7fbfdfe),
		f0:   rep4(c, "q2f0", 0xf0f0f0f0f0f0f0f0),
		x10:  rep4(c, "q2x10", 0x1010101010101010),
	}
}

// qDot2 writes one kernel: for each block, the 32 weight quants of each
// row are unpacked to bytes in Y6 (nibbles, the fifth bit from qh),
// multiplied with the activation bytes in Y4 by VPMADDUBSW into 16-bit
// pair sums (|q5_0| ≤ 16 by the sign trick of the q4_0 kernel; q4_1 and
// q5_1 unsigned: no saturation), widened to eight int32 sums by VPMADDWD
// against ones (exact, the same integers as the Go dots), converted and
// accumulated per lane with FMA times d_w·d_y, as dotQ4x4AVX2 does. For
// q8_1 activations m_w·s_y is added once per block into lane 0. Rows sit
// at SI, R8, R9, R10 (stride DI), accumulators Y0..Y3; constants Y10..Y15.
func qDot2(c *build.Context, name string, b qBlock, rows int, k qConstants) {
	fn(c, name, "func(w *byte, stride int, y *byte, nb int, dst *float32)",
		fmt.Sprintf("dst[r] = dot of %d weight rows (stride bytes apart) with the activation row y, nb ≥ 1 blocks.", rows))
	rowReg := rowArgs(c, rows, "y", "nb")
	c.VMOVDQU(k.ones16, reg.Y15)
	c.VMOVDQU(k.nib, reg.Y14)
	if b.qh >= 0 {
		c.VMOVDQU(k.shuf, reg.Y13)
		c.VMOVDQU(k.bits, reg.Y12)
		c.VPCMPEQB(reg.Y11, reg.Y11, reg.Y11)
		if b.signed {
			c.VMOVDQU(k.f0, reg.Y10)
		} else {
			c.VMOVDQU(k.x10, reg.Y10)
		}
	}
	acc := []reg.VecPhysical{reg.Y0, reg.Y1, reg.Y2, reg.Y3}[:rows]
	for _, a := range acc {
		c.VXORPS(a, a, a)
	}
	ybs, yq := 34, 2
	if b.q81 {
		ybs, yq = 36, 4
	}
	loop := fmt.Sprintf("%sx%dloop", b.tag, rows)
	c.Label(loop)
	// Activation block: bytes in Y4; scale d_y in every lane of Y5
	// (q8_0), or [d_y, s_y, 0, 0] in X5 (q8_1).
	c.VMOVDQU(at(reg.RDX, yq), reg.Y4)
	if b.q81 {
		c.VMOVD(at(reg.RDX, 0), reg.X5)
		c.VCVTPH2PS(reg.X5, reg.X5)
	} else {
		c.VPBROADCASTW(at(reg.RDX, 0), reg.X5)
		c.VCVTPH2PS(reg.X5, reg.Y5)
	}
	for r, p := range rowReg {
		qRow(c, b, p, acc[r])
	}
	for _, p := range rowReg {
		c.ADDQ(operand.I32(b.size), p)
	}
	c.ADDQ(operand.I32(ybs), reg.RDX)
	c.DECQ(reg.RCX)
	c.JNZ(operand.LabelRef(loop))
	for r, a := range acc {
		c.VEXTRACTF128(operand.Imm(1), a, reg.X10)
		c.VADDPS(a.AsX(), reg.X10, reg.X10)
		c.VHADDPS(reg.X10, reg.X10, reg.X10)
		c.VHADDPS(reg.X10, reg.X10, reg.X10)
		c.VMOVSS(reg.X10, at(reg.RBX, 4*r))
	}
	c.VZEROUPPER()
	c.RET()
}

// qRow adds one weight block at p times the activation block (Y4, Y5)
// into acc; Y6..Y9 are scratch.
func qRow(c *build.Context, b qBlock, p reg.GPPhysical, acc reg.VecPhysical) {
	// Nibbles: low ones are elements 0..15, high ones 16..31.
	c.VMOVDQU(at(p, b.qs), reg.X6)
	c.VPSRLW(operand.Imm(4), reg.X6, reg.X7)
	c.VINSERTI128(operand.Imm(1), reg.X7, reg.Y6, reg.Y6)
	c.VPAND(reg.Y14, reg.Y6, reg.Y6)
	if b.qh >= 0 {
		// Byte i all ones where bit i of qh is set.
		c.VPBROADCASTD(at(p, b.qh), reg.Y7)
		c.VPSHUFB(reg.Y13, reg.Y7, reg.Y7)
		c.VPOR(reg.Y12, reg.Y7, reg.Y7)
		c.VPCMPEQB(reg.Y11, reg.Y7, reg.Y7)
		if b.signed {
			c.VPANDN(reg.Y10, reg.Y7, reg.Y7) // x-16 = nibble | (bit ? 0 : 0xf0)
		} else {
			c.VPAND(reg.Y10, reg.Y7, reg.Y7) // x = nibble | (bit ? 0x10 : 0)
		}
		c.VPOR(reg.Y7, reg.Y6, reg.Y6)
	}
	if b.signed {
		c.VPSIGNB(reg.Y6, reg.Y6, reg.Y7)
		c.VPSIGNB(reg.Y6, reg.Y4, reg.Y8)
		c.VPMADDUBSW(reg.Y8, reg.Y7, reg.Y8)
	} else {
		c.VPMADDUBSW(reg.Y4, reg.Y6, reg.Y8)
	}
	c.VPMADDWD(reg.Y15, reg.Y8, reg.Y8)
	c.VCVTDQ2PS(reg.Y8, reg.Y8)
	if !b.q81 {
		c.VPBROADCASTW(at(p, 0), reg.X9)
		c.VCVTPH2PS(reg.X9, reg.Y9)
		c.VMULPS(reg.Y5, reg.Y9, reg.Y9)
		c.VFMADD231PS(reg.Y9, reg.Y8, acc)
		return
	}
	// [d_w, m_w] · [d_y, s_y]: d_w·d_y to every lane for the FMA, then
	// m_w·s_y alone in lane 0 (the upper lanes zero) added once.
	c.VMOVD(at(p, 0), reg.X9)
	c.VCVTPH2PS(reg.X9, reg.X9)
	c.VMULPS(reg.X5, reg.X9, reg.X9)
	c.VBROADCASTSS(reg.X9, reg.Y7)
	c.VFMADD231PS(reg.Y7, reg.Y8, acc)
	c.VPSRLDQ(operand.Imm(4), reg.X9, reg.X9)
	c.VADDPS(reg.Y9, acc, acc)
}
