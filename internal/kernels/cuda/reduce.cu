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

// norm: (x - mean) / sqrt(var + eps); rms != 0: x / sqrt(mean(x^2) + eps).
extern "C" __global__ void k_norm_f32(char *dst, shape4 d, const char *a, shape4 sa, float eps,
                                      int rms) {
    DYN_SHARED(float, scratch);
    const float n = (float)sa.ne[0];
    ROWS(sa) {
        i64 i1, i2, i3;
        const i64 oa = row_offset(sa, r, &i1, &i2, &i3);
        const i64 od = i1 * d.nb[1] + i2 * d.nb[2] + i3 * d.nb[3];
        float mean = 0.0f;
        if (!rms) {
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
        const float scale = 1.0f / sqrtf(block_sum(s2, scratch) / n + eps);
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
extern "C" __global__ void k_soft_max_f32(char *dst, shape4 d, const char *a, shape4 sa,
                                          const char *mask, shape4 sm, int mask_type, float scale,
                                          float max_bias) {
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
