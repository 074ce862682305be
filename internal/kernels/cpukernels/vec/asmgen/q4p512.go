package main

import (
	"fmt"

	"github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// genQ4P512 writes q4p512_amd64.s: the AVX-512 (F, BW, VBMI, VNNI) decode
// dots of q4_0 weight rows with an activation row packed for them
// (vec.PackQ8_0ForQ4, q4p.go), four rows or one per call. A step takes
// four weight blocks (72 bytes) of every row:
//
//   - two unmasked 64-byte loads at +0 and +8 cover the 72 bytes; one
//     VPERMT2B gathers the 64 quant bytes (block b's 16 bytes at 16b),
//     one VPERMW picks the four scales (lanes 4b..4b+3 get block b's);
//   - the low nibbles (mask) and the high ones (shift, mask) meet the
//     packed activation's first and second 16 quants of each block in two
//     VPDPBUSD, from lanes that start at -8·(the lane's 8 activation
//     quants), so each 32-bit lane is exactly Σ (q_w-8)·q_y over 8 of its
//     block's elements;
//   - the lanes are converted and accumulated with FMA times d_w·d_y (the
//     activation scales are stored as float32 lanes in the packed row).
//
// Against the pair-at-a-time kernels (qdot512.go) a row costs 14
// instructions per 4 blocks instead of 22, and none of the activation's
// permutes stay in the loop (two groups a loop step, three prefetched
// lines a row). A last group of 1..3 blocks runs the same
// step with a masked load of its bytes (the packed activation's missing
// blocks are zeros).
func genQ4P512(c *build.Context) {
	t := q4pConsts(c)
	q4pDot(c, 4, t, false)
	q4pDot(c, 1, t, false)
	q4pDot(c, 4, t, true)
}

// q4pTables are the permute tables of the packed q4_0 dots.
type q4pTables struct{ qs, d operand.Mem }

func q4pConsts(c *build.Context) q4pTables {
	// Quants of block b at bytes 18b+2..18b+17 of the 72; blocks 0..2
	// from the load at +0 (table 1), block 3 from the load at +8 (table
	// 2, byte 18·3+2-8 = 48 there, VPERMT2B index 64+48).
	var w [8]uint64
	for i := range 8 {
		b, j := uint64(i/2), uint64(i%2)*8
		src := 18*b + 2 + j
		if b == 3 {
			src = 64 + 48 + j
		}
		w[i] = bytesFrom(src)
	}
	return q4pTables{
		qs: tab64(c, "q4pqs", w[:]...),
		// Scale of block b is word 9b of the first load; lanes 4b..4b+3.
		d: tab64(c, "q4pd", spread(0), spread(9), spread(18), spread(27), 0, 0, 0, 0),
	}
}

// q4pDot writes dotQ4Px{rows}AVX512. Registers: rows at SI, R8, R9, R10
// (stride DI), DX the packed activation group (Z0 low quants, Z1 high, Z2
// lane offsets, Z3 scales), CX the count of pairs of full groups, R11
// the blocks;
// Z31/Z30 the tables, Z29 the nibble mask; accumulators Z8..Z11, each
// row's four temporaries from Z12 up.
func q4pDot(c *build.Context, rows int, t q4pTables, inter bool) {
	name := fmt.Sprintf("dotQ4Px%dAVX512", rows)
	if inter {
		name = "dotQ4Px4IAVX512"
	}
	fn(c, name, qRowsSig,
		fmt.Sprintf("dst[r] = dot of %d q4_0 weight rows (stride bytes apart) with the packed activation row y, nb ≥ 1 blocks.", rows))
	rowReg := rowArgs(c, rows, "y", "nb")
	c.MOVQ(reg.RCX, reg.R11)
	c.SHRQ(operand.Imm(3), reg.RCX)
	c.VMOVDQU64(t.qs, reg.Z31)
	c.VMOVDQU64(t.d, reg.Z30)
	bcast32(c, 0x0f0f0f0f, reg.Z29)
	acc := []reg.VecPhysical{reg.Z8, reg.Z9, reg.Z10, reg.Z11}[:rows]
	for _, a := range acc {
		c.VPXORD(a, a, a)
	}
	pre := fmt.Sprintf("q4px%d", rows)
	if inter {
		pre = "q4pxi"
	}
	loop, one, tail, done := pre+"loop", pre+"one", pre+"tail", pre+"done"
	// As the pair kernels: the four-row kernel prefetches the same place
	// in the next four rows (R12: row 4, R13: row 6): the loop takes two
	// groups (144 bytes) a step and asks for three lines of each row.
	next4 := rows == 4 && !inter
	if next4 {
		c.LEAQ(idx(reg.R10, 0, reg.RDI, 1), reg.R12)
		c.LEAQ(idx(reg.R12, 0, reg.RDI, 2), reg.R13)
	}
	adv := 72
	if inter {
		adv = 288
	}
	prefetch := func(offs ...int) {
		if inter && q4piDist > 0 {
			for off := 0; off < 288*len(offs)*2/3; off += 64 {
				c.PREFETCHT0(at(reg.RSI, q4piDist+off))
			}
			return
		}
		if !next4 {
			return
		}
		for _, off := range offs {
			c.PREFETCHT0(at(reg.R12, off))
			c.PREFETCHT0(idx(reg.R12, off, reg.RDI, 1))
			c.PREFETCHT0(at(reg.R13, off))
			c.PREFETCHT0(idx(reg.R13, off, reg.RDI, 1))
		}
	}
	ptrs := rowReg
	if next4 {
		ptrs = append(ptrs, reg.R12, reg.R13)
	}
	advance := func(groups int) {
		for _, p := range ptrs {
			c.ADDQ(operand.I32(adv*groups), p)
		}
		c.ADDQ(operand.I32(256*groups), reg.RDX)
	}
	c.TESTQ(reg.RCX, reg.RCX)
	c.JZ(lbl(one))
	c.Label(loop)
	prefetch(0, 64, 128)
	q4pStep(c, rowReg, acc, false, 0)
	q4pStep(c, rowReg, acc, false, adv/72)
	advance(2)
	c.DECQ(reg.RCX)
	c.JNZ(lbl(loop))
	// An odd full group.
	c.Label(one)
	c.TESTQ(operand.I32(4), reg.R11)
	c.JZ(lbl(tail))
	prefetch(0, 64)
	q4pStep(c, rowReg, acc, false, 0)
	advance(1)
	c.Label(tail)
	c.ANDQ(operand.I32(3), reg.R11)
	c.JZ(lbl(done))
	// K1: the 18·(nb mod 4) bytes of the last blocks, ^(-1 << n).
	c.IMUL3Q(operand.I32(18), reg.R11, reg.RCX)
	c.MOVQ(operand.I64(-1), reg.RAX)
	c.SHLQ(reg.CL, reg.RAX)
	c.NOTQ(reg.RAX)
	c.KMOVQ(reg.RAX, reg.K1)
	q4pStep(c, rowReg, acc, true, 0)
	c.Label(done)
	for r, a := range acc {
		hsumStore(c, a, at(reg.RBX, 4*r), reg.Y1)
	}
	end(c, false)
}

// q4piDist is the prefetch distance of the interleaved kernel in bytes.
const q4piDist = 4096

// q4pTemps are the rows' temporaries, four a row.
var q4pTemps = [16]reg.VecPhysical{reg.Z12, reg.Z13, reg.Z14, reg.Z15, reg.Z16, reg.Z17, reg.Z18, reg.Z19,
	reg.Z20, reg.Z21, reg.Z22, reg.Z23, reg.Z24, reg.Z25, reg.Z26, reg.Z27}

// q4pStep is one step of four blocks of every row, the weights' group at
// 72·g bytes after the pointers and the activation's at 256·min(g, 1)
// (the interleaved rows' next group is 288 bytes on, g = 4) (tail: the
// blocks under K1 only, block 3 never).
func q4pStep(c *build.Context, rowReg []reg.GPPhysical, acc []reg.VecPhysical, tail bool, g int) {
	w, y := 72*g, 256*min(g, 1)
	c.VMOVDQU64(at(reg.RDX, y), reg.Z0)
	c.VMOVDQU64(at(reg.RDX, y+64), reg.Z1)
	c.VMOVDQU64(at(reg.RDX, y+128), reg.Z2)
	c.VMOVUPS(at(reg.RDX, y+192), reg.Z3)
	for r, p := range rowReg {
		z := q4pTemps[4*r : 4*r+4]
		a, b, s, i := z[0], z[1], z[2], z[3]
		if tail {
			c.VMOVDQU8_Z(at(p, w), reg.K1, a)
			c.VPXORD(b, b, b)
		} else {
			c.VMOVDQU64(at(p, w), a)
			c.VMOVDQU64(at(p, w+8), b)
		}
		c.VPERMW(a, reg.Z30, s)
		c.VPERMT2B(b, reg.Z31, a)
		c.VCVTPH2PS(s.AsY(), s)
		c.VMULPS(reg.Z3, s, s)
		c.VPSRLW(operand.Imm(4), a, b)
		c.VPANDD(reg.Z29, a, a)
		c.VPANDD(reg.Z29, b, b)
		c.VMOVDQA64(reg.Z2, i)
		vnni(c, "VPDPBUSD", reg.Z0, a, i)
		vnni(c, "VPDPBUSD", reg.Z1, b, i)
		c.VCVTDQ2PS(i, i)
		c.VFMADD231PS(s, i, acc[r])
	}
}
