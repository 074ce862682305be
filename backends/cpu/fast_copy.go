package cpu

import (
	"encoding/binary"

	cpukernels "github.com/gogml/gogml/internal/kernels/cpukernels"
	"github.com/gogml/gogml/runtime"
)

// copyElemsKernel handles the DUP/CONT/CPY nodes copyKernel leaves (rows
// of different lengths, or a source without dense rows) when source and
// result have the same element type of one element per block (f32, f16,
// bf16, the integers): the copies of a decoder's attention, the
// CONT of a permuted head-major result into {heads·dim, tokens} rows and
// the CPY of transposed values into the cache. Like ggml's dup_same_cont
// and the element loop of its dup_f32, it moves bytes, so the result is
// the reference's bit for bit; the reference computes each element's
// four coordinates from its flat index, about 20× slower.
//
//   - A contiguous result with a source of dense rows: source row r goes
//     to the result's bytes from r·ne0·size on, one copy per row.
//   - Source and result of the same shape and a result of dense rows: each
//     result row gathers its elements from the source at the source's
//     element stride.
//
// Anything else is left to the reference (nil).
func copyElemsKernel(t *runtime.Tensor, dm, sm []byte, sp *scratchPool) func(ith, nth int) error {
	s := t.Src[0]
	if s.Type != t.Type || t.Type.BlockSize() != 1 || t.Nelements() != s.Nelements() {
		return nil
	}
	es := t.Type.Size()
	if t.IsContiguous() && s.Nb[0] == es {
		return sp.nodeKernel(nodeJob{t: t, dm: dm, sm: sm, fn: copyDenseRows})
	}
	if s.Ne != t.Ne || t.Nb[0] != es {
		return nil
	}
	ne0, nb0 := uint64(t.Ne[0]), s.Nb[0]
	if ne0 == 1 && es == 4 {
		// Rows of one element (a token's values into the transposed value
		// cache): a strided copy along the rows, no call per row.
		return sp.nodeKernel(nodeJob{t: t, dm: dm, sm: sm, fn: copyElems32})
	}
	return rowsKernel(t, func(_ int, i1, i2, i3 int64) error {
		so, do := off3(s.Nb, i1, i2, i3), off3(t.Nb, i1, i2, i3)
		if ne0 == 0 {
			return nil
		}
		d := dm[do : do+ne0*es]
		_ = sm[so+(ne0-1)*nb0+es-1]
		switch es {
		case 4:
			for i := range ne0 {
				binary.LittleEndian.PutUint32(d[4*i:], binary.LittleEndian.Uint32(sm[so+i*nb0:]))
			}
		case 2:
			for i := range ne0 {
				binary.LittleEndian.PutUint16(d[2*i:], binary.LittleEndian.Uint16(sm[so+i*nb0:]))
			}
		default:
			for i := range ne0 {
				copy(d[i*es:(i+1)*es], sm[so+i*nb0:])
			}
		}
		return nil
	})
}

// copyDenseRows is worker ith's share of a copy into a contiguous result
// from a source of the same type with dense rows: a row at a time, in
// the source's row order.
func copyDenseRows(j *nodeJob, ith, nth int) error {
	s := j.t.Src[0]
	n := uint64(s.Ne[0]) * j.t.Type.Size()
	r0, r1 := cpukernels.RowRange(s.Nrows(), ith, nth)
	for r := r0; r < r1; r++ {
		j1, j2, j3 := rowCoords(s.Ne, r)
		so, do := off3(s.Nb, j1, j2, j3), uint64(r)*n
		copy(j.dm[do:do+n], j.sm[so:so+n])
	}
	return nil
}

// copyElems32 is worker ith's share of a copy of rows of one 4-byte
// element: along each run of rows of one (i2, i3), source and result
// advance by their row strides, no call per element (a call and two
// offset computations per element were most of the copy of a token's 128
// values into the transposed value cache).
func copyElems32(j *nodeJob, ith, nth int) error {
	t, s := j.t, j.t.Src[0]
	r0, r1 := cpukernels.RowRange(t.Nrows(), ith, nth)
	for r := r0; r < r1; {
		i1, i2, i3 := rowCoords(t.Ne, r)
		n := min(r1-r, t.Ne[1]-i1) // the rows left in this (i2, i3)
		so, do := off3(s.Nb, i1, i2, i3), off3(t.Nb, i1, i2, i3)
		for range n {
			binary.LittleEndian.PutUint32(j.dm[do:do+4], binary.LittleEndian.Uint32(j.sm[so:so+4]))
			so += s.Nb[1]
			do += t.Nb[1]
		}
		r += n
	}
	return nil
}
