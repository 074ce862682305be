// unary: one invocation per result element. ex(0) selects the function,
// ex(1) the source mapping: 0 = same coordinates modulo the source's shape
// (element-wise ops, REPEAT), 1 = same flat index (DUP/CPY/CONT between
// shapes).
#define LOCAL 128u
layout(local_size_x = 128) in;
#include "common.glsl"

#define F_RAW 0u
#define F_CONVERT 1u
#define F_SCALE 2u
#define F_SQR 3u
#define F_SQRT 4u
#define F_LOG 5u
#define F_CLAMP 6u
#define F_ABS 7u
#define F_NEG 8u
#define F_TANH 9u
#define F_RELU 10u
#define F_SIGMOID 11u
#define F_GELU 12u
#define F_SILU 13u
#define F_EXP 14u
#define F_DIAG_MASK_INF 15u
#define F_ADD1 16u

float tanh_safe(float x) {
	float t = exp(-2.0 * abs(x));
	return sign(x) * (1.0 - t) / (1.0 + t);
}

void main() {
	uint i = gid();
	if (i >= nel(0u)) return;
	uvec4 c = coords(0u, i);
	uvec4 sc = ex(1u) == 1u ? coords(1u, i) : c % nes(1u);
	uint o = at(0u, c);
	uint so = at(1u, sc);
	uint f = ex(0u);
	if (f == F_RAW) {
		copyraw(o, 1u, so);
		return;
	}
	float x = ld(1u, so);
	float y = x;
	switch (f) {
	case F_SCALE: y = x * opf(0u); break;
	case F_SQR: y = x * x; break;
	case F_SQRT: y = sqrt(x); break;
	case F_LOG: y = log(x); break;
	case F_CLAMP: y = min(max(x, opf(0u)), opf(1u)); break;
	case F_ABS: y = abs(x); break;
	case F_NEG: y = -x; break;
	case F_TANH: y = tanh_safe(x); break;
	case F_RELU: y = x > 0.0 ? x : 0.0; break;
	case F_SIGMOID: y = 1.0 / (1.0 + exp(-x)); break;
	case F_GELU: y = 0.5 * x * (1.0 + tanh_safe(0.79788456080286535588 * x * (1.0 + 0.044715 * x * x))); break;
	case F_SILU: y = x / (1.0 + exp(-x)); break;
	case F_EXP: y = exp(x); break;
	case F_DIAG_MASK_INF:
		if (int(c.x) > opi(0u) + int(c.y)) y = uintBitsToFloat(0xff800000u);
		break;
	case F_ADD1: y = x + ld(2u, toff(2u)); break;
	}
	st(o, y);
}
