package main

import (
	"fmt"

	"github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// genRope writes rope_amd64.s: ROPE's rotation of rows at AVX2 and
// AVX-512, a vector of pairs a step, with the multiplies and the add or
// subtract of the scalar rotation (no FMA), so every level gives the
// same bits:
//
//   - normal mode (adjacent pairs): y = x·cc + swap(x)·ss, where swap
//     exchanges each pair's elements (VPERMILPS) and the cache holds
//     cc = (c, c) and ss = (-s, s) per pair: x0·c + x1·(-s) is x0·c - x1·s
//     and x1·c + x0·s is x0·s + x1·c, bit for bit;
//   - NeoX (pairs h elements apart): ya = xa·c - xb·s, yb = xa·s + xb·c.
//
// Each call rotates rows rows (ys and xs elements apart: the heads of one
// position) with the same cache, whose elements are addressed by the
// row's byte offset in BX.
func genRope(c *build.Context) {
	for _, l := range []struct {
		name string
		lv   level
	}{{"AVX2", avx2}, {"AVX512", avx512}} {
		ropeRows(c, "ropeNormal"+l.name, l.lv, false)
		ropeRows(c, "ropeNeoX"+l.name, l.lv, true)
	}
}

// ropeRows writes one rotation kernel: n (a multiple of the level's
// lanes) elements of each row for normal mode, n pairs h apart for
// NeoX.
func ropeRows(c *build.Context, name string, l level, neox bool) {
	w := l.bytes / 4
	if neox {
		fn(c, name, "func(y, x, cos, sin *float32, h, n, rows, ys, xs int)",
			fmt.Sprintf("For each of rows rows (y += ys, x += xs) and i < n, n a multiple of %d:", w),
			"y[i] = x[i]·cos[i] - x[h+i]·sin[i], y[h+i] = x[i]·sin[i] + x[h+i]·cos[i] (y may be x).")
	} else {
		fn(c, name, "func(y, x, cos, sin *float32, n, rows, ys, xs int)",
			fmt.Sprintf("For each of rows rows (y += ys, x += xs) and i < n, n a multiple of %d:", w),
			"y[i] = x[i]·cos[i] + x[i^1]·sin[i] (y may be x).")
	}
	c.Load(c.Param("y"), reg.RDI)
	c.Load(c.Param("x"), reg.RSI)
	c.Load(c.Param("cos"), reg.RDX)
	c.Load(c.Param("sin"), reg.R8)
	c.Load(c.Param("rows"), reg.R11)
	stride(c, "ys", reg.R12)
	stride(c, "xs", reg.R13)
	if neox {
		stride(c, "h", reg.RAX)
	}
	v := l.v
	c.Label("row")
	c.XORQ(reg.RBX, reg.RBX)
	c.MOVQ(param(c, "n"), reg.RCX)
	if neox {
		c.LEAQ(idx(reg.RSI, 0, reg.RAX, 1), reg.R9)  // xb
		c.LEAQ(idx(reg.RDI, 0, reg.RAX, 1), reg.R10) // yb
	}
	c.Label("loop")
	if neox {
		c.VMOVUPS(idx(reg.RSI, 0, reg.RBX, 1), v[0])
		c.VMOVUPS(idx(reg.R9, 0, reg.RBX, 1), v[1])
		c.VMOVUPS(idx(reg.RDX, 0, reg.RBX, 1), v[2])
		c.VMOVUPS(idx(reg.R8, 0, reg.RBX, 1), v[3])
		c.VMULPS(v[2], v[0], v[4])
		c.VMULPS(v[3], v[1], v[5])
		c.VSUBPS(v[5], v[4], v[4])
		c.VMULPS(v[3], v[0], v[0])
		c.VMULPS(v[2], v[1], v[1])
		c.VADDPS(v[1], v[0], v[0])
		c.VMOVUPS(v[4], idx(reg.RDI, 0, reg.RBX, 1))
		c.VMOVUPS(v[0], idx(reg.R10, 0, reg.RBX, 1))
	} else {
		c.VMOVUPS(idx(reg.RSI, 0, reg.RBX, 1), v[0])
		c.VPERMILPS(operand.Imm(0xb1), v[0], v[1])
		c.VMULPS(idx(reg.RDX, 0, reg.RBX, 1), v[0], v[0])
		c.VMULPS(idx(reg.R8, 0, reg.RBX, 1), v[1], v[1])
		c.VADDPS(v[1], v[0], v[0])
		c.VMOVUPS(v[0], idx(reg.RDI, 0, reg.RBX, 1))
	}
	c.ADDQ(operand.Imm(uint64(l.bytes)), reg.RBX)
	c.SUBQ(operand.Imm(uint64(w)), reg.RCX)
	c.JNZ(lbl("loop"))
	c.ADDQ(reg.R12, reg.RDI)
	c.ADDQ(reg.R13, reg.RSI)
	c.DECQ(reg.R11)
	c.JNZ(lbl("row"))
	c.VZEROUPPER()
	c.RET()
}
