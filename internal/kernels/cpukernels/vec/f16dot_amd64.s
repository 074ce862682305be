//go:build amd64 && !purego

#include "textflag.h"
#include "next4_amd64.h"

// f16 weight rows times a float32 activation row (see f16dot.go): the
// halves are widened by VCVTPH2PS straight from memory and accumulated
// with FMA, four rows per load of the activations, two accumulators per
// row (16 or 8 lanes each) so that the FMA latency is covered. The
// AVX-512 loop prefetches the next four rows (next4_amd64.h).

// F16STEP512: acc0/acc1 += the 32 halves at ptr times Z0/Z1.
#define F16STEP512(ptr, t0, t1, acc0, acc1) \
	VCVTPH2PS (ptr), t0 \
	VCVTPH2PS 32(ptr), t1 \
	VFMADD231PS Z0, t0, acc0 \
	VFMADD231PS Z1, t1, acc1

// F16SUM512 adds acc1 into acc0 and stores the sum of its lanes at off(BX).
#define F16SUM512(acc0, acc1, yacc0, off) \
	VADDPS acc1, acc0, acc0 \
	VEXTRACTF64X4 $1, acc0, Y2 \
	VADDPS yacc0, Y2, Y2 \
	VEXTRACTF128 $1, Y2, X3 \
	VADDPS X3, X2, X2 \
	VHADDPS X2, X2, X2 \
	VHADDPS X2, X2, X2 \
	VMOVSS X2, off(BX)

// func dotF16x4AVX512(w *byte, stride int, x *float32, n int, dst *float32)
TEXT ·dotF16x4AVX512(SB), NOSPLIT, $0-40
	MOVQ w+0(FP), SI
	MOVQ stride+8(FP), DI
	MOVQ x+16(FP), DX
	MOVQ n+24(FP), CX
	MOVQ dst+32(FP), BX
	LEAQ (SI)(DI*1), R8
	LEAQ (R8)(DI*1), R9
	LEAQ (R9)(DI*1), R10
	SHRQ $5, CX
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7
	VPXORD Z8, Z8, Z8
	VPXORD Z9, Z9, Z9
	VPXORD Z10, Z10, Z10
	VPXORD Z11, Z11, Z11
	NEXT4SETUP
f16x4loop512:
	NEXT4PF
	VMOVUPS (DX), Z0
	VMOVUPS 64(DX), Z1
	F16STEP512(SI, Z12, Z13, Z4, Z5)
	F16STEP512(R8, Z14, Z15, Z6, Z7)
	F16STEP512(R9, Z16, Z17, Z8, Z9)
	F16STEP512(R10, Z18, Z19, Z10, Z11)
	ADDQ $64, SI
	ADDQ $64, R8
	ADDQ $64, R9
	ADDQ $64, R10
	ADDQ $64, R12
	ADDQ $64, R13
	ADDQ $128, DX
	DECQ CX
	JNZ  f16x4loop512
	F16SUM512(Z4, Z5, Y4, 0)
	F16SUM512(Z6, Z7, Y6, 4)
	F16SUM512(Z8, Z9, Y8, 8)
	F16SUM512(Z10, Z11, Y10, 12)
	VZEROUPPER
	RET

// func dotF16x1AVX512(w *byte, stride int, x *float32, n int, dst *float32)
TEXT ·dotF16x1AVX512(SB), NOSPLIT, $0-40
	MOVQ w+0(FP), SI
	MOVQ x+16(FP), DX
	MOVQ n+24(FP), CX
	MOVQ dst+32(FP), BX
	SHRQ $5, CX
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
f16x1loop512:
	VMOVUPS (DX), Z0
	VMOVUPS 64(DX), Z1
	F16STEP512(SI, Z12, Z13, Z4, Z5)
	ADDQ $64, SI
	ADDQ $128, DX
	DECQ CX
	JNZ  f16x1loop512
	F16SUM512(Z4, Z5, Y4, 0)
	VZEROUPPER
	RET

// F16STEP2: as F16STEP512 with 8-lane registers (16 halves).
#define F16STEP2(ptr, t0, t1, acc0, acc1) \
	VCVTPH2PS (ptr), t0 \
	VCVTPH2PS 16(ptr), t1 \
	VFMADD231PS Y0, t0, acc0 \
	VFMADD231PS Y1, t1, acc1

#define F16SUM2(acc0, acc1, xacc0, off) \
	VADDPS acc1, acc0, acc0 \
	VEXTRACTF128 $1, acc0, X2 \
	VADDPS xacc0, X2, X2 \
	VHADDPS X2, X2, X2 \
	VHADDPS X2, X2, X2 \
	VMOVSS X2, off(BX)

// func dotF16x4AVX2(w *byte, stride int, x *float32, n int, dst *float32)
TEXT ·dotF16x4AVX2(SB), NOSPLIT, $0-40
	MOVQ w+0(FP), SI
	MOVQ stride+8(FP), DI
	MOVQ x+16(FP), DX
	MOVQ n+24(FP), CX
	MOVQ dst+32(FP), BX
	LEAQ (SI)(DI*1), R8
	LEAQ (R8)(DI*1), R9
	LEAQ (R9)(DI*1), R10
	SHRQ $4, CX
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9
	VXORPS Y10, Y10, Y10
	VXORPS Y11, Y11, Y11
f16x4loop2:
	VMOVUPS (DX), Y0
	VMOVUPS 32(DX), Y1
	F16STEP2(SI, Y12, Y13, Y4, Y5)
	F16STEP2(R8, Y14, Y15, Y6, Y7)
	F16STEP2(R9, Y12, Y13, Y8, Y9)
	F16STEP2(R10, Y14, Y15, Y10, Y11)
	ADDQ $32, SI
	ADDQ $32, R8
	ADDQ $32, R9
	ADDQ $32, R10
	ADDQ $64, DX
	DECQ CX
	JNZ  f16x4loop2
	F16SUM2(Y4, Y5, X4, 0)
	F16SUM2(Y6, Y7, X6, 4)
	F16SUM2(Y8, Y9, X8, 8)
	F16SUM2(Y10, Y11, X10, 12)
	VZEROUPPER
	RET

// func dotF16x1AVX2(w *byte, stride int, x *float32, n int, dst *float32)
TEXT ·dotF16x1AVX2(SB), NOSPLIT, $0-40
	MOVQ w+0(FP), SI
	MOVQ x+16(FP), DX
	MOVQ n+24(FP), CX
	MOVQ dst+32(FP), BX
	SHRQ $4, CX
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
f16x1loop2:
	VMOVUPS (DX), Y0
	VMOVUPS 32(DX), Y1
	F16STEP2(SI, Y12, Y13, Y4, Y5)
	ADDQ $32, SI
	ADDQ $64, DX
	DECQ CX
	JNZ  f16x1loop2
	F16SUM2(Y4, Y5, X4, 0)
	VZEROUPPER
	RET
