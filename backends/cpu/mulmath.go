package cpu

import (
	"fmt"
	"unsafe"

	cpukernels "github.com/gogml/gogml/internal/kernels/cpukernels"
	"github.com/gogml/gogml/runtime"
)

// qMaxM is the most activation rows for which a quantized MUL_MAT runs on
// the integer dots: above it, multiplying the activations' rounded values
// with dequantized weight rows in the register-blocked f32 GEMM is faster
// (BenchmarkMulMatQuant). Both paths round the activations the same way,
// so they differ only in the order of float sums.
const qMaxM = 96

// mulMatRoundedKernels returns the two phases of a MUL_MAT node t whose
// activations ggml rounds before the product, computed on the f32 GEMM:
// the round phase (split by rows) writes the activations, rounded to the
// weights' vec_dot type as ggml's CPU backend rounds them, into a dense
// scratch; the mm phase multiplies them with the widened or dequantized
// weights. It covers f16 and bf16 weights (products of two halves or two
// bfloat16 are exact in float32, so only the order of the sums differs from
// ggml's) and quantized weights with more activation rows than their
// integer dots take (qKernel.maxM). It returns nils when t is not of that
// kind.
func mulMatRoundedKernels(t *runtime.Tensor, dm, am, bm []byte, sp *scratchPool, nth int) (round, mm func(ith, nth int) error, rows int64) {
	a, b := t.Src[0], t.Src[1]
	if !cpukernels.IsFloat(b.Type) || !f32Layout(t, dm) {
		return nil, nil, 0
	}
	var conv func(v float32) float32
	var qk qKernel
	switch a.Type {
	case runtime.TypeF16:
		conv = func(v float32) float32 { return cpukernels.F16ToF32(cpukernels.F32ToF16(v)) }
	case runtime.TypeBF16:
		conv = func(v float32) float32 { return cpukernels.BF16ToF32(cpukernels.F32ToBF16(v)) }
	default:
		var ok bool
		if qk, ok = quantKernel(a.Type); !ok || b.Ne[1] <= qk.maxM || a.Ne[0]%qk.act.BlockSize() != 0 {
			return nil, nil, 0
		}
	}
	k := b.Ne[0]
	rows = b.Ne[1] * b.Ne[2] * b.Ne[3]
	need := 4*rows*k + 4 // +4: room to align to 4 bytes
	if int64(cap(sp.q)) < need {
		sp.q = make([]byte, need)
	}
	buf := sp.q[:need]
	if o := uintptr(unsafe.Pointer(&buf[0])) % 4; o != 0 {
		buf = buf[4-o:]
	}
	buf = buf[:4*rows*k]
	qbufs := make([][]byte, nth) // one quantized row per worker
	round = func(ith, nth int) error {
		r0, r1 := cpukernels.RowRange(rows, ith, nth)
		for r := r0; r < r1; r++ {
			i1, i2, i3 := rowCoords(b.Ne, r)
			x := floats(buf, uint64(r*k)*4, k)
			if err := cpukernels.LoadRow(b, bm, i1, i2, i3, x); err != nil {
				return fmt.Errorf("tensor %s: %w", t, err)
			}
			if conv != nil {
				for i, v := range x {
					x[i] = conv(v)
				}
				continue
			}
			if qbufs[ith] == nil {
				qbufs[ith] = make([]byte, qk.act.RowSize(k))
			}
			if err := qk.quant(x, qbufs[ith]); err != nil {
				return fmt.Errorf("tensor %s: %w", t, err)
			}
			if err := cpukernels.ToFloat(qk.act, qbufs[ith], x); err != nil {
				return fmt.Errorf("tensor %s: %w", t, err)
			}
		}
		return nil
	}
	dense := [4]uint64{4, uint64(4 * k), uint64(4 * k * b.Ne[1]), uint64(4 * k * b.Ne[1] * b.Ne[2])}
	mm = mulMatKernelB(t, dm, am, buf, dense, sp, nth)
	if mm == nil {
		return nil, nil, 0
	}
	return round, mm, rows
}
