package main

import (
	"fmt"
	"math/bits"

	"github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// genF16Dot writes f16dot_amd64.s: f16 and bf16 weight rows times a
// float32 activation row, four rows or one per call, at AVX-512 and AVX2,
// all from rowDot; and the AVX-512 f32 weight rows' kernels of the same
// shape (gemmNT's decode products, gemv512).
func genF16Dot(c *build.Context) {
	rowDot(c, "dotF16x4AVX512", avx512, 4, elemF16)
	rowDot(c, "dotF16x1AVX512", avx512, 1, elemF16)
	rowDot(c, "dotF16x4AVX2", avx2, 4, elemF16)
	rowDot(c, "dotF16x1AVX2", avx2, 1, elemF16)
	rowDot(c, "dotF32x4AVX512", avx512, 4, elemF32)
	rowDot(c, "dotF32x1AVX512", avx512, 1, elemF32)
	rowDot(c, "dotBF16x4AVX512", avx512, 4, elemBF16)
	rowDot(c, "dotBF16x1AVX512", avx512, 1, elemBF16)
	rowDot(c, "dotBF16x4AVX2", avx2, 4, elemBF16)
	rowDot(c, "dotBF16x1AVX2", avx2, 1, elemBF16)
}

// rowElem is the weight type of a rowDot kernel.
type rowElem int

const (
	elemF16  rowElem = iota // halves, widened by VCVTPH2PS
	elemBF16                // bfloat16, widened by VPMOVZXWD and a 16-bit shift
	elemF32                 // floats, read by the FMA itself
)

// rowDot writes one kernel: the weights of each row (f16 halves widened
// by VCVTPH2PS straight from memory, bfloat16 zero-extended to 32 bits and
// shifted up 16, or f32 read by the FMA itself) are
// accumulated with FMA against the activations in V0, V1, two
// accumulators per row (V4+2r, V5+2r) so that the FMA latency is covered.
// Rows sit at SI, R8, R9, R10 (stride DI, in bytes).
func rowDot(c *build.Context, name string, lv level, rows int, elem rowElem) {
	v := lv.v
	lanes := lv.bytes / 4
	typ, step := "f16", lv.bytes // weight bytes per row and step
	switch elem {
	case elemBF16:
		typ = "bf16"
	case elemF32:
		typ, step = "f32", 2*lv.bytes
	}
	fn(c, name, "func(w *byte, stride int, x *float32, n int, dst *float32)",
		fmt.Sprintf("dst[r] = sum_i %s(w[r*stride+%di]) * x[i] for r < %d, i < n (n a multiple of %d).", typ, step/(2*lanes), rows, 2*lanes))
	rowReg := rowArgs(c, rows, "x", "n")
	c.SHRQ(operand.Imm(uint64(bits.TrailingZeros(uint(2*lanes)))), reg.RCX) // iterations
	for i := 4; i < 4+2*rows; i++ {
		if lv.bytes == 64 {
			c.VPXORD(v[i], v[i], v[i])
		} else {
			c.VXORPS(v[i], v[i], v[i])
		}
	}
	// Temporaries: pairs of registers from V12 up, shared by rows when
	// the level has too few (AVX2: two pairs for four rows).
	pairs := (len(v) - 12) / 2
	// The four-row AVX-512 kernels prefetch, at each step, the same place
	// in the next four rows (those of the next call over a tile of rows):
	// a decode product streams its weights from memory, and prefetching a
	// fixed distance ahead in the call's own rows left the rows each call
	// starts on cold (3-4x the time with weights beyond the cache; the
	// quantized four-row kernels of qdot512.go do the same). R12 and R13 point at rows
	// 4 and 6 below; prefetches never fault, so rows past the last are
	// harmless. An f32 step spans two lines of each row, so both are
	// asked for. The AVX2 kernels, half as wide, do not prefetch.
	next4 := rows == 4 && lv.bytes == 64
	if next4 {
		c.LEAQ(idx(reg.R10, 0, reg.RDI, 1), reg.R12)
		c.LEAQ(idx(reg.R12, 0, reg.RDI, 2), reg.R13)
	}
	loop := fmt.Sprintf("%sx%dloop%d", typ, rows, lv.bytes*8)
	c.Label(loop)
	if next4 {
		for off := 0; off < step; off += 64 {
			c.PREFETCHT0(at(reg.R12, off))
			c.PREFETCHT0(idx(reg.R12, off, reg.RDI, 1))
			c.PREFETCHT0(at(reg.R13, off))
			c.PREFETCHT0(idx(reg.R13, off, reg.RDI, 1))
		}
	}
	c.VMOVUPS(at(reg.RDX, 0), v[0])
	c.VMOVUPS(at(reg.RDX, lv.bytes), v[1])
	for r, p := range rowReg {
		if elem == elemF32 {
			c.VFMADD231PS(at(p, 0), v[0], v[4+2*r])
			c.VFMADD231PS(at(p, lv.bytes), v[1], v[5+2*r])
			continue
		}
		t0, t1 := v[12+2*(r%pairs)], v[13+2*(r%pairs)]
		if elem == elemBF16 {
			c.VPMOVZXWD(at(p, 0), t0)
			c.VPMOVZXWD(at(p, lv.bytes/2), t1)
			c.VPSLLD(operand.U8(16), t0, t0)
			c.VPSLLD(operand.U8(16), t1, t1)
		} else {
			c.VCVTPH2PS(at(p, 0), t0)
			c.VCVTPH2PS(at(p, lv.bytes/2), t1)
		}
		c.VFMADD231PS(v[0], t0, v[4+2*r])
		c.VFMADD231PS(v[1], t1, v[5+2*r])
	}
	for _, p := range rowReg {
		c.ADDQ(operand.I32(step), p)
	}
	if next4 {
		c.ADDQ(operand.I32(step), reg.R12)
		c.ADDQ(operand.I32(step), reg.R13)
	}
	c.ADDQ(operand.I32(2*lv.bytes), reg.RDX)
	c.DECQ(reg.RCX)
	c.JNZ(operand.LabelRef(loop))
	for r := range rows {
		c.VADDPS(v[5+2*r], v[4+2*r], v[4+2*r])
	}
	if rows == 4 && lv.bytes == 64 {
		// The four rows' last halvings together (hsum4Store, the same
		// additions in the same order): at a short row (attention's
		// scores over 32-float heads, one loop trip) the four
		// hsumStores were most of a call.
		hsum4StoreWith(c, []reg.VecPhysical{v[4], v[6], v[8], v[10]}, at(reg.RBX, 0), 12)
	} else {
		for r := range rows {
			hsumStore(c, v[4+2*r], at(reg.RBX, 4*r), reg.Y2)
		}
	}
	c.VZEROUPPER()
	c.RET()
}

// hsumStore stores the sum of acc's lanes at dst, halving through the
// Y register t and the X register after it (f16Dot: Y2, X3).
func hsumStore(c *build.Context, acc reg.VecPhysical, dst operand.Mem, t reg.VecPhysical) {
	x, u := t.AsX(), xmm[t.PhysicalIndex()+1]
	if acc.Size() == 64 {
		c.VEXTRACTF64X4(operand.Imm(1), acc, t)
		c.VADDPS(acc.AsY(), t, t)
		c.VEXTRACTF128(operand.Imm(1), t, u)
		c.VADDPS(u, x, x)
	} else {
		c.VEXTRACTF128(operand.Imm(1), acc, x)
		c.VADDPS(acc.AsX(), x, x)
	}
	c.VHADDPS(x, x, x)
	c.VHADDPS(x, x, x)
	c.VMOVSS(x, dst)
}

// rowArgs loads the arguments of a row kernel, (w, stride, y, n, dst)
// with the names y and n given: w to SI, stride to DI (rows > 1 only), y
// to DX, n to CX, dst to BX, and rows-1 more row pointers stride apart to
// R8, R9, R10. It returns the row pointers.
func rowArgs(c *build.Context, rows int, y, n string) []reg.GPPhysical {
	rowReg := []reg.GPPhysical{reg.RSI, reg.R8, reg.R9, reg.R10}[:rows]
	c.Load(c.Param("w"), reg.RSI)
	if rows > 1 {
		c.Load(c.Param("stride"), reg.RDI)
	}
	c.Load(c.Param(y), reg.RDX)
	c.Load(c.Param(n), reg.RCX)
	c.Load(c.Param("dst"), reg.RBX)
	for r := 1; r < rows; r++ {
		c.LEAQ(idx(rowReg[r-1], 0, reg.RDI, 1), rowReg[r])
	}
	return rowReg
}
