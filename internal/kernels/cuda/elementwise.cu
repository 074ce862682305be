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

// dst = a op b, b broadcast (each of b's dimensions divides a's).
extern "C" __global__ void k_binary_f32(char *dst, shape4 d, const char *a, shape4 sa,
                                        const char *b, shape4 sb, int op) {
    ROW_LOOP(d) {
        i64 i1, i2, i3;
        const i64 od = row_offset(d, r, &i1, &i2, &i3);
        const i64 oa = i1 * sa.nb[1] + i2 * sa.nb[2] + i3 * sa.nb[3];
        const i64 ob = (i1 % sb.ne[1]) * sb.nb[1] + (i2 % sb.ne[2]) * sb.nb[2] +
                       (i3 % sb.ne[3]) * sb.nb[3];
        const i64 nb0 = sb.ne[0];
        COL_LOOP(i0, d.ne[0]) {
            const float x = *(const float *)(a + oa + i0 * sa.nb[0]);
            const i64 j0 = nb0 == d.ne[0] ? i0 : i0 % nb0;
            const float y = *(const float *)(b + ob + j0 * sb.nb[0]);
            float z;
            switch (op) {
            case BIN_ADD: z = x + y; break;
            case BIN_SUB: z = x - y; break;
            case BIN_MUL: z = x * y; break;
            default: z = x / y; break;
            }
            *(float *)(dst + od + i0 * d.nb[0]) = z;
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
    case U_GELU: {
        const float c = 0.7978845608028654f; // sqrt(2/pi)
        return 0.5f * x * (1.0f + tanhf(c * x * (1.0f + 0.044715f * x * x)));
    }
    case U_GELU_QUICK: return x * (1.0f / (1.0f + expf(-1.702f * x)));
    case U_SILU: return x / (1.0f + expf(-x));
    case U_HARDSWISH: return x * fminf(1.0f, fmaxf(0.0f, (x + 3.0f) / 6.0f));
    case U_HARDSIGMOID: return fminf(1.0f, fmaxf(0.0f, (x + 3.0f) / 6.0f));
    case U_EXP: return expf(x);
    case U_SQR: return x * x;
    case U_SQRT: return sqrtf(x);
    case U_LOG: return logf(x);
    case U_SIN: return sinf(x);
    case U_COS: return cosf(x);
    case U_SCALE: return x * p0 + p1;
    case U_CLAMP: return fminf(fmaxf(x, p0), p1);
    case U_LEAKY_RELU: return fmaxf(x, 0.0f) + fminf(x, 0.0f) * p0;
    }
    return x;
}

// dst = f(a), same shape.
extern "C" __global__ void k_unary_f32(char *dst, shape4 d, const char *a, shape4 sa, int op,
                                       float p0, float p1) {
    ROW_LOOP(d) {
        i64 i1, i2, i3;
        const i64 od = row_offset(d, r, &i1, &i2, &i3);
        const i64 oa = i1 * sa.nb[1] + i2 * sa.nb[2] + i3 * sa.nb[3];
        COL_LOOP(i0, d.ne[0]) {
            const float x = *(const float *)(a + oa + i0 * sa.nb[0]);
            *(float *)(dst + od + i0 * d.nb[0]) = unary_fn(x, op, p0, p1);
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
