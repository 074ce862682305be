// CPU emulation of the CUDA C subset gogml's kernels use, so that the
// kernels can be compiled with a host C++ compiler (g++ -DGOGML_EMU) and
// run on machines without a GPU. Each thread of a block is a fiber
// (ucontext); __syncthreads yields to the scheduler, which resumes every
// fiber of the block in turn, so a barrier is passed only when all threads
// have reached it. Blocks run one after another, so __shared__ variables
// become plain statics.
#pragma once

#include <math.h>
#include <stdint.h>
#include <string.h>

#define __global__
#define __device__
#define __forceinline__ inline
#define __shared__ static
#define __launch_bounds__(n)

struct emu_dim3 {
    unsigned x, y, z;
};

extern emu_dim3 threadIdx, blockIdx, blockDim, gridDim;
extern unsigned char emu_dyn_shared[];

#define DYN_SHARED(T, name) T *name = (T *)emu_dyn_shared

void __syncthreads();

struct __half {
    unsigned short bits;
};

static inline float emu_h2f(unsigned short h) {
    const unsigned sign = (unsigned)(h >> 15) << 31;
    const unsigned exp = (h >> 10) & 0x1f;
    const unsigned man = h & 0x3ff;
    unsigned bits;
    if (exp == 0) {
        if (man == 0) {
            bits = sign;
        } else {
            float f = (float)man / 1024.0f / 16384.0f; // subnormal: man * 2^-24
            memcpy(&bits, &f, 4);
            bits |= sign;
        }
    } else if (exp == 31) {
        bits = sign | 0x7f800000u | (man << 13);
    } else {
        bits = sign | ((exp + 112) << 23) | (man << 13);
    }
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

static inline unsigned short emu_f2h(float f) {
    unsigned x;
    memcpy(&x, &f, 4);
    const unsigned sign = (x >> 16) & 0x8000;
    const unsigned absx = x & 0x7fffffff;
    if (absx >= 0x7f800000) { // inf or nan
        return (unsigned short)(sign | 0x7c00 | (absx > 0x7f800000 ? 0x200 : 0));
    }
    if (absx >= 0x477ff000) { // rounds to beyond the largest half
        return (unsigned short)(sign | 0x7c00);
    }
    if (absx < 0x38800000) { // subnormal half (or zero): round to multiple of 2^-24
        float a;
        memcpy(&a, &absx, 4);
        const float q = nearbyintf(a * 16777216.0f); // round half to even
        return (unsigned short)(sign | (unsigned)q);
    }
    // Normal: round the 23-bit mantissa to 10 bits, half to even.
    unsigned m = absx + 0xfff + ((absx >> 13) & 1);
    return (unsigned short)(sign | ((m - 0x38000000) >> 13));
}

static inline float __half2float(__half h) { return emu_h2f(h.bits); }
static inline __half __float2half_rn(float f) { return __half{emu_f2h(f)}; }
static inline __half __ushort_as_half(unsigned short b) { return __half{b}; }
static inline unsigned short __half_as_ushort(__half h) { return h.bits; }
// Fibers of one block never run at the same time: a plain exchange is
// atomic here.
static inline int atomicExch(int *p, int v) {
    const int old = *p;
    *p = v;
    return old;
}
static inline float __int_as_float(int i) {
    float f;
    memcpy(&f, &i, 4);
    return f;
}
static inline int __float_as_int(float f) {
    int i;
    memcpy(&i, &f, 4);
    return i;
}
// The host compiler is not asked to contract (no -mfma), so a product
// rounds on its own as __fmul_rn's does.
static inline float __fmul_rn(float a, float b) { return a * b; }
