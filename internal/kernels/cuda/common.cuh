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
#define T_Q8_0 8

// Byte sizes of one quantized block of 32 elements.
#define QK 32
#define Q4_0_BYTES 18
#define Q8_0_BYTES 34

static __device__ __forceinline__ float f16_to_f32(const char *p) {
    return __half2float(*(const __half *)p);
}

static __device__ __forceinline__ float half_bits_to_f32(unsigned short bits) {
    return __half2float(__ushort_as_half(bits));
}

// load_elem reads element k of a row of type t that starts at row.
static __device__ __forceinline__ float load_elem(const char *row, i64 k, i64 nb0, int t) {
    switch (t) {
    case T_F32:
        return *(const float *)(row + k * nb0);
    case T_F16:
        return f16_to_f32(row + k * nb0);
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
    return 0.0f;
}

static __device__ __forceinline__ void store_elem(char *p, float v, int t) {
    if (t == T_F16) {
        *(__half *)p = __float2half_rn(v);
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
