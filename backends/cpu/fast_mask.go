package cpu

import (
	"math"

	"github.com/gogml/gogml/runtime"
)

// diagMaskInfKernel handles DIAG_MASK_INF on f32 rows: row i1 keeps its
// first nPast+i1+1 values (one copy, none in place) and the rest become
// -Inf, where the reference loads, tests and stores each element. Values
// are moved, never computed, so the bits are the reference's. A decoder
// without flash attention masks every head's scores of a prompt this way.
func diagMaskInfKernel(t *runtime.Tensor, dm, sm []byte, sp *scratchPool) func(ith, nth int) error {
	s := t.Src[0]
	if !f32Layout(t, dm) || !f32Layout(s, sm) || s.Ne != t.Ne {
		return nil
	}
	return sp.nodeKernel(nodeJob{t: t, dm: dm, sm: sm, row: diagMaskInfRow})
}

// diagMaskInfRow masks one row of DIAG_MASK_INF node j.t.
func diagMaskInfRow(j *nodeJob, i1, i2, i3 int64) error {
	t := j.t
	nPast, ne0 := int64(t.OpParamI32(0)), t.Ne[0]
	inf := float32(math.Inf(-1))
	d := floats(j.dm, off3(t.Nb, i1, i2, i3), ne0)
	keep := min(ne0, max(0, nPast+i1+1))
	copy(d[:keep], floats(j.sm, off3(t.Src[0].Nb, i1, i2, i3), ne0)[:keep])
	for i := keep; i < ne0; i++ {
		d[i] = inf
	}
	return nil
}
