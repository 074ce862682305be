// Matrix multiplication in ggml's convention: dst[i, j] = sum over k of
// a[k, i] * b[k, j], with a's matrices broadcast over b's in dimensions 2
// and 3. a is f32, f16, bf16 or a block type (q4_0, q4_1, q5_0, q5_1,
// q8_0, q2_K..q6_K; dequantized while loading, rows dense), b and dst are
// f32. Any strides (views, transposes) are allowed for the float types.
//
// Launch shape: 256 threads, gridDim.x = ceil(ne01 / 64) tiles of dst rows
// i, gridDim.y = ceil(ne11 / 64) tiles of columns j, gridDim.z = ne12*ne13
// batches. Each thread computes a 4x4 block of a 64x64 tile.
#include "common.cuh"

#define TM 64
#define TN 64
#define TK 16

template <int AT>
static __device__ __forceinline__ void mul_mat_tile(char *dst, const shape4 &d, const char *a,
                                                    const shape4 &sa, const char *b,
                                                    const shape4 &sb) {
    __shared__ float as[TK][TM + 1];
    __shared__ float bs[TK][TN + 1];

    const i64 K = sa.ne[0];
    const i64 M = sa.ne[1];
    const i64 N = sb.ne[1];
    const i64 z = blockIdx.z;
    const i64 i12 = z % sb.ne[2];
    const i64 i13 = z / sb.ne[2];
    const i64 i02 = i12 / (sb.ne[2] / sa.ne[2]);
    const i64 i03 = i13 / (sb.ne[3] / sa.ne[3]);
    const char *abase = a + i02 * sa.nb[2] + i03 * sa.nb[3];
    const char *bbase = b + i12 * sb.nb[2] + i13 * sb.nb[3];

    const int tid = threadIdx.x;
    const i64 m0 = (i64)blockIdx.x * TM;
    const i64 n0 = (i64)blockIdx.y * TN;
    const int tm = (tid % 16) * 4; // this thread's 4 rows within the tile
    const int tn = (tid / 16) * 4; // and 4 columns

    float acc[4][4];
#pragma unroll
    for (int x = 0; x < 4; x++) {
#pragma unroll
        for (int y = 0; y < 4; y++) {
            acc[x][y] = 0.0f;
        }
    }

    for (i64 k0 = 0; k0 < K; k0 += TK) {
        // Each of the 256 threads loads 4 elements of each 16x64 slab;
        // consecutive threads take consecutive k for coalesced rows.
#pragma unroll
        for (int l = 0; l < 4; l++) {
            const int e = tid + l * 256;
            const int kk = e % TK;
            const int mm = e / TK;
            const i64 k = k0 + kk;
            const i64 m = m0 + mm;
            float v = 0.0f;
            if (k < K && m < M) {
                v = load_elem(abase + m * sa.nb[1], k, sa.nb[0], AT);
            }
            as[kk][mm] = v;
            const i64 n = n0 + mm;
            float w = 0.0f;
            if (k < K && n < N) {
                w = *(const float *)(bbase + n * sb.nb[1] + k * sb.nb[0]);
            }
            bs[kk][mm] = w;
        }
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < TK; kk++) {
            float av[4], bv[4];
#pragma unroll
            for (int x = 0; x < 4; x++) {
                av[x] = as[kk][tm + x];
                bv[x] = bs[kk][tn + x];
            }
#pragma unroll
            for (int x = 0; x < 4; x++) {
#pragma unroll
                for (int y = 0; y < 4; y++) {
                    acc[x][y] = fmaf(av[x], bv[y], acc[x][y]);
                }
            }
        }
        __syncthreads();
    }

    char *dbase = dst + i12 * d.nb[2] + i13 * d.nb[3];
#pragma unroll
    for (int x = 0; x < 4; x++) {
        const i64 m = m0 + tm + x;
        if (m >= M) {
            continue;
        }
#pragma unroll
        for (int y = 0; y < 4; y++) {
            const i64 n = n0 + tn + y;
            if (n < N) {
                *(float *)(dbase + m * d.nb[0] + n * d.nb[1]) = acc[x][y];
            }
        }
    }
}

extern "C" __global__ void __launch_bounds__(256) k_mul_mat_f32(char *dst, shape4 d, const char *a, shape4 sa, const char *b, shape4 sb) {
    mul_mat_tile<T_F32>(dst, d, a, sa, b, sb);
}

extern "C" __global__ void __launch_bounds__(256) k_mul_mat_f16(char *dst, shape4 d, const char *a, shape4 sa, const char *b, shape4 sb) {
    mul_mat_tile<T_F16>(dst, d, a, sa, b, sb);
}

extern "C" __global__ void __launch_bounds__(256) k_mul_mat_q4_0(char *dst, shape4 d, const char *a, shape4 sa, const char *b, shape4 sb) {
    mul_mat_tile<T_Q4_0>(dst, d, a, sa, b, sb);
}

extern "C" __global__ void __launch_bounds__(256) k_mul_mat_q8_0(char *dst, shape4 d, const char *a, shape4 sa, const char *b, shape4 sb) {
    mul_mat_tile<T_Q8_0>(dst, d, a, sa, b, sb);
}

// The other weight types, dequantized while loading as above.
#define MUL_MAT_TYPE(name, T)                                                                          \
    extern "C" __global__ void __launch_bounds__(256)                                                  \
        k_mul_mat_##name(char *dst, shape4 d, const char *a, shape4 sa, const char *b, shape4 sb) {    \
        mul_mat_tile<T>(dst, d, a, sa, b, sb);                                                         \
    }                                                                                                  \
    extern "C" __global__ void k_mul_mat_vec_##name(char *dst, shape4 d, const char *a, shape4 sa,     \
                                                    const char *b, shape4 sb) {                        \
        mul_mat_vec<T>(dst, d, a, sa, b, sb);                                                          \
    }

// Matrix-vector product for one column (ne11 == 1): one warp-sized group
// of 32 threads per dst row, blockDim.x = 256 (8 rows per block),
// gridDim.x = ceil(ne01 / 8), gridDim.y = ne12*ne13 batches.
template <int AT>
static __device__ __forceinline__ void mul_mat_vec(char *dst, const shape4 &d, const char *a,
                                                   const shape4 &sa, const char *b,
                                                   const shape4 &sb) {
    __shared__ float part[256];
    const i64 K = sa.ne[0];
    const i64 M = sa.ne[1];
    const i64 z = blockIdx.y;
    const i64 i12 = z % sb.ne[2];
    const i64 i13 = z / sb.ne[2];
    const i64 i02 = i12 / (sb.ne[2] / sa.ne[2]);
    const i64 i03 = i13 / (sb.ne[3] / sa.ne[3]);
    const int lane = threadIdx.x % 32;
    const i64 m = (i64)blockIdx.x * 8 + threadIdx.x / 32;
    float s = 0.0f;
    if (m < M) {
        const char *arow = a + i02 * sa.nb[2] + i03 * sa.nb[3] + m * sa.nb[1];
        const char *bcol = b + i12 * sb.nb[2] + i13 * sb.nb[3];
        for (i64 k = lane; k < K; k += 32) {
            s += load_elem(arow, k, sa.nb[0], AT) * *(const float *)(bcol + k * sb.nb[0]);
        }
    }
    part[threadIdx.x] = s;
    __syncthreads();
    for (int w = 16; w > 0; w >>= 1) {
        if (lane < w) {
            part[threadIdx.x] += part[threadIdx.x + w];
        }
        __syncthreads();
    }
    if (lane == 0 && m < M) {
        *(float *)(dst + i12 * d.nb[2] + i13 * d.nb[3] + m * d.nb[0]) = part[threadIdx.x];
    }
}

extern "C" __global__ void k_mul_mat_vec_f32(char *dst, shape4 d, const char *a, shape4 sa, const char *b, shape4 sb) {
    mul_mat_vec<T_F32>(dst, d, a, sa, b, sb);
}

extern "C" __global__ void k_mul_mat_vec_f16(char *dst, shape4 d, const char *a, shape4 sa, const char *b, shape4 sb) {
    mul_mat_vec<T_F16>(dst, d, a, sa, b, sb);
}

extern "C" __global__ void k_mul_mat_vec_q4_0(char *dst, shape4 d, const char *a, shape4 sa, const char *b, shape4 sb) {
    mul_mat_vec<T_Q4_0>(dst, d, a, sa, b, sb);
}

extern "C" __global__ void k_mul_mat_vec_q8_0(char *dst, shape4 d, const char *a, shape4 sa, const char *b, shape4 sb) {
    mul_mat_vec<T_Q8_0>(dst, d, a, sa, b, sb);
}

// Activations rounded as ggml's CPU backend rounds them before its dot
// products (the weights' vec_dot type, vt): each element of a (f32, any
// strides) is written to dst (a's shape, dense f32) as the value its
// rounded form stands for, so that the float product of the result with
// the dequantized weights matches the CPU's up to summation order.
//   T_F16, T_BF16: the element rounded to that type (nearest, ties to
//     even; bf16 as GGML_FP32_TO_BF16).
//   T_Q8_0, T_Q8_1 (the same quants and scale; q8_1's sum is not needed
//     here): per block of 32, d = amax/127 stored as f16, q = x*(127/amax)
//     rounded to nearest with ties to even (the x86 quantizer) and
//     saturated; the value is q * d.
//   T_Q8_K: per block of 256, m the element of largest magnitude (the
//     first), iscale = -127/m, q = min(127, round-ties-even(iscale*x)),
//     d = 1/iscale as f32; the value is d * q (ggml's quantize_row_q8_K).
// One thread per block (per element for f16/bf16), grid-stride.
extern "C" __global__ void k_round_act_f32(char *dst, shape4 d, const char *a, shape4 sa, int vt) {
    const i64 bs = vt == T_Q8_K ? QKK : ((vt == T_Q8_0 || vt == T_Q8_1) ? QK : 1);
    const i64 nblk = sa.ne[0] / bs;
    const i64 total = nblk * nrows(sa);
    for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += (i64)gridDim.x * blockDim.x) {
        const i64 r = i / nblk;
        const i64 blk = i % nblk;
        i64 i1, i2, i3;
        const char *x = a + row_offset(sa, r, &i1, &i2, &i3) + blk * bs * sa.nb[0];
        char *y = dst + i1 * d.nb[1] + i2 * d.nb[2] + i3 * d.nb[3] + blk * bs * d.nb[0];
        if (bs == 1) {
            const float v = *(const float *)x;
            *(float *)y = vt == T_F16 ? __half2float(__float2half_rn(v))
                                      : __int_as_float((int)((unsigned)f32_to_bf16(v) << 16));
            continue;
        }
        float amax = 0.0f, m = 0.0f;
        for (int j = 0; j < bs; j++) {
            const float v = *(const float *)(x + j * sa.nb[0]);
            if (fabsf(v) > amax) {
                amax = fabsf(v);
                m = v;
            }
        }
        if (vt == T_Q8_K) {
            const float iscale = amax != 0.0f ? -127.0f / m : 0.0f;
            const float scale = amax != 0.0f ? 1.0f / iscale : 0.0f;
            for (int j = 0; j < bs; j++) {
                const float q = fminf(127.0f, rintf(iscale * *(const float *)(x + j * sa.nb[0])));
                *(float *)(y + j * d.nb[0]) = scale * q;
            }
            continue;
        }
        const float id = amax != 0.0f ? 127.0f / amax : 0.0f;
        const float stored = __half2float(__float2half_rn(amax / 127.0f));
        for (int j = 0; j < bs; j++) {
            const float q = fminf(127.0f, fmaxf(-128.0f, rintf(*(const float *)(x + j * sa.nb[0]) * id)));
            *(float *)(y + j * d.nb[0]) = q * stored;
        }
    }
}

MUL_MAT_TYPE(bf16, T_BF16)
MUL_MAT_TYPE(q4_1, T_Q4_1)
MUL_MAT_TYPE(q5_0, T_Q5_0)
MUL_MAT_TYPE(q5_1, T_Q5_1)
MUL_MAT_TYPE(q2_k, T_Q2_K)
MUL_MAT_TYPE(q3_k, T_Q3_K)
MUL_MAT_TYPE(q4_k, T_Q4_K)
MUL_MAT_TYPE(q5_k, T_Q5_K)
MUL_MAT_TYPE(q6_k, T_Q6_K)
