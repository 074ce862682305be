//go:build amd64 && !purego

#include "textflag.h"

// One k step of the 6×32 AVX-512 micro-kernel: 16 packed b values at
// BOFF(BX) (panel 0) and BOFF(DX) (panel 1) times the six a values at AOFF
// in rows AX, AX+lda, AX+2lda, R9, R9+lda, R9+2lda (R8 = lda in bytes),
// into accumulators Z0..Z11 (two per row). Each accumulator lane gets the
// same FMA sequence as kernel6x16's, so the two kernels agree bit for bit.
#define STEP512(BOFF, AOFF) \
	VMOVUPS BOFF(BX), Z12 \
	VMOVUPS BOFF(DX), Z13 \
	VBROADCASTSS AOFF(AX), Z14 \
	VFMADD231PS Z12, Z14, Z0 \
	VFMADD231PS Z13, Z14, Z1 \
	VBROADCASTSS AOFF(AX)(R8*1), Z15 \
	VFMADD231PS Z12, Z15, Z2 \
	VFMADD231PS Z13, Z15, Z3 \
	VBROADCASTSS AOFF(AX)(R8*2), Z14 \
	VFMADD231PS Z12, Z14, Z4 \
	VFMADD231PS Z13, Z14, Z5 \
	VBROADCASTSS AOFF(R9), Z15 \
	VFMADD231PS Z12, Z15, Z6 \
	VFMADD231PS Z13, Z15, Z7 \
	VBROADCASTSS AOFF(R9)(R8*1), Z14 \
	VFMADD231PS Z12, Z14, Z8 \
	VFMADD231PS Z13, Z14, Z9 \
	VBROADCASTSS AOFF(R9)(R8*2), Z15 \
	VFMADD231PS Z12, Z15, Z10 \
	VFMADD231PS Z13, Z15, Z11

#define STORE512(ADDR0, ADDR1, R0, R1) \
	VMOVUPS R0, ADDR0 \
	VMOVUPS R1, ADDR1

#define ADD512(ADDR0, ADDR1, R0, R1) \
	VADDPS ADDR0, R0, R0 \
	VADDPS ADDR1, R1, R1 \
	VMOVUPS R0, ADDR0 \
	VMOVUPS R1, ADDR1

// func kernel6x32AVX512(k int, a *float32, lda int, b0, b1 *float32, c *float32, ldc int, acc bool)
// c[r*ldc+j] (+)= sum_p a[r*lda+p] * b[p][j] for r < 6, j < 32, p < k,
// where columns 0-15 come from the packed 16-wide panel b0 and 16-31 from
// the panel b1. With acc the tile is added to c, else it overwrites it.
TEXT ·kernel6x32AVX512(SB), NOSPLIT, $0-57
	MOVQ k+0(FP), CX
	MOVQ a+8(FP), AX
	MOVQ lda+16(FP), R8
	SHLQ $2, R8
	LEAQ (AX)(R8*2), R9
	ADDQ R8, R9
	MOVQ b0+24(FP), BX
	MOVQ b1+32(FP), DX
	MOVQ c+40(FP), DI
	MOVQ ldc+48(FP), R10
	SHLQ $2, R10
	LEAQ (DI)(R10*2), R11
	ADDQ R10, R11
	PREFETCHT0 (DI)
	PREFETCHT0 64(DI)
	PREFETCHT0 (DI)(R10*1)
	PREFETCHT0 64(DI)(R10*1)
	PREFETCHT0 (DI)(R10*2)
	PREFETCHT0 64(DI)(R10*2)
	PREFETCHT0 (R11)
	PREFETCHT0 64(R11)
	PREFETCHT0 (R11)(R10*1)
	PREFETCHT0 64(R11)(R10*1)
	PREFETCHT0 (R11)(R10*2)
	PREFETCHT0 64(R11)(R10*2)
	VXORPS Z0, Z0, Z0
	VXORPS Z1, Z1, Z1
	VXORPS Z2, Z2, Z2
	VXORPS Z3, Z3, Z3
	VXORPS Z4, Z4, Z4
	VXORPS Z5, Z5, Z5
	VXORPS Z6, Z6, Z6
	VXORPS Z7, Z7, Z7
	VXORPS Z8, Z8, Z8
	VXORPS Z9, Z9, Z9
	VXORPS Z10, Z10, Z10
	VXORPS Z11, Z11, Z11
zk4:
	CMPQ CX, $4
	JL   zk1
	STEP512(0, 0)
	STEP512(64, 4)
	STEP512(128, 8)
	STEP512(192, 12)
	ADDQ $256, BX
	ADDQ $256, DX
	ADDQ $16, AX
	ADDQ $16, R9
	SUBQ $4, CX
	JMP  zk4
zk1:
	TESTQ CX, CX
	JZ    zstore
	STEP512(0, 0)
	ADDQ $64, BX
	ADDQ $64, DX
	ADDQ $4, AX
	ADDQ $4, R9
	DECQ CX
	JMP  zk1
zstore:
	MOVBLZX acc+56(FP), SI
	TESTQ SI, SI
	JNZ  zadd
	STORE512((DI), 64(DI), Z0, Z1)
	STORE512((DI)(R10*1), 64(DI)(R10*1), Z2, Z3)
	STORE512((DI)(R10*2), 64(DI)(R10*2), Z4, Z5)
	STORE512((R11), 64(R11), Z6, Z7)
	STORE512((R11)(R10*1), 64(R11)(R10*1), Z8, Z9)
	STORE512((R11)(R10*2), 64(R11)(R10*2), Z10, Z11)
	VZEROUPPER
	RET
zadd:
	ADD512((DI), 64(DI), Z0, Z1)
	ADD512((DI)(R10*1), 64(DI)(R10*1), Z2, Z3)
	ADD512((DI)(R10*2), 64(DI)(R10*2), Z4, Z5)
	ADD512((R11), 64(R11), Z6, Z7)
	ADD512((R11)(R10*1), 64(R11)(R10*1), Z8, Z9)
	ADD512((R11)(R10*2), 64(R11)(R10*2), Z10, Z11)
	VZEROUPPER
	RET
