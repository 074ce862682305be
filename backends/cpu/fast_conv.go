package cpu

import (
	cpukernels "github.com/gogml/gogml/internal/kernels/cpukernels"
	"github.com/gogml/gogml/internal/kernels/cpukernels/vec"
	"github.com/gogml/gogml/runtime"
)

// convChunk is how many patches a worker unfolds before one matrix product
// with the kernel: 64 rows of A keep the product's packed panels busy
// while A (64 patches) stays within L2 for typical kernels.
const convChunk = 64

// convKernel is the fast path of CONV_2D and CONV_3D: the kernel as a
// dense f32 matrix (converted once, before the workers start), then per
// worker chunks of its share of the patches unfolded (cpukernels.ConvPlan,
// which rounds to f16 for an f16 kernel as ggml does) and multiplied with
// the kernel by vec.GemmNT, as ggml's CPU kernel runs im2col and mul_mat.
// It returns nil for other ops.
func convKernel(t *runtime.Tensor, dst []byte, src [][]byte, sp *scratchPool, nth int) func(ith, nth int) error {
	if t.Op != runtime.OpConv2D && t.Op != runtime.OpConv3D {
		return nil
	}
	pl := cpukernels.NewConvPlan(t)
	total, k64, oc64 := pl.Sizes()
	k, oc := int(k64), int(oc64)
	w := pl.Kernel(src[0])
	sp.prepare(nth)
	return func(ith, nth int) error {
		p0, p1 := cpukernels.RowRange(total, ith, nth)
		if p0 >= p1 {
			return nil
		}
		buf := sp.get(ith, convChunk*(k+oc))
		a, c := buf[:convChunk*k], buf[convChunk*k:]
		for p := p0; p < p1; p += convChunk {
			m := int(min(convChunk, p1-p))
			for j := 0; j < m; j++ {
				pl.Unfold(src[1], p+int64(j), a[j*k:(j+1)*k])
			}
			if err := vec.GemmNT(m, oc, k, a, k, w, k, c, oc); err != nil {
				return err
			}
			for j := 0; j < m; j++ {
				pl.Store(dst, p+int64(j), c[j*oc:], 1)
			}
		}
		return nil
	}
}
