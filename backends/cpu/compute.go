package cpu

import (
	"encoding/binary"
	"fmt"
	"math"
	"unsafe"

	cpukernels "github.com/gogml/gogml/internal/kernels/cpukernels"
	"github.com/gogml/gogml/internal/kernels/cpukernels/vec"
	"github.com/gogml/gogml/runtime"
)

// This file holds the CPU backend's fast paths: contiguous-row f32 cases of
// the hot ops, on the kernels of package vec. Anything they do not cover
// runs on the reference kernels.

// scratchPool holds one float32 scratch slice per worker, reused across the
// nodes of one Compute. prepare must run before the workers start; each
// worker then touches only its own slot.
type scratchPool struct {
	bufs [][]float32
	q    []byte // quantized activations of a MUL_MAT, shared by its workers
	qp   []byte // those rows packed for the q4_0 dots (vec.PackQ8_0ForQ4), shared
	// qg: those activations packed for the quantized GEMM tile (shared);
	// panels: each worker's packed weight panel (mulmatqgemm.go).
	qg     []byte
	panels [][]byte
	gemm   []vec.GemmBuf // each worker's f32 GEMM packing memory
	plain  [][]byte      // each worker's rows of repacked weights in ggml's layout (repack.go)
	// mem: the bytes of the node being computed (0) and of its sources.
	mem [runtime.MaxSrc + 1][]byte
	// mmB: the running mulMatKernelB product; mmBRun: its run method,
	// bound once (a method value allocates).
	mmB    mulMatBJob
	mmBRun func(ith, nth int) error
	// mmQ: the running mulMatQuantKernels product; mmQQuant, mmQDot:
	// its phases, bound once.
	mmQ              mulMatQJob
	mmQQuant, mmQDot func(ith, nth int) error
	// bin: the running binaryKernel node; binDense, binRows: its two
	// forms, bound once.
	bin               binaryJob
	binDense, binRows func(ith, nth int) error
	// node: the running nodeJob; nodeRun, nodeRows: its two forms, bound
	// once.
	node              nodeJob
	nodeRun, nodeRows func(ith, nth int) error
}

// nodeJob is a node whose kernel needs nothing beyond its tensor, the
// bytes of its result (dm) and first two sources (sm, xm), an f32 row
// operation op or block operation block, and a function of this package:
// run calls fn, rows calls
// row on each of the worker's rows. It lives in the scratch pool with its
// two forms bound once, as mulMatBJob does: a closure per node is a heap
// allocation, and the small decoder's token made about forty of them
// (RATIONALE.md, "No closure per node").
type nodeJob struct {
	t          *runtime.Tensor
	dm, sm, xm []byte
	op         func(d, a []float32)
	block      func(d, a []float32, cols int, p float32)
	sp         *scratchPool // the pool, for kernels with per-worker scratch (sp.get)
	fn         func(j *nodeJob, ith, nth int) error
	row        func(j *nodeJob, i1, i2, i3 int64) error
}

func (j *nodeJob) run(ith, nth int) error { return j.fn(j, ith, nth) }

func (j *nodeJob) rows(ith, nth int) error {
	r0, r1, i1, i2, i3 := workerRows(j.t, ith, nth)
	for r := r0; r < r1; r++ {
		if err := j.row(j, i1, i2, i3); err != nil {
			return err
		}
		i1, i2, i3 = nextRow(j.t.Ne, i1, i2, i3)
	}
	return nil
}

// nodeKernel makes p's node job j and returns its run form (fn set) or
// its rows form (row set).
func (p *scratchPool) nodeKernel(j nodeJob) func(ith, nth int) error {
	p.node = j
	if p.nodeRun == nil {
		p.nodeRun, p.nodeRows = p.node.run, p.node.rows
	}
	if j.fn != nil {
		return p.nodeRun
	}
	return p.nodeRows
}

// release drops what the last node left in p (its memory and tensors), so
// nothing stays referenced between Computes.
func (p *scratchPool) release() {
	clear(p.mem[:])
	p.mmB = mulMatBJob{}
	p.mmQ = mulMatQJob{}
	p.bin = binaryJob{}
	p.node = nodeJob{}
}

func (p *scratchPool) prepare(nth int) {
	for len(p.bufs) < nth {
		p.bufs = append(p.bufs, nil)
	}
	for len(p.panels) < nth {
		p.panels = append(p.panels, nil)
	}
	for len(p.gemm) < nth {
		p.gemm = append(p.gemm, vec.GemmBuf{})
	}
	for len(p.plain) < nth {
		p.plain = append(p.plain, nil)
	}
}

// panel returns worker ith's panel scratch of n bytes (prepare first).
func (p *scratchPool) panel(ith, n int) []byte {
	if len(p.panels[ith]) < n {
		p.panels[ith] = make([]byte, n)
	}
	return p.panels[ith][:n]
}

func (p *scratchPool) get(ith, n int) []float32 {
	if cap(p.bufs[ith]) < n {
		p.bufs[ith] = make([]float32, n)
	}
	return p.bufs[ith][:n]
}

// f32Layout reports whether t is f32 with dense rows, strides that are
// multiples of 4 and bytes b that start 4-byte aligned, so its rows can be
// viewed as []float32.
func f32Layout(t *runtime.Tensor, b []byte) bool {
	if t.Type != runtime.TypeF32 || t.Nb[0] != 4 || len(b) == 0 {
		return false
	}
	for i := 1; i < runtime.MaxDims; i++ {
		if t.Nb[i]%4 != 0 {
			return false
		}
	}
	return uintptr(unsafe.Pointer(&b[0]))%4 == 0
}

// floats views n float32 values at byte off of b (bounds already known to
// hold: off+4n ≤ len(b)).
func floats(b []byte, off uint64, n int64) []float32 {
	if n <= 0 {
		return nil
	}
	_ = b[off+4*uint64(n)-1]
	return unsafe.Slice((*float32)(unsafe.Pointer(&b[off])), n)
}

func off3(nb [4]uint64, i1, i2, i3 int64) uint64 {
	return uint64(i1)*nb[1] + uint64(i2)*nb[2] + uint64(i3)*nb[3]
}

func rowCoords(ne [4]int64, r int64) (i1, i2, i3 int64) {
	return r % ne[1], (r / ne[1]) % ne[2], r / (ne[1] * ne[2])
}

// workerRows returns worker ith's share r0..r1 of t's rows (of nth
// workers) and the coordinates of row r0 (zeros for an empty share).
func workerRows(t *runtime.Tensor, ith, nth int) (r0, r1, i1, i2, i3 int64) {
	r0, r1 = cpukernels.RowRange(t.Nrows(), ith, nth)
	if r0 < r1 {
		i1, i2, i3 = rowCoords(t.Ne, r0)
	}
	return r0, r1, i1, i2, i3
}

// nextRow moves the coordinates of a row of a tensor of shape ne to the
// next row's (rowCoords of r+1 from those of r, without divisions).
func nextRow(ne [4]int64, i1, i2, i3 int64) (int64, int64, int64) {
	if i1++; i1 < ne[1] {
		return i1, i2, i3
	}
	if i2++; i2 < ne[2] {
		return 0, i2, i3
	}
	return 0, 0, i3 + 1
}

// rowsKernel runs f on each of the worker's share of t's rows.
func rowsKernel(t *runtime.Tensor, f func(ith int, i1, i2, i3 int64) error) func(ith, nth int) error {
	return func(ith, nth int) error {
		r0, r1, i1, i2, i3 := workerRows(t, ith, nth)
		for r := r0; r < r1; r++ {
			if err := f(ith, i1, i2, i3); err != nil {
				return err
			}
			i1, i2, i3 = nextRow(t.Ne, i1, i2, i3)
		}
		return nil
	}
}

// fastKernel returns a fast kernel for node t (bytes dst, sources' bytes
// src), or nil when the reference must run.
func fastKernel(t *runtime.Tensor, dst []byte, src [][]byte, sp *scratchPool, nth int) func(ith, nth int) error {
	if f := fastKernelExtra(t, dst, src, sp, nth); f != nil { // fast_ops.go
		return f
	}
	s0 := t.Src[0]
	switch t.Op {
	case runtime.OpConv2D, runtime.OpConv3D:
		return convKernel(t, dst, src, sp, nth) // fast_conv.go
	case runtime.OpMulMat:
		return mulMatKernel(t, dst, src[0], src[1], sp, nth)
	case runtime.OpAdd, runtime.OpSub, runtime.OpMul, runtime.OpDiv:
		return binaryKernel(t, dst, src[0], src[1], sp)
	case runtime.OpDup, runtime.OpCont, runtime.OpCpy:
		if f := copyKernel(t, dst, src[0], sp, nth); f != nil {
			return f
		}
		return copyElemsKernel(t, dst, src[0], sp) // fast_copy.go
	case runtime.OpGetRows:
		return getRowsKernel(t, dst, src[0], src[1])
	case runtime.OpDiagMaskInf:
		return diagMaskInfKernel(t, dst, src[0], sp) // fast_mask.go
	case runtime.OpSoftMax:
		return softMaxKernel(t, dst, src[0], src[1], sp, nth)
	}
	if s0 == nil || !f32Layout(t, dst) || !f32Layout(s0, src[0]) { // ARANGE has no source
		return nil
	}
	if t.Op == runtime.OpRmsNorm && t.IsContiguous() && s0.IsContiguous() {
		return sp.nodeKernel(nodeJob{t: t, dm: dst, sm: src[0], block: vec.RMSNormRows, fn: blockRows})
	}
	var op func(d, a []float32)
	switch t.Op {
	case runtime.OpScale:
		if t.OpParamF32(1) != 0 { // ggml_scale_bias: the reference adds b
			return nil
		}
		s := t.OpParamF32(0)
		op = func(d, a []float32) { vec.Scale(d, a, s) }
	case runtime.OpAdd1:
		b := t.Src[1]
		if b.Type != runtime.TypeF32 {
			return nil
		}
		s := math.Float32frombits(binary.LittleEndian.Uint32(src[1]))
		op = func(d, a []float32) { vec.AddScalar(d, a, s) }
	case runtime.OpSqr:
		op = func(d, a []float32) { vec.Mul(d, a, a) }
	case runtime.OpUnary:
		switch t.UnaryOp() {
		case runtime.UnarySilu:
			op = vec.SiLU
		case runtime.UnaryExp:
			op = vec.Exp
		default:
			return nil
		}
	case runtime.OpRmsNorm:
		eps := t.OpParamF32(0)
		op = func(d, a []float32) {
			mean := float32(vec.SumSq(a) / float64(len(a)))
			vec.Scale(d, a, float32(1/math.Sqrt(float64(mean+eps))))
		}
	case runtime.OpNorm:
		eps := t.OpParamF32(0)
		op = func(d, a []float32) {
			mean := float32(vec.Sum64(a) / float64(len(a)))
			vec.AddScalar(d, a, -mean)
			variance := float32(vec.SumSq(d) / float64(len(d)))
			vec.Scale(d, d, float32(1/math.Sqrt(float64(variance+eps))))
		}
	default:
		return nil
	}
	return sp.nodeKernel(nodeJob{t: t, dm: dst, sm: src[0], op: op, row: opRow})
}

// blockRows is worker ith's block of the rows of a contiguous node and
// source in one call of j.block, its parameter the node's first float
// (RMS_NORM's eps, soft_max's scale).
func blockRows(j *nodeJob, ith, nth int) error {
	t := j.t
	ne0 := t.Ne[0]
	r0, r1 := cpukernels.RowRange(t.Nrows(), ith, nth)
	if r0 < r1 {
		o, n := uint64(r0*ne0)*4, (r1-r0)*ne0
		j.block(floats(j.dm, o, n), floats(j.sm, o, n), int(ne0), t.OpParamF32(0))
	}
	return nil
}

// opRow applies j.op to one row of the result from the same row of the
// source.
func opRow(j *nodeJob, i1, i2, i3 int64) error {
	t, ne0 := j.t, j.t.Ne[0]
	j.op(floats(j.dm, off3(t.Nb, i1, i2, i3), ne0), floats(j.sm, off3(t.Src[0].Nb, i1, i2, i3), ne0))
	return nil
}

// binaryKernel handles ADD, SUB, MUL, DIV on f32 rows, with b's row
// repeated along the row.
func binaryKernel(t *runtime.Tensor, dst, am, bm []byte, sp *scratchPool) func(ith, nth int) error {
	a, b := t.Src[0], t.Src[1]
	if !f32Layout(t, dst) || !f32Layout(a, am) || !f32Layout(b, bm) {
		return nil
	}
	var op func(d, x, y []float32)
	switch t.Op {
	case runtime.OpAdd:
		op = vec.Add
	case runtime.OpSub:
		op = vec.Sub
	case runtime.OpMul:
		op = vec.Mul
	default:
		op = vec.Div
	}
	// The job lives in sp and its two forms are bound once (a closure per
	// node would be a heap allocation per add or multiply).
	sp.bin = binaryJob{t: t, dst: dst, am: am, bm: bm, op: op}
	if sp.binDense == nil {
		sp.binDense, sp.binRows = sp.bin.dense, sp.bin.rows
	}
	if t.IsContiguous() && a.IsContiguous() && b.IsContiguous() && runtime.SameShape(a, t) && runtime.SameShape(b, t) {
		return sp.binDense
	}
	return sp.binRows
}

// binaryJob is one binaryKernel node: t = op(a, b) over the bytes dst,
// am, bm.
type binaryJob struct {
	t           *runtime.Tensor
	dst, am, bm []byte
	op          func(d, x, y []float32)
}

// dense is worker ith's share of a node whose three tensors are dense
// and of one shape: one call per worker over its whole block of rows, so
// that vec sees the block's size (large outputs use streaming stores).
func (j *binaryJob) dense(ith, nth int) error {
	t := j.t
	ne0 := t.Ne[0]
	r0, r1 := cpukernels.RowRange(t.Nrows(), ith, nth)
	if r0 < r1 {
		o, n := uint64(r0*ne0)*4, (r1-r0)*ne0
		j.op(floats(j.dst, o, n), floats(j.am, o, n), floats(j.bm, o, n))
	}
	return nil
}

// rows is worker ith's share of the rows otherwise, b broadcast over a.
func (j *binaryJob) rows(ith, nth int) error {
	t, dst, am, bm, op := j.t, j.dst, j.am, j.bm, j.op
	a, b := t.Src[0], t.Src[1]
	ne0, bne0 := t.Ne[0], b.Ne[0]
	r0, r1, i1, i2, i3 := workerRows(t, ith, nth)
	for r := r0; r < r1; r++ {
		if r > r0 {
			i1, i2, i3 = nextRow(t.Ne, i1, i2, i3)
		}
		d := floats(dst, off3(t.Nb, i1, i2, i3), ne0)
		x := floats(am, off3(a.Nb, i1, i2, i3), ne0)
		y := floats(bm, off3(b.Nb, i1%b.Ne[1], i2%b.Ne[2], i3%b.Ne[3]), bne0)
		if bne0 == ne0 {
			op(d, x, y)
			continue
		}
		if bne0 == 1 && t.Op != runtime.OpDiv {
			s := y[0]
			switch t.Op {
			case runtime.OpAdd:
				vec.AddScalar(d, x, s)
			case runtime.OpSub:
				vec.AddScalar(d, x, -s)
			default:
				vec.Scale(d, x, s)
			}
			continue
		}
		for j := int64(0); j < ne0; j += bne0 {
			op(d[j:j+bne0], x[j:j+bne0], y)
		}
	}
	return nil
}

// mulMatKernel computes MUL_MAT with vec's GEMM: each result matrix is
// b·aᵀ. f32 weights are used in place; other weight types are dequantized
// a few rows at a time into per-worker scratch, the workers splitting a's
// rows.
func mulMatKernel(t *runtime.Tensor, dm, am, bm []byte, sp *scratchPool, nth int) func(ith, nth int) error {
	if b := t.Src[1]; !f32Layout(b, bm) || cpukernels.VecDotType(t.Src[0].Type) != runtime.TypeF32 {
		return nil // activations to round first: mulMatHalfKernels, mulMatQuantKernels
	}
	return mulMatKernelB(t, dm, am, bm, t.Src[1].Nb, sp, nth)
}

// mulMatKernelB is mulMatKernel with the activations (f32, dense rows) at
// bm with strides bnb in place of t.Src[1]'s. The job's parameters live in
// sp (one MUL_MAT runs at a time per pool) and the returned function is
// bound to them once: a closure per node would be a heap allocation per
// matrix product, a measurable part of a small decoder's token.
func mulMatKernelB(t *runtime.Tensor, dm, am, bm []byte, bnb [4]uint64, sp *scratchPool, nth int) func(ith, nth int) error {
	a := t.Src[0]
	if !f32Layout(t, dm) || !a.IsContiguousRows() || !cpukernels.IsRowType(a.Type) {
		return nil
	}
	if a.Type == runtime.TypeF32 && !f32Layout(a, am) {
		return nil
	}
	k := a.Ne[0]
	sp.prepare(nth)
	sp.mmB = mulMatBJob{
		t: t, dm: dm, am: am, bm: bm, bnb: bnb, sp: sp,
		lda: int64(bnb[1] / 4), ldc: int64(t.Nb[1] / 4),
		chunk:    max(16, min(64, 16384/k)), // at least one full 16-wide GEMM panel
		rowBytes: a.Type.RowSize(k),
	}
	if sp.mmBRun == nil {
		sp.mmBRun = sp.mmB.run
	}
	return sp.mmBRun
}

// mulMatBJob is one mulMatKernelB product: the result t at dm, the
// weights at am, the activations at bm with strides bnb.
type mulMatBJob struct {
	t          *runtime.Tensor
	dm, am, bm []byte
	bnb        [4]uint64
	sp         *scratchPool
	lda, ldc   int64
	chunk      int64
	rowBytes   uint64
}

// run is worker ith's share of the product.
func (j *mulMatBJob) run(ith, nth int) error {
	t, dm, am, bm, bnb, sp := j.t, j.dm, j.am, j.bm, j.bnb, j.sp
	a, b := t.Src[0], t.Src[1]
	m, n, k := b.Ne[1], a.Ne[1], a.Ne[0]
	r2, r3 := b.Ne[2]/a.Ne[2], b.Ne[3]/a.Ne[3]
	lda, ldc, chunk, rowBytes := j.lda, j.ldc, j.chunk, j.rowBytes
	for i3 := int64(0); i3 < b.Ne[3]; i3++ {
		for i2 := int64(0); i2 < b.Ne[2]; i2++ {
			A := floats(bm, off3(bnb, 0, i2, i3), (m-1)*lda+k)
			C := floats(dm, off3(t.Nb, 0, i2, i3), (m-1)*ldc+n)
			aoff := off3(a.Nb, 0, i2/r2, i3/r3)
			if a.Type == runtime.TypeF32 {
				ldb := int64(a.Nb[1] / 4)
				B := floats(am, aoff, (n-1)*ldb+k)
				if err := vec.GemmNTPartBuf(&sp.gemm[ith], ith, nth, int(m), int(n), int(k), A, int(lda), B, int(ldb), C, int(ldc)); err != nil {
					return fmt.Errorf("tensor %s: %w", t, err)
				}
				continue
			}
			j0, j1 := cpukernels.RowRange(n, ith, nth)
			for jc := j0; jc < j1; jc += chunk {
				cn := min(chunk, j1-jc)
				S := sp.get(ith, int(cn*k))
				for j := int64(0); j < cn; j++ {
					ro := aoff + uint64(jc+j)*a.Nb[1]
					if err := toFloatRow(a.Type, am[ro:ro+rowBytes], S[j*k:(j+1)*k]); err != nil { // toFloatRow: fast_ops.go
						return fmt.Errorf("tensor %s: %w", t, err)
					}
				}
				if err := vec.GemmNTBuf(&sp.gemm[ith], int(m), int(cn), int(k), A, int(lda), S, int(k), C[jc:], int(ldc)); err != nil {
					return fmt.Errorf("tensor %s: %w", t, err)
				}
			}
		}
	}
	return nil
}

// copyKernel handles DUP, CONT and CPY when source and result rows have the
// same length and are dense: row r of the result is row r of the source,
// converted through float32 (or copied when the types match).
func copyKernel(t *runtime.Tensor, dm, sm []byte, sp *scratchPool, nth int) func(ith, nth int) error {
	s := t.Src[0]
	if s.Ne[0] != t.Ne[0] || !s.IsContiguousRows() || !t.IsContiguousRows() {
		return nil
	}
	same := s.Type == t.Type
	if !same && (!cpukernels.IsRowType(s.Type) || !cpukernels.CanQuantize(t.Type)) {
		return nil
	}
	sn, dn := s.Type.RowSize(s.Ne[0]), t.Type.RowSize(t.Ne[0])
	if !same {
		sp.prepare(nth)
	}
	return rowsKernel(t, func(ith int, i1, i2, i3 int64) error {
		j1, j2, j3 := rowCoords(s.Ne, i1+t.Ne[1]*(i2+t.Ne[2]*i3))
		so, do := off3(s.Nb, j1, j2, j3), off3(t.Nb, i1, i2, i3)
		if same {
			copy(dm[do:do+dn], sm[so:so+sn])
			return nil
		}
		row := sp.get(ith, int(t.Ne[0]))
		if err := cpukernels.ToFloat(s.Type, sm[so:so+sn], row); err != nil {
			return fmt.Errorf("tensor %s: %w", t, err)
		}
		if err := cpukernels.FromFloatCPU(t.Type, row, dm[do:do+dn]); err != nil {
			return fmt.Errorf("tensor %s: %w", t, err)
		}
		return nil
	})
}

// getRowsKernel gathers dense rows of a (any row type) into f32 rows.
func getRowsKernel(t *runtime.Tensor, dm, am, bm []byte) func(ith, nth int) error {
	a, b := t.Src[0], t.Src[1]
	if !f32Layout(t, dm) || !a.IsContiguousRows() || !cpukernels.IsRowType(a.Type) {
		return nil
	}
	rowBytes := a.Type.RowSize(a.Ne[0])
	return rowsKernel(t, func(_ int, i1, i2, i3 int64) error {
		idx := int64(int32(binary.LittleEndian.Uint32(bm[uint64(i1)*b.Nb[0]+off3(b.Nb, i2, i3, 0):])))
		if idx < 0 || idx >= a.Ne[1] {
			return fmt.Errorf("tensor %s: row index %d at (%d, %d, %d) of %q outside [0, %d): %w",
				t, idx, i1, i2, i3, b.Name, a.Ne[1], runtime.ErrOutOfBounds)
		}
		ro := off3(a.Nb, idx, i2, i3)
		if err := cpukernels.ToFloat(a.Type, am[ro:ro+rowBytes], floats(dm, off3(t.Nb, i1, i2, i3), t.Ne[0])); err != nil {
			return fmt.Errorf("tensor %s: %w", t, err)
		}
		return nil
	})
}

// softMaxKernel computes soft_max_ext on f32 rows: scale into scratch, add
// the slope-weighted mask row, then exp(w - max) normalized.
func softMaxKernel(t *runtime.Tensor, dm, sm, mm []byte, sp *scratchPool, nth int) func(ith, nth int) error {
	s, m := t.Src[0], t.Src[1]
	if !f32Layout(t, dm) || !f32Layout(s, sm) || t.Src[2] != nil { // sinks: the reference
		return nil
	}
	if m != nil && !(f32Layout(m, mm) || (m.Type == runtime.TypeF16 && m.IsContiguousRows())) {
		return nil
	}
	scale, maxBias := t.OpParamF32(0), t.OpParamF32(1)
	ne0 := t.Ne[0]
	sp.prepare(nth)
	if m == nil && t.IsContiguous() && s.IsContiguous() {
		// One call per worker over its block of rows (prefetching the next
		// row, streaming stores for large blocks).
		return sp.nodeKernel(nodeJob{t: t, dm: dm, sm: sm, block: vec.SoftMaxRows, fn: blockRows})
	}
	return rowsKernel(t, func(ith int, i1, i2, i3 int64) error {
		var mrow []float32
		slope := float32(1)
		if m != nil {
			mo := off3(m.Nb, i1, i2%m.Ne[2], i3%m.Ne[3])
			if m.Type == runtime.TypeF32 {
				mrow = floats(mm, mo, ne0)
			} else {
				mrow = sp.get(ith, int(ne0))
				for i := range mrow {
					mrow[i] = cpukernels.F16ToF32(binary.LittleEndian.Uint16(mm[mo+2*uint64(i):]))
				}
			}
			slope = cpukernels.AlibiSlope(maxBias, i2, t.Ne[2])
		}
		vec.SoftMaxRow(floats(dm, off3(t.Nb, i1, i2, i3), ne0), floats(sm, off3(s.Nb, i1, i2, i3), ne0), mrow, scale, slope)
		return nil
	})
}
