package cpu

import (
	"fmt"
	"unsafe"

	cpukernels "github.com/gogml/gogml/internal/kernels/cpukernels"
	"github.com/gogml/gogml/runtime"
)

// mulMatHalfKernels returns the two phases of a MUL_MAT node t with f16 or
// bf16 weights, as ggml's CPU backend computes it: the activations are
// first rounded to the weights' type (round phase, split by rows, into a
// dense scratch), then the f32 GEMM multiplies them with the widened
// weights (mm phase). Products of two halves (or two bfloat16) are exact
// in float32, so only the order of the sums differs from ggml's. It
// returns nils when t is not of that kind.
func mulMatHalfKernels(t *runtime.Tensor, dm, am, bm []byte, sp *scratchPool, nth int) (round, mm func(ith, nth int) error, rows int64) {
	a, b := t.Src[0], t.Src[1]
	if (a.Type != runtime.TypeF16 && a.Type != runtime.TypeBF16) || !cpukernels.IsFloat(b.Type) || !f32Layout(t, dm) {
		return nil, nil, 0
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
	conv := func(v float32) float32 { return cpukernels.F16ToF32(cpukernels.F32ToF16(v)) }
	if a.Type == runtime.TypeBF16 {
		conv = func(v float32) float32 { return cpukernels.BF16ToF32(cpukernels.F32ToBF16(v)) }
	}
	round = func(ith, nth int) error {
		r0, r1 := cpukernels.RowRange(rows, ith, nth)
		for r := r0; r < r1; r++ {
			i1, i2, i3 := rowCoords(b.Ne, r)
			x := floats(buf, uint64(r*k)*4, k)
			if err := cpukernels.LoadRow(b, bm, i1, i2, i3, x); err != nil {
				return fmt.Errorf("tensor %s: %w", t, err)
			}
			for i, v := range x {
				x[i] = conv(v)
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
