package cpukernels

import (
	"math"

	"github.com/gogml/gogml/runtime"
)

// This file holds the element-wise functions of UNARY and CLAMP as ggml's
// CPU backend computes them: in float32, in ggml's order of operations,
// GELU and GELU_QUICK through ggml's half-precision tables.

// UnaryFunc returns the float32 function of unary op u as ggml's CPU
// backend computes it, or nil for functions that need op parameters
// (XIELU: see UnaryFuncOf) or are unknown.
func UnaryFunc(u runtime.UnaryOp) func(float32) float32 {
	switch u {
	case runtime.UnaryAbs:
		return abs32
	case runtime.UnarySgn:
		return func(x float32) float32 {
			switch {
			case x > 0:
				return 1
			case x < 0:
				return -1
			}
			return 0
		}
	case runtime.UnaryNeg:
		return func(x float32) float32 { return -x }
	case runtime.UnaryStep:
		return func(x float32) float32 {
			if x > 0 {
				return 1
			}
			return 0
		}
	case runtime.UnaryTanh:
		return func(x float32) float32 { return float32(math.Tanh(float64(x))) }
	case runtime.UnaryElu:
		return func(x float32) float32 {
			if x > 0 {
				return x
			}
			return float32(math.Expm1(float64(x)))
		}
	case runtime.UnaryRelu:
		return func(x float32) float32 {
			if x > 0 {
				return x
			}
			return 0
		}
	case runtime.UnarySigmoid:
		return func(x float32) float32 { return 1 / (1 + expf(-x)) }
	case runtime.UnaryGelu:
		return Gelu
	case runtime.UnaryGeluQuick:
		return GeluQuick
	case runtime.UnarySilu:
		return func(x float32) float32 { return float32(float64(x) / (1 + math.Exp(-float64(x)))) }
	case runtime.UnaryHardswish:
		return func(x float32) float32 { return x * hardSigmoid(x) }
	case runtime.UnaryHardsigmoid:
		return hardSigmoid
	case runtime.UnaryExp:
		return expf
	case runtime.UnaryExpm1:
		return func(x float32) float32 { return expf(x) - 1 }
	case runtime.UnarySoftplus:
		return Softplus
	case runtime.UnaryGeluErf:
		return GeluErf
	case runtime.UnaryFloor:
		return func(x float32) float32 { return float32(math.Floor(float64(x))) }
	case runtime.UnaryCeil:
		return func(x float32) float32 { return float32(math.Ceil(float64(x))) }
	case runtime.UnaryRound:
		return func(x float32) float32 { return float32(math.Round(float64(x))) } // roundf: halves away from 0
	case runtime.UnaryTrunc:
		return func(x float32) float32 { return float32(math.Trunc(float64(x))) }
	}
	return nil
}

// UnaryFuncOf returns the function of UNARY node t, its op parameters
// included (XIELU reads float32 alpha_n, alpha_p, beta, eps from op
// parameters 1..4 as ggml_xielu stores them), or nil when unknown.
func UnaryFuncOf(t *runtime.Tensor) func(float32) float32 {
	if t.UnaryOp() != runtime.UnaryXielu {
		return UnaryFunc(t.UnaryOp())
	}
	alphaN, alphaP, beta, eps := t.OpParamF32(1), t.OpParamF32(2), t.OpParamF32(3), t.OpParamF32(4)
	return func(x float32) float32 {
		if x > 0 {
			return alphaP*x*x + beta*x
		}
		return (float32(math.Expm1(float64(minNaN(x, eps))))-x)*alphaN + beta*x
	}
}

// minNaN is C's fminf: the non-NaN operand when one is NaN.
func minNaN(a, b float32) float32 {
	switch {
	case a != a:
		return b
	case b != b:
		return a
	}
	return min(a, b)
}

// maxNaN is C's fmaxf.
func maxNaN(a, b float32) float32 {
	switch {
	case a != a:
		return b
	case b != b:
		return a
	}
	return max(a, b)
}

// expf is exp rounded to float32.
func expf(x float32) float32 { return float32(math.Exp(float64(x))) }

// logf is log rounded to float32.
func logf(x float32) float32 { return float32(math.Log(float64(x))) }

func hardSigmoid(x float32) float32 { return minNaN(1, maxNaN(0, (x+3)/6)) }

// Softplus is ggml's log(1 + exp(x)), x itself above 20, in float32.
func Softplus(x float32) float32 {
	if x > 20 {
		return x
	}
	return logf(1 + expf(x))
}

// GeluErf is the exact GELU, 0.5·x·(1 + erf(x/√2)), in float32.
func GeluErf(x float32) float32 {
	const sqrt2Inv = 0.70710678118654752440084436210484
	return 0.5 * x * (1 + float32(math.Erf(float64(x*sqrt2Inv))))
}

// geluF32 is ggml_gelu_f32, the tanh approximation
// 0.5·x·(1 + tanh(√(2/π)·x·(1 + 0.044715·x²))) in float32.
func geluF32(x float32) float32 {
	const sqrt2OverPi = 0.79788456080286535587989211986876
	const coefA = 0.044715
	return 0.5 * x * (1 + float32(math.Tanh(float64(sqrt2OverPi*x*(1+coefA*x*x)))))
}

// halfRound rounds x to the nearest half-precision value.
func halfRound(x float32) float32 { return F16ToF32(F32ToF16(x)) }

// Gelu is GELU as ggml's CPU backend computes it: 0 at or below -10, x at
// or above 10, else the tanh approximation of x rounded to half precision,
// itself rounded to half precision (ggml's 64K-entry table).
func Gelu(x float32) float32 {
	switch {
	case x <= -10:
		return 0
	case x >= 10:
		return x
	}
	return halfRound(geluF32(halfRound(x)))
}

// GeluQuick is x·sigmoid(1.702·x) as ggml's CPU backend computes it:
// through its half-precision table, like Gelu (without Gelu's cut-offs).
func GeluQuick(x float32) float32 {
	h := halfRound(x)
	return halfRound(h * (1 / (1 + expf(-1.702*h))))
}

// Clamp is ggml's MAX(MIN(x, hi), lo): lo wins over hi, and NaN becomes
// hi (lo when lo > hi).
func Clamp(x, lo, hi float32) float32 {
	if !(x < hi) {
		x = hi
	}
	if !(x > lo) {
		x = lo
	}
	return x
}
