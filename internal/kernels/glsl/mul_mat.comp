// mul_mat: result element (i0, i1, i2, i3) is the dot product of row
// (i0, i2/r2, i3/r3) of source 0 with row (i1, i2, i3) of source 1.
//
// Compile-time parameters (set by the backend):
//   TA  source 0's type code: 0 f32, 1 f16, 30 bf16, 2 q4_0, 8 q8_0, or one
//       of dequant.glsl's (3 q4_1, 6 q5_0, 7 q5_1, 10..14 q2_K..q6_K)
//   TB  source 1's type code: 0 f32, 1 f16, 30 bf16
//   TN  result columns (i1) per invocation: 1 (matrix-vector) or 4
//   ID  (defined) MUL_MAT_ID: source 0 is a stack of expert matrices,
//       source 2 the i32 expert ids; TN is 1. An id out of range raises
//       status[0].
// Each invocation computes a TM x TN block of the result in registers, so
// every loaded element of a feeds TN products and every element of b TM.
#define LOCAL 64u
layout(local_size_x = 64) in;
#include "common.glsl"

#define TM 4u

// lda/ldb load one element of a row of a / b with the type fixed at
// compile time, so the type tests fold away.
float ldt(uint s, uint t, uint o) {
	if (t == T_F32) return uintBitsToFloat(word(s, o));
	if (t == T_F16) return h2f(u16(s, o));
	return bf2f(u16(s, o));
}
#define LDA(o) ldt(1u, uint(TA), (o))
#define LDB(o) ldt(2u, uint(TB), (o))

// w32 reads 4 bytes at 2-byte aligned byte o of slot 1.
uint w32(uint o) {
	uint w = word(1u, o);
	if ((o & 2u) == 0u) return w;
	return (w >> 16) | (word(1u, o + 2u) << 16);
}

void main() {
	uint n0 = ne(0u, 0u), n1 = ne(0u, 1u);
	uint gm = (n0 + TM - 1u) / TM, gn = (n1 + TN - 1u) / TN;
	uint tiles = gm * gn;
	uint t = gid();
	uint z = t / tiles;
	if (z >= ne(0u, 2u) * ne(0u, 3u)) return;
	uint tt = t % tiles;
	uint m0 = (tt % gm) * TM, c0 = (tt / gm) * TN;
	uint i2 = z % ne(0u, 2u), i3 = z / ne(0u, 2u);
	uint K = ne(1u, 0u);
	uint ar[TM];
	uint br[TN];
#ifdef ID
	// MUL_MAT_ID (TN 1): column c0 is an expert slot, i2 a token; the
	// expert's matrix is ids(c0, i2) (slot 3), b's row (c0 % ne1, i2).
	int e = int(word(3u, toff(3u) + c0 * nb(3u, 0u) + i2 * nb(3u, 1u)));
	if (e < 0 || uint(e) >= ne(1u, 2u)) {
		atomicOr(status[0], 1u);
		status[1] = uint(e);
		return;
	}
	uint abase = toff(1u) + uint(e) * nb(1u, 2u);
	br[0] = toff(2u) + i2 * nb(2u, 2u) + (c0 % ne(2u, 1u)) * nb(2u, 1u);
#else
	uint r2 = ne(2u, 2u) / ne(1u, 2u), r3 = ne(2u, 3u) / ne(1u, 3u);
	uint abase = toff(1u) + (i2 / r2) * nb(1u, 2u) + (i3 / r3) * nb(1u, 3u);
	uint bbase = toff(2u) + i2 * nb(2u, 2u) + i3 * nb(2u, 3u);
	for (uint n = 0u; n < TN; n++) br[n] = bbase + min(c0 + n, ne(2u, 1u) - 1u) * nb(2u, 1u);
#endif
	for (uint m = 0u; m < TM; m++) ar[m] = abase + min(m0 + m, ne(1u, 1u) - 1u) * nb(1u, 1u);
	uint ab = nb(1u, 0u), bb = nb(2u, 0u);
	float acc[TM * TN];
	for (uint i = 0u; i < TM * TN; i++) acc[i] = 0.0;

#if TA == 2 || TA == 8
	// Quantized a: per block of 32, d * sum(q * b).
	for (uint kb = 0u; kb < K / 32u; kb++) {
		float part[TM * TN];
		for (uint i = 0u; i < TM * TN; i++) part[i] = 0.0;
		uint k0 = kb * 32u;
#if TA == 8
		for (uint j = 0u; j < 32u; j += 4u) {
			uint q[TM];
			for (uint m = 0u; m < TM; m++) q[m] = w32(ar[m] + kb * 34u + 2u + j);
			for (uint e = 0u; e < 4u; e++) {
				float bv[TN];
				for (uint n = 0u; n < TN; n++) bv[n] = LDB(br[n] + (k0 + j + e) * bb);
				for (uint m = 0u; m < TM; m++) {
					float qa = float(int(q[m] << (24u - 8u * e)) >> 24);
					for (uint n = 0u; n < TN; n++) part[m * TN + n] += qa * bv[n];
				}
			}
		}
		for (uint m = 0u; m < TM; m++) {
			float d = h2f(u16(1u, ar[m] + kb * 34u));
			for (uint n = 0u; n < TN; n++) acc[m * TN + n] += d * part[m * TN + n];
		}
#else
		for (uint j = 0u; j < 16u; j += 4u) {
			uint q[TM];
			for (uint m = 0u; m < TM; m++) q[m] = w32(ar[m] + kb * 18u + 2u + j);
			for (uint e = 0u; e < 4u; e++) {
				float lo[TN], hi[TN];
				for (uint n = 0u; n < TN; n++) {
					lo[n] = LDB(br[n] + (k0 + j + e) * bb);
					hi[n] = LDB(br[n] + (k0 + j + e + 16u) * bb);
				}
				for (uint m = 0u; m < TM; m++) {
					uint byte = (q[m] >> (8u * e)) & 0xffu;
					float ql = float(int(byte & 15u) - 8), qh = float(int(byte >> 4) - 8);
					for (uint n = 0u; n < TN; n++) part[m * TN + n] += ql * lo[n] + qh * hi[n];
				}
			}
		}
		for (uint m = 0u; m < TM; m++) {
			float d = h2f(u16(1u, ar[m] + kb * 18u));
			for (uint n = 0u; n < TN; n++) acc[m * TN + n] += d * part[m * TN + n];
		}
#endif
	}
#elif TA == 3 || TA == 6 || TA == 7 || (TA >= 10 && TA <= 14)
	// dequant.glsl's block types, by runs of 16 elements that share a
	// scale x and offset y: sum (x q + y) b = x sum(q b) + y sum(b).
	for (uint k0 = 0u; k0 < K; k0 += 16u) {
		float qb[TM * TN], sb[TN];
		for (uint i = 0u; i < TM * TN; i++) qb[i] = 0.0;
		for (uint n = 0u; n < TN; n++) sb[n] = 0.0;
		for (uint e = 0u; e < 16u; e++) {
			float bv[TN];
			for (uint n = 0u; n < TN; n++) {
				bv[n] = LDB(br[n] + (k0 + e) * bb);
				sb[n] += bv[n];
			}
			for (uint m = 0u; m < TM; m++) {
				float q = deqq(1u, uint(TA), ar[m], k0 + e);
				for (uint n = 0u; n < TN; n++) qb[m * TN + n] += q * bv[n];
			}
		}
		for (uint m = 0u; m < TM; m++) {
			vec2 xy = deqsub(1u, uint(TA), ar[m], k0);
			for (uint n = 0u; n < TN; n++) acc[m * TN + n] += xy.x * qb[m * TN + n] + xy.y * sb[n];
		}
	}
#else
	for (uint k = 0u; k < K; k++) {
		float av[TM], bv[TN];
		for (uint m = 0u; m < TM; m++) av[m] = LDA(ar[m] + k * ab);
		for (uint n = 0u; n < TN; n++) bv[n] = LDB(br[n] + k * bb);
		for (uint m = 0u; m < TM; m++)
			for (uint n = 0u; n < TN; n++) acc[m * TN + n] += av[m] * bv[n];
	}
#endif

	uint obase = toff(0u) + i2 * nb(0u, 2u) + i3 * nb(0u, 3u);
	for (uint m = 0u; m < TM; m++) {
		if (m0 + m >= n0) break;
		for (uint n = 0u; n < TN; n++) {
			if (c0 + n >= n1) break;
			B[0].w[(obase + (m0 + m) * nb(0u, 0u) + (c0 + n) * nb(0u, 1u)) >> 2] = floatBitsToUint(acc[m * TN + n]);
		}
	}
}
