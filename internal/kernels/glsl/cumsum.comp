// cumsum: one work group per row. Each invocation owns a contiguous chunk
// of the row: it sums its chunk, the group forms the exclusive prefix of
// the chunk sums, and each invocation walks its chunk again from there.
// (One invocation per row cannot do long rows: llvmpipe stops an
// invocation after 65535 loop iterations in all, gallivm's guard against
// endless loops.)
#define LOCAL 64u
layout(local_size_x = 64) in;
#include "common.glsl"

shared float part[LOCAL];

void main() {
	uint r = wid();
	if (r >= nrows(0u)) return; // uniform over the group
	uint l = gl_LocalInvocationID.x;
	uvec4 c = rowc(0u, r);
	uint so = at(1u, c), sb = nb(1u, 0u);
	uint o = at(0u, c), db = nb(0u, 0u);
	uint n = ne(0u, 0u);
	uint per = (n + LOCAL - 1u) / LOCAL;
	uint i0 = min(n, l * per), i1 = min(n, i0 + per);
	float s = 0.0;
	for (uint i = i0; i < i1; i++) s += ld(1u, so + i * sb);
	part[l] = s;
	SYNC();
	if (l == 0u) {
		float acc = 0.0;
		for (uint k = 0u; k < LOCAL; k++) {
			float v = part[k];
			part[k] = acc;
			acc += v;
		}
	}
	SYNC();
	float acc = part[l];
	for (uint i = i0; i < i1; i++) {
		acc = (i == 0u) ? ld(1u, so) : acc + ld(1u, so + i * sb);
		st(o + i * db, acc);
	}
}
