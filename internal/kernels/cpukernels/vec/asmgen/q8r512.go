package main

import (
	"github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// genQ8R512 writes q8r512_amd64.s: the AVX-512 (F, BW, VNNI) decode dot
// of q8_0 weight rows repacked by vec.Interleave4Q8_0 (q8r.go) with an
// activation row packed by vec.PackQ8_0ForQ8R. One call runs every group
// of four rows of a product, as one sequential stream: per chunk of eight
// blocks of the four rows (1088 bytes),
//
//   - the chunk's 32 weight scales are widened (two VCVTPH2PS) and
//     multiplied by the activation's (two VMULPS), d_w·d_y in float32 as
//     the plain kernel rounds it; one VPERMPS a row and block pair then
//     spreads a row's two products over lanes 0..7 and 8..15;
//   - a row's block pair is one aligned 64-byte load, made unsigned
//     (w+128) by the XOR that loads it, and one VPDPBUSD with the packed
//     activation quants from lanes that start at -128·(the lane's four
//     activation quants), so every 32-bit lane is exactly the plain
//     kernel's Σ q_w·q_y over four elements;
//   - the lanes are converted and accumulated with FMA, pair after pair,
//     and a group's four sums are reduced by hsum4Store: the plain
//     kernel's (qdot512.go) operations on the same values in the same
//     order, so the same bits.
//
// A row and block pair costs 6 instructions against the plain kernel's 11
// (no masked loads, no byte permutes, the activation's work done once per
// product). The stream of whole lines is left to the hardware
// prefetchers (q8rDist).
func genQ8R512(c *build.Context) {
	genQ8RMove(c, true)
	genQ8RMove(c, false)
	// idx[2r+h]: lanes 0..7 take product 8h+2r (row r's block 2p of the
	// pair p, h = p mod 2), lanes 8..15 product 8h+2r+1 (block 2p+1).
	var idxTabs [8]operand.Mem
	for r := range 4 {
		for h := range 2 {
			a, b := uint64(8*h+2*r), uint64(8*h+2*r+1)
			wa, wb := a|a<<32, b|b<<32
			idxTabs[2*r+h] = tab64(c, "q8ridx"+string(rune('0'+2*r+h)), wa, wa, wa, wa, wb, wb, wb, wb)
		}
	}
	fn(c, "dotQ8Rx4IAVX512", "func(w *byte, groups int, y *byte, nb int, dst *float32)",
		"dst[4g+r] = dot of row r of repacked group g (of groups, from w) with the packed activation row y, nb a multiple of 8.")
	c.Load(c.Param("w"), reg.RSI)
	c.Load(c.Param("groups"), reg.R13)
	c.Load(c.Param("y"), reg.RDX)
	c.Load(c.Param("nb"), reg.R11)
	c.Load(c.Param("dst"), reg.RBX)
	c.SHRQ(operand.Imm(3), reg.R11)
	bcast32(c, 0x80808080, reg.Z25)
	idx := avx512.v[16:24]
	for i, m := range idxTabs {
		c.VMOVDQU64(m, idx[i])
	}
	acc := []reg.VecPhysical{reg.Z8, reg.Z9, reg.Z10, reg.Z11}
	temps := [4][3]reg.VecPhysical{
		{reg.Z0, reg.Z1, reg.Z2}, {reg.Z3, reg.Z4, reg.Z5},
		{reg.Z6, reg.Z7, reg.Z12}, {reg.Z13, reg.Z24, reg.Z26},
	}
	prod := [2]reg.VecPhysical{reg.Z14, reg.Z15}
	c.Label("q8rgroup")
	for _, a := range acc {
		c.VPXORD(a, a, a)
	}
	c.MOVQ(reg.RDX, reg.R12)
	c.MOVQ(reg.R11, reg.RCX)
	c.Label("q8rchunk")
	if q8rDist > 0 {
		for off := 0; off < 1088; off += 64 {
			c.PREFETCHT0(at(reg.RSI, q8rDist+off))
		}
	}
	for i, p := range prod {
		c.VCVTPH2PS(at(reg.RSI, 1024+32*i), p)
		c.VMULPS(at(reg.R12, 512+64*i), p, p)
	}
	for p := range 4 {
		for r := range 4 {
			w, a, s := temps[r][0], temps[r][1], temps[r][2]
			c.VPXORD(at(reg.RSI, 256*p+64*r), reg.Z25, w)
			c.VMOVDQU64(at(reg.R12, 128*p+64), a)
			vnni(c, "VPDPBUSD", at(reg.R12, 128*p), w, a)
			c.VCVTDQ2PS(a, a)
			c.VPERMPS(prod[p/2], idx[2*r+p%2], s)
			c.VFMADD231PS(s, a, acc[r])
		}
	}
	c.ADDQ(operand.I32(1088), reg.RSI)
	c.ADDQ(operand.I32(640), reg.R12)
	c.DECQ(reg.RCX)
	c.JNZ(lbl("q8rchunk"))
	hsum4Store(c, acc, at(reg.RBX, 0))
	c.ADDQ(operand.I32(16), reg.RBX)
	c.DECQ(reg.R13)
	c.JNZ(lbl("q8rgroup"))
	end(c, false)
}

// q8rDist is how far ahead of a chunk the repacked q8_0 kernel prefetches
// its 17 lines, in bytes (0: none). None: over a 104 MB matrix at one
// thread, alternating runs read 26-30 GB/s without prefetches, 17-31 with
// them 1, 2 or 4 KiB ahead, 13-24 at 8 KiB (RATIONALE.md, "q8_0 weights
// repacked for decode"): the kernel's loads are whole sequential lines,
// which the hardware prefetchers follow.
const q8rDist = 0

// genQ8RMove writes deinterleaveQ8R512 (undo) or interleaveQ8R512:
// Deinterleave4Q8_0 or Interleave4Q8_0 of whole groups. The GEMM paths
// undo the layout per panel of rows they read (the portable loop of moves
// took a third of a prompt's time) and loading does it to every q8_0
// matrix. Each block is one 32-byte move of its quants and one 2-byte
// move of its scale. Registers: SI the chunks (one stream), DI row 0 of
// the current chunk's rows, R8..R10 one to three rows on, R11 the chunks
// of a row, CX the chunks left in the group, DX the groups left.
func genQ8RMove(c *build.Context, undo bool) {
	name, from, to := "interleaveQ8R512", "rows", "chunks"
	if undo {
		name, from, to = "deinterleaveQ8R512", "chunks", "rows"
	}
	fn(c, name, "func(rows *byte, chunks *byte, rowSize int, nc int, groups int)",
		"the nc chunks of groups groups of four q8_0 rows (rowSize bytes, nc·272) go from "+from+" to "+to+".")
	c.Load(c.Param("rows"), reg.RDI)
	c.Load(c.Param("chunks"), reg.RSI)
	c.Load(c.Param("rowSize"), reg.R8)
	c.Load(c.Param("nc"), reg.R11)
	c.Load(c.Param("groups"), reg.RDX)
	c.LEAQ(idx(reg.R8, 0, reg.R8, 1), reg.R9)
	c.LEAQ(idx(reg.R9, 0, reg.R8, 1), reg.R10)
	rows := []func(disp int) operand.Mem{
		func(d int) operand.Mem { return at(reg.RDI, d) },
		func(d int) operand.Mem { return idx(reg.RDI, d, reg.R8, 1) },
		func(d int) operand.Mem { return idx(reg.RDI, d, reg.R9, 1) },
		func(d int) operand.Mem { return idx(reg.RDI, d, reg.R10, 1) },
	}
	move := func(src, dst operand.Mem, y reg.Register) {
		if !undo {
			src, dst = dst, src
		}
		if y == nil {
			c.MOVWLZX(src, reg.EAX)
			c.MOVW(reg.AX, dst)
			return
		}
		c.VMOVDQU(src, y)
		c.VMOVDQU(y, dst)
	}
	group, chunk := name+"group", name+"chunk"
	c.Label(group)
	c.MOVQ(reg.R11, reg.RCX)
	c.Label(chunk)
	for r := range 4 {
		for b := range 8 {
			p, h := b/2, b%2
			move(at(reg.RSI, 256*p+64*r+32*h), rows[r](34*b+2), avx512.v[(8*r+b)%16].AsY())
			move(at(reg.RSI, 1024+16*p+4*r+2*h), rows[r](34*b), nil)
		}
	}
	c.ADDQ(operand.I32(1088), reg.RSI)
	c.ADDQ(operand.I32(272), reg.RDI)
	c.DECQ(reg.RCX)
	c.JNZ(lbl(chunk))
	c.ADDQ(reg.R10, reg.RDI) // past rows 1..3 of the group
	c.DECQ(reg.RDX)
	c.JNZ(lbl(group))
	end(c, false)
}
