// set_rows: one invocation per element (i0, i, i2, i3) of source 0 (the
// values): it goes to element i0 of row id of matrix (i2, i3) of the
// result, where id is source 1's element (i, i2 % ne1, i3 % ne2), i32 or
// i64. The result (a view of the destination) keeps its other rows. An id
// out of range raises status[0] and writes the id's low word to status[1].
#define LOCAL 128u
layout(local_size_x = 128) in;
#include "common.glsl"

#define T_I64 27u

void main() {
	uint i = gid();
	if (i >= nel(1u)) return;
	uvec4 c = coords(1u, i);
	uint io = toff(2u) + c.y * nb(2u, 0u) + (c.z % ne(2u, 1u)) * nb(2u, 1u) + (c.w % ne(2u, 2u)) * nb(2u, 2u);
	uint lo = word(2u, io);
	bool bad;
	if (ty(2u) == T_I64) {
		bad = word(2u, io + 4u) != 0u || lo >= ne(0u, 1u);
	} else {
		bad = int(lo) < 0 || lo >= ne(0u, 1u);
	}
	if (bad) {
		atomicOr(status[0], 1u);
		status[1] = lo;
		return;
	}
	st(at(0u, uvec4(c.x, lo, c.z, c.w)), ld(1u, at(1u, c)));
}
