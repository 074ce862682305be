package main

import (
	"fmt"
	"math/bits"

	"github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// genF16Conv writes f16_amd64.s: hardware f32 ↔ f16 conversion (F16C at
// the avx2 level, AVX-512 F for the 16-wide forms, two vectors a step).
// VCVTPS2PH's immediate 0 rounds to nearest with ties to even.
func genF16Conv(c *build.Context) {
	f16Conv(c, "f32ToF16F16C", avx2, 1, true)
	f16Conv(c, "f16ToF32F16C", avx2, 1, false)
	f16Conv(c, "f32ToF16AVX512", avx512, 2, true)
	f16Conv(c, "f16ToF32AVX512", avx512, 2, false)
}

// f16Conv converts n elements from SI to DI, unroll vectors of lv a step
// (the float32 side lv.bytes per vector, the f16 side half that); toF16
// narrows float32 to f16, else widens.
func f16Conv(c *build.Context, name string, lv level, unroll int, toF16 bool) {
	step := unroll * lv.bytes / 4 // elements a step
	sig, prefix := "func(dst *float32, src *uint16, n int)", "s"
	if toF16 {
		sig, prefix = "func(dst *uint16, src *float32, n int)", "h"
	}
	fn(c, name, sig, fmt.Sprintf("n a multiple of %d.", step))
	loop, done := fmt.Sprintf("%s%dloop", prefix, step), fmt.Sprintf("%s%ddone", prefix, step)
	c.Load(c.Param("dst"), reg.RDI)
	c.Load(c.Param("src"), reg.RSI)
	c.Load(c.Param("n"), reg.RCX)
	c.SHRQ(operand.Imm(uint64(bits.TrailingZeros(uint(step)))), reg.RCX)
	c.JZ(operand.LabelRef(done))
	c.Label(loop)
	f32, f16 := reg.RSI, reg.RDI // the pointer to each side
	if !toF16 {
		f32, f16 = reg.RDI, reg.RSI
	}
	for i := range unroll {
		if toF16 {
			c.VMOVUPS(at(f32, i*lv.bytes), lv.v[i])
		} else {
			c.VCVTPH2PS(at(f16, i*lv.bytes/2), lv.v[i])
		}
	}
	for i := range unroll {
		if toF16 {
			c.VCVTPS2PH(operand.Imm(0), lv.v[i], at(f16, i*lv.bytes/2))
		} else {
			c.VMOVUPS(lv.v[i], at(f32, i*lv.bytes))
		}
	}
	f32Bytes, f16Bytes := unroll*lv.bytes, unroll*lv.bytes/2
	if toF16 { // source (SI) first
		c.ADDQ(operand.I32(f32Bytes), f32)
		c.ADDQ(operand.I32(f16Bytes), f16)
	} else {
		c.ADDQ(operand.I32(f16Bytes), f16)
		c.ADDQ(operand.I32(f32Bytes), f32)
	}
	c.DECQ(reg.RCX)
	c.JNZ(operand.LabelRef(loop))
	c.Label(done)
	c.VZEROUPPER()
	c.RET()
}

// genDequant writes dequant_amd64.s: nb q8_0 blocks (f16 scale d, 32
// int8) to 32·nb floats q·d (F16C for d; AVX2).
func genDequant(c *build.Context) {
	fn(c, "dequantQ8_0AVX2", "func(dst *float32, src *byte, nb int)",
		"dst[32b+i] = q_i·d of q8_0 block b, for b < nb.")
	c.Load(c.Param("dst"), reg.RDI)
	c.Load(c.Param("src"), reg.RSI)
	c.Load(c.Param("nb"), reg.RCX)
	c.TESTQ(reg.RCX, reg.RCX)
	c.JZ(operand.LabelRef("qdone"))
	c.Label("qloop")
	c.MOVWLZX(at(reg.RSI, 0), reg.EAX)
	c.VMOVD(reg.EAX, reg.X0)
	c.VCVTPH2PS(reg.X0, reg.X0)
	c.VBROADCASTSS(reg.X0, reg.Y0)
	q := avx2.v[1:5]
	for i, y := range q {
		c.VPMOVSXBD(at(reg.RSI, 2+8*i), y)
	}
	for _, y := range q {
		c.VCVTDQ2PS(y, y)
	}
	for _, y := range q {
		c.VMULPS(reg.Y0, y, y)
	}
	for i, y := range q {
		c.VMOVUPS(y, at(reg.RDI, 32*i))
	}
	c.ADDQ(operand.I32(34), reg.RSI)
	c.ADDQ(operand.I32(128), reg.RDI)
	c.DECQ(reg.RCX)
	c.JNZ(operand.LabelRef("qloop"))
	c.Label("qdone")
	c.VZEROUPPER()
	c.RET()
}
