// flash_attn_wide: FLASH_ATTN_EXT for heads too large for flash_attn.comp's
// unrolled code (see planFlashAttn), one work group per query row (i1, head i2,
// sequence i3): soft_max(scale·q·kᵀ [softcap·tanh] + slope·mask [+ sink])·v
// with the row's scores in shared memory (ggml's CPU kernel folds them
// online; the two agree up to rounding), where a key/value head serves
// q.ne2/k.ne2 query heads. Slots 1..3 are q, k and v: keys and values f32,
// f16, bf16 or one of the KV cache's block types (q4_0, q4_1, q5_0, q5_1,
// q8_0, iq4_nl). As ggml's CPU kernel does, q is first converted to the
// keys' dot type: rounded to f16 or bf16, or quantized per 32 elements to
// q8_0 (q8_1, with d·Σq, for q4_1 and q5_1) for an integer dot product per
// block. Extras: ex(6) bit 0: the f16 mask is bound at binding 5 with byte
// offset ex(0), strides ex(1..3) and heads/sequences ex(4..5); bit 1: the
// f32 sinks (one per head) are bound at binding 6 with byte offset ex(7).
// The result row goes to (head, i1, i3) of the {d_v, n_head, n_q, n_seq}
// result. Op parameters: scale, max_bias, softcap. Compile-time
// parameters: KT and VT, the keys' and values' type codes.
#define LOCAL 64u
layout(local_size_x = 64) in;
#include "common.glsl"
#include "act.glsl"

layout(std430, binding = 5) buffer Mask { uint mw[]; };
layout(std430, binding = 6) buffer Sinks { uint sw[]; };

#define MAXKV 4096u // keys: the scores live in shared memory
#define MAXDK 576u  // key length: q, converted, lives in shared memory
#define MAXDV 512u  // value length: 8 accumulators per invocation
#define T_IQ4_NL 20u

shared float sc[MAXKV];
shared float qf[MAXDK];         // q in the keys' float dot type
shared int qi[MAXDK];           // q quantized (block keys)
shared float qd[MAXDK / 32u];   // its blocks' scales
shared float qs[MAXDK / 32u];   // its blocks' d·Σq (q8_1)

const int iq4nl[16] = int[16](-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113);

// kbs is the byte size of a block of key type t (0 for float types).
uint kbs(uint t) {
	if (t == T_Q4_0 || t == T_IQ4_NL) return 18u;
	if (t == T_Q4_1) return 20u;
	if (t == T_Q5_0) return 22u;
	if (t == T_Q5_1) return 24u;
	if (t == T_Q8_0) return 34u;
	return 0u;
}

// kq is the integer quant j of the key block at byte bo of slot 2.
int kq(uint t, uint bo, uint j) {
	if (t == T_Q8_0) return int(u8(2u, bo + 2u + j) << 24) >> 24;
	uint qo = bo + kbs(t) - 16u;
	uint b = u8(2u, qo + (j & 15u));
	uint q = j < 16u ? (b & 15u) : (b >> 4);
	if (t == T_Q4_0) return int(q) - 8;
	if (t == T_IQ4_NL) return iq4nl[q];
	if (t == T_Q4_1) return int(q);
	q |= ((u8(2u, qo - 4u + (j >> 3)) >> (j & 7u)) & 1u) << 4;
	return t == T_Q5_0 ? int(q) - 16 : int(q);
}

// kld is the float key element (f32, f16 or bf16 keys) at byte o.
float kld(uint o) {
#if KT == 0
	return uintBitsToFloat(word(2u, o));
#elif KT == 1
	return h2f(u16(2u, o));
#else
	return bf2f(u16(2u, o));
#endif
}

// vld is element i of the value row at byte r (ldrow's types and iq4_nl),
// the type fixed at compile time.
float vld(uint r, uint i) {
#if VT == 20
	uint bo = r + (i >> 5) * 18u, j = i & 31u;
	uint b = u8(3u, bo + 2u + (j & 15u));
	return h2f(u16(3u, bo)) * float(iq4nl[j < 16u ? (b & 15u) : (b >> 4)]);
#elif VT == 3 || VT == 6 || VT == 7
	return deqx(3u, uint(VT), r, i);
#elif VT == 8
	uint bo = r + (i >> 5) * 34u;
	return h2f(u16(3u, bo)) * float(int(u8(3u, bo + 2u + (i & 31u)) << 24) >> 24);
#elif VT == 2
	uint bo = r + (i >> 5) * 18u, j = i & 31u;
	uint b = u8(3u, bo + 2u + (j & 15u));
	return h2f(u16(3u, bo)) * float(int(j < 16u ? (b & 15u) : (b >> 4)) - 8);
#elif VT == 0
	return uintBitsToFloat(word(3u, r + i * 4u));
#elif VT == 1
	return h2f(u16(3u, r + i * 2u));
#else
	return bf2f(u16(3u, r + i * 2u));
#endif
}

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
	uint kt = uint(KT), bs = kbs(kt);
	bool q81 = kt == T_Q4_1 || kt == T_Q5_1;
	// Convert q to the keys' dot type.
	if (bs == 0u) {
		for (uint i = l; i < dk; i += LOCAL) {
			float qv = ld(1u, qo + i * nb(1u, 0u));
			if (kt == T_F16) qv = h(qv);
			else if (kt == T_BF16) qv = bf2f(f2bf(qv));
			qf[i] = qv;
		}
	} else if (l < dk / 32u) {
		// ggml's quantize_row_q8_0/q8_1: d = amax/127, q = round-even(x·127/amax).
		uint b0 = l * 32u;
		float amax = 0.0;
		for (uint j = 0u; j < 32u; j++) amax = max(amax, abs(ld(1u, qo + (b0 + j) * nb(1u, 0u))));
		float d = amax / 127.0;
		float id = amax != 0.0 ? 127.0 / amax : 0.0;
		int sum = 0;
		for (uint j = 0u; j < 32u; j++) {
			int q = int(roundEven(ld(1u, qo + (b0 + j) * nb(1u, 0u)) * id));
			qi[b0 + j] = q;
			sum += q;
		}
		qd[l] = h(d);
		qs[l] = h(d * float(sum));
	}
	SYNC();
	float scale = opf(0u), softcap = opf(2u), maxb = opf(1u);
	if (softcap != 0.0) scale /= softcap;
	float slope = 1.0;
	if (maxb > 0.0) {
		uint nl = 1u << uint(floor(log2(float(nh))));
		float m0 = exp2(-maxb / float(nl)), m1 = exp2(-(maxb / 2.0) / float(nl));
		slope = i2 < nl ? pow(m0, float(i2 + 1u)) : pow(m1, float(2u * (i2 - nl) + 1u));
	}
	bool mask = (ex(6u) & 1u) != 0u;
	uint mo = ex(0u) + i1 * ex(1u) + (i2 % ex(4u)) * ex(2u) + (i3 % ex(5u)) * ex(3u);
	// Keys go in chunks of MAXKV whose scores sit in shared memory, folded
	// online across chunks as ggml does per key: M is the running maximum,
	// S the running sum of exp(s - M), acc the running Σ exp(s - M)·v of
	// result elements l, l + 64, ... (up to 8 of them: d_v ≤ 512).
	// Invocation l scores keys l, l + 64, ... of a chunk whole, so that no
	// barrier is needed per key; the inner loops go 8 elements (keys) per
	// iteration, because llvmpipe stops an invocation after 65535 loop
	// iterations in all.
	float M = uintBitsToFloat(0xff800000u), S = 0.0;
	float acc[MAXDV / LOCAL];
	for (uint a = 0u; a < MAXDV / LOCAL; a++) acc[a] = 0.0;
	uint dk8 = dk & ~7u;
	for (uint c0 = 0u; c0 < nkv; c0 += MAXKV) {
		uint cn = min(MAXKV, nkv - c0);
		float mx = uintBitsToFloat(0xff800000u);
		for (uint j = l; j < cn; j += LOCAL) {
			float mv = 0.0;
			if (mask) {
				uint o = mo + (c0 + j) * 2u;
				mv = slope * h2f((mw[o >> 2] >> ((o & 2u) * 8u)) & 0xffffu);
			}
			float s = uintBitsToFloat(0xff800000u);
			if (!(isinf(mv) && mv < 0.0)) {
				float d = 0.0;
				uint kr = ko + (c0 + j) * nb(2u, 1u), kb = nb(2u, 0u);
				if (bs == 0u) {
					uint i = 0u;
#define KF(u) d += qf[i + u] * kld(kr + (i + u) * kb)
					for (; i < dk8; i += 8u) {
						KF(0u); KF(1u); KF(2u); KF(3u); KF(4u); KF(5u); KF(6u); KF(7u);
					}
					for (; i < dk; i++) d += qf[i] * kld(kr + i * kb);
				} else {
					for (uint b = 0u; b < dk / 32u; b++) {
						uint bo = kr + b * bs;
						int si = 0;
#define KQ(u) si += kq(kt, bo, i + u) * qi[b * 32u + i + u]
						for (uint i = 0u; i < 32u; i += 8u) {
							KQ(0u); KQ(1u); KQ(2u); KQ(3u); KQ(4u); KQ(5u); KQ(6u); KQ(7u);
						}
						d += h2f(u16(2u, bo)) * qd[b] * float(si);
						if (q81) d += h2f(u16(2u, bo + 2u)) * qs[b];
					}
				}
				s = d * scale;
				if (softcap != 0.0) s = softcap * tanh_safe(s);
				s += mv;
			}
			sc[j] = s;
			mx = max(mx, s);
		}
		mx = wg_max(mx); // also orders the scores' writes before the reads below
		float Mn = max(M, mx);
		// ms rescales what earlier chunks summed (0 before the first);
		// while every key so far is masked, nothing is summed.
		float ms = isinf(Mn) ? 1.0 : exp(M - Mn);
		float sum = 0.0;
		for (uint j = l; j < cn; j += LOCAL) {
			float w = isinf(Mn) ? 0.0 : exp(sc[j] - Mn);
			sc[j] = w;
			sum += w;
		}
		sum = wg_sum(sum); // also orders the weights' writes before the reads below
		S = S * ms + sum;
		M = Mn;
		for (uint a = 0u; a < MAXDV / LOCAL; a++) {
			uint i = l + a * LOCAL;
			if (i >= dv) break;
			float r = acc[a] * ms;
			uint vr = vo + c0 * nb(3u, 1u);
			uint j = 0u;
#define VW(u) if (sc[j + u] != 0.0) r += sc[j + u] * vld(vr + (j + u) * nb(3u, 1u), i)
			for (; j < (cn & ~7u); j += 8u) {
				VW(0u); VW(1u); VW(2u); VW(3u); VW(4u); VW(5u); VW(6u); VW(7u);
			}
			for (; j < cn; j++) {
				float w = sc[j];
				if (w != 0.0) r += w * vld(vr + j * nb(3u, 1u), i);
			}
			acc[a] = r;
		}
		SYNC(); // the next chunk overwrites the weights
	}
	// A sink joins the soft-max with its score and no value (ggml: after
	// the keys).
	if ((ex(6u) & 2u) != 0u) {
		float sink = uintBitsToFloat(sw[(ex(7u) >> 2) + i2]);
		float ms = 1.0, vs = 1.0;
		if (sink > M) {
			ms = exp(M - sink);
		} else {
			vs = exp(sink - M);
		}
		S = S * ms + vs;
		for (uint a = 0u; a < MAXDV / LOCAL; a++) acc[a] *= ms;
	}
	float inv = S != 0.0 ? 1.0 / S : 0.0;
	uint o = at(0u, uvec4(0u, i2, i1, i3));
	for (uint a = 0u; a < MAXDV / LOCAL; a++) {
		uint i = l + a * LOCAL;
		if (i >= dv) break;
		st(o + i * nb(0u, 0u), acc[a] * inv);
	}
}
