package main

import (
	"github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// kDot512R4 writes q4KDot4RAVX512, the decode dot of four q4_K weight rows
// repacked by vec.Interleave4 with 16-byte units (vec.RepackUnit): per
// super-block a group holds 36 units of 16 bytes, unit u of row r at
// 64u+16r, so that
//   - the first 64 bytes are the four rows' d, dmin and 12 scale bytes,
//     one row per 128-bit lane: one load and six instructions unpack the
//     32 six-bit scales and mins of all four rows (ggml's
//     get_scale_min_k4 per lane with VPSHUFB), where the row-by-row
//     kernels unpacked them once per row;
//   - each further 64 bytes are 16 quant bytes of each row, the same
//     bytes of all four: their low nibbles are elements of one sub-block
//     of every row, the high nibbles of the next, and each meets one
//     16-byte piece of the plain q8_K activation broadcast to the four
//     lanes (VBROADCASTI32X4). VPMADDUBSW sums each row's products in its
//     own lane, the two chunks of a sub-block are added in int16 (four
//     products a word, at most 4·15·128 in magnitude), and one VPDPWSSD
//     applies the sub-block's scale word of each row (one VPSHUFB of the
//     unpacked scales per sub-block for all four rows), so no row needs
//     its own horizontal sums either.
//
// The mins' term takes the activation's 16-quant sums as they are stored
// (each min word twice, two VPMADDWD). The int32 sums are exact, so they
// are the row kernels' (the integer terms in another order), and the float
// step is theirs op for op, lane per row: ((d·dy)·isum − (dmin·dy)·summs)
// added to the row's sum, super-blocks in order. So the results are
// DotQ4_KRows' bits.
//
// Each super-block prefetches the group's stream kInterDist bytes ahead.
//
// Registers: SI the group's super-block, R8 the activation's, CX
// super-blocks left; Z0/Z1 the low/high nibbles, Z2/Z3 their activation,
// Z4..Z7 the pair sums of a sub-block pair's two chunks (then Z6/Z7 the
// scale words), Z8/Z9 the int32 sums (low and high nibbles), Z12 the
// mins' sums, Z18 the group's first 64 bytes, Z19 the unpacked scales
// (lane r: row r's scales 0..7, mins 0..7 in bytes), X13 the float sums;
// Z0..Z3 are temporaries after the quants; constants: Z10 the VPERMW
// index of the halves d and dmin, Z11 the VPERMD index of the sums,
// Z14..Z17 the scale unpacking's (VPSHUFB controls, mask, 0x30), Z21/Z22
// the VPSHUFB controls of the min words, Z23..Z30 those of the scale words
// of sub-blocks 0..7, Z31 the nibble mask; K1 dword 3 of each lane.
func kDot512R4(c *build.Context, t kTab) {
	z := avx512.v
	// In each 128-bit lane (one row: d, dmin, q[0..11] at bytes 4..15):
	// the bytes of the low bits of scales 0..7 and mins 0..7 (sc j<4:
	// q[j], j≥4: q[j+4]; m j<4: q[j+4], j≥4: q[j+4]>>4) and of the high
	// bits (j≥4: q[j-4]>>6 for sc, q[j]>>6 for m).
	lane := func(lo, hi uint64) [8]uint64 { return [8]uint64{lo, hi, lo, hi, lo, hi, lo, hi} }
	tab := func(name string, w [8]uint64) operand.Mem { return words(c, name, w[:]...) }
	idxA := tab("kq4rA", lane(0x0f0e0d0c07060504, 0x0f0e0d0c0b0a0908))
	idxB := tab("kq4rB", lane(0x0706050480808080, 0x0b0a090880808080))
	mskA := tab("kq4rM", lane(0x0f0f0f0f3f3f3f3f, 0x0f0f0f0f3f3f3f3f))
	// The words d0..d3, dmin0..dmin3 of the first 64 bytes; the dwords
	// 0, 4, 8, 12 (integer sums of rows 0..3) and 2, 6, 10, 14 (mins).
	permD := words(c, "kq4rD", 0x0018001000080000, 0x0019001100090001, 0, 0, 0, 0, 0, 0)
	permS := words(c, "kq4rP", 0x0000000400000000, 0x0000000c00000008, 0x0000000600000002, 0x0000000e0000000a, 0, 0, 0, 0)
	// Min words m0,m0,m1,m1,..,m3,m3 and m4,m4,..,m7,m7 (bytes 8..15).
	minLo := tab("kq4rm0", lane(0x8009800980088008, 0x800b800b800a800a))
	minHi := tab("kq4rm1", lane(0x800d800d800c800c, 0x800f800f800e800e))

	fn(c, "q4KDot4RAVX512", "func(w *byte, y *byte, nb int, dst *float32)",
		"dst[r] = the dot of row r of the four q4_K rows (nb super-blocks)",
		"interleaved by 16-byte units at w with the q8_K row y, for r < 4.")
	c.Load(c.Param("w"), reg.RSI)
	c.Load(c.Param("y"), reg.R8)
	c.Load(c.Param("nb"), reg.RCX)
	c.VMOVDQU64(t.z0f, reg.Z31)
	for s := range 8 {
		v := spread(0x8000 | uint64(s))
		c.VMOVDQU64(halves(c, "kq4rs"+string(rune('0'+s)), v, v), z[23+s])
	}
	c.VMOVDQU64(minLo, reg.Z21)
	c.VMOVDQU64(minHi, reg.Z22)
	c.VMOVDQU64(permD, reg.Z10)
	c.VMOVDQU64(permS, reg.Z11)
	c.VMOVDQU64(idxA, reg.Z14)
	c.VMOVDQU64(idxB, reg.Z15)
	c.VMOVDQU64(mskA, reg.Z16)
	c.VMOVDQU64(t.z30, reg.Z17)
	// K1: dword 3 of each lane (mins 4..7, whose low bits are the high
	// nibbles of q[8..11]).
	c.MOVL(operand.U32(0x8888), reg.EAX)
	c.KMOVW(reg.EAX, reg.K1)
	c.VXORPS(reg.X13, reg.X13, reg.X13)
	c.Label("q4kr4loop")
	for off := 0; kInterDist > 0 && off < 4*144; off += 64 {
		c.PREFETCHT0(at(reg.RSI, kInterDist+off))
	}
	// The scales and mins of the four rows, one row a lane.
	c.VMOVDQU64(at(reg.RSI, 0), reg.Z18)
	c.VPSHUFB(reg.Z14, reg.Z18, reg.Z19)
	c.VPSHUFB(reg.Z15, reg.Z18, reg.Z4)
	c.VPSRLD(operand.Imm(4), reg.Z19, reg.K1, reg.Z19)
	c.VPANDD(reg.Z16, reg.Z19, reg.Z19)
	c.VPSRLW(operand.Imm(2), reg.Z4, reg.Z4)
	c.VPTERNLOGD(operand.Imm(0xf8), reg.Z17, reg.Z4, reg.Z19)
	// The quants: chunk q holds bytes 16q..16q+15 of every row's 128,
	// sub-blocks 2(q/2) (low nibbles) and 2(q/2)+1 (high).
	for q := range 8 {
		i, h := q/2, q%2
		p := z[4+2*h : 6+2*h] // the pair sums of chunk 2i (Z4, Z5), 2i+1 (Z6, Z7)
		c.VMOVDQU64(at(reg.RSI, 64+64*q), reg.Z1)
		c.VPANDD(reg.Z1, reg.Z31, reg.Z0)
		c.VPSRLW(operand.Imm(4), reg.Z1, reg.Z1)
		c.VPANDD(reg.Z31, reg.Z1, reg.Z1)
		c.VBROADCASTI32X4(at(reg.R8, 4+64*i+16*h), reg.Z2)
		c.VBROADCASTI32X4(at(reg.R8, 4+64*i+32+16*h), reg.Z3)
		c.VPMADDUBSW(reg.Z2, reg.Z0, p[0])
		c.VPMADDUBSW(reg.Z3, reg.Z1, p[1])
		if h == 0 {
			continue
		}
		// The two chunks of a sub-block: each word the sum of four
		// products (|·| ≤ 4·15·128, exact in int16), times the scale.
		c.VPADDW(reg.Z6, reg.Z4, reg.Z4)
		c.VPADDW(reg.Z7, reg.Z5, reg.Z5)
		c.VPSHUFB(z[23+2*i], reg.Z19, reg.Z6)
		c.VPSHUFB(z[24+2*i], reg.Z19, reg.Z7)
		if i == 0 {
			c.VPMADDWD(reg.Z6, reg.Z4, reg.Z8)
			c.VPMADDWD(reg.Z7, reg.Z5, reg.Z9)
		} else {
			vnni(c, "VPDPWSSD", reg.Z6, reg.Z4, reg.Z8)
			vnni(c, "VPDPWSSD", reg.Z7, reg.Z5, reg.Z9)
		}
	}
	// The mins' sums: Σ_k m[k/2]·bsums[k], in two halves of eight.
	c.VPSHUFB(reg.Z21, reg.Z19, reg.Z0)
	c.VBROADCASTI32X4(at(reg.R8, 260), reg.Z2)
	c.VPMADDWD(reg.Z2, reg.Z0, reg.Z12)
	c.VPSHUFB(reg.Z22, reg.Z19, reg.Z1)
	c.VBROADCASTI32X4(at(reg.R8, 276), reg.Z3)
	vnni(c, "VPDPWSSD", reg.Z3, reg.Z1, reg.Z12)
	// Lane r: 4 dwords of row r's integer sum (Z8+Z9) and of its mins'
	// (Z12); to [isum r0..r3, summs r0..r3] in Y0.
	c.VPADDD(reg.Z9, reg.Z8, reg.Z8)
	c.VPUNPCKLQDQ(reg.Z12, reg.Z8, reg.Z0)
	c.VPUNPCKHQDQ(reg.Z12, reg.Z8, reg.Z1)
	c.VPADDD(reg.Z1, reg.Z0, reg.Z0)
	c.VPSHUFD(operand.Imm(0xb1), reg.Z0, reg.Z1)
	c.VPADDD(reg.Z1, reg.Z0, reg.Z0)
	c.VPERMD(reg.Z0, reg.Z11, reg.Z0)
	// The float step of kFloat, four lanes at once: [d·dy, dmin·dy] times
	// [isum, summs], then the difference added to the sums.
	c.VPERMW(reg.Z18, reg.Z10, reg.Z20)
	c.VCVTPH2PS(reg.X20, reg.Y20)
	c.VBROADCASTSS(at(reg.R8, 0), reg.Y1)
	c.VMULPS(reg.Y1, reg.Y20, reg.Y20)
	c.VCVTDQ2PS(reg.Y0, reg.Y0)
	c.VMULPS(reg.Y0, reg.Y20, reg.Y0)
	c.VEXTRACTF32X4(operand.Imm(1), reg.Y0, reg.X1)
	c.VSUBPS(reg.X1, reg.X0, reg.X0)
	c.VADDPS(reg.X0, reg.X13, reg.X13)
	c.ADDQ(operand.I32(4*144), reg.RSI)
	c.ADDQ(operand.I32(292), reg.R8)
	c.DECQ(reg.RCX)
	c.JNZ(lbl("q4kr4loop"))
	c.Load(c.Param("dst"), reg.RDI)
	c.VMOVUPS(reg.X13, at(reg.RDI, 0))
	end(c, false)
}
