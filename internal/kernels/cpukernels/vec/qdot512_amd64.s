//go:build amd64 && !purego

#include "textflag.h"
#include "next4_amd64.h"

// AVX-512 (F, BW, VBMI, VNNI) quantized row dots of q8_0 and q4_0 weight
// rows with a q8_0 activation row (see qdot.go and RATIONALE.md). They
// take two blocks a step, one per 256-bit half of a ZMM register:
//
//   - the 68 (q8_0) or 36 (q4_0) bytes of a block pair are loaded and
//     permuted (VPERMT2B / VPERMB) into the 64 quants, block A in bytes
//     0..31, block B in 32..63, each in element order; q4_0's nibbles are
//     separated by a per-word shift (VPSRLVW) and a mask;
//   - VPDPBUSD multiplies unsigned weight bytes with the signed activation
//     bytes into sixteen 32-bit lanes (lanes 0..7 block A, 8..15 block B).
//     The weights are made unsigned with an offset c (q8_0: w+128 by
//     flipping the sign bit; q4_0: the raw nibble, which is q+8), and the
//     lanes start from -c·(4-byte partial sums of y), computed once per
//     activation pair for all rows, so every block's lanes sum exactly to
//     Σ q_w·q_y (no saturation: |lane| ≤ 4·255·127);
//   - the lanes are converted to float32 and accumulated with FMA times
//     d_w·d_y, both scales picked from the loaded bytes by VPERMW
//     (lanes 0..7 d_A, 8..15 d_B) and widened by VCVTPH2PS.
//
// That is ggml's per-block sum, with the same 8 partial lanes per block;
// only the final order of float additions differs.
//
// An odd last block runs the same step with masks that load one block
// only (masked loads do not fault on the bytes left out, which lie past
// the row); the missing half has zero quants and a zero scale.

// q512idx8: VPERMT2B index of a q8_0 block pair held as 64 bytes at p
// (table 1) and 32 bytes at p+36 (table 2).
DATA q512idx8<>+0(SB)/8, $0x0908070605040302
DATA q512idx8<>+8(SB)/8, $0x11100f0e0d0c0b0a
DATA q512idx8<>+16(SB)/8, $0x1918171615141312
DATA q512idx8<>+24(SB)/8, $0x21201f1e1d1c1b1a
DATA q512idx8<>+32(SB)/8, $0x4746454443424140
DATA q512idx8<>+40(SB)/8, $0x4f4e4d4c4b4a4948
DATA q512idx8<>+48(SB)/8, $0x5756555453525150
DATA q512idx8<>+56(SB)/8, $0x5f5e5d5c5b5a5958
GLOBL q512idx8<>(SB), RODATA|NOPTR, $64

// q512d8: VPERMW index of the two q8_0 scales (words 0 and 17).
DATA q512d8<>+0(SB)/8, $0x0000000000000000
DATA q512d8<>+8(SB)/8, $0x0000000000000000
DATA q512d8<>+16(SB)/8, $0x0011001100110011
DATA q512d8<>+24(SB)/8, $0x0011001100110011
DATA q512d8<>+32(SB)/8, $0
DATA q512d8<>+40(SB)/8, $0
DATA q512d8<>+48(SB)/8, $0
DATA q512d8<>+56(SB)/8, $0
GLOBL q512d8<>(SB), RODATA|NOPTR, $64

// q512idx4: VPERMB index of a q4_0 block pair (36 bytes at p): each
// block's 16 nibble bytes twice.
DATA q512idx4<>+0(SB)/8, $0x0908070605040302
DATA q512idx4<>+8(SB)/8, $0x11100f0e0d0c0b0a
DATA q512idx4<>+16(SB)/8, $0x0908070605040302
DATA q512idx4<>+24(SB)/8, $0x11100f0e0d0c0b0a
DATA q512idx4<>+32(SB)/8, $0x1b1a191817161514
DATA q512idx4<>+40(SB)/8, $0x232221201f1e1d1c
DATA q512idx4<>+48(SB)/8, $0x1b1a191817161514
DATA q512idx4<>+56(SB)/8, $0x232221201f1e1d1c
GLOBL q512idx4<>(SB), RODATA|NOPTR, $64

// q512d4: VPERMW index of the two q4_0 scales (words 0 and 9).
DATA q512d4<>+0(SB)/8, $0x0000000000000000
DATA q512d4<>+8(SB)/8, $0x0000000000000000
DATA q512d4<>+16(SB)/8, $0x0009000900090009
DATA q512d4<>+24(SB)/8, $0x0009000900090009
DATA q512d4<>+32(SB)/8, $0
DATA q512d4<>+40(SB)/8, $0
DATA q512d4<>+48(SB)/8, $0
DATA q512d4<>+56(SB)/8, $0
GLOBL q512d4<>(SB), RODATA|NOPTR, $64

// q512sh4: VPSRLVW counts: the first copy of each block's nibble bytes
// keeps the low nibbles (elements 0..15), the second gets the high ones.
DATA q512sh4<>+0(SB)/8, $0
DATA q512sh4<>+8(SB)/8, $0
DATA q512sh4<>+16(SB)/8, $0x0004000400040004
DATA q512sh4<>+24(SB)/8, $0x0004000400040004
DATA q512sh4<>+32(SB)/8, $0
DATA q512sh4<>+40(SB)/8, $0
DATA q512sh4<>+48(SB)/8, $0x0004000400040004
DATA q512sh4<>+56(SB)/8, $0x0004000400040004
GLOBL q512sh4<>(SB), RODATA|NOPTR, $64

// Registers: DX the activation pair; Z0 its 64 quants, Z2 its scales
// (lanes 0..7 d_A, 8..15 d_B), Z3 the lanes' starting values -c·Σy;
// K2/K3 the masks of a q8_0 pair's two loads (K1 the q4_0 pair's load);
// Z31 q512idx8, Z30 q512d8, Z25 the offset c in every byte.

// YSIDE loads the activation pair at DX into Z0, Z2 and Z3.
#define YSIDE \
	VMOVDQU8.Z (DX), K2, Z0 \
	VMOVDQU8.Z 36(DX), K3, Z1 \
	VPERMW Z0, Z30, Z2 \
	VCVTPH2PS Y2, Z2 \
	VPERMT2B Z1, Z31, Z0 \
	VPXORD Z1, Z1, Z1 \
	VPDPBUSD Z0, Z25, Z1 \
	VPXORD Z3, Z3, Z3 \
	VPSUBD Z1, Z3, Z3

// Q8ROW512: acc += the q8_0 pair at ptr times the activation pair
// (temporaries w, s, a).
#define Q8ROW512(ptr, w, s, ys, a, acc) \
	VMOVDQU8.Z (ptr), K2, w \
	VMOVDQU8.Z 36(ptr), K3, a \
	VPERMW w, Z30, s \
	VPERMT2B a, Z31, w \
	VCVTPH2PS ys, s \
	VMULPS Z2, s, s \
	VPXORD Z25, w, w \
	VMOVDQA64 Z3, a \
	VPDPBUSD Z0, w, a \
	VCVTDQ2PS a, a \
	VFMADD231PS s, a, acc

// Q4ROW512: as Q8ROW512 for the q4_0 pair at ptr (Z29 q512idx4, Z28
// q512d4, Z27 q512sh4, Z26 0x0f in every byte).
#define Q4ROW512(ptr, w, s, ys, a, acc) \
	VMOVDQU8.Z (ptr), K1, w \
	VPERMW w, Z28, s \
	VPERMB w, Z29, w \
	VCVTPH2PS ys, s \
	VPSRLVW Z27, w, w \
	VMULPS Z2, s, s \
	VPANDD Z26, w, w \
	VMOVDQA64 Z3, a \
	VPDPBUSD Z0, w, a \
	VCVTDQ2PS a, a \
	VFMADD231PS s, a, acc

// HSUM512 stores the sum of acc's 16 lanes at off(BX) (X1, X2 scratch).
#define HSUM512(acc, yacc, off) \
	VEXTRACTF64X4 $1, acc, Y1 \
	VADDPS yacc, Y1, Y1 \
	VEXTRACTF128 $1, Y1, X2 \
	VADDPS X2, X1, X1 \
	VHADDPS X1, X1, X1 \
	VHADDPS X1, X1, X1 \
	VMOVSS X1, off(BX)

// QSETUP loads the constants shared by both weight types and the masks of
// a full pair; CX gets the number of pairs, R11 the number of blocks.
#define QSETUP \
	MOVQ nb+24(FP), R11 \
	MOVQ R11, CX \
	SHRQ $1, CX \
	VMOVDQU64 q512idx8<>(SB), Z31 \
	VMOVDQU64 q512d8<>(SB), Z30 \
	MOVQ $-1, AX \
	KMOVQ AX, K2 \
	MOVL $0xffffffff, AX \
	KMOVD AX, K3 \
	MOVQ $0xfffffffff, AX \
	KMOVQ AX, K1

// QTAILMASKS sets the masks of a lone last block.
#define QTAILMASKS \
	MOVQ $0x3ffffffff, AX \
	KMOVQ AX, K2 \
	KXORD K3, K3, K3 \
	MOVQ $0x3ffff, AX \
	KMOVQ AX, K1


#define Q8STEP4 \
	YSIDE \
	Q8ROW512(SI, Z12, Z13, Y13, Z14, Z8) \
	Q8ROW512(R8, Z15, Z16, Y16, Z17, Z9) \
	Q8ROW512(R9, Z18, Z19, Y19, Z20, Z10) \
	Q8ROW512(R10, Z21, Z22, Y22, Z23, Z11)

#define Q4STEP4 \
	YSIDE \
	Q4ROW512(SI, Z12, Z13, Y13, Z14, Z8) \
	Q4ROW512(R8, Z15, Z16, Y16, Z17, Z9) \
	Q4ROW512(R9, Z18, Z19, Y19, Z20, Z10) \
	Q4ROW512(R10, Z21, Z22, Y22, Z23, Z11)

#define ROWS4SETUP \
	MOVQ w+0(FP), SI \
	MOVQ stride+8(FP), DI \
	MOVQ y+16(FP), DX \
	MOVQ dst+32(FP), BX \
	LEAQ (SI)(DI*1), R8 \
	LEAQ (R8)(DI*1), R9 \
	LEAQ (R9)(DI*1), R10 \
	QSETUP \
	VPXORD Z8, Z8, Z8 \
	VPXORD Z9, Z9, Z9 \
	VPXORD Z10, Z10, Z10 \
	VPXORD Z11, Z11, Z11

#define ROWS4STORE \
	HSUM512(Z8, Y8, 0) \
	HSUM512(Z9, Y9, 4) \
	HSUM512(Z10, Y10, 8) \
	HSUM512(Z11, Y11, 12) \
	VZEROUPPER \
	RET

// func dotQ8x4AVX512(w *byte, stride int, y *byte, nb int, dst *float32)
TEXT ·dotQ8x4AVX512(SB), NOSPLIT, $0-40
	ROWS4SETUP
	MOVL $0x80808080, AX
	VPBROADCASTD AX, Z25
	TESTQ CX, CX
	JZ q8x4tail
	NEXT4SETUP
q8x4loop:
	NEXT4PF
	Q8STEP4
	ADDQ $68, SI
	ADDQ $68, R8
	ADDQ $68, R9
	ADDQ $68, R10
	ADDQ $68, R12
	ADDQ $68, R13
	ADDQ $68, DX
	DECQ CX
	JNZ q8x4loop
q8x4tail:
	TESTQ $1, R11
	JZ q8x4done
	QTAILMASKS
	Q8STEP4
q8x4done:
	ROWS4STORE

// func dotQ4x4AVX512(w *byte, stride int, y *byte, nb int, dst *float32)
TEXT ·dotQ4x4AVX512(SB), NOSPLIT, $0-40
	ROWS4SETUP
	MOVL $0x08080808, AX
	VPBROADCASTD AX, Z25
	MOVL $0x0f0f0f0f, AX
	VPBROADCASTD AX, Z26
	VMOVDQU64 q512sh4<>(SB), Z27
	VMOVDQU64 q512d4<>(SB), Z28
	VMOVDQU64 q512idx4<>(SB), Z29
	TESTQ CX, CX
	JZ q4x4tail
	NEXT4SETUP
q4x4loop:
	NEXT4PF
	Q4STEP4
	ADDQ $36, SI
	ADDQ $36, R8
	ADDQ $36, R9
	ADDQ $36, R10
	ADDQ $36, R12
	ADDQ $36, R13
	ADDQ $68, DX
	DECQ CX
	JNZ q4x4loop
q4x4tail:
	TESTQ $1, R11
	JZ q4x4done
	QTAILMASKS
	Q4STEP4
q4x4done:
	ROWS4STORE

#define ROWS1SETUP \
	MOVQ w+0(FP), SI \
	MOVQ y+16(FP), DX \
	MOVQ dst+32(FP), BX \
	QSETUP \
	VPXORD Z8, Z8, Z8

// func dotQ8x1AVX512(w *byte, stride int, y *byte, nb int, dst *float32)
TEXT ·dotQ8x1AVX512(SB), NOSPLIT, $0-40
	ROWS1SETUP
	MOVL $0x80808080, AX
	VPBROADCASTD AX, Z25
	TESTQ CX, CX
	JZ q8x1tail
q8x1loop:
	YSIDE
	Q8ROW512(SI, Z12, Z13, Y13, Z14, Z8)
	ADDQ $68, SI
	ADDQ $68, DX
	DECQ CX
	JNZ q8x1loop
q8x1tail:
	TESTQ $1, R11
	JZ q8x1done
	QTAILMASKS
	YSIDE
	Q8ROW512(SI, Z12, Z13, Y13, Z14, Z8)
q8x1done:
	HSUM512(Z8, Y8, 0)
	VZEROUPPER
	RET

// func dotQ4x1AVX512(w *byte, stride int, y *byte, nb int, dst *float32)
TEXT ·dotQ4x1AVX512(SB), NOSPLIT, $0-40
	ROWS1SETUP
	MOVL $0x08080808, AX
	VPBROADCASTD AX, Z25
	MOVL $0x0f0f0f0f, AX
	VPBROADCASTD AX, Z26
	VMOVDQU64 q512sh4<>(SB), Z27
	VMOVDQU64 q512d4<>(SB), Z28
	VMOVDQU64 q512idx4<>(SB), Z29
	TESTQ CX, CX
	JZ q4x1tail
q4x1loop:
	YSIDE
	Q4ROW512(SI, Z12, Z13, Y13, Z14, Z8)
	ADDQ $36, SI
	ADDQ $68, DX
	DECQ CX
	JNZ q4x1loop
q4x1tail:
	TESTQ $1, R11
	JZ q4x1done
	QTAILMASKS
	YSIDE
	Q4ROW512(SI, Z12, Z13, Y13, Z14, Z8)
q4x1done:
	HSUM512(Z8, Y8, 0)
	VZEROUPPER
	RET

// q5_0 (22-byte blocks: scale, 32 fifth bits qh, 16 nibble bytes), a pair
// in 44 bytes. The nibbles are unpacked as q4_0's; the fifth bits become a
// byte mask (VPERMB spreads each qh byte over its 8 elements, VPTESTMB
// picks bit j%8) under which 16 is added, giving q+16 in [0, 31].

// q512idx5: VPERMB index of the pair's nibble bytes (6..21, 28..43).
DATA q512idx5<>+0(SB)/8, $0x0d0c0b0a09080706
DATA q512idx5<>+8(SB)/8, $0x1514131211100f0e
DATA q512idx5<>+16(SB)/8, $0x0d0c0b0a09080706
DATA q512idx5<>+24(SB)/8, $0x1514131211100f0e
DATA q512idx5<>+32(SB)/8, $0x232221201f1e1d1c
DATA q512idx5<>+40(SB)/8, $0x2b2a292827262524
DATA q512idx5<>+48(SB)/8, $0x232221201f1e1d1c
DATA q512idx5<>+56(SB)/8, $0x2b2a292827262524
GLOBL q512idx5<>(SB), RODATA|NOPTR, $64

// q512qh5: VPERMB index giving element j the qh byte that holds its bit.
DATA q512qh5<>+0(SB)/8, $0x0202020202020202
DATA q512qh5<>+8(SB)/8, $0x0303030303030303
DATA q512qh5<>+16(SB)/8, $0x0404040404040404
DATA q512qh5<>+24(SB)/8, $0x0505050505050505
DATA q512qh5<>+32(SB)/8, $0x1818181818181818
DATA q512qh5<>+40(SB)/8, $0x1919191919191919
DATA q512qh5<>+48(SB)/8, $0x1a1a1a1a1a1a1a1a
DATA q512qh5<>+56(SB)/8, $0x1b1b1b1b1b1b1b1b
GLOBL q512qh5<>(SB), RODATA|NOPTR, $64

// q512bits: byte j is 1<<(j%8).
DATA q512bits<>+0(SB)/8, $0x8040201008040201
DATA q512bits<>+8(SB)/8, $0x8040201008040201
DATA q512bits<>+16(SB)/8, $0x8040201008040201
DATA q512bits<>+24(SB)/8, $0x8040201008040201
DATA q512bits<>+32(SB)/8, $0x8040201008040201
DATA q512bits<>+40(SB)/8, $0x8040201008040201
DATA q512bits<>+48(SB)/8, $0x8040201008040201
DATA q512bits<>+56(SB)/8, $0x8040201008040201
GLOBL q512bits<>(SB), RODATA|NOPTR, $64

// q512d5: VPERMW index of the two q5_0 scales (words 0 and 11).
DATA q512d5<>+0(SB)/8, $0
DATA q512d5<>+8(SB)/8, $0
DATA q512d5<>+16(SB)/8, $0x000b000b000b000b
DATA q512d5<>+24(SB)/8, $0x000b000b000b000b
DATA q512d5<>+32(SB)/8, $0
DATA q512d5<>+40(SB)/8, $0
DATA q512d5<>+48(SB)/8, $0
DATA q512d5<>+56(SB)/8, $0
GLOBL q512d5<>(SB), RODATA|NOPTR, $64

// Q5ROW512: as Q4ROW512 for the q5_0 pair at ptr (Z29 q512idx5, Z28
// q512d5, Z5 q512qh5, Z4 q512bits, Z25 0x10 in every byte; K4 scratch).
#define Q5ROW512(ptr, w, s, ys, a, acc) \
	VMOVDQU8.Z (ptr), K1, w \
	VPERMW w, Z28, s \
	VPERMB w, Z5, a \
	VPERMB w, Z29, w \
	VPTESTMB Z4, a, K4 \
	VCVTPH2PS ys, s \
	VPSRLVW Z27, w, w \
	VMULPS Z2, s, s \
	VPANDD Z26, w, w \
	VPADDB Z25, w, K4, w \
	VMOVDQA64 Z3, a \
	VPDPBUSD Z0, w, a \
	VCVTDQ2PS a, a \
	VFMADD231PS s, a, acc

#define Q5CONST \
	MOVL $0x10101010, AX \
	VPBROADCASTD AX, Z25 \
	MOVL $0x0f0f0f0f, AX \
	VPBROADCASTD AX, Z26 \
	VMOVDQU64 q512sh4<>(SB), Z27 \
	VMOVDQU64 q512d5<>(SB), Z28 \
	VMOVDQU64 q512idx5<>(SB), Z29 \
	VMOVDQU64 q512qh5<>(SB), Z5 \
	VMOVDQU64 q512bits<>(SB), Z4 \
	MOVQ $0xfffffffffff, AX \
	KMOVQ AX, K1

#define Q5TAILMASKS \
	QTAILMASKS \
	MOVQ $0x3fffff, AX \
	KMOVQ AX, K1

// func dotQ5x4AVX512(w *byte, stride int, y *byte, nb int, dst *float32)
TEXT ·dotQ5x4AVX512(SB), NOSPLIT, $0-40
	ROWS4SETUP
	Q5CONST
	TESTQ CX, CX
	JZ q5x4tail
	NEXT4SETUP
q5x4loop:
	NEXT4PF
	YSIDE
	Q5ROW512(SI, Z12, Z13, Y13, Z14, Z8)
	Q5ROW512(R8, Z15, Z16, Y16, Z17, Z9)
	Q5ROW512(R9, Z18, Z19, Y19, Z20, Z10)
	Q5ROW512(R10, Z21, Z22, Y22, Z23, Z11)
	ADDQ $44, SI
	ADDQ $44, R8
	ADDQ $44, R9
	ADDQ $44, R10
	ADDQ $44, R12
	ADDQ $44, R13
	ADDQ $68, DX
	DECQ CX
	JNZ q5x4loop
q5x4tail:
	TESTQ $1, R11
	JZ q5x4done
	Q5TAILMASKS
	YSIDE
	Q5ROW512(SI, Z12, Z13, Y13, Z14, Z8)
	Q5ROW512(R8, Z15, Z16, Y16, Z17, Z9)
	Q5ROW512(R9, Z18, Z19, Y19, Z20, Z10)
	Q5ROW512(R10, Z21, Z22, Y22, Z23, Z11)
q5x4done:
	ROWS4STORE

// func dotQ5x1AVX512(w *byte, stride int, y *byte, nb int, dst *float32)
TEXT ·dotQ5x1AVX512(SB), NOSPLIT, $0-40
	ROWS1SETUP
	Q5CONST
	TESTQ CX, CX
	JZ q5x1tail
q5x1loop:
	YSIDE
	Q5ROW512(SI, Z12, Z13, Y13, Z14, Z8)
	ADDQ $44, SI
	ADDQ $68, DX
	DECQ CX
	JNZ q5x1loop
q5x1tail:
	TESTQ $1, R11
	JZ q5x1done
	Q5TAILMASKS
	YSIDE
	Q5ROW512(SI, Z12, Z13, Y13, Z14, Z8)
q5x1done:
	HSUM512(Z8, Y8, 0)
	VZEROUPPER
	RET

// q4_1 and q5_1 weights with a q8_1 activation row (36-byte blocks: d,
// s = d·Σq rounded to half, 32 quants), ggml's vec_dot_q4_1_q8_1 and
// vec_dot_q5_1_q8_1: Σ d_w·d_y·Σ q_w·q_y + m_w·s_y. The weight quants are
// unsigned already (no offset); the m·s term is one FMA per pair against
// Z3 = [s_A, 0, ..., s_B, 0, ...] (lanes 0 and 8), so it is counted once
// per block.

// q512idx81: VPERMT2B index of a q8_1 pair (64 bytes at p, 32 at p+40).
DATA q512idx81<>+0(SB)/8, $0x0b0a090807060504
DATA q512idx81<>+8(SB)/8, $0x131211100f0e0d0c
DATA q512idx81<>+16(SB)/8, $0x1b1a191817161514
DATA q512idx81<>+24(SB)/8, $0x232221201f1e1d1c
DATA q512idx81<>+32(SB)/8, $0x4746454443424140
DATA q512idx81<>+40(SB)/8, $0x4f4e4d4c4b4a4948
DATA q512idx81<>+48(SB)/8, $0x5756555453525150
DATA q512idx81<>+56(SB)/8, $0x5f5e5d5c5b5a5958
GLOBL q512idx81<>(SB), RODATA|NOPTR, $64

// q512d81: VPERMW index of the two q8_1 scales d (words 0 and 18).
DATA q512d81<>+0(SB)/8, $0x0000000000000000
DATA q512d81<>+8(SB)/8, $0x0000000000000000
DATA q512d81<>+16(SB)/8, $0x0012001200120012
DATA q512d81<>+24(SB)/8, $0x0012001200120012
DATA q512d81<>+32(SB)/8, $0x0000000000000000
DATA q512d81<>+40(SB)/8, $0x0000000000000000
DATA q512d81<>+48(SB)/8, $0x0000000000000000
DATA q512d81<>+56(SB)/8, $0x0000000000000000
GLOBL q512d81<>(SB), RODATA|NOPTR, $64

// q512s81: VPERMW index of the two q8_1 sums s (words 1 and 19), read
// under a mask that keeps words 0 and 8.
DATA q512s81<>+0(SB)/8, $0x0001000100010001
DATA q512s81<>+8(SB)/8, $0x0001000100010001
DATA q512s81<>+16(SB)/8, $0x0013001300130013
DATA q512s81<>+24(SB)/8, $0x0013001300130013
DATA q512s81<>+32(SB)/8, $0x0000000000000000
DATA q512s81<>+40(SB)/8, $0x0000000000000000
DATA q512s81<>+48(SB)/8, $0x0000000000000000
DATA q512s81<>+56(SB)/8, $0x0000000000000000
GLOBL q512s81<>(SB), RODATA|NOPTR, $64

// q512idx41: VPERMB index of a q4_1 pair's nibble bytes (4..19, 24..39).
DATA q512idx41<>+0(SB)/8, $0x0b0a090807060504
DATA q512idx41<>+8(SB)/8, $0x131211100f0e0d0c
DATA q512idx41<>+16(SB)/8, $0x0b0a090807060504
DATA q512idx41<>+24(SB)/8, $0x131211100f0e0d0c
DATA q512idx41<>+32(SB)/8, $0x1f1e1d1c1b1a1918
DATA q512idx41<>+40(SB)/8, $0x2726252423222120
DATA q512idx41<>+48(SB)/8, $0x1f1e1d1c1b1a1918
DATA q512idx41<>+56(SB)/8, $0x2726252423222120
GLOBL q512idx41<>(SB), RODATA|NOPTR, $64

// q512d41: VPERMW index of the q4_1 scales d (words 0 and 10).
DATA q512d41<>+0(SB)/8, $0x0000000000000000
DATA q512d41<>+8(SB)/8, $0x0000000000000000
DATA q512d41<>+16(SB)/8, $0x000a000a000a000a
DATA q512d41<>+24(SB)/8, $0x000a000a000a000a
DATA q512d41<>+32(SB)/8, $0x0000000000000000
DATA q512d41<>+40(SB)/8, $0x0000000000000000
DATA q512d41<>+48(SB)/8, $0x0000000000000000
DATA q512d41<>+56(SB)/8, $0x0000000000000000
GLOBL q512d41<>(SB), RODATA|NOPTR, $64

// q512m41: VPERMW index of the q4_1 minimums m (words 1 and 11).
DATA q512m41<>+0(SB)/8, $0x0001000100010001
DATA q512m41<>+8(SB)/8, $0x0001000100010001
DATA q512m41<>+16(SB)/8, $0x000b000b000b000b
DATA q512m41<>+24(SB)/8, $0x000b000b000b000b
DATA q512m41<>+32(SB)/8, $0x0000000000000000
DATA q512m41<>+40(SB)/8, $0x0000000000000000
DATA q512m41<>+48(SB)/8, $0x0000000000000000
DATA q512m41<>+56(SB)/8, $0x0000000000000000
GLOBL q512m41<>(SB), RODATA|NOPTR, $64

// q512idx51: VPERMB index of a q5_1 pair's nibble bytes (8..23, 32..47).
DATA q512idx51<>+0(SB)/8, $0x0f0e0d0c0b0a0908
DATA q512idx51<>+8(SB)/8, $0x1716151413121110
DATA q512idx51<>+16(SB)/8, $0x0f0e0d0c0b0a0908
DATA q512idx51<>+24(SB)/8, $0x1716151413121110
DATA q512idx51<>+32(SB)/8, $0x2726252423222120
DATA q512idx51<>+40(SB)/8, $0x2f2e2d2c2b2a2928
DATA q512idx51<>+48(SB)/8, $0x2726252423222120
DATA q512idx51<>+56(SB)/8, $0x2f2e2d2c2b2a2928
GLOBL q512idx51<>(SB), RODATA|NOPTR, $64

// q512qh51: as q512qh5 for q5_1 (qh at 4..7 and 28..31).
DATA q512qh51<>+0(SB)/8, $0x0404040404040404
DATA q512qh51<>+8(SB)/8, $0x0505050505050505
DATA q512qh51<>+16(SB)/8, $0x0606060606060606
DATA q512qh51<>+24(SB)/8, $0x0707070707070707
DATA q512qh51<>+32(SB)/8, $0x1c1c1c1c1c1c1c1c
DATA q512qh51<>+40(SB)/8, $0x1d1d1d1d1d1d1d1d
DATA q512qh51<>+48(SB)/8, $0x1e1e1e1e1e1e1e1e
DATA q512qh51<>+56(SB)/8, $0x1f1f1f1f1f1f1f1f
GLOBL q512qh51<>(SB), RODATA|NOPTR, $64

// q512d51: VPERMW index of the q5_1 scales d (words 0 and 12).
DATA q512d51<>+0(SB)/8, $0x0000000000000000
DATA q512d51<>+8(SB)/8, $0x0000000000000000
DATA q512d51<>+16(SB)/8, $0x000c000c000c000c
DATA q512d51<>+24(SB)/8, $0x000c000c000c000c
DATA q512d51<>+32(SB)/8, $0x0000000000000000
DATA q512d51<>+40(SB)/8, $0x0000000000000000
DATA q512d51<>+48(SB)/8, $0x0000000000000000
DATA q512d51<>+56(SB)/8, $0x0000000000000000
GLOBL q512d51<>(SB), RODATA|NOPTR, $64

// q512m51: VPERMW index of the q5_1 minimums m (words 1 and 13).
DATA q512m51<>+0(SB)/8, $0x0001000100010001
DATA q512m51<>+8(SB)/8, $0x0001000100010001
DATA q512m51<>+16(SB)/8, $0x000d000d000d000d
DATA q512m51<>+24(SB)/8, $0x000d000d000d000d
DATA q512m51<>+32(SB)/8, $0x0000000000000000
DATA q512m51<>+40(SB)/8, $0x0000000000000000
DATA q512m51<>+48(SB)/8, $0x0000000000000000
DATA q512m51<>+56(SB)/8, $0x0000000000000000
GLOBL q512m51<>(SB), RODATA|NOPTR, $64

// Y1SIDE loads the q8_1 activation pair at DX: quants Z0, d Z2 (lanes
// 0..7 d_A, 8..15 d_B), s Z3 (lane 0 s_A, lane 8 s_B, others 0). Z31
// q512idx81, Z30 q512d81, Z24 q512s81, K5 keeps words 0 and 8.
#define Y1SIDE \
	VMOVDQU8.Z (DX), K2, Z0 \
	VMOVDQU8.Z 40(DX), K3, Z1 \
	VPERMW Z0, Z30, Z2 \
	VPERMW.Z Z0, Z24, K5, Z3 \
	VCVTPH2PS Y2, Z2 \
	VCVTPH2PS Y3, Z3 \
	VPERMT2B Z1, Z31, Z0

// Q41ROW512: acc += the q4_1 pair at ptr times the activation pair (Z29
// q512idx41, Z28 q512d41, Z25 q512m41, Z27 q512sh4, Z26 0x0f bytes).
#define Q41ROW512(ptr, w, s, ys, a, ya, acc) \
	VMOVDQU8.Z (ptr), K1, w \
	VPERMW w, Z28, s \
	VPERMW w, Z25, a \
	VPERMB w, Z29, w \
	VCVTPH2PS ys, s \
	VCVTPH2PS ya, a \
	VFMADD231PS Z3, a, acc \
	VPSRLVW Z27, w, w \
	VMULPS Z2, s, s \
	VPANDD Z26, w, w \
	VPXORD a, a, a \
	VPDPBUSD Z0, w, a \
	VCVTDQ2PS a, a \
	VFMADD231PS s, a, acc

// Q51ROW512: as Q41ROW512 for q5_1 (Z29 q512idx51, Z28 q512d51, Z25
// q512m51, Z5 q512qh51, Z4 q512bits, Z6 0x10 bytes; K4 scratch).
#define Q51ROW512(ptr, w, s, ys, a, ya, acc) \
	VMOVDQU8.Z (ptr), K1, w \
	VPERMB w, Z5, a \
	VPERMW w, Z28, s \
	VPTESTMB Z4, a, K4 \
	VPERMW w, Z25, a \
	VPERMB w, Z29, w \
	VCVTPH2PS ys, s \
	VCVTPH2PS ya, a \
	VFMADD231PS Z3, a, acc \
	VPSRLVW Z27, w, w \
	VMULPS Z2, s, s \
	VPANDD Z26, w, w \
	VPADDB Z6, w, K4, w \
	VPXORD a, a, a \
	VPDPBUSD Z0, w, a \
	VCVTDQ2PS a, a \
	VFMADD231PS s, a, acc

// Q1SETUP loads the q8_1 constants and masks (QSETUP's masks, then K2
// 64 bits / K3 32 bits for the pair's two activation loads, K5 the s lanes).
#define Q1SETUP \
	VMOVDQU64 q512idx81<>(SB), Z31 \
	VMOVDQU64 q512d81<>(SB), Z30 \
	VMOVDQU64 q512s81<>(SB), Z24 \
	MOVL $0x0101, AX \
	KMOVD AX, K5 \
	MOVL $0x0f0f0f0f, AX \
	VPBROADCASTD AX, Z26 \
	VMOVDQU64 q512sh4<>(SB), Z27

// Q1TAILMASKS: a lone q8_1 block (36 bytes) and weight block (bytes).
#define Q1TAILMASKS(bytes) \
	MOVQ $0xfffffffff, AX \
	KMOVQ AX, K2 \
	KXORD K3, K3, K3 \
	MOVQ $bytes, AX \
	KMOVQ AX, K1

#define Q41CONST \
	Q1SETUP \
	VMOVDQU64 q512idx41<>(SB), Z29 \
	VMOVDQU64 q512d41<>(SB), Z28 \
	VMOVDQU64 q512m41<>(SB), Z25 \
	MOVQ $0xffffffffff, AX \
	KMOVQ AX, K1

#define Q51CONST \
	Q1SETUP \
	VMOVDQU64 q512idx51<>(SB), Z29 \
	VMOVDQU64 q512d51<>(SB), Z28 \
	VMOVDQU64 q512m51<>(SB), Z25 \
	VMOVDQU64 q512qh51<>(SB), Z5 \
	VMOVDQU64 q512bits<>(SB), Z4 \
	MOVL $0x10101010, AX \
	VPBROADCASTD AX, Z6 \
	MOVQ $0xffffffffffff, AX \
	KMOVQ AX, K1

#define Q41STEP4 \
	Y1SIDE \
	Q41ROW512(SI, Z12, Z13, Y13, Z14, Y14, Z8) \
	Q41ROW512(R8, Z15, Z16, Y16, Z17, Y17, Z9) \
	Q41ROW512(R9, Z18, Z19, Y19, Z20, Y20, Z10) \
	Q41ROW512(R10, Z21, Z22, Y22, Z23, Y23, Z11)

#define Q51STEP4 \
	Y1SIDE \
	Q51ROW512(SI, Z12, Z13, Y13, Z14, Y14, Z8) \
	Q51ROW512(R8, Z15, Z16, Y16, Z17, Y17, Z9) \
	Q51ROW512(R9, Z18, Z19, Y19, Z20, Y20, Z10) \
	Q51ROW512(R10, Z21, Z22, Y22, Z23, Y23, Z11)

// func dotQ41x4AVX512(w *byte, stride int, y *byte, nb int, dst *float32)
TEXT ·dotQ41x4AVX512(SB), NOSPLIT, $0-40
	ROWS4SETUP
	Q41CONST
	TESTQ CX, CX
	JZ q41x4tail
	NEXT4SETUP
q41x4loop:
	NEXT4PF
	Q41STEP4
	ADDQ $40, SI
	ADDQ $40, R8
	ADDQ $40, R9
	ADDQ $40, R10
	ADDQ $40, R12
	ADDQ $40, R13
	ADDQ $72, DX
	DECQ CX
	JNZ q41x4loop
q41x4tail:
	TESTQ $1, R11
	JZ q41x4done
	Q1TAILMASKS(0xfffff)
	Q41STEP4
q41x4done:
	ROWS4STORE

// func dotQ41x1AVX512(w *byte, stride int, y *byte, nb int, dst *float32)
TEXT ·dotQ41x1AVX512(SB), NOSPLIT, $0-40
	ROWS1SETUP
	Q41CONST
	TESTQ CX, CX
	JZ q41x1tail
q41x1loop:
	Y1SIDE
	Q41ROW512(SI, Z12, Z13, Y13, Z14, Y14, Z8)
	ADDQ $40, SI
	ADDQ $72, DX
	DECQ CX
	JNZ q41x1loop
q41x1tail:
	TESTQ $1, R11
	JZ q41x1done
	Q1TAILMASKS(0xfffff)
	Y1SIDE
	Q41ROW512(SI, Z12, Z13, Y13, Z14, Y14, Z8)
q41x1done:
	HSUM512(Z8, Y8, 0)
	VZEROUPPER
	RET

// func dotQ51x4AVX512(w *byte, stride int, y *byte, nb int, dst *float32)
TEXT ·dotQ51x4AVX512(SB), NOSPLIT, $0-40
	ROWS4SETUP
	Q51CONST
	TESTQ CX, CX
	JZ q51x4tail
	NEXT4SETUP
q51x4loop:
	NEXT4PF
	Q51STEP4
	ADDQ $48, SI
	ADDQ $48, R8
	ADDQ $48, R9
	ADDQ $48, R10
	ADDQ $48, R12
	ADDQ $48, R13
	ADDQ $72, DX
	DECQ CX
	JNZ q51x4loop
q51x4tail:
	TESTQ $1, R11
	JZ q51x4done
	Q1TAILMASKS(0xffffff)
	Q51STEP4
q51x4done:
	ROWS4STORE

// func dotQ51x1AVX512(w *byte, stride int, y *byte, nb int, dst *float32)
TEXT ·dotQ51x1AVX512(SB), NOSPLIT, $0-40
	ROWS1SETUP
	Q51CONST
	TESTQ CX, CX
	JZ q51x1tail
q51x1loop:
	Y1SIDE
	Q51ROW512(SI, Z12, Z13, Y13, Z14, Y14, Z8)
	ADDQ $48, SI
	ADDQ $72, DX
	DECQ CX
	JNZ q51x1loop
q51x1tail:
	TESTQ $1, R11
	JZ q51x1done
	Q1TAILMASKS(0xffffff)
	Y1SIDE
	Q51ROW512(SI, Z12, Z13, Y13, Z14, Y14, Z8)
q51x1done:
	HSUM512(Z8, Y8, 0)
	VZEROUPPER
	RET
