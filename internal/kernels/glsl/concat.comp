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
	uint o = at(0u, c);
	uint n = ne(1u, dim);
	// Which source an element comes from differs between invocations, and
	// GLSL indexes an array of buffer blocks (B[]) only with dynamically
	// uniform values: each branch names its source with a constant.
	if (c[dim] < n) {
		copyraw(o, 1u, at(1u, c));
	} else {
		uvec4 sc = c;
		sc[dim] -= n;
		copyraw(o, 2u, at(2u, sc));
	}
}
