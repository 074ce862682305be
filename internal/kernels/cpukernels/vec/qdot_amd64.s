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

// Integer parts of the q4_K·q8_K and q6_K·q8_K dots of one super-block
// (see qdot_k.go): the unsigned weight quants are multiplied with the
// signed q8_K bytes by VPMADDUBSW into 16-bit pair sums (at most
// 2·63·127, no saturation), which VPMADDWD multiplies by the 16-bit
// group scales and widens to 32-bit sums, accumulated in Y0.

REP4(kthree, 0x0303030303030303)

// HSUMD leaves the sum of Y0's eight int32 lanes in lane 0 of X0.
#define HSUMD \
	VEXTRACTI128 $1, Y0, X1 \
	VPADDD X1, X0, X0 \
	VPSHUFD $0x4E, X0, X1 \
	VPADDD X1, X0, X0 \
	VPSHUFD $0xB1, X0, X1 \
	VPADDD X1, X0, X0

// Q4KSTEP: 64 elements: the low nibbles of 32 bytes at qo(SI) against the
// q8 bytes at ya(DX) with scale sa(BX), the high nibbles against yb(DX)
// with scale sb(BX).
#define Q4KSTEP(qo, ya, yb, sa, sb) \
	VMOVDQU qo(SI), Y1 \
	VPSRLW $4, Y1, Y2 \
	VPAND Y14, Y1, Y1 \
	VPAND Y14, Y2, Y2 \
	VPMADDUBSW ya(DX), Y1, Y1 \
	VPMADDUBSW yb(DX), Y2, Y2 \
	VPBROADCASTW sa(BX), Y3 \
	VPBROADCASTW sb(BX), Y4 \
	VPMADDWD Y3, Y1, Y1 \
	VPMADDWD Y4, Y2, Y2 \
	VPADDD Y1, Y0, Y0 \
	VPADDD Y2, Y0, Y0

// Q6KDOT: acc += scale pair (sa for the low 16 bytes, sb for the high 16)
// · Σ pairs a·q8, with the 32 unsigned quants in register a and the q8
// bytes at yo(DX).
#define Q6KDOT(a, yo, sa, sb) \
	VPMADDUBSW yo(DX), a, a \
	VPBROADCASTW sa(BX), X9 \
	VPBROADCASTW sb(BX), X10 \
	VINSERTI128 $1, X10, Y9, Y9 \
	VPMADDWD Y9, a, a \
	VPADDD a, Y0, Y0

// Q6KHALF: 128 elements from 64 ql bytes at qo(SI) and 32 qh bytes at
// ho(DI), q8 bytes from yo(DX), the eight scales from so(BX).
#define Q6KHALF(qo, ho, y0, y1, y2, y3, s0, s1, s2, s3, s4, s5, s6, s7) \
	VMOVDQU qo(SI), Y1 \
	VMOVDQU qo+32(SI), Y2 \
	VMOVDQU ho(DI), Y3 \
	VPAND Y14, Y1, Y4 \
	VPAND Y13, Y3, Y5 \
	VPSLLW $4, Y5, Y5 \
	VPOR Y5, Y4, Y4 \
	VPAND Y14, Y2, Y6 \
	VPSRLW $2, Y3, Y5 \
	VPAND Y13, Y5, Y5 \
	VPSLLW $4, Y5, Y5 \
	VPOR Y5, Y6, Y6 \
	VPSRLW $4, Y1, Y7 \
	VPAND Y14, Y7, Y7 \
	VPSRLW $4, Y3, Y5 \
	VPAND Y13, Y5, Y5 \
	VPSLLW $4, Y5, Y5 \
	VPOR Y5, Y7, Y7 \
	VPSRLW $4, Y2, Y8 \
	VPAND Y14, Y8, Y8 \
	VPSRLW $6, Y3, Y5 \
	VPAND Y13, Y5, Y5 \
	VPSLLW $4, Y5, Y5 \
	VPOR Y5, Y8, Y8 \
	Q6KDOT(Y4, y0, s0, s1) \
	Q6KDOT(Y6, y1, s2, s3) \
	Q6KDOT(Y7, y2, s4, s5) \
	Q6KDOT(Y8, y3, s6, s7)

REP4(kone, 0x0101010101010101)

// Q5KSTEP is Q4KSTEP with the fifth bits: bit shlo of the qh bytes (in
// Y5) for the low nibbles, bit shhi for the high ones.
#define Q5KSTEP(qo, ya, yb, sa, sb, shlo, shhi) \
	VMOVDQU qo(SI), Y1 \
	VPSRLW $4, Y1, Y2 \
	VPAND Y14, Y1, Y1 \
	VPAND Y14, Y2, Y2 \
	VPSRLW $shlo, Y5, Y6 \
	VPAND Y12, Y6, Y6 \
	VPSLLW $4, Y6, Y6 \
	VPOR Y6, Y1, Y1 \
	VPSRLW $shhi, Y5, Y6 \
	VPAND Y12, Y6, Y6 \
	VPSLLW $4, Y6, Y6 \
	VPOR Y6, Y2, Y2 \
	VPMADDUBSW ya(DX), Y1, Y1 \
	VPMADDUBSW yb(DX), Y2, Y2 \
	VPBROADCASTW sa(BX), Y3 \
	VPBROADCASTW sb(BX), Y4 \
	VPMADDWD Y3, Y1, Y1 \
	VPMADDWD Y4, Y2, Y2 \
	VPADDD Y1, Y0, Y0 \
	VPADDD Y2, Y0, Y0

// The row kernels below run nb ≥ 1 super-blocks of one weight row (R8)
// against one q8_K row (R9) and return the float32 dot, with the
// float steps of the Go kernels (qdot_k.go) in order: per super-block
// the exact int32 sums, then d·dy times them (no FMA), summed in X15.
// The group scales go through the frame as 16-bit words (BX).

// K4SCALES unpacks the 6-bit scales and mins of the q4_K/q5_K block at R8
// (12 bytes at 4(R8)) to scale words at (BX) and the mins, each twice, in
// the words of Y7 multiplied with the block's 16-quant sums (260(R9)).
#define K4SCALES \
	MOVL 4(R8), AX \
	MOVL 8(R8), R10 \
	MOVL 12(R8), R11 \
	MOVL AX, DI \
	ANDL $0x3f3f3f3f, DI \
	MOVL R11, R12 \
	ANDL $0x0f0f0f0f, R12 \
	SHRL $6, AX \
	ANDL $0x03030303, AX \
	SHLL $4, AX \
	ORL AX, R12 \
	MOVL R10, R13 \
	ANDL $0x3f3f3f3f, R13 \
	SHRL $4, R11 \
	ANDL $0x0f0f0f0f, R11 \
	SHRL $6, R10 \
	ANDL $0x03030303, R10 \
	SHLL $4, R10 \
	ORL R10, R11 \
	SHLQ $32, R12 \
	ORQ R12, DI \
	SHLQ $32, R11 \
	ORQ R11, R13 \
	VMOVQ DI, X1 \
	VPMOVZXBW X1, X1 \
	VMOVDQU X1, (BX) \
	VMOVQ R13, X2 \
	VPMOVZXBW X2, X2 \
	VPUNPCKLWD X2, X2, X3 \
	VPUNPCKHWD X2, X2, X4 \
	VINSERTI128 $1, X4, Y3, Y3 \
	VPMADDWD 260(R9), Y3, Y7

// K4FLOAT: X15 += (d·dy)·isum − (dmin·dy)·summs for the block at R8, with
// the scaled dots in Y0 and the min sums in Y7.
#define K4FLOAT \
	VPHADDD Y7, Y0, Y1 \
	VEXTRACTI128 $1, Y1, X2 \
	VPADDD X2, X1, X1 \
	VPHADDD X1, X1, X1 \
	VCVTDQ2PS X1, X1 \
	VMOVSHDUP X1, X2 \
	VMOVSS (R9), X3 \
	VPBROADCASTW (R8), X4 \
	VCVTPH2PS X4, X4 \
	VMULSS X3, X4, X4 \
	VMULSS X1, X4, X4 \
	VPBROADCASTW 2(R8), X5 \
	VCVTPH2PS X5, X5 \
	VMULSS X3, X5, X5 \
	VMULSS X2, X5, X5 \
	VSUBSS X5, X4, X4 \
	VADDSS X4, X15, X15

// func q4KRowAVX2(w *byte, y *byte, nb int) float32
TEXT ·q4KRowAVX2(SB), NOSPLIT, $16-28
	MOVQ w+0(FP), R8
	MOVQ y+8(FP), R9
	MOVQ nb+16(FP), CX
	LEAQ sc-16(SP), BX
	VMOVDQU qnib<>(SB), Y14
	VXORPS X15, X15, X15
q4krow:
	K4SCALES
	LEAQ 16(R8), SI
	LEAQ 4(R9), DX
	VPXOR Y0, Y0, Y0
	Q4KSTEP(0, 0, 32, 0, 2)
	Q4KSTEP(32, 64, 96, 4, 6)
	Q4KSTEP(64, 128, 160, 8, 10)
	Q4KSTEP(96, 192, 224, 12, 14)
	K4FLOAT
	ADDQ $144, R8
	ADDQ $292, R9
	DECQ CX
	JNZ q4krow
	VMOVSS X15, ret+24(FP)
	VZEROUPPER
	RET

// func q5KRowAVX2(w *byte, y *byte, nb int) float32
TEXT ·q5KRowAVX2(SB), NOSPLIT, $16-28
	MOVQ w+0(FP), R8
	MOVQ y+8(FP), R9
	MOVQ nb+16(FP), CX
	LEAQ sc-16(SP), BX
	VMOVDQU qnib<>(SB), Y14
	VMOVDQU kone<>(SB), Y12
	VXORPS X15, X15, X15
q5krow:
	K4SCALES
	VMOVDQU 16(R8), Y5
	LEAQ 48(R8), SI
	LEAQ 4(R9), DX
	VPXOR Y0, Y0, Y0
	Q5KSTEP(0, 0, 32, 0, 2, 0, 1)
	Q5KSTEP(32, 64, 96, 4, 6, 2, 3)
	Q5KSTEP(64, 128, 160, 8, 10, 4, 5)
	Q5KSTEP(96, 192, 224, 12, 14, 6, 7)
	K4FLOAT
	ADDQ $176, R8
	ADDQ $292, R9
	DECQ CX
	JNZ q5krow
	VMOVSS X15, ret+24(FP)
	VZEROUPPER
	RET

// func q6KRowAVX2(w *byte, y *byte, nb int) float32
TEXT ·q6KRowAVX2(SB), NOSPLIT, $32-28
	MOVQ w+0(FP), R8
	MOVQ y+8(FP), R9
	MOVQ nb+16(FP), CX
	LEAQ sc-32(SP), BX
	VMOVDQU qnib<>(SB), Y14
	VMOVDQU kthree<>(SB), Y13
	VXORPS X15, X15, X15
q6krow:
	VPMOVSXBW 192(R8), Y11
	VMOVDQU Y11, (BX)
	VPMADDWD 260(R9), Y11, Y12
	MOVQ R8, SI
	LEAQ 128(R8), DI
	LEAQ 4(R9), DX
	VPXOR Y0, Y0, Y0
	Q6KHALF(0, 0, 0, 32, 64, 96, 0, 2, 4, 6, 8, 10, 12, 14)
	Q6KHALF(64, 32, 128, 160, 192, 224, 16, 18, 20, 22, 24, 26, 28, 30)
	VPSLLD $5, Y12, Y12
	VPSUBD Y12, Y0, Y0
	HSUMD
	VCVTDQ2PS X0, X0
	VMOVSS (R9), X3
	VPBROADCASTW 208(R8), X4
	VCVTPH2PS X4, X4
	VMULSS X3, X4, X4
	VMULSS X0, X4, X4
	VADDSS X4, X15, X15
	ADDQ $210, R8
	ADDQ $292, R9
	DECQ CX
	JNZ q6krow
	VMOVSS X15, ret+24(FP)
	VZEROUPPER
	RET
