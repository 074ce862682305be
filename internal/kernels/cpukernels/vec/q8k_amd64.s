//go:build amd64 && !purego

#include "textflag.h"

// ggml's quantize_row_q8_K on one block of 256 floats with AVX-512 (see
// quantizeQ8KBlock in q8k_amd64.go): the same steps as the Go code, so the
// same bytes: the first element of largest magnitude m, iscale = -127/m,
// q = min(127, round-to-even(iscale·x)), the 16-quant sums, d = 1/iscale.

DATA k8absmask<>+0(SB)/4, $0x7fffffff
GLOBL k8absmask<>(SB), RODATA|NOPTR, $4
DATA k8m127<>+0(SB)/4, $-127.0
GLOBL k8m127<>(SB), RODATA|NOPTR, $4
DATA k8one<>+0(SB)/4, $1.0
GLOBL k8one<>(SB), RODATA|NOPTR, $4
DATA k8inf<>+0(SB)/4, $0x7f800000
GLOBL k8inf<>(SB), RODATA|NOPTR, $4
DATA k8i127<>+0(SB)/4, $127
GLOBL k8i127<>(SB), RODATA|NOPTR, $4

// Q8KG quantizes the 16 floats at xo(SI) into the bytes at qo(DI) and
// their sum into the int16 at so(DI).
#define Q8KG(xo, qo, so) \
	VMULPS xo(SI), Z2, Z5 \
	VCVTPS2DQ Z5, Z5 \
	VPMINSD Z30, Z5, Z5 \
	VPMOVDB Z5, qo(DI) \
	VEXTRACTI64X4 $1, Z5, Y6 \
	VPADDD Y6, Y5, Y5 \
	VEXTRACTI128 $1, Y5, X6 \
	VPADDD X6, X5, X5 \
	VPSHUFD $0x4E, X5, X6 \
	VPADDD X6, X5, X5 \
	VPSHUFD $0xB1, X5, X6 \
	VPADDD X6, X5, X5 \
	VMOVD X5, AX \
	MOVW AX, so(DI)

// func q8KBlockAVX512(x *float32, dst *byte) int
// It returns 0 when it wrote the block, 1 when the Go code must: the
// largest magnitude is 0, infinite or NaN, or an element is NaN.
TEXT ·q8KBlockAVX512(SB), NOSPLIT, $0-24
	MOVQ x+0(FP), SI
	MOVQ dst+8(FP), DI
	VBROADCASTSS k8absmask<>(SB), Z31
	VANDPS 0(SI), Z31, Z0
	VANDPS 64(SI), Z31, Z1
	VANDPS 128(SI), Z31, Z2
	VANDPS 192(SI), Z31, Z3
	KXORW K2, K2, K2
	VANDPS 256(SI), Z31, Z4
	VMAXPS Z4, Z0, Z0
	VANDPS 320(SI), Z31, Z4
	VMAXPS Z4, Z1, Z1
	VANDPS 384(SI), Z31, Z4
	VMAXPS Z4, Z2, Z2
	VANDPS 448(SI), Z31, Z4
	VMAXPS Z4, Z3, Z3
	VANDPS 512(SI), Z31, Z4
	VMAXPS Z4, Z0, Z0
	VANDPS 576(SI), Z31, Z4
	VMAXPS Z4, Z1, Z1
	VANDPS 640(SI), Z31, Z4
	VMAXPS Z4, Z2, Z2
	VANDPS 704(SI), Z31, Z4
	VMAXPS Z4, Z3, Z3
	VANDPS 768(SI), Z31, Z4
	VMAXPS Z4, Z0, Z0
	VANDPS 832(SI), Z31, Z4
	VMAXPS Z4, Z1, Z1
	VANDPS 896(SI), Z31, Z4
	VMAXPS Z4, Z2, Z2
	VANDPS 960(SI), Z31, Z4
	VMAXPS Z4, Z3, Z3
	VMAXPS Z1, Z0, Z0
	VMAXPS Z3, Z2, Z2
	VMAXPS Z2, Z0, Z0
	VEXTRACTF64X4 $1, Z0, Y1
	VMAXPS Y1, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VMAXPS X1, X0, X0
	VPERMILPS $0x4E, X0, X1
	VMAXPS X1, X0, X0
	VPERMILPS $0xB1, X0, X1
	VMAXPS X1, X0, X0
	// NaN anywhere, or amax 0 or infinite: leave the block to Go.
	XORQ BX, BX
nanloop:
	VMOVUPS (SI)(BX*1), Z4
	VCMPPS $3, Z4, Z4, K1
	KORW K1, K2, K2
	ADDQ $64, BX
	CMPQ BX, $1024
	JNE nanloop
	KORTESTW K2, K2
	JNZ fallback
	VXORPS X1, X1, X1
	VUCOMISS X1, X0
	JEQ fallback
	VUCOMISS k8inf<>(SB), X0
	JAE fallback
	// The first element whose magnitude is amax.
	VBROADCASTSS X0, Z0
	XORQ BX, BX
findloop:
	VANDPS (SI)(BX*1), Z31, Z4
	VCMPPS $0, Z0, Z4, K1
	KMOVW K1, AX
	TESTL AX, AX
	JNZ found
	ADDQ $64, BX
	CMPQ BX, $1024
	JNE findloop
	JMP fallback
found:
	TZCNTL AX, AX
	LEAQ (BX)(AX*4), AX
	VMOVSS (SI)(AX*1), X1
	VMOVSS k8m127<>(SB), X2
	VDIVSS X1, X2, X2
	VMOVSS k8one<>(SB), X3
	VDIVSS X2, X3, X3
	VMOVSS X3, (DI)
	VBROADCASTSS X2, Z2
	VPBROADCASTD k8i127<>(SB), Z30
	Q8KG(0, 4, 260)
	Q8KG(64, 20, 262)
	Q8KG(128, 36, 264)
	Q8KG(192, 52, 266)
	Q8KG(256, 68, 268)
	Q8KG(320, 84, 270)
	Q8KG(384, 100, 272)
	Q8KG(448, 116, 274)
	Q8KG(512, 132, 276)
	Q8KG(576, 148, 278)
	Q8KG(640, 164, 280)
	Q8KG(704, 180, 282)
	Q8KG(768, 196, 284)
	Q8KG(832, 212, 286)
	Q8KG(896, 228, 288)
	Q8KG(960, 244, 290)
	MOVQ $0, ret+16(FP)
	VZEROUPPER
	RET
fallback:
	MOVQ $1, ret+16(FP)
	VZEROUPPER
	RET
