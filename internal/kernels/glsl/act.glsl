// Activation functions shared by the unary and glu kernels, with ggml's
// formulas.

// tanh_safe is tanh without the overflow of exp(2x) for large |x|.
float tanh_safe(float x) {
	float t = exp(-2.0 * abs(x));
	return sign(x) * (1.0 - t) / (1.0 + t);
}

// gelu_tanh is GELU's tanh approximation (ggml's GELU).
float gelu_tanh(float x) {
	return 0.5 * x * (1.0 + tanh_safe(0.79788456080286535588 * x * (1.0 + 0.044715 * x * x)));
}

// h rounds to f16 and back, as ggml's f16 activation tables do.
float h(float v) { return unpackHalf2x16(packHalf2x16(vec2(v, 0.0))).x; }

// gelu_quick is x * sigmoid(1.702 x) through f16, as ggml's CPU backend
// computes GELU_QUICK (from its f16 table).
float gelu_quick(float x) {
	float y = h(x);
	return h(y * (1.0 / (1.0 + exp(-1.702 * y))));
}

// erfc_approx is the complementary error function with a fractional error
// below 1.2e-7 everywhere (Chebyshev fit, Numerical Recipes' erfcc).
float erfc_approx(float z) {
	float a = abs(z);
	float t = 1.0 / (1.0 + 0.5 * a);
	float r = t * exp(-a * a - 1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 +
		t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 +
		t * (-0.82215223 + t * 0.17087277)))))))));
	return z >= 0.0 ? r : 2.0 - r;
}

// gelu_erf is the exact GELU, 0.5 x (1 + erf(x / sqrt 2)), written as
// 0.5 x erfc(-x / sqrt 2) to keep its relative precision for x < 0.
float gelu_erf(float x) { return 0.5 * x * erfc_approx(-x * 0.70710678118654752440); }
