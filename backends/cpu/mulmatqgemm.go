package cpu

import (
	"fmt"

	cpukernels "github.com/gogml/gogml/internal/kernels/cpukernels"
	"github.com/gogml/gogml/internal/kernels/cpukernels/vec"
	"github.com/gogml/gogml/runtime"
)

// This file holds the prompt path of MUL_MAT with q4_0 and q8_0 weights
// where the AVX-512 VNNI kernels run: the activation rows are quantized to
// q8_0 as on the row-dot path (the same bytes) and packed in groups of
// vec.QGemmCols rows (vec.QuantizePackQGemmAct); each worker packs
// vec.QGemmRows weight rows at a time into a panel of its own and runs
// vec.QGemmTile over every group, so each weight byte is decoded once per
// node and each activation byte is read once per panel. See RATIONALE.md,
// "Quantized GEMM: panels packed per node".

// qGemmMinM is the fewest activation rows that take the GEMM tile: one
// full group. At 8 rows a panel's packing plus one tile costs 0.4–0.55 of
// the row dots on the same rows (BenchmarkQGemm); below that half the
// tile's columns would be idle and the row dots are as fast.
const qGemmMinM = vec.QGemmCols

// qGemmOffset returns the packed-weight offset of typ, or false where the
// tile does not serve it.
func qGemmOffset(typ runtime.Type) (int, bool) {
	switch typ {
	case runtime.TypeQ4_0:
		return vec.QGemmOffsetQ4_0, true
	case runtime.TypeQ8_0:
		return vec.QGemmOffsetQ8_0, true
	}
	return 0, false
}

// mulMatQGemmKernels returns the two phases of MUL_MAT node t on the GEMM
// tile (as mulMatQuantKernels), or nils where it does not apply: weights
// of q4_0 or q8_0 with dense rows, at least qGemmMinM float activation
// rows, an f32 result with dense rows, and the AVX-512 kernels in use.
func mulMatQGemmKernels(t *runtime.Tensor, dm, am, bm []byte, sp *scratchPool, nth int) (quant, dot func(ith, nth int) error, qrows int64) {
	a, b := t.Src[0], t.Src[1]
	c, ok := qGemmOffset(a.Type)
	if !ok || !vec.QGemmAVX512() || b.Ne[1] < qGemmMinM || !a.IsContiguousRows() || !f32Layout(t, dm) ||
		!cpukernels.IsFloat(b.Type) || a.Ne[0]%vec.QK != 0 || a.Nb[1] > 1<<26 {
		return nil, nil, 0
	}
	m, n, k := b.Ne[1], a.Ne[1], a.Ne[0]
	nb := int(k / vec.QK)
	batches := b.Ne[2] * b.Ne[3]
	rows := m * batches
	groups := (m + vec.QGemmCols - 1) / vec.QGemmCols // per batch
	gbytes := int64(vec.QGemmActBytes(nb))
	if int64(cap(sp.qg)) < batches*groups*gbytes {
		sp.qg = make([]byte, batches*groups*gbytes)
	}
	qg := sp.qg[:batches*groups*gbytes]
	sp.prepare(nth)
	dense := f32Layout(b, bm)
	quant = func(ith, nth int) error {
		r0, r1 := cpukernels.RowRange(rows, ith, nth)
		for r := r0; r < r1; r++ {
			i1 := r % m
			g := (r/m)*groups + i1/vec.QGemmCols
			qp := func(x []float32, _ []byte) error {
				return vec.QuantizePackQGemmAct(qg[g*gbytes:(g+1)*gbytes], int(i1%vec.QGemmCols), x, c)
			}
			if err := quantRow(t, bm, dense, sp, ith, r, qp, nil); err != nil {
				return err
			}
		}
		return nil
	}
	pack := vec.PackQ8_0Panel
	if a.Type == runtime.TypeQ4_0 {
		pack = vec.PackQ4_0Panel
	}
	r2, r3 := b.Ne[2]/a.Ne[2], b.Ne[3]/a.Ne[3]
	ldc := int64(t.Nb[1] / 4)
	stride := int(a.Nb[1])
	pw := newPanelWork(b.Ne[2], batches, n, groups, nth)
	rep := Repacked(a)
	pbytes := vec.QGemmPanelBytes(nb)
	dot = func(ith, nth int) error {
		panel := sp.panel(ith, pbytes)
		var out [vec.QGemmCols * vec.QGemmRows]float32
		u0, u1 := cpukernels.RowRange(pw.units(), ith, nth)
		for u := u0; u < u1; u++ {
			x := pw.unit(u)
			w := am[off3(a.Nb, x.j0, x.i2/r2, x.i3/r3):]
			if rep {
				w = sp.plainRows(ith, a, am, x.j0, x.nj)
			}
			nj, j0, batch := x.nj, x.j0, x.batch
			if err := pack(panel, w, stride, int(nj), nb); err != nil {
				return fmt.Errorf("tensor %s: %w", t, err)
			}
			C := floats(dm, off3(t.Nb, 0, x.i2, x.i3), (m-1)*ldc+n)
			for g := x.g0; g < x.g1; g++ {
				gb := (batch*groups + g) * gbytes
				if err := vec.QGemmTile(out[:], panel, qg[gb:gb+gbytes], nb); err != nil {
					return fmt.Errorf("tensor %s: %w", t, err)
				}
				i0 := g * vec.QGemmCols
				for c := range min(vec.QGemmCols, m-i0) {
					copy(C[(i0+c)*ldc+j0:(i0+c)*ldc+j0+nj], out[c*vec.QGemmRows:])
				}
			}
		}
		return nil
	}
	return quant, dot, rows
}

// panelWork splits the products of a GEMM tile into work units of
// (batch, panel of vec.QGemmRows weight rows, chunk of activation
// groups): whole panels when there are enough to keep every worker busy,
// else each panel's groups split into chunks (each chunk packs its panel
// again).
type panelWork struct {
	ne2, panels, chunks, groups, n, batches int64
}

// newPanelWork splits n weight rows times groups activation groups per
// batch, batches batches (ne2 per dimension-3 index), among nth workers.
func newPanelWork(ne2, batches, n, groups int64, nth int) panelWork {
	pw := panelWork{ne2: ne2, panels: (n + vec.QGemmRows - 1) / vec.QGemmRows, chunks: 1, groups: groups, n: n, batches: batches}
	if want := 4 * int64(nth); batches*pw.panels < want {
		pw.chunks = min(groups, (want+batches*pw.panels-1)/(batches*pw.panels))
	}
	return pw
}

func (pw panelWork) units() int64 { return pw.batches * pw.panels * pw.chunks }

// panelUnit is one unit: its batch (and that batch's indices i2, i3), its
// weight rows j0 ≤ j < j0+nj, and its activation groups g0 ≤ g < g1.
type panelUnit struct {
	batch, i2, i3, j0, nj int64
	g0, g1                int64
}

func (pw panelWork) unit(u int64) panelUnit {
	batch, rest := u/(pw.panels*pw.chunks), u%(pw.panels*pw.chunks)
	p, ch := rest/pw.chunks, rest%pw.chunks
	x := panelUnit{batch: batch, i2: batch % pw.ne2, i3: batch / pw.ne2, j0: p * vec.QGemmRows}
	x.nj = min(vec.QGemmRows, pw.n-x.j0)
	x.g0, x.g1 = cpukernels.RowRange(pw.groups, int(ch), int(pw.chunks))
	return x
}
