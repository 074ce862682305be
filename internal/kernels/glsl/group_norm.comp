// group_norm: one work group per (group of channels, i3): the elements of
// channels [g*per, min(g*per + per, ne2)) of sample i3 are normalized to
// zero mean and unit variance. Op parameters: int groups, float eps;
// ex(0) is per, the channels of a group.
#define LOCAL 64u
layout(local_size_x = 64) in;
#include "common.glsl"

void main() {
	uint w = wid();
	uint ng = uint(opi(0u));
	if (w >= ng * ne(0u, 3u)) return; // uniform over the group
	uint g = w % ng, i3 = w / ng;
	uint per = ex(0u);
	uint c0 = g * per, c1 = min(c0 + per, ne(1u, 2u));
	if (c0 >= c1) return;
	uint n0 = ne(1u, 0u), n1 = ne(1u, 1u);
	uint cnt = n0 * n1 * (c1 - c0);
	uint l = gl_LocalInvocationID.x;
	float s = 0.0;
	for (uint k = l; k < cnt; k += LOCAL) {
		uvec4 c = uvec4(k % n0, (k / n0) % n1, c0 + k / (n0 * n1), i3);
		s += ld(1u, at(1u, c));
	}
	float mean = wg_sum(s) / float(cnt);
	float s2 = 0.0;
	for (uint k = l; k < cnt; k += LOCAL) {
		uvec4 c = uvec4(k % n0, (k / n0) % n1, c0 + k / (n0 * n1), i3);
		float v = ld(1u, at(1u, c)) - mean;
		s2 += v * v;
	}
	float scale = 1.0 / sqrt(wg_sum(s2) / float(cnt) + opf(1u));
	for (uint k = l; k < cnt; k += LOCAL) {
		uvec4 c = uvec4(k % n0, (k / n0) % n1, c0 + k / (n0 * n1), i3);
		st(at(0u, c), (ld(1u, at(1u, c)) - mean) * scale);
	}
}
