package main

import (
	"fmt"

	"github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// genF16Attn writes f16attn_amd64.s: the AVX-512 kernels of attention
// decode over f16 K and V shared by a group of q heads (grouped-query
// attention): every K or V row is read and widened once for all the
// group's heads.
func genF16Attn(c *build.Context) {
	for _, g := range []int{4, 2, 1} {
		f16DotGroup(c, g)
	}
	for _, g := range []int{4, 2, 1} {
		for _, nz := range []int{4, 1} {
			f16MadGroup(c, g, nz)
		}
	}
}

// groupPtrs loads the pointer parameter p to the first register of regs
// and sets each next one stride (the parameter named stride, in bytes)
// further.
func groupPtrs(c *build.Context, g int, p, stride string, regs []reg.GPPhysical, tmp reg.GPPhysical) {
	c.Load(c.Param(p), regs[0])
	if g == 1 {
		return
	}
	c.Load(c.Param(stride), tmp)
	for i := 1; i < g; i++ {
		c.LEAQ(idx(regs[i-1], 0, tmp, 1), regs[i])
	}
}

// f16DotGroup writes dotF16G<g>AVX512: the dots of 4·rows4 f16 K rows
// with g float32 q rows, four K rows per step. Accumulators Z16.. (row r,
// head h at Z16+r*g+h), q chunks Z0..Z3, widened K chunks Z4..Z7; the four
// accumulators of one head are summed into the four lanes of one XMM
// (VHADDPS tree over Y8..Y11) and stored at dst + h*dstride.
func f16DotGroup(c *build.Context, g int) {
	name := fmt.Sprintf("dotF16G%dAVX512", g)
	fn(c, name, "func(k *byte, kstride int, q *float32, qstride int, n int, rows4 int, dst *float32, dstride int)",
		fmt.Sprintf("dst[h*dstride/4+r] = sum_i f16(k[r*kstride+2i]) * q[h*qstride/4+i] for h < %d, r < 4*rows4, i < n", g),
		"(n a multiple of 16, rows4 > 0; strides in bytes).")
	rows := []reg.GPPhysical{reg.RSI, reg.R8, reg.R9, reg.R10}
	qs := []reg.GPPhysical{reg.RDX, reg.R12, reg.R13, reg.RAX}
	c.Load(c.Param("k"), reg.RSI)
	c.Load(c.Param("kstride"), reg.RDI)
	for r := 1; r < 4; r++ {
		c.LEAQ(idx(rows[r-1], 0, reg.RDI, 1), rows[r])
	}
	groupPtrs(c, g, "q", "qstride", qs, reg.R11)
	c.Load(c.Param("dst"), reg.RBX)
	c.Load(c.Param("dstride"), reg.R14)
	// DI = 4*kstride - 2n: from the end of one block of rows to the next;
	// R11 = 4n: the bytes each q pointer advances over a block.
	c.Load(c.Param("n"), reg.R11)
	c.SHLQ(operand.Imm(2), reg.RDI)
	c.SUBQ(reg.R11, reg.RDI)
	c.SUBQ(reg.R11, reg.RDI)
	c.SHLQ(operand.Imm(2), reg.R11)
	outer := fmt.Sprintf("dotg%dblock", g)
	inner := fmt.Sprintf("dotg%dloop", g)
	c.Label(outer)
	for i := range 4 * g {
		z := avx512.v[16+i]
		c.VPXORD(z, z, z)
	}
	c.Load(c.Param("n"), reg.RCX)
	c.SHRQ(operand.Imm(4), reg.RCX)
	c.Label(inner)
	for h := range g {
		c.VMOVUPS(at(qs[h], 0), avx512.v[h])
	}
	for r := range 4 {
		c.VCVTPH2PS(at(rows[r], 0), avx512.v[4+r])
	}
	for r := range 4 {
		for h := range g {
			c.VFMADD231PS(avx512.v[h], avx512.v[4+r], avx512.v[16+r*g+h])
		}
	}
	for _, p := range rows {
		c.ADDQ(operand.I32(32), p)
	}
	for _, p := range qs[:g] {
		c.ADDQ(operand.I32(64), p)
	}
	c.DECQ(reg.RCX)
	c.JNZ(operand.LabelRef(inner))
	// Sum the lanes: Y8+r = both halves of row r's accumulator, then
	// hadd(hadd(Y8, Y9), hadd(Y10, Y11)) holds in each 128-bit lane
	// the four rows' partial sums; adding the two lanes gives them.
	y := []reg.VecPhysical{reg.Y8, reg.Y9, reg.Y10, reg.Y11}
	for h := range g {
		for r := range 4 {
			z := avx512.v[16+r*g+h]
			c.VEXTRACTF64X4(operand.Imm(1), z, y[r])
			c.VADDPS(z.AsY(), y[r], y[r])
		}
		c.VHADDPS(reg.Y9, reg.Y8, reg.Y8)
		c.VHADDPS(reg.Y11, reg.Y10, reg.Y10)
		c.VHADDPS(reg.Y10, reg.Y8, reg.Y8)
		c.VEXTRACTF128(operand.Imm(1), reg.Y8, reg.X9)
		c.VADDPS(reg.X9, reg.X8, reg.X8)
		var dst operand.Mem
		switch h {
		case 0:
			dst = at(reg.RBX, 0)
		case 1:
			dst = idx(reg.RBX, 0, reg.R14, 1)
		case 2:
			dst = idx(reg.RBX, 0, reg.R14, 2)
		case 3:
			c.LEAQ(idx(reg.RBX, 0, reg.R14, 2), reg.RCX)
			dst = idx(reg.RCX, 0, reg.R14, 1)
		}
		c.VMOVUPS(reg.X8, dst)
	}
	for _, p := range rows {
		c.ADDQ(reg.RDI, p)
	}
	for _, p := range qs[:g] {
		c.SUBQ(reg.R11, p)
	}
	c.ADDQ(operand.I32(16), reg.RBX)
	c.DECQ(paramAddr(c, "rows4"))
	c.JNZ(operand.LabelRef(outer))
	c.VZEROUPPER()
	c.RET()
}

// f16MadGroup writes madF16G<g>W<16nz>AVX512: 16·nz columns of g output
// rows gain the weighted sum of rows f16 V rows. Accumulators Z16..
// (head h, chunk j at Z16+h*nz+j) are loaded from o and stored back;
// widened V chunks Z0..Z3, broadcast weights Z4..Z7.
func f16MadGroup(c *build.Context, g, nz int) {
	name := fmt.Sprintf("madF16G%dW%dAVX512", g, 16*nz)
	fn(c, name, "func(o *float32, ostride int, v *byte, vstride int, rows int, w *float32, wstride int)",
		fmt.Sprintf("o[h*ostride/4+i] += sum_r w[h*wstride/4+r] * f16(v[r*vstride+2i]) for h < %d, i < %d, r < rows", g, 16*nz),
		"(rows > 0; strides in bytes).")
	os := []reg.GPPhysical{reg.RBX, reg.R8, reg.R9, reg.R10}
	ws := []reg.GPPhysical{reg.RDX, reg.R12, reg.R13, reg.RAX}
	groupPtrs(c, g, "o", "ostride", os, reg.R11)
	groupPtrs(c, g, "w", "wstride", ws, reg.R11)
	c.Load(c.Param("v"), reg.RSI)
	c.Load(c.Param("vstride"), reg.RDI)
	c.Load(c.Param("rows"), reg.RCX)
	for h := range g {
		for j := range nz {
			c.VMOVUPS(at(os[h], 64*j), avx512.v[16+h*nz+j])
		}
	}
	loop := fmt.Sprintf("madg%dw%dloop", g, 16*nz)
	c.Label(loop)
	for j := range nz {
		c.VCVTPH2PS(at(reg.RSI, 32*j), avx512.v[j])
	}
	for h := range g {
		c.VBROADCASTSS(at(ws[h], 0), avx512.v[4+h])
	}
	for h := range g {
		for j := range nz {
			c.VFMADD231PS(avx512.v[j], avx512.v[4+h], avx512.v[16+h*nz+j])
		}
	}
	c.ADDQ(reg.RDI, reg.RSI)
	for _, p := range ws[:g] {
		c.ADDQ(operand.I32(4), p)
	}
	c.DECQ(reg.RCX)
	c.JNZ(operand.LabelRef(loop))
	for h := range g {
		for j := range nz {
			c.VMOVUPS(avx512.v[16+h*nz+j], at(os[h], 64*j))
		}
	}
	c.VZEROUPPER()
	c.RET()
}

// paramAddr is the frame address of the scalar parameter name of the
// function being written (a name of its signature: anything else is a bug
// of the generator).
func paramAddr(c *build.Context, name string) operand.Mem {
	b, err := c.Param(name).Resolve()
	if err != nil {
		panic(fmt.Sprintf("asmgen: parameter %s: %v", name, err))
	}
	return b.Addr
}
