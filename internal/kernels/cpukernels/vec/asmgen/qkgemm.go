package main

import (
	"github.com/mmcloughlin/avo/attr"
	"github.com/mmcloughlin/avo/build"
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
	q5KBlock = 176  // bytes of a q5_K super-block

	// q6_K: d as float32, the 16 group scales as int32 vectors, the
	// scales again as 8 vectors of (s_2k, s_2k+1) word pairs, the quants
	// q+32 (0..63), 4 vectors per group of 16.
	q6D      = 0
	q6Scales = 64
	q6Pairs  = 1088
	q6Quants = 1600
	q6Block  = 5696
	q8KBlock = 292 // bytes of a q8_K block: d, 256 quants, 16 sums
	q8KSums  = 260 // offset of the q8_K 16-quant sums
)

// genQKGemm writes qkgemm_amd64.s: the AVX-512 VNNI GEMM tile of the
// k-quants, 16 weight rows (a packed panel) by 8 q8_K activation rows.
func genQKGemm(c *build.Context) {
	qkTileQ4K(c)
	for _, q5 := range []bool{false, true} {
		qkPackQ4K(c, q5, false)
		qkPackQ4K(c, q5, true)
	}
	qkTileQ6K(c)
	qkPackQ6K(c, false)
	qkPackQ6K(c, true)
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
	w, t, isum, sum := qkTileArgs(c)
	c.Label("qk4loop")
	for g := range 8 {
		qkScaledGroup(c, g, w[:8], t, isum, qkQuants, qkScales)
	}
	// Mins: the sums of the q8_K groups 2g and 2g+1 sit in one dword.
	qkPairSums(c, qkMins, w, t)
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
	qkTileEnd(c, "qk4loop", qkBlock, sum)
}

// qkScaledGroup adds group g's products into the super-block sums isum:
// the group's len(w) quant vectors (4·len(w) elements) are loaded into w
// from the panel's quants, each activation row's lanes t start from zero
// and take one VPDPBUSD per vector, then VPMULLD scales them by the
// group's int32 scales (group 0 writes isum, the others add).
func qkScaledGroup(c *build.Context, g int, w, t, isum []reg.VecPhysical, quants, scales int) {
	n := len(w)
	for k := range n {
		c.VMOVDQU32(at(reg.RSI, quants+64*n*g+64*k), w[k])
	}
	for col := range 8 {
		c.VPXORD(t[col], t[col], t[col])
	}
	for k := range n {
		for col := range 8 {
			vnni(c, "VPDPBUSD", qkCol(col, 4+4*n*g+4*k), w[k], t[col], "BCST")
		}
	}
	for col := range 8 {
		if g == 0 {
			c.VPMULLD(at(reg.RSI, scales), t[col], isum[col])
			continue
		}
		c.VPMULLD(at(reg.RSI, scales+64*g), t[col], t[col])
		c.VPADDD(t[col], isum[col], isum[col])
	}
}

// qkPairSums sets t to Σ_k pairs_k·(bsum_2k, bsum_2k+1) per activation
// row: the 8 vectors of int16 pairs at pairs in the panel (into w)
// against the dwords of the q8_K 16-quant sums, 8 VPDPWSSD.
func qkPairSums(c *build.Context, pairs int, w, t []reg.VecPhysical) {
	for k := range 8 {
		c.VMOVDQU32(at(reg.RSI, pairs+64*k), w[k])
	}
	for col := range 8 {
		c.VPXORD(t[col], t[col], t[col])
	}
	for k := range 8 {
		for col := range 8 {
			vnni(c, "VPDPWSSD", qkCol(col, q8KSums+4*k), w[k], t[col], "BCST")
		}
	}
}

// qkTileArgs loads a tile's arguments (out to BX, p to SI, y to DX, nb to
// CX, the activation row offsets to R8..R11 as qkCol wants them), zeroes
// the float sums and returns the register groups: weights Z0..Z7, integer
// temporaries Z8..Z15, super-block sums Z16..Z23, float sums Z24..Z31.
func qkTileArgs(c *build.Context) (w, t, isum, sum []reg.VecPhysical) {
	c.Load(c.Param("out"), reg.RBX)
	c.Load(c.Param("p"), reg.RSI)
	c.Load(c.Param("y"), reg.RDX)
	c.Load(c.Param("ys"), reg.R8)
	c.Load(c.Param("nb"), reg.RCX)
	c.LEAQ(idx(reg.R8, 0, reg.R8, 2), reg.R9)
	c.LEAQ(idx(reg.R8, 0, reg.R8, 4), reg.R10)
	c.LEAQ(idx(reg.R9, 0, reg.R8, 4), reg.R11)
	z := avx512.v
	w, t, isum, sum = z[0:8], z[8:16], z[16:24], z[24:32]
	for _, s := range sum {
		c.VPXORD(s, s, s)
	}
	return w, t, isum, sum
}

// qkTileEnd closes a tile's super-block loop (panel blocks of block
// bytes) and stores the float sums.
func qkTileEnd(c *build.Context, loop string, block int, sum []reg.VecPhysical) {
	c.ADDQ(operand.U32(uint32(block)), reg.RSI)
	c.ADDQ(operand.U32(q8KBlock), reg.RDX)
	c.DECQ(reg.RCX)
	c.JNZ(operand.LabelRef(loop))
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
//
// With q5 it writes qkPackQ5KPanel512 instead: q5_K has the same d, dmin
// and scales, its 32 bytes of fifth bits at 16 and its nibbles at 48;
// bit 2j (low nibble) or 2j+1 (high) of byte l of qh adds 16 to the quant,
// so q5_K panels have q4_K's layout and run on its tile.
//
// With full (16 rows, no mask) the quants are not gathered: each row's
// 128 nibble bytes are loaded as two vectors and the 16 rows' vectors
// transposed in registers (transpose16), 4·16 shuffles for 16 gathers.
func qkPackQ4K(c *build.Context, q5, full bool) {
	name, typ, iota, loop, qs, bs := "qkPackQ4KPanel512", "q4_K", "qkIota", "qkp4loop", 16, q4KBlock
	if q5 {
		name, typ, iota, loop, qs, bs = "qkPackQ5KPanel512", "q5_K", "qk5Iota", "qkp5loop", 48, q5KBlock
	}
	if full {
		name, iota, loop = name[:len(name)-len("Panel512")]+"Full512", iota+"F", loop+"f"
	}
	fn(c, name, "func(dst *byte, w *byte, stride int, mask int, nb int)",
		"Packs nb super-blocks of the "+typ+" rows at w (stride bytes apart; rows",
		"whose bit is clear in mask are packed as zero) into the panel dst.")
	p := qkPackArgs(c, iota, 0x0f0f0f0f, 63, 15, 0x30, 0x10101010)
	gather, shr, field := p.gather, p.shr, p.field
	pair := func(z, tmp reg.VecPhysical) { // z | z<<16: the (m, m) words
		c.VPSLLD(operand.U8(16), z, tmp)
		c.VPORD(tmp, z, z)
	}
	c.Label(loop)
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
	// fifth adds bit s of each byte of qh (q5_K) as 16 into v.
	fifth := func(qh reg.VecPhysical, s int, v, tmp reg.VecPhysical) {
		switch {
		case s < 4:
			c.VPSLLD(operand.U8(uint8(4-s)), qh, tmp)
			qh = tmp
		case s > 4:
			shr(s-4, qh, tmp)
			qh = tmp
		}
		c.VPANDD(reg.Z26, qh, tmp)
		c.VPORD(tmp, v, v)
	}
	if full {
		qkQuantsFull(c, q5, qs, gather, shr, fifth)
		qkPackEnd(c, loop, bs, qkBlock)
		return
	}
	for k := range 8 {
		qh := z[24]
		if q5 {
			gather(16+4*k, qh)
		}
		for j := range 4 {
			q, lo := z[8+(4*k+j)%8], z[16+(4*k+j)%8]
			gather(qs+32*j+4*k, q)
			c.VPANDD(reg.Z30, q, lo)
			if q5 {
				fifth(qh, 2*j, lo, z[25])
			}
			c.VMOVDQU32(lo, at(reg.RDI, qkQuants+512*(2*j)+64*k))
			shr(4, q, q)
			c.VPANDD(reg.Z30, q, q)
			if q5 {
				fifth(qh, 2*j+1, q, z[25])
			}
			c.VMOVDQU32(q, at(reg.RDI, qkQuants+512*(2*j+1)+64*k))
		}
	}
	qkPackEnd(c, loop, bs, qkBlock)
}

// qkPacker holds a packer's helpers: gather(off, z) fills z with the
// dword at off of each row's super-block (zero for rows outside the
// mask), shr shifts dwords right, field(n, src, mask, dst) is
// dst = (src >> n) & mask.
type qkPacker struct {
	gather func(off int, z reg.VecPhysical)
	shr    func(n int, src, dst reg.VecPhysical)
	field  func(n int, src, mask, dst reg.VecPhysical)
}

// qkPackArgs loads a packer's arguments (dst to DI, w to SI, the row mask
// to R9, nb to CX, the row offsets r·stride to Z31) and broadcasts the
// constants consts into Z30, Z29, ... in order; iotaName names its
// table of 0..15.
func qkPackArgs(c *build.Context, iotaName string, consts ...uint32) qkPacker {
	iota := c.StaticGlobal(iotaName)
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
	for i, v := range consts {
		c.MOVL(operand.U32(v), reg.EAX)
		c.VPBROADCASTD(reg.EAX, avx512.v[30-i])
	}
	var p qkPacker
	p.gather = func(off int, z reg.VecPhysical) {
		c.KMOVW(reg.R9L, reg.K1)
		c.VPXORD(z, z, z)
		c.VPGATHERDD(operand.Mem{Base: reg.RSI, Disp: off, Index: reg.Z31, Scale: 1}, reg.K1, z)
	}
	p.shr = func(n int, src, dst reg.VecPhysical) {
		c.VPSRLD(operand.U8(uint8(n)), src, dst)
	}
	p.field = func(n int, src, mask, dst reg.VecPhysical) {
		if n > 0 {
			p.shr(n, src, dst)
			src = dst
		}
		c.VPANDD(mask, src, dst)
	}
	return p
}

// qkPackEnd closes a packer's loop: weight super-blocks of wblock bytes,
// panel blocks of pblock bytes.
func qkPackEnd(c *build.Context, loop string, wblock, pblock int) {
	c.ADDQ(operand.U32(uint32(wblock)), reg.RSI)
	c.ADDQ(operand.U32(uint32(pblock)), reg.RDI)
	c.DECQ(reg.RCX)
	c.JNZ(operand.LabelRef(loop))
	c.VZEROUPPER()
	c.RET()
}

// qkTileQ6K writes qkGemmQ6KTile512: as qkGemmQ4KTile512 with groups of
// 16 (4 quant vectors, Z0..Z3) and the quants stored as q+32, so the
// 32·Σ_g s_g·bsum_g that offset adds is taken back per super-block (8
// VPDPWSSD of the scale pairs against the q8_K sums, shifted by 5); the
// float step is dotQ6_K's: sum += (d·d_y)·float(isum).
func qkTileQ6K(c *build.Context) {
	fn(c, "qkGemmQ6KTile512", "func(out *float32, p *byte, y *byte, ys int, nb int)",
		"out[c*16+r] = dot of q6_K panel row r with the q8_K row at y+c*ys,",
		"for r < 16, c < 8, over nb ≥ 1 super-blocks.")
	w, t, isum, sum := qkTileArgs(c)
	c.Label("qk6loop")
	for g := range 16 {
		qkScaledGroup(c, g, w[:4], t, isum, q6Quants, q6Scales)
	}
	qkPairSums(c, q6Pairs, w, t)
	for col := range 8 {
		c.VPSLLD(operand.U8(5), t[col], t[col])
		c.VPSUBD(t[col], isum[col], isum[col])
	}
	c.VMOVUPS(at(reg.RSI, q6D), w[0])
	for col := range 8 {
		a := w[1+col%7]
		c.VMULPS_BCST(qkCol(col, 0), w[0], a)
		c.VCVTDQ2PS(isum[col], isum[col])
		c.VMULPS(isum[col], a, a)
		c.VADDPS(a, sum[col], sum[col])
	}
	qkTileEnd(c, "qk6loop", q6Block, sum)
}

// qkPackQ6K writes qkPackQ6KPanel512, the q6_K panel packer (gathers as
// qkPackQ4KPanel512): d widened from half (read as the high word of the
// dword at 206, inside the block); the 16 int8 scales sign-extended to
// int32 and paired as words; each quant's low 4 bits from ql and its 2
// high bits from qh, as ggml's dequantize_row_q6_K lays them out, kept as
// q+32.
func qkPackQ6K(c *build.Context, full bool) {
	name, iota, loop := "qkPackQ6KPanel512", "qk6Iota", "qkp6loop"
	if full {
		name, iota, loop = "qkPackQ6KFull512", "qk6IotaF", "qkp6loopf"
	}
	fn(c, name, "func(dst *byte, w *byte, stride int, mask int, nb int)",
		"Packs nb super-blocks of the q6_K rows at w (stride bytes apart; rows",
		"whose bit is clear in mask are packed as zero) into the panel dst.")
	p := qkPackArgs(c, iota, 0x0f0f0f0f, 0x30303030, 0xffff)
	nib, hi2, low16 := reg.Z30, reg.Z29, reg.Z28
	c.Label(loop)
	p.gather(206, reg.Z0)
	p.shr(16, reg.Z0, reg.Z0)
	c.VPMOVDW(reg.Z0, reg.Y1)
	c.VCVTPH2PS(reg.Y1, reg.Z1)
	c.VMOVUPS(reg.Z1, at(reg.RDI, q6D))
	sc := avx512.v[4:8]
	for i := range 4 {
		p.gather(192+4*i, reg.Z0)
		for j := range 4 {
			c.VPSLLD(operand.U8(uint8(24-8*j)), reg.Z0, sc[j])
			c.VPSRAD(operand.U8(24), sc[j], sc[j])
			c.VMOVDQU32(sc[j], at(reg.RDI, q6Scales+64*(4*i+j)))
		}
		for j := 0; j < 4; j += 2 {
			c.VPANDD(low16, sc[j], reg.Z2)
			c.VPSLLD(operand.U8(16), sc[j+1], reg.Z3)
			c.VPORD(reg.Z3, reg.Z2, reg.Z2)
			c.VMOVDQU32(reg.Z2, at(reg.RDI, q6Pairs+64*(2*i+j/2)))
		}
	}
	// quants writes the 4 quant vectors of word k of half h from that
	// word of ql (qa: bytes 64h+4k, qb: 64h+32+4k) and of qh (128+32h+4k).
	quants := func(h, k int, qa, qb, qh, hs, v reg.VecPhysical) {
		for e, f := range []struct {
			src    reg.VecPhysical
			qshift int // low 4 bits: src >> qshift
			hshift int // high 2 bits: qh << 4 >> hshift
		}{{qa, 0, 0}, {qb, 0, 2}, {qa, 4, 4}, {qb, 4, 6}} {
			p.field(f.qshift, f.src, nib, v)
			switch {
			case f.hshift < 4:
				c.VPSLLD(operand.U8(uint8(4-f.hshift)), qh, hs)
				c.VPANDD(hi2, hs, hs)
			case f.hshift == 4:
				c.VPANDD(hi2, qh, hs)
			default:
				p.field(f.hshift-4, qh, hi2, hs)
			}
			c.VPORD(hs, v, v)
			c.VMOVDQU32(v, at(reg.RDI, q6Quants+64*(32*h+8*e+k)))
		}
	}
	z := avx512.v
	if full {
		// ql transposed (a half's 64 bytes per row), qh gathered.
		qkRowRegs(c)
		for h := range 2 {
			qh := z[17:25]
			for k := range 8 {
				p.gather(128+32*h+4*k, qh[k])
			}
			x := append([]reg.VecPhysical(nil), z[0:16]...)
			for r := range 16 {
				c.VMOVDQU64(qkRow(r, 64*h), x[r])
			}
			f, _ := transpose16(c, x, z[16])
			for k := range 8 {
				quants(h, k, f[k], f[8+k], qh[k], z[25], z[26])
			}
		}
		qkPackEnd(c, loop, 210, q6Block)
		return
	}
	for h := range 2 {
		for k := range 8 {
			i := (8*h + k) % 2
			qa, qb, qh, hs, v := z[8+8*i], z[9+8*i], z[10+8*i], z[11+8*i], z[12+8*i]
			p.gather(64*h+4*k, qa)
			p.gather(64*h+32+4*k, qb)
			p.gather(128+32*h+4*k, qh)
			quants(h, k, qa, qb, qh, hs, v)
		}
	}
	qkPackEnd(c, loop, 210, q6Block)
}

// qkQuantsFull packs the quants of one q4_K/q5_K super-block of 16 full
// rows (the nibbles at qs): rows r at SI + r·stride (R8 = stride, R10 =
// 3·stride, R11 = 5·stride, R12 = 7·stride, R13 = SI + 8·stride), each
// half of the 128 bytes transposed so that a register holds dword k of
// every row, then split into nibbles (and q5_K's fifth bits, gathered).
func qkQuantsFull(c *build.Context, q5 bool, qs int, gather func(int, reg.VecPhysical),
	shr func(int, reg.VecPhysical, reg.VecPhysical), fifth func(reg.VecPhysical, int, reg.VecPhysical, reg.VecPhysical)) {
	z := avx512.v
	qkRowRegs(c)
	row := qkRow
	qh := z[17:25]
	if q5 {
		for k := range 8 {
			gather(16+4*k, qh[k])
		}
	}
	for half := range 2 {
		x := append([]reg.VecPhysical(nil), z[0:16]...)
		for r := range 16 {
			c.VMOVDQU64(row(r, qs+64*half), x[r])
		}
		f, spare := transpose16(c, x, z[16])
		// f[k] is dword k of every row: chunk j = 2·half + k/8, word k%8.
		for k, v := range f {
			j, kk := 2*half+k/8, k%8
			lo := z[25]
			c.VPANDD(reg.Z30, v, lo)
			if q5 {
				fifth(qh[kk], 2*j, lo, spare)
			}
			c.VMOVDQU32(lo, at(reg.RDI, qkQuants+512*(2*j)+64*kk))
			shr(4, v, v)
			c.VPANDD(reg.Z30, v, v)
			if q5 {
				fifth(qh[kk], 2*j+1, v, spare)
			}
			c.VMOVDQU32(v, at(reg.RDI, qkQuants+512*(2*j+1)+64*kk))
		}
	}
}

// qkRowRegs sets up qkRow's registers for the rows at SI: R8 = stride,
// R10 = 3·stride, R11 = 5·stride, R12 = 7·stride, R13 = SI + 8·stride.
func qkRowRegs(c *build.Context) {
	c.Load(c.Param("stride"), reg.R8)
	c.LEAQ(idx(reg.R8, 0, reg.R8, 2), reg.R10)
	c.LEAQ(idx(reg.R8, 0, reg.R8, 4), reg.R11)
	c.LEAQ(idx(reg.R10, 0, reg.R8, 4), reg.R12)
	c.LEAQ(idx(reg.RSI, 0, reg.R8, 8), reg.R13)
}

// qkRow is the address disp bytes into weight row r (< 16) of a full
// panel (registers from qkRowRegs).
func qkRow(r, disp int) operand.Mem {
	base := reg.RSI
	if r >= 8 {
		base, r = reg.R13, r-8
	}
	switch r {
	case 0:
		return at(base, disp)
	case 1:
		return idx(base, disp, reg.R8, 1)
	case 2:
		return idx(base, disp, reg.R8, 2)
	case 3:
		return idx(base, disp, reg.R10, 1)
	case 4:
		return idx(base, disp, reg.R8, 4)
	case 5:
		return idx(base, disp, reg.R11, 1)
	case 6:
		return idx(base, disp, reg.R10, 2)
	}
	return idx(base, disp, reg.R12, 1)
}

// transpose16 transposes the 16×16 dwords in x (row r in x[r]) with one
// spare register: it returns the registers holding dword k of rows
// 0..15 in order, for k = 0..15, and the register left spare. Each step turns a pair of registers
// into a pair, the low result over its first input and the high one into
// the spare, the second input becoming the next spare:
//
//	dwords interleaved (VPUNPCK[LH]DQ) by row pairs, qwords (VPUNPCK[LH]QDQ)
//	by pairs of pairs, then 128-bit lanes (VSHUFI32X4) twice.
func transpose16(c *build.Context, x []reg.VecPhysical, spare reg.VecPhysical) ([]reg.VecPhysical, reg.VecPhysical) {
	step := func(lo, hi func(b, a, dst reg.VecPhysical), a, b reg.VecPhysical) (reg.VecPhysical, reg.VecPhysical) {
		h := spare
		hi(b, a, h)
		lo(b, a, a)
		spare = b
		return a, h
	}
	ins := func(f func(...operand.Op)) func(b, a, dst reg.VecPhysical) {
		return func(b, a, dst reg.VecPhysical) { f(b, a, dst) }
	}
	shuf := func(imm uint8) func(b, a, dst reg.VecPhysical) {
		return func(b, a, dst reg.VecPhysical) { c.VSHUFI32X4(operand.U8(imm), b, a, dst) }
	}
	// t[2i], t[2i+1]: rows 2i, 2i+1 interleaved, dwords 4L+{0,1} / 4L+{2,3}.
	t := make([]reg.VecPhysical, 16)
	for i := range 8 {
		t[2*i], t[2*i+1] = step(ins(c.VPUNPCKLDQ), ins(c.VPUNPCKHDQ), x[2*i], x[2*i+1])
	}
	// u[4i+d]: rows 4i..4i+3 of dword 4L+d in lane L.
	u := make([]reg.VecPhysical, 16)
	for i := range 4 {
		u[4*i], u[4*i+1] = step(ins(c.VPUNPCKLQDQ), ins(c.VPUNPCKHQDQ), t[4*i], t[4*i+2])
		u[4*i+2], u[4*i+3] = step(ins(c.VPUNPCKLQDQ), ins(c.VPUNPCKHQDQ), t[4*i+1], t[4*i+3])
	}
	// Per d, a 4×4 transpose of lanes among u[d], u[4+d], u[8+d], u[12+d].
	f := make([]reg.VecPhysical, 16)
	for d := range 4 {
		a, b := step(shuf(0x44), shuf(0xee), u[d], u[4+d])
		e, g := step(shuf(0x44), shuf(0xee), u[8+d], u[12+d])
		f[d], f[4+d] = step(shuf(0x88), shuf(0xdd), a, e)
		f[8+d], f[12+d] = step(shuf(0x88), shuf(0xdd), b, g)
	}
	return f, spare
}
