// mul_mat: result element (i0, i1, i2, i3) is the dot product of row
// (i0, i2/r2, i3/r3) of source 0 (f32, f16, bf16, q4_0 or q8_0) with row
// (i1, i2, i3) of source 1 (a float type). A work group computes LOCAL
// consecutive i0 of one result row, sharing tiles of the source 1 row.
#define LOCAL 64u
layout(local_size_x = 64) in;
#include "common.glsl"

shared float tile[LOCAL];

void main() {
	uint n0 = ne(0u, 0u);
	uint groups = (n0 + LOCAL - 1u) / LOCAL;
	uint g = wid();
	uint r = g / groups;
	if (r >= nrows(0u)) return; // uniform over the group
	uint l = gl_LocalInvocationID.x;
	uint i0 = (g % groups) * LOCAL + l;
	uvec4 c = rowc(0u, r);
	uint K = ne(1u, 0u);
	uint r2 = ne(2u, 2u) / ne(1u, 2u), r3 = ne(2u, 3u) / ne(1u, 3u);
	uint ar = toff(1u) + min(i0, ne(1u, 1u) - 1u) * nb(1u, 1u) + (c.z / r2) * nb(1u, 2u) + (c.w / r3) * nb(1u, 3u);
	uint br = at(2u, c), bb = nb(2u, 0u);
	float sum = 0.0;
	for (uint k0 = 0u; k0 < K; k0 += LOCAL) {
		uint k = k0 + l;
		tile[l] = k < K ? ld(2u, br + k * bb) : 0.0;
		SYNC();
		uint n = min(LOCAL, K - k0);
		if (i0 < n0) {
			for (uint j = 0u; j < n; j++) sum += ldrow(1u, ar, k0 + j) * tile[j];
		}
		SYNC();
	}
	if (i0 < n0) st(at(0u, uvec4(i0, c.yzw)), sum);
}
