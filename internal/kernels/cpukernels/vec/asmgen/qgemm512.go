package main

import (
	"github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// genQGemm512 writes qgemm512_amd64.s: the AVX-512 VNNI quantized GEMM
// tile, the panel packers and the activation quantizer (see qgemm.go for
// the packed layouts and RATIONALE.md, "Quantized GEMM: panels packed per
// node").
func genQGemm512(c *build.Context) {
	iota16 := words(c, "qgIota", 0x0000000100000000, 0x0000000300000002, 0x0000000500000004, 0x0000000700000006,
		0x0000000900000008, 0x0000000b0000000a, 0x0000000d0000000c, 0x0000000f0000000e)
	// VPERMT2Q indices that put the 128-bit lanes 0 and 2 (lo) or 1 and 3
	// (hi) of two registers alternately into one.
	t2lo := words(c, "qgT2lo", 0, 1, 8, 9, 4, 5, 12, 13)
	t2hi := words(c, "qgT2hi", 2, 3, 10, 11, 6, 7, 14, 15)
	qgemmTile(c)
	packPanel(c, "packQ8Panel512", false, iota16)
	packPanel(c, "packQ4Panel512", true, iota16)
	quantPackAct(c)
	packQ8Full(c, iota16, t2lo, t2hi)
	quantRowQ8(c)
	packQ4Full(c, iota16)
}

// z is the AVX-512 register file.
var z = avx512.v

// qgemmTile writes qgemmTile512: per block, the panel's 8 quant vectors
// (Z0..Z7: four elements of each of 16 weight rows) and its 16 scales (Z8)
// stay in registers; for each of the 8 activation rows a 32-bit lane per
// weight row (Z9..Z16) starts from -c·Σq_y and takes 8 VPDPBUSD with four
// activation bytes broadcast from memory, so it ends at the block's exact
// integer dot; the lanes are then converted and added, times d_w·d_y, into
// that activation row's float sums (Z17..Z24) with one FMA.
func qgemmTile(c *build.Context) {
	fn(c, "qgemmTile512", "func(out *float32, p, a *byte, nb int)",
		"out[16r+j] = Σ_blocks of weight row j of the packed panel p times activation row r of the group a, r < 8, j < 16.")
	c.Load(c.Param("out"), reg.RBX)
	c.Load(c.Param("p"), reg.RSI)
	c.Load(c.Param("a"), reg.RDX)
	c.Load(c.Param("nb"), reg.RCX)
	for r := range 8 {
		c.VPXORD(z[17+r], z[17+r], z[17+r])
	}
	c.Label("qgtile_loop")
	c.PREFETCHT0(at(reg.RSI, 1152))
	c.PREFETCHT0(at(reg.RDX, 640))
	c.VMOVUPS(at(reg.RSI, 0), reg.Z8)
	for j := range 8 {
		c.VMOVDQU32(at(reg.RSI, 64+64*j), z[j])
	}
	for r := range 8 {
		c.VPBROADCASTD(at(reg.RDX, 288+4*r), z[9+r])
	}
	for j := range 8 {
		for r := range 8 {
			vnni(c, "VPDPBUSD", at(reg.RDX, 32*r+4*j), z[j], z[9+r], "BCST")
		}
	}
	for r := range 8 {
		t := z[25+r%7]
		c.VCVTDQ2PS(z[9+r], z[9+r])
		c.VMULPS_BCST(at(reg.RDX, 256+4*r), reg.Z8, t)
		c.VFMADD231PS(t, z[9+r], z[17+r])
	}
	c.ADDQ(operand.I32(576), reg.RSI)
	c.ADDQ(operand.I32(320), reg.RDX)
	c.DECQ(reg.RCX)
	c.JNZ(lbl("qgtile_loop"))
	for r := range 8 {
		c.VMOVUPS(z[17+r], at(reg.RBX, 64*r))
	}
	end(c, false)
}

const packSig = "func(dst, w *byte, stride, mask, nb int)"

// packSetup loads (dst, w, mask, nb) to DI, SI, R9 (and K2), CX, the row
// offsets r·stride to Z31, and the byte constant v to every byte of Z30.
// The packers gather one 32-bit word from each of the 16 rows a time
// (VPGATHERDD with the row offsets in Z31; K1, refilled from R9 before
// each gather, leaves rows past the panel's zero).
func packSetup(c *build.Context, iota16 operand.Mem, v uint32) {
	c.Load(c.Param("dst"), reg.RDI)
	c.Load(c.Param("w"), reg.RSI)
	c.Load(c.Param("mask"), reg.R9)
	c.Load(c.Param("nb"), reg.RCX)
	c.KMOVW(reg.R9L, reg.K2)
	c.VPBROADCASTD(param(c, "stride"), reg.Z31)
	c.VPMULLD(iota16, reg.Z31, reg.Z31)
	bcast32(c, v, reg.Z30)
}

// gather gathers the words at off of each row's block into d.
func gather(c *build.Context, off int, d reg.VecPhysical) {
	c.KMOVW(reg.R9L, reg.K1)
	c.VPXORD(d, d, d)
	c.VPGATHERDD(operand.Mem{Base: reg.RSI, Disp: off, Index: reg.Z31, Scale: 1}, reg.K1, d)
}

// packScales stores the 16 rows' scales as float32 at DI.
func packScales(c *build.Context) {
	gather(c, 0, reg.Z0)
	c.VPMOVDW(reg.Z0, reg.Y0)
	c.VCVTPH2PS(reg.Y0, reg.Z0)
	c.VMOVUPS(reg.Z0, at(reg.RDI, 0))
}

// nibStore splits the nibble bytes in q (mask in Z30) into its low
// nibbles (group i at 64+64i(DI)) and its high ones (via hi, group i+4).
func nibStore(c *build.Context, q, hi reg.VecPhysical, i int) {
	c.VPSRLD(operand.Imm(4), q, hi)
	c.VPANDD(reg.Z30, q, q)
	c.VPANDD(reg.Z30, hi, hi)
	c.VMOVDQU32(q, at(reg.RDI, 64+64*i))
	c.VMOVDQU32(hi, at(reg.RDI, 320+64*i))
}

// packLoopEnd steps the weight pointers by a block, DI by a packed block,
// and loops.
func packLoopEnd(c *build.Context, loop string, blockBytes int, ptrs ...reg.GPPhysical) {
	for _, p := range ptrs {
		c.ADDQ(operand.I32(blockBytes), p)
	}
	c.ADDQ(operand.I32(576), reg.RDI)
	c.DECQ(reg.RCX)
	c.JNZ(lbl(loop))
	end(c, false)
}

// packPanel writes packQ8Panel512 (q4: packQ4Panel512): a panel of up to
// 16 rows by gathers; q8_0 quants are offset by 128 (sign bit flipped)
// in the rows of the mask, q4_0's split into nibbles.
func packPanel(c *build.Context, name string, q4 bool, iota16 operand.Mem) {
	fn(c, name, packSig)
	v, bytes, groups := uint32(0x80808080), 34, 8
	if q4 {
		v, bytes, groups = 0x0f0f0f0f, 18, 4
	}
	packSetup(c, iota16, v)
	loop := name + "_loop"
	c.Label(loop)
	packScales(c)
	for i := range groups {
		gather(c, 2+4*i, z[1+i])
	}
	for i := range groups {
		if q4 {
			nibStore(c, z[1+i], z[10+i], i)
			continue
		}
		c.VPXORD(reg.Z30, z[1+i], reg.K2, z[1+i])
		c.VMOVDQU32(z[1+i], at(reg.RDI, 64+64*i))
	}
	packLoopEnd(c, loop, bytes, reg.RSI)
}

// transpose4 transposes the 32-bit words of Z(4g)..Z(4g+3) in 4×4 blocks
// (within each 128-bit lane) through Z(8+4g)..Z(11+4g), given the first
// round's unpacks already there: two rounds of unpacks in all.
func transpose4(c *build.Context, g int) {
	a, b := z[4*g:], z[8+4*g:]
	c.VPUNPCKLQDQ(b[2], b[0], a[0])
	c.VPUNPCKHQDQ(b[2], b[0], a[1])
	c.VPUNPCKLQDQ(b[3], b[1], a[2])
	c.VPUNPCKHQDQ(b[3], b[1], a[3])
}

// unpackDQ is the first round: the dword unpacks of pairs (Z(2p),
// Z(2p+1)) into Z(8+2p), Z(9+2p), p < pairs.
func unpackDQ(c *build.Context, pairs int) {
	for p := range pairs {
		c.VPUNPCKLDQ(z[2*p+1], z[2*p], z[8+2*p])
		c.VPUNPCKHDQ(z[2*p+1], z[2*p], z[9+2*p])
	}
}

// rowIdx is the address of row r (< 8) of the 8 rows from base: R11 is
// stride, R12 3·stride, R13 5·stride, R14 7·stride.
func rowIdx(base reg.GPPhysical, disp, r int) operand.Mem {
	switch r {
	case 0:
		return at(base, disp)
	case 1:
		return idx(base, disp, reg.R11, 1)
	case 2:
		return idx(base, disp, reg.R11, 2)
	case 3:
		return idx(base, disp, reg.R12, 1)
	case 4:
		return idx(base, disp, reg.R11, 4)
	case 5:
		return idx(base, disp, reg.R13, 1)
	case 6:
		return idx(base, disp, reg.R12, 2)
	}
	return idx(base, disp, reg.R14, 1)
}

// packQ8Full writes packQ8Full512, packQ8Panel512 for a full panel of 16
// rows without gathers for the quants: rows r and r+8 share a register
// (256-bit halves), and an 8×8 transpose of 32-bit words in both halves
// at once (two rounds of unpacks, then VPERMT2Q across the 128-bit lanes)
// leaves four elements of rows 0..15 in each register, in row order. The
// scales are gathered.
func packQ8Full(c *build.Context, iota16, t2lo, t2hi operand.Mem) {
	fn(c, "packQ8Full512", packSig)
	packSetup(c, iota16, 0x80808080)
	c.VMOVDQU64(t2lo, reg.Z28)
	c.VMOVDQU64(t2hi, reg.Z29)
	c.Load(c.Param("stride"), reg.R11)
	c.LEAQ(idx(reg.R11, 0, reg.R11, 2), reg.R12)
	c.LEAQ(idx(reg.R11, 0, reg.R11, 4), reg.R13)
	c.LEAQ(idx(reg.R12, 0, reg.R11, 4), reg.R14)
	c.LEAQ(idx(reg.RSI, 0, reg.R11, 8), reg.R10)
	c.Label("packQ8Full512_loop")
	packScales(c)
	for r := range 8 {
		c.VMOVDQU(rowIdx(reg.RSI, 2, r), z[r].AsY())
		c.VINSERTI64X4(operand.Imm(1), rowIdx(reg.R10, 2, r), z[r], z[r])
	}
	unpackDQ(c, 4)
	transpose4(c, 0)
	transpose4(c, 1)
	for i := range 4 {
		c.VMOVDQA64(z[i], z[16+i])
		c.VPERMT2Q(z[4+i], reg.Z28, z[16+i])
		c.VMOVDQA64(z[i], z[20+i])
		c.VPERMT2Q(z[4+i], reg.Z29, z[20+i])
	}
	for j := range 8 {
		c.VPXORD(reg.Z30, z[16+j], z[16+j])
		c.VMOVDQU32(z[16+j], at(reg.RDI, 64+64*j))
	}
	packLoopEnd(c, "packQ8Full512_loop", 34, reg.RSI, reg.R10)
}

// packQ4Full writes packQ4Full512, packQ4Panel512 for a full panel of 16
// rows: rows i, i+4, i+8 and i+12 share a register (128-bit lanes), and a
// 4×4 transpose of 32-bit words in every lane (two rounds of unpacks)
// leaves the same four nibble bytes of rows 0..15 in each register, in
// row order; their low nibbles are one group of four elements, their high
// nibbles the group 16 elements further. The scales are gathered.
func packQ4Full(c *build.Context, iota16 operand.Mem) {
	fn(c, "packQ4Full512", packSig)
	packSetup(c, iota16, 0x0f0f0f0f)
	c.Load(c.Param("stride"), reg.R11)
	c.LEAQ(idx(reg.R11, 0, reg.R11, 2), reg.R12)
	c.LEAQ(idx(reg.RSI, 0, reg.R11, 4), reg.R10)
	c.LEAQ(idx(reg.R10, 0, reg.R11, 4), reg.R13)
	c.LEAQ(idx(reg.R13, 0, reg.R11, 4), reg.R14)
	c.Label("packQ4Full512_loop")
	packScales(c)
	for r := range 4 {
		c.VMOVDQU(rowIdx(reg.RSI, 2, r), z[r].AsX())
		for l, base := range []reg.GPPhysical{reg.R10, reg.R13, reg.R14} {
			c.VINSERTI32X4(operand.Imm(uint64(l+1)), rowIdx(base, 2, r), z[r], z[r])
		}
	}
	unpackDQ(c, 2)
	transpose4(c, 0)
	for i := range 4 {
		nibStore(c, z[i], z[4+i], i)
	}
	packLoopEnd(c, "packQ4Full512_loop", 18, reg.RSI, reg.R10, reg.R13, reg.R14)
}

// quantPackAct writes quantPackQ8Act512: up to nb blocks of 32 floats at x
// quantized to q8_0 as ggml's CPU quantizer does (d = amax/127 rounded to
// half, quants round(x·127/amax) ties to even, saturated) and written as
// row col of an activation group at dst (quants, d as float32, negc·Σq);
// it stops before the first block holding a NaN or an infinity (left to
// the portable quantizer) and returns the number of blocks written.
func quantPackAct(c *build.Context) {
	fn(c, "quantPackQ8Act512", "func(dst *byte, col int, x *float32, nb, negc int) int",
		"Quantizes and packs up to nb q8_0 blocks of x; returns the number written.")
	c.Load(c.Param("dst"), reg.RDI)
	c.Load(c.Param("col"), reg.RAX)
	c.Load(c.Param("x"), reg.RSI)
	c.Load(c.Param("nb"), reg.RCX)
	c.Load(c.Param("negc"), reg.RDX)
	c.LEAQ(idx(reg.RDI, 256, reg.RAX, 4), reg.RBX)
	c.SHLQ(operand.Imm(5), reg.RAX)
	c.ADDQ(reg.RAX, reg.RDI)
	c.XORQ(reg.RAX, reg.RAX)
	quantBlock512(c, "qgact")
	c.VPMOVSDB(reg.Z0, at(reg.RDI, 0))
	c.VPMOVSDB(reg.Z1, at(reg.RDI, 16))
	for _, q := range []reg.VecPhysical{reg.Z0, reg.Z1} {
		c.VPMAXSD(reg.Z23, q, q)
		c.VPMINSD(reg.Z24, q, q)
	}
	c.VPADDD(reg.Z1, reg.Z0, reg.Z0)
	c.VEXTRACTI32X8(operand.Imm(1), reg.Z0, reg.Y1)
	c.VPADDD(reg.Y1, reg.Y0, reg.Y0)
	hsumI32(c, reg.Y0, reg.X1)
	c.VMOVD(reg.X0, reg.R10L)
	c.IMULL(reg.EDX, reg.R10L)
	c.MOVL(reg.R10L, at(reg.RBX, 32))
	c.VCVTPS2PH(operand.Imm(0), reg.X4, reg.X4)
	c.VCVTPH2PS(reg.X4, reg.X4)
	c.VMOVSS(reg.X4, at(reg.RBX, 0))
	quantLoopEnd(c, "qgact", 320, reg.RDI, reg.RBX)
}

// quantRowQ8 writes quantQ8Row512: up to nb blocks of 32 floats at x
// quantized to q8_0 blocks at dst (d as half, then the 32 quants) with
// quantPackAct's steps, so ggml's CPU quantizer's bytes; it stops before
// the first block holding a NaN or an infinity (left to the portable
// quantizer) and returns the number of blocks written.
func quantRowQ8(c *build.Context) {
	fn(c, "quantQ8Row512", "func(dst *byte, x *float32, nb int) int",
		"Quantizes up to nb q8_0 blocks of x into dst; returns the number written.")
	c.Load(c.Param("dst"), reg.RDI)
	c.Load(c.Param("x"), reg.RSI)
	c.Load(c.Param("nb"), reg.RCX)
	c.XORQ(reg.RAX, reg.RAX)
	quantBlock512(c, "q8row")
	c.VPMOVSDB(reg.Z0, at(reg.RDI, 2))
	c.VPMOVSDB(reg.Z1, at(reg.RDI, 18))
	c.VCVTPS2PH(operand.Imm(0), reg.X4, reg.X4)
	c.VPEXTRW(operand.Imm(0), reg.X4, at(reg.RDI, 0))
	quantLoopEnd(c, "q8row", 34, reg.RDI)
}

// quantBlock512 writes the constants (Z20 |x| mask, Z21 +Inf, X22 127.0,
// Z23 -128, Z24 127 as int32) and the head of a loop over q8_0 blocks
// (label prefix_loop, counter AX up to CX, floats at SI): it leaves to
// prefix_done when AX reaches CX or the block holds a NaN or an infinity,
// else ends with the block's 32 quants as int32 in Z0 and Z1 (round to
// even, not yet saturated) and d = amax/127 as float32 in X4 — ggml's CPU
// quantizer's steps.
func quantBlock512(c *build.Context, prefix string) {
	for _, k := range []struct {
		v uint32
		z reg.VecPhysical
	}{{0x7fffffff, reg.Z20}, {0x7f800000, reg.Z21}, {0x42fe0000, nil}, {0xffffff80, reg.Z23}, {127, reg.Z24}} {
		if k.v == 0xffffff80 {
			c.MOVL(operand.I32(-128), reg.R10L)
		} else {
			c.MOVL(operand.U32(k.v), reg.R10L)
		}
		if k.z == nil { // 127.0 in X22
			c.VMOVD(reg.R10L, reg.X22)
			continue
		}
		c.VPBROADCASTD(reg.R10L, k.z)
	}
	c.Label(prefix + "_loop")
	c.CMPQ(reg.RAX, reg.RCX)
	c.JGE(lbl(prefix + "_done"))
	c.VMOVUPS(at(reg.RSI, 0), reg.Z0)
	c.VMOVUPS(at(reg.RSI, 64), reg.Z1)
	c.VPANDD(reg.Z20, reg.Z0, reg.Z2)
	c.VPANDD(reg.Z20, reg.Z1, reg.Z3)
	c.VCMPPS(operand.Imm(5), reg.Z21, reg.Z2, reg.K1)
	c.VCMPPS(operand.Imm(5), reg.Z21, reg.Z3, reg.K2)
	c.KORTESTW(reg.K2, reg.K1)
	c.JNZ(lbl(prefix + "_done"))
	c.VMAXPS(reg.Z3, reg.Z2, reg.Z2)
	c.VEXTRACTF32X8(operand.Imm(1), reg.Z2, reg.Y3)
	c.VMAXPS(reg.Y3, reg.Y2, reg.Y2)
	c.VEXTRACTF128(operand.Imm(1), reg.Y2, reg.X3)
	c.VMAXPS(reg.X3, reg.X2, reg.X2)
	c.VPERMILPS(operand.Imm(0x4e), reg.X2, reg.X3)
	c.VMAXPS(reg.X3, reg.X2, reg.X2)
	c.VPERMILPS(operand.Imm(0xb1), reg.X2, reg.X3)
	c.VMAXPS(reg.X3, reg.X2, reg.X2)
	c.VDIVSS(reg.X22, reg.X2, reg.X4)
	c.VXORPS(reg.X5, reg.X5, reg.X5)
	c.VUCOMISS(reg.X5, reg.X2)
	c.JEQ(lbl(prefix + "_zero"))
	c.VDIVSS(reg.X2, reg.X22, reg.X5)
	c.Label(prefix + "_zero")
	c.VBROADCASTSS(reg.X5, reg.Z5)
	c.VMULPS(reg.Z5, reg.Z0, reg.Z0)
	c.VMULPS(reg.Z5, reg.Z1, reg.Z1)
	c.VCVTPS2DQ(reg.Z0, reg.Z0)
	c.VCVTPS2DQ(reg.Z1, reg.Z1)
}

// quantLoopEnd closes a quantBlock512 loop: the next block's floats (SI)
// and step bytes further in each of outs, then the count of blocks done
// (AX) as the result.
func quantLoopEnd(c *build.Context, prefix string, step int, outs ...reg.Register) {
	c.ADDQ(operand.I32(128), reg.RSI)
	for _, r := range outs {
		c.ADDQ(operand.I32(step), r)
	}
	c.INCQ(reg.RAX)
	c.JMP(lbl(prefix + "_loop"))
	c.Label(prefix + "_done")
	c.MOVQ(reg.RAX, ret(c))
	end(c, false)
}
