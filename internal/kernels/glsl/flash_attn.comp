// flash_attn: FLASH_ATTN_EXT, one work group per query row (i1, head i2,
// sequence i3): soft_max(scale·q·kᵀ [softcap·tanh] + slope·mask)·v with
// the row's scores in shared memory (ggml's CPU kernel folds them online;
// the two agree up to rounding), where a key/value
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

#define MAXKV 4096u // keys: the scores live in shared memory

shared float sc[MAXKV];

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
	// q is rounded to f16 for f16 keys, as ggml converts q to the keys'
	// dot type.
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
	// Scores: invocation l computes keys l, l + 64, ... whole, so that no
	// barrier is needed per key (and the loops stay under llvmpipe's 65535
	// iterations per invocation).
	float mx = uintBitsToFloat(0xff800000u);
	for (uint j = l; j < nkv; j += LOCAL) {
		float mv = 0.0;
		if (mask) {
			uint o = mo + j * 2u;
			mv = slope * h2f((mw[o >> 2] >> ((o & 2u) * 8u)) & 0xffffu);
		}
		float s = uintBitsToFloat(0xff800000u);
		if (!(isinf(mv) && mv < 0.0)) {
			float d = 0.0;
			uint kr = ko + j * nb(2u, 1u);
			for (uint i = 0u; i < dk; i++) {
				float qv = ld(1u, qo + i * nb(1u, 0u));
				if (kf16) qv = h(qv);
				d += qv * ld(2u, kr + i * nb(2u, 0u));
			}
			s = d * scale;
			if (softcap != 0.0) s = softcap * tanh_safe(s);
			s += mv;
		}
		sc[j] = s;
		mx = max(mx, s);
	}
	mx = wg_max(mx); // also orders the scores' writes before the reads below
	// Weights and their sum; a fully masked row gives 0, as ggml's S = 0.
	float sum = 0.0;
	for (uint j = l; j < nkv; j += LOCAL) {
		float w = isinf(mx) ? 0.0 : exp(sc[j] - mx);
		sc[j] = w;
		sum += w;
	}
	sum = wg_sum(sum);
	float inv = sum != 0.0 ? 1.0 / sum : 0.0;
	// Values: invocation l owns result elements l, l + 64, ...
	uint o = at(0u, uvec4(0u, i2, i1, i3));
	for (uint i = l; i < dv; i += LOCAL) {
		float acc = 0.0;
		for (uint j = 0u; j < nkv; j++) {
			float w = sc[j];
			if (w != 0.0) acc += w * ld(3u, vo + j * nb(3u, 1u) + i * nb(3u, 0u));
		}
		st(o + i * nb(0u, 0u), acc * inv);
	}
}
