// get_rows: one invocation per result element (i0, i1, i2, i3) = element
// i0 of row idx(i1, i2) of matrix i2 of source 0, where idx is source 1's
// element (i1, i2, i3). An index out of range raises status[0] and writes
// the index to status[1].
#define LOCAL 128u
layout(local_size_x = 128) in;
#include "common.glsl"

void main() {
	uint i = gid();
	if (i >= nel(0u)) return;
	uvec4 c = coords(0u, i);
	int idx = int(word(2u, toff(2u) + c.y * nb(2u, 0u) + c.z * nb(2u, 1u) + c.w * nb(2u, 2u)));
	if (idx < 0 || uint(idx) >= ne(1u, 1u)) {
		atomicOr(status[0], 1u);
		status[1] = uint(idx);
		return;
	}
	uint row = toff(1u) + uint(idx) * nb(1u, 1u) + c.z * nb(1u, 2u) + c.w * nb(1u, 3u);
	uint o = at(0u, c);
	if (ty(1u) == T_I32) {
		stw(o, word(1u, row + c.x * nb(1u, 0u)));
		return;
	}
	st(o, ldrow(1u, row, c.x));
}
