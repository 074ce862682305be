//go:build !amd64 || purego

package vec

import cpukernels "github.com/gogml/gogml/internal/kernels/cpukernels"

// QuantizeRowQ8_K is cpukernels.QuantizeRowQ8_K (ggml's quantize_row_q8_K),
// with SIMD blocks where the k-quant kernels have them.
func QuantizeRowQ8_K(x []float32, dst []byte) error { return cpukernels.QuantizeRowQ8_K(x, dst) }
