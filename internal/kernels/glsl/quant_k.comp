// quant_k: copies (DUP/CPY/CONT) from f32/f16/bf16 into the k-quants
// q2_K..q6_K with ggml's reference quantizers (quantize_row_*_ref and the
// make_*_quants searches they call), one invocation per 256-element block
// of the result; the block's elements are source elements in flat order.
// QT (set by the backend) is the result's type code, 10..14, so that a
// variant compiles one quantizer.
// Every float that feeds a decision is `precise`, so the compiler neither
// fuses nor reorders what ggml computes step by step.
#define LOCAL 64u
layout(local_size_x = 64) in;
#include "common.glsl"

#define GROUP_MAX_EPS 1e-15

float X[256]; // the block's elements
int L[256];   // their quants
float W[32];  // weights of the sub-block being searched
int LA[32];   // quants of the scale being tried
uint OB[210]; // the block's bytes

// Z is 0, read from the parameters so that the compiler cannot fold it:
// the loop bounds below add it, which keeps Mesa from unrolling (and
// inlining into every copy) what ggml writes as loops; unrolled, the
// kernel took minutes to compile on llvmpipe.
uint Z;

// nearest is ggml's nearest_int: round to nearest, ties to even.
int nearest(float v) {
	precise float t = v + 12582912.0;
	return (floatBitsToInt(t) & 0x7fffff) - 0x400000;
}

// rtf16 is v stored as f16 and read back.
float rtf16(float v) { return unpackHalf2x16(packHalf2x16(vec2(v, 0.0))).x; }

// put16 stores v as f16 at byte o of the block.
void put16(uint o, float v) {
	uint h = packHalf2x16(vec2(v, 0.0));
	OB[o] = h & 255u;
	OB[o + 1u] = h >> 8;
}

float qerr(float s, float m, int l, float x, float w, bool mad) {
	precise float diff = s * float(l) + m - x;
	diff = mad ? abs(diff) : diff * diff;
	precise float r = w * diff;
	return r;
}

// qkx2 is make_qkx2_quants over X[o..o+n) with weights W: quants in
// [0, nmax] to L; returns (scale, -min).
vec2 qkx2(uint o, uint n, int nmax, float rmin, float rdelta, int nstep, bool mad) {
	precise float mn = X[o], mx = X[o];
	precise float sumw = W[0];
	precise float sumx = sumw * X[o];
	for (uint i = 1u; i < n + Z; i++) {
		if (X[o + i] < mn) mn = X[o + i];
		if (X[o + i] > mx) mx = X[o + i];
		sumw += W[i];
		sumx += W[i] * X[o + i];
	}
	if (mn > 0.0) mn = 0.0;
	if (mx == mn) {
		for (uint i = 0u; i < n + Z; i++) L[o + i] = 0;
		return vec2(0.0, -mn);
	}
	float nm = float(nmax);
	precise float iscale = nm / (mx - mn);
	precise float scale = 1.0 / iscale;
	precise float best = 0.0;
	for (uint i = 0u; i < n + Z; i++) {
		precise float v = iscale * (X[o + i] - mn);
		int l = clamp(nearest(v), 0, nmax);
		L[o + i] = l;
		best += qerr(scale, mn, l, X[o + i], W[i], mad);
	}
	if (nstep < 1) return vec2(scale, -mn);
	for (int is = 0; is <= nstep + int(Z); is++) {
		precise float num = rmin + rdelta * float(is) + nm;
		iscale = num / (mx - mn);
		precise float sl = 0.0, sl2 = 0.0, sxl = 0.0;
		for (uint i = 0u; i < n + Z; i++) {
			precise float v = iscale * (X[o + i] - mn);
			int l = clamp(nearest(v), 0, nmax);
			LA[i] = l;
			float fl = float(l);
			precise float wl = W[i] * fl;
			sl += wl;
			sl2 += wl * fl;
			sxl += wl * X[o + i];
		}
		precise float D = sumw * sl2 - sl * sl;
		if (D > 0.0) {
			precise float ts = (sumw * sxl - sumx * sl) / D;
			precise float tm = (sl2 * sumx - sl * sxl) / D;
			if (tm > 0.0) {
				tm = 0.0;
				ts = sxl / sl2;
			}
			precise float cur = 0.0;
			for (uint i = 0u; i < n + Z; i++) cur += qerr(ts, tm, LA[i], X[o + i], W[i], mad);
			if (cur < best) {
				for (uint i = 0u; i < n + Z; i++) L[o + i] = LA[i];
				best = cur;
				scale = ts;
				mn = tm;
			}
		}
	}
	return vec2(scale, -mn);
}

// absmax is the element of X[o..o+16) of largest magnitude (the first).
float absmax(uint o) {
	float amax = 0.0, m = 0.0;
	for (uint i = 0u; i < 16u + Z; i++) {
		if (abs(X[o + i]) > amax) {
			amax = abs(X[o + i]);
			m = X[o + i];
		}
	}
	return m;
}

// qxsums is make_qx_quants' sums for iscale over X[o..o+16), storing the
// quants (offset by nmax) to L when store is set.
vec2 qxsums(uint o, int nmax, float iscale, bool store) {
	precise float sumlx = 0.0, suml2 = 0.0;
	for (uint i = 0u; i < 16u + Z; i++) {
		float v = X[o + i];
		precise float t = iscale * v;
		int l = clamp(nearest(t), -nmax, nmax - 1);
		if (store) L[o + i] = l + nmax;
		float fl = float(l);
		precise float w = v * v;
		sumlx += w * v * fl;
		suml2 += w * fl * fl;
	}
	return vec2(sumlx, suml2);
}

// qx is make_qx_quants (rmse_type 1, no weights) over X[o..o+16):
// quants offset by nmax to L; returns the scale.
float qx(uint o, int nmax) {
	float m = absmax(o);
	if (abs(m) < GROUP_MAX_EPS) {
		for (uint i = 0u; i < 16u + Z; i++) L[o + i] = 0;
		return 0.0;
	}
	float nm = float(nmax);
	precise float iscale = -nm / m;
	vec2 s = qxsums(o, nmax, iscale, true);
	precise float scale = s.y != 0.0 ? s.x / s.y : 0.0;
	precise float best = scale * s.x;
	for (int is = -9; is <= 9 + int(Z); is++) {
		if (is == 0) continue;
		precise float num = nm + 0.1 * float(is);
		iscale = -num / m;
		s = qxsums(o, nmax, iscale, false);
		precise float lhs = s.x * s.x, rhs = best * s.y;
		if (s.y > 0.0 && lhs > rhs) {
			qxsums(o, nmax, iscale, true);
			scale = s.x / s.y;
			best = scale * s.x;
		}
	}
	return scale;
}

// q3 is make_q3_quants (do_rmse) over X[o..o+16): quants offset by nmax
// to L; returns the scale.
float q3(uint o, int nmax) {
	float m = absmax(o);
	if (abs(m) < GROUP_MAX_EPS) {
		for (uint i = 0u; i < 16u + Z; i++) L[o + i] = 0;
		return 0.0;
	}
	precise float iscale = -float(nmax) / m;
	precise float sumlx = 0.0, suml2 = 0.0;
	for (uint i = 0u; i < 16u + Z; i++) {
		float v = X[o + i];
		precise float t = iscale * v;
		int l = clamp(nearest(t), -nmax, nmax - 1);
		L[o + i] = l;
		float fl = float(l);
		precise float w = v * v;
		sumlx += w * v * fl;
		suml2 += w * fl * fl;
	}
	for (int itry = 0; itry < 5 + int(Z); itry++) {
		int changed = 0;
		for (uint i = 0u; i < 16u + Z; i++) {
			float v = X[o + i];
			precise float w = v * v;
			float li = float(L[o + i]);
			precise float slx = sumlx - w * v * li;
			if (slx > 0.0) {
				precise float sl2 = suml2 - w * li * li;
				precise float t = v * sl2 / slx;
				int nl = clamp(nearest(t), -nmax, nmax - 1);
				if (nl != L[o + i]) {
					float fl = float(nl);
					slx += w * v * fl;
					sl2 += w * fl * fl;
					precise float lhs = slx * slx * suml2, rhs = sumlx * sumlx * sl2;
					if (sl2 > 0.0 && lhs > rhs) {
						L[o + i] = nl;
						sumlx = slx;
						suml2 = sl2;
						changed++;
					}
				}
			}
		}
		if (changed == 0) break;
	}
	for (uint i = 0u; i < 16u + Z; i++) L[o + i] += nmax;
	return suml2 > 0.0 ? sumlx / suml2 : 0.0;
}

// The block quantizers write OB and return the block's size in bytes.

uint q2k() {
	float scales[16], mins[16];
	precise float maxs = 0.0, maxm = 0.0;
	for (uint j = 0u; j < 16u + Z; j++) {
		for (uint l = 0u; l < 16u + Z; l++) W[l] = abs(X[16u * j + l]);
		vec2 sm = qkx2(16u * j, 16u, 3, -0.5, 0.1, 15, true);
		scales[j] = sm.x;
		mins[j] = sm.y;
		if (sm.x > maxs) maxs = sm.x;
		if (sm.y > maxm) maxm = sm.y;
	}
	for (uint j = 0u; j < 16u + Z; j++) OB[j] = 0u;
	if (maxs > 0.0) {
		precise float is = 15.0 / maxs;
		for (uint j = 0u; j < 16u + Z; j++) {
			precise float t = is * scales[j];
			OB[j] = uint(nearest(t)) & 255u;
		}
		put16(80u, maxs / 15.0);
	} else {
		put16(80u, 0.0);
	}
	if (maxm > 0.0) {
		precise float is = 15.0 / maxm;
		for (uint j = 0u; j < 16u + Z; j++) {
			precise float t = is * mins[j];
			OB[j] = (OB[j] | (uint(nearest(t)) << 4)) & 255u;
		}
		put16(82u, maxm / 15.0);
	} else {
		put16(82u, 0.0);
	}
	float dall = h2f(OB[80] | (OB[81] << 8)), mall = h2f(OB[82] | (OB[83] << 8));
	for (uint j = 0u; j < 16u + Z; j++) {
		precise float d = dall * float(OB[j] & 15u);
		if (d == 0.0) continue;
		precise float dm = mall * float(OB[j] >> 4);
		for (uint i = 0u; i < 16u + Z; i++) {
			precise float t = (X[16u * j + i] + dm) / d;
			L[16u * j + i] = clamp(nearest(t), 0, 3);
		}
	}
	for (uint j = 0u; j < 256u + Z; j += 128u)
		for (uint l = 0u; l < 32u + Z; l++)
			OB[16u + j / 4u + l] = uint(L[j + l] | (L[j + l + 32u] << 2) | (L[j + l + 64u] << 4) | (L[j + l + 96u] << 6));
	return 84u;
}

uint q3k() {
	float scales[16];
	float maxs = 0.0, amax = 0.0;
	for (uint j = 0u; j < 16u + Z; j++) {
		scales[j] = q3(16u * j, 4);
		if (abs(scales[j]) > amax) {
			amax = abs(scales[j]);
			maxs = scales[j];
		}
	}
	for (uint j = 0u; j < 110u + Z; j++) OB[j] = 0u;
	if (maxs != 0.0) {
		precise float is = -32.0 / maxs;
		for (uint j = 0u; j < 16u + Z; j++) {
			precise float t = is * scales[j];
			uint l = uint(clamp(nearest(t), -32, 31) + 32);
			if (j < 8u) {
				OB[96u + j] = l & 15u;
			} else {
				OB[96u + j - 8u] |= (l & 15u) << 4;
			}
			OB[96u + 8u + (j & 3u)] |= (l >> 4) << (2u * (j >> 2));
		}
		put16(108u, 1.0 / is);
	}
	float dall = h2f(OB[108] | (OB[109] << 8));
	for (uint j = 0u; j < 16u + Z; j++) {
		uint lo = j < 8u ? (OB[96u + j] & 15u) : (OB[96u + j - 8u] >> 4);
		uint hi = (OB[104u + (j & 3u)] >> (2u * (j >> 2))) & 3u;
		precise float d = dall * float(int(lo | (hi << 4)) - 32);
		if (d == 0.0) continue;
		for (uint i = 0u; i < 16u + Z; i++) {
			precise float t = X[16u * j + i] / d;
			L[16u * j + i] = clamp(nearest(t), -4, 3) + 4;
		}
	}
	for (uint j = 0u; j < 256u + Z; j++) {
		if (L[j] > 3) {
			OB[j & 31u] |= 1u << (j >> 5);
			L[j] -= 4;
		}
	}
	for (uint j = 0u; j < 256u + Z; j += 128u)
		for (uint l = 0u; l < 32u + Z; l++)
			OB[32u + j / 4u + l] = uint(L[j + l] | (L[j + l + 32u] << 2) | (L[j + l + 64u] << 4) | (L[j + l + 96u] << 6));
	return 110u;
}

// k45 is what q4_K and q5_K share: scales, mins and d/dmin to OB[0..16),
// the quants to L.
void k45(int nmax, float rmin, int nstep) {
	float scales[8], mins[8];
	precise float maxs = 0.0, maxm = 0.0;
	for (uint j = 0u; j < 8u + Z; j++) {
		precise float sum2 = 0.0;
		for (uint l = 0u; l < 32u + Z; l++) sum2 += X[32u * j + l] * X[32u * j + l];
		precise float av = sqrt(sum2 / 32.0);
		for (uint l = 0u; l < 32u + Z; l++) W[l] = av + abs(X[32u * j + l]);
		vec2 sm = qkx2(32u * j, 32u, nmax, rmin, 0.1, nstep, false);
		scales[j] = sm.x;
		mins[j] = sm.y;
		if (sm.x > maxs) maxs = sm.x;
		if (sm.y > maxm) maxm = sm.y;
	}
	precise float invs = maxs > 0.0 ? 63.0 / maxs : 0.0;
	precise float invm = maxm > 0.0 ? 63.0 / maxm : 0.0;
	for (uint j = 0u; j < 16u + Z; j++) OB[j] = 0u;
	for (uint j = 0u; j < 8u + Z; j++) {
		precise float ts = invs * scales[j], tm = invm * mins[j];
		uint ls = min(63u, uint(nearest(ts)) & 255u);
		uint lm = min(63u, uint(nearest(tm)) & 255u);
		if (j < 4u) {
			OB[4u + j] = ls;
			OB[8u + j] = lm;
		} else {
			OB[8u + j] = (ls & 15u) | ((lm & 15u) << 4);
			OB[4u + j - 4u] |= (ls >> 4) << 6;
			OB[4u + j] |= (lm >> 4) << 6;
		}
	}
	put16(0u, maxs / 63.0);
	put16(2u, maxm / 63.0);
	float dall = h2f(OB[0] | (OB[1] << 8)), mall = h2f(OB[2] | (OB[3] << 8));
	for (uint j = 0u; j < 8u + Z; j++) {
		uint sc, m;
		if (j < 4u) {
			sc = OB[4u + j] & 63u;
			m = OB[8u + j] & 63u;
		} else {
			sc = (OB[8u + j] & 15u) | ((OB[j] >> 6) << 4);
			m = (OB[8u + j] >> 4) | ((OB[4u + j] >> 6) << 4);
		}
		precise float d = dall * float(sc);
		if (d == 0.0) continue;
		precise float dm = mall * float(m);
		for (uint i = 0u; i < 32u + Z; i++) {
			precise float t = (X[32u * j + i] + dm) / d;
			L[32u * j + i] = clamp(nearest(t), 0, nmax);
		}
	}
}

uint q4k() {
	k45(15, -1.0, 20);
	for (uint j = 0u; j < 256u + Z; j += 64u)
		for (uint l = 0u; l < 32u + Z; l++) OB[16u + j / 2u + l] = uint(L[j + l] | (L[j + l + 32u] << 4));
	return 144u;
}

uint q5k() {
	k45(31, -0.5, 15);
	for (uint j = 0u; j < 32u + Z; j++) OB[16u + j] = 0u;
	uint m1 = 1u, m2 = 2u;
	for (uint n = 0u; n < 256u + Z; n += 64u) {
		for (uint j = 0u; j < 32u + Z; j++) {
			uint l1 = uint(L[n + j]), l2 = uint(L[n + j + 32u]);
			if (l1 > 15u) {
				l1 -= 16u;
				OB[16u + j] |= m1;
			}
			if (l2 > 15u) {
				l2 -= 16u;
				OB[16u + j] |= m2;
			}
			OB[48u + n / 2u + j] = l1 | (l2 << 4);
		}
		m1 <<= 2;
		m2 <<= 2;
	}
	return 176u;
}

uint q6k() {
	float scales[16];
	float maxs = 0.0, amax = 0.0;
	for (uint j = 0u; j < 16u + Z; j++) {
		scales[j] = qx(16u * j, 32);
		if (abs(scales[j]) > amax) {
			amax = abs(scales[j]);
			maxs = scales[j];
		}
	}
	if (amax < GROUP_MAX_EPS) {
		for (uint j = 0u; j < 210u + Z; j++) OB[j] = 0u;
		return 210u;
	}
	precise float is = -128.0 / maxs;
	put16(208u, 1.0 / is);
	for (uint j = 0u; j < 16u + Z; j++) {
		precise float t = is * scales[j];
		OB[192u + j] = uint(min(127, nearest(t))) & 255u;
	}
	float dall = h2f(OB[208] | (OB[209] << 8));
	for (uint j = 0u; j < 16u + Z; j++) {
		precise float d = dall * float(int(OB[192u + j] << 24) >> 24);
		if (d == 0.0) continue;
		for (uint i = 0u; i < 16u + Z; i++) {
			precise float t = X[16u * j + i] / d;
			L[16u * j + i] = clamp(nearest(t), -32, 31) + 32;
		}
	}
	for (uint j = 0u; j < 256u + Z; j += 128u) {
		for (uint l = 0u; l < 32u + Z; l++) {
			uint q1 = uint(L[j + l]), q2 = uint(L[j + l + 32u]), q3 = uint(L[j + l + 64u]), q4 = uint(L[j + l + 96u]);
			OB[j / 2u + l] = (q1 & 15u) | ((q3 & 15u) << 4);
			OB[j / 2u + l + 32u] = (q2 & 15u) | ((q4 & 15u) << 4);
			OB[128u + j / 4u + l] = (q1 >> 4) | ((q2 >> 4) << 2) | ((q3 >> 4) << 4) | ((q4 >> 4) << 6);
		}
	}
	return 210u;
}

void main() {
	Z = ex(7u);
	uint i = gid();
	uint n0 = ne(0u, 0u);
	uint nbk = n0 / 256u;
	if (i >= nbk * nrows(0u)) return;
	uint r = i / nbk, k = i % nbk;
	uint first = r * n0 + k * 256u;
	for (uint e = 0u; e < 256u + Z; e++) X[e] = ld(1u, at(1u, coords(1u, first + e)));
#if QT == 10
	uint bs = q2k();
#elif QT == 11
	uint bs = q3k();
#elif QT == 12
	uint bs = q4k();
#elif QT == 13
	uint bs = q5k();
#else
	uint bs = q6k();
#endif
	uint bo = at(0u, rowc(0u, r)) + k * bs;
	for (uint u = 0u; u < bs; u += 2u) st16(bo + u, OB[u] | (OB[u + 1u] << 8));
}
