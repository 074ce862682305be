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

// HAS_MIN is true for the weight types whose products with q8_1
// activations take the activations' block sums for the blocks' offsets m,
// as ggml's CPU dots do: d_w*d_a*sum(q_w*q_a) + m*s, where s is q8_1's
// f16 s = d_a*sum(q_a), not the sum of the rounded activations.
#define HAS_MIN(t) ((t) == T_Q4_1 || (t) == T_Q5_1)

// load_weight is element k of a row of a: load_elem's value, without the
// block offset for the HAS_MIN types.
static __device__ __forceinline__ float load_weight(const char *row, i64 k, i64 nb0, int t) {
    if (HAS_MIN(t)) {
        return load_quant(row, k, t, false);
    }
    return load_elem(row, k, nb0, t);
}

// block_min is the offset m of block blk of a q4_1 / q5_1 row.
static __device__ __forceinline__ float block_min(const char *row, i64 blk, int t) {
    return ld_f16((const unsigned char *)row + blk * (t == T_Q4_1 ? Q4_1_BYTES : Q5_1_BYTES) + 2);
}

template <int AT>
static __device__ __forceinline__ void mul_mat_tile(char *dst, const shape4 &d, const char *a,
                                                    const shape4 &sa, const char *b,
                                                    const shape4 &sb, const char *bsum) {
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
                v = load_weight(abase + m * sa.nb[1], k, sa.nb[0], AT);
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
        if (HAS_MIN(AT) && ((k0 + TK) % QK == 0 || k0 + TK >= K)) {
            // The block that ends with this slab: m * s for each pair.
            const i64 blk = k0 / QK;
            const i64 nblk = K / QK;
#pragma unroll
            for (int x = 0; x < 4; x++) {
                const i64 m = m0 + tm + x;
                const float mv = m < M ? block_min(abase + m * sa.nb[1], blk, AT) : 0.0f;
#pragma unroll
                for (int y = 0; y < 4; y++) {
                    const i64 n = n0 + tn + y;
                    if (n < N) {
                        acc[x][y] = fmaf(mv, ((const float *)bsum)[(n + N * z) * nblk + blk], acc[x][y]);
                    }
                }
            }
        }
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

// Matrix-vector product for one column (ne11 == 1): one warp-sized group
// of 32 threads per dst row, blockDim.x = 256 (8 rows per block),
// gridDim.x = ceil(ne01 / 8), gridDim.y = ne12*ne13 batches.
template <int AT>
static __device__ __forceinline__ void mul_mat_vec(char *dst, const shape4 &d, const char *a,
                                                   const shape4 &sa, const char *b,
                                                   const shape4 &sb, const char *bsum) {
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
            s += load_weight(arow, k, sa.nb[0], AT) * *(const float *)(bcol + k * sb.nb[0]);
            if (HAS_MIN(AT) && lane == 0) {
                // Lane 0 visits each block's first element once.
                s += block_min(arow, k / QK, AT) * ((const float *)bsum)[z * (K / QK) + k / QK];
            }
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

// The kernels of each weight type: k_mul_mat_TYPE and k_mul_mat_vec_TYPE,
// with TYPE runtime.Type's name. bsum is q8_1's block sums (f32, one per
// block of 32 of each dense row of the rounded b) for the HAS_MIN types,
// unused by the others.
#define MUL_MAT_TYPE(name, T)                                                                          \
    extern "C" __global__ void __launch_bounds__(256)                                                  \
        k_mul_mat_##name(char *dst, shape4 d, const char *a, shape4 sa, const char *b, shape4 sb,      \
                         const char *bsum) {                                                           \
        mul_mat_tile<T>(dst, d, a, sa, b, sb, bsum);                                                   \
    }                                                                                                  \
    extern "C" __global__ void k_mul_mat_vec_##name(char *dst, shape4 d, const char *a, shape4 sa,     \
                                                    const char *b, shape4 sb, const char *bsum) {      \
        mul_mat_vec<T>(dst, d, a, sa, b, sb, bsum);                                                    \
    }

MUL_MAT_TYPE(f32, T_F32)
MUL_MAT_TYPE(f16, T_F16)
MUL_MAT_TYPE(q4_0, T_Q4_0)
MUL_MAT_TYPE(q8_0, T_Q8_0)
// Activations rounded as ggml's CPU backend rounds them before its dot
// products (the weights' vec_dot type, vt): each element of a (f32, any
// strides) is written to dst (a's shape, dense f32) as the value its
// rounded form stands for, so that the float product of the result with
// the dequantized weights matches the CPU's up to summation order.
//   T_F16, T_BF16: the element rounded to that type (nearest, ties to
//     even; bf16 as GGML_FP32_TO_BF16).
//   T_Q8_0, T_Q8_1 (the same quants and scale): per block of 32,
//     d = amax/127 stored as f16, q = x*(127/amax) rounded to nearest with
//     ties to even (the x86 quantizer) and saturated; the value is q * d.
//     For q8_1, sums[block] (blocks counted over dense rows) is its f16
//     s = d*sum(q) (d before rounding to f16, q before saturating).
//   T_Q8_K: per block of 256, m the element of largest magnitude (the
//     first), iscale = -127/m, q = min(127, round-ties-even(iscale*x)),
//     d = 1/iscale as f32; the value is d * q (ggml's quantize_row_q8_K).
// One thread per block (per element for f16/bf16), grid-stride.
extern "C" __global__ void k_round_act_f32(char *dst, shape4 d, const char *a, shape4 sa, int vt, char *sums) {
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
        const float scale = amax / 127.0f;
        const float stored = __half2float(__float2half_rn(scale));
        int sum = 0;
        for (int j = 0; j < bs; j++) {
            const float r = rintf(*(const float *)(x + j * sa.nb[0]) * id);
            sum += (int)r;
            *(float *)(y + j * d.nb[0]) = fminf(127.0f, fmaxf(-128.0f, r)) * stored;
        }
        if (vt == T_Q8_1) {
            ((float *)sums)[i] = __half2float(__float2half_rn(scale * (float)sum));
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

// MUL_MAT_ID: dst[i0, slot, tok] = row i0 of expert ids[slot, tok]'s
// matrix of as (type at, dense rows) . row (slot % b.ne1, tok) of b (f32,
// already rounded to at's vec_dot type by k_round_act_f32). One thread per
// result element (a first, plain version: the rows of each expert are
// read once per token). A bad id yields NaNs and is reported in status as
// k_get_rows does.
extern "C" __global__ void k_mul_mat_id(char *dst, shape4 d, const char *as, shape4 sas, int at, const char *b,
                                        shape4 sb, const char *ids, shape4 si, int *status) {
    for (i64 r = blockIdx.y; r < d.ne[1] * d.ne[2]; r += gridDim.y) {
        const i64 slot = r % d.ne[1], tok = r / d.ne[1];
        const int e = *(const int *)(ids + slot * si.nb[0] + tok * si.nb[1]);
        const bool ok = e >= 0 && e < sas.ne[2];
        if (!ok && blockIdx.x == 0 && threadIdx.x == 0) {
            atomicExch(&status[1], e);
            atomicExch(&status[0], 1);
        }
        const char *brow = b + (slot % sb.ne[1]) * sb.nb[1] + tok * sb.nb[2];
        for (i64 i0 = (i64)blockIdx.x * blockDim.x + threadIdx.x; i0 < d.ne[0]; i0 += (i64)gridDim.x * blockDim.x) {
            float s = __int_as_float(0x7fc00000);
            if (ok) {
                const char *arow = as + i0 * sas.nb[1] + (i64)e * sas.nb[2];
                s = 0.0f;
                for (i64 k = 0; k < sas.ne[0]; k++) {
                    s += load_elem(arow, k, sas.nb[0], at) * *(const float *)(brow + k * sb.nb[0]);
                }
            }
            *(float *)(dst + i0 * d.nb[0] + slot * d.nb[1] + tok * d.nb[2]) = s;
        }
    }
}
