// concat: one invocation per result element; op parameter 0 is the
// dimension along which source 1 follows source 0.
#define LOCAL 128u
layout(local_size_x = 128) in;
#include "common.glsl"

void main() {
	uint i = gid();
	if (i >= nel(0u)) return;
	uvec4 c = coords(0u, i);
	uint dim = uint(opi(0u));
	uvec4 sc = c;
	uint s = 1u;
	uint n = ne(1u, dim);
	if (c[dim] >= n) {
		sc[dim] -= n;
		s = 2u;
	}
	copyraw(at(0u, c), s, at(s, sc));
}
