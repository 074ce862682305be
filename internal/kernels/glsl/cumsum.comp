// cumsum: one invocation per row; element i of a result row is the sum of
// the source row's elements 0..i, added in order as ggml does.
#define LOCAL 64u
layout(local_size_x = 64) in;
#include "common.glsl"

void main() {
	uint r = gid();
	if (r >= nrows(0u)) return;
	uvec4 c = rowc(0u, r);
	uint so = at(1u, c), sb = nb(1u, 0u);
	uint o = at(0u, c), db = nb(0u, 0u);
	float acc = 0.0;
	for (uint i = 0u; i < ne(0u, 0u); i++) {
		acc = i == 0u ? ld(1u, so) : acc + ld(1u, so + i * sb);
		st(o + i * db, acc);
	}
}
