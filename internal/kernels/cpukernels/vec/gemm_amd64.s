//go:build amd64 && !purego

#include "textflag.h"

// One k step of the 6×16 micro-kernel: the 16 packed b values at BOFF(BX)
// times the six a values at AOFF in rows AX, AX+lda, AX+2lda, R9, R9+lda,
// R9+2lda (R8 = lda in bytes), into accumulators Y0..Y11 (two per row).
#define STEP(BOFF0, BOFF1, AOFF) \
	VMOVUPS BOFF0(BX), Y12 \
	VMOVUPS BOFF1(BX), Y13 \
	VBROADCASTSS AOFF(AX), Y14 \
	VFMADD231PS Y12, Y14, Y0 \
	VFMADD231PS Y13, Y14, Y1 \
	VBROADCASTSS AOFF(AX)(R8*1), Y15 \
	VFMADD231PS Y12, Y15, Y2 \
	VFMADD231PS Y13, Y15, Y3 \
	VBROADCASTSS AOFF(AX)(R8*2), Y14 \
	VFMADD231PS Y12, Y14, Y4 \
	VFMADD231PS Y13, Y14, Y5 \
	VBROADCASTSS AOFF(R9), Y15 \
	VFMADD231PS Y12, Y15, Y6 \
	VFMADD231PS Y13, Y15, Y7 \
	VBROADCASTSS AOFF(R9)(R8*1), Y14 \
	VFMADD231PS Y12, Y14, Y8 \
	VFMADD231PS Y13, Y14, Y9 \
	VBROADCASTSS AOFF(R9)(R8*2), Y15 \
	VFMADD231PS Y12, Y15, Y10 \
	VFMADD231PS Y13, Y15, Y11

// Store (or add into) one row of the 6×16 tile at ADDR.
#define STOREROW(ADDR0, ADDR1, R0, R1) \
	VMOVUPS R0, ADDR0 \
	VMOVUPS R1, ADDR1

#define ADDROW(ADDR0, ADDR1, R0, R1) \
	VADDPS ADDR0, R0, R0 \
	VADDPS ADDR1, R1, R1 \
	VMOVUPS R0, ADDR0 \
	VMOVUPS R1, ADDR1

// func kernel6x16(k int, a *float32, lda int, b *float32, c *float32, ldc int, acc bool)
// c[r*ldc+j] (+)= sum_p a[r*lda+p] * b[p*16+j] for r < 6, j < 16, p < k:
// six rows of a (K-contiguous, stride lda) times one packed 16-wide panel
// of b. With acc the tile is added to c, else it overwrites it.
TEXT ·kernel6x16(SB), NOSPLIT, $0-49
	MOVQ k+0(FP), CX
	MOVQ a+8(FP), AX
	MOVQ lda+16(FP), R8
	SHLQ $2, R8
	LEAQ (AX)(R8*2), R9
	ADDQ R8, R9
	MOVQ b+24(FP), BX
	// Fetch the c tile now: it is read (acc) and written after the k loop,
	// and would otherwise miss in cache once per row.
	MOVQ c+32(FP), DI
	MOVQ ldc+40(FP), R10
	SHLQ $2, R10
	LEAQ (DI)(R10*2), R11
	ADDQ R10, R11
	PREFETCHT0 (DI)
	PREFETCHT0 63(DI)
	PREFETCHT0 (DI)(R10*1)
	PREFETCHT0 63(DI)(R10*1)
	PREFETCHT0 (DI)(R10*2)
	PREFETCHT0 63(DI)(R10*2)
	PREFETCHT0 (R11)
	PREFETCHT0 63(R11)
	PREFETCHT0 (R11)(R10*1)
	PREFETCHT0 63(R11)(R10*1)
	PREFETCHT0 (R11)(R10*2)
	PREFETCHT0 63(R11)(R10*2)
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9
	VXORPS Y10, Y10, Y10
	VXORPS Y11, Y11, Y11
kloop4:
	CMPQ CX, $4
	JL   kloop1
	STEP(0, 32, 0)
	STEP(64, 96, 4)
	STEP(128, 160, 8)
	STEP(192, 224, 12)
	ADDQ $256, BX
	ADDQ $16, AX
	ADDQ $16, R9
	SUBQ $4, CX
	JMP  kloop4
kloop1:
	TESTQ CX, CX
	JZ    kstore
	STEP(0, 32, 0)
	ADDQ $64, BX
	ADDQ $4, AX
	ADDQ $4, R9
	DECQ CX
	JMP  kloop1
kstore:
	MOVBLZX acc+48(FP), DX
	TESTQ DX, DX
	JNZ  kadd
	STOREROW((DI), 32(DI), Y0, Y1)
	STOREROW((DI)(R10*1), 32(DI)(R10*1), Y2, Y3)
	STOREROW((DI)(R10*2), 32(DI)(R10*2), Y4, Y5)
	STOREROW((R11), 32(R11), Y6, Y7)
	STOREROW((R11)(R10*1), 32(R11)(R10*1), Y8, Y9)
	STOREROW((R11)(R10*2), 32(R11)(R10*2), Y10, Y11)
	VZEROUPPER
	RET
kadd:
	ADDROW((DI), 32(DI), Y0, Y1)
	ADDROW((DI)(R10*1), 32(DI)(R10*1), Y2, Y3)
	ADDROW((DI)(R10*2), 32(DI)(R10*2), Y4, Y5)
	ADDROW((R11), 32(R11), Y6, Y7)
	ADDROW((R11)(R10*1), 32(R11)(R10*1), Y8, Y9)
	ADDROW((R11)(R10*2), 32(R11)(R10*2), Y10, Y11)
	VZEROUPPER
	RET

// Transpose the 8×8 block in Y0..Y7 (rows) into Y8..Y15 (columns), using
// Y0..Y7 as scratch.
#define TRANSPOSE8 \
	VUNPCKLPS Y1, Y0, Y8 \
	VUNPCKHPS Y1, Y0, Y9 \
	VUNPCKLPS Y3, Y2, Y10 \
	VUNPCKHPS Y3, Y2, Y11 \
	VUNPCKLPS Y5, Y4, Y12 \
	VUNPCKHPS Y5, Y4, Y13 \
	VUNPCKLPS Y7, Y6, Y14 \
	VUNPCKHPS Y7, Y6, Y15 \
	VSHUFPS $0x44, Y10, Y8, Y0 \
	VSHUFPS $0xEE, Y10, Y8, Y1 \
	VSHUFPS $0x44, Y11, Y9, Y2 \
	VSHUFPS $0xEE, Y11, Y9, Y3 \
	VSHUFPS $0x44, Y14, Y12, Y4 \
	VSHUFPS $0xEE, Y14, Y12, Y5 \
	VSHUFPS $0x44, Y15, Y13, Y6 \
	VSHUFPS $0xEE, Y15, Y13, Y7 \
	VPERM2F128 $0x20, Y4, Y0, Y8 \
	VPERM2F128 $0x20, Y5, Y1, Y9 \
	VPERM2F128 $0x20, Y6, Y2, Y10 \
	VPERM2F128 $0x20, Y7, Y3, Y11 \
	VPERM2F128 $0x31, Y4, Y0, Y12 \
	VPERM2F128 $0x31, Y5, Y1, Y13 \
	VPERM2F128 $0x31, Y6, Y2, Y14 \
	VPERM2F128 $0x31, Y7, Y3, Y15

// func packB8(k int, b *float32, ldb int, dst *float32)
// dst[p*16+r] = b[r*ldb+p] for r < 8, p < k (k a multiple of 8): eight
// rows of b into one half of a 16-wide packed panel.
TEXT ·packB8(SB), NOSPLIT, $0-32
	MOVQ k+0(FP), CX
	MOVQ b+8(FP), SI
	MOVQ ldb+16(FP), R8
	SHLQ $2, R8
	LEAQ (R8)(R8*2), R9
	LEAQ (SI)(R8*4), R11
	MOVQ dst+24(FP), DX
ploop:
	CMPQ CX, $8
	JL   pdone
	VMOVUPS (SI), Y0
	VMOVUPS (SI)(R8*1), Y1
	VMOVUPS (SI)(R8*2), Y2
	VMOVUPS (SI)(R9*1), Y3
	VMOVUPS (R11), Y4
	VMOVUPS (R11)(R8*1), Y5
	VMOVUPS (R11)(R8*2), Y6
	VMOVUPS (R11)(R9*1), Y7
	TRANSPOSE8
	VMOVUPS Y8, (DX)
	VMOVUPS Y9, 64(DX)
	VMOVUPS Y10, 128(DX)
	VMOVUPS Y11, 192(DX)
	VMOVUPS Y12, 256(DX)
	VMOVUPS Y13, 320(DX)
	VMOVUPS Y14, 384(DX)
	VMOVUPS Y15, 448(DX)
	ADDQ $32, SI
	ADDQ $32, R11
	ADDQ $512, DX
	SUBQ $8, CX
	JMP  ploop
pdone:
	VZEROUPPER
	RET

// func fmaLoop(n int)
// n iterations of 12 independent 8-wide FMAs on registers only: 192 flops
// per iteration, the CPU's float32 FMA peak when nothing else limits it.
TEXT ·fmaLoop(SB), NOSPLIT, $0-8
	MOVQ n+0(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9
	VXORPS Y10, Y10, Y10
	VXORPS Y11, Y11, Y11
	VXORPS Y12, Y12, Y12
	VXORPS Y13, Y13, Y13
floop:
	TESTQ CX, CX
	JZ    fdone
	VFMADD231PS Y12, Y13, Y0
	VFMADD231PS Y12, Y13, Y1
	VFMADD231PS Y12, Y13, Y2
	VFMADD231PS Y12, Y13, Y3
	VFMADD231PS Y12, Y13, Y4
	VFMADD231PS Y12, Y13, Y5
	VFMADD231PS Y12, Y13, Y6
	VFMADD231PS Y12, Y13, Y7
	VFMADD231PS Y12, Y13, Y8
	VFMADD231PS Y12, Y13, Y9
	VFMADD231PS Y12, Y13, Y10
	VFMADD231PS Y12, Y13, Y11
	DECQ CX
	JMP  floop
fdone:
	VZEROUPPER
	RET

// Lane masks for a partial 8-wide load: 8 all-ones words, then 8 zeros.
// Loading 8 words at masktab+32-4r gives a mask of the first r lanes.
DATA masktab<>+0(SB)/8, $0xffffffffffffffff
DATA masktab<>+8(SB)/8, $0xffffffffffffffff
DATA masktab<>+16(SB)/8, $0xffffffffffffffff
DATA masktab<>+24(SB)/8, $0xffffffffffffffff
DATA masktab<>+32(SB)/8, $0
DATA masktab<>+40(SB)/8, $0
DATA masktab<>+48(SB)/8, $0
DATA masktab<>+56(SB)/8, $0
GLOBL masktab<>(SB), RODATA|NOPTR, $64

// One 8-wide k step of dot2x4 from the a rows in Y8, Y9 (b loaded with LD).
#define DOTSTEP(LD) \
	LD((BX), Y14, Y10) \
	VFMADD231PS Y10, Y8, Y0 \
	VFMADD231PS Y10, Y9, Y4 \
	LD((BX)(R9*1), Y14, Y11) \
	VFMADD231PS Y11, Y8, Y1 \
	VFMADD231PS Y11, Y9, Y5 \
	LD((BX)(R9*2), Y14, Y12) \
	VFMADD231PS Y12, Y8, Y2 \
	VFMADD231PS Y12, Y9, Y6 \
	LD((BX)(R10*1), Y14, Y13) \
	VFMADD231PS Y13, Y8, Y3 \
	VFMADD231PS Y13, Y9, Y7

// A plain load that ignores the mask operand, to share DOTSTEP.
#define LOADU(SRC, MASK, DST) VMOVUPS SRC, DST
#define LOADM(SRC, MASK, DST) VMASKMOVPS SRC, MASK, DST

// Reduce the four 8-lane accumulators A0..A3 to four sums in X(A0) and
// store (or, with DX≠0, add) them at ADDR; T is scratch.
#define REDUCE4(A0, A1, A2, A3, XA0, XT, ADDR) \
	VHADDPS A1, A0, A0 \
	VHADDPS A3, A2, A2 \
	VHADDPS A2, A0, A0 \
	VEXTRACTF128 $1, A0, XT \
	VADDPS XT, XA0, XA0 \
	TESTQ DX, DX \
	JZ    2(PC) \
	VADDPS ADDR, XA0, XA0 \
	VMOVUPS XA0, ADDR

// func dot2x4(k int, a *float32, lda int, b *float32, ldb int, c *float32, ldc int, acc bool)
// c[r*ldc+q] (+)= sum_p a[r*lda+p] * b[q*ldb+p] for r < 2, q < 4, p < k: a
// 2×4 tile of dot products along k, for products with few rows in a (no
// packing). With lda = 0 both rows are the same row. The last k%8
// elements are read with masked loads, so nothing past the rows is
// touched. With acc the sums are added to c.
TEXT ·dot2x4(SB), NOSPLIT, $0-57
	MOVQ k+0(FP), CX
	MOVQ a+8(FP), AX
	MOVQ lda+16(FP), R8
	SHLQ $2, R8
	MOVQ b+24(FP), BX
	MOVQ ldb+32(FP), R9
	SHLQ $2, R9
	LEAQ (R9)(R9*2), R10
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
dkloop:
	CMPQ CX, $8
	JL   dktail
	VMOVUPS (AX), Y8
	VMOVUPS (AX)(R8*1), Y9
	DOTSTEP(LOADU)
	ADDQ $32, AX
	ADDQ $32, BX
	SUBQ $8, CX
	JMP  dkloop
dktail:
	TESTQ CX, CX
	JZ    dkdone
	LEAQ masktab<>+32(SB), DX
	SHLQ $2, CX
	SUBQ CX, DX
	VMOVUPS (DX), Y14
	VMASKMOVPS (AX), Y14, Y8
	VMASKMOVPS (AX)(R8*1), Y14, Y9
	DOTSTEP(LOADM)
dkdone:
	MOVQ c+40(FP), DI
	MOVQ ldc+48(FP), R11
	SHLQ $2, R11
	MOVBLZX acc+56(FP), DX
	REDUCE4(Y0, Y1, Y2, Y3, X0, X1, (DI))
	REDUCE4(Y4, Y5, Y6, Y7, X4, X5, (DI)(R11*1))
	VZEROUPPER
	RET

// One 8-wide k step of dot1x8 from the a row in Y8.
#define DOT8STEP(LD) \
	LD((BX), Y14, Y9) \
	VFMADD231PS Y9, Y8, Y0 \
	LD((BX)(R9*1), Y14, Y10) \
	VFMADD231PS Y10, Y8, Y1 \
	LD((BX)(R9*2), Y14, Y11) \
	VFMADD231PS Y11, Y8, Y2 \
	LD((BX)(R10*1), Y14, Y12) \
	VFMADD231PS Y12, Y8, Y3 \
	LD((R12), Y14, Y9) \
	VFMADD231PS Y9, Y8, Y4 \
	LD((R12)(R9*1), Y14, Y10) \
	VFMADD231PS Y10, Y8, Y5 \
	LD((R12)(R9*2), Y14, Y11) \
	VFMADD231PS Y11, Y8, Y6 \
	LD((R12)(R10*1), Y14, Y12) \
	VFMADD231PS Y12, Y8, Y7

// func dot1x8(k int, a *float32, b *float32, ldb int, c *float32, acc bool)
// c[q] (+)= sum_p a[p] * b[q*ldb+p] for q < 8, p < k: one row of a against
// eight rows of b (matrix-vector products); tails as in dot2x4.
TEXT ·dot1x8(SB), NOSPLIT, $0-41
	MOVQ k+0(FP), CX
	MOVQ a+8(FP), AX
	MOVQ b+16(FP), BX
	MOVQ ldb+24(FP), R9
	SHLQ $2, R9
	LEAQ (R9)(R9*2), R10
	LEAQ (BX)(R9*4), R12
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
d8loop:
	CMPQ CX, $8
	JL   d8tail
	VMOVUPS (AX), Y8
	DOT8STEP(LOADU)
	ADDQ $32, AX
	ADDQ $32, BX
	ADDQ $32, R12
	SUBQ $8, CX
	JMP  d8loop
d8tail:
	TESTQ CX, CX
	JZ    d8done
	LEAQ masktab<>+32(SB), DX
	SHLQ $2, CX
	SUBQ CX, DX
	VMOVUPS (DX), Y14
	VMASKMOVPS (AX), Y14, Y8
	DOT8STEP(LOADM)
d8done:
	MOVQ c+32(FP), DI
	MOVBLZX acc+40(FP), DX
	REDUCE4(Y0, Y1, Y2, Y3, X0, X1, (DI))
	REDUCE4(Y4, Y5, Y6, Y7, X4, X5, 16(DI))
	VZEROUPPER
	RET
