//go:build amd64 && !purego

#include "textflag.h"

// Eight copies of one float32 constant, for use as a 256-bit memory operand.
#define CONST8(name, bits) \
	DATA name<>+0(SB)/4, $bits \
	DATA name<>+4(SB)/4, $bits \
	DATA name<>+8(SB)/4, $bits \
	DATA name<>+12(SB)/4, $bits \
	DATA name<>+16(SB)/4, $bits \
	DATA name<>+20(SB)/4, $bits \
	DATA name<>+24(SB)/4, $bits \
	DATA name<>+28(SB)/4, $bits \
	GLOBL name<>(SB), RODATA|NOPTR, $32

// Constants of the exp kernel (EXPV).
CONST8(log2e, 0x3fb8aa3b)  // log2(e)
CONST8(magic, 0x4b40007f)  // 1.5·2^23 + 127: rounds to an integer, biased
CONST8(ln2hi, 0x3f318000)  // ln 2 = ln2hi + ln2lo
CONST8(ln2lo, 0xb95e8083)
CONST8(c6, 0x3ab43e11)     // e^r ≈ 1 + r + r²(c2 + c3 r + ... + c6 r⁴)
CONST8(c5, 0x3c091dc7)
CONST8(c4, 0x3d2aadac)
CONST8(c3, 0x3e2aaa47)
CONST8(c2, 0x3efffffc)
CONST8(one, 0x3f800000)
CONST8(exphi, 0x42b20000)  // 89: inputs above overflow to +Inf anyway
CONST8(explo, 0xc2d00000)  // -104: inputs below round to 0 anyway

// Element-wise binary op over n (a multiple of 8) float32s:
// dst[i] = a[i] OP b[i].
#define BINOP(NAME, OP, ST, FENCE) \
TEXT NAME(SB), NOSPLIT, $0-32 \
	MOVQ dst+0(FP), DI \
	MOVQ a+8(FP), SI \
	MOVQ b+16(FP), DX \
	MOVQ n+24(FP), CX \
loop32: \
	CMPQ CX, $32 \
	JL   loop8 \
	VMOVUPS (SI), Y0 \
	VMOVUPS 32(SI), Y1 \
	VMOVUPS 64(SI), Y2 \
	VMOVUPS 96(SI), Y3 \
	OP (DX), Y0, Y0 \
	OP 32(DX), Y1, Y1 \
	OP 64(DX), Y2, Y2 \
	OP 96(DX), Y3, Y3 \
	ST Y0, (DI) \
	ST Y1, 32(DI) \
	ST Y2, 64(DI) \
	ST Y3, 96(DI) \
	ADDQ $128, SI \
	ADDQ $128, DX \
	ADDQ $128, DI \
	SUBQ $32, CX \
	JMP  loop32 \
loop8: \
	CMPQ CX, $8 \
	JL   done \
	VMOVUPS (SI), Y0 \
	OP (DX), Y0, Y0 \
	ST Y0, (DI) \
	ADDQ $32, SI \
	ADDQ $32, DX \
	ADDQ $32, DI \
	SUBQ $8, CX \
	JMP  loop8 \
done: \
	FENCE \
	VZEROUPPER \
	RET

#define NOFENCE

// The NT variants store with non-temporal hints (dst 32-byte aligned) and
// end with SFENCE: for outputs too large to stay in cache.

// func addAVX2(dst, a, b *float32, n int)
BINOP(·addAVX2, VADDPS, VMOVUPS, NOFENCE)

// func addNTAVX2(dst, a, b *float32, n int)
BINOP(·addNTAVX2, VADDPS, VMOVNTPS, SFENCE)

// func subAVX2(dst, a, b *float32, n int)
BINOP(·subAVX2, VSUBPS, VMOVUPS, NOFENCE)

// func subNTAVX2(dst, a, b *float32, n int)
BINOP(·subNTAVX2, VSUBPS, VMOVNTPS, SFENCE)

// func mulAVX2(dst, a, b *float32, n int)
BINOP(·mulAVX2, VMULPS, VMOVUPS, NOFENCE)

// func mulNTAVX2(dst, a, b *float32, n int)
BINOP(·mulNTAVX2, VMULPS, VMOVNTPS, SFENCE)

// func divAVX2(dst, a, b *float32, n int)
BINOP(·divAVX2, VDIVPS, VMOVUPS, NOFENCE)

// func divNTAVX2(dst, a, b *float32, n int)
BINOP(·divNTAVX2, VDIVPS, VMOVNTPS, SFENCE)

// Element-wise op with a scalar s broadcast in Y15, over n (a multiple of
// 8): dst[i] = a[i] OP s.
#define SCALAROP(NAME, OP, ST, FENCE) \
TEXT NAME(SB), NOSPLIT, $0-28 \
	MOVQ dst+0(FP), DI \
	MOVQ a+8(FP), SI \
	MOVQ n+16(FP), CX \
	VBROADCASTSS s+24(FP), Y15 \
sloop32: \
	CMPQ CX, $32 \
	JL   sloop8 \
	OP (SI), Y15, Y0 \
	OP 32(SI), Y15, Y1 \
	OP 64(SI), Y15, Y2 \
	OP 96(SI), Y15, Y3 \
	ST Y0, (DI) \
	ST Y1, 32(DI) \
	ST Y2, 64(DI) \
	ST Y3, 96(DI) \
	ADDQ $128, SI \
	ADDQ $128, DI \
	SUBQ $32, CX \
	JMP  sloop32 \
sloop8: \
	CMPQ CX, $8 \
	JL   sdone \
	OP (SI), Y15, Y0 \
	ST Y0, (DI) \
	ADDQ $32, SI \
	ADDQ $32, DI \
	SUBQ $8, CX \
	JMP  sloop8 \
sdone: \
	FENCE \
	VZEROUPPER \
	RET

// func scaleAVX2(dst, a *float32, n int, s float32)
SCALAROP(·scaleAVX2, VMULPS, VMOVUPS, NOFENCE)

// func scaleNTAVX2(dst, a *float32, n int, s float32)
SCALAROP(·scaleNTAVX2, VMULPS, VMOVNTPS, SFENCE)

// func addScalarAVX2(dst, a *float32, n int, s float32)
SCALAROP(·addScalarAVX2, VADDPS, VMOVUPS, NOFENCE)

// func addScalarNTAVX2(dst, a *float32, n int, s float32)
SCALAROP(·addScalarNTAVX2, VADDPS, VMOVNTPS, SFENCE)

// func scaleAddAVX2(dst, a *float32, n int, s float32)
// dst[i] += s*a[i] for n a multiple of 8.
TEXT ·scaleAddAVX2(SB), NOSPLIT, $0-28
	MOVQ dst+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ n+16(FP), CX
	VBROADCASTSS s+24(FP), Y15
saloop32:
	CMPQ CX, $32
	JL   saloop8
	VMOVUPS (DI), Y0
	VMOVUPS 32(DI), Y1
	VMOVUPS 64(DI), Y2
	VMOVUPS 96(DI), Y3
	VFMADD231PS (SI), Y15, Y0
	VFMADD231PS 32(SI), Y15, Y1
	VFMADD231PS 64(SI), Y15, Y2
	VFMADD231PS 96(SI), Y15, Y3
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	ADDQ $128, SI
	ADDQ $128, DI
	SUBQ $32, CX
	JMP  saloop32
saloop8:
	CMPQ CX, $8
	JL   sadone
	VMOVUPS (DI), Y0
	VFMADD231PS (SI), Y15, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JMP  saloop8
sadone:
	VZEROUPPER
	RET

// Horizontal sum of the eight float32 lanes of Y0 into X0's low lane.
#define HSUMPS \
	VEXTRACTF128 $1, Y0, X1 \
	VADDPS X1, X0, X0 \
	VMOVHLPS X0, X1, X1 \
	VADDPS X1, X0, X0 \
	VMOVSHDUP X0, X1 \
	VADDSS X1, X0, X0

// Horizontal sum of the four float64 lanes of Y0 into X0's low lane.
#define HSUMPD \
	VEXTRACTF128 $1, Y0, X1 \
	VADDPD X1, X0, X0 \
	VUNPCKHPD X0, X0, X1 \
	VADDSD X1, X0, X0

// func dotAVX2(a, b *float32, n int) float32
// n is a multiple of 8.
TEXT ·dotAVX2(SB), NOSPLIT, $0-28
	MOVQ a+0(FP), SI
	MOVQ b+8(FP), DX
	MOVQ n+16(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
dloop32:
	CMPQ CX, $32
	JL   dloop8
	VMOVUPS (SI), Y4
	VMOVUPS 32(SI), Y5
	VMOVUPS 64(SI), Y6
	VMOVUPS 96(SI), Y7
	VFMADD231PS (DX), Y4, Y0
	VFMADD231PS 32(DX), Y5, Y1
	VFMADD231PS 64(DX), Y6, Y2
	VFMADD231PS 96(DX), Y7, Y3
	ADDQ $128, SI
	ADDQ $128, DX
	SUBQ $32, CX
	JMP  dloop32
dloop8:
	CMPQ CX, $8
	JL   ddone
	VMOVUPS (SI), Y4
	VFMADD231PS (DX), Y4, Y0
	ADDQ $32, SI
	ADDQ $32, DX
	SUBQ $8, CX
	JMP  dloop8
ddone:
	VADDPS Y1, Y0, Y0
	VADDPS Y3, Y2, Y2
	VADDPS Y2, Y0, Y0
	HSUMPS
	VMOVSS X0, ret+24(FP)
	VZEROUPPER
	RET

// func sumAVX2(a *float32, n int) float64
// n is a multiple of 8; the sum is accumulated in float64.
TEXT ·sumAVX2(SB), NOSPLIT, $0-24
	MOVQ a+0(FP), SI
	MOVQ n+8(FP), CX
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
sumloop16:
	CMPQ CX, $16
	JL   sumloop8
	VCVTPS2PD (SI), Y4
	VCVTPS2PD 16(SI), Y5
	VCVTPS2PD 32(SI), Y6
	VCVTPS2PD 48(SI), Y7
	VADDPD Y4, Y0, Y0
	VADDPD Y5, Y1, Y1
	VADDPD Y6, Y2, Y2
	VADDPD Y7, Y3, Y3
	ADDQ $64, SI
	SUBQ $16, CX
	JMP  sumloop16
sumloop8:
	CMPQ CX, $8
	JL   sumdone
	VCVTPS2PD (SI), Y4
	VCVTPS2PD 16(SI), Y5
	VADDPD Y4, Y0, Y0
	VADDPD Y5, Y1, Y1
sumdone:
	VADDPD Y1, Y0, Y0
	VADDPD Y3, Y2, Y2
	VADDPD Y2, Y0, Y0
	HSUMPD
	VMOVSD X0, ret+16(FP)
	VZEROUPPER
	RET

// func sumSqAVX2(a *float32, n int) float64
// n is a multiple of 8; squares are summed in float64.
TEXT ·sumSqAVX2(SB), NOSPLIT, $0-24
	MOVQ a+0(FP), SI
	MOVQ n+8(FP), CX
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
sqloop16:
	CMPQ CX, $16
	JL   sqloop8
	VCVTPS2PD (SI), Y4
	VCVTPS2PD 16(SI), Y5
	VCVTPS2PD 32(SI), Y6
	VCVTPS2PD 48(SI), Y7
	VFMADD231PD Y4, Y4, Y0
	VFMADD231PD Y5, Y5, Y1
	VFMADD231PD Y6, Y6, Y2
	VFMADD231PD Y7, Y7, Y3
	ADDQ $64, SI
	SUBQ $16, CX
	JMP  sqloop16
sqloop8:
	CMPQ CX, $8
	JL   sqdone
	VCVTPS2PD (SI), Y4
	VCVTPS2PD 16(SI), Y5
	VFMADD231PD Y4, Y4, Y0
	VFMADD231PD Y5, Y5, Y1
sqdone:
	VADDPD Y1, Y0, Y0
	VADDPD Y3, Y2, Y2
	VADDPD Y2, Y0, Y0
	HSUMPD
	VMOVSD X0, ret+16(FP)
	VZEROUPPER
	RET

// func maxAVX2(a *float32, n int) float32
// n is a multiple of 8 and at least 8. A NaN element never replaces the
// running maximum (the operand order of VMAXPS keeps the accumulator).
TEXT ·maxAVX2(SB), NOSPLIT, $0-20
	MOVQ a+0(FP), SI
	MOVQ n+8(FP), CX
	VMOVUPS (SI), Y0
	VMOVUPS Y0, Y1
	VMOVUPS Y0, Y2
	VMOVUPS Y0, Y3
	ADDQ $32, SI
	SUBQ $8, CX
mxloop32:
	CMPQ CX, $32
	JL   mxloop8
	VMOVUPS (SI), Y4
	VMOVUPS 32(SI), Y5
	VMOVUPS 64(SI), Y6
	VMOVUPS 96(SI), Y7
	VMAXPS Y0, Y4, Y0
	VMAXPS Y1, Y5, Y1
	VMAXPS Y2, Y6, Y2
	VMAXPS Y3, Y7, Y3
	ADDQ $128, SI
	SUBQ $32, CX
	JMP  mxloop32
mxloop8:
	CMPQ CX, $8
	JL   mxdone
	VMOVUPS (SI), Y4
	VMAXPS Y0, Y4, Y0
	ADDQ $32, SI
	SUBQ $8, CX
	JMP  mxloop8
mxdone:
	VMAXPS Y0, Y1, Y0
	VMAXPS Y2, Y3, Y2
	VMAXPS Y0, Y2, Y0
	VEXTRACTF128 $1, Y0, X1
	VMAXPS X0, X1, X0
	VMOVHLPS X0, X1, X1
	VMAXPS X0, X1, X0
	VMOVSHDUP X0, X1
	VMAXSS X0, X1, X0
	VMOVSS X0, ret+16(FP)
	VZEROUPPER
	RET

// EXPCONSTS loads the register-held constants of EXPV into Y5..Y10 and
// Y12 (Y11 is left to the caller).
#define EXPCONSTS \
	VMOVUPS log2e<>(SB), Y5 \
	VMOVUPS magic<>(SB), Y6 \
	VMOVUPS ln2hi<>(SB), Y7 \
	VMOVUPS ln2lo<>(SB), Y8 \
	VMOVUPS c6<>(SB), Y9 \
	VMOVUPS c5<>(SB), Y10 \
	VMOVUPS one<>(SB), Y12

// EXPV sets P = exp(X) for eight float32s (X is clobbered; T, R and Q are
// scratch; constants from EXPCONSTS). X is clamped to [-104, 89] (NaN
// kept), n = round(x·log2 e) comes from adding a magic number, r = x - n·ln 2
// with a two-part ln 2, and e^r is a degree-6 least-squares polynomial
// (relative error 4e-9 on |r| ≤ ln2/2) evaluated in Estrin's order for a
// short dependency chain. 2^n is applied as two normal factors 2^(n>>1) and
// 2^(n-(n>>1)), one multiply each: e^r·2^(n>>1) is exact-range, and the
// second multiply rounds once, so results past 2^127 stay finite up to
// FLT_MAX (x up to 88.7228) and results below 2^-126 come out as correctly
// rounded subnormals instead of 0. A NaN n converts to 0x80000000, whose
// factors are 1, so NaN stays NaN.
#define EXPV(X, T, P, R, Q) \
	VMOVUPS exphi<>(SB), T \
	VMINPS X, T, X \
	VMOVUPS explo<>(SB), T \
	VMAXPS X, T, X \
	VMOVAPS Y6, T \
	VFMADD231PS Y5, X, T \
	VSUBPS Y6, T, P \
	VMOVAPS X, R \
	VFNMADD231PS Y7, P, R \
	VFNMADD231PS Y8, P, R \
	VCVTPS2DQ P, X \
	VMULPS R, R, Q \
	VMOVAPS Y10, T \
	VFMADD213PS c4<>(SB), R, T \
	VMOVUPS c3<>(SB), P \
	VFMADD213PS c2<>(SB), R, P \
	VFMADD231PS Y9, Q, T \
	VFMADD213PS P, Q, T \
	VADDPS Y12, R, P \
	VFMADD213PS P, Q, T \
	VPSRAD $1, X, R \
	VPSUBD R, X, X \
	VPSLLD $23, R, R \
	VPADDD Y12, R, R \
	VPSLLD $23, X, X \
	VPADDD Y12, X, X \
	VMULPS R, T, T \
	VMULPS X, T, P

// Body of expSubAVX2 and expSub1AVX2: PREP turns the loaded Y0 into the
// exponent (s*a - m, or a - m when s is 1).
#define EXPSUB(NAME, PREP) \
TEXT NAME(SB), NOSPLIT, $0-48 \
	MOVQ dst+0(FP), DI \
	MOVQ a+8(FP), SI \
	MOVQ n+16(FP), CX \
	MOVQ pf+32(FP), R8 \
	SHRQ $3, CX \
	VBROADCASTSS s+24(FP), Y11 \
	VBROADCASTSS m+28(FP), Y15 \
	EXPCONSTS \
	VXORPD Y13, Y13, Y13 \
eblock: \
	TESTQ CX, CX \
	JZ    edone \
	MOVQ $16, DX \
	CMPQ CX, DX \
	CMOVQLT CX, DX \
	SUBQ DX, CX \
	VXORPS Y14, Y14, Y14 \
eloop: \
	PREFETCHT0 (R8) \
	ADDQ $32, R8 \
	VMOVUPS (SI), Y0 \
	PREP \
	EXPV(Y0, Y1, Y2, Y3, Y4) \
	VMOVUPS Y2, (DI) \
	VADDPS Y2, Y14, Y14 \
	ADDQ $32, SI \
	ADDQ $32, DI \
	DECQ DX \
	JNZ  eloop \
	VCVTPS2PD X14, Y0 \
	VADDPD Y0, Y13, Y13 \
	VEXTRACTF128 $1, Y14, X14 \
	VCVTPS2PD X14, Y0 \
	VADDPD Y0, Y13, Y13 \
	JMP  eblock \
edone: \
	VMOVAPD Y13, Y0 \
	HSUMPD \
	VMOVSD X0, ret+40(FP) \
	VZEROUPPER \
	RET

#define PREPSCALE VFMSUB213PS Y15, Y11, Y0
#define PREPSUB VSUBPS Y15, Y0, Y0

// func expSubAVX2(dst, a *float32, n int, s, m float32, pf *float32) float64
// dst[i] = exp(s*a[i]-m) for n a multiple of 8; returns the sum. Blocks of
// up to 128 results are summed in float32 lanes (Y14), each block's sum
// then in float64 (Y13). The n floats at pf are prefetched meanwhile (the
// next row of a soft-max), so that its memory traffic overlaps this row's
// arithmetic.
EXPSUB(·expSubAVX2, PREPSCALE)

// func expSub1AVX2(dst, a *float32, n int, s, m float32, pf *float32) float64
// expSubAVX2 for s = 1 (s is ignored): a subtraction instead of a
// multiply-add, which frees the busier multiply pipes.
EXPSUB(·expSub1AVX2, PREPSUB)

// func siluAVX2(dst, a *float32, n int)
// dst[i] = a[i] / (1 + exp(-a[i])) for n a multiple of 8.
TEXT ·siluAVX2(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ n+16(FP), CX
	EXPCONSTS
	VXORPS Y15, Y15, Y15
siloop:
	CMPQ CX, $8
	JL   sidone
	VMOVUPS (SI), Y13
	VSUBPS Y13, Y15, Y0
	EXPV(Y0, Y1, Y2, Y3, Y4)
	VADDPS Y12, Y2, Y2
	VDIVPS Y2, Y13, Y13
	VMOVUPS Y13, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JMP  siloop
sidone:
	VZEROUPPER
	RET

// func scaleMaskMaxAVX2(dst, x, mask *float32, n int, s, t float32) float32
// dst[i] = s*x[i] + t*mask[i] for n a multiple of 8 (n ≥ 8); returns the
// largest dst[i] (a NaN never replaces the running maximum).
TEXT ·scaleMaskMaxAVX2(SB), NOSPLIT, $0-44
	MOVQ dst+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ mask+16(FP), DX
	MOVQ n+24(FP), CX
	VBROADCASTSS s+32(FP), Y14
	VBROADCASTSS t+36(FP), Y15
	VMOVUPS (SI), Y0
	VMULPS Y14, Y0, Y0
	VFMADD231PS (DX), Y15, Y0
	VMOVUPS Y0, (DI)
	VMOVAPS Y0, Y1
	ADDQ $32, SI
	ADDQ $32, DX
	ADDQ $32, DI
	SUBQ $8, CX
smloop16:
	CMPQ CX, $16
	JL   smloop8
	VMOVUPS (SI), Y2
	VMOVUPS 32(SI), Y3
	VMULPS Y14, Y2, Y2
	VMULPS Y14, Y3, Y3
	VFMADD231PS (DX), Y15, Y2
	VFMADD231PS 32(DX), Y15, Y3
	VMOVUPS Y2, (DI)
	VMOVUPS Y3, 32(DI)
	VMAXPS Y0, Y2, Y0
	VMAXPS Y1, Y3, Y1
	ADDQ $64, SI
	ADDQ $64, DX
	ADDQ $64, DI
	SUBQ $16, CX
	JMP  smloop16
smloop8:
	CMPQ CX, $8
	JL   smdone
	VMOVUPS (SI), Y2
	VMULPS Y14, Y2, Y2
	VFMADD231PS (DX), Y15, Y2
	VMOVUPS Y2, (DI)
	VMAXPS Y0, Y2, Y0
smdone:
	VMAXPS Y0, Y1, Y0
	VEXTRACTF128 $1, Y0, X1
	VMAXPS X0, X1, X0
	VMOVHLPS X0, X1, X1
	VMAXPS X0, X1, X0
	VMOVSHDUP X0, X1
	VMAXSS X0, X1, X0
	VMOVSS X0, ret+40(FP)
	VZEROUPPER
	RET
