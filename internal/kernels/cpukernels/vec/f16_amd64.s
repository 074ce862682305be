#include "textflag.h"

// Hardware f32 <-> f16 conversion (F16C; AVX-512 F for the 16-wide
// forms). VCVTPS2PH's immediate 0 rounds to nearest with ties to even.

// func f32ToF16F16C(dst *uint16, src *float32, n int): n a multiple of 8.
TEXT ·f32ToF16F16C(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	SHRQ $3, CX
	JZ   h8done
h8loop:
	VMOVUPS   (SI), Y0
	VCVTPS2PH $0, Y0, (DI)
	ADDQ      $32, SI
	ADDQ      $16, DI
	DECQ      CX
	JNZ       h8loop
h8done:
	VZEROUPPER
	RET

// func f16ToF32F16C(dst *float32, src *uint16, n int): n a multiple of 8.
TEXT ·f16ToF32F16C(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	SHRQ $3, CX
	JZ   s8done
s8loop:
	VCVTPH2PS (SI), Y0
	VMOVUPS   Y0, (DI)
	ADDQ      $16, SI
	ADDQ      $32, DI
	DECQ      CX
	JNZ       s8loop
s8done:
	VZEROUPPER
	RET

// func f32ToF16AVX512(dst *uint16, src *float32, n int): n a multiple of 32.
TEXT ·f32ToF16AVX512(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	SHRQ $5, CX
	JZ   h32done
h32loop:
	VMOVUPS   (SI), Z0
	VMOVUPS   64(SI), Z1
	VCVTPS2PH $0, Z0, (DI)
	VCVTPS2PH $0, Z1, 32(DI)
	ADDQ      $128, SI
	ADDQ      $64, DI
	DECQ      CX
	JNZ       h32loop
h32done:
	VZEROUPPER
	RET

// func f16ToF32AVX512(dst *float32, src *uint16, n int): n a multiple of 32.
TEXT ·f16ToF32AVX512(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	SHRQ $5, CX
	JZ   s32done
s32loop:
	VCVTPH2PS (SI), Z0
	VCVTPH2PS 32(SI), Z1
	VMOVUPS   Z0, (DI)
	VMOVUPS   Z1, 64(DI)
	ADDQ      $64, SI
	ADDQ      $128, DI
	DECQ      CX
	JNZ       s32loop
s32done:
	VZEROUPPER
	RET
