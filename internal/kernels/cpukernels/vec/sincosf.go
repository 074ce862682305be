package vec

import (
	"math"

	cpukernels "github.com/gogml/gogml/internal/kernels/cpukernels"
)

// Sincosf sets sin[i], cos[i] = cpukernels.Sincosf(x[i]) for i < len(x)
// (sin and cos at least as long): glibc's sinf and cosf, bit for bit, at
// every level. At AVX-512 the one-step branch (2^-12 ≤ |x| < 120) takes
// 8 lanes a step in assembly with Sincosf's operations; the other values
// and the tail go through Sincosf.
func Sincosf(sin, cos, x []float32) {
	sin, cos = sin[:len(x)], cos[:len(x)]
	n := sincosfVec(sin, cos, x)
	for i, v := range x[:n] {
		// Sincosf's branches: below 2^-12 (top 0x398) or from 120 (top
		// 0x42f) on, the kernel's lanes are not Sincosf's.
		if top := math.Float32bits(v) >> 20 & 0x7ff; top < 0x398 || top >= 0x42f {
			sin[i], cos[i] = cpukernels.Sincosf(v)
		}
	}
	for i := n; i < len(x); i++ {
		sin[i], cos[i] = cpukernels.Sincosf(x[i])
	}
}
