package main

import (
	"github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// q8dDist is how far ahead in its own rows, in block pairs (68 bytes a
// row), the four-row q8_0 decode dot prefetches; once that runs past the
// rows' end it prefetches the next four rows from their start instead.
// Over a 4096×32768 q8_0 matrix (142 MB, one thread, variants alternating
// in one process) 24 to 48 pairs read about the same, 8 pairs and the
// next four rows at the same place (a whole call, 17 KiB of lines, ahead)
// less (RATIONALE.md, "q8_0 decode dot: unmasked loads, prefetches half a
// row ahead").
const q8dDist = 32

// q8Dot4 writes dotQ8x4AVX512, the four-row q8_0 dot of decode products
// (the one-row kernel is q512Dot's). Its arithmetic is q512Dot's, in the
// same order, so its bits are the one-row kernel's; it differs in how it
// reads:
//
//   - a full pair's 68 bytes, of every row and of the activation, are two
//     unmasked 64-byte loads at +0 and +4 (both inside the pair), gathered
//     by one VPERMT2B (table q512idx8u): normal loads, which the hardware
//     prefetchers see and which issue faster than masked ones (in cache:
//     62-64 GB/s against the masked kernel's 54-55);
//   - a loop step takes two pairs (136 bytes a row) and asks for four
//     lines of each row (+0 to +192: each line about twice; three lines,
//     each at least once, read ~6% less), q8dDist pairs ahead in the
//     call's own rows (at the end of its rows, the start of the next four
//     rows), so the prefetched lines wait in L1 for about 8.7 KiB of the
//     call's reads rather than a whole call's 17 KiB (which with the
//     call's own 17 KiB and the activation row filled most of the 48 KiB
//     L1).
//
// A lone last pair is one more unmasked pair; a lone last block runs
// q512Step's masked loads. Registers: rows at SI, R8, R9, R10 (stride DI), DX the activation, CX
// the steps, R11 the blocks, R12/R13 the prefetched rows 0 and 2 (rows 1
// and 3 at +DI), AX the steps before the prefetches switch to the next
// rows, BX the switch's move (4·stride - 34·nb; dst is loaded again at
// the end).
func q8Dot4(c *build.Context, t q512Tables) {
	fn(c, "dotQ8x4AVX512", qRowsSig,
		"dst[r] = dot of 4 weight rows (stride bytes apart) with the activation row y, nb ≥ 1 blocks.")
	rowReg := q512Prologue(c, 4, 2, t.idx8u, false, t)
	acc := []reg.VecPhysical{reg.Z8, reg.Z9, reg.Z10, reg.Z11}
	for _, a := range acc {
		c.VPXORD(a, a, a)
	}
	q512Setup(c, q512Q8, t)
	// R12 = row 4; BX = 4·stride - 34·nb; AX = (nb/2 - dist)/2 steps,
	// and R12 = row 0 + 68·dist, unless the rows are too short for that
	// (AX ≤ 0): then the next rows from the start, and no switch.
	c.LEAQ(idx(reg.R10, 0, reg.RDI, 1), reg.R12)
	c.IMUL3Q(operand.I32(-34), reg.R11, reg.RBX)
	c.ADDQ(reg.R12, reg.RBX)
	c.SUBQ(reg.RSI, reg.RBX)
	c.MOVQ(reg.R11, reg.RAX)
	c.SHRQ(operand.Imm(1), reg.RAX)
	c.SUBQ(operand.I32(q8dDist), reg.RAX)
	c.SARQ(operand.Imm(1), reg.RAX)
	c.JLE(lbl("q8dnear"))
	c.LEAQ(at(reg.RSI, 68*q8dDist), reg.R12)
	c.JMP(lbl("q8dfar"))
	c.Label("q8dnear")
	c.MOVQ(operand.I64(1<<40), reg.RAX)
	c.Label("q8dfar")
	c.LEAQ(idx(reg.R12, 0, reg.RDI, 2), reg.R13)
	ptrs := []reg.GPPhysical{reg.RSI, reg.R8, reg.R9, reg.R10, reg.R12, reg.R13}
	advance := func(n int) {
		for _, p := range ptrs {
			c.ADDQ(operand.I32(n), p)
		}
		c.ADDQ(operand.I32(n), reg.RDX)
	}
	c.TESTQ(reg.RCX, reg.RCX)
	c.JZ(lbl("q8dpair"))
	c.Label("q8dloop")
	for _, off := range [...]int{0, 64, 128, 192} {
		c.PREFETCHT0(at(reg.R12, off))
		c.PREFETCHT0(idx(reg.R12, off, reg.RDI, 1))
		c.PREFETCHT0(at(reg.R13, off))
		c.PREFETCHT0(idx(reg.R13, off, reg.RDI, 1))
	}
	q512Step(c, q512Q8, rowReg, acc, 0)
	q512Step(c, q512Q8, rowReg, acc, 68)
	advance(136)
	c.DECQ(reg.RAX)
	c.JNZ(lbl("q8dnext"))
	c.ADDQ(reg.RBX, reg.R12)
	c.ADDQ(reg.RBX, reg.R13)
	c.Label("q8dnext")
	c.DECQ(reg.RCX)
	c.JNZ(lbl("q8dloop"))
	c.Label("q8dpair")
	c.TESTQ(operand.I32(2), reg.R11)
	c.JZ(lbl("q8dtail"))
	q512Step(c, q512Q8, rowReg, acc, 0)
	advance(68)
	c.Label("q8dtail")
	c.TESTQ(operand.I32(1), reg.R11)
	c.JZ(lbl("q8ddone"))
	// A lone last block: q512Step's masked loads (K2 one block, K3 none)
	// and permute table.
	c.VMOVDQU64(t.idx8, reg.Z31)
	kmask(c, bytesMask(q512Blocks[q512Q8].yBytes), reg.K2)
	c.KXORD(reg.K3, reg.K3, reg.K3)
	q512Step(c, q512Q8, rowReg, acc, q512Masked)
	c.Label("q8ddone")
	c.Load(c.Param("dst"), reg.RBX)
	hsum4Store(c, acc, at(reg.RBX, 0))
	end(c, false)
}
