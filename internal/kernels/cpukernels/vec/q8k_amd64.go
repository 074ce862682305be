//go:build amd64 && !purego

package vec

import cpukernels "github.com/gogml/gogml/internal/kernels/cpukernels"

//go:noescape
func q8KBlockAVX512(x *float32, dst *byte) int

// QuantizeRowQ8_K is cpukernels.QuantizeRowQ8_K (ggml's quantize_row_q8_K,
// the same bytes), with AVX-512 blocks where the k-quant kernels run.
func QuantizeRowQ8_K(x []float32, dst []byte) error {
	nb := len(x) / QKK
	if !useK512 || len(x)%QKK != 0 || len(dst) < nb*Q8_KBlockSize {
		return cpukernels.QuantizeRowQ8_K(x, dst)
	}
	for i := 0; i < nb; i++ {
		xb, db := x[i*QKK:(i+1)*QKK], dst[i*Q8_KBlockSize:(i+1)*Q8_KBlockSize]
		if q8KBlockAVX512(&xb[0], &db[0]) != 0 {
			if err := cpukernels.QuantizeRowQ8_K(xb, db); err != nil {
				return err
			}
		}
	}
	return nil
}
