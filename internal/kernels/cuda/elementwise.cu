// Element-wise kernels: binary ops with broadcasting, unary functions,
// repeat, concat, copies with type conversion, get_rows, diagonal masks and
// silu_back.
//
// Launch shape for all "rows" kernels: blockDim.x threads, gridDim.x blocks
// striding over dimension 0, gridDim.y blocks striding over the rows
// (dimensions 1..3 flattened) of the destination.
#include "common.cuh"

#define ROW_LOOP(d)                                                            \
    for (i64 r = blockIdx.y; r < nrows(d); r += gridDim.y)

#define COL_LOOP(i0, ne0)                                                      \
    for (i64 i0 = (i64)blockIdx.x * blockDim.x + threadIdx.x; i0 < (ne0);      \
         i0 += (i64)gridDim.x * blockDim.x)

// Binary op codes.
#define BIN_ADD 0
#define BIN_SUB 1
#define BIN_MUL 2
#define BIN_DIV 3

// bin_apply is binary op code op on x and y.
static __device__ __forceinline__ float bin_apply(int op, float x, float y) {
    switch (op) {
    case BIN_ADD: return x + y;
    case BIN_SUB: return x - y;
    case BIN_MUL: return x * y;
    default: return x / y;
    }
}

// bcast_row is the byte offset in b of the row broadcast to dst's row
// (i1, i2, i3).
static __device__ __forceinline__ i64 bcast_row(const shape4 &sb, i64 i1, i64 i2, i64 i3) {
    return (i1 % sb.ne[1]) * sb.nb[1] + (i2 % sb.ne[2]) * sb.nb[2] + (i3 % sb.ne[3]) * sb.nb[3];
}

// dst = a op b, b broadcast (each of b's dimensions divides a's).
extern "C" __global__ void k_binary_f32(char *dst, shape4 d, const char *a, shape4 sa,
                                        const char *b, shape4 sb, int op) {
    ROW_LOOP(d) {
        i64 i1, i2, i3;
        const i64 od = row_offset(d, r, &i1, &i2, &i3);
        const i64 oa = i1 * sa.nb[1] + i2 * sa.nb[2] + i3 * sa.nb[3];
        const i64 ob = bcast_row(sb, i1, i2, i3);
        const i64 nb0 = sb.ne[0];
        COL_LOOP(i0, d.ne[0]) {
            const float x = *(const float *)(a + oa + i0 * sa.nb[0]);
            const i64 j0 = nb0 == d.ne[0] ? i0 : i0 % nb0;
            const float y = *(const float *)(b + ob + j0 * sb.nb[0]);
            *(float *)(dst + od + i0 * d.nb[0]) = bin_apply(op, x, y);
        }
    }
}

// Unary function codes: 0..13 are ggml's unary ops (ABS..EXP); the rest
// are the element-wise ops that are separate ggml ops.
#define U_ABS 0
#define U_SGN 1
#define U_NEG 2
#define U_STEP 3
#define U_TANH 4
#define U_ELU 5
#define U_RELU 6
#define U_SIGMOID 7
#define U_GELU 8
#define U_GELU_QUICK 9
#define U_SILU 10
#define U_HARDSWISH 11
#define U_HARDSIGMOID 12
#define U_EXP 13
#define U_SQR 100
#define U_SQRT 101
#define U_LOG 102
#define U_SIN 103
#define U_COS 104
#define U_SCALE 105
#define U_CLAMP 106
#define U_LEAKY_RELU 107

#define U_EXPM1 14
#define U_SOFTPLUS 15
#define U_GELU_ERF 16
#define U_FLOOR 18
#define U_CEIL 19
#define U_ROUND 20
#define U_TRUNC 21

// half_round rounds v to the nearest half-precision value (ggml's CPU
// backend computes GELU_QUICK through a table indexed by f16 bits).
static __device__ __forceinline__ float half_round(float v) { return __half2float(__float2half_rn(v)); }

// gelu_quick is ggml's CPU GELU_QUICK: x*sigmoid(1.702x) of x rounded to
// half precision, rounded to half precision.
static __device__ __forceinline__ float gelu_quick(float x) {
    const float h = half_round(x);
    return half_round(h * (1.0f / (1.0f + expf(-1.702f * h))));
}

// gelu_erf is the exact GELU 0.5*x*(1 + erf(x/sqrt(2))).
static __device__ __forceinline__ float gelu_erf(float x) {
    return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f));
}

// gelu_tanh is the tanh approximation of GELU.
static __device__ __forceinline__ float gelu_tanh(float x) {
    const float c = 0.7978845608028654f; // sqrt(2/pi)
    return 0.5f * x * (1.0f + tanhf(c * x * (1.0f + 0.044715f * x * x)));
}

// hard_sigmoid is ggml's fminf(1, fmaxf(0, (x + 3) / 6)).
static __device__ __forceinline__ float hard_sigmoid(float x) { return fminf(1.0f, fmaxf(0.0f, (x + 3.0f) / 6.0f)); }

static __device__ __forceinline__ float unary_fn(float x, int op, float p0, float p1) {
    switch (op) {
    case U_ABS: return fabsf(x);
    case U_SGN: return x > 0.0f ? 1.0f : (x < 0.0f ? -1.0f : 0.0f);
    case U_NEG: return -x;
    case U_STEP: return x > 0.0f ? 1.0f : 0.0f;
    case U_TANH: return tanhf(x);
    case U_ELU: return x > 0.0f ? x : expm1f(x);
    case U_RELU: return x > 0.0f ? x : 0.0f;
    case U_SIGMOID: return 1.0f / (1.0f + expf(-x));
    case U_GELU: return gelu_tanh(x);
    case U_GELU_QUICK: return gelu_quick(x);
    case U_SILU: return x / (1.0f + expf(-x));
    case U_HARDSWISH: return x * hard_sigmoid(x);
    case U_HARDSIGMOID: return hard_sigmoid(x);
    case U_EXP: return expf(x);
    case U_EXPM1: return expf(x) - 1.0f;
    case U_SOFTPLUS: return x > 20.0f ? x : logf(1.0f + expf(x));
    case U_GELU_ERF: return gelu_erf(x);
    case U_FLOOR: return floorf(x);
    case U_CEIL: return ceilf(x);
    case U_ROUND: return roundf(x);
    case U_TRUNC: return truncf(x);
    case U_SQR: return x * x;
    case U_SQRT: return sqrtf(x);
    case U_LOG: return logf(x);
    case U_SIN: return sinf(x);
    case U_COS: return cosf(x);
    case U_SCALE: return x * p0 + p1;
    case U_CLAMP: // ggml's MAX(MIN(x, hi), lo): lo wins over hi, NaN becomes hi
        x = x < p1 ? x : p1;
        return x > p0 ? x : p0;
    case U_LEAKY_RELU: return fmaxf(x, 0.0f) + fminf(x, 0.0f) * p0;
    }
    return x;
}

// dst = f(a), same shape; a and dst of the float types at and dt (f32,
// f16 or bf16).
extern "C" __global__ void k_unary(char *dst, shape4 d, int dt, const char *a, shape4 sa, int at, int op,
                                   float p0, float p1) {
    ROW_LOOP(d) {
        i64 i1, i2, i3;
        const i64 od = row_offset(d, r, &i1, &i2, &i3);
        const char *arow = a + i1 * sa.nb[1] + i2 * sa.nb[2] + i3 * sa.nb[3];
        COL_LOOP(i0, d.ne[0]) {
            store_elem(dst + od + i0 * d.nb[0], unary_fn(load_elem(arow, i0, sa.nb[0], at), op, p0, p1), dt);
        }
    }
}

// dst = dy * silu'(x).
extern "C" __global__ void k_silu_back_f32(char *dst, shape4 d, const char *x, shape4 sx,
                                           const char *dy, shape4 sdy) {
    ROW_LOOP(d) {
        i64 i1, i2, i3;
        const i64 od = row_offset(d, r, &i1, &i2, &i3);
        const i64 ox = i1 * sx.nb[1] + i2 * sx.nb[2] + i3 * sx.nb[3];
        const i64 oy = i1 * sdy.nb[1] + i2 * sdy.nb[2] + i3 * sdy.nb[3];
        COL_LOOP(i0, d.ne[0]) {
            const float v = *(const float *)(x + ox + i0 * sx.nb[0]);
            const float g = *(const float *)(dy + oy + i0 * sdy.nb[0]);
            const float s = 1.0f / (1.0f + expf(-v));
            *(float *)(dst + od + i0 * d.nb[0]) = g * s * (1.0f + v * (1.0f - s));
        }
    }
}

// dst = a tiled to dst's shape; a and dst of type t (f32 or f16).
extern "C" __global__ void k_repeat(char *dst, shape4 d, const char *a, shape4 sa, int t) {
    const i64 es = t == T_F16 ? 2 : 4;
    ROW_LOOP(d) {
        i64 i1, i2, i3;
        const i64 od = row_offset(d, r, &i1, &i2, &i3);
        const i64 oa = (i1 % sa.ne[1]) * sa.nb[1] + (i2 % sa.ne[2]) * sa.nb[2] +
                       (i3 % sa.ne[3]) * sa.nb[3];
        COL_LOOP(i0, d.ne[0]) {
            const char *s = a + oa + (i0 % sa.ne[0]) * sa.nb[0];
            char *o = dst + od + i0 * d.nb[0];
            if (es == 2) {
                *(unsigned short *)o = *(const unsigned short *)s;
            } else {
                *(float *)o = *(const float *)s;
            }
        }
    }
}

// dst = a and b joined along dimension dim (f32).
extern "C" __global__ void k_concat_f32(char *dst, shape4 d, const char *a, shape4 sa,
                                        const char *b, shape4 sb, int dim) {
    ROW_LOOP(d) {
        i64 i[4];
        const i64 od = row_offset(d, r, &i[1], &i[2], &i[3]);
        COL_LOOP(i0, d.ne[0]) {
            i[0] = i0;
            const float *src;
            if (i[dim] < sa.ne[dim]) {
                src = (const float *)(a + i[0] * sa.nb[0] + i[1] * sa.nb[1] + i[2] * sa.nb[2] +
                                      i[3] * sa.nb[3]);
            } else {
                i64 j[4] = {i[0], i[1], i[2], i[3]};
                j[dim] -= sa.ne[dim];
                src = (const float *)(b + j[0] * sb.nb[0] + j[1] * sb.nb[1] + j[2] * sb.nb[2] +
                                      j[3] * sb.nb[3]);
            }
            *(float *)(dst + od + i0 * d.nb[0]) = *src;
        }
    }
}

// Copy with type conversion (f32/f16 either way). Element k of a, in
// row-major order, goes to element k of dst; the shapes may differ when
// the element counts agree. The launch covers a's rows.
extern "C" __global__ void k_cpy(char *dst, shape4 d, int dt, const char *a, shape4 sa, int at) {
    const bool same = d.ne[0] == sa.ne[0] && d.ne[1] == sa.ne[1] && d.ne[2] == sa.ne[2] &&
                      d.ne[3] == sa.ne[3];
    ROW_LOOP(sa) {
        i64 i1, i2, i3;
        const i64 oa = row_offset(sa, r, &i1, &i2, &i3);
        COL_LOOP(i0, sa.ne[0]) {
            const float v = load_elem(a + oa, i0, sa.nb[0], at);
            i64 od;
            if (same) {
                od = i0 * d.nb[0] + i1 * d.nb[1] + i2 * d.nb[2] + i3 * d.nb[3];
            } else {
                i64 k = r * sa.ne[0] + i0;
                const i64 j0 = k % d.ne[0];
                k /= d.ne[0];
                const i64 j1 = k % d.ne[1];
                k /= d.ne[1];
                const i64 j2 = k % d.ne[2];
                const i64 j3 = k / d.ne[2];
                od = j0 * d.nb[0] + j1 * d.nb[1] + j2 * d.nb[2] + j3 * d.nb[3];
            }
            store_elem(dst + od, v, dt);
        }
    }
}

// dst[:, i10, i11, i12] = a[:, idx[i10, i11, i12], i11, i12] as f32; a is
// f32, f16, q4_0 or q8_0 (type at), idx is i32. The launch covers dst.
// An index outside [0, a.ne[1]) yields a row of NaNs instead of a read
// outside the tensor, and is reported in status: status[0] = 1,
// status[1] = the index.
extern "C" __global__ void k_get_rows(char *dst, shape4 d, const char *a, shape4 sa, int at,
                                      const char *idx, shape4 si, int *status) {
    ROW_LOOP(d) {
        i64 i10, i11, i12;
        const i64 od = row_offset(d, r, &i10, &i11, &i12);
        const int row = *(const int *)(idx + i10 * si.nb[0] + i11 * si.nb[1] + i12 * si.nb[2]);
        const bool ok = row >= 0 && row < sa.ne[1];
        if (!ok && blockIdx.x == 0 && threadIdx.x == 0) {
            atomicExch(&status[1], row);
            atomicExch(&status[0], 1);
        }
        const char *src = a + (i64)(ok ? row : 0) * sa.nb[1] + i11 * sa.nb[2] + i12 * sa.nb[3];
        COL_LOOP(i0, d.ne[0]) {
            *(float *)(dst + od + i0 * d.nb[0]) = ok ? load_elem(src, i0, sa.nb[0], at) : __int_as_float(0x7fc00000);
        }
    }
}

// dst = a with elements above the shifted diagonal (column i0 > n_past +
// row i1) set to value (-inf or 0).
extern "C" __global__ void k_diag_mask_f32(char *dst, shape4 d, const char *a, shape4 sa,
                                           int n_past, float value) {
    ROW_LOOP(d) {
        i64 i1, i2, i3;
        const i64 od = row_offset(d, r, &i1, &i2, &i3);
        const i64 oa = i1 * sa.nb[1] + i2 * sa.nb[2] + i3 * sa.nb[3];
        COL_LOOP(i0, d.ne[0]) {
            const float x = *(const float *)(a + oa + i0 * sa.nb[0]);
            *(float *)(dst + od + i0 * d.nb[0]) = i0 > n_past + i1 ? value : x;
        }
    }
}

// Fill a contiguous f32 range with a value (for OpSum's zero start and
// tests).
extern "C" __global__ void k_fill_f32(char *dst, i64 n, float value) {
    for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (i64)gridDim.x * blockDim.x) {
        ((float *)dst)[i] = value;
    }
}

// GLU function codes (ggml's enum ggml_glu_op).
#define G_REGLU 0
#define G_GEGLU 1
#define G_SWIGLU 2
#define G_SWIGLU_OAI 3
#define G_GEGLU_ERF 4
#define G_GEGLU_QUICK 5
#define G_SWIGLU_CLAMP 6

// glu_fn is GLU function op of the activated value x and the gate g as
// ggml's CPU backend computes it (GEGLU through its half-precision GELU
// table, with the cut-offs at +-10).
static __device__ __forceinline__ float glu_fn(float x, float g, int op, float alpha, float limit) {
    switch (op) {
    case G_REGLU: return x > 0.0f ? x * g : 0.0f;
    case G_GEGLU:
        if (x <= -10.0f) {
            return 0.0f;
        }
        if (x >= 10.0f) {
            return x * g;
        }
        return half_round(gelu_tanh(half_round(x))) * g;
    case G_SWIGLU: return x / (1.0f + expf(-x)) * g;
    case G_SWIGLU_OAI:
        x = fminf(x, limit);
        g = fmaxf(-limit, fminf(g, limit));
        return x / (1.0f + expf(alpha * -x)) * (g + 1.0f);
    case G_GEGLU_ERF: return gelu_erf(x) * g;
    case G_GEGLU_QUICK: return gelu_quick(x) * g;
    case G_SWIGLU_CLAMP:
        x = fminf(x, limit);
        g = fmaxf(-limit, fminf(g, limit));
        return x / (1.0f + expf(-x)) * g;
    }
    return 0.0f;
}

// dst = glu(x, g) of float type t. With b null, x and g are the two halves
// of a's rows (g first when swapped); else x is a's row and g b's.
extern "C" __global__ void k_glu(char *dst, shape4 d, const char *a, shape4 sa, const char *b, shape4 sb, int t,
                                 int op, int swapped, float alpha, float limit) {
    const i64 nc = d.ne[0];
    ROW_LOOP(d) {
        i64 i1, i2, i3;
        const i64 od = row_offset(d, r, &i1, &i2, &i3);
        const char *arow = a + i1 * sa.nb[1] + i2 * sa.nb[2] + i3 * sa.nb[3];
        const char *grow = b ? b + i1 * sb.nb[1] + i2 * sb.nb[2] + i3 * sb.nb[3] : arow;
        const i64 gstride = b ? sb.nb[0] : sa.nb[0];
        i64 xoff = 0, goff = 0;
        if (!b) {
            xoff = swapped ? nc : 0;
            goff = swapped ? 0 : nc;
        }
        COL_LOOP(i0, nc) {
            const float x = load_elem(arow, i0 + xoff, sa.nb[0], t);
            const float g = load_elem(grow, i0 + goff, gstride, t);
            store_elem(dst + od + i0 * d.nb[0], glu_fn(x, g, op, alpha, limit), t);
        }
    }
}

// dst[:, ids[i, i2 % ids.ne1, i3 % ids.ne2], i2, i3] = a[:, i, i2, i3],
// converted from a's float type at to dst's float type dt; ids are i32
// (wide 0) or i64 (wide 1). The launch covers a's rows. An index outside
// [0, dst.ne1) writes nothing and is reported in status as k_get_rows
// does.
extern "C" __global__ void k_set_rows(char *dst, shape4 d, int dt, const char *a, shape4 sa, int at,
                                      const char *idx, shape4 si, int wide, int *status) {
    ROW_LOOP(sa) {
        i64 i1, i2, i3;
        const i64 oa = row_offset(sa, r, &i1, &i2, &i3);
        const char *ip = idx + i1 * si.nb[0] + (i2 % si.ne[1]) * si.nb[1] + (i3 % si.ne[2]) * si.nb[2];
        const i64 row = wide ? *(const long long *)ip : (i64) * (const int *)ip;
        if (row < 0 || row >= d.ne[1]) {
            if (blockIdx.x == 0 && threadIdx.x == 0) {
                atomicExch(&status[1], (int)row);
                atomicExch(&status[0], 1);
            }
            continue;
        }
        char *orow = dst + row * d.nb[1] + i2 * d.nb[2] + i3 * d.nb[3];
        COL_LOOP(i0, sa.ne[0]) {
            store_elem(orow + i0 * d.nb[0], load_elem(a + oa, i0, sa.nb[0], at), dt);
        }
    }
}

// dst = a padded with lp[k] elements before and rp[k] after along each
// dimension k (lp packed as four ints), zeros outside a (ggml_pad_ext
// without the circular mode); float type t.
extern "C" __global__ void k_pad(char *dst, shape4 d, const char *a, shape4 sa, int t, int lp0, int lp1, int lp2,
                                 int lp3) {
    ROW_LOOP(d) {
        i64 i1, i2, i3;
        const i64 od = row_offset(d, r, &i1, &i2, &i3);
        const i64 j1 = i1 - lp1, j2 = i2 - lp2, j3 = i3 - lp3;
        const bool rowin = j1 >= 0 && j1 < sa.ne[1] && j2 >= 0 && j2 < sa.ne[2] && j3 >= 0 && j3 < sa.ne[3];
        const char *arow = a + j1 * sa.nb[1] + j2 * sa.nb[2] + j3 * sa.nb[3];
        COL_LOOP(i0, d.ne[0]) {
            const i64 j0 = i0 - lp0;
            const float v = rowin && j0 >= 0 && j0 < sa.ne[0] ? load_elem(arow, j0, sa.nb[0], t) : 0.0f;
            store_elem(dst + od + i0 * d.nb[0], v, t);
        }
    }
}

// im2col of input b (float type bt; [IW, IH, IC, N] when is2d, else
// [IW, IC, N]) for a kernel of kw x kh over ic channels: row (ow, oh, n)
// (1-d: (ow, n)) of dst (type dt) holds, at (c*kh + y)*kw + x, the input
// at (ow*s0 + x*d0 - p0, oh*s1 + y*d1 - p1), 0 outside.
extern "C" __global__ void k_im2col(char *dst, shape4 d, int dt, const char *b, shape4 sb, int bt, int kw, int kh,
                                    int is2d, int s0, int s1, int p0, int p1, int d0, int d1) {
    const i64 ih = is2d ? sb.ne[1] : 1;
    ROW_LOOP(d) {
        i64 ow, i2, i3;
        const i64 od = row_offset(d, r, &ow, &i2, &i3);
        const i64 oh = is2d ? i2 : 0, n = is2d ? i3 : i2;
        COL_LOOP(i0, d.ne[0]) {
            const i64 x = i0 % kw, y = (i0 / kw) % kh, c = i0 / ((i64)kw * kh);
            const i64 iw = ow * s0 + x * d0 - p0, ihh = oh * s1 + y * d1 - p1;
            float v = 0.0f;
            if (iw >= 0 && iw < sb.ne[0] && ihh >= 0 && ihh < ih) {
                const char *row = is2d ? b + ihh * sb.nb[1] + c * sb.nb[2] + n * sb.nb[3]
                                       : b + c * sb.nb[1] + n * sb.nb[2];
                v = load_elem(row, iw, sb.nb[0], bt);
            }
            store_elem(dst + od + i0 * d.nb[0], v, dt);
        }
    }
}

// dst[:, i1, i2] = a[:, i1, i2] + b[:, ids[i1, i2]] (f32; ids i32). A bad
// id yields a row of NaNs and is reported in status as k_get_rows does.
extern "C" __global__ void k_add_id_f32(char *dst, shape4 d, const char *a, shape4 sa, const char *b, shape4 sb,
                                        const char *idx, shape4 si, int *status) {
    ROW_LOOP(d) {
        i64 i1, i2, i3;
        const i64 od = row_offset(d, r, &i1, &i2, &i3);
        const int id = *(const int *)(idx + i1 * si.nb[0] + i2 * si.nb[1]);
        const bool ok = id >= 0 && id < sb.ne[1];
        if (!ok && blockIdx.x == 0 && threadIdx.x == 0) {
            atomicExch(&status[1], id);
            atomicExch(&status[0], 1);
        }
        const char *arow = a + i1 * sa.nb[1] + i2 * sa.nb[2] + i3 * sa.nb[3];
        const char *brow = b + (i64)(ok ? id : 0) * sb.nb[1];
        COL_LOOP(i0, d.ne[0]) {
            const float v = *(const float *)(arow + i0 * sa.nb[0]) + *(const float *)(brow + i0 * sb.nb[0]);
            *(float *)(dst + od + i0 * d.nb[0]) = ok ? v : __int_as_float(0x7fc00000);
        }
    }
}

// st_f16 writes v at byte p as a little-endian f16, rounded to nearest
// with ties to even (ggml's GGML_FP32_TO_FP16).
static __device__ __forceinline__ void st_f16(unsigned char *p, float v) {
    const unsigned short h = __half_as_ushort(__float2half_rn(v));
    p[0] = (unsigned char)h;
    p[1] = (unsigned char)(h >> 8);
}

// trunc_u8 is C's (uint8_t)(int8_t)v for the values the quantizers make:
// truncation toward zero, modulo 256; 0 for NaN and values beyond int32
// (as x86's conversion, and gogml's CPU quantizers, give).
static __device__ __forceinline__ int trunc_u8(float v) {
    if (!(v > -2147483648.0f && v < 2147483648.0f)) {
        return 0;
    }
    return (int)(unsigned char)(int)v;
}

static __device__ __forceinline__ int imin(int a, int b) { return a < b ? a : b; }

// trunc_i8 is C's (int8_t)v, as trunc_u8.
static __device__ __forceinline__ int trunc_i8(float v) { return (int)(signed char)trunc_u8(v); }

// put_pair packs elements j and j+16 of a 4- or 5-bit block: their low
// nibbles into byte j of qs, their fifth bits into bits j and j+16 of qh.
static __device__ __forceinline__ void put_pair(unsigned char *qs, unsigned *qh, int j, int q0, int q1) {
    qs[j] = (unsigned char)((q0 & 0x0F) | ((q1 & 0x0F) << 4));
    *qh |= ((unsigned)(q0 & 0x10) >> 4) << j;
    *qh |= ((unsigned)(q1 & 0x10) >> 4) << (j + QK / 2);
}

// st_u32 writes v at byte p, little-endian.
static __device__ __forceinline__ void st_u32(unsigned char *p, unsigned v) {
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
    p[2] = (unsigned char)(v >> 16);
    p[3] = (unsigned char)(v >> 24);
}

// quant_block writes the 32 values x as one block of type t at y, as
// ggml's CPU backend's from_float does: q4_0, q4_1, q5_0 and q5_1 by
// ggml's quantize_row_*_ref, q8_0 by its x86 quantizer (q =
// x·(127/amax) rounded to nearest with ties to even, saturated). Products
// are rounded apart from the sums that follow (__fmul_rn), as the
// reference's separate statements are.
static __device__ void quant_block(unsigned char *y, const float *x, int t) {
    if (t == T_Q8_0) {
        float amax = 0.0f;
        for (int j = 0; j < QK; j++) {
            const float a = fabsf(x[j]);
            if (a > amax) {
                amax = a;
            }
        }
        st_f16(y, amax / 127.0f);
        const float id = amax != 0.0f ? 127.0f / amax : 0.0f;
        for (int j = 0; j < QK; j++) {
            const float r = rintf(__fmul_rn(x[j], id));
            y[2 + j] = (unsigned char)(signed char)(int)fminf(127.0f, fmaxf(-128.0f, r));
        }
        return;
    }
    if (t == T_Q4_0 || t == T_Q5_0) {
        // d from the element of largest magnitude, with its sign.
        float amax = 0.0f, m = 0.0f;
        for (int j = 0; j < QK; j++) {
            if (amax < fabsf(x[j])) {
                amax = fabsf(x[j]);
                m = x[j];
            }
        }
        const bool five = t == T_Q5_0;
        const float d = m / (five ? -16.0f : -8.0f);
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        st_f16(y, d);
        unsigned qh = 0;
        unsigned char *qs = y + (five ? 6 : 2);
        for (int j = 0; j < QK / 2; j++) {
            const float o = five ? 16.5f : 8.5f;
            const int cap = five ? 31 : 15;
            const int q0 = imin(cap, trunc_i8(__fmul_rn(x[j], id) + o));
            const int q1 = imin(cap, trunc_i8(__fmul_rn(x[j + QK / 2], id) + o));
            put_pair(qs, &qh, j, q0, q1);
        }
        if (five) {
            st_u32(y + 2, qh);
        }
        return;
    }
    // q4_1, q5_1: d = (max - min)/(2^bits - 1), m = min.
    float mn = 3.402823466e+38f, mx = -3.402823466e+38f;
    for (int j = 0; j < QK; j++) {
        if (x[j] < mn) {
            mn = x[j];
        }
        if (x[j] > mx) {
            mx = x[j];
        }
    }
    const bool five = t == T_Q5_1;
    const float d = (mx - mn) / (five ? 31.0f : 15.0f);
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    st_f16(y, d);
    st_f16(y + 2, mn);
    unsigned qh = 0;
    unsigned char *qs = y + (five ? 8 : 4);
    for (int j = 0; j < QK / 2; j++) {
        int q0 = trunc_u8(__fmul_rn(x[j] - mn, id) + 0.5f);
        int q1 = trunc_u8(__fmul_rn(x[j + QK / 2] - mn, id) + 0.5f);
        if (!five) {
            q0 = imin(15, (int)(signed char)q0);
            q1 = imin(15, (int)(signed char)q1);
        }
        put_pair(qs, &qh, j, q0, q1);
    }
    if (five) {
        st_u32(y + 4, qh);
    }
}

// quant_bytes is the byte size of one block of type t (q4_0..q8_0).
static __device__ __forceinline__ int quant_bytes(int t) {
    switch (t) {
    case T_Q4_0: return Q4_0_BYTES;
    case T_Q4_1: return Q4_1_BYTES;
    case T_Q5_0: return Q5_0_BYTES;
    case T_Q5_1: return Q5_1_BYTES;
    }
    return Q8_0_BYTES;
}

// CPY, DUP, CONT into a block type: dst (type dt: q4_0, q4_1, q5_0, q5_1,
// q8_0) is contiguous, and element k of a (float type at, rows of whole
// blocks), in row-major order, goes to element k of dst, as ggml's CPU
// copies into a quantized tensor (its rows quantized one after another).
// One thread per block, grid-stride.
extern "C" __global__ void k_cpy_quant(char *dst, int dt, const char *a, shape4 sa, int at) {
    const i64 per_row = sa.ne[0] / QK;
    const i64 total = per_row * nrows(sa);
    const int bytes = quant_bytes(dt);
    for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += (i64)gridDim.x * blockDim.x) {
        i64 i1, i2, i3;
        const char *row = a + row_offset(sa, i / per_row, &i1, &i2, &i3);
        const i64 k0 = (i % per_row) * QK;
        float x[QK];
        for (int j = 0; j < QK; j++) {
            x[j] = load_elem(row, k0 + j, sa.nb[0], at);
        }
        quant_block((unsigned char *)dst + i * bytes, x, dt);
    }
}

// SET_ROWS into a block type: row i1 of a (float type at, shape
// [ne0, ne1, ne2, ne3], ne0 whole blocks) becomes row idx[i1, i2 % ..,
// i3 % ..] of dst (type dt, dense rows) in plane (i2, i3), quantized as
// quant_block does; as k_set_rows, a bad index skips the row and is
// reported in status. One thread per block of a row, grid-stride.
extern "C" __global__ void k_set_rows_quant(char *dst, shape4 d, int dt, const char *a, shape4 sa, int at,
                                            const char *idx, shape4 si, int wide, int *status) {
    const i64 per_row = sa.ne[0] / QK;
    const i64 total = per_row * nrows(sa);
    const int bytes = quant_bytes(dt);
    for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += (i64)gridDim.x * blockDim.x) {
        i64 i1, i2, i3;
        const i64 oa = row_offset(sa, i / per_row, &i1, &i2, &i3);
        const char *ip = idx + i1 * si.nb[0] + (i2 % si.ne[1]) * si.nb[1] + (i3 % si.ne[2]) * si.nb[2];
        const i64 row = wide ? *(const long long *)ip : (i64) * (const int *)ip;
        if (row < 0 || row >= d.ne[1]) {
            atomicExch(&status[1], (int)row);
            atomicExch(&status[0], 1);
            continue;
        }
        const i64 blk = i % per_row;
        float x[QK];
        for (int j = 0; j < QK; j++) {
            x[j] = load_elem(a + oa, blk * QK + j, sa.nb[0], at);
        }
        quant_block((unsigned char *)dst + row * d.nb[1] + i2 * d.nb[2] + i3 * d.nb[3] + blk * bytes, x, dt);
    }
}

// k_binary is k_binary_f32 for any float types (f32, f16, bf16) of dst
// (dt), a (at) and b (bt): each element read as f32, combined in f32 and
// rounded to dst's type, as ggml's CPU binary ops do.
extern "C" __global__ void k_binary(char *dst, shape4 d, int dt, const char *a, shape4 sa, int at, const char *b,
                                    shape4 sb, int bt, int op) {
    ROW_LOOP(d) {
        i64 i1, i2, i3;
        const i64 od = row_offset(d, r, &i1, &i2, &i3);
        const i64 oa = i1 * sa.nb[1] + i2 * sa.nb[2] + i3 * sa.nb[3];
        const i64 ob = bcast_row(sb, i1, i2, i3);
        const i64 nb0 = sb.ne[0];
        COL_LOOP(i0, d.ne[0]) {
            const float x = load_elem(a + oa, i0, sa.nb[0], at);
            const float y = load_elem(b + ob, nb0 == d.ne[0] ? i0 : i0 % nb0, sb.nb[0], bt);
            store_elem(dst + od + i0 * d.nb[0], bin_apply(op, x, y), dt);
        }
    }
}

// k_concat is k_concat_f32 for elements of es bytes (1, 2, 4 or 8: i8,
// f16, bf16, i32, i64 as well as f32), copied as bytes.
extern "C" __global__ void k_concat(char *dst, shape4 d, const char *a, shape4 sa, const char *b, shape4 sb, int dim,
                                    int es) {
    ROW_LOOP(d) {
        i64 i[4];
        const i64 od = row_offset(d, r, &i[1], &i[2], &i[3]);
        COL_LOOP(i0, d.ne[0]) {
            i[0] = i0;
            const char *src;
            if (i[dim] < sa.ne[dim]) {
                src = a + i[0] * sa.nb[0] + i[1] * sa.nb[1] + i[2] * sa.nb[2] + i[3] * sa.nb[3];
            } else {
                i64 j[4] = {i[0], i[1], i[2], i[3]};
                j[dim] -= sa.ne[dim];
                src = b + j[0] * sb.nb[0] + j[1] * sb.nb[1] + j[2] * sb.nb[2] + j[3] * sb.nb[3];
            }
            char *o = dst + od + i0 * d.nb[0];
            switch (es) {
            case 1: *o = *src; break;
            case 2: *(unsigned short *)o = *(const unsigned short *)src; break;
            case 4: *(unsigned *)o = *(const unsigned *)src; break;
            default: *(unsigned long long *)o = *(const unsigned long long *)src; break;
            }
        }
    }
}

// SSM_CONV (Mamba's causal conv1d): dst[ch, t, s] = sum over j of
// x[t + j, ch, s] * c[j, ch]; x {d_conv-1+n_t, d_inner, n_s}, c {d_conv,
// d_inner}, dst {d_inner, n_t, n_s}, all f32.
extern "C" __global__ void k_ssm_conv_f32(char *dst, shape4 d, const char *x, shape4 sx,
                                          const char *c, shape4 sc) {
    ROW_LOOP(d) {
        i64 i1, i2, i3;
        const i64 od = row_offset(d, r, &i1, &i2, &i3);
        COL_LOOP(i0, d.ne[0]) {
            const char *xr = x + i1 * sx.nb[0] + i0 * sx.nb[1] + i2 * sx.nb[2];
            const char *cr = c + i0 * sc.nb[1];
            float sum = 0.0f;
            for (i64 j = 0; j < sc.ne[0]; j++) {
                sum += *(const float *)(xr + j * sx.nb[0]) * *(const float *)(cr + j * sc.nb[0]);
            }
            *(float *)(dst + od + i0 * d.nb[0]) = sum;
        }
    }
}

// SSM_SCAN (Mamba's selective scan), one thread per (dim element i1, head
// h, sequence i3), its state row of nc <= SSM_MAXN elements in registers
// or local memory, the tokens in order: dt' = softplus(dt), state =
// state * exp(dt' * A) + B * x * dt', y = sum of state * C; the states
// after the last K tokens go to dst's state slots after y (slot 0 the
// final one). Operands as cpukernels' ssmScan reads them (s, dt and A
// contiguous; x, B and C with dense rows); y and the slots are dense. A
// sequence id outside [0, s.ne[3]) is reported in status and its thread
// writes nothing.
#define SSM_MAXN 256
extern "C" __global__ void k_ssm_scan_f32(char *dst, const char *s, shape4 ss, const char *x, shape4 sx,
                                          const char *dt, shape4 sdt, const char *A, shape4 sA,
                                          const char *B, shape4 sB, const char *C, shape4 sC,
                                          const char *ids, shape4 sids, int K, int *status) {
    const i64 nc = ss.ne[0], nr = sx.ne[0], nh = sx.ne[1], nt = sx.ne[2], ns = sx.ne[3];
    const i64 ng = sB.ne[1];
    const i64 n = nr * nh * ns;
    const i64 states_at = nr * nh * nt * ns * 4; // y's bytes
    for (i64 u = (i64)blockIdx.x * blockDim.x + threadIdx.x; u < n; u += (i64)gridDim.x * blockDim.x) {
        const i64 i1 = u % nr, h = (u / nr) % nh, i3 = u / (nr * nh);
        const int id = *(const int *)(ids + i3 * sids.nb[0]);
        if (id < 0 || id >= ss.ne[3]) {
            atomicExch(&status[1], id);
            atomicExch(&status[0], 1);
            continue;
        }
        float st[SSM_MAXN];
        const char *s0 = s + h * ss.nb[2] + (i64)id * ss.nb[3] + i1 * nc * 4;
        for (i64 i = 0; i < nc; i++) {
            st[i] = ((const float *)s0)[i];
        }
        const float *a = (const float *)(A + h * sA.nb[1]);
        const i64 g = h / (nh / ng);
        for (i64 i2 = 0; i2 < nt; i2++) {
            const float d = *(const float *)(dt + i2 * sdt.nb[1] + i3 * sdt.nb[2] + h * 4);
            const float dtv = d > 20.0f ? d : logf(1.0f + expf(d));
            const float xdt = *(const float *)(x + h * sx.nb[1] + i2 * sx.nb[2] + i3 * sx.nb[3] + i1 * 4) * dtv;
            const float *b = (const float *)(B + g * sB.nb[1] + i2 * sB.nb[2] + i3 * sB.nb[3]);
            const float *c = (const float *)(C + g * sC.nb[1] + i2 * sC.nb[2] + i3 * sC.nb[3]);
            float sum = 0.0f;
            if (sA.ne[0] == 1) {
                const float dA = expf(dtv * a[0]);
                for (i64 i0 = 0; i0 < nc; i0++) {
                    const float v = st[i0] * dA + b[i0] * xdt;
                    sum += v * c[i0];
                    st[i0] = v;
                }
            } else {
                for (i64 i0 = 0; i0 < nc; i0++) {
                    const float v = st[i0] * expf(dtv * a[i0]) + b[i0] * xdt;
                    sum += v * c[i0];
                    st[i0] = v;
                }
            }
            *(float *)(dst + (((i3 * nt + i2) * nh + h) * nr + i1) * 4) = sum;
            const i64 slot = nt - 1 - i2;
            if (slot < K) {
                float *o = (float *)(dst + states_at + (slot * ns + i3) * ss.nb[3] + h * ss.nb[2] + i1 * nc * 4);
                for (i64 i0 = 0; i0 < nc; i0++) {
                    o[i0] = st[i0];
                }
            }
        }
    }
}
