// Dequantization of ggml's block types beyond q4_0 / q8_0: q4_1, q5_0,
// q5_1 (blocks of 32) and the k-quants q2_K..q6_K (super-blocks of 256),
// with ggml's exact block layouts (ggml-common.h) and the operation order
// of its dequantize_row_* functions. Included by common.glsl after the
// byte readers (u8, u16, h2f) it uses.

#define T_Q4_1 3u
#define T_Q5_0 6u
#define T_Q5_1 7u
#define T_Q2_K 10u
#define T_Q3_K 11u
#define T_Q4_K 12u
#define T_Q5_K 13u
#define T_Q6_K 14u

// isdeqx reports the types deqx reads.
bool isdeqx(uint t) {
	return t == T_Q4_1 || t == T_Q5_0 || t == T_Q5_1 || (t >= T_Q2_K && t <= T_Q6_K);
}

// kscale is ggml's get_scale_min_k4: the 6-bit scale (x) and min (y) of
// sub-block j of a q4_K / q5_K block whose 12 scale bytes start at byte o.
uvec2 kscale(uint s, uint o, uint j) {
	if (j < 4u) return uvec2(u8(s, o + j) & 63u, u8(s, o + j + 4u) & 63u);
	uint b = u8(s, o + j + 4u);
	return uvec2((b & 15u) | ((u8(s, o + j - 4u) >> 6) << 4), (b >> 4) | ((u8(s, o + j) >> 6) << 4));
}

// q3scale is the signed 6-bit scale of sub-block j (0..15) of a q3_K
// block whose 12 scale bytes start at byte o (ggml's kmask shuffle).
int q3scale(uint s, uint o, uint j) {
	uint lo = j < 8u ? (u8(s, o + j) & 15u) : (u8(s, o + j - 8u) >> 4);
	uint hi = (u8(s, o + 8u + (j & 3u)) >> (2u * (j >> 2))) & 3u;
	return int(lo | (hi << 4)) - 32;
}

// deqsub is the scale (x) and offset (y) of the 16 elements from element
// i (a multiple of 16) of the row that starts at byte r of slot s, of type
// t: element i+j is x * deqq(s, t, r, i+j) + y, which is ggml's
// dequantize_row_* expression for every type here (y = 0 where it has no
// offset; k-quant mins enter as y = -min).
vec2 deqsub(uint s, uint t, uint r, uint i) {
	if (t == T_Q4_1 || t == T_Q5_0 || t == T_Q5_1) {
		uint bo = r + (i >> 5) * (t == T_Q4_1 ? 20u : (t == T_Q5_0 ? 22u : 24u));
		return vec2(h2f(u16(s, bo)), t == T_Q5_0 ? 0.0 : h2f(u16(s, bo + 2u)));
	}
	uint e = i & 255u;
	if (t == T_Q2_K) {
		uint bo = r + (i >> 8) * 84u;
		uint sc = u8(s, bo + (e >> 4));
		return vec2(h2f(u16(s, bo + 80u)) * float(sc & 15u), -(h2f(u16(s, bo + 82u)) * float(sc >> 4)));
	}
	if (t == T_Q3_K) {
		uint bo = r + (i >> 8) * 110u;
		return vec2(h2f(u16(s, bo + 108u)) * float(q3scale(s, bo + 96u, e >> 4)), 0.0);
	}
	if (t == T_Q4_K || t == T_Q5_K) {
		uint bo = r + (i >> 8) * (t == T_Q5_K ? 176u : 144u);
		uvec2 sm = kscale(s, bo + 4u, e >> 5);
		return vec2(h2f(u16(s, bo)) * float(sm.x), -(h2f(u16(s, bo + 2u)) * float(sm.y)));
	}
	uint bo = r + (i >> 8) * 210u;
	int sc = int(u8(s, bo + 192u + (e >> 4)) << 24) >> 24;
	return vec2(h2f(u16(s, bo + 208u)) * float(sc), 0.0);
}

// deqq is the quant of element i of the row that starts at byte r of slot
// s, of type t, with the type's fixed offset applied (q5_0: -16, q3_K: -4
// without the high bit, q6_K: -32).
float deqq(uint s, uint t, uint r, uint i) {
	if (t == T_Q4_1 || t == T_Q5_0 || t == T_Q5_1) {
		uint j = i & 31u;
		uint bs = t == T_Q4_1 ? 20u : (t == T_Q5_0 ? 22u : 24u);
		uint qs = r + (i >> 5) * bs + bs - 16u;
		uint b = u8(s, qs + (j & 15u));
		uint q = j < 16u ? (b & 15u) : (b >> 4);
		if (t == T_Q4_1) return float(q);
		// The fifth bit of element j is bit j of the little-endian qh.
		q |= ((u8(s, qs - 4u + (j >> 3)) >> (j & 7u)) & 1u) << 4;
		return t == T_Q5_0 ? float(int(q) - 16) : float(q);
	}
	uint e = i & 255u;
	uint l = e & 31u;
	if (t == T_Q2_K) {
		uint bo = r + (i >> 8) * 84u;
		return float((u8(s, bo + 16u + (e >> 7) * 32u + l) >> (2u * ((e >> 5) & 3u))) & 3u);
	}
	if (t == T_Q3_K) {
		uint bo = r + (i >> 8) * 110u;
		uint n = e >> 7, j = (e >> 5) & 3u;
		int q = int((u8(s, bo + 32u + n * 32u + l) >> (2u * j)) & 3u);
		if ((u8(s, bo + l) & (1u << (n * 4u + j))) == 0u) q -= 4;
		return float(q);
	}
	if (t == T_Q4_K || t == T_Q5_K) {
		bool q5 = t == T_Q5_K;
		uint bo = r + (i >> 8) * (q5 ? 176u : 144u);
		uint sub = e >> 5;
		uint b = u8(s, bo + (q5 ? 48u : 16u) + (e >> 6) * 32u + l);
		uint q = (sub & 1u) == 0u ? (b & 15u) : (b >> 4);
		if (q5) q += ((u8(s, bo + 16u + l) >> sub) & 1u) << 4;
		return float(q);
	}
	uint bo = r + (i >> 8) * 210u;
	uint n = e >> 7, g = (e >> 5) & 3u;
	uint b = u8(s, bo + n * 64u + (g & 1u) * 32u + l);
	uint lo = g >= 2u ? (b >> 4) : (b & 15u);
	uint hi = (u8(s, bo + 128u + n * 32u + l) >> (2u * g)) & 3u;
	return float(int(lo | (hi << 4)) - 32);
}

// deqx is element i of the row that starts at byte r of slot s, of type t
// (one of isdeqx's types).
float deqx(uint s, uint t, uint r, uint i) {
	vec2 sc = deqsub(s, t, r, i & ~15u);
	return sc.x * deqq(s, t, r, i) + sc.y;
}
