package main

import (
	"fmt"

	"github.com/mmcloughlin/avo/attr"
	"github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// qBlock describes one weight block type of the AVX2 integer dots (q8_0,
// q4_0, q5_0, q4_1, q5_1): where its fields sit and against which
// activation block.
type qBlock struct {
	tag    string // label prefix
	size   int    // bytes of one weight block
	qh     int    // offset of the 32 high bits (q5), or -1 (q4_1)
	qs     int    // offset of the 16 nibble bytes
	signed bool   // weights signed (q8_0, q4_0, q5_0: the sign trick), else unsigned (q4_1, q5_1)
	q81    bool   // activations are q8_1 (d, s, 32 quants: add m_w·s_y), else q8_0
	bytes  bool   // 32 plain signed bytes at qs (q8_0), not nibbles
	minus8 bool   // weight value is nibble-8 (q4_0)
	// accFirst: the final sum's halves are added as VADDPS X10, acc,
	// X10 (acc the first source: the longer VEX3 encoding that the
	// hand-written q8_0 and q4_0 kernels had), else as VADDPS acc, X10,
	// X10. The sums are the same; the choice keeps the machine code.
	accFirst bool
}

var (
	q8_0Block = qBlock{tag: "q8", size: 34, qh: -1, qs: 2, signed: true, bytes: true, accFirst: true}
	q4_0Block = qBlock{tag: "q4", size: 18, qh: -1, qs: 2, signed: true, minus8: true, accFirst: true}
	q5_0Block = qBlock{tag: "q50", size: 22, qh: 2, qs: 6, signed: true}
	q4_1Block = qBlock{tag: "q41", size: 20, qh: -1, qs: 4, q81: true}
	q5_1Block = qBlock{tag: "q51", size: 24, qh: 4, qs: 8, q81: true}
)

// genQDot2 writes qdot2_amd64.s: the AVX2 integer dots of q5_0 (against
// q8_0), q4_1 and q5_1 (against q8_1), four weight rows or one per call,
// all from qDot2, and the q2_K and q3_K row kernels (genKLow).
func genQDot2(c *build.Context) {
	k := qConsts(c)
	for _, b := range []struct {
		name string
		blk  qBlock
	}{{"Q5", q5_0Block}, {"Q41", q4_1Block}, {"Q51", q5_1Block}} {
		qDot2(c, "dot"+b.name+"x4AVX2", qRowsSig, b.blk, 4, k)
		qDot2(c, "dot"+b.name+"x1AVX2", qRowsSig, b.blk, 1, k)
	}
	genKLow(c)
}

// qConstants are the read-only tables of the kernels (those a file's
// kernels use; the others stay zero).
type qConstants struct {
	ones16, nib, eight, shuf, bits, f0, x10 operand.Mem
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

// qRowsSig is the Go signature of the row dots; qRowSig that of the
// one-row q8_0 and q4_0 dots, which take no stride.
const (
	qRowsSig = "func(w *byte, stride int, y *byte, nb int, dst *float32)"
	qRowSig  = "func(w *byte, y *byte, nb int, dst *float32)"
)

// qDot2 writes one kernel of Go signature sig (qRowsSig or qRowSig): for
// each block, the 32 weight quants of each row are unpacked to bytes in
// Y6 (q8_0: loaded; nibbles, minus 8 for q4_0, the fifth bit from qh),
// multiplied with the activation bytes in Y4 by VPMADDUBSW into 16-bit
// pair sums (signed weights by the sign trick, |w| times y·sign(w), so
// |q5_0| ≤ 16 and q8_0's −128 stay in range; q4_1 and q5_1 unsigned: no
// saturation), widened to eight int32 sums by VPMADDWD against ones
// (exact, the same integers as the Go dots), converted and accumulated
// per lane with FMA times d_w·d_y (both halves widened by VCVTPH2PS). For
// q8_1 activations m_w·s_y is added once per block into lane 0. Rows sit
// at SI, R8, R9, R10 (stride DI), accumulators Y0..Y3; constants Y10..Y15.
func qDot2(c *build.Context, name, sig string, b qBlock, rows int, k qConstants) {
	fn(c, name, sig,
		fmt.Sprintf("dst[r] = dot of %d weight rows (stride bytes apart) with the activation row y, nb ≥ 1 blocks.", rows))
	rowReg := rowArgs(c, rows, "y", "nb")
	c.VMOVDQU(k.ones16, reg.Y15)
	if !b.bytes {
		c.VMOVDQU(k.nib, reg.Y14)
	}
	if b.minus8 {
		c.VMOVDQU(k.eight, reg.Y13)
	}
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
		if b.accFirst {
			c.VADDPS(reg.X10, a.AsX(), reg.X10)
		} else {
			c.VADDPS(a.AsX(), reg.X10, reg.X10)
		}
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
	if b.bytes {
		c.VMOVDQU(at(p, b.qs), reg.Y6)
	} else {
		// Nibbles: low ones are elements 0..15, high ones 16..31.
		c.VMOVDQU(at(p, b.qs), reg.X6)
		c.VPSRLW(operand.Imm(4), reg.X6, reg.X7)
		c.VINSERTI128(operand.Imm(1), reg.X7, reg.Y6, reg.Y6)
		c.VPAND(reg.Y14, reg.Y6, reg.Y6)
	}
	if b.minus8 {
		c.VPSUBB(reg.Y13, reg.Y6, reg.Y6) // [-8, 7]
	}
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

// kLowConstants are the tables of the q2_K and q3_K row kernels.
type kLowConstants struct {
	three, nib, four, ctl0, ctlInc, shifts, bias operand.Mem
}

func kLowConsts(c *build.Context) kLowConstants {
	return kLowConstants{
		three: rep4(c, "k2three", 0x0303030303030303),
		nib:   rep4(c, "k2nib", 0x0f0f0f0f0f0f0f0f),
		four:  rep4(c, "k2four", 0x0404040404040404),
		// ctl0 is the VPSHUFB control that puts scale byte 0 in the high
		// byte of every word of the low lane and scale byte 1 in the
		// high lane (0x80 zeroes the low bytes); ctlInc steps it by two
		// scales, for the next 32 quants.
		ctl0:   rep4(c, "k2ctl0", 0x0080008000800080, 0x0080008000800080, 0x0180018001800180, 0x0180018001800180),
		ctlInc: rep4(c, "k2ctlinc", 0x0200020002000200),
		shifts: rep4(c, "k2shifts", 0x0000000200000000, 0x0000000600000004),
		bias:   rep4(c, "k2bias", 0x2020202020202020),
	}
}

// genKLow writes the AVX2 q2_K and q3_K row kernels (one weight row, nb
// ≥ 1 super-blocks, against one q8_K row), the integer sums exact and the
// float steps those of dotQ2_K and dotQ3_K, so the results are the Go
// dots' bit for bit.
func genKLow(c *build.Context) {
	k := kLowConsts(c)
	kLowRow(c, "q2KRowAVX2", false, k)
	kLowRow(c, "q3KRowAVX2", true, k)
}

// kLowRow writes one kernel. Per super-block the 256 2-bit quants are
// unpacked 32 at a time (shift, AND 3; q3_K: minus 4 where the high-mask
// bit is clear, as a second VPMADDUBSW subtracted), multiplied with the
// q8_K bytes by VPMADDUBSW into 16-bit pair sums, and VPMADDWD multiplies
// them by the scales of their two groups of 16 (one per 128-bit lane,
// picked out of Y2 by VPSHUFB with the control in Y4 and widened to words
// with sign by a word shift) into eight int32 sums added into Y0. q2_K's
// Σ min_g·bsum_g is one VPMADDWD of the q8_K group sums against the mins
// (Y3). Registers: R8 weights, R9 activations, CX count, X10 the float sum.
func kLowRow(c *build.Context, name string, q3 bool, k kLowConstants) {
	fn(c, name, "func(w *byte, y *byte, nb int) float32",
		"The dot of one weight row (nb super-blocks) with one q8_K row.")
	c.Load(c.Param("w"), reg.R8)
	c.Load(c.Param("y"), reg.R9)
	c.Load(c.Param("nb"), reg.RCX)
	c.VMOVDQU(k.three, reg.Y15)
	c.VMOVDQU(k.nib, reg.Y14)
	c.VMOVDQU(k.ctlInc, reg.Y13)
	c.VMOVDQU(k.ctl0, reg.Y12)
	if q3 {
		c.VMOVDQU(k.four, reg.Y11)
	}
	c.VXORPS(reg.X10, reg.X10, reg.X10)
	bs, qs := 84, 16
	if q3 {
		bs, qs = 110, 32
	}
	loop := name + "loop"
	c.Label(loop)
	if q3 {
		// Scales: low 4 bits from bytes 0..7 at 96 (low nibbles for
		// groups 0..7, high for 8..15), high 2 bits from the dword at
		// 104 (byte g%4 shifted by 2·(g/4)), minus 32: signed bytes.
		c.VMOVQ(at(reg.R8, 96), reg.X1)
		c.VPSRLW(operand.Imm(4), reg.X1, reg.X3)
		c.VPAND(reg.X14, reg.X1, reg.X1)
		c.VPAND(reg.X14, reg.X3, reg.X3)
		c.VPUNPCKLQDQ(reg.X3, reg.X1, reg.X2)
		c.VPBROADCASTD(at(reg.R8, 104), reg.X3)
		c.VPSRLVD(k.shifts, reg.X3, reg.X3)
		c.VPAND(reg.X15, reg.X3, reg.X3)
		c.VPSLLW(operand.Imm(4), reg.X3, reg.X3)
		c.VPOR(reg.X3, reg.X2, reg.X2)
		c.VPSUBB(k.bias, reg.X2, reg.X2)
		c.VMOVDQU(at(reg.R8, 0), reg.Y9) // high-bit mask
	} else {
		// Scales (low nibbles) and mins (high nibbles) of the 16 groups;
		// Y3 = the eight int32 sums of min_g·bsum_g.
		c.VMOVDQU(at(reg.R8, 0), reg.X1)
		c.VPAND(reg.X14, reg.X1, reg.X2)
		c.VPSRLW(operand.Imm(4), reg.X1, reg.X3)
		c.VPAND(reg.X14, reg.X3, reg.X3)
		c.VPMOVZXBW(reg.X3, reg.Y3)
		c.VPMADDWD(at(reg.R9, 4+qkkBytes), reg.Y3, reg.Y3)
	}
	c.VINSERTI128(operand.Imm(1), reg.X2, reg.Y2, reg.Y2)
	c.VMOVDQU(reg.Y12, reg.Y4)
	c.VPXOR(reg.Y0, reg.Y0, reg.Y0)
	for n := range 2 {
		c.VMOVDQU(at(reg.R8, qs+32*n), reg.Y5)
		for j := range 4 {
			q8 := at(reg.R9, 4+128*n+32*j)
			if j == 0 {
				c.VPAND(reg.Y15, reg.Y5, reg.Y6)
			} else {
				c.VPSRLW(operand.Imm(uint64(2*j)), reg.Y5, reg.Y6)
				c.VPAND(reg.Y15, reg.Y6, reg.Y6)
			}
			c.VPMADDUBSW(q8, reg.Y6, reg.Y6)
			if q3 {
				// 4 where bit 4n+j of the mask byte is clear: that bit
				// moved to bit 2, the rest masked off.
				h := reg.Y9
				switch s := 4*n + j - 2; {
				case s > 0:
					c.VPSRLW(operand.Imm(uint64(s)), reg.Y9, reg.Y7)
					h = reg.Y7
				case s < 0:
					c.VPSLLW(operand.Imm(uint64(-s)), reg.Y9, reg.Y7)
					h = reg.Y7
				}
				c.VPANDN(reg.Y11, h, reg.Y7)
				c.VPMADDUBSW(q8, reg.Y7, reg.Y7)
				c.VPSUBW(reg.Y7, reg.Y6, reg.Y6)
			}
			c.VPSHUFB(reg.Y4, reg.Y2, reg.Y8)
			c.VPSRAW(operand.Imm(8), reg.Y8, reg.Y8)
			c.VPADDB(reg.Y13, reg.Y4, reg.Y4)
			c.VPMADDWD(reg.Y8, reg.Y6, reg.Y6)
			c.VPADDD(reg.Y6, reg.Y0, reg.Y0)
		}
	}
	if q3 {
		// isum to lane 0 of X0; sum += float32(float32(d·d_y)·isum).
		hsumI32(c, reg.Y0, reg.X1)
		c.VCVTDQ2PS(reg.X0, reg.X0)
		c.MOVWLZX(at(reg.R8, 108), reg.EAX) // the block's last 2 bytes: no read past it
		c.VMOVD(reg.EAX, reg.X1)
		c.VCVTPH2PS(reg.X1, reg.X1)
		c.VMULSS(at(reg.R9, 0), reg.X1, reg.X1)
		c.VMULSS(reg.X0, reg.X1, reg.X1)
		c.VADDSS(reg.X1, reg.X10, reg.X10)
	} else {
		// [isum, summs] in lanes 0, 1 of X0; then
		// sum += float32(dall·isum) − float32(dmin·summs).
		c.VPHADDD(reg.Y3, reg.Y0, reg.Y0)
		c.VEXTRACTI128(operand.Imm(1), reg.Y0, reg.X1)
		c.VPADDD(reg.X1, reg.X0, reg.X0)
		c.VPHADDD(reg.X0, reg.X0, reg.X0)
		c.VCVTDQ2PS(reg.X0, reg.X0)
		c.VMOVD(at(reg.R8, 80), reg.X1)
		c.VCVTPH2PS(reg.X1, reg.X1)
		c.VBROADCASTSS(at(reg.R9, 0), reg.X6)
		c.VMULPS(reg.X6, reg.X1, reg.X1)
		c.VMULPS(reg.X1, reg.X0, reg.X0)
		c.VMOVSHDUP(reg.X0, reg.X1)
		c.VSUBSS(reg.X1, reg.X0, reg.X0)
		c.VADDSS(reg.X0, reg.X10, reg.X10)
	}
	c.ADDQ(operand.I32(bs), reg.R8)
	c.ADDQ(operand.I32(292), reg.R9)
	c.DECQ(reg.RCX)
	c.JNZ(operand.LabelRef(loop))
	c.Store(reg.X10, c.ReturnIndex(0))
	c.VZEROUPPER()
	c.RET()
}

// qkkBytes is the q8_K quants' bytes per super-block (before the group sums).
const qkkBytes = 256
