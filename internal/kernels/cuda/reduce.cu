// Row reductions: sums and means, norms, softmax and their backward ops.
//
// Launch shape: one block of blockDim.x threads (a power of two, at most
// 1024) per row, gridDim.x blocks striding over the rows (dimensions 1..3
// flattened); dynamic shared memory of blockDim.x floats.
#include "common.cuh"

#define ROWS(s) for (i64 r = blockIdx.x; r < nrows(s); r += gridDim.x)

// dst[0, i1, i2, i3] = sum (or mean when mean != 0) of a's row.
extern "C" __global__ void k_sum_rows_f32(char *dst, shape4 d, const char *a, shape4 sa, int mean) {
    DYN_SHARED(float, scratch);
    ROWS(sa) {
        i64 i1, i2, i3;
        const i64 oa = row_offset(sa, r, &i1, &i2, &i3);
        float s = 0.0f;
        for (i64 i0 = threadIdx.x; i0 < sa.ne[0]; i0 += blockDim.x) {
            s += *(const float *)(a + oa + i0 * sa.nb[0]);
        }
        s = block_sum(s, scratch);
        if (threadIdx.x == 0) {
            if (mean) {
                s /= (float)sa.ne[0];
            }
            *(float *)(dst + i1 * d.nb[1] + i2 * d.nb[2] + i3 * d.nb[3]) = s;
        }
    }
}

// dst[0] = sum of every element of a; one block.
extern "C" __global__ void k_sum_f32(char *dst, const char *a, shape4 sa) {
    DYN_SHARED(float, scratch);
    float s = 0.0f;
    for (i64 r = 0; r < nrows(sa); r++) {
        i64 i1, i2, i3;
        const i64 oa = row_offset(sa, r, &i1, &i2, &i3);
        for (i64 i0 = threadIdx.x; i0 < sa.ne[0]; i0 += blockDim.x) {
            s += *(const float *)(a + oa + i0 * sa.nb[0]);
        }
    }
    s = block_sum(s, scratch);
    if (threadIdx.x == 0) {
        *(float *)dst = s;
    }
}

// mode 0 (norm): (x - mean) / sqrt(var + eps); 1 (rms_norm):
// x / sqrt(mean(x^2) + eps); 2 (l2_norm): x / fmaxf(sqrt(sum(x^2)), eps).
extern "C" __global__ void k_norm_f32(char *dst, shape4 d, const char *a, shape4 sa, float eps,
                                      int mode) {
    DYN_SHARED(float, scratch);
    const float n = (float)sa.ne[0];
    ROWS(sa) {
        i64 i1, i2, i3;
        const i64 oa = row_offset(sa, r, &i1, &i2, &i3);
        const i64 od = i1 * d.nb[1] + i2 * d.nb[2] + i3 * d.nb[3];
        float mean = 0.0f;
        if (mode == 0) {
            float s = 0.0f;
            for (i64 i0 = threadIdx.x; i0 < sa.ne[0]; i0 += blockDim.x) {
                s += *(const float *)(a + oa + i0 * sa.nb[0]);
            }
            mean = block_sum(s, scratch) / n;
        }
        float s2 = 0.0f;
        for (i64 i0 = threadIdx.x; i0 < sa.ne[0]; i0 += blockDim.x) {
            const float v = *(const float *)(a + oa + i0 * sa.nb[0]) - mean;
            s2 += v * v;
        }
        const float ss = block_sum(s2, scratch);
        const float scale = mode == 2 ? 1.0f / fmaxf(sqrtf(ss), eps) : 1.0f / sqrtf(ss / n + eps);
        for (i64 i0 = threadIdx.x; i0 < sa.ne[0]; i0 += blockDim.x) {
            const float v = *(const float *)(a + oa + i0 * sa.nb[0]) - mean;
            *(float *)(dst + od + i0 * d.nb[0]) = v * scale;
        }
    }
}

// Gradient of rms_norm: x is the forward input, dz the gradient of its
// output.
extern "C" __global__ void k_rms_norm_back_f32(char *dst, shape4 d, const char *x, shape4 sx,
                                               const char *dz, shape4 sdz, float eps) {
    DYN_SHARED(float, scratch);
    const i64 ne0 = sx.ne[0];
    ROWS(sx) {
        i64 i1, i2, i3;
        const i64 ox = row_offset(sx, r, &i1, &i2, &i3);
        const i64 oz = i1 * sdz.nb[1] + i2 * sdz.nb[2] + i3 * sdz.nb[3];
        const i64 od = i1 * d.nb[1] + i2 * d.nb[2] + i3 * d.nb[3];
        float sxx = 0.0f, sxz = 0.0f;
        for (i64 i0 = threadIdx.x; i0 < ne0; i0 += blockDim.x) {
            const float v = *(const float *)(x + ox + i0 * sx.nb[0]);
            const float g = *(const float *)(dz + oz + i0 * sdz.nb[0]);
            sxx += v * v;
            sxz += v * g;
        }
        sxx = block_sum(sxx, scratch);
        sxz = block_sum(sxz, scratch);
        const float mean_eps = sxx / (float)ne0 + eps;
        const float sum_eps = sxx + eps * (float)ne0;
        const float rrms = 1.0f / sqrtf(mean_eps);
        const float k = -sxz / sum_eps;
        for (i64 i0 = threadIdx.x; i0 < ne0; i0 += blockDim.x) {
            const float v = *(const float *)(x + ox + i0 * sx.nb[0]);
            const float g = *(const float *)(dz + oz + i0 * sdz.nb[0]);
            *(float *)(dst + od + i0 * d.nb[0]) = (g + v * k) * rrms;
        }
    }
}

// softmax(a * scale + slope * mask) along rows. mask_type: 0 none, 1 f32,
// 2 f16; row i1 of matrix (i2, i3) uses mask row i1 of mask matrix
// (i2 % mask.ne[2], i3 % mask.ne[3]).
// slope is 1 unless max_bias > 0 (ALiBi, heads along dimension 2).
// With sinks (f32, one per index i2), sinks[i2] joins each row as one
// more logit that has no output.
extern "C" __global__ void k_soft_max_f32(char *dst, shape4 d, const char *a, shape4 sa,
                                          const char *mask, shape4 sm, int mask_type, float scale,
                                          float max_bias, const char *sinks) {
    DYN_SHARED(float, scratch);
    const i64 ne0 = sa.ne[0];
    const unsigned n_head = (unsigned)sa.ne[2];
    const unsigned n_head_log2 = 1u << (unsigned)floorf(log2f((float)n_head));
    const float m0 = powf(2.0f, -max_bias / n_head_log2);
    const float m1 = powf(2.0f, -(max_bias / 2.0f) / n_head_log2);
    ROWS(sa) {
        i64 i1, i2, i3;
        const i64 oa = row_offset(sa, r, &i1, &i2, &i3);
        const i64 od = i1 * d.nb[1] + i2 * d.nb[2] + i3 * d.nb[3];
        float slope = 1.0f;
        if (max_bias > 0.0f) {
            const unsigned h = (unsigned)i2;
            slope = h < n_head_log2 ? powf(m0, (float)(h + 1)) : powf(m1, (float)(2 * (h - n_head_log2) + 1));
        }
        const char *mrow = mask_type ? mask + i1 * sm.nb[1] + (i2 % sm.ne[2]) * sm.nb[2] +
                                           (i3 % sm.ne[3]) * sm.nb[3]
                                     : nullptr;
        float mx = -INFINITY;
        for (i64 i0 = threadIdx.x; i0 < ne0; i0 += blockDim.x) {
            float v = *(const float *)(a + oa + i0 * sa.nb[0]) * scale;
            if (mask_type == 1) {
                v += slope * *(const float *)(mrow + i0 * sm.nb[0]);
            } else if (mask_type == 2) {
                v += slope * f16_to_f32(mrow + i0 * sm.nb[0]);
            }
            mx = fmaxf(mx, v);
        }
        mx = block_max(mx, scratch);
        const float sink = sinks ? ((const float *)sinks)[i2] : -INFINITY;
        mx = fmaxf(mx, sink);
        float s = 0.0f;
        for (i64 i0 = threadIdx.x; i0 < ne0; i0 += blockDim.x) {
            float v = *(const float *)(a + oa + i0 * sa.nb[0]) * scale;
            if (mask_type == 1) {
                v += slope * *(const float *)(mrow + i0 * sm.nb[0]);
            } else if (mask_type == 2) {
                v += slope * f16_to_f32(mrow + i0 * sm.nb[0]);
            }
            const float e = mx == -INFINITY ? 0.0f : expf(v - mx);
            *(float *)(dst + od + i0 * d.nb[0]) = e;
            s += e;
        }
        s = block_sum(s, scratch);
        if (sinks) {
            s += expf(sink - mx);
        }
        const float inv = s == 0.0f ? 0.0f : 1.0f / s;
        for (i64 i0 = threadIdx.x; i0 < ne0; i0 += blockDim.x) {
            *(float *)(dst + od + i0 * d.nb[0]) *= inv;
        }
    }
}

// Gradient of softmax: dx = scale * y * (dy - dot(y, dy)).
extern "C" __global__ void k_soft_max_back_f32(char *dst, shape4 d, const char *dy, shape4 sdy,
                                               const char *y, shape4 sy, float scale) {
    DYN_SHARED(float, scratch);
    const i64 ne0 = sy.ne[0];
    ROWS(sy) {
        i64 i1, i2, i3;
        const i64 oy = row_offset(sy, r, &i1, &i2, &i3);
        const i64 og = i1 * sdy.nb[1] + i2 * sdy.nb[2] + i3 * sdy.nb[3];
        const i64 od = i1 * d.nb[1] + i2 * d.nb[2] + i3 * d.nb[3];
        float dot = 0.0f;
        for (i64 i0 = threadIdx.x; i0 < ne0; i0 += blockDim.x) {
            dot += *(const float *)(y + oy + i0 * sy.nb[0]) * *(const float *)(dy + og + i0 * sdy.nb[0]);
        }
        dot = block_sum(dot, scratch);
        for (i64 i0 = threadIdx.x; i0 < ne0; i0 += blockDim.x) {
            const float yv = *(const float *)(y + oy + i0 * sy.nb[0]);
            const float gv = *(const float *)(dy + og + i0 * sdy.nb[0]);
            *(float *)(dst + od + i0 * d.nb[0]) = scale * yv * (gv - dot);
        }
    }
}

// Indices that sort each row of a (f32): ascending for desc 0, descending
// for 1, ties in index order (a stable sort). dst (i32) gets the first
// d.ne[0] of them; with topk the first two are swapped, as ggml's CPU
// TOP_K does. Each thread ranks its elements by counting (the rows of
// MoE routing and sampling are short); no shared memory.
extern "C" __global__ void k_argsort_f32(char *dst, shape4 d, const char *a, shape4 sa, int desc, int topk) {
    const i64 n = sa.ne[0];
    ROWS(sa) {
        i64 i1, i2, i3;
        const i64 oa = row_offset(sa, r, &i1, &i2, &i3);
        const i64 od = i1 * d.nb[1] + i2 * d.nb[2] + i3 * d.nb[3];
        for (i64 i = threadIdx.x; i < n; i += blockDim.x) {
            const float v = *(const float *)(a + oa + i * sa.nb[0]);
            i64 rank = 0;
            for (i64 j = 0; j < n; j++) {
                const float w = *(const float *)(a + oa + j * sa.nb[0]);
                const bool before = desc ? w > v : w < v;
                rank += before || (w == v && j < i);
            }
            if (topk && d.ne[0] > 1 && rank < 2) {
                rank ^= 1;
            }
            if (rank < d.ne[0]) {
                *(int *)(dst + od + rank * d.nb[0]) = (int)i;
            }
        }
    }
}

// alibi_slope is ggml's ALiBi slope of head h of n_head for max_bias
// (1 when max_bias is 0).
static __device__ __forceinline__ float alibi_slope(float max_bias, unsigned h, unsigned n_head) {
    if (max_bias <= 0.0f) {
        return 1.0f;
    }
    const unsigned n_head_log2 = 1u << (unsigned)floorf(log2f((float)n_head));
    const float m0 = powf(2.0f, -max_bias / n_head_log2);
    const float m1 = powf(2.0f, -(max_bias / 2.0f) / n_head_log2);
    return h < n_head_log2 ? powf(m0, (float)(h + 1)) : powf(m1, (float)(2 * (h - n_head_log2) + 1));
}

// FLASH_ATTN_EXT: for each q row (token i1, head i2, sequence i3),
// softmax(scale * q.K^T (softcapped) + slope * mask [+ sink]) . V, the
// result at (:, i2, i1, i3) of dst (f32). q is f32, rounded to K's
// vec_dot type as ggml's CPU rounds it for its dot products: K's own type
// for f32, f16 and bf16 K, q8_0 values for q4_0, q5_0 and q8_0 K (dense
// rows), q8_1 for q4_1 and q5_1; V is any type load_elem reads (vt),
// dense rows. K and V heads are shared
// by q.ne2 / k.ne2 consecutive q heads. mask is f16 or null, sinks f32 or
// null. scale is already divided by softcap when softcap != 0.
//
// One block (blockDim.x a power of two, at least 32) per q row walks the
// keys in chunks of blockDim.x: each thread scores one key, then the
// block updates a running maximum and sum, and each thread accumulates
// up to 4 output elements (dv <= 4 * blockDim.x). Dynamic shared memory:
// dk + 2 * blockDim.x + dk / 32 floats.
extern "C" __global__ void k_flash_attn_ext_f32(char *dst, shape4 d, const char *q, shape4 sq, const char *k,
                                                shape4 sk, int kt, const char *v, shape4 sv, int vt,
                                                const char *mask, shape4 sm, const char *sinks, float scale,
                                                float max_bias, float softcap) {
    DYN_SHARED(float, smem);
    const i64 dk = sq.ne[0], dv = sv.ne[0], nkv = sk.ne[1];
    float *qs = smem;
    float *ps = smem + dk;
    float *scratch = ps + blockDim.x;
    float *qsum = scratch + blockDim.x; // dk/32 block sums of q rounded to q8_1
    const int tid = threadIdx.x;
    const bool kblocks = kt != T_F32 && kt != T_F16 && kt != T_BF16;
    const bool kmin = kt == T_Q4_1 || kt == T_Q5_1;
    ROWS(sq) {
        i64 i1, i2, i3;
        const i64 oq = row_offset(sq, r, &i1, &i2, &i3);
        for (i64 i = tid; i < dk; i += blockDim.x) {
            float x = *(const float *)(q + oq + i * sq.nb[0]);
            if (kt == T_F16) {
                x = __half2float(__float2half_rn(x));
            } else if (kt == T_BF16) {
                x = __int_as_float((int)((unsigned)f32_to_bf16(x) << 16));
            }
            qs[i] = x;
        }
        __syncthreads();
        if (kblocks) {
            // q rounded to q8_0 (q8_1 for q4_1/q5_1 K) per block of 32, as
            // ggml's CPU quantizes it for its dot products with K's blocks
            // (the x86 quantizer, as k_round_act_f32), and q8_1's block sum
            // s = d*sum(q) rounded to f16.
            for (i64 b = tid; b < dk / QK; b += blockDim.x) {
                float *xb = qs + b * QK;
                float amax = 0.0f;
                for (int j = 0; j < QK; j++) {
                    amax = fmaxf(amax, fabsf(xb[j]));
                }
                const float id = amax != 0.0f ? 127.0f / amax : 0.0f;
                const float dq = amax / 127.0f;
                const float stored = __half2float(__float2half_rn(dq));
                int sum = 0;
                for (int j = 0; j < QK; j++) {
                    const float rq = rintf(xb[j] * id);
                    sum += (int)rq;
                    xb[j] = fminf(127.0f, fmaxf(-128.0f, rq)) * stored;
                }
                qsum[b] = __half2float(__float2half_rn(dq * (float)sum));
            }
            __syncthreads();
        }
        const float slope = alibi_slope(max_bias, (unsigned)i2, (unsigned)sq.ne[2]);
        const i64 k2 = i2 / (sq.ne[2] / sk.ne[2]), k3 = i3 / (sq.ne[3] / sk.ne[3]);
        const i64 v2 = i2 / (sq.ne[2] / sv.ne[2]), v3 = i3 / (sq.ne[3] / sv.ne[3]);
        const char *kbase = k + k2 * sk.nb[2] + k3 * sk.nb[3];
        const char *vbase = v + v2 * sv.nb[2] + v3 * sv.nb[3];
        const char *mrow = mask ? mask + i1 * sm.nb[1] + (i2 % sm.ne[2]) * sm.nb[2] + (i3 % sm.ne[3]) * sm.nb[3]
                                : nullptr;
        float M = -INFINITY, S = 0.0f;
        float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
        for (i64 c0 = 0; c0 < nkv; c0 += blockDim.x) {
            const i64 ic = c0 + tid;
            float s = -INFINITY;
            if (ic < nkv) {
                const float mv = mrow ? slope * f16_to_f32(mrow + ic * sm.nb[0]) : 0.0f;
                if (mv != -INFINITY) {
                    const char *krow = kbase + ic * sk.nb[1];
                    float dot = 0.0f;
                    if (kmin) {
                        // q4_1/q5_1: the blocks' offsets m against q8_1's
                        // sums, as ggml's vec_dot_q4_1_q8_1 adds them.
                        for (i64 i = 0; i < dk; i++) {
                            dot += qs[i] * load_quant(krow, i, kt, false);
                        }
                        const int kb = kt == T_Q4_1 ? Q4_1_BYTES : Q5_1_BYTES;
                        for (i64 b = 0; b < dk / QK; b++) {
                            dot += ld_f16((const unsigned char *)krow + b * kb + 2) * qsum[b];
                        }
                    } else {
                        for (i64 i = 0; i < dk; i++) {
                            dot += qs[i] * load_elem(krow, i, sk.nb[0], kt);
                        }
                    }
                    s = dot * scale;
                    if (softcap != 0.0f) {
                        s = softcap * tanhf(s);
                    }
                    s += mv;
                }
            }
            const float cm = block_max(s, scratch);
            if (cm == -INFINITY) {
                continue; // every key of the chunk is masked
            }
            const float nm = fmaxf(M, cm);
            const float ms = expf(M - nm);
            const float p = s == -INFINITY ? 0.0f : expf(s - nm);
            ps[tid] = p;
            S = S * ms + block_sum(p, scratch); // block_sum's barriers publish ps
            M = nm;
            const i64 nc = nkv - c0 < (i64)blockDim.x ? nkv - c0 : (i64)blockDim.x;
            for (int j = 0; j < 4; j++) {
                const i64 e = tid + (i64)j * blockDim.x;
                if (e >= dv) {
                    break;
                }
                float a = acc[j] * ms;
                for (i64 c = 0; c < nc; c++) {
                    if (ps[c] != 0.0f) {
                        a += ps[c] * load_elem(vbase + (c0 + c) * sv.nb[1], e, sv.nb[0], vt);
                    }
                }
                acc[j] = a;
            }
            __syncthreads(); // ps is rewritten by the next chunk
        }
        if (sinks) {
            const float sk2 = ((const float *)sinks)[i2];
            const float nm = fmaxf(M, sk2);
            const float ms = expf(M - nm);
            S = S * ms + expf(sk2 - nm);
            for (int j = 0; j < 4; j++) {
                acc[j] *= ms;
            }
        }
        const float inv = S == 0.0f ? 0.0f : 1.0f / S;
        char *orow = dst + i2 * d.nb[1] + i1 * d.nb[2] + i3 * d.nb[3];
        for (int j = 0; j < 4; j++) {
            const i64 e = tid + (i64)j * blockDim.x;
            if (e < dv) {
                *(float *)(orow + e * d.nb[0]) = acc[j] * inv;
            }
        }
        __syncthreads(); // qs is rewritten by the next row
    }
}
