// seq: ggml's sequence-model and solver ops, with the formulas and the
// order of operations of gogml's CPU reference (cpukernels/ref_seq.go).
// One define picks the op. The scans give each invocation one row or
// column of a head's state, kept in a private array, and walk the tokens
// in order; their inner loops take 8 (GDN: 32) elements an iteration, so
// that llvmpipe's guard of 65535 loop iterations per invocation stops
// none the planner takes (kernels_seq.go bounds them). Sources past the
// three slots are bound at bindings 5..8 (X[0..3]) with their byte offsets
// in ex(0..3); every such source is a dense f32 tensor.
#define LOCAL 64u
layout(local_size_x = 64) in;
#include "common.glsl"

layout(std430, binding = 5) buffer Xb { uint w[]; } X[4];

#define MAXN 256u // state row length (d_state, head size)

// lf is the f32 at byte o of slot s.
float lf(uint s, uint o) { return uintBitsToFloat(B[s].w[o >> 2]); }
#define XF(i, o) uintBitsToFloat(X[i].w[(o) >> 2])
void stf(uint o, float v) { B[0].w[o >> 2] = floatBitsToUint(v); }

#define R8(F, i) F(i) F((i) + 1u) F((i) + 2u) F((i) + 3u) F((i) + 4u) F((i) + 5u) F((i) + 6u) F((i) + 7u)
#define R32(F, i) R8(F, i) R8(F, (i) + 8u) R8(F, (i) + 16u) R8(F, (i) + 24u)

#ifdef SSM
// SSM_SCAN: slots 1..3 x, B, C; X[0..3] s, dt, A, ids; ex(4) ids' nb0,
// ex(5) A's ne0 (1 or d_state), ex(6) s's ne3. One invocation per (dim
// element i1, head, sequence).
#define SSM_STEP(j) { float v = st[j] * dA + lf(2u, bo + (j) * 4u) * xdt; sum += v * lf(3u, co + (j) * 4u); st[j] = v; }
#define SSM_STEPV(j) { float v = st[j] * exp(dtv * XF(2, ao + (j) * 4u)) + lf(2u, bo + (j) * 4u) * xdt; sum += v * lf(3u, co + (j) * 4u); st[j] = v; }
void main() {
	uint nr = ne(1u, 0u), nh = ne(1u, 1u), nt = ne(1u, 2u), ns = ne(1u, 3u);
	uint nc = ne(2u, 0u), ng = ne(2u, 1u);
	uint u = gid();
	if (u >= nr * nh * ns) return;
	uint i1 = u % nr, h = (u / nr) % nh, i3 = u / (nr * nh);
	int id = int(X[3].w[(ex(3u) + i3 * ex(4u)) >> 2]);
	if (id < 0 || uint(id) >= ex(6u)) {
		atomicOr(status[0], 1u);
		status[1] = uint(id);
		return;
	}
	float st[MAXN];
	uint so = ex(0u) + ((uint(id) * nh + h) * nr + i1) * nc * 4u;
	for (uint i = 0u; i < nc; i++) st[i] = XF(0, so + i * 4u);
	uint K = uint(opi(0u));
	uint ao = ex(2u) + h * ex(5u) * 4u;
	uint g = h / (nh / ng);
	uint sOff = nel(1u) * 4u;
	for (uint i2 = 0u; i2 < nt; i2++) {
		float d = XF(1, ex(1u) + ((i3 * nt + i2) * nh + h) * 4u);
		float dtv = d > 20.0 ? d : log(1.0 + exp(d));
		float dA = exp(dtv * XF(2, ao));
		float xdt = lf(1u, toff(1u) + i1 * 4u + h * nb(1u, 1u) + i2 * nb(1u, 2u) + i3 * nb(1u, 3u)) * dtv;
		uint bo = toff(2u) + g * nb(2u, 1u) + i2 * nb(2u, 2u) + i3 * nb(2u, 3u);
		uint co = toff(3u) + g * nb(3u, 1u) + i2 * nb(3u, 2u) + i3 * nb(3u, 3u);
		float sum = 0.0;
		uint i = 0u;
		if (ex(5u) == 1u) {
			for (; i + 8u <= nc; i += 8u) { R8(SSM_STEP, i) }
			for (; i < nc; i++) SSM_STEP(i)
		} else {
			for (; i + 8u <= nc; i += 8u) { R8(SSM_STEPV, i) }
			for (; i < nc; i++) SSM_STEPV(i)
		}
		stf(toff(0u) + (((i3 * nt + i2) * nh + h) * nr + i1) * 4u, sum);
		uint slot = nt - 1u - i2;
		if (slot < K) {
			uint d0 = toff(0u) + sOff + (slot * ns + i3) * nc * nr * nh * 4u + (h * nr + i1) * nc * 4u;
			for (uint j = 0u; j < nc; j++) stf(d0 + j * 4u, st[j]);
		}
	}
}
#endif

#if defined(WKV6) || defined(GLA) || defined(WKV7)
// RWKV_WKV6 (slots k, v, r; X[0..2] time_first, time_decay, state), GATED_
// LINEAR_ATTN (slots k, v, q; X[0..1] g, state) and RWKV_WKV7 (slots r, w,
// k; X[0..3] v, a, b, state); ex(4) is n_seqs. WKV6 and GLA give each
// invocation state column j of a head (y[j] sums over rows i), WKV7 state
// row i (y[i] sums over columns j).
void main() {
	uint S = ne(1u, 0u), H = ne(1u, 1u), T = ne(1u, 2u), ns = ex(4u);
	uint u = gid();
	if (u >= S * H * ns) return;
	uint j = u % S, h = (u / S) % H, sq = u / (S * H);
	uint C = S * H, per = T / ns;
#ifdef WKV7
	uint so = ex(3u) + (sq * S * C + h * S * S + j * S) * 4u; // row j
#elif defined(GLA)
	uint so = ex(1u) + (sq * S * C + h * S * S + j) * 4u; // column j
#else
	uint so = ex(2u) + (sq * S * C + h * S * S + j) * 4u;
#endif
	float st[MAXN];
	for (uint i = 0u; i < S; i++) {
#ifdef WKV7
		st[i] = XF(3, so + i * 4u);
#elif defined(GLA)
		st[i] = XF(1, so + i * S * 4u);
#else
		st[i] = XF(2, so + i * S * 4u);
#endif
	}
	float scale = opf(0u);
	for (uint tt = sq * per; tt < (sq + 1u) * per; tt++) {
		uint vo = (tt * C + h * S) * 4u;
		float y = 0.0;
#ifdef WKV6
		float vj = lf(2u, toff(2u) + vo + j * 4u);
		for (uint i = 0u; i < S; i++) {
			float kvv = vj * lf(1u, toff(1u) + vo + i * 4u);
			y += (kvv * XF(0, ex(0u) + (h * S + i) * 4u) + st[i]) * lf(3u, toff(3u) + vo + i * 4u);
			st[i] = st[i] * XF(1, ex(1u) + vo + i * 4u) + kvv;
		}
#elif defined(GLA)
		float vj = lf(2u, toff(2u) + vo + j * 4u);
		for (uint i = 0u; i < S; i++) {
			float q = lf(3u, toff(3u) + vo + i * 4u) * scale;
			float v = st[i] * XF(0, ex(0u) + vo + i * 4u) + vj * lf(1u, toff(1u) + vo + i * 4u);
			y += v * q;
			st[i] = v;
		}
#else
		float sa = 0.0;
		for (uint i = 0u; i < S; i++) sa += XF(1, ex(1u) + vo + i * 4u) * st[i];
		float vj = XF(0, ex(0u) + vo + j * 4u);
		for (uint i = 0u; i < S; i++) {
			float v = st[i] * lf(2u, toff(2u) + vo + i * 4u) + vj * lf(3u, toff(3u) + vo + i * 4u) + sa * XF(2, ex(2u) + vo + i * 4u);
			st[i] = v;
			y += v * lf(1u, toff(1u) + vo + i * 4u);
		}
#endif
		stf(toff(0u) + vo + j * 4u, y);
	}
	uint sto = toff(0u) + C * T * 4u + (sq * S * C + h * S * S) * 4u;
	for (uint i = 0u; i < S; i++) {
#ifdef WKV7
		stf(sto + (j * S + i) * 4u, st[i]);
#else
		stf(sto + (i * S + j) * 4u, st[i]);
#endif
	}
}
#endif

#ifdef GDN
// GATED_DELTA_NET: slots q, k, v; X[0..2] g, beta, state; ex(4) 1 for a
// g per column (KDA), ex(5) v's sequences per q's, ex(6) the 1/√S scale's
// bits. One invocation per state row j (M[j][i] = S[i][j]) of a (head,
// sequence). Per token two fused walks of the row: decay and M[j]·k, then
// the update and M[j]·q, each dot with ggml's eight partial sums over
// whole groups of 8 and the rest added after them (seqDot).
float M[MAXN];
float p[8];
#define G8(F, i) F(i, 0) F((i) + 1u, 1) F((i) + 2u, 2) F((i) + 3u, 3) F((i) + 4u, 4) F((i) + 5u, 5) F((i) + 6u, 6) F((i) + 7u, 7)
#define G32(F, i) G8(F, i) G8(F, (i) + 8u) G8(F, (i) + 16u) G8(F, (i) + 24u)
#define GDN_DECAY(j) M[j] *= kda ? exp(XF(0, go + (j) * 4u)) : e;
#define GDN_A(j, k) { GDN_DECAY(j) p[k] += M[j] * lf(2u, ko + (j) * 4u); }
#define GDN_B(j, k) { M[j] += lf(2u, ko + (j) * 4u) * d; p[k] += M[j] * lf(1u, qo + (j) * 4u); }
#define GDN_ST(j) stf(so + (j) * 4u, M[j]);
#define GDN_WALK(F, TAIL) \
	p = float[8](0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0); \
	uint i = 0u; \
	for (; i + 32u <= S; i += 32u) { G32(F, i) } \
	if (S % 32u != 0u) { for (; i + 8u <= S; i += 8u) { G8(F, i) } } \
	float sum = ((p[0] + p[4]) + (p[1] + p[5])) + ((p[2] + p[6]) + (p[3] + p[7])); \
	if (S % 8u != 0u) { for (; i < S; i++) { TAIL } }
#define GDN_STORE { uint i = 0u; for (; i + 32u <= S; i += 32u) { R32(GDN_ST, i) } if (S % 32u != 0u) { for (; i < S; i++) { GDN_ST(i) } } }
void main() {
	uint S = ne(3u, 0u), H = ne(3u, 1u), T = ne(3u, 2u), N = ne(3u, 3u);
	uint u = gid();
	if (u >= S * H * N) return;
	uint j = u % S, h = (u / S) % H, sq = u / (S * H);
	uint hq = h % ne(1u, 1u), sqq = sq / ex(5u);
	bool kda = ex(4u) != 0u;
	uint gn = kda ? S : 1u;
	uint K = uint(opi(0u));
	float scale = exf(6u);
	uint row = ((sq * H + h) * S + j) * S * 4u;
	for (uint i = 0u; i < S; i++) M[i] = XF(2, ex(2u) + row + i * 4u);
	uint attn = S * H * T * N * 4u, snap = S * S * H * N * 4u;
	for (uint tt = 0u; tt < T; tt++) {
		uint qo = toff(1u) + hq * nb(1u, 1u) + tt * nb(1u, 2u) + sqq * nb(1u, 3u);
		uint ko = toff(2u) + hq * nb(2u, 1u) + tt * nb(2u, 2u) + sqq * nb(2u, 3u);
		float vj = lf(3u, toff(3u) + j * 4u + h * nb(3u, 1u) + tt * nb(3u, 2u) + sq * nb(3u, 3u));
		uint tok = (sq * T + tt) * H + h;
		uint go = ex(0u) + tok * gn * 4u;
		float b = XF(1, ex(1u) + tok * 4u);
		float e = kda ? 1.0 : exp(XF(0, go));
		float d;
		{
			GDN_WALK(GDN_A, GDN_DECAY(i) sum += M[i] * lf(2u, ko + i * 4u);)
			d = (vj - sum) * b;
		}
		{
			GDN_WALK(GDN_B, M[i] += lf(2u, ko + i * 4u) * d; sum += M[i] * lf(1u, qo + i * 4u);)
			stf(toff(0u) + (tok * S + j) * 4u, sum * scale);
		}
		uint slot = T - 1u - tt;
		if (slot < K) {
			uint so = toff(0u) + attn + slot * snap + row;
			GDN_STORE
		}
	}
	if (T == 0u) {
		uint so = toff(0u) + attn + row;
		GDN_STORE
	}
}
#endif

#ifdef SOLVE
// SOLVE_TRI: slots a {n, n, B2, B3}, b {k, n, B2, B3}; one invocation per
// column of the result, solved by forward substitution; the column's
// earlier elements are read back from the result.
void main() {
	uint n = ne(1u, 0u), nk = ne(2u, 0u), b2 = ne(2u, 2u), b3 = ne(2u, 3u);
	uint u = gid();
	if (u >= nk * b2 * b3) return;
	uint col = u % nk, i2 = (u / nk) % b2, i3 = u / (nk * b2);
	uint ab = toff(1u) + i2 * nb(1u, 2u) + i3 * nb(1u, 3u);
	uint xb = toff(0u) + col * nb(0u, 0u) + i2 * nb(0u, 2u) + i3 * nb(0u, 3u);
	uint bb = toff(2u) + col * nb(2u, 0u) + i2 * nb(2u, 2u) + i3 * nb(2u, 3u);
	for (uint i = 0u; i < n; i++) {
		uint ar = ab + i * nb(1u, 1u);
		float sum = 0.0;
		for (uint j = 0u; j < i; j++) sum += lf(1u, ar + j * nb(1u, 0u)) * lf(0u, xb + j * nb(0u, 1u));
		float x = (lf(2u, bb + i * nb(2u, 1u)) - sum) / lf(1u, ar + i * nb(1u, 0u));
		stf(xb + i * nb(0u, 1u), x);
	}
}
#endif

#ifdef LI
// LIGHTNING_INDEXER: slots q, k (ldrow's types or iq4_nl), weights; the
// f16 mask at X[0] with row stride ex(1), sequence stride ex(2) and ex(3)
// sequences. A work group takes 64 keys of one (token tt, sequence s),
// an invocation one key ik: Σ_h max(q_h·k, 0)·w[h] + mask, each dot with
// eight partial sums. q's and w's addresses are then the same across the
// group (derived from the group id). Staging q in shared memory measured
// no faster on llvmpipe.
#define T_IQ4_NL 20u
#define MAXD 512u
const float iq4nl[16] = float[16](-127.0, -104.0, -83.0, -65.0, -49.0, -35.0, -22.0, -10.0, 1.0, 13.0, 25.0, 38.0, 53.0, 69.0, 89.0, 113.0);
float kld(uint r, uint i) {
	if (ty(2u) == T_IQ4_NL) {
		uint bo = r + (i >> 5) * 18u;
		uint j = i & 31u;
		uint b = u8(2u, bo + 2u + (j & 15u));
		return h2f(u16(2u, bo)) * iq4nl[j < 16u ? (b & 15u) : (b >> 4)];
	}
	return ldrow(2u, r, i);
}
void main() {
	uint nkv = ne(0u, 0u), ntok = ne(0u, 1u);
	uint nkb = (nkv + LOCAL - 1u) / LOCAL;
	uint g = wid();
	uint kb = g % nkb, tt = (g / nkb) % ntok, s = g / (nkb * ntok);
	uint ik = kb * LOCAL + gl_LocalInvocationID.x;
	if (s >= ne(0u, 3u) || ik >= nkv) return;
	uint D = ne(1u, 0u), nh = ne(1u, 1u);
	float kr[MAXD];
	uint ko = toff(2u) + ik * nb(2u, 1u) + s * nb(2u, 3u);
	for (uint e = 0u; e < D; e++) kr[e] = kld(ko, e);
	float score = 0.0;
	uint qb = toff(1u) + tt * nb(1u, 2u) + s * nb(1u, 3u);
	uint wb = toff(3u) + tt * nb(3u, 1u) + s * nb(3u, 3u);
	for (uint h = 0u; h < nh; h++) {
		uint qo = qb + h * nb(1u, 1u);
		float p[8] = float[8](0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
		uint e = 0u;
		for (; e + 8u <= D; e += 8u) {
			uint o = qo + e * 4u;
			p[0] += lf(1u, o) * kr[e];
			p[1] += lf(1u, o + 4u) * kr[e + 1u];
			p[2] += lf(1u, o + 8u) * kr[e + 2u];
			p[3] += lf(1u, o + 12u) * kr[e + 3u];
			p[4] += lf(1u, o + 16u) * kr[e + 4u];
			p[5] += lf(1u, o + 20u) * kr[e + 5u];
			p[6] += lf(1u, o + 24u) * kr[e + 6u];
			p[7] += lf(1u, o + 28u) * kr[e + 7u];
		}
		float dot = ((p[0] + p[4]) + (p[1] + p[5])) + ((p[2] + p[6]) + (p[3] + p[7]));
		for (; e < D; e++) dot += lf(1u, qo + e * 4u) * kr[e];
		score += max(dot, 0.0) * lf(3u, wb + h * 4u);
	}
	uint mo = ex(0u) + ik * 2u + tt * ex(1u) + (s % ex(3u)) * ex(2u);
	float m = h2f((X[0].w[mo >> 2] >> ((mo & 2u) * 8u)) & 0xffffu);
	stf(toff(0u) + ik * 4u + tt * nb(0u, 1u) + s * nb(0u, 3u), score + m);
}
#endif

#ifdef HCCOMB
// DSV4_HC_COMB: slots mixes, scale, base; one invocation per token: its
// hc×hc matrix (comb[dst + hc·src]) from a softmax over dst plus eps, then
// alternating normalizations (sums from eps) over src and dst.
#define MAXHC 16u
float comb[MAXHC * MAXHC];
void norm(uint hc, float eps, bool overSrc) {
	for (uint a = 0u; a < hc; a++) {
		float sum = eps;
		for (uint b = 0u; b < hc; b++) sum += comb[overSrc ? a + hc * b : b + hc * a];
		float inv = 1.0 / sum;
		for (uint b = 0u; b < hc; b++) comb[overSrc ? a + hc * b : b + hc * a] *= inv;
	}
}
void main() {
	uint it = gid();
	uint hc = ne(0u, 0u);
	if (it >= ne(1u, 1u)) return;
	float eps = opf(0u);
	int nIter = opi(1u);
	float scale = lf(2u, toff(2u) + 2u * nb(2u, 0u));
	for (uint src = 0u; src < hc; src++) {
		float mx = uintBitsToFloat(0xff800000u);
		for (uint dst = 0u; dst < hc; dst++) {
			uint i = dst + hc * src;
			float v = lf(1u, toff(1u) + (2u * hc + i) * nb(1u, 0u) + it * nb(1u, 1u)) * scale + lf(3u, toff(3u) + (2u * hc + i) * nb(3u, 0u));
			comb[i] = v;
			mx = max(mx, v);
		}
		float sum = 0.0;
		for (uint dst = 0u; dst < hc; dst++) {
			uint i = dst + hc * src;
			comb[i] = exp(comb[i] - mx);
			sum += comb[i];
		}
		float inv = 1.0 / sum;
		for (uint dst = 0u; dst < hc; dst++) {
			uint i = dst + hc * src;
			comb[i] = comb[i] * inv + eps;
		}
	}
	norm(hc, eps, true);
	for (int i = 1; i < nIter; i++) {
		norm(hc, eps, false);
		norm(hc, eps, true);
	}
	for (uint src = 0u; src < hc; src++) {
		for (uint dst = 0u; dst < hc; dst++) {
			stf(toff(0u) + dst * nb(0u, 0u) + src * nb(0u, 1u) + it * nb(0u, 2u), comb[dst + hc * src]);
		}
	}
}
#endif

#ifdef HCPRE
// DSV4_HC_PRE: slots x {n_embd, hc, n_t}, weights {hc, n_t} or (op
// parameter 1, gated) a gate like x; one invocation per result element.
void main() {
	uint r = gid();
	uint n = ne(1u, 0u), hc = ne(1u, 1u);
	if (r >= n * ne(1u, 2u)) return;
	uint i0 = r % n, it = r / n;
	bool gated = opi(1u) != 0;
	float sum = 0.0;
	for (uint h = 0u; h < hc; h++) {
		float xv = lf(1u, toff(1u) + i0 * nb(1u, 0u) + h * nb(1u, 1u) + it * nb(1u, 2u));
		if (gated) {
			float gv = lf(2u, toff(2u) + i0 * nb(2u, 0u) + h * nb(2u, 1u) + it * nb(2u, 2u));
			sum += xv * (1.0 / (1.0 + exp(-gv)));
		} else {
			sum += xv * lf(2u, toff(2u) + h * nb(2u, 0u) + it * nb(2u, 1u));
		}
	}
	if (gated) sum *= opf(0u);
	stf(toff(0u) + i0 * nb(0u, 0u) + it * nb(0u, 1u), sum);
}
#endif

#ifdef HCPOST
// DSV4_HC_POST: slots x {n_embd, n_t}, residual {n_embd, hc, n_t}, post
// {hc, n_t}; ex(4) 1: comb {hc, hc, n_t} at X[0] with strides ex(1..3).
// One invocation per result element.
void main() {
	uint e = gid();
	uint n = ne(2u, 0u), hc = ne(2u, 1u);
	if (e >= n * hc * ne(2u, 2u)) return;
	uint i0 = e % n, d = (e / n) % hc, it = e / (n * hc);
	float sum = lf(1u, toff(1u) + i0 * nb(1u, 0u) + it * nb(1u, 1u)) * lf(3u, toff(3u) + d * nb(3u, 0u) + it * nb(3u, 1u));
	if (ex(4u) == 0u) {
		sum += lf(2u, toff(2u) + i0 * nb(2u, 0u) + d * nb(2u, 1u) + it * nb(2u, 2u));
	} else {
		for (uint s = 0u; s < hc; s++) {
			sum += lf(2u, toff(2u) + i0 * nb(2u, 0u) + s * nb(2u, 1u) + it * nb(2u, 2u)) *
				XF(0, ex(0u) + d * ex(1u) + s * ex(2u) + it * ex(3u));
		}
	}
	stf(toff(0u) + i0 * nb(0u, 0u) + d * nb(0u, 1u) + it * nb(0u, 2u), sum);
}
#endif
