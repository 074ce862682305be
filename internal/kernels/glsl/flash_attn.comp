// flash_attn: FLASH_ATTN_EXT, one work group per query row (i1, head i2,
// sequence i3) with the online softmax of ggml's CPU kernel:
// soft_max(scale·q·kᵀ [softcap·tanh] + slope·mask)·v, where a key/value
// head serves q.ne2/k.ne2 query heads. Slots 1..3 are q, k and v (f32 or
// f16 keys and values); the f16 mask, if ex(6) is set, is bound at binding
// 5 with byte offset ex(0), strides ex(1..3) and heads/sequences ex(4..5).
// The result row goes to (head, i1, i3) of the {d_v, n_head, n_q, n_seq}
// result. Op parameters: scale, max_bias, softcap.
#define LOCAL 64u
layout(local_size_x = 64) in;
#include "common.glsl"
#include "act.glsl"

layout(std430, binding = 5) buffer Mask { uint mw[]; };

#define MAXV 16u // result elements per invocation: d_v ≤ 1024

void main() {
	uint r = wid();
	uint nq = ne(1u, 1u), nh = ne(1u, 2u);
	if (r >= nq * nh * ne(1u, 3u)) return; // uniform over the group
	uint l = gl_LocalInvocationID.x;
	uint i1 = r % nq, i2 = (r / nq) % nh, i3 = r / (nq * nh);
	uint dk = ne(1u, 0u), dv = ne(3u, 0u), nkv = ne(2u, 1u);
	uint qo = at(1u, uvec4(0u, i1, i2, i3));
	uint ko = at(2u, uvec4(0u, 0u, i2 / (nh / ne(2u, 2u)), i3 / (ne(1u, 3u) / ne(2u, 3u))));
	uint vo = at(3u, uvec4(0u, 0u, i2 / (nh / ne(3u, 2u)), i3 / (ne(1u, 3u) / ne(3u, 3u))));
	bool kf16 = ty(2u) == T_F16;
	// This invocation's share of q, rounded to f16 for f16 keys as ggml
	// converts q to the keys' dot type.
	float scale = opf(0u), softcap = opf(2u), maxb = opf(1u);
	if (softcap != 0.0) scale /= softcap;
	float slope = 1.0;
	if (maxb > 0.0) {
		uint nl = 1u << uint(floor(log2(float(nh))));
		float m0 = exp2(-maxb / float(nl)), m1 = exp2(-(maxb / 2.0) / float(nl));
		slope = i2 < nl ? pow(m0, float(i2 + 1u)) : pow(m1, float(2u * (i2 - nl) + 1u));
	}
	bool mask = ex(6u) != 0u;
	uint mo = ex(0u) + i1 * ex(1u) + (i2 % ex(4u)) * ex(2u) + (i3 % ex(5u)) * ex(3u);
	// llvmpipe allows 65535 loop iterations per invocation in all: loops
	// run over this invocation's nvk result elements only.
	uint nvk = (dv + LOCAL - 1u) / LOCAL;
	float acc[MAXV];
	for (uint k = 0u; k < MAXV; k++) acc[k] = 0.0;
	float S = 0.0, M = uintBitsToFloat(0xff800000u);
	for (uint j = 0u; j < nkv; j++) {
		float mv = 0.0;
		if (mask) {
			uint o = mo + j * 2u;
			mv = slope * h2f((mw[o >> 2] >> ((o & 2u) * 8u)) & 0xffffu);
			if (isinf(mv) && mv < 0.0) continue; // uniform: every invocation reads the same
		}
		float d = 0.0;
		uint kr = ko + j * nb(2u, 1u);
		for (uint i = l; i < dk; i += LOCAL) {
			float qv = ld(1u, qo + i * nb(1u, 0u));
			if (kf16) qv = h(qv);
			d += qv * ld(2u, kr + i * nb(2u, 0u));
		}
		float s = wg_sum(d) * scale;
		if (softcap != 0.0) s = softcap * tanh_safe(s);
		s += mv;
		float ms = 1.0, vs = 1.0;
		if (s > M) {
			ms = exp(M - s);
			M = s;
			for (uint k = 0u; k < nvk; k++) acc[k] *= ms;
		} else {
			vs = exp(s - M);
		}
		uint vr = vo + j * nb(3u, 1u);
		for (uint k = 0u; k < nvk; k++) {
			uint i = l + k * LOCAL;
			if (i < dv) acc[k] += ld(3u, vr + i * nb(3u, 0u)) * vs;
		}
		S = S * ms + vs;
	}
	float inv = S != 0.0 ? 1.0 / S : 0.0;
	uint o = at(0u, uvec4(0u, i2, i1, i3));
	for (uint k = 0u; k < nvk; k++) {
		uint i = l + k * LOCAL;
		if (i < dv) st(o + i * nb(0u, 0u), acc[k] * inv);
	}
}
