// Rotary position embedding (ggml's rope with YaRN scaling), forward and
// backward (backward rotates by the negative angle).
//
// Launch shape: blockDim.x threads, gridDim.x blocks striding over pairs
// of dimension 0 (ne0 / 2 of them), gridDim.y blocks striding over rows
// (dimensions 1..3 flattened).
#include "common.cuh"

#define MODE_NEOX 2

static __device__ __forceinline__ float yarn_ramp(float low, float high, int i0) {
    const float y = (i0 / 2 - low) / fmaxf(0.001f, high - low);
    return 1.0f - fminf(1.0f, fmaxf(0.0f, y));
}

// x: input, pos: i32 positions indexed by dimension 2, ff: optional f32
// frequency factors (0 when absent), one per rotated pair. theta_scale is
// freq_base^(-2/n_dims) and corr0/corr1 are YaRN's correction dimensions,
// all computed on the host exactly as the CPU reference does.
extern "C" __global__ void k_rope_f32(char *dst, shape4 d, const char *x, shape4 sx,
                                      const char *pos, const char *ff, int n_dims, int mode,
                                      float theta_scale, float freq_scale, float ext_factor,
                                      float attn_factor, float corr0, float corr1, int backward) {
    const i64 npairs = d.ne[0] / 2;
    for (i64 r = blockIdx.y; r < nrows(d); r += gridDim.y) {
        i64 i1, i2, i3;
        const i64 od = row_offset(d, r, &i1, &i2, &i3);
        const i64 ox = i1 * sx.nb[1] + i2 * sx.nb[2] + i3 * sx.nb[3];
        const float p = (float)((const int *)pos)[i2];
        for (i64 ip = (i64)blockIdx.x * blockDim.x + threadIdx.x; ip < npairs;
             ip += (i64)gridDim.x * blockDim.x) {
            const int i0 = (int)(2 * ip);
            if (i0 >= n_dims) {
                // Dimensions past n_dims pass through unchanged.
                const float a = *(const float *)(x + ox + (i64)i0 * sx.nb[0]);
                const float b = *(const float *)(x + ox + (i64)(i0 + 1) * sx.nb[0]);
                *(float *)(dst + od + (i64)i0 * d.nb[0]) = a;
                *(float *)(dst + od + (i64)(i0 + 1) * d.nb[0]) = b;
                continue;
            }
            // The angle grows by theta_scale per pair, as the reference
            // computes it: repeated multiplication, not powf.
            float theta_base = p;
            for (int k = 0; k < i0 / 2; k++) {
                theta_base *= theta_scale;
            }
            const float f = ff ? ((const float *)ff)[i0 / 2] : 1.0f;
            const float theta_extrap = theta_base / f;
            const float theta_interp = freq_scale * theta_extrap;
            float theta = theta_interp;
            float mscale = attn_factor;
            if (ext_factor != 0.0f) {
                const float mix = yarn_ramp(corr0, corr1, i0) * ext_factor;
                theta = theta_interp * (1.0f - mix) + theta_extrap * mix;
                mscale *= 1.0f + 0.1f * logf(1.0f / freq_scale);
            }
            const float c = cosf(theta) * mscale;
            float s = sinf(theta) * mscale;
            if (backward) {
                s = -s;
            }
            i64 ja, jb;
            if (mode & MODE_NEOX) {
                ja = i0 / 2;
                jb = i0 / 2 + n_dims / 2;
            } else {
                ja = i0;
                jb = i0 + 1;
            }
            const float a = *(const float *)(x + ox + ja * sx.nb[0]);
            const float b = *(const float *)(x + ox + jb * sx.nb[0]);
            *(float *)(dst + od + ja * d.nb[0]) = a * c - b * s;
            *(float *)(dst + od + jb * d.nb[0]) = a * s + b * c;
        }
    }
}
