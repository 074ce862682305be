// quant: copies that read or write quantized blocks (DUP/CPY/CONT).
// ex(0) selects the mode:
//   0 dequantize: one invocation per result element; result row r is
//     source row r (equal ne0, dense rows).
//   1 copy blocks: source and result of one quantized type, one invocation
//     per 16-bit unit of a row; ex(1) is the bytes of a row.
//   2 quantize (q4_0, q4_1, q5_0, q5_1, q8_0): one invocation per result
//     block; its 32 elements are source elements in flat order (shapes may
//     differ).
//   3 cast: f32 to i32 (truncating, as C) or i32 to f32, one invocation
//     per result element; result element i is source element i in flat
//     order (shapes may differ).
#define LOCAL 128u
layout(local_size_x = 128) in;
#include "common.glsl"

// st8 stores one byte at byte o of the result, leaving its neighbours.
void st8(uint o, uint v) {
	uint sh = (o & 3u) * 8u;
	uint i = o >> 2;
	atomicAnd(B[0].w[i], ~(0xffu << sh));
	atomicOr(B[0].w[i], (v & 0xffu) << sh);
}

// blockbytes is the size of a block of 32 of the quantize types.
uint blockbytes(uint t) {
	if (t == T_Q8_0) return 34u;
	if (t == T_Q4_1) return 20u;
	if (t == T_Q5_0) return 22u;
	if (t == T_Q5_1) return 24u;
	return 18u;
}

// stqh stores the 32 fifth bits of a q5 block (bit j of element j) as a
// little-endian word at byte o.
void stqh(uint o, uint qh) {
	for (uint k = 0u; k < 4u; k++) st8(o + k, qh >> (8u * k));
}

void main() {
	uint i = gid();
	uint mode = ex(0u);
	uint n0 = ne(0u, 0u);
	if (mode == 0u) {
		if (i >= nel(0u)) return;
		uvec4 c = coords(0u, i);
		uint r = i / n0;
		st(at(0u, c), ldrow(1u, at(1u, rowc(1u, r)), c.x));
		return;
	}
	if (mode == 1u) {
		uint units = ex(1u) / 2u;
		if (i >= units * nrows(0u)) return;
		uint r = i / units, u = i % units;
		st16(at(0u, rowc(0u, r)) + 2u * u, u16(1u, at(1u, rowc(1u, r)) + 2u * u));
		return;
	}
	if (mode == 3u) {
		if (i >= nel(0u)) return;
		uint v = word(1u, at(1u, coords(1u, i)));
		uint r;
		if (ty(0u) == T_I32) {
			// x86's conversion: NaN and values beyond int32 give INT_MIN.
			float x = uintBitsToFloat(v);
			r = (x > -2147483648.0 && x < 2147483648.0) ? uint(int(x)) : 0x80000000u;
		} else {
			r = floatBitsToUint(float(int(v)));
		}
		stw(at(0u, coords(0u, i)), r);
		return;
	}
	uint nbk = n0 / 32u;
	if (i >= nbk * nrows(0u)) return;
	uint r = i / nbk, k = i % nbk;
	float x[32];
	uint first = r * n0 + k * 32u;
	for (uint e = 0u; e < 32u; e++) x[e] = ld(1u, at(1u, coords(1u, first + e)));
	uint t = ty(0u);
	bool q8 = t == T_Q8_0;
	uint bo = at(0u, rowc(0u, r)) + k * blockbytes(t);
	if (t == T_Q4_1 || t == T_Q5_1) {
		// ggml's quantize_row_q4_1_ref / q5_1_ref: d = (max-min)/nmax, m = min.
		float mn = 3.402823466e38, mx = -3.402823466e38;
		for (uint e = 0u; e < 32u; e++) {
			if (x[e] < mn) mn = x[e];
			if (x[e] > mx) mx = x[e];
		}
		bool q5 = t == T_Q5_1;
		float d = (mx - mn) / (q5 ? 31.0 : 15.0);
		float id = d != 0.0 ? 1.0 / d : 0.0;
		st16(bo, packHalf2x16(vec2(d, 0.0)));
		st16(bo + 2u, packHalf2x16(vec2(mn, 0.0)));
		uint qh = 0u;
		for (uint j = 0u; j < 16u; j++) {
			float v0 = (x[j] - mn) * id + 0.5, v1 = (x[j + 16u] - mn) * id + 0.5;
			uint q0 = v0 > 0.0 ? uint(v0) & 255u : 0u, q1 = v1 > 0.0 ? uint(v1) & 255u : 0u;
			if (!q5) {
				q0 = min(15u, q0);
				q1 = min(15u, q1);
			}
			st8(bo + (q5 ? 8u : 4u) + j, (q0 & 15u) | ((q1 & 15u) << 4));
			qh |= ((q0 >> 4) & 1u) << j;
			qh |= ((q1 >> 4) & 1u) << (j + 16u);
		}
		if (q5) stqh(bo + 4u, qh);
		return;
	}
	if (t == T_Q5_0) {
		// ggml's quantize_row_q5_0_ref: d = m / -16 for the element m of
		// largest magnitude.
		float amax = 0.0, mx = 0.0;
		for (uint e = 0u; e < 32u; e++) {
			if (amax < abs(x[e])) {
				amax = abs(x[e]);
				mx = x[e];
			}
		}
		float d = mx / -16.0;
		float id = d != 0.0 ? 1.0 / d : 0.0;
		st16(bo, packHalf2x16(vec2(d, 0.0)));
		uint qh = 0u;
		for (uint j = 0u; j < 16u; j++) {
			float v0 = x[j] * id + 16.5, v1 = x[j + 16u] * id + 16.5;
			uint q0 = v0 > 0.0 ? min(31u, uint(v0)) : 0u;
			uint q1 = v1 > 0.0 ? min(31u, uint(v1)) : 0u;
			st8(bo + 6u + j, (q0 & 15u) | ((q1 & 15u) << 4));
			qh |= (q0 >> 4) << j;
			qh |= (q1 >> 4) << (j + 16u);
		}
		stqh(bo + 2u, qh);
		return;
	}
	if (q8) {
		float amax = 0.0;
		for (uint e = 0u; e < 32u; e++) amax = max(amax, abs(x[e]));
		// As ggml's CPU quantize_row_q8_0 (what a CPY runs there):
		// id = 127/amax, rounded to nearest with ties to even.
		float d = amax / 127.0;
		float id = amax != 0.0 ? 127.0 / amax : 0.0;
		st16(bo, packHalf2x16(vec2(d, 0.0)));
		for (uint e = 0u; e < 32u; e++) {
			int q = clamp(int(roundEven(x[e] * id)), -128, 127);
			st8(bo + 2u + e, uint(q));
		}
		return;
	}
	float amax = 0.0, mx = 0.0;
	for (uint e = 0u; e < 32u; e++) {
		if (amax < abs(x[e])) {
			amax = abs(x[e]);
			mx = x[e];
		}
	}
	float d = mx / -8.0;
	float id = d != 0.0 ? 1.0 / d : 0.0;
	st16(bo, packHalf2x16(vec2(d, 0.0)));
	for (uint j = 0u; j < 16u; j++) {
		float v0 = x[j] * id + 8.5, v1 = x[j + 16u] * id + 8.5;
		uint q0 = v0 > 0.0 ? min(15u, uint(v0)) : 0u;
		uint q1 = v1 > 0.0 ? min(15u, uint(v1)) : 0u;
		st8(bo + 2u + j, q0 | (q1 << 4));
	}
}
