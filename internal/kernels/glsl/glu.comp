// glu: gated linear units, one invocation per result element. The
// activated value x and the gate g are the two halves of a source-0 row
// (x first unless op parameter 1, swapped, is set) or, with ex(0) = 1,
// the elements of sources 0 and 1. Op parameter 0 selects the function,
// 2 and 3 are SWIGLU_OAI's alpha and limit (SWIGLU_CLAMP: limit).
#define LOCAL 128u
layout(local_size_x = 128) in;
#include "common.glsl"
#include "act.glsl"

#define G_REGLU 0
#define G_GEGLU 1
#define G_SWIGLU 2
#define G_SWIGLU_OAI 3
#define G_GEGLU_ERF 4
#define G_GEGLU_QUICK 5
#define G_SWIGLU_CLAMP 6

float glu(int f, float x, float g) {
	switch (f) {
	case G_REGLU: return x > 0.0 ? x * g : 0.0;
	case G_GEGLU:
		if (x <= -10.0) return 0.0;
		if (x >= 10.0) return x * g;
		return h(gelu_tanh(h(x))) * g;
	case G_SWIGLU: return x / (1.0 + exp(-x)) * g;
	case G_SWIGLU_OAI: {
		float lim = opf(3u);
		x = min(x, lim);
		g = clamp(g, -lim, lim);
		return x / (1.0 + exp(opf(2u) * -x)) * (g + 1.0);
	}
	case G_GEGLU_ERF: return gelu_erf(x) * g;
	case G_GEGLU_QUICK: return gelu_quick(x) * g;
	}
	// G_SWIGLU_CLAMP
	float lim = opf(3u);
	x = min(x, lim);
	g = clamp(g, -lim, lim);
	return x / (1.0 + exp(-x)) * g;
}

void main() {
	uint i = gid();
	if (i >= nel(0u)) return;
	uvec4 c = coords(0u, i);
	float x, g;
	if (ex(0u) == 1u) {
		x = ld(1u, at(1u, c));
		g = ld(2u, at(2u, c));
	} else {
		uint nc = ne(0u, 0u);
		uvec4 cx = c, cg = c;
		if (opi(1u) != 0) cx.x += nc; else cg.x += nc;
		x = ld(1u, at(1u, cx));
		g = ld(1u, at(1u, cg));
	}
	st(at(0u, c), glu(opi(0u), x, g));
}
