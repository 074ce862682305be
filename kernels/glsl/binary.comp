// binary: one invocation per result element; source 1 is repeated over
// source 0 (ggml's broadcast). ex(0) selects the function.
#define LOCAL 128u
layout(local_size_x = 128) in;
#include "common.glsl"

#define F_ADD 0u
#define F_SUB 1u
#define F_MUL 2u
#define F_DIV 3u
#define F_SILU_BACK 4u

void main() {
	uint i = gid();
	if (i >= nel(0u)) return;
	uvec4 c = coords(0u, i);
	float a = ld(1u, at(1u, c));
	float b = ld(2u, at(2u, c % nes(2u)));
	float y;
	switch (ex(0u)) {
	case F_ADD: y = a + b; break;
	case F_SUB: y = a - b; break;
	case F_MUL: y = a * b; break;
	case F_DIV: y = a / b; break;
	default: {
		// silu_back: a = dy, b = x.
		float s = 1.0 / (1.0 + exp(-b));
		y = a * s * (1.0 + b * (1.0 - s));
	}
	}
	st(at(0u, c), y);
}
