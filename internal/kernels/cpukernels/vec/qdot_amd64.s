//go:build amd64 && !purego

#include "textflag.h"

// Quantized dot kernels (see qdot.go). Per block: the signed weight bytes
// w and activation bytes y are multiplied as |w| (unsigned) by y·sign(w)
// (signed) with VPMADDUBSW into 16-bit pair sums, widened to 32-bit
// sums by VPMADDWD against ones, converted to float32 and accumulated
// with FMA times d_w·d_y (both halves converted with VCVTPH2PS).

#define REP4(name, v) \
	DATA name<>+0(SB)/8, $v \
	DATA name<>+8(SB)/8, $v \
	DATA name<>+16(SB)/8, $v \
	DATA name<>+24(SB)/8, $v \
	GLOBL name<>(SB), RODATA|NOPTR, $32

REP4(qones16, 0x0001000100010001)
REP4(qnib, 0x0f0f0f0f0f0f0f0f)
REP4(qeight, 0x0808080808080808)

// QDOT: acc += float(Σ pairs |w|·(y·sign w)) · (half(ptr) · Y5), with the
// weight bytes in Y6 and the activation bytes in Y4.
#define QDOT(ptr, acc) \
	VPSIGNB Y6, Y6, Y7 \
	VPSIGNB Y6, Y4, Y8 \
	VPMADDUBSW Y8, Y7, Y8 \
	VPMADDWD Y15, Y8, Y8 \
	VCVTDQ2PS Y8, Y8 \
	VPBROADCASTW (ptr), X9 \
	VCVTPH2PS X9, Y9 \
	VMULPS Y5, Y9, Y9 \
	VFMADD231PS Y9, Y8, acc

#define Q8ROW(ptr, acc) \
	VMOVDQU 2(ptr), Y6 \
	QDOT(ptr, acc)

// Q4ROW unpacks the 16 nibble bytes to 32 bytes in [-8, 7]: low nibbles
// are elements 0..15, high nibbles 16..31.
#define Q4ROW(ptr, acc) \
	VMOVDQU 2(ptr), X6 \
	VPSRLW $4, X6, X7 \
	VINSERTI128 $1, X7, Y6, Y6 \
	VPAND Y14, Y6, Y6 \
	VPSUBB Y13, Y6, Y6 \
	QDOT(ptr, acc)

// YLOAD loads the activation block at DX: bytes into Y4, scale into all
// lanes of Y5.
#define YLOAD \
	VMOVDQU 2(DX), Y4 \
	VPBROADCASTW (DX), X5 \
	VCVTPH2PS X5, Y5

#define HSUM(acc, xacc, off) \
	VEXTRACTF128 $1, acc, X10 \
	VADDPS X10, xacc, X10 \
	VHADDPS X10, X10, X10 \
	VHADDPS X10, X10, X10 \
	VMOVSS X10, off(BX)

// func dotQ8x4AVX2(w *byte, stride int, y *byte, nb int, dst *float32)
TEXT ·dotQ8x4AVX2(SB), NOSPLIT, $0-40
	MOVQ w+0(FP), SI
	MOVQ stride+8(FP), DI
	MOVQ y+16(FP), DX
	MOVQ nb+24(FP), CX
	MOVQ dst+32(FP), BX
	LEAQ (SI)(DI*1), R8
	LEAQ (R8)(DI*1), R9
	LEAQ (R9)(DI*1), R10
	VMOVDQU qones16<>(SB), Y15
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
q8x4loop:
	YLOAD
	Q8ROW(SI, Y0)
	Q8ROW(R8, Y1)
	Q8ROW(R9, Y2)
	Q8ROW(R10, Y3)
	ADDQ $34, SI
	ADDQ $34, R8
	ADDQ $34, R9
	ADDQ $34, R10
	ADDQ $34, DX
	DECQ CX
	JNZ  q8x4loop
	HSUM(Y0, X0, 0)
	HSUM(Y1, X1, 4)
	HSUM(Y2, X2, 8)
	HSUM(Y3, X3, 12)
	VZEROUPPER
	RET

// func dotQ8x1AVX2(w *byte, y *byte, nb int, dst *float32)
TEXT ·dotQ8x1AVX2(SB), NOSPLIT, $0-32
	MOVQ w+0(FP), SI
	MOVQ y+8(FP), DX
	MOVQ nb+16(FP), CX
	MOVQ dst+24(FP), BX
	VMOVDQU qones16<>(SB), Y15
	VXORPS Y0, Y0, Y0
q8x1loop:
	YLOAD
	Q8ROW(SI, Y0)
	ADDQ $34, SI
	ADDQ $34, DX
	DECQ CX
	JNZ  q8x1loop
	HSUM(Y0, X0, 0)
	VZEROUPPER
	RET

// func dotQ4x4AVX2(w *byte, stride int, y *byte, nb int, dst *float32)
TEXT ·dotQ4x4AVX2(SB), NOSPLIT, $0-40
	MOVQ w+0(FP), SI
	MOVQ stride+8(FP), DI
	MOVQ y+16(FP), DX
	MOVQ nb+24(FP), CX
	MOVQ dst+32(FP), BX
	LEAQ (SI)(DI*1), R8
	LEAQ (R8)(DI*1), R9
	LEAQ (R9)(DI*1), R10
	VMOVDQU qones16<>(SB), Y15
	VMOVDQU qnib<>(SB), Y14
	VMOVDQU qeight<>(SB), Y13
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
q4x4loop:
	YLOAD
	Q4ROW(SI, Y0)
	Q4ROW(R8, Y1)
	Q4ROW(R9, Y2)
	Q4ROW(R10, Y3)
	ADDQ $18, SI
	ADDQ $18, R8
	ADDQ $18, R9
	ADDQ $18, R10
	ADDQ $34, DX
	DECQ CX
	JNZ  q4x4loop
	HSUM(Y0, X0, 0)
	HSUM(Y1, X1, 4)
	HSUM(Y2, X2, 8)
	HSUM(Y3, X3, 12)
	VZEROUPPER
	RET

// func dotQ4x1AVX2(w *byte, y *byte, nb int, dst *float32)
TEXT ·dotQ4x1AVX2(SB), NOSPLIT, $0-32
	MOVQ w+0(FP), SI
	MOVQ y+8(FP), DX
	MOVQ nb+16(FP), CX
	MOVQ dst+24(FP), BX
	VMOVDQU qones16<>(SB), Y15
	VMOVDQU qnib<>(SB), Y14
	VMOVDQU qeight<>(SB), Y13
	VXORPS Y0, Y0, Y0
q4x1loop:
	YLOAD
	Q4ROW(SI, Y0)
	ADDQ $18, SI
	ADDQ $34, DX
	DECQ CX
	JNZ  q4x1loop
	HSUM(Y0, X0, 0)
	VZEROUPPER
	RET
