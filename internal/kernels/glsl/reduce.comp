// reduce: one work group reduces all of source 0 to the result's single
// element; ex(0) selects the op:
//   0 SUM: the float sum (each invocation sums its share, then a tree);
//     as ggml's CPU kernel, element i0 of a row is read at i0 times the
//     element size whatever nb[0] is.
//   1 COUNT_EQUAL: the number of positions where the i32 sources 0 and 1
//     are equal, written as an i64.
// Each invocation walks nel/LOCAL elements; the planner keeps that below
// llvmpipe's loop guard.
#define LOCAL 256u
layout(local_size_x = 256) in;
#include "common.glsl"

shared uint cnt[LOCAL];

void main() {
	uint l = gl_LocalInvocationID.x;
	uint n = nel(1u);
	bool sum = ex(0u) == 0u;
	uint es = esize(ty(1u));
	float acc = 0.0;
	uint eq = 0u;
	for (uint i = l; i < n; i += LOCAL) {
		uvec4 c = coords(1u, i);
		uint o = toff(1u) + c.y * nb(1u, 1u) + c.z * nb(1u, 2u) + c.w * nb(1u, 3u);
		if (sum) {
			acc += ld(1u, o + c.x * es);
		} else if (word(1u, o + c.x * nb(1u, 0u)) == word(2u, at(2u, c))) {
			eq++;
		}
	}
	if (sum) {
		float s = wg_sum(acc);
		if (l == 0u) st(toff(0u), s);
		return;
	}
	cnt[l] = eq;
	SYNC();
	for (uint s = LOCAL / 2u; s > 0u; s >>= 1) {
		if (l < s) cnt[l] += cnt[l + s];
		SYNC();
	}
	if (l == 0u) {
		stw(toff(0u), cnt[0]);
		stw(toff(0u) + 4u, 0u);
	}
}
