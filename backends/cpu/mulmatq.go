package cpu

import (
	"fmt"
	"math"

	cpukernels "github.com/gogml/gogml/internal/kernels/cpukernels"
	"github.com/gogml/gogml/internal/kernels/cpukernels/vec"
	"github.com/gogml/gogml/runtime"
)

// This file holds MUL_MAT with quantized weights the way ggml's CPU
// backend runs it: the activation rows (src1) are quantized once per node
// to the weights' vec_dot type (q8_0 for q4_0, q5_0, q8_0; q8_1 for q4_1,
// q5_1; q8_K for the k-quants) with ggml's CPU quantizers, then every
// output element is an integer dot of weight blocks with activation blocks
// (vec.DotQ*Rows). The activations are always quantized, whatever the
// shape: above qMaxM activation rows the same rounded activations go
// through the f32 GEMM instead (mulMatRoundedKernels), so a result depends
// on the batch size only through the order of float sums. The k-quants
// stay on their dots at every batch size where SIMD kernels run them
// (vec.DotQ*_KMat, faster than the GEMM there).

// Output tiles of the quantized product: qTileN weight rows (kept in cache)
// by qTileM activation rows.
const (
	qTileN = 16
	qTileM = 64
)

// qKernel is the quantized product of one weight type: the activations'
// type, its quantizer, and the row dot.
type qKernel struct {
	act   runtime.Type
	quant func([]float32, []byte) error
	dot   func(dst []float32, w []byte, stride int, y []byte, nb int) error
	// maxM is the most activation rows run on the integer dots; larger
	// products go to mulMatRoundedKernels.
	maxM int64
	// mat, when set, computes a whole output tile (weight rows by
	// activation rows) with the same bits as dot, reusing each weight
	// block for several activation rows.
	mat func(dst []float32, ldd int, w []byte, stride, nw int, y []byte, ys, ny, nb int) error
}

// quantMats are the tile products by weight type (read only).
var quantMats = map[runtime.Type]func([]float32, int, []byte, int, int, []byte, int, int, int) error{
	runtime.TypeQ2_K: vec.DotQ2_KMat, runtime.TypeQ3_K: vec.DotQ3_KMat,
	runtime.TypeQ4_K: vec.DotQ4_KMat, runtime.TypeQ5_K: vec.DotQ5_KMat, runtime.TypeQ6_K: vec.DotQ6_KMat,
}

// quantDots are the integer row dots by weight type (read only).
var quantDots = map[runtime.Type]func([]float32, []byte, int, []byte, int) error{
	runtime.TypeQ8_0: vec.DotQ8_0Rows, runtime.TypeQ4_0: vec.DotQ4_0Rows, runtime.TypeQ5_0: vec.DotQ5_0Rows,
	runtime.TypeQ4_1: vec.DotQ4_1Rows, runtime.TypeQ5_1: vec.DotQ5_1Rows,
	runtime.TypeQ2_K: vec.DotQ2_KRows, runtime.TypeQ3_K: vec.DotQ3_KRows, runtime.TypeQ4_K: vec.DotQ4_KRows,
	runtime.TypeQ5_K: vec.DotQ5_KRows, runtime.TypeQ6_K: vec.DotQ6_KRows,
}

// quantKernels is newQuantKernel of every type, made at start (the SIMD
// level is fixed then) and read only: every quantized MUL_MAT node, and
// every f32 one through mulMatRoundedKernels, looks its kernel up, and
// the two map lookups and the level tests were 2% of a small decoder's
// token.
var quantKernels = func() (t [runtime.TypeCount]struct {
	k  qKernel
	ok bool
}) {
	for typ := range runtime.TypeCount {
		t[typ].k, t[typ].ok = newQuantKernel(typ)
	}
	return t
}()

// quantKernel returns the product for weights of type typ, or false.
func quantKernel(typ runtime.Type) (qKernel, bool) {
	if typ < 0 || typ >= runtime.TypeCount {
		return qKernel{}, false
	}
	e := &quantKernels[typ]
	return e.k, e.ok
}

// newQuantKernel returns the product for weights of type typ, or false.
func newQuantKernel(typ runtime.Type) (qKernel, bool) {
	dot, ok := quantDots[typ]
	if !ok && (!typ.IsQuantized() || !cpukernels.IsRowType(typ)) {
		return qKernel{}, false
	}
	// The activations' quantizer follows from their type (ggml's
	// vec_dot_type): the CPU's q8_0/q8_1 quantizers, q8_K's reference one
	// (q8_0's and q8_K's from vec: the same bytes, with AVX-512).
	k := qKernel{act: cpukernels.VecDotType(typ), dot: dot, mat: quantMats[typ]}
	switch k.act {
	case runtime.TypeQ8_0:
		k.quant = vec.QuantizeRowQ8_0
	case runtime.TypeQ8_1:
		k.quant = cpukernels.QuantizeRowQ8_1CPU
	case runtime.TypeQ8_K:
		k.quant = vec.QuantizeRowQ8_K
	default:
		return qKernel{}, false
	}
	simd := vec.Implementation() != "go"
	switch typ {
	case runtime.TypeQ2_K, runtime.TypeQ3_K:
		switch {
		case vec.LowKQuantsTiles():
			k.maxM = math.MaxInt64 // as q4_K below
		case vec.LowKQuantsSIMD():
			// The AVX2 row kernels: 10–15% behind the widened f32 GEMM
			// at 256 activation rows, far ahead at 1–64
			// (BenchmarkMulMatQuant), as the AVX2 q4_0 dots.
			k.maxM = qMaxM
		default:
			k.maxM = 0 // as q5_0 below
		}
	case runtime.TypeQ5_0:
		// The AVX-512 or AVX2 dots where they run; else Go-only integer
		// dots, slower than dequantizing into the f32 GEMM at every size
		// (BenchmarkMulMatQuant); the rounded activations are the same
		// on both paths.
		if vec.QDotsSIMD() {
			k.maxM = qMaxM
		} else {
			k.maxM = 0
		}
	case runtime.TypeQ4_K, runtime.TypeQ5_K, runtime.TypeQ6_K:
		if !simd {
			break // as above, where the AVX2 kernels do not run
		}
		// The k-quant row kernels (whole rows in assembly, several
		// activation rows per weight load) beat widening the weights
		// into the f32 GEMM at every batch size measured (n = 256 and
		// 512: 2.7× at avx512, 1.3× at avx2, CPU time), as ggml's
		// vec_dot path does.
		k.maxM = math.MaxInt64
	default:
		// q4_0, q8_0, q4_1, q5_1: where the AVX-512 VNNI dots run they
		// serve every batch size, as the k-quants' do (at 256 activation
		// rows 162 GFLOP/s for q4_0 and 114 for q8_0 against the widened
		// f32 GEMM's 101 and 114: BenchmarkMulMatQuant, 1024×1024);
		// with the AVX2 or Go dots the GEMM is faster above qMaxM rows.
		k.maxM = qMaxM
		if vec.QDotsAVX512() {
			k.maxM = math.MaxInt64
		}
	}
	if dot == nil {
		// No integer dot for this type (the i-quants, ternary and fp4
		// types): every product goes through the GEMM on activations
		// rounded as ggml's vec_dot type rounds them.
		k.maxM = -1
	}
	return k, true
}

// mulMatQuantKernels returns the two phases of a MUL_MAT node t with
// quantized weights (bytes dm, weights am, activations bm): quant fills the
// scratch with the quantized activation rows (split by rows), dot computes
// the outputs (split by output tiles). It returns nils when the node is not
// of that kind: weights of a type quantKernel knows with dense rows, any
// float activations (at most qMaxM rows), an f32 result with dense rows.
func mulMatQuantKernels(t *runtime.Tensor, dm, am, bm []byte, sp *scratchPool, nth int) (quant, dot func(ith, nth int) error, qrows int64) {
	if quant, dot, qrows = mulMatQGemmKernels(t, dm, am, bm, sp, nth); dot != nil {
		return quant, dot, qrows
	}
	a, b := t.Src[0], t.Src[1]
	qk, ok := quantKernel(a.Type)
	if !ok || b.Ne[1] > qk.maxM || !a.IsContiguousRows() || !f32Layout(t, dm) || !cpukernels.IsFloat(b.Type) || a.Ne[0]%qk.act.BlockSize() != 0 {
		return nil, nil, 0
	}
	m, n, k := b.Ne[1], a.Ne[1], a.Ne[0]
	nb := int(k / qk.act.BlockSize())
	qrow := int64(qk.act.RowSize(k))
	rows := b.Ne[1] * b.Ne[2] * b.Ne[3]
	if int64(cap(sp.q)) < rows*qrow {
		sp.q = make([]byte, rows*qrow)
	}
	q := sp.q[:rows*qrow]
	dense := f32Layout(b, bm)
	if !dense || Repacked(a) {
		sp.prepare(nth)
	}
	// q4_0 rows where the packed AVX-512 dots run: each quantized
	// activation row is also packed for them (vec.PackQ8_0ForQ4), and the
	// rows' dots read the packed copy. q4_K at decode (one activation
	// row): the row packed by vec.PackQ8_KForQ4K, for the four-weight-row
	// kernel (same bits as unpacked), unless the weights are Repacked,
	// whose kernel reads the plain row. Repacked q8_0 at decode: the row
	// packed by vec.PackQ8_0ForQ8R for vec.DotQ8_0RowsRepacked.
	var qp []byte
	var pack func(dst, y []byte, nb int) error
	prow := int64(vec.Q4PackedBytes(nb))
	switch {
	case a.Type == runtime.TypeQ4_0 && vec.Q4PackedDots():
		pack = vec.PackQ8_0ForQ4
	case a.Type == runtime.TypeQ4_K && vec.Q4KPackedDots() && m == 1 && !Repacked(a):
		pack, prow = vec.PackQ8_KForQ4K, qrow
	case a.Type == runtime.TypeQ8_0 && Repacked(a) && m == 1:
		pack, prow = vec.PackQ8_0ForQ8R, int64(vec.Q8RPackedBytes(nb))
	}
	if pack != nil {
		if int64(cap(sp.qp)) < rows*prow {
			sp.qp = make([]byte, rows*prow)
		}
		qp = sp.qp[:rows*prow]
	}
	tm := (m + qTileM - 1) / qTileM
	perBatch := ((n + qTileN - 1) / qTileN) * tm
	// The job's parameters live in sp and its two phases are bound once
	// (closures per node would be two heap allocations per product).
	sp.mmQ = mulMatQJob{
		t: t, dm: dm, am: am, bm: bm, sp: sp, qk: qk, q: q, qp: qp, pack: pack, dense: dense, rep: Repacked(a),
		qrow: qrow, prow: prow, nb: nb, rows: rows, perBatch: perBatch, tm: tm,
		tiles: perBatch * b.Ne[2] * b.Ne[3],
	}
	if sp.mmQQuant == nil {
		sp.mmQQuant, sp.mmQDot = sp.mmQ.quant, sp.mmQ.dot
	}
	quant, dot = sp.mmQQuant, sp.mmQDot
	if d := qkGemmDot(t, dm, am, q, qrow, qk.mat, sp, nth); d != nil {
		dot = d
	}
	return quant, dot, rows
}

// mulMatQJob is one mulMatQuantKernels product: result t at dm, weights
// at am, activations at bm (dense: in t.Src[1]'s layout as f32), their
// quantized rows q (qrow bytes each; qp, if not nil, packed by pack in rows
// of prow bytes), nb blocks a row; tiles output tiles, perBatch a batch,
// tm of them across the activation rows.
type mulMatQJob struct {
	t                  *runtime.Tensor
	dm, am, bm, q, qp  []byte
	sp                 *scratchPool
	qk                 qKernel
	pack               func(dst, y []byte, nb int) error
	dense, rep         bool // rep: the weights are Repacked
	qrow, prow         int64
	nb                 int
	rows, perBatch, tm int64
	tiles              int64
}

// quant is worker ith's share of the activation rows' quantization.
func (j *mulMatQJob) quant(ith, nth int) error {
	t, bm, dense, sp, qk, q, qrow, qp, prow, pack, nb, rows := j.t, j.bm, j.dense, j.sp, j.qk, j.q, j.qrow, j.qp, j.prow, j.pack, j.nb, j.rows
	r0, r1 := cpukernels.RowRange(rows, ith, nth)
	for r := r0; r < r1; r++ {
		if err := quantRow(t, bm, dense, sp, ith, r, qk.quant, q[r*qrow:(r+1)*qrow]); err != nil {
			return err
		}
		if qp != nil {
			if err := pack(qp[r*prow:(r+1)*prow], q[r*qrow:(r+1)*qrow], nb); err != nil {
				return fmt.Errorf("tensor %s: %w", t, err)
			}
		}
	}
	return nil
}

// dot is worker ith's share of the output tiles.
func (j *mulMatQJob) dot(ith, nth int) error {
	t, dm, am, q, qp, qrow, prow, nb, qk := j.t, j.dm, j.am, j.q, j.qp, j.qrow, j.prow, j.nb, j.qk
	tiles, perBatch, tm := j.tiles, j.perBatch, j.tm
	a, b := t.Src[0], t.Src[1]
	m, n := b.Ne[1], a.Ne[1]
	r2, r3 := b.Ne[2]/a.Ne[2], b.Ne[3]/a.Ne[3]
	ldc := int64(t.Nb[1] / 4)
	stride := int(a.Nb[1])
	t0, t1 := cpukernels.RowRange(tiles, ith, nth)
	if m == 1 {
		return decodeDot(t, dm, am, q, qp, qrow, prow, nb, t0, t1, perBatch, qk, j.rep)
	}
	for tile := t0; tile < t1; tile++ {
		batch, rest := tile/perBatch, tile%perBatch
		i2, i3 := batch%b.Ne[2], batch/b.Ne[2]
		j0 := (rest / tm) * qTileN
		j1 := min(j0+qTileN, n)
		i0 := (rest % tm) * qTileM
		i1 := min(i0+qTileM, m)
		w := am[off3(a.Nb, j0, i2/r2, i3/r3):]
		if j.rep {
			w = j.sp.plainRows(ith, a, am, j0, j1-j0)
		}
		C := floats(dm, off3(t.Nb, 0, i2, i3), (m-1)*ldc+n)
		qb := q[(batch*m)*qrow:]
		if qk.mat != nil {
			if err := qk.mat(C[i0*ldc+j0:], int(ldc), w, stride, int(j1-j0), qb[i0*qrow:], int(qrow), int(i1-i0), nb); err != nil {
				return fmt.Errorf("tensor %s: %w", t, err)
			}
			continue
		}
		if qp != nil {
			pb := qp[(batch*m)*prow:]
			for i := i0; i < i1; i++ {
				if err := vec.DotQ4_0RowsPacked(C[i*ldc+j0:i*ldc+j1], w, stride, pb[i*prow:(i+1)*prow], nb); err != nil {
					return fmt.Errorf("tensor %s: %w", t, err)
				}
			}
			continue
		}
		for i := i0; i < i1; i++ {
			if err := qk.dot(C[i*ldc+j0:i*ldc+j1], w, stride, qb[i*qrow:(i+1)*qrow], nb); err != nil {
				return fmt.Errorf("tensor %s: %w", t, err)
			}
		}
	}
	return nil
}

// decodeDot is the dot phase of a decode product (one activation row per
// batch; q the quantized rows of qrow bytes, qp, if not nil, the same
// packed in rows of prow bytes): a worker's tiles t0..t1 of one batch are
// consecutive weight rows, so each batch's run is one call of the row dot
// rather than one per 16-row tile, which saves the per-call checks and
// slicing (about 2,000 calls a token for the output layer alone). The
// bits are the tiles': every call starts at a multiple of qTileN, so the
// kernels group the rows by four as before.
func decodeDot(t *runtime.Tensor, dm, am, q, qp []byte, qrow, prow int64, nb int, t0, t1, perBatch int64, qk qKernel, rep bool) error {
	a, b := t.Src[0], t.Src[1]
	r2, r3 := b.Ne[2]/a.Ne[2], b.Ne[3]/a.Ne[3]
	n, stride := a.Ne[1], int(a.Nb[1])
	for tile := t0; tile < t1; {
		batch := tile / perBatch
		end := min(t1, (batch+1)*perBatch)
		j0 := (tile - batch*perBatch) * qTileN
		j1 := min((end-batch*perBatch)*qTileN, n)
		i2, i3 := batch%b.Ne[2], batch/b.Ne[2]
		w := am[off3(a.Nb, j0, i2/r2, i3/r3):]
		C := floats(dm, off3(t.Nb, 0, i2, i3), n)[j0:j1]
		y := q[batch*qrow : (batch+1)*qrow]
		var err error
		switch {
		case rep && a.Type == runtime.TypeQ8_0:
			err = vec.DotQ8_0RowsRepacked(C, w, y, qp[batch*prow:(batch+1)*prow], nb)
		case rep && a.Type == runtime.TypeQ4_K:
			err = vec.DotQ4_KRowsRepacked(C, w, y, nb)
		case rep:
			err = vec.DotQ4_0RowsRepacked(C, w, qp[batch*prow:(batch+1)*prow], nb)
		case qp != nil && a.Type == runtime.TypeQ4_K:
			err = vec.DotQ4_KRowsPacked(C, w, stride, y, qp[batch*prow:(batch+1)*prow], nb)
		case qp != nil:
			err = vec.DotQ4_0RowsPacked(C, w, stride, qp[batch*prow:(batch+1)*prow], nb)
		case qk.mat != nil:
			err = qk.mat(C, len(C), w, stride, len(C), y, int(qrow), 1, nb)
		default:
			err = qk.dot(C, w, stride, y, nb)
		}
		if err != nil {
			return fmt.Errorf("tensor %s: %w", t, err)
		}
		tile = end
	}
	return nil
}

// quantRow quantizes activation row r (counted over dims 1..3) of MUL_MAT
// node t's src1 (bytes bm; dense: f32 rows read in place, else converted
// into worker ith's scratch) into y with quant.
func quantRow(t *runtime.Tensor, bm []byte, dense bool, sp *scratchPool, ith int, r int64, quant func([]float32, []byte) error, y []byte) error {
	b := t.Src[1]
	k := b.Ne[0]
	i1, i2, i3 := rowCoords(b.Ne, r)
	var x []float32
	if dense {
		x = floats(bm, off3(b.Nb, i1, i2, i3), k)
	} else {
		x = sp.get(ith, int(k))
		if err := cpukernels.LoadRow(b, bm, i1, i2, i3, x); err != nil {
			return fmt.Errorf("tensor %s: %w", t, err)
		}
	}
	if err := quant(x, y); err != nil {
		return fmt.Errorf("tensor %s: %w", t, err)
	}
	return nil
}
