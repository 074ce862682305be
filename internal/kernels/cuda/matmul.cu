// Matrix multiplication in ggml's convention: dst[i, j] = sum over k of
// a[k, i] * b[k, j], with a's matrices broadcast over b's in dimensions 2
// and 3. a is f32, f16, q4_0 or q8_0 (dequantized while loading), b and
// dst are f32. Any strides (views, transposes) are allowed.
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

// Activations for q8_0/q4_0 weights, rounded as ggml's CPU path (and the
// CPU backend) quantizes them before its integer dot products: each block
// of 32 elements of a row of a (f32) becomes q8_0 (scale amax/127 stored as
// f16, values round-half-away(x / scale) as int8), written back expanded
// to f32 in dst (a's shape, dense). The product of that with the weights
// then matches the reference's q8_0 dots up to float summation order. One
// thread per block, grid-stride over all blocks of all rows.
extern "C" __global__ void k_quant_q8_0_f32(char *dst, shape4 d, const char *a, shape4 sa) {
    const i64 nblk = sa.ne[0] / QK;
    const i64 total = nblk * nrows(sa);
    for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += (i64)gridDim.x * blockDim.x) {
        const i64 r = i / nblk;
        const i64 blk = i % nblk;
        i64 i1, i2, i3;
        const i64 oa = row_offset(sa, r, &i1, &i2, &i3) + blk * QK * sa.nb[0];
        const i64 od = i1 * d.nb[1] + i2 * d.nb[2] + i3 * d.nb[3] + blk * QK * d.nb[0];
        float x[QK];
        float amax = 0.0f;
#pragma unroll
        for (int j = 0; j < QK; j++) {
            x[j] = *(const float *)(a + oa + j * sa.nb[0]);
            amax = fmaxf(amax, fabsf(x[j]));
        }
        const float scale = amax / 127.0f;
        const float inv = scale != 0.0f ? 1.0f / scale : 0.0f;
        const float stored = __half2float(__float2half_rn(scale));
#pragma unroll
        for (int j = 0; j < QK; j++) {
            *(float *)(dst + od + j * d.nb[0]) = roundf(x[j] * inv) * stored;
        }
    }
}
