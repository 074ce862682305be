// argmax: one work group per row of source 0 (a matrix); result element
// i1 is the index of the row's largest element, the last among equals.
#define LOCAL 64u
layout(local_size_x = 64) in;
#include "common.glsl"

shared float bestv[LOCAL];
shared uint besti[LOCAL];

void main() {
	uint r = wid();
	if (r >= ne(1u, 1u)) return; // uniform over the group
	uint l = gl_LocalInvocationID.x;
	uint n = ne(1u, 0u);
	uint so = toff(1u) + r * nb(1u, 1u);
	float mx = uintBitsToFloat(0xff800000u);
	uint idx = 0u;
	for (uint i = l; i < n; i += LOCAL) {
		float x = ld(1u, so + i * nb(1u, 0u));
		if (!(mx > x)) {
			mx = x;
			idx = i;
		}
	}
	bestv[l] = mx;
	besti[l] = idx;
	SYNC();
	for (uint s = LOCAL / 2u; s > 0u; s >>= 1) {
		if (l < s) {
			float v = bestv[l + s];
			uint j = besti[l + s];
			if (v > bestv[l] || (v == bestv[l] && j > besti[l])) {
				bestv[l] = v;
				besti[l] = j;
			}
		}
		SYNC();
	}
	if (l == 0u) stw(toff(0u) + r * nb(0u, 0u), besti[0]);
}
