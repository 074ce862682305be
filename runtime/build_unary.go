package runtime

import "math"

// Builders of the unary functions of ggml 0.27.0 beyond the seed's (see
// build.go for Unary itself): each is Unary with one function code.

// Sgn applies the sign function (-1, 0 or 1) (ggml_sgn).
func (c *Context) Sgn(a *Tensor) *Tensor { return c.unary(a, UnarySgn, false) }

// Step applies 1 for x > 0, else 0 (ggml_step).
func (c *Context) Step(a *Tensor) *Tensor { return c.unary(a, UnaryStep, false) }

// Elu applies x for x > 0, else exp(x) - 1 (ggml_elu).
func (c *Context) Elu(a *Tensor) *Tensor { return c.unary(a, UnaryElu, false) }

// GeluQuick applies x·sigmoid(1.702·x) (ggml_gelu_quick).
func (c *Context) GeluQuick(a *Tensor) *Tensor { return c.unary(a, UnaryGeluQuick, false) }

// GeluErf applies the exact GELU 0.5·x·(1 + erf(x/√2)) (ggml_gelu_erf).
func (c *Context) GeluErf(a *Tensor) *Tensor { return c.unary(a, UnaryGeluErf, false) }

// Hardswish applies x·min(1, max(0, (x+3)/6)) (ggml_hardswish).
func (c *Context) Hardswish(a *Tensor) *Tensor { return c.unary(a, UnaryHardswish, false) }

// Hardsigmoid applies min(1, max(0, (x+3)/6)) (ggml_hardsigmoid).
func (c *Context) Hardsigmoid(a *Tensor) *Tensor { return c.unary(a, UnaryHardsigmoid, false) }

// Expm1 applies exp(x) - 1 (ggml_expm1).
func (c *Context) Expm1(a *Tensor) *Tensor { return c.unary(a, UnaryExpm1, false) }

// Softplus applies log(1 + exp(x)) (x itself above 20) (ggml_softplus).
func (c *Context) Softplus(a *Tensor) *Tensor { return c.unary(a, UnarySoftplus, false) }

// Floor rounds down element-wise (ggml_floor).
func (c *Context) Floor(a *Tensor) *Tensor { return c.unary(a, UnaryFloor, false) }

// Ceil rounds up element-wise (ggml_ceil).
func (c *Context) Ceil(a *Tensor) *Tensor { return c.unary(a, UnaryCeil, false) }

// Round rounds to nearest, halves away from zero (ggml_round).
func (c *Context) Round(a *Tensor) *Tensor { return c.unary(a, UnaryRound, false) }

// Trunc rounds toward zero element-wise (ggml_trunc).
func (c *Context) Trunc(a *Tensor) *Tensor { return c.unary(a, UnaryTrunc, false) }

// Xielu applies xIELU: alphaP'·x² + beta·x for x > 0, else
// (expm1(min(x, eps)) - x)·alphaN' + beta·x, where alphaP' =
// softplus(alphaP) and alphaN' = beta + softplus(alphaN). As ggml_xielu,
// op parameter 0 is the function code and 1..4 hold float32 alphaN',
// alphaP', beta, eps.
func (c *Context) Xielu(a *Tensor, alphaN, alphaP, beta, eps float32) *Tensor {
	t := c.unary(a, UnaryXielu, false)
	if t != nil {
		t.SetOpParamF32(1, beta+softplusF32(alphaN))
		t.SetOpParamF32(2, softplusF32(alphaP))
		t.SetOpParamF32(3, beta)
		t.SetOpParamF32(4, eps)
	}
	return t
}

// softplusF32 is ggml_compute_softplus_f32.
func softplusF32(x float32) float32 {
	if x > 20 {
		return x
	}
	return float32(math.Log(float64(1 + float32(math.Exp(float64(x))))))
}
