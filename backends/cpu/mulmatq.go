package cpu

import (
	"encoding/binary"
	"fmt"
	"math"

	cpukernels "github.com/gogml/gogml/internal/kernels/cpukernels"
	"github.com/gogml/gogml/internal/kernels/cpukernels/vec"
	"github.com/gogml/gogml/runtime"
)

// This file holds MUL_MAT with q8_0 and q4_0 weights the way ggml runs it:
// the f32 activation rows (src1) are quantized to q8_0 once per node, then
// every output element is an integer-SIMD dot of q8_0 (or q4_0) weight
// blocks with q8_0 activation blocks (vec.DotQ8_0Rows, vec.DotQ4_0Rows).

// Output tiles of the quantized product: qTileN weight rows (kept in cache)
// by qTileM activation rows.
const (
	qTileN = 16
	qTileM = 64
)

// qMinN is the fewest weight rows for which the activations are
// quantized: quantizing a row costs about as much as a few row dots, so
// narrower products (a single output column) run on the dequantizing path,
// which is also free of the activation rounding.
const qMinN = 4

// qMaxM is the most activation rows for which the integer dots run: above
// it, dequantizing each weight row once and running the register-blocked
// f32 GEMM is faster (BenchmarkMulMatQuantPaths).
const qMaxM = 96

// quantizeRowQ8 writes x (a multiple of 32 elements) as q8_0 blocks into
// dst, byte for byte as cpukernels.QuantizeRowQ8_0 (ggml's reference) does,
// only faster: round-half-away-from-zero of the float32 product v·id is
// done as truncation of v·id ± 0.5 in float64, exact for every float32.
func quantizeRowQ8(x []float32, dst []byte) error {
	nb := len(x) / vec.QK
	if len(x)%vec.QK != 0 || len(dst) < nb*vec.Q8_0BlockSize {
		return fmt.Errorf("q8_0: %d elements into %d bytes: %w", len(x), len(dst), runtime.ErrShape)
	}
	for i := 0; i < nb; i++ {
		xs := x[i*vec.QK : (i+1)*vec.QK : (i+1)*vec.QK]
		blk := dst[i*vec.Q8_0BlockSize : (i+1)*vec.Q8_0BlockSize : (i+1)*vec.Q8_0BlockSize]
		var amax float32
		for _, v := range xs {
			amax = max(amax, math.Float32frombits(math.Float32bits(v)&^(1<<31)))
		}
		if amax > math.MaxFloat32 || amax != amax {
			// Inf or NaN: the reference's own (conversion-defined) bytes.
			if err := cpukernels.QuantizeRowQ8_0(xs, blk); err != nil {
				return err
			}
			continue
		}
		d := amax / 127
		var id float32
		if d != 0 {
			id = 1 / d
		}
		binary.LittleEndian.PutUint16(blk, cpukernels.F32ToF16(d))
		q := blk[2:]
		for j, v := range xs {
			r := float64(v * id)
			if r >= 0 {
				q[j] = byte(int8(r + 0.5))
			} else {
				q[j] = byte(int8(r - 0.5))
			}
		}
	}
	return nil
}

// mulMatQuantKernels returns the two phases of a quantized MUL_MAT node t
// (bytes dm, weights am, activations bm): quant fills the scratch with the
// q8_0 activation rows (split by rows), dot computes the outputs (split by
// output tiles). It returns nils when the node is not of that kind: the
// weights q8_0 or q4_0 with dense rows, activations and result f32 with
// dense rows.
func mulMatQuantKernels(t *runtime.Tensor, dm, am, bm []byte, sp *scratchPool, maxM int64) (quant, dot func(ith, nth int) error, qrows int64) {
	a, b := t.Src[0], t.Src[1]
	if b.Ne[1] > maxM || (a.Type != runtime.TypeQ8_0 && a.Type != runtime.TypeQ4_0) || !a.IsContiguousRows() ||
		a.Ne[1] < qMinN || !f32Layout(t, dm) || !f32Layout(b, bm) || a.Ne[0]%vec.QK != 0 {
		return nil, nil, 0
	}
	m, n, k := b.Ne[1], a.Ne[1], a.Ne[0]
	nb := int(k / vec.QK)
	qrow := int64(nb * vec.Q8_0BlockSize)
	rows := b.Ne[1] * b.Ne[2] * b.Ne[3]
	if int64(cap(sp.q)) < rows*qrow {
		sp.q = make([]byte, rows*qrow)
	}
	q := sp.q[:rows*qrow]
	quant = func(ith, nth int) error {
		r0, r1 := cpukernels.RowRange(rows, ith, nth)
		for r := r0; r < r1; r++ {
			i1, i2, i3 := rowCoords(b.Ne, r)
			if err := quantizeRowQ8(floats(bm, off3(b.Nb, i1, i2, i3), k), q[r*qrow:(r+1)*qrow]); err != nil {
				return fmt.Errorf("tensor %s: %w", t, err)
			}
		}
		return nil
	}
	rowsDot := vec.DotQ8_0Rows
	if a.Type == runtime.TypeQ4_0 {
		rowsDot = vec.DotQ4_0Rows
	}
	r2, r3 := b.Ne[2]/a.Ne[2], b.Ne[3]/a.Ne[3]
	ldc := int64(t.Nb[1] / 4)
	tn, tm := (n+qTileN-1)/qTileN, (m+qTileM-1)/qTileM
	perBatch := tn * tm
	tiles := perBatch * b.Ne[2] * b.Ne[3]
	stride := int(a.Nb[1])
	dot = func(ith, nth int) error {
		t0, t1 := cpukernels.RowRange(tiles, ith, nth)
		for tile := t0; tile < t1; tile++ {
			batch, rest := tile/perBatch, tile%perBatch
			i2, i3 := batch%b.Ne[2], batch/b.Ne[2]
			j0 := (rest / tm) * qTileN
			j1 := min(j0+qTileN, n)
			i0 := (rest % tm) * qTileM
			i1 := min(i0+qTileM, m)
			w := am[off3(a.Nb, j0, i2/r2, i3/r3):]
			C := floats(dm, off3(t.Nb, 0, i2, i3), (m-1)*ldc+n)
			qb := q[(batch*m)*qrow:]
			for i := i0; i < i1; i++ {
				if err := rowsDot(C[i*ldc+j0:i*ldc+j1], w, stride, qb[i*qrow:(i+1)*qrow], nb); err != nil {
					return fmt.Errorf("tensor %s: %w", t, err)
				}
			}
		}
		return nil
	}
	return quant, dot, rows
}
