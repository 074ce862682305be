// flash_attn: FLASH_ATTN_EXT, one invocation per query row (i1, head i2,
// sequence i3): soft_max(scale·q·kᵀ [softcap·tanh] + slope·mask [+ sink])·v
// folded online key after key, as ggml's CPU kernel does (running maximum
// M, sum S of exp(s - M) and accumulators Σ exp(s - M)·v), where a
// key/value head serves q.ne2/k.ne2 query heads. Slots 1..3 are q, k and
// v: keys and values f32, f16, bf16 or one of the KV cache's block types
// (q4_0, q4_1, q5_0, q5_1, q8_0, iq4_nl). As ggml's CPU kernel does, q is
// first converted to the keys' dot type: rounded to f16 or bf16, or
// quantized per 32 elements to q8_0 (q8_1, with d·Σq, for q4_1 and q5_1)
// for an integer dot product per block. Extras: ex(6) bit 0: the f16 mask
// is bound at binding 5 with byte offset ex(0), strides ex(1..3) and
// heads/sequences ex(4..5); bit 1: the f32 sinks (one per head) are bound
// at binding 6 with byte offset ex(7). The result row goes to (head, i1,
// i3) of the {d_v, n_head, n_q, n_seq} result. Op parameters: scale,
// max_bias, softcap.
//
// Compile-time parameters (set by planFlashAttn):
//   KT, VT       the keys' and values' type codes
//   DK, DV       their row lengths (head sizes)
//   KA, VA       2 when every key (value) row starts on a 16-byte boundary,
//                1 on a 4-byte one, 0 on a 2-byte one
//   NKW, NVW     the 32-bit words a key (value) row spans from its start
//                (rounded up to a multiple of 4 with KA/VA 2)
//   EACH_DK(M)   M(0) M(1) ... M(DK - 1); EACH_DV likewise
//   EACH_KW(M)   M(0) ... M(NKW - 1); EACH_VW likewise
//   EACH_KQ(M)   M(0) ... M(NKW/4 - 1) (16-byte groups); EACH_VQ likewise
//   EACH_KB(M)   M(0) ... M(DK/32 - 1) (key blocks); EACH_VB likewise
//
// Everything per element is unrolled by those lists, so that q, the
// accumulators and a key's or value's words live in registers indexed by
// constants: llvmpipe turns a dynamically indexed local array into
// per-lane memory accesses, and every buffer load into a loop over the
// SIMD lanes, so the kernel loads each row word once and otherwise does
// vector arithmetic. No loop but the one over the keys runs, which
// llvmpipe's guard (65535 iterations per invocation) bounds; there are no
// barriers and no shared memory.
layout(local_size_x = 32) in;
#include "common.glsl"
#include "act.glsl"

layout(std430, binding = 5) buffer Mask { uint mw[]; };
layout(std430, binding = 6) buffer Sinks { uint sw[]; };
// Keys and values again, 16 bytes an element, for rows that start on
// 16-byte boundaries (KA/VA 2): a vector load costs llvmpipe about what a
// word load does.
layout(std430, binding = 2) buffer K4 { uvec4 k4[]; };
layout(std430, binding = 3) buffer V4 { uvec4 v4[]; };

// Block types (their codes, as in KT/VT) and the byte size of a block.
#define ISBLK(t) ((t) == 2 || (t) == 3 || (t) == 6 || (t) == 7 || (t) == 8 || (t) == 20)
#define BSZ(t) ((t) == 8 ? 34 : (t) == 3 ? 20 : (t) == 6 ? 22 : (t) == 7 ? 24 : 18)

// The byte, half and float at constant byte position p of the words A.
#define BY(A, p) ((A[(p) >> 2] >> (((p) & 3) * 8)) & 0xffu)
#define HF(A, p) ((A[(p) >> 2] >> (((p) & 2) * 8)) & 0xffffu)

// F32E/F16E/BF16E(A, i): element i of a float row in words A.
#define F32E(A, i) uintBitsToFloat(A[i])
#define F16E(A, i) h2f(HF(A, 2 * (i)))
#define BF16E(A, i) uintBitsToFloat(HF(A, 2 * (i)) << 16)

// B32(M, b) is M(b, 0) ... M(b, 31): the elements of block b.
#define B8(M, b, j) M(b, j) M(b, j + 1) M(b, j + 2) M(b, j + 3) M(b, j + 4) M(b, j + 5) M(b, j + 6) M(b, j + 7)
#define B32(M, b) B8(M, b, 0) B8(M, b, 8) B8(M, b, 16) B8(M, b, 24)

// iq4 is iq4_nl's value of index q (ggml's kvalues_iq4nl), from four
// words of packed bytes rather than a dynamically indexed table.
int iq4(uint q) {
	uint w = q < 8u ? (q < 4u ? 0xbfad9881u : 0xf6eaddcfu) : (q < 12u ? 0x26190d01u : 0x71594535u);
	return int(w << (24u - 8u * (q & 3u))) >> 24;
}

// The integer quant j of block b of a row of block type t in words A
// (q4_1/q5_1 without the minimum): NIB the low four bits, QH the fifth.
#define NIB(t, A, b, j) ((BY(A, (b) * BSZ(t) + BSZ(t) - 16 + ((j) & 15)) >> (((j) >> 4) * 4)) & 15u)
#define QH(t, A, b, j) (((BY(A, (b) * BSZ(t) + BSZ(t) - 20 + ((j) >> 3)) >> ((j) & 7)) & 1u) << 4)
#define Q8_0V(A, b, j) (int(BY(A, (b) * 34 + 2 + (j)) << 24) >> 24)
#define Q4_0V(A, b, j) (int(NIB(2, A, b, j)) - 8)
#define Q4_1V(A, b, j) int(NIB(3, A, b, j))
#define Q5_0V(A, b, j) (int(NIB(6, A, b, j) | QH(6, A, b, j)) - 16)
#define Q5_1V(A, b, j) int(NIB(7, A, b, j) | QH(7, A, b, j))
#define IQ4_NLV(A, b, j) iq4(NIB(20, A, b, j))

// KE(i) / VE(i): element i of a float key / value row; KQ(b, j) / VQ(b, j):
// quant j of block b of a block key / value row.
#if KT == 0
#define KE(i) F32E(kw, i)
#elif KT == 1
#define KE(i) F16E(kw, i)
#elif KT == 30
#define KE(i) BF16E(kw, i)
#elif KT == 2
#define KQ(b, j) Q4_0V(kw, b, j)
#elif KT == 3
#define KQ(b, j) Q4_1V(kw, b, j)
#elif KT == 6
#define KQ(b, j) Q5_0V(kw, b, j)
#elif KT == 7
#define KQ(b, j) Q5_1V(kw, b, j)
#elif KT == 8
#define KQ(b, j) Q8_0V(kw, b, j)
#else
#define KQ(b, j) IQ4_NLV(kw, b, j)
#endif
#if VT == 0
#define VE(i) F32E(vw, i)
#elif VT == 1
#define VE(i) F16E(vw, i)
#elif VT == 30
#define VE(i) BF16E(vw, i)
#elif VT == 2
#define VQ(b, j) Q4_0V(vw, b, j)
#elif VT == 3
#define VQ(b, j) Q4_1V(vw, b, j)
#elif VT == 6
#define VQ(b, j) Q5_0V(vw, b, j)
#elif VT == 7
#define VQ(b, j) Q5_1V(vw, b, j)
#elif VT == 8
#define VQ(b, j) Q8_0V(vw, b, j)
#else
#define VQ(b, j) IQ4_NLV(vw, b, j)
#endif

// Row loads: words m of the row at byte r of slot s into A. An unaligned
// row (2-byte aligned) is funnelled from its aligned neighbours.
#define LDA(s, A, m) A[m] = B[s].w[rw + (m)];
#define LDU(s, A, m) { uint n = B[s].w[rw + (m) + 1]; A[m] = (c >> sh) | ((n << (16u - sh)) << 16u); c = n; }
#define LD4(X, A, m) { uvec4 x = X[rq + (m)]; A[4 * (m)] = x.x; A[4 * (m) + 1] = x.y; A[4 * (m) + 2] = x.z; A[4 * (m) + 3] = x.w; }
#define LDK4(m) LD4(k4, kw, m)
#define LDV4(m) LD4(v4, vw, m)
#define LDK(m) LDA(2, kw, m)
#define LDKU(m) LDU(2, kw, m)
#define LDV(m) LDA(3, vw, m)
#define LDVU(m) LDU(3, vw, m)

void main() {
	uint r = gid();
	uint nq = ne(1u, 1u), nh = ne(1u, 2u);
	if (r >= nq * nh * ne(1u, 3u)) return;
	uint i1 = r % nq, i2 = (r / nq) % nh, i3 = r / (nq * nh);
	uint nkv = ne(2u, 1u);
	uint qo = at(1u, uvec4(0u, i1, i2, i3)) >> 2;
	uint ko = at(2u, uvec4(0u, 0u, i2 / (nh / ne(2u, 2u)), i3 / (ne(1u, 3u) / ne(2u, 3u))));
	uint vo = at(3u, uvec4(0u, 0u, i2 / (nh / ne(3u, 2u)), i3 / (ne(1u, 3u) / ne(3u, 3u))));

	// q, converted to the keys' dot type.
	float qf[DK];
#define LQ(i) qf[i] = uintBitsToFloat(B[1].w[qo + (i)]);
	EACH_DK(LQ)
#if ISBLK(KT)
	// ggml's quantize_row_q8_0/q8_1: d = amax/127, q = round-even(x·127/amax).
	int qi[DK];
	float qd[DK / 32 + 1], qs[DK / 32 + 1];
#define AMAX(b, j) amax = max(amax, abs(qf[(b) * 32 + (j)]));
#define QUANT(b, j) qi[(b) * 32 + (j)] = int(roundEven(qf[(b) * 32 + (j)] * id)); sum += qi[(b) * 32 + (j)];
#define QBLK(b) { float amax = 0.0; B32(AMAX, b) float id = amax != 0.0 ? 127.0 / amax : 0.0; int sum = 0; B32(QUANT, b) qd[b] = h(amax / 127.0); qs[b] = h(amax / 127.0 * float(sum)); }
	EACH_KB(QBLK)
#elif KT == 1
#define QCV(i) qf[i] = h(qf[i]);
	EACH_DK(QCV)
#elif KT == 30
#define QCV(i) qf[i] = bf2f(f2bf(qf[i]));
	EACH_DK(QCV)
#endif

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

	float ninf = uintBitsToFloat(0xff800000u);
	float M = ninf, S = 0.0;
	float acc[DV];
#define ZA(i) acc[i] = 0.0;
	EACH_DV(ZA)
	uint kst = nb(2u, 1u), vst = nb(3u, 1u);
	uint kw[NKW], vw[NVW];
	for (uint j = 0u; j < nkv; j++) {
		float mv = 0.0;
		if (mask) {
			uint o = mo + j * 2u;
			mv = slope * h2f((mw[o >> 2] >> ((o & 2u) * 8u)) & 0xffffu);
		}
		// ggml skips a masked key (its loads are skipped per lane here).
		if (mv == ninf) continue;
		uint kr = ko + j * kst, rw = kr >> 2, rq = kr >> 4;
#if KA == 2
		EACH_KQ(LDK4)
#elif KA
		EACH_KW(LDK)
#else
		{
			uint sh = (kr & 2u) * 8u, c = B[2].w[rw];
			EACH_KW(LDKU)
		}
#endif
		float d = 0.0;
#if ISBLK(KT)
#define KDOT(b, j) si += KQ(b, j) * qi[(b) * 32 + (j)];
#if KT == 3 || KT == 7
#define KMIN(b) d += h2f(HF(kw, (b) * BSZ(KT) + 2)) * qs[b];
#else
#define KMIN(b)
#endif
#define KBLK(b) { int si = 0; B32(KDOT, b) d += h2f(HF(kw, (b) * BSZ(KT))) * qd[b] * float(si); KMIN(b) }
		EACH_KB(KBLK)
#else
#define KD(i) d += qf[i] * KE(i);
		EACH_DK(KD)
#endif
		float s = d * scale;
		if (softcap != 0.0) s = softcap * tanh_safe(s);
		s += mv;
		float Mn = max(M, s);
		float ms = exp(M - Mn), p = exp(s - Mn);
		S = S * ms + p;
		M = Mn;
		uint vr = vo + j * vst;
		rw = vr >> 2;
		rq = vr >> 4;
#if VA == 2
		EACH_VQ(LDV4)
#elif VA
		EACH_VW(LDV)
#else
		{
			uint sh = (vr & 2u) * 8u, c = B[3].w[rw];
			EACH_VW(LDVU)
		}
#endif
#if ISBLK(VT)
#if VT == 3 || VT == 7
#define VMIN(b) h2f(HF(vw, (b) * BSZ(VT) + 2))
#else
#define VMIN(b) 0.0
#endif
#define VACC(b, j) acc[(b) * 32 + (j)] = acc[(b) * 32 + (j)] * ms + p * (vd * float(VQ(b, j)) + vm);
#define VBLK(b) { float vd = h2f(HF(vw, (b) * BSZ(VT))), vm = VMIN(b); B32(VACC, b) }
		EACH_VB(VBLK)
#else
#define VF(i) acc[i] = acc[i] * ms + p * VE(i);
		EACH_DV(VF)
#endif
	}
	// A sink joins the soft-max with its score and no value (ggml: after
	// the keys).
	float sc = 1.0;
	if ((ex(6u) & 2u) != 0u) {
		float sink = uintBitsToFloat(sw[(ex(7u) >> 2) + i2]);
		float ms = 1.0, vs = 1.0;
		if (sink > M) {
			ms = exp(M - sink);
		} else {
			vs = exp(sink - M);
		}
		S = S * ms + vs;
		sc = ms;
	}
	float inv = S != 0.0 ? sc / S : 0.0;
	uint o = at(0u, uvec4(0u, i2, i1, i3)) >> 2;
#define ST(i) B[0].w[o + (i)] = floatBitsToUint(acc[i] * inv);
	EACH_DV(ST)
}
