package cpu

import (
	"encoding/binary"
	"fmt"
	"unsafe"

	cpukernels "github.com/gogml/gogml/internal/kernels/cpukernels"
	"github.com/gogml/gogml/internal/kernels/cpukernels/vec"
	"github.com/gogml/gogml/runtime"
)

// Fast paths tried before those of compute.go: CPY/DUP/CONT between f32
// and f16 on the CPU's conversion instructions, GET_ROWS of f32 and f16
// rows without a per-element conversion, and ROPE on f32 rows. Each worker
// takes a block of the result's rows; each gives the same bits as the
// reference kernels (NaN payloads aside, see vec.F32ToF16).

// fastKernelExtra returns a kernel for t from this file, or nil.
func fastKernelExtra(t *runtime.Tensor, dst []byte, src [][]byte, sp *scratchPool, nth int) func(ith, nth int) error {
	switch t.Op {
	case runtime.OpDup, runtime.OpCont, runtime.OpCpy:
		return convertKernel(t, dst, src[0])
	case runtime.OpGetRows:
		return getRowsFloatKernel(t, dst, src[0], src[1], sp)
	case runtime.OpRope:
		return ropeKernel(t, dst, src[0], src[1], sp, nth)
	case runtime.OpLightningIndexer:
		return lightningKernel(t, dst, src) // fast_seq.go
	case runtime.OpFlashAttnExt:
		return flashAttnKernel(t, dst, src) // fast_attn.go
	case runtime.OpGlu:
		return swigluKernel(t, dst, src)
	}
	return nil
}

// swigluKernel handles SWIGLU on f32 rows, split (the gate a second
// tensor) or fused (the two halves of one row, swapped or not): silu(x)·g
// in one pass over the rows (vec.SwiGLU: AVX-512 where the CPU has it,
// results bit for bit those of the SILU op's kernel and a multiply),
// where the reference calls a scalar function per element (ggml's CPU
// runs ggml_vec_swiglu_f32 here, one pass too). Other GLU functions and
// types take the reference kernel.
func swigluKernel(t *runtime.Tensor, dm []byte, src [][]byte) func(ith, nth int) error {
	a, g := t.Src[0], t.Src[1]
	if runtime.GluOp(t.OpParamI32(0)) != runtime.GluSwiglu || !f32Layout(t, dm) || !f32Layout(a, src[0]) {
		return nil
	}
	if g != nil && !f32Layout(g, src[1]) {
		return nil
	}
	nc := t.Ne[0]
	swapped := g == nil && t.OpParamI32(1) != 0
	// Split operands and result all dense: a worker's rows are one block
	// of each, done in one call (vec.SwiGLURows), not a call per row.
	dense := g != nil && runtime.SameShape(t, a) && runtime.SameShape(t, g) &&
		t.IsContiguous() && a.IsContiguous() && g.IsContiguous()
	rows := vec.SwiGLURows
	if 3*t.NBytes() >= swigluStreamBytes {
		rows = vec.SwiGLURowsStream
	}
	return func(ith, nth int) error {
		r0, r1 := cpukernels.RowRange(t.Nrows(), ith, nth)
		if r0 >= r1 {
			return nil
		}
		if dense {
			off, n := uint64(r0*nc)*4, (r1-r0)*nc
			rows(floats(dm, off, n), floats(src[0], off, n), floats(src[1], off, n), int(nc))
			return nil
		}
		// vec.SwiGLU reads x[i] and g[i] before it writes dst[i]: the
		// planner may place the result over the gate or x (in place).
		for r := r0; r < r1; r++ {
			i1, i2, i3 := rowCoords(t.Ne, r)
			var xs, gs []float32
			if g != nil {
				xs = floats(src[0], off3(a.Nb, i1, i2, i3), nc)
				gs = floats(src[1], off3(g.Nb, i1, i2, i3), nc)
			} else {
				row := floats(src[0], off3(a.Nb, i1, i2, i3), 2*nc)
				xs, gs = row[:nc], row[nc:]
				if swapped {
					xs, gs = gs, xs
				}
			}
			vec.SwiGLU(floats(dm, off3(t.Nb, i1, i2, i3), nc), xs, gs)
		}
		return nil
	}
}

// swigluStreamBytes is the size of a SWIGLU (operands and result) from
// which its rows are taken as coming from memory (vec.SwiGLURowsStream,
// prefetching a page ahead): between 12 MB (no faster on one worker, the
// rows mostly in the L3 cache) and 24 MB (faster), as measured in
// RATIONALE's "SWIGLU: a worker's rows in one call; a page-ahead
// prefetch above 16 MiB".
const swigluStreamBytes = 16 << 20

// halves views n uint16 values at byte off of b (off+2n ≤ len(b) and
// 2-byte alignment already known).
func halves(b []byte, off uint64, n int64) []uint16 {
	if n <= 0 {
		return nil
	}
	_ = b[off+2*uint64(n)-1]
	return unsafe.Slice((*uint16)(unsafe.Pointer(&b[off])), n)
}

// halfLayout is f32Layout for f16: dense rows, even strides, 2-byte
// aligned bytes.
func halfLayout(t *runtime.Tensor, b []byte) bool {
	if t.Type != runtime.TypeF16 || t.Nb[0] != 2 || len(b) == 0 {
		return false
	}
	for i := 1; i < runtime.MaxDims; i++ {
		if t.Nb[i]%2 != 0 {
			return false
		}
	}
	return uintptr(unsafe.Pointer(&b[0]))%2 == 0
}

// f32ToF16Row converts src into dst: the CPU's instructions for the bulk,
// cpukernels.F32ToF16 for the tail.
func f32ToF16Row(dst []uint16, src []float32) {
	for i := vec.F32ToF16(dst, src); i < len(src); i++ {
		dst[i] = cpukernels.F32ToF16(src[i])
	}
}

// f16ToF32Row converts src into dst as f32ToF16Row.
func f16ToF32Row(dst []float32, src []uint16) {
	for i := vec.F16ToF32(dst, src); i < len(src); i++ {
		dst[i] = cpukernels.F16ToF32(src[i])
	}
}

// convertKernel handles f32 → f16 and f16 → f32 copies where the source
// and result rows have the same length; rows may be strided.
func convertKernel(t *runtime.Tensor, dm, sm []byte) func(ith, nth int) error {
	s := t.Src[0]
	if s.Ne[0] != t.Ne[0] || t.Nelements() != s.Nelements() {
		return nil
	}
	var conv func(d, s []byte, do, so uint64, n int64)
	switch {
	case f32Layout(s, sm) && halfLayout(t, dm):
		conv = func(d, s []byte, do, so uint64, n int64) { f32ToF16Row(halves(d, do, n), floats(s, so, n)) }
	case halfLayout(s, sm) && f32Layout(t, dm):
		conv = func(d, s []byte, do, so uint64, n int64) { f16ToF32Row(floats(d, do, n), halves(s, so, n)) }
	default:
		return nil
	}
	ne0 := t.Ne[0]
	if t.IsContiguous() && s.IsContiguous() {
		// One call per worker over its block of rows.
		return func(ith, nth int) error {
			r0, r1 := cpukernels.RowRange(t.Nrows(), ith, nth)
			if r0 < r1 {
				conv(dm, sm, uint64(r0*ne0)*t.Type.Size(), uint64(r0*ne0)*s.Type.Size(), (r1-r0)*ne0)
			}
			return nil
		}
	}
	return rowsKernel(t, func(_ int, i1, i2, i3 int64) error {
		j1, j2, j3 := rowCoords(s.Ne, i1+t.Ne[1]*(i2+t.Ne[2]*i3))
		conv(dm, sm, off3(t.Nb, i1, i2, i3), off3(s.Nb, j1, j2, j3), ne0)
		return nil
	})
}

// getRowsFloatKernel gathers f32, f16 or q8_0 rows into f32 rows: a
// copy, or the CPU's vector conversions.
func getRowsFloatKernel(t *runtime.Tensor, dm, am, bm []byte, sp *scratchPool) func(ith, nth int) error {
	a, b := t.Src[0], t.Src[1]
	if !f32Layout(t, dm) || b.Type != runtime.TypeI32 || a.Ne[0] != t.Ne[0] {
		return nil
	}
	if !halfLayout(a, am) && !getRowsQ8(a) && !f32Layout(a, am) {
		return nil
	}
	return sp.nodeKernel(nodeJob{t: t, dm: dm, sm: am, xm: bm, fn: getRowsFloat})
}

// getRowsQ8 reports whether GET_ROWS converts a's rows as q8_0 blocks.
func getRowsQ8(a *runtime.Tensor) bool {
	return a.Type == runtime.TypeQ8_0 && a.IsContiguousRows() && a.Ne[0]%cpukernels.QK == 0
}

// getRowsFloat is worker ith's share of getRowsFloatKernel's rows.
func getRowsFloat(j *nodeJob, ith, nth int) error {
	t, dm, am, bm := j.t, j.dm, j.sm, j.xm
	a, b := t.Src[0], t.Src[1]
	f16, q8 := halfLayout(a, am), getRowsQ8(a)
	ne0 := t.Ne[0]
	rowBytes := a.Type.RowSize(ne0)
	r0, r1, i1, i2, i3 := workerRows(t, ith, nth)
	for r := r0; r < r1; r++ {
		if r > r0 {
			i1, i2, i3 = nextRow(t.Ne, i1, i2, i3)
		}
		idx := int64(int32(binary.LittleEndian.Uint32(bm[uint64(i1)*b.Nb[0]+off3(b.Nb, i2, i3, 0):])))
		if idx < 0 || idx >= a.Ne[1] {
			return fmt.Errorf("tensor %s: row index %d at (%d, %d, %d) of %q outside [0, %d): %w",
				t, idx, i1, i2, i3, b.Name, a.Ne[1], runtime.ErrOutOfBounds)
		}
		d := floats(dm, off3(t.Nb, i1, i2, i3), ne0)
		switch ro := off3(a.Nb, idx, i2, i3); {
		case q8:
			row := am[ro : ro+rowBytes]
			nb := vec.DequantQ8_0(d, row)
			if err := cpukernels.DequantizeRowQ8_0(row[nb*cpukernels.BlockQ8_0Size:], d[nb*cpukernels.QK:]); err != nil {
				return err
			}
		case f16:
			f16ToF32Row(d, halves(am, ro, ne0))
		default:
			copy(d, floats(am, ro, ne0))
		}
	}
	return nil
}

// ropeKernel rotates f32 rows (normal or NeoX mode) as the reference
// kernel does, with the same float32 operations in the same order: each
// worker computes the (cos, sin) cache once per position of its block
// of rows (RopeCache's values: cpukernels.RopeAngles, then vec.Sincosf
// for all the pairs at once), lays it out for vec.RopeNormalRows or
// vec.RopeNeoXRows, then rotates that position's rows (the heads)
// straight from the source into the result in one call.
func ropeKernel(t *runtime.Tensor, dm, sm, pm []byte, sp *scratchPool, nth int) func(ith, nth int) error {
	s, p := t.Src[0], t.Src[1]
	nDims, mode := t.OpParamI32(1), t.OpParamI32(2)
	if !f32Layout(t, dm) || !f32Layout(s, sm) || p.Type != runtime.TypeI32 || !runtime.SameShape(s, t) ||
		(mode != runtime.RopeNormal && mode != runtime.RopeNeoX) || nDims <= 0 || int64(nDims) > t.Ne[0] || nDims%2 != 0 {
		return nil
	}
	if t.Src[2] != nil || t.OpParamI32(15) != 0 {
		return nil // frequency factors or an offset (ggml_rope_set_offset): the reference kernel
	}
	sp.prepare(nth)
	return sp.nodeKernel(nodeJob{t: t, dm: dm, sm: sm, xm: pm, sp: sp, fn: ropeRows})
}

// ropeRows is worker ith's share of ropeKernel's rows; its (cos, sin)
// cache lives in the worker's scratch (sp.get), so a ROPE node allocates
// nothing.
func ropeRows(j *nodeJob, ith, nth int) error {
	t, dm, sm, pm := j.t, j.dm, j.sm, j.xm
	s, p := t.Src[0], t.Src[1]
	r0, r1 := cpukernels.RowRange(t.Nrows(), ith, nth)
	if r0 >= r1 {
		return nil
	}
	nDims, mode, nCtxOrig := t.OpParamI32(1), t.OpParamI32(2), t.OpParamI32(4)
	freqBase, freqScale := t.OpParamF32(5), t.OpParamF32(6)
	extFactor, attnFactor := t.OpParamF32(7), t.OpParamF32(8)
	betaFast, betaSlow := t.OpParamF32(9), t.OpParamF32(10)
	lo, hi := cpukernels.RopeCorrDims(nDims, nCtxOrig, freqBase, betaFast, betaSlow)
	thetaScale := cpukernels.RopeThetaScale(freqBase, nDims)
	ne0, nd := t.Ne[0], int(nDims)
	neox := mode == runtime.RopeNeoX
	// theta, scale, sinv, cosv: each pair's angle, scale, sine and
	// cosine (cpukernels.RopeAngles, vec.Sincosf: RopeCache's values);
	// c, sn: NeoX's cos and sin, or normal mode's (c, c) and (-s, s) per
	// pair.
	h := nd / 2
	buf := j.sp.get(ith, 4*h+2*nd)
	theta, scale, sinv, cosv := buf[:h], buf[h:2*h], buf[2*h:3*h], buf[3*h:4*h]
	c, sn := buf[4*h:4*h+nd], buf[4*h+nd:]
	if neox {
		c, sn = c[:h], sn[:h]
	}
	ne1 := t.Ne[1]
	ys, xs := int(t.Nb[1]/4), int(s.Nb[1]/4)
	// Each step takes the run of rows [r, e) of one position (one i2,
	// i3): one cache, one call of the vec kernel.
	for r := r0; r < r1; {
		i1, i2, i3 := rowCoords(t.Ne, r)
		e := min(r1, r+ne1-i1)
		rows := int(e - r)
		pos := int32(binary.LittleEndian.Uint32(pm[uint64(i2)*p.Nb[0]:]))
		cpukernels.RopeAngles(theta, scale, float32(pos), freqScale, extFactor, attnFactor, lo, hi, thetaScale)
		vec.Sincosf(sinv, cosv, theta)
		ropeLayout(c, sn, cosv, sinv, scale, neox)
		x := floats(sm, off3(s.Nb, i1, i2, i3), int64((rows-1)*xs)+ne0)
		y := floats(dm, off3(t.Nb, i1, i2, i3), int64((rows-1)*ys)+ne0)
		if neox {
			vec.RopeNeoXRows(y, x, ys, xs, rows, c, sn)
		} else {
			vec.RopeNormalRows(y, x, ys, xs, rows, c, sn)
		}
		if int64(nd) < ne0 {
			for k := range rows {
				copy(y[k*ys+nd:k*ys+int(ne0)], x[k*xs+nd:k*xs+int(ne0)])
			}
		}
		r = e
	}
	return nil
}

// ropeLayout lays each pair's cache (cos·scale, sin·scale), RopeCache's
// values, out for vec.RopeNeoXRows (neox: c[k], sn[k] of pair k) or
// vec.RopeNormalRows ((c, c) and (-s, s) at 2k).
func ropeLayout(c, sn, cos, sin, scale []float32, neox bool) {
	if neox {
		for k := range c {
			c[k], sn[k] = cos[k]*scale[k], sin[k]*scale[k]
		}
		return
	}
	for k := range cos {
		ck, sk := cos[k]*scale[k], sin[k]*scale[k]
		c[2*k], c[2*k+1] = ck, ck
		sn[2*k], sn[2*k+1] = -sk, sk
	}
}

// toFloatRow is cpukernels.ToFloat with the CPU's conversions for f16 and
// q8_0 rows (the same values): MUL_MAT widens f16 and q8_0 weight rows
// with it before the f32 GEMM.
func toFloatRow(typ runtime.Type, src []byte, dst []float32) error {
	switch {
	case typ == runtime.TypeF16 && len(src) >= 2*len(dst) && len(dst) > 0 && uintptr(unsafe.Pointer(&src[0]))%2 == 0:
		f16ToF32Row(dst, halves(src, 0, int64(len(dst))))
		return nil
	case typ == runtime.TypeQ8_0 && len(dst)%cpukernels.QK == 0:
		nb := vec.DequantQ8_0(dst, src)
		return cpukernels.DequantizeRowQ8_0(src[nb*cpukernels.BlockQ8_0Size:], dst[nb*cpukernels.QK:])
	}
	return cpukernels.ToFloat(typ, src, dst)
}
