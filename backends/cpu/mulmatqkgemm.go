package cpu

import (
	"fmt"

	cpukernels "github.com/gogml/gogml/internal/kernels/cpukernels"
	"github.com/gogml/gogml/internal/kernels/cpukernels/vec"
	"github.com/gogml/gogml/runtime"
)

// This file holds the prompt path of MUL_MAT with k-quant weights where
// the AVX-512 VNNI tile runs: the activation rows are quantized to q8_K
// exactly as on the row-dot path (the same scratch, the same bytes), each
// worker packs vec.QGemmRows weight rows at a time into a panel of its own
// and runs the tile over every full group of vec.QGemmCols activation
// rows, read in place; the rows of a last partial group go through the
// type's row tiles (vec.DotQ4_KMat, ...), which give the same bits. See
// RATIONALE.md, "k-quant GEMM tile".

// qkGemmMinM is the fewest activation rows that take a tile (per type,
// below). At 8 rows packing a panel plus one tile cost as much as the
// row tiles on the same products (BenchmarkQKGemm); at 16, MUL_MAT
// (1024², BenchmarkMulMatQuant, CPU time) took q4_K from 85–100 to
// 205–229 GFLOP/s, while q6_K (its packer still gathers qh) stayed level
// (99–130 vs 119–122) and gains from 32 rows (98–104 vs 149–182).
const qkGemmMinM = 2 * vec.QGemmCols

// qkGemm is the tile of one k-quant weight type.
type qkGemm struct {
	minM       int64
	panelBytes func(nb int) int
	pack       func(dst, w []byte, stride, rows, nb int) error
	tile       func(out []float32, p, y []byte, ys, nb int) error
}

// qkGemms are the k-quant tiles by weight type (read only).
var qkGemms = map[runtime.Type]qkGemm{
	runtime.TypeQ4_K: {qkGemmMinM, vec.QGemmQ4_KPanelBytes, vec.PackQ4_KPanel, vec.QGemmQ4_KTile},
	runtime.TypeQ5_K: {qkGemmMinM, vec.QGemmQ5_KPanelBytes, vec.PackQ5_KPanel, vec.QGemmQ5_KTile},
	runtime.TypeQ6_K: {2 * qkGemmMinM, vec.QGemmQ6_KPanelBytes, vec.PackQ6_KPanel, vec.QGemmQ6_KTile},
}

// qkGemmDot returns the dot phase of MUL_MAT node t (weights am, result
// dm) on the k-quant tile, over the q8_K activation rows q (qrow bytes
// each, the rows of every batch in order), or nil where it does not
// apply: a type without a tile, fewer than its minM activation rows, or
// no AVX-512 VNNI. mat computes the leftover rows' products.
func qkGemmDot(t *runtime.Tensor, dm, am, q []byte, qrow int64, mat func([]float32, int, []byte, int, int, []byte, int, int, int) error, sp *scratchPool, nth int) func(ith, nth int) error {
	a, b := t.Src[0], t.Src[1]
	kg, ok := qkGemms[a.Type]
	if !ok || mat == nil || !vec.QKGemmAVX512() || b.Ne[1] < kg.minM || a.Nb[1] > 1<<26 {
		return nil
	}
	m, n := b.Ne[1], a.Ne[1]
	nb := int(a.Ne[0] / vec.QKK)
	batches := b.Ne[2] * b.Ne[3]
	groups := (m + vec.QGemmCols - 1) / vec.QGemmCols // per batch, the last maybe partial
	r2, r3 := b.Ne[2]/a.Ne[2], b.Ne[3]/a.Ne[3]
	ldc := int64(t.Nb[1] / 4)
	stride := int(a.Nb[1])
	pw := newPanelWork(b.Ne[2], batches, n, groups, nth)
	rep := Repacked(a)
	pbytes := kg.panelBytes(nb)
	sp.prepare(nth)
	return func(ith, nth int) error {
		panel := sp.panel(ith, pbytes)
		var out [vec.QGemmCols * vec.QGemmRows]float32
		u0, u1 := cpukernels.RowRange(pw.units(), ith, nth)
		for u := u0; u < u1; u++ {
			x := pw.unit(u)
			j0, nj := x.j0, x.nj
			w := am[off3(a.Nb, j0, x.i2/r2, x.i3/r3):]
			if rep {
				w = sp.plainRows(ith, a, am, j0, nj)
			}
			C := floats(dm, off3(t.Nb, 0, x.i2, x.i3), (m-1)*ldc+n)
			qb := q[x.batch*m*qrow:]
			packed := false
			for g := x.g0; g < x.g1; g++ {
				i0 := g * vec.QGemmCols
				if rem := m - i0; rem < vec.QGemmCols {
					if err := mat(C[i0*ldc+j0:], int(ldc), w, stride, int(nj), qb[i0*qrow:], int(qrow), int(rem), nb); err != nil {
						return fmt.Errorf("tensor %s: %w", t, err)
					}
					continue
				}
				if !packed {
					if err := kg.pack(panel, w, stride, int(nj), nb); err != nil {
						return fmt.Errorf("tensor %s: %w", t, err)
					}
					packed = true
				}
				if err := kg.tile(out[:], panel, qb[i0*qrow:(i0+vec.QGemmCols)*qrow], int(qrow), nb); err != nil {
					return fmt.Errorf("tensor %s: %w", t, err)
				}
				for c := range int64(vec.QGemmCols) {
					copy(C[(i0+c)*ldc+j0:(i0+c)*ldc+j0+nj], out[c*vec.QGemmRows:])
				}
			}
		}
		return nil
	}
}
