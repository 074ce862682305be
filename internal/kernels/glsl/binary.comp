// binary: one invocation per result element; source 1 is repeated over
// source 0 (ggml's broadcast). ex(0) selects the function.
//
// With DENSE defined (all f32 and contiguous, source 1 a dense prefix of
// the result's shape), element i of source 1 is i % ex(1), with no
// coordinate arithmetic.
#define LOCAL 128u
layout(local_size_x = 128) in;
#include "common.glsl"

#define F_ADD 0u
#define F_SUB 1u
#define F_MUL 2u
#define F_DIV 3u
#define F_SILU_BACK 4u

float apply(float a, float b) {
	switch (ex(0u)) {
	case F_ADD: return a + b;
	case F_SUB: return a - b;
	case F_MUL: return a * b;
	case F_DIV: return a / b;
	}
	// silu_back: a = dy, b = x.
	float s = 1.0 / (1.0 + exp(-b));
	return a * s * (1.0 + b * (1.0 - s));
}

void main() {
	uint i = gid();
#ifdef DENSE
	if (i >= ex(2u)) return;
	float a = uintBitsToFloat(B[1].w[(toff(1u) >> 2) + i]);
	float b = uintBitsToFloat(B[2].w[(toff(2u) >> 2) + i % ex(1u)]);
	B[0].w[(toff(0u) >> 2) + i] = floatBitsToUint(apply(a, b));
#else
	if (i >= nel(0u)) return;
	uvec4 c = coords(0u, i);
	float a = ld(1u, at(1u, c));
	float b = ld(2u, at(2u, c % nes(2u)));
	st(at(0u, c), apply(a, b));
#endif
}
