package main

import (
	"math"

	"github.com/mmcloughlin/avo/attr"
	"github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// genQ8K writes q8k_amd64.s: ggml's quantize_row_q8_K on one block of
// 256 floats with AVX-512 (see quantizeQ8KBlock in q8k_amd64.go), the
// same steps as the Go code, so the same bytes: the first element of
// largest magnitude m, iscale = -127/m, q = min(127,
// round-to-even(iscale·x)), the 16-quant sums, d = 1/iscale.
func genQ8K(c *build.Context) {
	word := func(name string, v uint32) operand.Mem {
		m := c.StaticGlobal(name)
		c.DataAttributes(attr.RODATA | attr.NOPTR)
		c.AddDatum(0, operand.U32(v))
		return m
	}
	absmask := word("k8absmask", 0x7fffffff)
	m127 := word("k8m127", math.Float32bits(-127))
	one := word("k8one", math.Float32bits(1))
	inf := word("k8inf", 0x7f800000)
	i127 := word("k8i127", 127)

	fn(c, "q8KBlockAVX512", "func(x *float32, dst *byte) int",
		"It returns 0 when it wrote the block, 1 when the Go code must: the",
		"largest magnitude is 0, infinite or NaN, or an element is NaN.")
	c.Load(c.Param("x"), reg.RSI)
	c.Load(c.Param("dst"), reg.RDI)
	c.VBROADCASTSS(absmask, reg.Z31)
	// amax: |x| of the 16 vectors folded into Z0..Z3, then across lanes.
	z := avx512.v
	for i := range 16 {
		if i < 4 {
			c.VANDPS(at(reg.RSI, 64*i), reg.Z31, z[i])
			if i == 3 {
				c.KXORW(reg.K2, reg.K2, reg.K2)
			}
			continue
		}
		c.VANDPS(at(reg.RSI, 64*i), reg.Z31, reg.Z4)
		c.VMAXPS(reg.Z4, z[i%4], z[i%4])
	}
	c.VMAXPS(reg.Z1, reg.Z0, reg.Z0)
	c.VMAXPS(reg.Z3, reg.Z2, reg.Z2)
	c.VMAXPS(reg.Z2, reg.Z0, reg.Z0)
	c.VEXTRACTF64X4(operand.Imm(1), reg.Z0, reg.Y1)
	c.VMAXPS(reg.Y1, reg.Y0, reg.Y0)
	c.VEXTRACTF128(operand.Imm(1), reg.Y0, reg.X1)
	c.VMAXPS(reg.X1, reg.X0, reg.X0)
	c.VPERMILPS(operand.Imm(0x4e), reg.X0, reg.X1)
	c.VMAXPS(reg.X1, reg.X0, reg.X0)
	c.VPERMILPS(operand.Imm(0xb1), reg.X0, reg.X1)
	c.VMAXPS(reg.X1, reg.X0, reg.X0)
	// NaN anywhere, or amax 0 or infinite: leave the block to Go.
	blockLoop := func(label string, body func()) {
		c.XORQ(reg.RBX, reg.RBX)
		c.Label(label)
		body()
		c.ADDQ(operand.Imm(64), reg.RBX)
		c.CMPQ(reg.RBX, operand.I32(1024))
		c.JNE(lbl(label))
	}
	blockLoop("nanloop", func() {
		c.VMOVUPS(idx(reg.RSI, 0, reg.RBX, 1), reg.Z4)
		c.VCMPPS(operand.Imm(3), reg.Z4, reg.Z4, reg.K1)
		c.KORW(reg.K1, reg.K2, reg.K2)
	})
	c.KORTESTW(reg.K2, reg.K2)
	c.JNZ(lbl("fallback"))
	c.VXORPS(reg.X1, reg.X1, reg.X1)
	c.VUCOMISS(reg.X1, reg.X0)
	c.JEQ(lbl("fallback"))
	c.VUCOMISS(inf, reg.X0)
	c.JAE(lbl("fallback"))
	// The first element whose magnitude is amax.
	c.VBROADCASTSS(reg.X0, reg.Z0)
	blockLoop("findloop", func() {
		c.VANDPS(idx(reg.RSI, 0, reg.RBX, 1), reg.Z31, reg.Z4)
		c.VCMPPS(operand.Imm(0), reg.Z0, reg.Z4, reg.K1)
		c.KMOVW(reg.K1, reg.EAX)
		c.TESTL(reg.EAX, reg.EAX)
		c.JNZ(lbl("found"))
	})
	c.JMP(lbl("fallback"))
	c.Label("found")
	c.TZCNTL(reg.EAX, reg.EAX)
	c.LEAQ(idx(reg.RBX, 0, reg.RAX, 4), reg.RAX)
	c.VMOVSS(idx(reg.RSI, 0, reg.RAX, 1), reg.X1)
	c.VMOVSS(m127, reg.X2)
	c.VDIVSS(reg.X1, reg.X2, reg.X2)
	c.VMOVSS(one, reg.X3)
	c.VDIVSS(reg.X2, reg.X3, reg.X3)
	c.VMOVSS(reg.X3, at(reg.RDI, 0))
	c.VBROADCASTSS(reg.X2, reg.Z2)
	c.VPBROADCASTD(i127, reg.Z30)
	// Each group of 16: the quants at 4+16g(DI), their int16 sum at
	// 260+2g(DI).
	for g := range 16 {
		c.VMULPS(at(reg.RSI, 64*g), reg.Z2, reg.Z5)
		c.VCVTPS2DQ(reg.Z5, reg.Z5)
		c.VPMINSD(reg.Z30, reg.Z5, reg.Z5)
		c.VPMOVDB(reg.Z5, at(reg.RDI, 4+16*g))
		c.VEXTRACTI64X4(operand.Imm(1), reg.Z5, reg.Y6)
		c.VPADDD(reg.Y6, reg.Y5, reg.Y5)
		hsumI32(c, reg.Y5, reg.X6)
		c.VMOVD(reg.X5, reg.EAX)
		c.MOVW(reg.AX, at(reg.RDI, 260+2*g))
	}
	c.MOVQ(operand.I32(0), ret(c))
	end(c, false)
	c.Label("fallback")
	c.MOVQ(operand.I32(1), ret(c))
	end(c, false)
}
