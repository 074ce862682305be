// misc: element-wise ops that place or gather elements, one invocation per
// result element; ex(0) selects the op:
//   0 PAD: source 0 padded by op parameters lp0, rp0, ... lp3, rp3 with
//     zeros, or wrapped around (op parameter 8, circular).
//   1 ACC / 2 SET: a copy of source 0 (dense) with source 1 added into
//     (written over) the view at byte offset op[3] with byte strides
//     op[0..2]; ex(1) is the element size.
//   3 ADD_ID: source 0 plus row ids(i1, i2) of source 1 (ids: source 2);
//     an id out of range raises status[0].
//   4 IM2COL: unfolds source 0 (the input) for a convolution; ex(1..3)
//     are the kernel width and height and the input height.
//   5 FILL: op[0] (float) everywhere.
//   6 ARANGE: start op[0] + step op[2] times the index (floats).
//   7 TRI: source 0 where i0 vs i1 satisfies tri type op[0], else 0.
//   8 ROLL: source 0 shifted by op[0..3] along each dimension, wrapping.
//   9 PAD_REFLECT_1D: rows padded by op[0] / op[1] mirrored elements.
//  10 REPEAT_BACK: the sum of the source's tiles of the result's shape,
//     added tile by tile (dimension 3 outermost) as ggml does.
//  11 DIAG: source 0's row i2, i3 (ne1 1) on the diagonal of an ne0 x ne0
//     matrix, zeros elsewhere.
//  12 OPT_STEP_SGD: weights source 0 (which the result views), gradient
//     source 1, parameters (alpha, wd) source 2.
//  13 OPT_STEP_ADAMW: the result views the weights; sources 0..2 are the
//     gradient and the moments m and v (updated in place), the seven
//     parameters are at binding 5, byte ex(1).
#define LOCAL 128u
layout(local_size_x = 128) in;
#include "common.glsl"

#define M_PAD 0u
#define M_ACC 1u
#define M_SET 2u
#define M_ADD_ID 3u
#define M_IM2COL 4u
#define M_FILL 5u
#define M_ARANGE 6u
#define M_TRI 7u
#define M_ROLL 8u
#define M_PAD_REFLECT 9u
#define M_REPEAT_BACK 10u
#define M_DIAG 11u
#define M_OPT_SGD 12u
#define M_OPT_ADAMW 13u

layout(std430, binding = 5) buffer Extra { uint xw[]; };
float xp(uint i) { return uintBitsToFloat(xw[(ex(1u) >> 2) + i]); }

// wrap is i modulo n in [0, n) (GLSL's % of a negative int is undefined).
uint wrap(int i, uint n) { return uint(i + int(n) * (abs(i) / int(n) + 1)) % n; }

void main() {
	uint i = gid();
	if (i >= nel(0u)) return;
	uvec4 c = coords(0u, i);
	uint o = at(0u, c);
	uint mode = ex(0u);
	if (mode == M_PAD) {
		ivec4 sc = ivec4(c) - ivec4(opi(0u), opi(2u), opi(4u), opi(6u));
		ivec4 n = ivec4(nes(1u));
		if (opi(8u) != 0) {
			// GLSL's % of a negative operand is undefined: shift first.
			sc = (sc + n * (abs(sc) / n + 1)) % n;
		} else if (any(lessThan(sc, ivec4(0))) || any(greaterThanEqual(sc, n))) {
			st(o, 0.0);
			return;
		}
		st(o, ld(1u, at(1u, uvec4(sc))));
		return;
	}
	if (mode == M_ACC || mode == M_SET) {
		// Which element of the view, if any, is element c of the result?
		uint es = ex(1u);
		int rel = int(i * es) - opi(3u);
		bool in_view = rel >= 0;
		uvec4 bc = uvec4(0u);
		if (in_view) {
			uint r = uint(rel);
			bc.w = r / uint(opi(2u));
			r -= bc.w * uint(opi(2u));
			bc.z = r / uint(opi(1u));
			r -= bc.z * uint(opi(1u));
			bc.y = r / uint(opi(0u));
			r -= bc.y * uint(opi(0u));
			bc.x = r / es;
			in_view = r % es == 0u && all(lessThan(bc, nes(2u)));
		}
		uint ao = at(1u, c);
		if (mode == M_SET) {
			if (in_view) copyraw(o, 2u, at(2u, bc));
			else copyraw(o, 1u, ao);
			return;
		}
		float v = ld(1u, ao);
		if (in_view) v += ld(2u, at(2u, bc));
		st(o, v);
		return;
	}
	if (mode == M_ADD_ID) {
		int id = int(word(3u, toff(3u) + c.y * nb(3u, 0u) + c.z * nb(3u, 1u)));
		if (id < 0 || uint(id) >= ne(2u, 1u)) {
			atomicOr(status[0], 1u);
			status[1] = uint(id);
			return;
		}
		st(o, ld(1u, at(1u, c)) + ld(2u, at(2u, uvec4(c.x, uint(id), 0u, 0u))));
		return;
	}
	if (mode == M_OPT_SGD) {
		float alpha = ld(3u, toff(3u)), wd = ld(3u, toff(3u) + 4u);
		st(o, ld(1u, at(1u, c)) * (1.0 - alpha * wd) - alpha * ld(2u, at(2u, c)));
		return;
	}
	if (mode == M_OPT_ADAMW) {
		float alpha = xp(0u), beta1 = xp(1u), beta2 = xp(2u), eps = xp(3u), wd = xp(4u), beta1h = xp(5u), beta2h = xp(6u);
		float g = ld(1u, at(1u, c));
		uint mo = at(2u, c), vo = at(3u, c);
		float m = uintBitsToFloat(B[2].w[mo >> 2]) * beta1 + g * (1.0 - beta1);
		float v = uintBitsToFloat(B[3].w[vo >> 2]) * beta2 + g * g * (1.0 - beta2);
		B[2].w[mo >> 2] = floatBitsToUint(m);
		B[3].w[vo >> 2] = floatBitsToUint(v);
		float vh = sqrt(v * beta2h) + eps;
		st(o, uintBitsToFloat(B[0].w[o >> 2]) * (1.0 - alpha * wd) - alpha * (m * beta1h) / vh);
		return;
	}
	if (mode == M_DIAG) {
		st(o, c.x == c.y ? ld(1u, at(1u, uvec4(c.x, 0u, c.zw))) : 0.0);
		return;
	}
	if (mode == M_FILL) {
		st(o, opf(0u));
		return;
	}
	if (mode == M_ARANGE) {
		st(o, opf(0u) + opf(2u) * float(i));
		return;
	}
	if (mode == M_TRI) {
		int tt = opi(0u);
		bool keep = (tt == 0 && c.x >= c.y) || (tt == 1 && c.x > c.y) || (tt == 2 && c.x <= c.y) || (tt == 3 && c.x < c.y);
		st(o, keep ? ld(1u, at(1u, c)) : 0.0);
		return;
	}
	if (mode == M_ROLL) {
		uvec4 n = nes(1u);
		uvec4 sc = uvec4(wrap(int(c.x) - opi(0u), n.x), wrap(int(c.y) - opi(1u), n.y),
			wrap(int(c.z) - opi(2u), n.z), wrap(int(c.w) - opi(3u), n.w));
		st(o, ld(1u, at(1u, sc)));
		return;
	}
	if (mode == M_PAD_REFLECT) {
		int n = int(ne(1u, 0u));
		int j = int(c.x) - opi(0u);
		if (j < 0) j = -j;
		else if (j >= n) j = 2 * (n - 1) - j;
		st(o, ld(1u, at(1u, uvec4(uint(j), c.yzw))));
		return;
	}
	if (mode == M_REPEAT_BACK) {
		uvec4 n = nes(0u);
		uvec4 k = nes(1u) / n;
		float acc = 0.0;
		for (uint k3 = 0u; k3 < k.w; k3++)
			for (uint k2 = 0u; k2 < k.z; k2++)
				for (uint k1 = 0u; k1 < k.y; k1++)
					for (uint k0 = 0u; k0 < k.x; k0++) acc += ld(1u, at(1u, c + uvec4(k0, k1, k2, k3) * n));
		st(o, acc);
		return;
	}
	// M_IM2COL: result (ic*kh*kw, ow, oh, n) in 2-d, (ic*kw, ow, n) in 1-d.
	uint kw = ex(1u), kh = ex(2u), ih = ex(3u);
	bool is2d = opi(6u) != 0;
	uint x = c.x % kw, y = (c.x / kw) % kh, ch = c.x / (kw * kh);
	uint oh = is2d ? c.z : 0u, n = is2d ? c.w : c.z;
	int iw = int(c.y) * opi(0u) + int(x) * opi(4u) - opi(2u);
	int ihh = int(oh) * opi(1u) + int(y) * opi(5u) - opi(3u);
	float v = 0.0;
	if (iw >= 0 && uint(iw) < ne(1u, 0u) && ihh >= 0 && uint(ihh) < ih) {
		v = ld(1u, at(1u, is2d ? uvec4(uint(iw), uint(ihh), ch, n) : uvec4(uint(iw), ch, n, 0u)));
	}
	st(o, v);
}
