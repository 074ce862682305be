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

CONST8(log2e, 0x3fb8aa3b)
CONST8(ln2hi, 0x3f318000)
CONST8(ln2lo, 0xb95e8083)
CONST8(c7, 0x39500d01)
CONST8(c6, 0x3ab60b61)
CONST8(c5, 0x3c088889)
CONST8(c4, 0x3d2aaaab)
CONST8(c3, 0x3e2aaaab)
CONST8(c2, 0x3f000000)
CONST8(one, 0x3f800000)
CONST8(max127, 0x42fe0000)
CONST8(minarg, 0xc2aeac4f)
CONST8(maxarg, 0x42b17217)
CONST8(posinf, 0x7f800000)
CONST8(bias127, 0x0000007f)

// Element-wise binary op over n (a multiple of 8) float32s:
// dst[i] = a[i] OP b[i].
#define BINOP(NAME, OP) \
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
	VMOVUPS Y0, (DI) \
	VMOVUPS Y1, 32(DI) \
	VMOVUPS Y2, 64(DI) \
	VMOVUPS Y3, 96(DI) \
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
	VMOVUPS Y0, (DI) \
	ADDQ $32, SI \
	ADDQ $32, DX \
	ADDQ $32, DI \
	SUBQ $8, CX \
	JMP  loop8 \
done: \
	VZEROUPPER \
	RET

// func addAVX2(dst, a, b *float32, n int)
BINOP(·addAVX2, VADDPS)

// func subAVX2(dst, a, b *float32, n int)
BINOP(·subAVX2, VSUBPS)

// func mulAVX2(dst, a, b *float32, n int)
BINOP(·mulAVX2, VMULPS)

// func divAVX2(dst, a, b *float32, n int)
BINOP(·divAVX2, VDIVPS)

// Element-wise op with a scalar s broadcast in Y15, over n (a multiple of
// 8): dst[i] = a[i] OP s.
#define SCALAROP(NAME, OP) \
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
	VMOVUPS Y0, (DI) \
	VMOVUPS Y1, 32(DI) \
	VMOVUPS Y2, 64(DI) \
	VMOVUPS Y3, 96(DI) \
	ADDQ $128, SI \
	ADDQ $128, DI \
	SUBQ $32, CX \
	JMP  sloop32 \
sloop8: \
	CMPQ CX, $8 \
	JL   sdone \
	OP (SI), Y15, Y0 \
	VMOVUPS Y0, (DI) \
	ADDQ $32, SI \
	ADDQ $32, DI \
	SUBQ $8, CX \
	JMP  sloop8 \
sdone: \
	VZEROUPPER \
	RET

// func scaleAVX2(dst, a *float32, n int, s float32)
SCALAROP(·scaleAVX2, VMULPS)

// func addScalarAVX2(dst, a *float32, n int, s float32)
SCALAROP(·addScalarAVX2, VADDPS)

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

// EXP8 sets Y(OUT) = exp(Y(IN)) for eight float32s, using Y(T1) and Y(T2)
// as scratch (IN is kept). exp(x) = 2^n · e^r with n = round(x·log2 e) and
// r = x - n·ln 2 (two-part ln 2, |r| ≤ ln2/2), e^r by its degree-7 Taylor
// polynomial (truncation error below 1e-8); n = 128 is scaled as 2·2^127.
// Below minarg the result is 0, above maxarg +Inf; NaN stays NaN.
#define EXP8(IN, OUT, T1, T2) \
	VMULPS log2e<>(SB), IN, T1 \
	VROUNDPS $0, T1, T1 \
	VMOVAPS IN, OUT \
	VFNMADD231PS ln2hi<>(SB), T1, OUT \
	VFNMADD231PS ln2lo<>(SB), T1, OUT \
	VMOVUPS c7<>(SB), T2 \
	VFMADD213PS c6<>(SB), OUT, T2 \
	VFMADD213PS c5<>(SB), OUT, T2 \
	VFMADD213PS c4<>(SB), OUT, T2 \
	VFMADD213PS c3<>(SB), OUT, T2 \
	VFMADD213PS c2<>(SB), OUT, T2 \
	VFMADD213PS one<>(SB), OUT, T2 \
	VFMADD213PS one<>(SB), OUT, T2 \
	VMINPS max127<>(SB), T1, OUT \
	VSUBPS OUT, T1, T1 \
	VFMADD231PS T1, T2, T2 \
	VCVTPS2DQ OUT, OUT \
	VPADDD bias127<>(SB), OUT, OUT \
	VPSLLD $23, OUT, OUT \
	VMULPS T2, OUT, OUT \
	VCMPPS $1, minarg<>(SB), IN, T1 \
	VANDNPS OUT, T1, OUT \
	VMOVUPS maxarg<>(SB), T2 \
	VCMPPS $1, IN, T2, T1 \
	VBLENDVPS T1, posinf<>(SB), OUT, OUT

// func expSubAVX2(dst, a *float32, n int, m float32) float64
// dst[i] = exp(a[i]-m) for n a multiple of 8; returns the float64 sum.
TEXT ·expSubAVX2(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ n+16(FP), CX
	VBROADCASTSS m+24(FP), Y15
	VXORPD Y12, Y12, Y12
	VXORPD Y13, Y13, Y13
eloop16:
	CMPQ CX, $16
	JL   eloop8
	VMOVUPS (SI), Y0
	VSUBPS Y15, Y0, Y0
	VMOVUPS 32(SI), Y4
	VSUBPS Y15, Y4, Y4
	EXP8(Y0, Y1, Y2, Y3)
	EXP8(Y4, Y5, Y6, Y7)
	VMOVUPS Y1, (DI)
	VMOVUPS Y5, 32(DI)
	VCVTPS2PD X1, Y8
	VEXTRACTF128 $1, Y1, X1
	VCVTPS2PD X1, Y9
	VCVTPS2PD X5, Y10
	VEXTRACTF128 $1, Y5, X5
	VCVTPS2PD X5, Y11
	VADDPD Y8, Y12, Y12
	VADDPD Y9, Y13, Y13
	VADDPD Y10, Y12, Y12
	VADDPD Y11, Y13, Y13
	ADDQ $64, SI
	ADDQ $64, DI
	SUBQ $16, CX
	JMP  eloop16
eloop8:
	CMPQ CX, $8
	JL   edone
	VMOVUPS (SI), Y0
	VSUBPS Y15, Y0, Y0
	EXP8(Y0, Y1, Y2, Y3)
	VMOVUPS Y1, (DI)
	VCVTPS2PD X1, Y8
	VEXTRACTF128 $1, Y1, X1
	VCVTPS2PD X1, Y9
	VADDPD Y8, Y12, Y12
	VADDPD Y9, Y13, Y13
edone:
	VADDPD Y13, Y12, Y0
	HSUMPD
	VMOVSD X0, ret+32(FP)
	VZEROUPPER
	RET

// func siluAVX2(dst, a *float32, n int)
// dst[i] = a[i] / (1 + exp(-a[i])) for n a multiple of 8.
TEXT ·siluAVX2(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ n+16(FP), CX
	VXORPS Y15, Y15, Y15
siloop:
	CMPQ CX, $8
	JL   sidone
	VMOVUPS (SI), Y8
	VSUBPS Y8, Y15, Y0
	EXP8(Y0, Y1, Y2, Y3)
	VADDPS one<>(SB), Y1, Y1
	VDIVPS Y1, Y8, Y8
	VMOVUPS Y8, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JMP  siloop
sidone:
	VZEROUPPER
	RET
