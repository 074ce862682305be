// set_rows: writes the rows of source 0 (the values, f32 or f16) into the
// result (a view of the destination, whose other rows stay): row i of
// matrix (i2, i3) goes to row id of the same matrix, where id is source
// 1's element (i, i2 % ne1, i3 % ne2), i32 or i64. An id out of range
// raises status[0] and writes the id's low word to status[1].
//
// Float results: one invocation per value element. Quantized results
// (QUANT defined): one invocation per block of 32 values, quantized as
// ggml's CPU backend does (q8_0 with its SIMD rounding, q4_0, q4_1, q5_0
// and q5_1 with the reference quantizers).
#define LOCAL 128u
layout(local_size_x = 128) in;
#include "common.glsl"

#define T_Q4_1 3u
#define T_Q5_0 6u
#define T_Q5_1 7u
#define T_I64 27u

// rowid returns the destination row of value row c (false: out of range).
bool rowid(uvec4 c, out uint id) {
	uint io = toff(2u) + c.y * nb(2u, 0u) + (c.z % ne(2u, 1u)) * nb(2u, 1u) + (c.w % ne(2u, 2u)) * nb(2u, 2u);
	id = word(2u, io);
	bool bad;
	if (ty(2u) == T_I64) {
		bad = word(2u, io + 4u) != 0u || id >= ne(0u, 1u);
	} else {
		bad = int(id) < 0 || id >= ne(0u, 1u);
	}
	if (bad) {
		atomicOr(status[0], 1u);
		status[1] = id;
	}
	return !bad;
}

#ifndef QUANT
void main() {
	uint i = gid();
	if (i >= nel(1u)) return;
	uvec4 c = coords(1u, i);
	uint id;
	if (!rowid(c, id)) return;
	st(at(0u, uvec4(c.x, id, c.z, c.w)), ld(1u, at(1u, c)));
}
#else
uint bytes[34];

uint f16b(float v) { return packHalf2x16(vec2(v, 0.0)); }
void put16(uint o, uint h) {
	bytes[o] = h & 0xffu;
	bytes[o + 1u] = (h >> 8) & 0xffu;
}
// q is C's (uint8_t)(int8_t)v for the quantizers' values.
uint q(float v) { return v > -2147483648.0 && v < 2147483648.0 ? uint(int(v)) & 0xffu : 0u; }

void main() {
	uint i = gid();
	uint nbk = ne(1u, 0u) / 32u;
	if (i >= nbk * nrows(1u)) return;
	uint k = i % nbk;
	uvec4 c = rowc(1u, i / nbk);
	uint id;
	if (!rowid(c, id)) return;
	float x[32];
	uint so = at(1u, c) + k * 32u * nb(1u, 0u);
	for (uint e = 0u; e < 32u; e++) x[e] = ld(1u, so + e * nb(1u, 0u));
	uint t = ty(0u);
	uint size;
	if (t == T_Q8_0) {
		size = 34u;
		float amax = 0.0;
		for (uint e = 0u; e < 32u; e++) amax = max(amax, abs(x[e]));
		precise float d = amax / 127.0;
		precise float idv = amax != 0.0 ? 127.0 / amax : 0.0;
		put16(0u, f16b(d));
		for (uint e = 0u; e < 32u; e++) {
			precise float v = x[e] * idv;
			bytes[2u + e] = uint(clamp(int(roundEven(v)), -128, 127)) & 0xffu;
		}
	} else if (t == T_Q4_0 || t == T_Q5_0) {
		// d = m / -8 (-16) for the element m of largest magnitude.
		bool q5 = t == T_Q5_0;
		size = q5 ? 22u : 18u;
		float amax = 0.0, m = 0.0;
		for (uint e = 0u; e < 32u; e++) {
			if (amax < abs(x[e])) {
				amax = abs(x[e]);
				m = x[e];
			}
		}
		precise float d = m / (q5 ? -16.0 : -8.0);
		precise float idv = d != 0.0 ? 1.0 / d : 0.0;
		put16(0u, f16b(d));
		uint qh = 0u, base = q5 ? 6u : 2u;
		for (uint j = 0u; j < 16u; j++) {
			precise float v0 = x[j] * idv + (q5 ? 16.5 : 8.5);
			precise float v1 = x[j + 16u] * idv + (q5 ? 16.5 : 8.5);
			uint mx = q5 ? 31u : 15u;
			uint q0 = min(mx, q(v0)), q1 = min(mx, q(v1));
			bytes[base + j] = (q0 & 15u) | ((q1 & 15u) << 4);
			qh |= ((q0 >> 4) & 1u) << j;
			qh |= ((q1 >> 4) & 1u) << (j + 16u);
		}
		if (q5) {
			put16(2u, qh & 0xffffu);
			put16(4u, qh >> 16);
		}
	} else {
		// q4_1 / q5_1: d = (max - min) / 15 (31), m = min.
		bool q5 = t == T_Q5_1;
		size = q5 ? 24u : 20u;
		float mn = 3.402823466e38, mxv = -3.402823466e38;
		for (uint e = 0u; e < 32u; e++) {
			mn = min(mn, x[e]);
			mxv = max(mxv, x[e]);
		}
		precise float d = (mxv - mn) / (q5 ? 31.0 : 15.0);
		precise float idv = d != 0.0 ? 1.0 / d : 0.0;
		put16(0u, f16b(d));
		put16(2u, f16b(mn));
		uint qh = 0u, base = q5 ? 8u : 4u;
		for (uint j = 0u; j < 16u; j++) {
			precise float v0 = (x[j] - mn) * idv + 0.5;
			precise float v1 = (x[j + 16u] - mn) * idv + 0.5;
			uint q0 = q(v0), q1 = q(v1);
			if (!q5) {
				q0 = min(15u, q0);
				q1 = min(15u, q1);
			}
			bytes[base + j] = (q0 & 15u) | ((q1 & 15u) << 4);
			qh |= ((q0 >> 4) & 1u) << j;
			qh |= ((q1 >> 4) & 1u) << (j + 16u);
		}
		if (q5) {
			put16(4u, qh & 0xffffu);
			put16(6u, qh >> 16);
		}
	}
	uint o = at(0u, uvec4(0u, id, c.z, c.w)) + k * size;
	for (uint b = 0u; b < size; b += 2u) st16(o + b, bytes[b] | (bytes[b + 1u] << 8));
}
#endif
