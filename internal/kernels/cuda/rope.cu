// Rotary position embedding (ggml's rope with YaRN scaling), forward and
// backward (backward rotates by the negative angle).
//
// Launch shape: blockDim.x threads, gridDim.x blocks striding over pairs
// of dimension 0 (ne0 / 2 of them), gridDim.y blocks striding over rows
// (dimensions 1..3 flattened).
#include "common.cuh"


static __device__ __forceinline__ float yarn_ramp(float low, float high, int i0) {
    const float y = (i0 / 2 - low) / fmaxf(0.001f, high - low);
    return 1.0f - fminf(1.0f, fmaxf(0.0f, y));
}

#define MODE_MROPE 8
#define MODE_VISION 24
#define MODE_IMROPE 40

// x: input (type xt, f32 or f16), dst (type dt), pos: i32 positions
// indexed by dimension 2 (the multi-section modes: four groups of ne2),
// ff: optional f32 frequency factors (0 when absent), one per rotated
// pair. theta_scale is freq_base^(-2/n_dims) and corr0/corr1 are YaRN's
// correction dimensions, all computed on the host exactly as the CPU
// reference does. Modes: normal (adjacent pairs from element offset),
// NeoX and the multi-section modes mrope/imrope (pairs n_dims/2 apart
// from offset; sections s0..s3 pick each pair's position group), vision
// (pairs n_dims apart, each section's angle restarted); elements outside
// the rotated range are copied. One thread per pair of a row.
extern "C" __global__ void k_rope(char *dst, shape4 d, int dt, const char *x, shape4 sx, int xt, const char *pos,
                                  const char *ff, int n_dims, int mode, int offset, int s0, int s1, int s2, int s3,
                                  float theta_scale, float freq_scale, float ext_factor, float attn_factor,
                                  float corr0, float corr1, int backward) {
    const i64 npairs = d.ne[0] / 2;
    const i64 nrot = mode == MODE_VISION ? n_dims : n_dims / 2;
    for (i64 r = blockIdx.y; r < nrows(d); r += gridDim.y) {
        i64 i1, i2, i3;
        const i64 od = row_offset(d, r, &i1, &i2, &i3);
        const i64 ox = i1 * sx.nb[1] + i2 * sx.nb[2] + i3 * sx.nb[3];
        for (i64 k = (i64)blockIdx.x * blockDim.x + threadIdx.x; k < npairs; k += (i64)gridDim.x * blockDim.x) {
            if (k >= nrot) {
                // Pair k - nrot of the elements outside [offset, offset + n_dims).
                i64 e = 2 * (k - nrot);
                if (e >= offset) {
                    e += n_dims;
                }
                store_elem(dst + od + e * d.nb[0], load_elem(x + ox, e, sx.nb[0], xt), dt);
                store_elem(dst + od + (e + 1) * d.nb[0], load_elem(x + ox, e + 1, sx.nb[0], xt), dt);
                continue;
            }
            // The angle grows by theta_scale per pair, as the reference
            // computes it: repeated multiplication, not powf.
            float theta_base;
            if ((mode & MODE_MROPE) == 0) {
                theta_base = (float)((const int *)pos)[i2];
                for (i64 j = 0; j < k; j++) {
                    theta_base *= theta_scale;
                }
            } else {
                const int sd = s0 + s1 + s2 + s3, secw = s0 + s1, sece = secw + s2;
                float p[4], th[4];
                for (int g = 0; g < 4; g++) {
                    p[g] = (float)((const int *)pos)[i2 + g * d.ne[2]];
                    th[g] = p[g];
                }
                int sector = 0;
                for (i64 j = 0;; j++) {
                    sector = (int)(j % sd);
                    if (mode == MODE_VISION) {
                        // Vision restarts each section's angle.
                        if (sector == 0) {
                            th[0] = p[0];
                        } else if (sector == s0) {
                            th[1] = p[1];
                        } else if (sector == secw) {
                            th[2] = p[2];
                        } else if (sector == sece) {
                            th[3] = p[3];
                        }
                    }
                    if (j == k) {
                        break;
                    }
                    for (int g = 0; g < 4; g++) {
                        th[g] *= theta_scale;
                    }
                }
                if (mode == MODE_IMROPE) {
                    if (sector % 3 == 1 && sector < 3 * s1) {
                        theta_base = th[1];
                    } else if (sector % 3 == 2 && sector < 3 * s2) {
                        theta_base = th[2];
                    } else if (sector % 3 == 0 && sector < 3 * s0) {
                        theta_base = th[0];
                    } else {
                        theta_base = th[3];
                    }
                } else if (sector >= s0 && sector < secw) {
                    theta_base = th[1];
                } else if (sector >= secw && sector < sece) {
                    theta_base = th[2];
                } else if (sector >= sece) {
                    theta_base = th[3];
                } else {
                    theta_base = th[0];
                }
            }
            const float f = ff ? ((const float *)ff)[k] : 1.0f;
            const float theta_extrap = theta_base / f;
            const float theta_interp = freq_scale * theta_extrap;
            float theta = theta_interp;
            float mscale = attn_factor;
            if (ext_factor != 0.0f) {
                const float mix = yarn_ramp(corr0, corr1, (int)(2 * k)) * ext_factor;
                theta = theta_interp * (1.0f - mix) + theta_extrap * mix;
                mscale *= 1.0f + 0.1f * logf(1.0f / freq_scale);
            }
            const float c = cosf(theta) * mscale;
            float sn = sinf(theta) * mscale;
            if (backward) {
                sn = -sn;
            }
            i64 ja, jb;
            if (mode == 0) {
                ja = offset + 2 * k;
                jb = ja + 1;
            } else if (mode == MODE_VISION) {
                ja = k;
                jb = k + n_dims;
            } else {
                ja = offset + k;
                jb = ja + n_dims / 2;
            }
            const float a = load_elem(x + ox, ja, sx.nb[0], xt);
            const float b = load_elem(x + ox, jb, sx.nb[0], xt);
            store_elem(dst + od + ja * d.nb[0], a * c - b * sn, dt);
            store_elem(dst + od + jb * d.nb[0], a * sn + b * c, dt);
        }
    }
}
