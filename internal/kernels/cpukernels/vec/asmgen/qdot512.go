package main

import (
	"fmt"

	"github.com/mmcloughlin/avo/attr"
	"github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// genQDot512 writes qdot512_amd64.s: the AVX-512 (F, BW, VBMI, VNNI)
// quantized row dots of q8_0, q4_0 and q5_0 weight rows with a q8_0
// activation row and of q4_1 and q5_1 rows with a q8_1 row, four rows or
// one per call, all from q512Dot (see qdot.go and RATIONALE.md). They
// take two blocks a step, one per 256-bit half of a ZMM register:
//
//   - the bytes of a block pair are loaded and permuted (VPERMT2B /
//     VPERMB) into the 64 quants, block A in bytes 0..31, block B in
//     32..63, each in element order; nibbles are separated by a per-word
//     shift (VPSRLVW) and a mask, fifth bits become a byte mask (VPERMB
//     spreads each qh byte over its 8 elements, VPTESTMB picks bit j%8)
//     under which 16 is added;
//   - VPDPBUSD multiplies unsigned weight bytes with the signed activation
//     bytes into sixteen 32-bit lanes (lanes 0..7 block A, 8..15 block B).
//     The q8_0-side weights are made unsigned with an offset c (q8_0: w+128
//     by flipping the sign bit; q4_0: the raw nibble, q+8; q5_0: q+16), and
//     the lanes start from -c·(4-byte partial sums of y), computed once per
//     activation pair for all rows, so every block's lanes sum exactly to
//     Σ q_w·q_y (no saturation: |lane| ≤ 4·255·127); q4_1 and q5_1 are
//     unsigned already, and their m_w·s_y term is one FMA per pair against
//     Z3 = [s_A, 0, ..., s_B, 0, ...] (lanes 0 and 8), counted once per
//     block;
//   - the lanes are converted to float32 and accumulated with FMA times
//     d_w·d_y, both scales picked from the loaded bytes by VPERMW (lanes
//     0..7 d_A, 8..15 d_B) and widened by VCVTPH2PS.
//
// That is ggml's per-block sum, with the same 8 partial lanes per block;
// only the final order of float additions differs. An odd last block runs
// the same step with masks that load one block only (masked loads do not
// fault on the bytes left out, which lie past the row); the missing half
// has zero quants and a zero scale.
func genQDot512(c *build.Context) {
	t := q512Consts(c)
	for _, k := range []q512Kind{q512Q8, q512Q4, q512Q5, q512Q41, q512Q51} {
		if k == q512Q8 {
			q8Dot4(c, t) // unmasked loads, prefetches in its own rows
		} else {
			q512Dot(c, k, 4, t)
		}
		q512Dot(c, k, 1, t)
	}
}

// q512Kind is a weight block type of the AVX-512 dots.
type q512Kind int

const (
	q512Q8 q512Kind = iota
	q512Q4
	q512Q5
	q512Q41
	q512Q51
)

// q512Block is what the kernels of a kind differ in: names, the bytes of a
// weight block and of an activation block, the offset c (q8_0 side).
type q512Block struct {
	name, tag string
	bytes     int    // one weight block
	yBytes    int    // one activation block: 34 (q8_0) or 36 (q8_1)
	offset    uint32 // c in every byte, or 0 (q8_1 side)
}

var q512Blocks = [...]q512Block{
	q512Q8:  {"Q8", "q8", 34, 34, 0x80808080},
	q512Q4:  {"Q4", "q4", 18, 34, 0x08080808},
	q512Q5:  {"Q5", "q5", 22, 34, 0x10101010},
	q512Q41: {"Q41", "q41", 20, 36, 0},
	q512Q51: {"Q51", "q51", 24, 36, 0},
}

// q512Tables are the permute tables of the kernels.
type q512Tables struct {
	idx8, d8, idx4, d4, sh4, idx5, qh5, bits, d5            operand.Mem
	idx81, d81, s81, idx41, d41, m41, idx51, qh51, d51, m51 operand.Mem
	idx8u                                                   operand.Mem
}

// tab64 writes a 64-byte table of eight 8-byte words.
func tab64(c *build.Context, name string, w ...uint64) operand.Mem {
	m := c.StaticGlobal(name)
	c.DataAttributes(attr.RODATA | attr.NOPTR)
	for i := range 8 {
		c.AddDatum(8*i, operand.U64(w[i]))
	}
	return m
}

// spread is the word v in every word of a 16-byte half (VPERMW indexes).
func spread(v uint64) uint64 { return v * 0x0001000100010001 }

// pairIdx is a VPERMW index giving words 0..7 word a and 8..15 word b
// (the two scales of a pair).
func pairIdx(c *build.Context, name string, a, b uint64) operand.Mem {
	return tab64(c, name, spread(a), spread(a), spread(b), spread(b), 0, 0, 0, 0)
}

// bytesFrom is 8 consecutive byte indexes from i, as a little-endian word.
func bytesFrom(i uint64) uint64 {
	var w uint64
	for j := range uint64(8) {
		w |= (i + j) << (8 * j)
	}
	return w
}

// nibIdx is the VPERMB index of a pair's nibble bytes, 16 at a and 16 at
// b: each block's bytes twice (low nibbles, then high ones).
func nibIdx(c *build.Context, name string, a, b uint64) operand.Mem {
	return tab64(c, name, bytesFrom(a), bytesFrom(a+8), bytesFrom(a), bytesFrom(a+8),
		bytesFrom(b), bytesFrom(b+8), bytesFrom(b), bytesFrom(b+8))
}

// qhIdx is the VPERMB index giving element j the qh byte holding its bit
// (4 qh bytes at a for block A, at b for B).
func qhIdx(c *build.Context, name string, a, b uint64) operand.Mem {
	r := func(i uint64) uint64 { return i * 0x0101010101010101 }
	return tab64(c, name, r(a), r(a+1), r(a+2), r(a+3), r(b), r(b+1), r(b+2), r(b+3))
}

// pair2B is the VPERMT2B index of an activation pair held as 64 bytes at
// p (table 1) and block B's 32 quants (table 2): block A's quants from
// byte q, then B's.
func pair2B(c *build.Context, name string, q uint64) operand.Mem {
	return tab64(c, name, bytesFrom(q), bytesFrom(q+8), bytesFrom(q+16), bytesFrom(q+24),
		bytesFrom(0x40), bytesFrom(0x48), bytesFrom(0x50), bytesFrom(0x58))
}

// pairUnmasked is the VPERMT2B index of a q8_0 pair read as 64 bytes at
// +0 (table 1) and 64 at +4 (table 2): block A's quants, bytes 2..33 of
// the first, then block B's, bytes 36..67 of the pair, 32..63 of the
// second.
func pairUnmasked(c *build.Context, name string) operand.Mem {
	return tab64(c, name, bytesFrom(2), bytesFrom(10), bytesFrom(18), bytesFrom(26),
		bytesFrom(0x60), bytesFrom(0x68), bytesFrom(0x70), bytesFrom(0x78))
}

func q512Consts(c *build.Context) q512Tables {
	return q512Tables{
		idx8u: pairUnmasked(c, "q512idx8u"),
		idx8:  pair2B(c, "q512idx8", 2),
		d8:    pairIdx(c, "q512d8", 0, 17),
		idx4:  nibIdx(c, "q512idx4", 2, 20),
		d4:    pairIdx(c, "q512d4", 0, 9),
		// VPSRLVW counts: the first copy of each block's nibble bytes
		// keeps the low nibbles (elements 0..15), the second the high.
		sh4:   tab64(c, "q512sh4", 0, 0, spread(4), spread(4), 0, 0, spread(4), spread(4)),
		idx5:  nibIdx(c, "q512idx5", 6, 28),
		qh5:   qhIdx(c, "q512qh5", 2, 24),
		bits:  tab64(c, "q512bits", 0x8040201008040201, 0x8040201008040201, 0x8040201008040201, 0x8040201008040201, 0x8040201008040201, 0x8040201008040201, 0x8040201008040201, 0x8040201008040201),
		d5:    pairIdx(c, "q512d5", 0, 11),
		idx81: pair2B(c, "q512idx81", 4),
		d81:   pairIdx(c, "q512d81", 0, 18),
		s81:   pairIdx(c, "q512s81", 1, 19),
		idx41: nibIdx(c, "q512idx41", 4, 24),
		d41:   pairIdx(c, "q512d41", 0, 10),
		m41:   pairIdx(c, "q512m41", 1, 11),
		idx51: nibIdx(c, "q512idx51", 8, 32),
		qh51:  qhIdx(c, "q512qh51", 4, 28),
		d51:   pairIdx(c, "q512d51", 0, 12),
		m51:   pairIdx(c, "q512m51", 1, 13),
	}
}

// kmask loads the constant v into mask register k through AX (KMOVQ, or
// KMOVD for a 32-bit mask).
func kmask(c *build.Context, v uint64, k reg.Register) {
	switch {
	case v == ^uint64(0):
		c.MOVQ(operand.I64(-1), reg.RAX)
		c.KMOVQ(reg.RAX, k)
	case v == 0xffffffff:
		c.MOVL(operand.U32(v), reg.EAX)
		c.KMOVD(reg.EAX, k)
	default:
		c.MOVQ(operand.U64(v), reg.RAX)
		c.KMOVQ(reg.RAX, k)
	}
}

// bytesMask has the low n bits set.
func bytesMask(n int) uint64 { return 1<<n - 1 }

// bcast32 puts the 32-bit v in every lane of z (through AX).
func bcast32(c *build.Context, v uint32, z reg.VecPhysical) {
	c.MOVL(operand.U32(v), reg.EAX)
	c.VPBROADCASTD(reg.EAX, z)
}

// q512Dot writes one kernel of kind k over rows rows. Registers: DX the
// activation pair; Z0 its 64 quants, Z2 its scales (lanes 0..7 d_A, 8..15
// d_B), Z3 the lanes' starting values -c·Σy (q8_1 side: the sums s); K2/K3
// the masks of the activation pair's two loads, K1 the weight pair's;
// Z31, Z30 the activation tables; rows at SI, R8, R9, R10 (stride DI),
// accumulators Z8..Z11, each row's temporaries three from Z12 up.
func q512Dot(c *build.Context, k q512Kind, rows int, t q512Tables) {
	b := q512Blocks[k]
	name := fmt.Sprintf("dot%sx%dAVX512", b.name, rows)
	fn(c, name, qRowsSig,
		fmt.Sprintf("dst[r] = dot of %d weight rows (stride bytes apart) with the activation row y, nb ≥ 1 blocks.", rows))
	rowReg := q512Prologue(c, rows, 1, t.idx8, true, t)
	kmask(c, bytesMask(2*18), reg.K1)
	acc := []reg.VecPhysical{reg.Z8, reg.Z9, reg.Z10, reg.Z11}[:rows]
	for _, a := range acc {
		c.VPXORD(a, a, a)
	}
	q512Setup(c, k, t)
	pre := fmt.Sprintf("%sx%d", b.tag, rows)
	loop, tail, done := pre+"loop", pre+"tail", pre+"done"
	c.TESTQ(reg.RCX, reg.RCX)
	c.JZ(lbl(tail))
	// The four-row kernels prefetch, at each step, the same place in the
	// next four rows (those of the next call over a tile of rows): a
	// decode product streams its weights from memory, and the rows a call
	// starts on must already be on their way (prefetching 512 bytes ahead
	// in the call's own rows left each call's start cold, which cost 3-4x
	// the time with weights beyond the cache). Prefetches never fault, so
	// the rows past the last are harmless. R12 and R13 point at rows 4
	// and 6 below.
	next4 := rows == 4
	if next4 {
		c.LEAQ(idx(reg.R10, 0, reg.RDI, 1), reg.R12)
		c.LEAQ(idx(reg.R12, 0, reg.RDI, 2), reg.R13)
	}
	c.Label(loop)
	if next4 {
		c.PREFETCHT0(at(reg.R12, 0))
		c.PREFETCHT0(idx(reg.R12, 0, reg.RDI, 1))
		c.PREFETCHT0(at(reg.R13, 0))
		c.PREFETCHT0(idx(reg.R13, 0, reg.RDI, 1))
		// Every step is at most a cache line (q5_1: 48 bytes), so one
		// line a row a step covers the rows (q8_0's 68-byte step has its
		// own kernel, q8Dot4).
	}
	q512Step(c, k, rowReg, acc, q512Masked)
	ptrs := rowReg
	if next4 {
		ptrs = append(ptrs, reg.R12, reg.R13)
	}
	for _, p := range ptrs {
		c.ADDQ(operand.I32(2*b.bytes), p)
	}
	c.ADDQ(operand.I32(2*b.yBytes), reg.RDX)
	c.DECQ(reg.RCX)
	c.JNZ(lbl(loop))
	c.Label(tail)
	c.TESTQ(operand.I32(1), reg.R11)
	c.JZ(lbl(done))
	// A lone last block: K2 one activation block (K3 none), K1 one
	// weight block.
	kmask(c, bytesMask(b.yBytes), reg.K2)
	c.KXORD(reg.K3, reg.K3, reg.K3)
	if b.offset != 0 {
		kmask(c, bytesMask(18), reg.K1)
	}
	if k != q512Q8 && k != q512Q4 {
		kmask(c, bytesMask(b.bytes), reg.K1)
	}
	q512Step(c, k, rowReg, acc, q512Masked)
	c.Label(done)
	if len(acc) == 4 {
		hsum4Store(c, acc, at(reg.RBX, 0))
		end(c, false)
		return
	}
	for r, a := range acc {
		hsumStore(c, a, at(reg.RBX, 4*r), reg.Y1)
	}
	end(c, false)
}

// q512Prologue loads a row kernel's arguments (rows at SI, R8, R9, R10,
// stride DI, y DX, dst BX where dst is set, R11 the blocks) and its
// constants: CX = nb >> shift (the loop steps), Z31 the activation
// pair's quant table idx8, Z30 its scale table, and the masks of a full
// q8_0 pair's two loads (K2 64 bytes, K3 32). It returns the row
// pointers.
func q512Prologue(c *build.Context, rows int, shift uint64, idx8 operand.Mem, dst bool, t q512Tables) []reg.GPPhysical {
	rowReg := []reg.GPPhysical{reg.RSI, reg.R8, reg.R9, reg.R10}[:rows]
	c.Load(c.Param("w"), reg.RSI)
	if rows > 1 {
		c.Load(c.Param("stride"), reg.RDI)
	}
	c.Load(c.Param("y"), reg.RDX)
	if dst {
		c.Load(c.Param("dst"), reg.RBX)
	}
	for r := 1; r < rows; r++ {
		c.LEAQ(idx(rowReg[r-1], 0, reg.RDI, 1), rowReg[r])
	}
	c.Load(c.Param("nb"), reg.R11)
	c.MOVQ(reg.R11, reg.RCX)
	c.SHRQ(operand.Imm(shift), reg.RCX)
	c.VMOVDQU64(idx8, reg.Z31)
	c.VMOVDQU64(t.d8, reg.Z30)
	kmask(c, ^uint64(0), reg.K2)
	kmask(c, 0xffffffff, reg.K3)
	return rowReg
}

// hsum4Store stores the lane sums of the four accumulators acc at dst
// (four floats), with hsumStore's additions in hsumStore's order (halves
// of 256, then 128 bits, then pairs, then the pairs' sums), so the same
// bits as four hsumStores, but the last two steps done for the four rows
// at once: three VHADDPS and one store instead of eight and four.
func hsum4Store(c *build.Context, acc []reg.VecPhysical, dst operand.Mem) {
	hsum4StoreWith(c, acc, dst, 4)
}

// hsum4StoreWith is hsum4Store with the Y and X registers tmp..tmp+3 as
// its temporaries (X0..X3 too), which must not hold an accumulator.
func hsum4StoreWith(c *build.Context, acc []reg.VecPhysical, dst operand.Mem, tmp int) {
	y, x := avx2.v[tmp:tmp+4], xmm[tmp:tmp+4]
	for r, a := range acc {
		t, u := y[r], xmm[r]
		c.VEXTRACTF64X4(operand.Imm(1), a, t)
		c.VADDPS(a.AsY(), t, t)
		c.VEXTRACTF128(operand.Imm(1), t, u)
		c.VADDPS(u, x[r], x[r])
	}
	c.VHADDPS(x[1], x[0], x[0])
	c.VHADDPS(x[3], x[2], x[2])
	c.VHADDPS(x[2], x[0], x[0])
	c.VMOVUPS(x[0], dst)
}

// q512Setup loads the constants of kind k: the offset c, the nibble mask
// (Z26), shifts (Z27) and the weight tables (Z28 scales, Z29 quants, Z25
// the q8_1 side's minimums, Z5/Z4 the fifth bits), and K1 for its pair.
func q512Setup(c *build.Context, k q512Kind, t q512Tables) {
	b := q512Blocks[k]
	if b.offset != 0 {
		bcast32(c, b.offset, reg.Z25)
	} else {
		// The q8_1 activation tables and K5, which keeps words 0 and 8.
		c.VMOVDQU64(t.idx81, reg.Z31)
		c.VMOVDQU64(t.d81, reg.Z30)
		c.VMOVDQU64(t.s81, reg.Z24)
		c.MOVL(operand.U32(0x0101), reg.EAX)
		c.KMOVD(reg.EAX, reg.K5)
	}
	if k == q512Q8 {
		return
	}
	bcast32(c, 0x0f0f0f0f, reg.Z26)
	c.VMOVDQU64(t.sh4, reg.Z27)
	var d, q, m, qh operand.Mem
	switch k {
	case q512Q4:
		d, q = t.d4, t.idx4
	case q512Q5:
		d, q, qh = t.d5, t.idx5, t.qh5
	case q512Q41:
		q, d, m = t.idx41, t.d41, t.m41
	case q512Q51:
		q, d, m, qh = t.idx51, t.d51, t.m51, t.qh51
	}
	if b.offset != 0 {
		c.VMOVDQU64(d, reg.Z28)
		c.VMOVDQU64(q, reg.Z29)
	} else {
		c.VMOVDQU64(q, reg.Z29)
		c.VMOVDQU64(d, reg.Z28)
		c.VMOVDQU64(m, reg.Z25)
	}
	if k == q512Q5 || k == q512Q51 {
		c.VMOVDQU64(qh, reg.Z5)
		c.VMOVDQU64(t.bits, reg.Z4)
		if b.offset == 0 {
			bcast32(c, 0x10101010, reg.Z6)
		}
	}
	if k != q512Q4 {
		kmask(c, bytesMask(2*b.bytes), reg.K1)
	}
}

// q512Masked is the disp argument of q512Step that reads its pairs with
// masked loads at the pointers.
const q512Masked = -1

// q512Step is one step: the activation pair, then each row's pair. Its
// pairs are the q8_0 ones at disp ≥ 0 bytes after the pointers, read by
// unmasked 64-byte loads at +0 and +4 (Z31: q512idx8u), or with
// q512Masked at the pointers, read by masked loads (K2, K3, K1).
func q512Step(c *build.Context, k q512Kind, rowReg []reg.GPPhysical, acc []reg.VecPhysical, disp int) {
	b := q512Blocks[k]
	if disp >= 0 {
		c.VMOVDQU64(at(reg.RDX, disp), reg.Z0)
		c.VMOVDQU64(at(reg.RDX, disp+4), reg.Z1)
	} else {
		c.VMOVDQU8_Z(at(reg.RDX, 0), reg.K2, reg.Z0)
		// Block B's 32 quants, after its header (d; q8_1: d, s).
		head := 2
		if b.offset == 0 {
			head = 4
		}
		c.VMOVDQU8_Z(at(reg.RDX, b.yBytes+head), reg.K3, reg.Z1)
	}
	c.VPERMW(reg.Z0, reg.Z30, reg.Z2)
	if b.offset != 0 {
		c.VCVTPH2PS(reg.Y2, reg.Z2)
		c.VPERMT2B(reg.Z1, reg.Z31, reg.Z0)
		// Z3 = -c·(4-byte partial sums of y).
		c.VPXORD(reg.Z1, reg.Z1, reg.Z1)
		vnni(c, "VPDPBUSD", reg.Z0, reg.Z25, reg.Z1)
		c.VPXORD(reg.Z3, reg.Z3, reg.Z3)
		c.VPSUBD(reg.Z1, reg.Z3, reg.Z3)
	} else {
		c.VPERMW_Z(reg.Z0, reg.Z24, reg.K5, reg.Z3)
		c.VCVTPH2PS(reg.Y2, reg.Z2)
		c.VCVTPH2PS(reg.Y3, reg.Z3)
		c.VPERMT2B(reg.Z1, reg.Z31, reg.Z0)
	}
	for r, p := range rowReg {
		z := avx512.v[12+3*r:]
		q512Row(c, k, p, z[0], z[1], z[2], acc[r], disp)
	}
}

// q512Row adds the weight pair at p times the activation pair into acc,
// with temporaries w (the weights), s (their scales) and a; disp as
// q512Step's.
func q512Row(c *build.Context, k q512Kind, p reg.GPPhysical, w, s, a, acc reg.VecPhysical, disp int) {
	if k == q512Q8 {
		if disp >= 0 {
			c.VMOVDQU64(at(p, disp), w)
			c.VMOVDQU64(at(p, disp+4), a)
		} else {
			c.VMOVDQU8_Z(at(p, 0), reg.K2, w)
			c.VMOVDQU8_Z(at(p, 36), reg.K3, a)
		}
		c.VPERMW(w, reg.Z30, s)
		c.VPERMT2B(a, reg.Z31, w)
		c.VCVTPH2PS(s.AsY(), s)
		c.VMULPS(reg.Z2, s, s)
		c.VPXORD(reg.Z25, w, w) // w+128
	} else {
		c.VMOVDQU8_Z(at(p, 0), reg.K1, w)
		switch k {
		case q512Q4:
			c.VPERMW(w, reg.Z28, s)
			c.VPERMB(w, reg.Z29, w)
		case q512Q5:
			c.VPERMW(w, reg.Z28, s)
			c.VPERMB(w, reg.Z5, a)
			c.VPERMB(w, reg.Z29, w)
			c.VPTESTMB(reg.Z4, a, reg.K4)
		case q512Q41:
			c.VPERMW(w, reg.Z28, s)
			c.VPERMW(w, reg.Z25, a)
			c.VPERMB(w, reg.Z29, w)
		case q512Q51:
			c.VPERMB(w, reg.Z5, a)
			c.VPERMW(w, reg.Z28, s)
			c.VPTESTMB(reg.Z4, a, reg.K4)
			c.VPERMW(w, reg.Z25, a)
			c.VPERMB(w, reg.Z29, w)
		}
		c.VCVTPH2PS(s.AsY(), s)
		if k == q512Q41 || k == q512Q51 {
			// m_w·s_y into lanes 0 and 8.
			c.VCVTPH2PS(a.AsY(), a)
			c.VFMADD231PS(reg.Z3, a, acc)
		}
		c.VPSRLVW(reg.Z27, w, w)
		c.VMULPS(reg.Z2, s, s)
		c.VPANDD(reg.Z26, w, w)
		switch k {
		case q512Q5:
			c.VPADDB(reg.Z25, w, reg.K4, w)
		case q512Q51:
			c.VPADDB(reg.Z6, w, reg.K4, w)
		}
	}
	if q512Blocks[k].offset != 0 {
		c.VMOVDQA64(reg.Z3, a)
	} else {
		c.VPXORD(a, a, a)
	}
	vnni(c, "VPDPBUSD", reg.Z0, w, a)
	c.VCVTDQ2PS(a, a)
	c.VFMADD231PS(s, a, acc)
}
