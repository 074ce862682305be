package main

import (
	"github.com/mmcloughlin/avo/attr"
	"github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/ir"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// q4_K panel layout (see package vec's qkgemm.go): per super-block the
// 16 rows' d and dmin as float32, the 8 sub-block scales as int32 vectors,
// the 8 mins as (m, m) word pairs, then the quants, 8 vectors of 64 bytes
// per sub-block (four elements of each of 16 rows).
const (
	qkD      = 0
	qkDmin   = 64
	qkScales = 128
	qkMins   = 640
	qkQuants = 1152
	qkBlock  = 5248 // bytes of a q4_K panel super-block
	q4KBlock = 144  // bytes of a q4_K super-block
	q8KBlock = 292  // bytes of a q8_K block: d, 256 quants, 16 sums
	q8KSums  = 260  // offset of the q8_K 16-quant sums
)

// genQKGemm writes qkgemm_amd64.s: the AVX-512 VNNI GEMM tile of the
// k-quants, 16 weight rows (a packed panel) by 8 q8_K activation rows.
func genQKGemm(c *build.Context) {
	qkTileQ4K(c)
	qkPackQ4K(c)
}

// vnniBcst appends op (VPDPBUSD or VPDPWSSD, which avo v0.5.0 lacks) with
// a 32-bit broadcast memory operand: acc += w · bcst(src). The inputs
// include acc so that avo's liveness sees the read-modify-write.
func vnniBcst(c *build.Context, op string, src operand.Mem, w, acc reg.VecPhysical) {
	c.Instruction(&ir.Instruction{
		Opcode:   op,
		Suffixes: []string{"BCST"},
		Operands: []operand.Op{src, w, acc},
		Inputs:   []operand.Op{src, w, acc},
		Outputs:  []operand.Op{acc},
		ISA:      []string{"AVX512_VNNI"},
	})
}

// qkCol is the address disp bytes into activation row col (< 8) of a
// group whose row 0 is at DX, the rows ys apart: R8 = ys, R9 = 3·ys,
// R10 = 5·ys, R11 = 7·ys.
func qkCol(col, disp int) operand.Mem {
	switch col {
	case 0:
		return at(reg.RDX, disp)
	case 1:
		return idx(reg.RDX, disp, reg.R8, 1)
	case 2:
		return idx(reg.RDX, disp, reg.R8, 2)
	case 3:
		return idx(reg.RDX, disp, reg.R9, 1)
	case 4:
		return idx(reg.RDX, disp, reg.R8, 4)
	case 5:
		return idx(reg.RDX, disp, reg.R10, 1)
	case 6:
		return idx(reg.RDX, disp, reg.R9, 2)
	}
	return idx(reg.RDX, disp, reg.R11, 1)
}

// qkTileQ4K writes qkGemmQ4KTile512. Per super-block and sub-block g the
// panel's 8 quant vectors are loaded (Z0..Z7); for each activation row c a
// lane per weight row (Z8+c) starts from zero and takes 8 VPDPBUSD with
// four activation bytes broadcast, ending at the sub-block's exact
// Σ q_w·q_y, which VPMULLD scales by the row's sub-block scale and VPADDD
// adds into the super-block's isum (Z16+c). Then Σ_g m_g·(bsum_2g +
// bsum_2g+1) is 8 VPDPWSSD of the (m, m) pairs against the q8_K sums
// (into Z8+c), and the float step is dotQ4_K's, op for op, per lane:
// sum += (d·d_y)·float(isum) − (dmin·d_y)·float(summs), in Z24+c.
func qkTileQ4K(c *build.Context) {
	fn(c, "qkGemmQ4KTile512", "func(out *float32, p *byte, y *byte, ys int, nb int)",
		"out[c*16+r] = dot of q4_K panel row r with the q8_K row at y+c*ys,",
		"for r < 16, c < 8, over nb ≥ 1 super-blocks.")
	c.Load(c.Param("out"), reg.RBX)
	c.Load(c.Param("p"), reg.RSI)
	c.Load(c.Param("y"), reg.RDX)
	c.Load(c.Param("ys"), reg.R8)
	c.Load(c.Param("nb"), reg.RCX)
	c.LEAQ(idx(reg.R8, 0, reg.R8, 2), reg.R9)
	c.LEAQ(idx(reg.R8, 0, reg.R8, 4), reg.R10)
	c.LEAQ(idx(reg.R9, 0, reg.R8, 4), reg.R11)
	z := avx512.v
	w, t, isum, sum := z[0:8], z[8:16], z[16:24], z[24:32]
	for _, s := range sum {
		c.VPXORD(s, s, s)
	}
	c.Label("qk4loop")
	for g := range 8 {
		for k := range 8 {
			c.VMOVDQU32(at(reg.RSI, qkQuants+512*g+64*k), w[k])
		}
		for col := range 8 {
			c.VPXORD(t[col], t[col], t[col])
		}
		for k := range 8 {
			for col := range 8 {
				vnniBcst(c, "VPDPBUSD", qkCol(col, 4+32*g+4*k), w[k], t[col])
			}
		}
		for col := range 8 {
			if g == 0 {
				c.VPMULLD(at(reg.RSI, qkScales), t[col], isum[col])
				continue
			}
			c.VPMULLD(at(reg.RSI, qkScales+64*g), t[col], t[col])
			c.VPADDD(t[col], isum[col], isum[col])
		}
	}
	// Mins: the sums of the q8_K groups 2g and 2g+1 sit in one dword.
	for g := range 8 {
		c.VMOVDQU32(at(reg.RSI, qkMins+64*g), w[g])
	}
	for col := range 8 {
		c.VPXORD(t[col], t[col], t[col])
	}
	for g := range 8 {
		for col := range 8 {
			vnniBcst(c, "VPDPWSSD", qkCol(col, q8KSums+4*g), w[g], t[col])
		}
	}
	// Float step, two temporaries per row from Z2..Z7 in turn.
	c.VMOVUPS(at(reg.RSI, qkD), w[0])
	c.VMOVUPS(at(reg.RSI, qkDmin), w[1])
	for col := range 8 {
		a, b := w[2+2*(col%3)], w[3+2*(col%3)]
		c.VMULPS_BCST(qkCol(col, 0), w[0], a)
		c.VCVTDQ2PS(isum[col], isum[col])
		c.VMULPS(isum[col], a, a)
		c.VMULPS_BCST(qkCol(col, 0), w[1], b)
		c.VCVTDQ2PS(t[col], t[col])
		c.VMULPS(t[col], b, b)
		c.VSUBPS(b, a, a)
		c.VADDPS(a, sum[col], sum[col])
	}
	c.ADDQ(operand.U32(qkBlock), reg.RSI)
	c.ADDQ(operand.U32(q8KBlock), reg.RDX)
	c.DECQ(reg.RCX)
	c.JNZ(operand.LabelRef("qk4loop"))
	for col := range 8 {
		c.VMOVUPS(sum[col], at(reg.RBX, 64*col))
	}
	c.VZEROUPPER()
	c.RET()
}

// qkPackQ4K writes qkPackQ4KPanel512, the q4_K panel packer: every field
// is gathered one dword from each of the 16 rows at a time (VPGATHERDD
// with the row offsets r·stride in Z31; K1, refilled from R9 before each
// gather, leaves rows past the panel's zero, so their d, scales and quants
// are zero). d and dmin are widened from half; the 6-bit scales and mins
// are cut out of the three dwords of scales[12] with shifts and masks as
// ggml's get_scale_min_k4; the nibbles split into the low sub-block
// (AND 0x0f) and the high one (shift by 4, AND).
func qkPackQ4K(c *build.Context) {
	fn(c, "qkPackQ4KPanel512", "func(dst *byte, w *byte, stride int, mask int, nb int)",
		"Packs nb super-blocks of the q4_K rows at w (stride bytes apart; rows",
		"whose bit is clear in mask are packed as zero) into the panel dst.")
	iota := c.StaticGlobal("qkIota")
	c.DataAttributes(attr.RODATA | attr.NOPTR)
	for i := range 16 {
		c.AddDatum(4*i, operand.U32(uint32(i)))
	}
	c.Load(c.Param("dst"), reg.RDI)
	c.Load(c.Param("w"), reg.RSI)
	c.Load(c.Param("mask"), reg.R9)
	c.Load(c.Param("nb"), reg.RCX)
	c.VPBROADCASTD(param(c, "stride"), reg.Z31)
	c.VPMULLD(iota, reg.Z31, reg.Z31)
	for _, k := range []struct {
		v uint32
		z reg.VecPhysical
	}{{0x0f0f0f0f, reg.Z30}, {63, reg.Z29}, {15, reg.Z28}, {0x30, reg.Z27}} {
		c.MOVL(operand.U32(k.v), reg.EAX)
		c.VPBROADCASTD(reg.EAX, k.z)
	}
	gather := func(off int, z reg.VecPhysical) {
		c.KMOVW(reg.R9L, reg.K1)
		c.VPXORD(z, z, z)
		c.VPGATHERDD(operand.Mem{Base: reg.RSI, Disp: off, Index: reg.Z31, Scale: 1}, reg.K1, z)
	}
	shr := func(n int, src, dst reg.VecPhysical) {
		c.VPSRLD(operand.U8(uint8(n)), src, dst)
	}
	field := func(n int, src, mask, dst reg.VecPhysical) { // (src >> n) & mask
		if n > 0 {
			shr(n, src, dst)
			src = dst
		}
		c.VPANDD(mask, src, dst)
	}
	pair := func(z, tmp reg.VecPhysical) { // z | z<<16: the (m, m) words
		c.VPSLLD(operand.U8(16), z, tmp)
		c.VPORD(tmp, z, z)
	}
	c.Label("qkp4loop")
	gather(0, reg.Z0)
	c.VPMOVDW(reg.Z0, reg.Y1)
	c.VCVTPH2PS(reg.Y1, reg.Z1)
	c.VMOVUPS(reg.Z1, at(reg.RDI, qkD))
	shr(16, reg.Z0, reg.Z0)
	c.VPMOVDW(reg.Z0, reg.Y1)
	c.VCVTPH2PS(reg.Y1, reg.Z1)
	c.VMOVUPS(reg.Z1, at(reg.RDI, qkDmin))
	a, b, cc := reg.Z2, reg.Z3, reg.Z4
	gather(4, a)
	gather(8, b)
	gather(12, cc)
	for j := range 4 {
		field(8*j, a, reg.Z29, reg.Z5)
		c.VMOVDQU32(reg.Z5, at(reg.RDI, qkScales+64*j))
		field(8*j, b, reg.Z29, reg.Z6)
		pair(reg.Z6, reg.Z7)
		c.VMOVDQU32(reg.Z6, at(reg.RDI, qkMins+64*j))
	}
	for j := range 4 {
		// scale: low 4 bits from byte j of C, high 2 from the top of byte j of A.
		field(8*j, cc, reg.Z28, reg.Z5)
		field(8*j+2, a, reg.Z27, reg.Z6)
		c.VPORD(reg.Z6, reg.Z5, reg.Z5)
		c.VMOVDQU32(reg.Z5, at(reg.RDI, qkScales+64*(4+j)))
		// min: the high nibble of byte j of C, the top of byte j of B.
		field(8*j+4, cc, reg.Z28, reg.Z5)
		field(8*j+2, b, reg.Z27, reg.Z6)
		c.VPORD(reg.Z6, reg.Z5, reg.Z5)
		pair(reg.Z5, reg.Z7)
		c.VMOVDQU32(reg.Z5, at(reg.RDI, qkMins+64*(4+j)))
	}
	z := avx512.v
	for j := range 4 {
		for k := range 8 {
			q, lo := z[8+(8*j+k)%8], z[16+(8*j+k)%8]
			gather(16+32*j+4*k, q)
			c.VPANDD(reg.Z30, q, lo)
			c.VMOVDQU32(lo, at(reg.RDI, qkQuants+512*(2*j)+64*k))
			shr(4, q, q)
			c.VPANDD(reg.Z30, q, q)
			c.VMOVDQU32(q, at(reg.RDI, qkQuants+512*(2*j+1)+64*k))
		}
	}
	c.ADDQ(operand.U32(q4KBlock), reg.RSI)
	c.ADDQ(operand.U32(qkBlock), reg.RDI)
	c.DECQ(reg.RCX)
	c.JNZ(operand.LabelRef("qkp4loop"))
	c.VZEROUPPER()
	c.RET()
}
