//go:build amd64 && !purego

#include "textflag.h"

// AVX-512 (BW, VL, VNNI) k-quant dots of one weight row with one or four
// q8_K activation rows (see qdot_k512_amd64.go). Per super-block the
// weights are unpacked once to unsigned bytes in element order, 64 per ZMM
// register; per activation row each register meets 64 q8 bytes in
// VPMADDUBSW (u8·s8 pairs to int16) and VPDPWSSD (int16 pairs times the
// sub-block scale, accumulated in int32). The int32 lanes are summed
// exactly, the min (q4_K) or offset (q6_K) term added from the activation's
// 16-quant sums, and the float math is ggml's, lane per activation row, in
// the order of the Go kernels (qdot_k.go): no FMA, super-blocks in order.

// Q8 constants: eight quadwords, 64 bytes.
#define DATA8(name, a, b, c, d, e, f, g, h) \
	DATA name<>+0(SB)/8, $a \
	DATA name<>+8(SB)/8, $b \
	DATA name<>+16(SB)/8, $c \
	DATA name<>+24(SB)/8, $d \
	DATA name<>+32(SB)/8, $e \
	DATA name<>+40(SB)/8, $f \
	DATA name<>+48(SB)/8, $g \
	DATA name<>+56(SB)/8, $h \
	GLOBL name<>(SB), RODATA|NOPTR, $64

// HALVES: words lo in the low 256 bits, hi in the high 256 bits.
#define HALVES(name, lo, hi) DATA8(name, lo, lo, lo, lo, hi, hi, hi, hi)

#define W4_0 0x0000000000000000
#define W4_1 0x0001000100010001
#define W4_2 0x0002000200020002
#define W4_3 0x0003000300030003
#define W4_4 0x0004000400040004
#define W4_5 0x0005000500050005
#define W4_6 0x0006000600060006
#define W4_7 0x0007000700070007
#define W4_8 0x0008000800080008
#define W4_9 0x0009000900090009
#define W4_10 0x000a000a000a000a
#define W4_11 0x000b000b000b000b
#define W4_12 0x000c000c000c000c
#define W4_13 0x000d000d000d000d
#define W4_14 0x000e000e000e000e
#define W4_15 0x000f000f000f000f

HALVES(kz0f, 0x0f0f0f0f0f0f0f0f, 0x0f0f0f0f0f0f0f0f)
HALVES(kz30, 0x3030303030303030, 0x3030303030303030)
// q4_K: the shift that takes 32 nibble bytes broadcast to both halves to
// elements 0..31 (low nibbles) and 32..63 (high nibbles).
HALVES(kq4sr, W4_0, W4_4)
// q4_K: VPERMW indexes of the scale pair of 64-element chunk k (scales in
// words 0..7, mins in words 8..15), and of the mins, each twice (for the
// pairs of 16-quant sums).
HALVES(kq4s0, W4_0, W4_1)
HALVES(kq4s1, W4_2, W4_3)
HALVES(kq4s2, W4_4, W4_5)
HALVES(kq4s3, W4_6, W4_7)
DATA8(kq4m, 0x0009000900080008, 0x000b000b000a000a, 0x000d000d000c000c, 0x000f000f000e000e, 0, 0, 0, 0)
// q4_K scales: VPSHUFB indexes of the low bits (kq4ia) and the high bits
// (kq4ib) of each scale and min word, the right shift of the low bits
// (kq4sa) and their mask (kq4ma).
#define DATA4(name, a, b, c, d) \
	DATA name<>+0(SB)/8, $a \
	DATA name<>+8(SB)/8, $b \
	DATA name<>+16(SB)/8, $c \
	DATA name<>+24(SB)/8, $d \
	GLOBL name<>(SB), RODATA|NOPTR, $32
DATA4(kq4ia, 0x8003800280018000, 0x800b800a80098008, 0x8007800680058004, 0x800b800a80098008)
DATA4(kq4ib, 0x8080808080808080, 0x8003800280018000, 0x8080808080808080, 0x8007800680058004)
DATA4(kq4sa, 0, 0, 0, 0x0004000400040004)
DATA4(kq4ma, 0x003f003f003f003f, 0x000f000f000f000f, 0x003f003f003f003f, 0x000f000f000f000f)
// q5_K: dword rotations that bring bit 2k (low half) and 2k+1 (high
// half) of each byte to bit 4, and the mask of bit 4.
HALVES(kq5r0, 0x0000000400000004, 0x0000000300000003)
HALVES(kq5r1, 0x0000000200000002, 0x0000000100000001)
HALVES(kq5r2, 0x0000000000000000, 0x0000001f0000001f)
HALVES(kq5r3, 0x0000001e0000001e, 0x0000001d0000001d)
HALVES(kz10, 0x1010101010101010, 0x1010101010101010)
// q2_K and q3_K: the right shifts of the broadcast quant bytes for the
// even chunks (bit pairs 0 and 1) and the odd ones (2 and 3), the mask of a
// bit pair.
HALVES(kq2e, W4_0, W4_2)
HALVES(kq2o, W4_4, W4_6)
HALVES(kz03, 0x0303030303030303, 0x0303030303030303)
// q3_K: dword rotations that bring bit 2k (low half) and 2k+1 (high half)
// of each hmask byte to bit 2, the mask of bit 2; the VPSHUFB indexes,
// shifts and bias of the 6-bit scales (12 bytes loaded from 94(SI)).
HALVES(kq3r0, 0x0000000200000002, 0x0000000100000001)
HALVES(kq3r1, 0x0000000000000000, 0x0000001f0000001f)
HALVES(kq3r2, 0x0000001e0000001e, 0x0000001d0000001d)
HALVES(kq3r3, 0x0000001c0000001c, 0x0000001b0000001b)
HALVES(kz04, 0x0404040404040404, 0x0404040404040404)
DATA4(kq3ia, 0x8005800480038002, 0x8009800880078006, 0x8005800480038002, 0x8009800880078006)
DATA4(kq3sa, 0, 0, W4_4, W4_4)
DATA4(kq3ib, 0x800d800c800b800a, 0x800d800c800b800a, 0x800d800c800b800a, 0x800d800c800b800a)
DATA4(kq3sb, W4_0, W4_2, W4_4, W4_6)
DATA4(kw32, 0x0020002000200020, 0x0020002000200020, 0x0020002000200020, 0x0020002000200020)
// q6_K: the shifts that put bit pairs of the broadcast qh bytes at bits
// 4..5: left by 4 and 2 for the even chunks, right by 0 and 2 for the odd.
HALVES(kq6sl, W4_4, W4_2)
HALVES(kq6sr, W4_0, W4_2)
// q6_K: VPERMW indexes of the four 16-element scales of chunk k.
DATA8(kq6s0, W4_0, W4_0, W4_1, W4_1, W4_2, W4_2, W4_3, W4_3)
DATA8(kq6s1, W4_4, W4_4, W4_5, W4_5, W4_6, W4_6, W4_7, W4_7)
DATA8(kq6s2, W4_8, W4_8, W4_9, W4_9, W4_10, W4_10, W4_11, W4_11)
DATA8(kq6s3, W4_12, W4_12, W4_13, W4_13, W4_14, W4_14, W4_15, W4_15)

// Register use shared by the kernels:
//   SI weights super-block; R8..R11 the activation blocks of rows 0..3;
//   CX super-blocks left; Z0..Z3 unpacked weights; Z4..Z7 the scale
//   words of each chunk; Z8..Z11 int32 accumulators of rows 0..3;
//   Z12..Z15 the min sums (q4_K); Z16, Z17 temporaries; Z18 the scale
//   words; Z19 the min (q4_K) or -32·scale (q6_K) words; Z20..Z23 float
//   temporaries; Z24 the float sums of rows 0..3; Z25..Z31 constants.

// Q4KSCALES unpacks the 12 scale bytes at 4(b) (6-bit scales and mins,
// ggml's layout) into Z4..Z7 (per chunk) and Y19 (each min twice): the
// bytes go to words (scales 0..7, mins 8..15) with VPSHUFB twice, the
// low bits from the first (shifted for mins 4..7), the two high bits of
// scales and mins 4..7 from the second.
#define Q4KSCALES(b) \
	VBROADCASTI32X4 4(b), Y18 \
	VPSHUFB kq4ia<>(SB), Y18, Y16 \
	VPSHUFB kq4ib<>(SB), Y18, Y17 \
	VPSRLVW kq4sa<>(SB), Y16, Y18 \
	VPSRLW $6, Y17, Y17 \
	VPSLLW $4, Y17, Y17 \
	VPTERNLOGD $0xec, kq4ma<>(SB), Y17, Y18 \
	VPERMW Z18, Z26, Z4 \
	VPERMW Z18, Z27, Z5 \
	VPERMW Z18, Z28, Z6 \
	VPERMW Z18, Z29, Z7 \
	VPERMW Y18, Y25, Y19

// Q4KW unpacks the 128 nibble bytes at qo(b) into Z0..Z3.
#define Q4KW(b, qo) \
	VBROADCASTI64X4 qo(b), Z0 \
	VBROADCASTI64X4 qo+32(b), Z1 \
	VBROADCASTI64X4 qo+64(b), Z2 \
	VBROADCASTI64X4 qo+96(b), Z3 \
	VPSRLVW Z30, Z0, Z0 \
	VPSRLVW Z30, Z1, Z1 \
	VPSRLVW Z30, Z2, Z2 \
	VPSRLVW Z30, Z3, Z3 \
	VPANDD Z31, Z0, Z0 \
	VPANDD Z31, Z1, Z1 \
	VPANDD Z31, Z2, Z2 \
	VPANDD Z31, Z3, Z3

// Q5KH adds the fifth bits of a q5_K super-block (32 bytes at 16(b): bit
// 2k of byte l for element 64k+l, bit 2k+1 for element 64k+32+l) to the
// nibbles in Z0..Z3: a dword rotation brings each chunk's bit to bit 4.
#define Q5KH(b) \
	VBROADCASTI64X4 16(b), Z18 \
	VPROLVD kq5r0<>(SB), Z18, Z16 \
	VPROLVD kq5r1<>(SB), Z18, Z17 \
	VPTERNLOGD $0xf8, kz10<>(SB), Z16, Z0 \
	VPTERNLOGD $0xf8, kz10<>(SB), Z17, Z1 \
	VPROLVD kq5r2<>(SB), Z18, Z16 \
	VPROLVD kq5r3<>(SB), Z18, Z17 \
	VPTERNLOGD $0xf8, kz10<>(SB), Z16, Z2 \
	VPTERNLOGD $0xf8, kz10<>(SB), Z17, Z3

// KDOT: Σ_chunks scale·(w·q8) of the activation block at y into the int32
// lanes of acc (16 lanes, then folded into its low 8).
#define KDOT(y, accz, accy) \
	VPMADDUBSW 4(y), Z0, Z16 \
	VPMADDUBSW 68(y), Z1, Z17 \
	VPMADDWD Z4, Z16, accz \
	VPMADDUBSW 132(y), Z2, Z16 \
	VPDPWSSD Z5, Z17, accz \
	VPMADDUBSW 196(y), Z3, Z17 \
	VPDPWSSD Z6, Z16, accz \
	VPDPWSSD Z7, Z17, accz \
	VEXTRACTI64X4 $1, accz, Y16 \
	VPADDD Y16, accy, accy

// Q4KROW: the integer sums of one activation row: acc (Y) the scaled
// dots, m (Y) the min sums.
#define Q4KROW(y, accz, accy, m) \
	KDOT(y, accz, accy) \
	VPMADDWD 260(y), Y19, m

// HSUM4 leaves in xd the four sums of the eight int32 lanes of a, b, c, d
// (Y registers), in that order; it uses Y16, Y17, Y20 and Y23.
#define HSUM4(a, b, c, d, xd, yd) \
	VPUNPCKLDQ b, a, Y16 \
	VPUNPCKHDQ b, a, Y17 \
	VPADDD Y17, Y16, Y16 \
	VPUNPCKLDQ d, c, Y17 \
	VPUNPCKHDQ d, c, Y20 \
	VPADDD Y20, Y17, Y17 \
	VPUNPCKLQDQ Y17, Y16, Y20 \
	VPUNPCKHQDQ Y17, Y16, Y23 \
	VPADDD Y23, Y20, yd \
	VEXTRACTI32X4 $1, yd, X17 \
	VPADDD X17, xd, xd

// DY4 gathers the activation scales of rows 0..3 into X20.
#define DY4 \
	VMOVSS (R8), X20 \
	VINSERTPS $0x10, (R9), X20, X20 \
	VINSERTPS $0x20, (R10), X20, X20 \
	VINSERTPS $0x30, (R11), X20, X20

// Q4KFLOAT: X24 += (d·dy)·isum − (dmin·dy)·summs, lane per row, with the
// int32 sums in X21 (isum) and X22 (summs), dy in X20, the half scales d
// at do(SI) and dmin at mo(SI).
#define Q4KFLOAT(do, mo) \
	VCVTDQ2PS X21, X21 \
	VCVTDQ2PS X22, X22 \
	VPBROADCASTW do(SI), X23 \
	VCVTPH2PS X23, X23 \
	VMULPS X20, X23, X23 \
	VMULPS X21, X23, X21 \
	VPBROADCASTW mo(SI), X23 \
	VCVTPH2PS X23, X23 \
	VMULPS X20, X23, X23 \
	VMULPS X22, X23, X22 \
	VSUBPS X22, X21, X21 \
	VADDPS X21, X24, X24

// KCONSTS4 loads the q4_K constants.
#define KCONSTS4 \
	VMOVDQU64 kq4s0<>(SB), Z26 \
	VMOVDQU64 kq4s1<>(SB), Z27 \
	VMOVDQU64 kq4s2<>(SB), Z28 \
	VMOVDQU64 kq4s3<>(SB), Z29 \
	VMOVDQU64 kq4m<>(SB), Y25 \
	VMOVDQU64 kq4sr<>(SB), Z30 \
	VMOVDQU64 kz0f<>(SB), Z31

// ROWS4 loads the four activation row pointers from y and ys.
#define ROWS4 \
	MOVQ y+8(FP), R8 \
	MOVQ ys+16(FP), AX \
	LEAQ (R8)(AX*1), R9 \
	LEAQ (R9)(AX*1), R10 \
	LEAQ (R10)(AX*1), R11

// STORE4 writes the four lanes of X24 to dst, dst+ds, dst+2ds, dst+3ds
// (ds in float32 elements).
#define STORE4 \
	MOVQ dst+32(FP), DI \
	MOVQ ds+40(FP), AX \
	SHLQ $2, AX \
	VMOVSS X24, (DI) \
	ADDQ AX, DI \
	VEXTRACTPS $1, X24, (DI) \
	ADDQ AX, DI \
	VEXTRACTPS $2, X24, (DI) \
	ADDQ AX, DI \
	VEXTRACTPS $3, X24, (DI)

// func q4KDot4AVX512(w *byte, y *byte, ys int, nb int, dst *float32, ds int)
TEXT ·q4KDot4AVX512(SB), NOSPLIT, $0-48
	MOVQ w+0(FP), SI
	MOVQ nb+24(FP), CX
	ROWS4
	KCONSTS4
	VXORPS X24, X24, X24
q4k4loop:
	Q4KSCALES(SI)
	Q4KW(SI, 16)
	Q4KROW(R8, Z8, Y8, Y12)
	Q4KROW(R9, Z9, Y9, Y13)
	Q4KROW(R10, Z10, Y10, Y14)
	Q4KROW(R11, Z11, Y11, Y15)
	HSUM4(Y8, Y9, Y10, Y11, X21, Y21)
	HSUM4(Y12, Y13, Y14, Y15, X22, Y22)
	DY4
	Q4KFLOAT(0, 2)
	ADDQ $144, SI
	ADDQ $292, R8
	ADDQ $292, R9
	ADDQ $292, R10
	ADDQ $292, R11
	DECQ CX
	JNZ q4k4loop
	STORE4
	VZEROUPPER
	RET

// HSUM2 leaves the sum of a's eight int32 lanes in lane 0 of X21 and
// b's in lane 0 of X22; it uses Y16 and Y17.
#define HSUM2(a, b) \
	VPUNPCKLDQ b, a, Y16 \
	VPUNPCKHDQ b, a, Y17 \
	VPADDD Y17, Y16, Y16 \
	VEXTRACTI32X4 $1, Y16, X17 \
	VPADDD X17, X16, X16 \
	VPSHUFD $0x4E, X16, X17 \
	VPADDD X17, X16, X21 \
	VPSHUFD $0x55, X21, X22

// func q4KDot1AVX512(w *byte, y *byte, nb int) float32
TEXT ·q4KDot1AVX512(SB), NOSPLIT, $0-28
	MOVQ w+0(FP), SI
	MOVQ y+8(FP), R8
	MOVQ nb+16(FP), CX
	KCONSTS4
	VXORPS X24, X24, X24
q4k1loop:
	Q4KSCALES(SI)
	Q4KW(SI, 16)
	Q4KROW(R8, Z8, Y8, Y12)
	HSUM2(Y8, Y12)
	VMOVSS (R8), X20
	Q4KFLOAT(0, 2)
	ADDQ $144, SI
	ADDQ $292, R8
	DECQ CX
	JNZ q4k1loop
	VMOVSS X24, ret+24(FP)
	VZEROUPPER
	RET

// func q5KDot4AVX512(w *byte, y *byte, ys int, nb int, dst *float32, ds int)
TEXT ·q5KDot4AVX512(SB), NOSPLIT, $0-48
	MOVQ w+0(FP), SI
	MOVQ nb+24(FP), CX
	ROWS4
	KCONSTS4
	VXORPS X24, X24, X24
q5k4loop:
	Q4KSCALES(SI)
	Q4KW(SI, 48)
	Q5KH(SI)
	Q4KROW(R8, Z8, Y8, Y12)
	Q4KROW(R9, Z9, Y9, Y13)
	Q4KROW(R10, Z10, Y10, Y14)
	Q4KROW(R11, Z11, Y11, Y15)
	HSUM4(Y8, Y9, Y10, Y11, X21, Y21)
	HSUM4(Y12, Y13, Y14, Y15, X22, Y22)
	DY4
	Q4KFLOAT(0, 2)
	ADDQ $176, SI
	ADDQ $292, R8
	ADDQ $292, R9
	ADDQ $292, R10
	ADDQ $292, R11
	DECQ CX
	JNZ q5k4loop
	STORE4
	VZEROUPPER
	RET

// func q5KDot1AVX512(w *byte, y *byte, nb int) float32
TEXT ·q5KDot1AVX512(SB), NOSPLIT, $0-28
	MOVQ w+0(FP), SI
	MOVQ y+8(FP), R8
	MOVQ nb+16(FP), CX
	KCONSTS4
	VXORPS X24, X24, X24
q5k1loop:
	Q4KSCALES(SI)
	Q4KW(SI, 48)
	Q5KH(SI)
	Q4KROW(R8, Z8, Y8, Y12)
	HSUM2(Y8, Y12)
	VMOVSS (R8), X20
	Q4KFLOAT(0, 2)
	ADDQ $176, SI
	ADDQ $292, R8
	DECQ CX
	JNZ q5k1loop
	VMOVSS X24, ret+24(FP)
	VZEROUPPER
	RET

// Q6KW unpacks the quants of one q6_K super-block (ql at 0(b), qh at
// 128(b)) into Z0..Z3 as unsigned bytes (q+32), and its scales (at
// 192(b)) into Z4..Z7 (per chunk) and Y19 (-32·scale, for the offset).
#define Q6KW(b) \
	VPMOVSXBW 192(b), Y18 \
	VPERMW Z18, Z26, Z4 \
	VPERMW Z18, Z27, Z5 \
	VPERMW Z18, Z28, Z6 \
	VPERMW Z18, Z29, Z7 \
	VPSLLW $5, Y18, Y19 \
	VPXORD Y20, Y20, Y20 \
	VPSUBW Y19, Y20, Y19 \
	Q6KHALF(b, 0, 128, Z0, Z1) \
	Q6KHALF(b, 64, 160, Z2, Z3)

// Q6KHALF: 128 elements from the 64 ql bytes at qo(b) and the 32 qh
// bytes at ho(b) into the chunks lo and hi.
#define Q6KHALF(b, qo, ho, lo, hi) \
	VMOVDQU64 qo(b), Z16 \
	VBROADCASTI64X4 ho(b), Z17 \
	VPSLLVW Z25, Z17, lo \
	VPANDD Z30, lo, lo \
	VPTERNLOGD $0xf8, Z31, Z16, lo \
	VPSRLVW Z24, Z17, hi \
	VPANDD Z30, hi, hi \
	VPSRLW $4, Z16, Z16 \
	VPTERNLOGD $0xf8, Z31, Z16, hi

// Q6KROW: the integer sum of one activation row into acc (Y):
// Σ scale·(u·q8) − 32·Σ scale·bsum.
#define Q6KROW(y, accz, accy) \
	KDOT(y, accz, accy) \
	VPDPWSSD 260(y), Y19, accy

// KCONSTS6 loads the q6_K constants (Z24 holds a shift here: the float
// sums of the q6_K kernels live in X15, a register q4_K's min sums use).
#define KCONSTS6 \
	VMOVDQU64 kq6s0<>(SB), Z26 \
	VMOVDQU64 kq6s1<>(SB), Z27 \
	VMOVDQU64 kq6s2<>(SB), Z28 \
	VMOVDQU64 kq6s3<>(SB), Z29 \
	VMOVDQU64 kq6sl<>(SB), Z25 \
	VMOVDQU64 kq6sr<>(SB), Z24 \
	VMOVDQU64 kz30<>(SB), Z30 \
	VMOVDQU64 kz0f<>(SB), Z31

// Q6KFLOAT: X15 += (d·dy)·isum, lane per row, the int32 sums in X21,
// dy in X20, the half scale d at do(SI).
#define Q6KFLOAT(do) \
	VCVTDQ2PS X21, X21 \
	VPBROADCASTW do(SI), X23 \
	VCVTPH2PS X23, X23 \
	VMULPS X20, X23, X23 \
	VMULPS X21, X23, X21 \
	VADDPS X21, X15, X15

// func q6KDot4AVX512(w *byte, y *byte, ys int, nb int, dst *float32, ds int)
TEXT ·q6KDot4AVX512(SB), NOSPLIT, $0-48
	MOVQ w+0(FP), SI
	MOVQ nb+24(FP), CX
	ROWS4
	KCONSTS6
	VXORPS X15, X15, X15
q6k4loop:
	Q6KW(SI)
	Q6KROW(R8, Z8, Y8)
	Q6KROW(R9, Z9, Y9)
	Q6KROW(R10, Z10, Y10)
	Q6KROW(R11, Z11, Y11)
	HSUM4(Y8, Y9, Y10, Y11, X21, Y21)
	DY4
	Q6KFLOAT(208)
	ADDQ $210, SI
	ADDQ $292, R8
	ADDQ $292, R9
	ADDQ $292, R10
	ADDQ $292, R11
	DECQ CX
	JNZ q6k4loop
	VMOVAPS X15, X24
	STORE4
	VZEROUPPER
	RET

// func q6KDot1AVX512(w *byte, y *byte, nb int) float32
TEXT ·q6KDot1AVX512(SB), NOSPLIT, $0-28
	MOVQ w+0(FP), SI
	MOVQ y+8(FP), R8
	MOVQ nb+16(FP), CX
	KCONSTS6
	VXORPS X15, X15, X15
q6k1loop:
	Q6KW(SI)
	Q6KROW(R8, Z8, Y8)
	HSUM2(Y8, Y8)
	VMOVSS (R8), X20
	Q6KFLOAT(208)
	ADDQ $210, SI
	ADDQ $292, R8
	DECQ CX
	JNZ q6k1loop
	VMOVSS X15, ret+24(FP)
	VZEROUPPER
	RET

// KCONSTS23 loads the q2_K and q3_K constants: the scale indexes of
// q6_K (16 sub-blocks of 16) and the masks.
#define KCONSTS23 \
	VMOVDQU64 kq6s0<>(SB), Z26 \
	VMOVDQU64 kq6s1<>(SB), Z27 \
	VMOVDQU64 kq6s2<>(SB), Z28 \
	VMOVDQU64 kq6s3<>(SB), Z29 \
	VMOVDQU64 kz03<>(SB), Z30 \
	VMOVDQU64 kz0f<>(SB), Z31

// Q2BITS unpacks the 2-bit quants of 128 elements (32 bytes at qo(SI))
// into the chunks lo and hi.
#define Q2BITS(qo, lo, hi) \
	VBROADCASTI64X4 qo(SI), Z16 \
	VPSRLVW kq2e<>(SB), Z16, lo \
	VPSRLVW kq2o<>(SB), Z16, hi \
	VPANDD Z30, lo, lo \
	VPANDD Z30, hi, hi

// Q2KW unpacks a q2_K super-block: quants (64 bytes at 16(SI)) into
// Z0..Z3, scales (low nibbles of the 16 bytes at 0(SI)) into Z4..Z7 per
// chunk, mins (high nibbles) into the words of Y19.
#define Q2KW \
	VPMOVZXBW (SI), Y18 \
	VPSRLW $4, Y18, Y19 \
	VPANDD Y31, Y18, Y18 \
	VPERMW Z18, Z26, Z4 \
	VPERMW Z18, Z27, Z5 \
	VPERMW Z18, Z28, Z6 \
	VPERMW Z18, Z29, Z7 \
	Q2BITS(16, Z0, Z1) \
	Q2BITS(48, Z2, Z3)

// Q3KH adds the third bits of a q3_K super-block (hmask, 32 bytes at
// 0(SI): bit 2k of byte l for element 64k+l, bit 2k+1 for 64k+32+l) at
// bit 2 of the 2-bit quants in Z0..Z3.
#define Q3KH \
	VBROADCASTI64X4 (SI), Z18 \
	VPROLVD kq3r0<>(SB), Z18, Z16 \
	VPROLVD kq3r1<>(SB), Z18, Z17 \
	VPTERNLOGD $0xf8, kz04<>(SB), Z16, Z0 \
	VPTERNLOGD $0xf8, kz04<>(SB), Z17, Z1 \
	VPROLVD kq3r2<>(SB), Z18, Z16 \
	VPROLVD kq3r3<>(SB), Z18, Z17 \
	VPTERNLOGD $0xf8, kz04<>(SB), Z16, Z2 \
	VPTERNLOGD $0xf8, kz04<>(SB), Z17, Z3

// Q3KW unpacks a q3_K super-block: quants (q+4, in [0, 7]) into Z0..Z3,
// the 6-bit signed scales (12 bytes at 96(SI)) into Z4..Z7 per chunk and
// -4·scale into Y19 (for the offset).
#define Q3KW \
	VBROADCASTI32X4 94(SI), Y18 \
	VPSHUFB kq3ia<>(SB), Y18, Y16 \
	VPSHUFB kq3ib<>(SB), Y18, Y17 \
	VPSRLVW kq3sa<>(SB), Y16, Y18 \
	VPSLLW $4, Y17, Y17 \
	VPSRLVW kq3sb<>(SB), Y17, Y17 \
	VPANDD kz30<>(SB), Y17, Y17 \
	VPTERNLOGD $0xec, Y31, Y17, Y18 \
	VPSUBW kw32<>(SB), Y18, Y18 \
	VPERMW Z18, Z26, Z4 \
	VPERMW Z18, Z27, Z5 \
	VPERMW Z18, Z28, Z6 \
	VPERMW Z18, Z29, Z7 \
	VPSLLW $2, Y18, Y19 \
	VPXORD Y20, Y20, Y20 \
	VPSUBW Y19, Y20, Y19 \
	Q2BITS(32, Z0, Z1) \
	Q2BITS(64, Z2, Z3) \
	Q3KH

// func q2KDot4AVX512(w *byte, y *byte, ys int, nb int, dst *float32, ds int)
TEXT ·q2KDot4AVX512(SB), NOSPLIT, $0-48
	MOVQ w+0(FP), SI
	MOVQ nb+24(FP), CX
	ROWS4
	KCONSTS23
	VXORPS X24, X24, X24
q2k4loop:
	Q2KW
	Q4KROW(R8, Z8, Y8, Y12)
	Q4KROW(R9, Z9, Y9, Y13)
	Q4KROW(R10, Z10, Y10, Y14)
	Q4KROW(R11, Z11, Y11, Y15)
	HSUM4(Y8, Y9, Y10, Y11, X21, Y21)
	HSUM4(Y12, Y13, Y14, Y15, X22, Y22)
	DY4
	Q4KFLOAT(80, 82)
	ADDQ $84, SI
	ADDQ $292, R8
	ADDQ $292, R9
	ADDQ $292, R10
	ADDQ $292, R11
	DECQ CX
	JNZ q2k4loop
	STORE4
	VZEROUPPER
	RET

// func q2KDot1AVX512(w *byte, y *byte, nb int) float32
TEXT ·q2KDot1AVX512(SB), NOSPLIT, $0-28
	MOVQ w+0(FP), SI
	MOVQ y+8(FP), R8
	MOVQ nb+16(FP), CX
	KCONSTS23
	VXORPS X24, X24, X24
q2k1loop:
	Q2KW
	Q4KROW(R8, Z8, Y8, Y12)
	HSUM2(Y8, Y12)
	VMOVSS (R8), X20
	Q4KFLOAT(80, 82)
	ADDQ $84, SI
	ADDQ $292, R8
	DECQ CX
	JNZ q2k1loop
	VMOVSS X24, ret+24(FP)
	VZEROUPPER
	RET

// func q3KDot4AVX512(w *byte, y *byte, ys int, nb int, dst *float32, ds int)
TEXT ·q3KDot4AVX512(SB), NOSPLIT, $0-48
	MOVQ w+0(FP), SI
	MOVQ nb+24(FP), CX
	ROWS4
	KCONSTS23
	VXORPS X15, X15, X15
q3k4loop:
	Q3KW
	Q6KROW(R8, Z8, Y8)
	Q6KROW(R9, Z9, Y9)
	Q6KROW(R10, Z10, Y10)
	Q6KROW(R11, Z11, Y11)
	HSUM4(Y8, Y9, Y10, Y11, X21, Y21)
	DY4
	Q6KFLOAT(108)
	ADDQ $110, SI
	ADDQ $292, R8
	ADDQ $292, R9
	ADDQ $292, R10
	ADDQ $292, R11
	DECQ CX
	JNZ q3k4loop
	VMOVAPS X15, X24
	STORE4
	VZEROUPPER
	RET

// func q3KDot1AVX512(w *byte, y *byte, nb int) float32
TEXT ·q3KDot1AVX512(SB), NOSPLIT, $0-28
	MOVQ w+0(FP), SI
	MOVQ y+8(FP), R8
	MOVQ nb+16(FP), CX
	KCONSTS23
	VXORPS X15, X15, X15
q3k1loop:
	Q3KW
	Q6KROW(R8, Z8, Y8)
	HSUM2(Y8, Y8)
	VMOVSS (R8), X20
	Q6KFLOAT(108)
	ADDQ $110, SI
	ADDQ $292, R8
	DECQ CX
	JNZ q3k1loop
	VMOVSS X15, ret+24(FP)
	VZEROUPPER
	RET
