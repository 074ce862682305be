// Shared definitions of gogml's CUDA kernels.
//
// Every kernel is extern "C" so that its PTX entry keeps a plain name, and
// takes only scalars, device addresses (as char pointers, .u64 in PTX) and
// the by-value struct shape4 (a 64-byte, 8-aligned .b8 array in PTX). The
// Go side packs arguments with the same widths and order; a Go test reads
// the generated PTX and checks each kernel's parameter list against it.
#pragma once

#ifdef GOGML_EMU
// Host build for the CPU emulator of the kernels (kernels/cuda/emu), used
// by tests on machines without a GPU.
#include "emu/emu.h"
#else
#include <cuda_fp16.h>
// DYN_SHARED declares the kernel's dynamic shared memory as an array.
#define DYN_SHARED(T, name) extern __shared__ T name[]
#endif

typedef long long i64;

// shape4 is a tensor's layout: elements per dimension and byte strides,
// exactly the Go runtime's Ne and Nb.
struct shape4 {
    i64 ne[4];
    i64 nb[4];
};

// Element type codes, the ggml type numbers.
#define T_F32 0
#define T_F16 1
#define T_Q4_0 2
#define T_Q4_1 3
#define T_Q5_0 6
#define T_Q5_1 7
#define T_Q8_0 8
#define T_Q8_1 9
#define T_Q2_K 10
#define T_Q3_K 11
#define T_Q4_K 12
#define T_Q5_K 13
#define T_Q6_K 14
#define T_Q8_K 15
#define T_BF16 30

// Byte sizes of one quantized block: 32 elements for q4_0..q8_0, 256
// (a super-block) for the k-quants. The layouts are ggml's
// (ggml-common.h), read byte by byte, so blocks need no alignment.
#define QK 32
#define QKK 256
#define Q4_0_BYTES 18
#define Q4_1_BYTES 20
#define Q5_0_BYTES 22
#define Q5_1_BYTES 24
#define Q8_0_BYTES 34
#define Q2_K_BYTES 84
#define Q3_K_BYTES 110
#define Q4_K_BYTES 144
#define Q5_K_BYTES 176
#define Q6_K_BYTES 210

static __device__ __forceinline__ float f16_to_f32(const char *p) {
    return __half2float(*(const __half *)p);
}

static __device__ __forceinline__ float half_bits_to_f32(unsigned short bits) {
    return __half2float(__ushort_as_half(bits));
}

// ld_f16 reads the little-endian f16 at byte p of a block.
static __device__ __forceinline__ float ld_f16(const unsigned char *p) {
    return half_bits_to_f32((unsigned short)(p[0] | (p[1] << 8)));
}

// k4_scale_min is ggml's get_scale_min_k4: the 6-bit scale (*sc) and min
// (*m) of sub-block j (0..7) of a q4_K / q5_K block, from its 12 scale
// bytes q.
static __device__ __forceinline__ void k4_scale_min(const unsigned char *q, int j, int *sc, int *m) {
    if (j < 4) {
        *sc = q[j] & 63;
        *m = q[j + 4] & 63;
    } else {
        *sc = (q[j + 4] & 0x0F) | ((q[j - 4] >> 6) << 4);
        *m = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
    }
}

// load_quant is element k of a dense row of quantized type t (not q4_0 or
// q8_0) starting at row, with the operations and their order of ggml's
// dequantize_row_* (products kept apart from sums with __fmul_rn, so no
// fused multiply-add rounds differently from the CPU).
// With with_min false, q4_1 and q5_1 leave their block's offset m out
// (MUL_MAT adds it against q8_1's block sums).
static __device__ __forceinline__ float load_quant(const char *row, i64 k, int t, bool with_min = true) {
    const unsigned char *r = (const unsigned char *)row;
    switch (t) {
    case T_Q4_1:
    case T_Q5_0:
    case T_Q5_1: {
        const int bs = t == T_Q4_1 ? Q4_1_BYTES : (t == T_Q5_0 ? Q5_0_BYTES : Q5_1_BYTES);
        const unsigned char *b = r + (k / QK) * bs;
        const int j = (int)(k % QK);
        const unsigned char *qs = b + bs - 16;
        int q = j < 16 ? (qs[j] & 0x0F) : (qs[j - 16] >> 4);
        const float d = ld_f16(b);
        if (t == T_Q4_1) {
            return with_min ? __fmul_rn((float)q, d) + ld_f16(b + 2) : (float)q * d;
        }
        // The fifth bit of element j is bit j of the little-endian qh.
        q |= ((qs[-4 + (j >> 3)] >> (j & 7)) & 1) << 4;
        if (t == T_Q5_0) {
            return (float)(q - 16) * d;
        }
        return with_min ? __fmul_rn((float)q, d) + ld_f16(b + 2) : (float)q * d;
    }
    case T_Q2_K: {
        const unsigned char *b = r + (k / QKK) * Q2_K_BYTES;
        const int e = (int)(k % QKK);
        const int sc = b[e >> 4];
        const int q = (b[16 + (e >> 7) * 32 + (e & 31)] >> (2 * ((e >> 5) & 3))) & 3;
        const float dl = ld_f16(b + 80) * (float)(sc & 0x0F);
        const float ml = ld_f16(b + 82) * (float)(sc >> 4);
        return __fmul_rn(dl, (float)q) - ml;
    }
    case T_Q3_K: {
        const unsigned char *b = r + (k / QKK) * Q3_K_BYTES;
        const int e = (int)(k % QKK);
        const int l = e & 31, n = e >> 7, j = (e >> 5) & 3, s = e >> 4;
        const unsigned char *scales = b + 96;
        const int lo = s < 8 ? (scales[s] & 0x0F) : (scales[s - 8] >> 4);
        const int hi = (scales[8 + (s & 3)] >> (2 * (s >> 2))) & 3;
        int q = (b[32 + n * 32 + l] >> (2 * j)) & 3;
        if (!(b[l] & (1 << (n * 4 + j)))) {
            q -= 4;
        }
        const float dl = ld_f16(b + 108) * (float)((lo | (hi << 4)) - 32);
        return dl * (float)q;
    }
    case T_Q4_K:
    case T_Q5_K: {
        const bool q5 = t == T_Q5_K;
        const unsigned char *b = r + (k / QKK) * (q5 ? Q5_K_BYTES : Q4_K_BYTES);
        const int e = (int)(k % QKK);
        const int l = e & 31, sub = e >> 5;
        const unsigned char byte = b[(q5 ? 48 : 16) + (e >> 6) * 32 + l];
        int q = (sub & 1) ? (byte >> 4) : (byte & 0x0F);
        if (q5) {
            q += ((b[16 + l] >> sub) & 1) << 4;
        }
        int sc, m;
        k4_scale_min(b + 4, sub, &sc, &m);
        const float d1 = ld_f16(b) * (float)sc;
        const float m1 = ld_f16(b + 2) * (float)m;
        return __fmul_rn(d1, (float)q) - m1;
    }
    case T_Q6_K: {
        const unsigned char *b = r + (k / QKK) * Q6_K_BYTES;
        const int e = (int)(k % QKK);
        const int l = e & 31, n = e >> 7, g = (e >> 5) & 3;
        const unsigned char lb = b[n * 64 + (g & 1) * 32 + l];
        const int lo = g >= 2 ? (lb >> 4) : (lb & 0x0F);
        const int hi = (b[128 + n * 32 + l] >> (2 * g)) & 3;
        const float dl = ld_f16(b + 208) * (float)(signed char)b[192 + (e >> 4)];
        return dl * (float)((lo | (hi << 4)) - 32);
    }
    }
    return 0.0f;
}

// load_elem reads element k of a row of type t that starts at row
// (nb0 is the element stride of the float types; quantized rows are
// dense).
static __device__ __forceinline__ float load_elem(const char *row, i64 k, i64 nb0, int t) {
    switch (t) {
    case T_F32:
        return *(const float *)(row + k * nb0);
    case T_F16:
        return f16_to_f32(row + k * nb0);
    case T_BF16:
        return __int_as_float((int)((unsigned)*(const unsigned short *)(row + k * nb0) << 16));
    case T_Q4_0: {
        const unsigned char *b = (const unsigned char *)row + (k / QK) * Q4_0_BYTES;
        const int j = (int)(k % QK);
        const float d = half_bits_to_f32((unsigned short)(b[0] | (b[1] << 8)));
        const int q = j < 16 ? (b[2 + j] & 0x0F) : (b[2 + j - 16] >> 4);
        return (float)(q - 8) * d;
    }
    case T_Q8_0: {
        const unsigned char *b = (const unsigned char *)row + (k / QK) * Q8_0_BYTES;
        const int j = (int)(k % QK);
        const float d = half_bits_to_f32((unsigned short)(b[0] | (b[1] << 8)));
        return (float)((const signed char *)b)[2 + j] * d;
    }
    }
    return load_quant(row, k, t);
}

// f32_to_bf16 rounds v to bfloat16 bits as ggml's GGML_FP32_TO_BF16:
// nearest with ties to even, NaN kept quiet.
static __device__ __forceinline__ unsigned short f32_to_bf16(float v) {
    const unsigned u = (unsigned)__float_as_int(v);
    if ((u & 0x7fffffffu) > 0x7f800000u) {
        return (unsigned short)((u >> 16) | 64);
    }
    return (unsigned short)((u + 0x7fffu + ((u >> 16) & 1)) >> 16);
}

static __device__ __forceinline__ void store_elem(char *p, float v, int t) {
    if (t == T_F16) {
        *(__half *)p = __float2half_rn(v);
    } else if (t == T_BF16) {
        *(unsigned short *)p = f32_to_bf16(v);
    } else {
        *(float *)p = v;
    }
}

// row_offset returns the byte offset of row r (counting rows over
// dimensions 1..3) in a tensor of shape s.
static __device__ __forceinline__ i64 row_offset(const shape4 &s, i64 r, i64 *i1, i64 *i2, i64 *i3) {
    const i64 n1 = s.ne[1], n2 = s.ne[2];
    *i1 = r % n1;
    const i64 q = r / n1;
    *i2 = q % n2;
    *i3 = q / n2;
    return *i1 * s.nb[1] + *i2 * s.nb[2] + *i3 * s.nb[3];
}

static __device__ __forceinline__ i64 nrows(const shape4 &s) {
    return s.ne[1] * s.ne[2] * s.ne[3];
}

// Block-wide sum of v over blockDim.x threads (a power of two, at most
// 1024), using shared scratch of blockDim.x floats. All threads get the
// result.
static __device__ __forceinline__ float block_sum(float v, float *scratch) {
    const int t = threadIdx.x;
    scratch[t] = v;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (t < s) {
            scratch[t] += scratch[t + s];
        }
        __syncthreads();
    }
    const float r = scratch[0];
    __syncthreads();
    return r;
}

// Block-wide maximum, as block_sum.
static __device__ __forceinline__ float block_max(float v, float *scratch) {
    const int t = threadIdx.x;
    scratch[t] = v;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (t < s) {
            scratch[t] = fmaxf(scratch[t], scratch[t + s]);
        }
        __syncthreads();
    }
    const float r = scratch[0];
    __syncthreads();
    return r;
}
