package cpu

import (
	"encoding/binary"
	"fmt"

	cpukernels "github.com/gogml/gogml/internal/kernels/cpukernels"
	"github.com/gogml/gogml/internal/kernels/cpukernels/vec"
	"github.com/gogml/gogml/runtime"
)

// Fast path of LIGHTNING_INDEXER: the q·k products of a block of keys
// against a block of tokens' heads are one GEMM (vec.GemmNT) instead of a
// dot product per (key, token, head). Keys split across workers as in the
// reference; results agree with it to float32 rounding (the sums run in
// another order).

// Block sizes: keys converted to float32 at a time, tokens per GEMM.
const (
	liKeys   = 64
	liTokens = 16
)

// lightningKernel returns the fast kernel for LIGHTNING_INDEXER node t,
// or nil when its layout is not the dense one the kernel needs.
func lightningKernel(t *runtime.Tensor, dst []byte, src [][]byte) func(ith, nth int) error {
	if t.Op != runtime.OpLightningIndexer || cpukernels.Supports(t) != nil {
		return nil
	}
	q, k, w, m := t.Src[0], t.Src[1], t.Src[2], t.Src[3]
	if !f32Layout(t, dst) || !f32Layout(q, src[0]) || !f32Layout(w, src[2]) || !q.IsContiguous() ||
		!w.IsContiguous() || !t.IsContiguous() || !m.IsContiguousRows() || !k.IsContiguousRows() {
		return nil
	}
	toFloat := func(b []byte, row []float32) error { return cpukernels.ToFloat(k.Type, b, row) }
	D, nh, ntok, ns := q.Ne[0], q.Ne[1], q.Ne[2], q.Ne[3]
	rowBytes := k.Type.RowSize(D)
	return func(ith, nth int) error {
		r0, r1 := cpukernels.RowRange(k.Ne[2], ith, nth)
		if r0 >= r1 {
			return nil
		}
		kbuf := make([]float32, liKeys*D)
		scores := make([]float32, liTokens*nh*liKeys)
		for s := int64(0); s < ns; s++ {
			for kb := r0; kb < r1; kb += liKeys {
				n := min(liKeys, r1-kb)
				for j := int64(0); j < n; j++ {
					ko := off3(k.Nb, 0, kb+j, s)
					if err := toFloat(src[1][ko:ko+rowBytes], kbuf[j*D:(j+1)*D]); err != nil {
						return fmt.Errorf("tensor %s: %w", t, err)
					}
				}
				for tb := int64(0); tb < ntok; tb += liTokens {
					nt := min(liTokens, ntok-tb)
					qrows := floats(src[0], off3(q.Nb, 0, tb, s), nt*nh*D)
					if err := vec.GemmNT(int(nt*nh), int(n), int(D), qrows, int(D), kbuf, int(D), scores, int(n)); err != nil {
						return fmt.Errorf("tensor %s: %w", t, err)
					}
					for tt := int64(0); tt < nt; tt++ {
						wv := floats(src[2], off3(w.Nb, tb+tt, 0, s), nh)
						mo := off3(m.Nb, tb+tt, 0, s%m.Ne[3])
						out := floats(dst, off3(t.Nb, tb+tt, 0, s), k.Ne[2])
						for j := int64(0); j < n; j++ {
							var score float32
							for h := int64(0); h < nh; h++ {
								score += max(scores[(tt*nh+h)*n+j], 0) * wv[h]
							}
							ik := uint64(kb + j)
							out[ik] = score + cpukernels.F16ToF32(binary.LittleEndian.Uint16(src[3][mo+2*ik:]))
						}
					}
				}
			}
		}
		return nil
	}
}
