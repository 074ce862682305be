package main

import (
	"github.com/mmcloughlin/avo/attr"
	"github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/ir"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// genQDotK512 writes qdot_k512_amd64.s: the AVX-512 (BW, VL, VNNI)
// k-quant dots of one weight row with one or four q8_K activation rows
// (see qdot_k512_amd64.go), ten kernels from kDot512. Per super-block the
// weights are unpacked once to unsigned bytes in element order, 64 per
// ZMM register; per activation row each register meets 64 q8 bytes in
// VPMADDUBSW (u8·s8 pairs to int16) and VPDPWSSD (int16 pairs times the
// sub-block scale, accumulated in int32). The int32 lanes are summed
// exactly, the min (q4_K, q5_K, q2_K) or offset (q6_K, q3_K) term added
// from the activation's 16-quant sums, and the float math is ggml's, lane
// per activation row, in the order of the Go kernels (qdot_k.go): no FMA,
// super-blocks in order.
//
// Registers: SI the weight super-block; R8..R11 the activation blocks of
// rows 0..3; CX super-blocks left; Z0..Z3 unpacked weights; Z4..Z7 the
// scale words of each chunk; Z8..Z11 int32 accumulators of rows 0..3;
// Z12..Z15 the min sums; Z16, Z17 temporaries; Z18 the scale words; Z19
// the min or offset words; Z20..Z23 float temporaries; Z24 (X24) the float
// sums with mins, X15 those with offsets (Z24 holds a shift in q6_K);
// Z25..Z31 constants.
func genQDotK512(c *build.Context) {
	t := kTables(c)
	for _, k := range []kKind{kQ4, kQ5, kQ6, kQ2, kQ3} {
		kDot512(c, k, 4, t)
		kDot512(c, k, 1, t)
	}
	for _, k := range []kKind{kQ4, kQ5, kQ6} {
		kDot512W4(c, k, t, false)
	}
	kDot512W4(c, kQ4, t, true)
	kDot512R4(c, t)
}

// kInterDist is the prefetch distance of the interleaved kernel in bytes.
const kInterDist = 4096

// kKind is a k-quant type of the AVX-512 dots.
type kKind int

const (
	kQ4 kKind = iota
	kQ5
	kQ6
	kQ2
	kQ3
)

// kBlock is what the kernels of a kind differ in.
type kBlock struct {
	name   string
	bytes  int // one super-block
	offset bool
	d, m   int // the offsets of the f16 scale d and (mins) dmin
}

var kBlocks = [...]kBlock{
	kQ4: {"q4K", 144, false, 0, 2},
	kQ5: {"q5K", 176, false, 0, 2},
	kQ6: {"q6K", 210, true, 208, 0},
	kQ2: {"q2K", 84, false, 80, 82},
	kQ3: {"q3K", 110, true, 108, 0},
}

// words writes a table of the 8-byte words w.
func words(c *build.Context, name string, w ...uint64) operand.Mem {
	m := c.StaticGlobal(name)
	c.DataAttributes(attr.RODATA | attr.NOPTR)
	for i, v := range w {
		c.AddDatum(8*i, operand.U64(v))
	}
	return m
}

// halves is a 64-byte table of lo in the low 256 bits, hi in the high.
func halves(c *build.Context, name string, lo, hi uint64) operand.Mem {
	return words(c, name, lo, lo, lo, lo, hi, hi, hi, hi)
}

// kTab are the tables of the k-quant kernels.
type kTab struct {
	z0f, z30, q4sr, q4m, q4ia, q4ib, q4sa, q4ma, z10, q2e, q2o, z03, z04 operand.Mem
	q3ia, q3sa, q3ib, q3sb, w32, q6sl, q6sr                              operand.Mem
	q4s, q5r, q3r, q6s                                                   [4]operand.Mem
	q4p                                                                  [4]operand.Mem
}

func kTables(c *build.Context) kTab {
	rep := func(b uint64) uint64 { return b * 0x0101010101010101 }
	// dw is the dword n in both halves of a word.
	dw := func(n uint64) uint64 { return n | n<<32 }
	var t kTab
	t.z0f = halves(c, "kz0f", rep(0x0f), rep(0x0f))
	t.z30 = halves(c, "kz30", rep(0x30), rep(0x30))
	// q4_K: the shift that takes 32 nibble bytes broadcast to both halves
	// to elements 0..31 (low nibbles) and 32..63 (high nibbles).
	t.q4sr = halves(c, "kq4sr", spread(0), spread(4))
	// q4_K: VPERMW indexes of the scale pair of 64-element chunk k
	// (scales in words 0..7, mins in words 8..15), and of the mins, each
	// twice (for the pairs of 16-quant sums).
	for k := range 4 {
		t.q4s[k] = halves(c, "kq4s"+string(rune('0'+k)), spread(uint64(2*k)), spread(uint64(2*k+1)))
	}
	// q4_K with the packed activation (kDot512W4's packed variant): the
	// chunks are the low and high nibbles of 64 quant bytes, sub-blocks
	// (0, 2), (1, 3), (4, 6), (5, 7).
	for k, p := range [4][2]uint64{{0, 2}, {1, 3}, {4, 6}, {5, 7}} {
		t.q4p[k] = halves(c, "kq4p"+string(rune('0'+k)), spread(p[0]), spread(p[1]))
	}
	t.q4m = words(c, "kq4m", 0x0009000900080008, 0x000b000b000a000a, 0x000d000d000c000c, 0x000f000f000e000e, 0, 0, 0, 0)
	// q4_K scales: VPSHUFB indexes of the low bits (kq4ia) and the high
	// bits (kq4ib) of each scale and min word, the right shift of the low
	// bits (kq4sa) and their mask (kq4ma).
	t.q4ia = words(c, "kq4ia", 0x8003800280018000, 0x800b800a80098008, 0x8007800680058004, 0x800b800a80098008)
	t.q4ib = words(c, "kq4ib", 0x8080808080808080, 0x8003800280018000, 0x8080808080808080, 0x8007800680058004)
	t.q4sa = words(c, "kq4sa", 0, 0, 0, spread(4))
	t.q4ma = words(c, "kq4ma", spread(0x3f), spread(0x0f), spread(0x3f), spread(0x0f))
	// q5_K: dword rotations that bring bit 2k (low half) and 2k+1 (high
	// half) of each byte to bit 4, and the mask of bit 4.
	for k := range 4 {
		t.q5r[k] = halves(c, "kq5r"+string(rune('0'+k)), dw(uint64(4-2*k)&31), dw(uint64(3-2*k)&31))
	}
	t.z10 = halves(c, "kz10", rep(0x10), rep(0x10))
	// q2_K and q3_K: the right shifts of the broadcast quant bytes for
	// the even chunks (bit pairs 0 and 1) and the odd ones (2 and 3), the
	// mask of a bit pair.
	t.q2e = halves(c, "kq2e", spread(0), spread(2))
	t.q2o = halves(c, "kq2o", spread(4), spread(6))
	t.z03 = halves(c, "kz03", rep(0x03), rep(0x03))
	// q3_K: dword rotations that bring bit 2k (low half) and 2k+1 (high
	// half) of each hmask byte to bit 2, the mask of bit 2; the VPSHUFB
	// indexes, shifts and bias of the 6-bit scales (12 bytes loaded from
	// 94(SI)).
	for k := range 4 {
		t.q3r[k] = halves(c, "kq3r"+string(rune('0'+k)), dw(uint64(2-2*k)&31), dw(uint64(1-2*k)&31))
	}
	t.z04 = halves(c, "kz04", rep(0x04), rep(0x04))
	t.q3ia = words(c, "kq3ia", 0x8005800480038002, 0x8009800880078006, 0x8005800480038002, 0x8009800880078006)
	t.q3sa = words(c, "kq3sa", 0, 0, spread(4), spread(4))
	t.q3ib = words(c, "kq3ib", 0x800d800c800b800a, 0x800d800c800b800a, 0x800d800c800b800a, 0x800d800c800b800a)
	t.q3sb = words(c, "kq3sb", spread(0), spread(2), spread(4), spread(6))
	t.w32 = words(c, "kw32", spread(32), spread(32), spread(32), spread(32))
	// q6_K: the shifts that put bit pairs of the broadcast qh bytes at
	// bits 4..5: left by 4 and 2 for the even chunks, right by 0 and 2
	// for the odd.
	t.q6sl = halves(c, "kq6sl", spread(4), spread(2))
	t.q6sr = halves(c, "kq6sr", spread(0), spread(2))
	// q6_K (and q2_K, q3_K): VPERMW indexes of the four 16-element scales
	// of chunk k.
	for k := range 4 {
		s := func(i int) uint64 { return spread(uint64(4*k + i)) }
		t.q6s[k] = words(c, "kq6s"+string(rune('0'+k)), s(0), s(0), s(1), s(1), s(2), s(2), s(3), s(3))
	}
	return t
}

// vnni appends the AVX-512 VNNI instruction op (VPDPBUSD, VPDPWSSD) with
// operands src, w, acc (acc += the dot products of w with src, four byte
// or two word products per lane), which avo v0.5.0 does not know: a raw
// instruction, acc both read and written so that avo's liveness pass
// sees the read-modify-write. suffixes are the instruction's suffixes
// (BCST: src is a 32-bit memory operand broadcast to every lane).
func vnni(c *build.Context, op string, src, w, acc operand.Op, suffixes ...string) {
	c.Instruction(&ir.Instruction{
		Opcode:   op,
		Suffixes: suffixes,
		Operands: []operand.Op{src, w, acc},
		Inputs:   []operand.Op{src, w, acc},
		Outputs:  []operand.Op{acc},
		ISA:      []string{"AVX512_VNNI"},
	})
}

// kDot512 writes the kernel of kind k with rows (4 or 1) activation rows.
func kDot512(c *build.Context, k kKind, rows int, t kTab) {
	b := kBlocks[k]
	z := avx512.v
	sum := reg.X24 // the float sums
	if b.offset {
		sum = reg.X15
	}
	act := []reg.GPPhysical{reg.R8, reg.R9, reg.R10, reg.R11}[:rows]
	if rows == 4 {
		fn(c, b.name+"Dot4AVX512", "func(w *byte, y *byte, ys int, nb int, dst *float32, ds int)",
			"dst[r·ds] = the dot of the weight row w (nb super-blocks) with the q8_K",
			"row y+r·ys, for r < 4.")
		c.Load(c.Param("w"), reg.RSI)
		c.Load(c.Param("nb"), reg.RCX)
		c.Load(c.Param("y"), reg.R8)
		c.Load(c.Param("ys"), reg.RAX)
		for r := 1; r < 4; r++ {
			c.LEAQ(idx(act[r-1], 0, reg.RAX, 1), act[r])
		}
	} else {
		fn(c, b.name+"Dot1AVX512", "func(w *byte, y *byte, nb int) float32",
			"The dot of the weight row w (nb super-blocks) with the q8_K row y.")
		c.Load(c.Param("w"), reg.RSI)
		c.Load(c.Param("y"), reg.R8)
		c.Load(c.Param("nb"), reg.RCX)
	}
	kConsts(c, k, t)
	c.VXORPS(sum, sum, sum)
	loop := b.name[:2] + "k" + string(rune('0'+rows)) + "loop"
	c.Label(loop)
	kUnpack(c, k, t)
	for r, y := range act {
		kRow(c, y, z[8+r], b.offset, z[12+r])
	}
	if rows == 4 {
		kHsum4(c, reg.Y8, reg.Y9, reg.Y10, reg.Y11, reg.Y21)
		if !b.offset {
			kHsum4(c, reg.Y12, reg.Y13, reg.Y14, reg.Y15, reg.Y22)
		}
		c.VMOVSS(at(reg.R8, 0), reg.X20)
		for r := 1; r < 4; r++ {
			c.VINSERTPS(operand.Imm(uint64(r<<4)), at(act[r], 0), reg.X20, reg.X20)
		}
	} else {
		m := reg.Y12
		if b.offset {
			m = reg.Y8
		}
		kHsum2(c, reg.Y8, m)
		c.VMOVSS(at(reg.R8, 0), reg.X20)
	}
	kFloat(c, b, []reg.GPPhysical{reg.RSI})
	c.ADDQ(operand.I32(b.bytes), reg.RSI)
	for _, y := range act {
		c.ADDQ(operand.I32(292), y)
	}
	c.DECQ(reg.RCX)
	c.JNZ(lbl(loop))
	if rows == 1 {
		c.VMOVSS(sum, ret(c))
		end(c, false)
		return
	}
	if b.offset {
		c.VMOVAPS(reg.X15, reg.X24)
	}
	// The four lanes of X24 to dst, dst+ds, dst+2ds, dst+3ds (ds in
	// float32 elements).
	c.Load(c.Param("dst"), reg.RDI)
	c.Load(c.Param("ds"), reg.RAX)
	c.SHLQ(operand.Imm(2), reg.RAX)
	c.VMOVSS(reg.X24, at(reg.RDI, 0))
	for r := 1; r < 4; r++ {
		c.ADDQ(reg.RAX, reg.RDI)
		c.VEXTRACTPS(operand.Imm(uint64(r)), reg.X24, at(reg.RDI, 0))
	}
	end(c, false)
}

// kConsts loads the constant registers of kind k: the tables of its
// unpacking in Z24..Z30, the nibble mask in Z31.
func kConsts(c *build.Context, k kKind, t kTab) {
	z := avx512.v
	switch k {
	case kQ4, kQ5:
		for i := range 4 {
			c.VMOVDQU64(t.q4s[i], z[26+i])
		}
		c.VMOVDQU64(t.q4m, reg.Y25)
		c.VMOVDQU64(t.q4sr, reg.Z30)
	case kQ6:
		for i := range 4 {
			c.VMOVDQU64(t.q6s[i], z[26+i])
		}
		c.VMOVDQU64(t.q6sl, reg.Z25)
		c.VMOVDQU64(t.q6sr, reg.Z24)
		c.VMOVDQU64(t.z30, reg.Z30)
	case kQ2, kQ3:
		for i := range 4 {
			c.VMOVDQU64(t.q6s[i], z[26+i])
		}
		c.VMOVDQU64(t.z03, reg.Z30)
	}
	c.VMOVDQU64(t.z0f, reg.Z31)
}

// kPermScales spreads the scale words in Z18 to Z4..Z7, chunk by chunk
// (indexes in Z26..Z29).
func kPermScales(c *build.Context) {
	for i := range 4 {
		c.VPERMW(reg.Z18, avx512.v[26+i], avx512.v[4+i])
	}
}

// kNegScale sets Y19 = -(Y18 << shift): the offset words.
func kNegScale(c *build.Context, shift uint64) {
	c.VPSLLW(operand.Imm(shift), reg.Y18, reg.Y19)
	c.VPXORD(reg.Y20, reg.Y20, reg.Y20)
	c.VPSUBW(reg.Y19, reg.Y20, reg.Y19)
}

// kQ4Scales unpacks the 12 scale bytes at 4(SI) of a q4_K or q5_K
// super-block (6-bit scales and mins, ggml's layout) to words (scales
// 0..7, mins 8..15) with VPSHUFB twice: the low bits from the first
// (shifted for mins 4..7), the two high bits of scales and mins 4..7 from
// the second; then spreads them to Z4..Z7 (tables in Z26..Z29) and the
// mins to Y19.
func kQ4Scales(c *build.Context, t kTab) {
	c.VBROADCASTI32X4(at(reg.RSI, 4), reg.Y18)
	c.VPSHUFB(t.q4ia, reg.Y18, reg.Y16)
	c.VPSHUFB(t.q4ib, reg.Y18, reg.Y17)
	c.VPSRLVW(t.q4sa, reg.Y16, reg.Y18)
	c.VPSRLW(operand.Imm(6), reg.Y17, reg.Y17)
	c.VPSLLW(operand.Imm(4), reg.Y17, reg.Y17)
	c.VPTERNLOGD(operand.Imm(0xec), t.q4ma, reg.Y17, reg.Y18)
	kPermScales(c)
	c.VPERMW(reg.Y18, reg.Y25, reg.Y19)
}

// kUnpackQ4P unpacks the q4_K super-block at SI for the packed activation
// (vec.PackQ8_KForQ4K): Z0/Z1 the low/high nibbles of quant bytes 0..63,
// Z2/Z3 those of bytes 64..127 (sub-blocks 0|2, 1|3, 4|6, 5|7), straight
// from two loads; scales as kQ4Scales (with the packed tables in Z26..Z29).
func kUnpackQ4P(c *build.Context, t kTab) {
	kQ4Scales(c, t)
	for h, off := range []int{16, 80} {
		lo, hi := avx512.v[2*h], avx512.v[2*h+1]
		c.VPSRLW(operand.Imm(4), at(reg.RSI, off), hi)
		c.VPANDD(at(reg.RSI, off), reg.Z31, lo)
		c.VPANDD(reg.Z31, hi, hi)
	}
}

// kUnpack unpacks the super-block at SI: quants to Z0..Z3, scale words to
// Z4..Z7, min or offset words to Y19.
func kUnpack(c *build.Context, k kKind, t kTab) {
	switch k {
	case kQ4, kQ5:
		kQ4Scales(c, t)
		// The 128 nibble bytes (after the fifth bits in q5_K).
		qs := 16
		if k == kQ5 {
			qs = 48
		}
		for i := range 4 {
			c.VBROADCASTI64X4(at(reg.RSI, qs+32*i), avx512.v[i])
		}
		for i := range 4 {
			c.VPSRLVW(reg.Z30, avx512.v[i], avx512.v[i])
		}
		for i := range 4 {
			c.VPANDD(reg.Z31, avx512.v[i], avx512.v[i])
		}
		if k == kQ5 {
			kHighBits(c, 16, t.q5r, t.z10)
		}
	case kQ6:
		// Scales at 192(SI); ql at 0(SI), qh at 128(SI): two halves of
		// 128 elements, q+32.
		c.VPMOVSXBW(at(reg.RSI, 192), reg.Y18)
		kPermScales(c)
		kNegScale(c, 5)
		for h := range 2 {
			lo, hi := avx512.v[2*h], avx512.v[2*h+1]
			c.VMOVDQU64(at(reg.RSI, 64*h), reg.Z16)
			c.VBROADCASTI64X4(at(reg.RSI, 128+32*h), reg.Z17)
			c.VPSLLVW(reg.Z25, reg.Z17, lo)
			c.VPANDD(reg.Z30, lo, lo)
			c.VPTERNLOGD(operand.Imm(0xf8), reg.Z31, reg.Z16, lo)
			c.VPSRLVW(reg.Z24, reg.Z17, hi)
			c.VPANDD(reg.Z30, hi, hi)
			c.VPSRLW(operand.Imm(4), reg.Z16, reg.Z16)
			c.VPTERNLOGD(operand.Imm(0xf8), reg.Z31, reg.Z16, hi)
		}
	case kQ2:
		// Scales (low nibbles of the 16 bytes at 0(SI)), mins (high
		// nibbles) in the words of Y19; quants (64 bytes at 16(SI)).
		c.VPMOVZXBW(at(reg.RSI, 0), reg.Y18)
		c.VPSRLW(operand.Imm(4), reg.Y18, reg.Y19)
		c.VPANDD(reg.Y31, reg.Y18, reg.Y18)
		kPermScales(c)
		kBits2(c, 16, t)
	case kQ3:
		// The 6-bit signed scales (12 bytes at 96(SI), loaded from 94),
		// -4·scale in Y19; quants q+4 in [0, 7].
		c.VBROADCASTI32X4(at(reg.RSI, 94), reg.Y18)
		c.VPSHUFB(t.q3ia, reg.Y18, reg.Y16)
		c.VPSHUFB(t.q3ib, reg.Y18, reg.Y17)
		c.VPSRLVW(t.q3sa, reg.Y16, reg.Y18)
		c.VPSLLW(operand.Imm(4), reg.Y17, reg.Y17)
		c.VPSRLVW(t.q3sb, reg.Y17, reg.Y17)
		c.VPANDD(t.z30, reg.Y17, reg.Y17)
		c.VPTERNLOGD(operand.Imm(0xec), reg.Y31, reg.Y17, reg.Y18)
		c.VPSUBW(t.w32, reg.Y18, reg.Y18)
		kPermScales(c)
		kNegScale(c, 2)
		kBits2(c, 32, t)
		kHighBits(c, 0, t.q3r, t.z04)
	}
}

// kBits2 unpacks the 2-bit quants of 256 elements (64 bytes at qs(SI))
// into Z0..Z3, 128 elements per 32 bytes.
func kBits2(c *build.Context, qs int, t kTab) {
	for h := range 2 {
		lo, hi := avx512.v[2*h], avx512.v[2*h+1]
		c.VBROADCASTI64X4(at(reg.RSI, qs+32*h), reg.Z16)
		c.VPSRLVW(t.q2e, reg.Z16, lo)
		c.VPSRLVW(t.q2o, reg.Z16, hi)
		c.VPANDD(reg.Z30, lo, lo)
		c.VPANDD(reg.Z30, hi, hi)
	}
}

// kHighBits adds the high bit of each quant (32 bytes at off(SI): bit 2k
// of byte l for element 64k+l, bit 2k+1 for 64k+32+l) to Z0..Z3: the
// dword rotations r bring each chunk's bit to the bit of mask.
func kHighBits(c *build.Context, off int, r [4]operand.Mem, mask operand.Mem) {
	c.VBROADCASTI64X4(at(reg.RSI, off), reg.Z18)
	for h := range 2 {
		c.VPROLVD(r[2*h], reg.Z18, reg.Z16)
		c.VPROLVD(r[2*h+1], reg.Z18, reg.Z17)
		c.VPTERNLOGD(operand.Imm(0xf8), mask, reg.Z16, avx512.v[2*h])
		c.VPTERNLOGD(operand.Imm(0xf8), mask, reg.Z17, avx512.v[2*h+1])
	}
}

// kRow: the integer sums of the activation row at y: Σ_chunks scale·(w·q8)
// into the int32 lanes of acc (16 lanes, then folded into its low 8), then
// the mins' sums into m, or the offset term into acc.
func kRow(c *build.Context, y reg.GPPhysical, acc reg.VecPhysical, offset bool, m reg.VecPhysical) {
	c.VPMADDUBSW(at(y, 4), reg.Z0, reg.Z16)
	c.VPMADDUBSW(at(y, 68), reg.Z1, reg.Z17)
	c.VPMADDWD(reg.Z4, reg.Z16, acc)
	c.VPMADDUBSW(at(y, 132), reg.Z2, reg.Z16)
	vnni(c, "VPDPWSSD", reg.Z5, reg.Z17, acc)
	c.VPMADDUBSW(at(y, 196), reg.Z3, reg.Z17)
	vnni(c, "VPDPWSSD", reg.Z6, reg.Z16, acc)
	vnni(c, "VPDPWSSD", reg.Z7, reg.Z17, acc)
	c.VEXTRACTI64X4(operand.Imm(1), acc, reg.Y16)
	c.VPADDD(reg.Y16, acc.AsY(), acc.AsY())
	if offset {
		vnni(c, "VPDPWSSD", at(y, 260), reg.Y19, acc.AsY())
	} else {
		c.VPMADDWD(at(y, 260), reg.Y19, m.AsY())
	}
}

// kHsum4 leaves in d (and its X half) the four sums of the eight int32
// lanes of a, b, cc, dd, in that order; it uses Y16, Y17, Y20 and Y23.
func kHsum4(c *build.Context, a, b, cc, dd, d reg.VecPhysical) {
	c.VPUNPCKLDQ(b, a, reg.Y16)
	c.VPUNPCKHDQ(b, a, reg.Y17)
	c.VPADDD(reg.Y17, reg.Y16, reg.Y16)
	c.VPUNPCKLDQ(dd, cc, reg.Y17)
	c.VPUNPCKHDQ(dd, cc, reg.Y20)
	c.VPADDD(reg.Y20, reg.Y17, reg.Y17)
	c.VPUNPCKLQDQ(reg.Y17, reg.Y16, reg.Y20)
	c.VPUNPCKHQDQ(reg.Y17, reg.Y16, reg.Y23)
	c.VPADDD(reg.Y23, reg.Y20, d)
	c.VEXTRACTI32X4(operand.Imm(1), d, reg.X17)
	c.VPADDD(reg.X17, d.AsX(), d.AsX())
}

// kHsum2 leaves the sum of a's eight int32 lanes in lane 0 of X21 and
// b's in lane 0 of X22; it uses Y16 and Y17.
func kHsum2(c *build.Context, a, b reg.VecPhysical) {
	c.VPUNPCKLDQ(b, a, reg.Y16)
	c.VPUNPCKHDQ(b, a, reg.Y17)
	c.VPADDD(reg.Y17, reg.Y16, reg.Y16)
	c.VEXTRACTI32X4(operand.Imm(1), reg.Y16, reg.X17)
	c.VPADDD(reg.X17, reg.X16, reg.X16)
	c.VPSHUFD(operand.Imm(0x4e), reg.X16, reg.X17)
	c.VPADDD(reg.X17, reg.X16, reg.X21)
	c.VPSHUFD(operand.Imm(0x55), reg.X21, reg.X22)
}

// kFloat adds a super-block's float terms, lane per row, to the sums:
// X24 += (d·dy)·isum − (dmin·dy)·summs (mins), or X15 += (d·dy)·isum
// (offsets), with the int32 sums in X21 (isum) and X22 (summs), dy in
// X20, the half scales at d(w) and m(w) of the weight row w (one for
// every lane) or rows w[0..3] (lane r from w[r]).
func kFloat(c *build.Context, b kBlock, w []reg.GPPhysical) {
	c.VCVTDQ2PS(reg.X21, reg.X21)
	if b.offset {
		kScaled(c, w, b.d, reg.X21)
		c.VADDPS(reg.X21, reg.X15, reg.X15)
		return
	}
	c.VCVTDQ2PS(reg.X22, reg.X22)
	kScaled(c, w, b.d, reg.X21)
	kScaled(c, w, b.m, reg.X22)
	c.VSUBPS(reg.X22, reg.X21, reg.X21)
	c.VADDPS(reg.X21, reg.X24, reg.X24)
}

// kScaled sets x = (half(off(w))·dy)·x, lane r's half from w[r] when
// there are four rows.
func kScaled(c *build.Context, w []reg.GPPhysical, off int, x reg.VecPhysical) {
	if len(w) == 1 {
		c.VPBROADCASTW(at(w[0], off), reg.X23)
	} else {
		for r, p := range w {
			c.VPINSRW(operand.Imm(uint64(r)), at(p, off), reg.X23, reg.X23)
		}
	}
	c.VCVTPH2PS(reg.X23, reg.X23)
	c.VMULPS(reg.X20, reg.X23, reg.X23)
	c.VMULPS(x, reg.X23, x)
}

// kDot512W4 writes the decode kernel of kind k: four weight rows (stride
// bytes apart) with one q8_K activation row, dst[r] for weight row r, each
// the bits of the one-row kernel (the same integer sums, exact; the same
// float steps, lane per weight row). Per super-block each weight row is
// unpacked in turn (its pointer moved to SI for kUnpack) and met with the
// activation's super-block in kRow; lane r of the float sums is weight
// row r's, its scales gathered into X23 by kScaled.
//
// Like q512Dot's four-row kernels it prefetches, at each super-block, the
// same place in the next four rows (the rows of the next call over a
// tile): a decode product streams its weights from memory, and the rows
// a call starts on must already be on their way. A super-block is longer
// than a line (q4_K 144 bytes, q6_K 210), so each next row gets a
// prefetch per line the step covers (offsets 0, 64, 128, and 192 for
// q6_K), none left to a demand miss. Prefetches never fault: the rows
// past the last are harmless.
//
// k512.mat does not call them (1.2× in the cache, but from memory no less
// CPU time than the one-row kernel on the machine measured: RATIONALE.md,
// "The four-weight-row q4_K decode dot is generated but not used").
//
// Registers: RBX, R9, R10, R11 the weight rows, R8 the activation, AX the
// stride, R12 and R13 the next rows 4 and 6, CX super-blocks left; vector
// registers as kDot512's with four activation rows.
//
// With packed (q4_K only) it is q4KDot4WPAVX512, whose activation row is
// packed by vec.PackQ8_KForQ4K: each weight row's quants are then two
// loads and masks (kUnpackQ4P) instead of four broadcasts, shifts and
// masks, and the exact integer sums, so the results, are the same.
func kDot512W4(c *build.Context, k kKind, t kTab, packed bool) {
	b := kBlocks[k]
	z := avx512.v
	sum := reg.X24
	if b.offset {
		sum = reg.X15
	}
	name, what := b.name+"Dot4WAVX512", "q8_K row y, for r < 4."
	if packed {
		name, what = b.name+"Dot4WPAVX512", "q8_K row y packed by PackQ8_KForQ4K, for r < 4."
	}
	fn(c, name, "func(w *byte, stride int, y *byte, nb int, dst *float32)",
		"dst[r] = the dot of the weight row w+r·stride (nb super-blocks) with the",
		what)
	rows := []reg.GPPhysical{reg.RBX, reg.R9, reg.R10, reg.R11}
	c.Load(c.Param("w"), reg.RBX)
	c.Load(c.Param("stride"), reg.RAX)
	c.Load(c.Param("y"), reg.R8)
	c.Load(c.Param("nb"), reg.RCX)
	for r := 1; r < 4; r++ {
		c.LEAQ(idx(rows[r-1], 0, reg.RAX, 1), rows[r])
	}
	c.LEAQ(idx(reg.R11, 0, reg.RAX, 1), reg.R12)
	c.LEAQ(idx(reg.R12, 0, reg.RAX, 2), reg.R13)
	kConsts(c, k, t)
	loop := b.name[:2] + "kw4loop"
	if packed {
		for i := range 4 {
			c.VMOVDQU64(t.q4p[i], z[26+i])
		}
		loop = b.name[:2] + "kw4ploop"
	}
	c.VXORPS(sum, sum, sum)
	c.Label(loop)
	for off := 0; off < b.bytes; off += 64 {
		c.PREFETCHT0(at(reg.R12, off))
		c.PREFETCHT0(idx(reg.R12, off, reg.RAX, 1))
		c.PREFETCHT0(at(reg.R13, off))
		c.PREFETCHT0(idx(reg.R13, off, reg.RAX, 1))
	}
	for r, p := range rows {
		c.MOVQ(p, reg.RSI)
		if packed {
			kUnpackQ4P(c, t)
		} else {
			kUnpack(c, k, t)
		}
		kRow(c, reg.R8, z[8+r], b.offset, z[12+r])
	}
	kHsum4(c, reg.Y8, reg.Y9, reg.Y10, reg.Y11, reg.Y21)
	if !b.offset {
		kHsum4(c, reg.Y12, reg.Y13, reg.Y14, reg.Y15, reg.Y22)
	}
	c.VBROADCASTSS(at(reg.R8, 0), reg.X20)
	kFloat(c, b, rows)
	for _, p := range append(rows, reg.R12, reg.R13) {
		c.ADDQ(operand.I32(b.bytes), p)
	}
	c.ADDQ(operand.I32(292), reg.R8)
	c.DECQ(reg.RCX)
	c.JNZ(lbl(loop))
	c.Load(c.Param("dst"), reg.RDI)
	c.VMOVUPS(sum, at(reg.RDI, 0))
	end(c, false)
}
