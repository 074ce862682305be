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

// maxAttnHeadBytes caps the float32 copy of one K head and one V head
// that each worker of flashAttnKernel keeps; a larger KV cache goes to the
// reference kernel, which converts row by row.
const maxAttnHeadBytes = 64 << 20

// attnBlock is the most q rows of one head that flashAttnKernel scores
// together.
const attnBlock = 64

// attnDirectRows is the most q rows of one head for which flashAttnKernel
// reads f16 K and V rows in place (dots of the q row with each K row, then
// the weighted V rows added up) rather than converting the head to
// float32 and multiplying: converting (and transposing V) costs a pass
// over the whole head, which only pays back over many q rows.
const attnDirectRows = 2

// flashAttnKernel computes FLASH_ATTN_EXT with the reference kernel's
// formula (q rounded to k's vec_dot type, scale, softcap, slope-weighted
// mask, soft-max over the scores and the sink, weighted sum of v) in
// blocks of up to attnBlock q rows of one head: the scores are one GEMM
// with the head's K (converted to float32 once per head), the
// exponentials one pass, the weighted sum one GEMM with the head's V
// (kept transposed). The soft-max takes the row's maximum first where
// the reference updates it online; the results differ by float32
// rounding (test-backend-ops' bound is 5e-4).
func flashAttnKernel(t *runtime.Tensor, dm []byte, src [][]byte) func(ith, nth int) error {
	q, kt, v, mask, sinks := t.Src[0], t.Src[1], t.Src[2], t.Src[3], t.Src[4]
	dk, dv, nkv := q.Ne[0], v.Ne[0], kt.Ne[1]
	if !f32Layout(t, dm) || !f32Layout(q, src[0]) || (dk+dv+attnBlock)*nkv*4 > maxAttnHeadBytes {
		return nil
	}
	scale, maxBias, softcap := t.OpParamF32(0), t.OpParamF32(1), t.OpParamF32(2)
	if softcap != 0 {
		scale /= softcap
	}
	direct := attnDirect(kt, v, src[2])
	return func(ith, nth int) error {
		r0, r1 := cpukernels.RowRange(q.Nrows(), ith, nth)
		if r0 >= r1 {
			return nil
		}
		kc := headCache{t: kt, b: src[1], f: make([]float32, dk*nkv)}
		vc := headCache{t: v, b: src[2], f: make([]float32, dv*nkv), transposed: true}
		qb := make([]float32, attnBlock*dk)
		sb := make([]float32, attnBlock*nkv)
		ob := make([]float32, attnBlock*dv)
		var vrow []float32
		if direct {
			vrow = make([]float32, dv)
		}
		for r := r0; r < r1; {
			iq1, iq2, iq3 := rowCoords(q.Ne, r)
			n := min(r1-r, q.Ne[1]-iq1, attnBlock) // rows iq1.. of head (iq2, iq3)
			if direct && n <= attnDirectRows {
				ik2, ik3 := iq2/(q.Ne[2]/kt.Ne[2]), iq3/(q.Ne[3]/kt.Ne[3])
				iv2, iv3 := iq2/(q.Ne[2]/v.Ne[2]), iq3/(q.Ne[3]/v.Ne[3])
				slope := cpukernels.AlibiSlope(maxBias, iq2, q.Ne[2])
				sink := float32(math.Inf(-1))
				if sinks != nil {
					sink = floats(src[4], uint64(iq2)*sinks.Nb[0], 1)[0]
				}
				for i := range n {
					qrow := qb[:dk]
					copy(qrow, floats(src[0], off3(q.Nb, iq1+i, iq2, iq3), dk))
					if err := cpukernels.RoundActivations(kt.Type, qrow); err != nil {
						return fmt.Errorf("tensor %s: %w", t, err)
					}
					srow := sb[:nkv]
					if err := vec.DotF16Rows(srow, src[1][off3(kt.Nb, 0, ik2, ik3):], int(kt.Nb[1]), qrow, int(dk)); err != nil {
						return fmt.Errorf("tensor %s: %w", t, err)
					}
					var mrow []byte
					if mask != nil {
						mrow = src[3][off3(mask.Nb, iq1+i, iq2%mask.Ne[2], iq3%mask.Ne[3]):]
					}
					sum := attnWeights(srow, mrow, mask, scale, softcap, slope, sink)
					o := ob[:dv]
					clear(o)
					for j, w := range srow {
						if w == 0 {
							continue
						}
						f16ToF32Row(vrow, halves(src[2], off3(v.Nb, int64(j), iv2, iv3), dv))
						vec.ScaleAdd(o, vrow, w)
					}
					inv := float32(0)
					if sum != 0 {
						inv = 1 / sum
					}
					vec.Scale(floats(dm, off3(t.Nb, iq2, iq1+i, iq3), dv), o, inv)
				}
				r += n
				continue
			}
			ks, err := kc.head(iq2/(q.Ne[2]/kt.Ne[2]), iq3/(q.Ne[3]/kt.Ne[3]))
			if err != nil {
				return fmt.Errorf("tensor %s: %w", t, err)
			}
			vs, err := vc.head(iq2/(q.Ne[2]/v.Ne[2]), iq3/(q.Ne[3]/v.Ne[3]))
			if err != nil {
				return fmt.Errorf("tensor %s: %w", t, err)
			}
			for i := range n {
				row := qb[i*dk : (i+1)*dk]
				copy(row, floats(src[0], off3(q.Nb, iq1+i, iq2, iq3), dk))
				if err := cpukernels.RoundActivations(kt.Type, row); err != nil {
					return fmt.Errorf("tensor %s: %w", t, err)
				}
			}
			if err := vec.GemmNT(int(n), int(nkv), int(dk), qb, int(dk), ks, int(dk), sb, int(nkv)); err != nil {
				return fmt.Errorf("tensor %s: %w", t, err)
			}
			slope := cpukernels.AlibiSlope(maxBias, iq2, q.Ne[2])
			sink := float32(math.Inf(-1))
			if sinks != nil {
				sink = floats(src[4], uint64(iq2)*sinks.Nb[0], 1)[0]
			}
			sums := make([]float32, n)
			for i := range n {
				srow := sb[i*nkv : (i+1)*nkv]
				var mrow []byte
				if mask != nil {
					mrow = src[3][off3(mask.Nb, iq1+i, iq2%mask.Ne[2], iq3%mask.Ne[3]):]
				}
				sums[i] = attnWeights(srow, mrow, mask, scale, softcap, slope, sink)
			}
			if err := vec.GemmNT(int(n), int(dv), int(nkv), sb, int(nkv), vs, int(nkv), ob, int(dv)); err != nil {
				return fmt.Errorf("tensor %s: %w", t, err)
			}
			for i := range n {
				inv := float32(0)
				if sums[i] != 0 {
					inv = 1 / sums[i]
				}
				vec.Scale(floats(dm, off3(t.Nb, iq2, iq1+i, iq3), dv), ob[i*dv:(i+1)*dv], inv)
			}
			r += n
		}
		return nil
	}
}

// attnWeights turns the q·k products s of one q row into soft-max
// weights exp(score - max) in place (0 where the mask is -Inf) and
// returns their sum with the sink's exp(sink - max). A score is
// s·scale, then softcap·tanh of it when softcap is set, plus slope times
// the mask (f16 row mrow, nil without a mask).
func attnWeights(s []float32, mrow []byte, mask *runtime.Tensor, scale, softcap, slope, sink float32) float32 {
	ninf := float32(math.Inf(-1))
	m := sink
	for ic := range s {
		x := s[ic] * scale
		if softcap != 0 {
			x = softcap * float32(math.Tanh(float64(x)))
		}
		if mask != nil {
			mv := slope * cpukernels.F16ToF32(binary.LittleEndian.Uint16(mrow[uint64(ic)*mask.Nb[0]:]))
			if math.IsInf(float64(mv), -1) {
				s[ic] = ninf
				continue
			}
			x += mv
		}
		s[ic] = x
		m = max(m, x)
	}
	if math.IsInf(float64(m), -1) { // every key masked, no sink
		clear(s)
		return 0
	}
	sum := float32(vec.ExpSub(s, s, m))
	if !math.IsInf(float64(sink), -1) {
		sum += exp32(sink - m)
	}
	return sum
}

// headCache holds matrix (i2, i3) of K or V (tensor t, bytes b) as
// float32 rows (transposed: as columns), converted when a q row first
// needs another matrix.
type headCache struct {
	t          *runtime.Tensor
	b          []byte
	f          []float32
	transposed bool
	row        []float32
	i2, i3     int64
	ok         bool
}

// head returns the float32 elements of matrix (i2, i3).
func (c *headCache) head(i2, i3 int64) ([]float32, error) {
	if c.ok && c.i2 == i2 && c.i3 == i3 {
		return c.f, nil
	}
	c.ok = false
	ne0, ne1 := c.t.Ne[0], c.t.Ne[1]
	n := c.t.Type.RowSize(ne0)
	if c.transposed && c.row == nil {
		c.row = make([]float32, ne0)
	}
	for i1 := range ne1 {
		o := off3(c.t.Nb, i1, i2, i3)
		dst := c.row
		if !c.transposed {
			dst = c.f[i1*ne0 : (i1+1)*ne0]
		}
		if err := cpukernels.ToFloat(c.t.Type, c.b[o:o+n], dst); err != nil {
			return nil, err
		}
		if c.transposed {
			for i0, x := range dst {
				c.f[int64(i0)*ne1+i1] = x
			}
		}
	}
	c.i2, c.i3, c.ok = i2, i3, true
	return c.f, nil
}

// attnDirect says whether blocks of at most attnDirectRows q rows
// (decoding) read K and V (V's bytes vb) where they lie, instead of
// converting (and transposing) the whole head for a row or two: f16 rows
// with even strides and 2-byte aligned V bytes.
func attnDirect(kt, v *runtime.Tensor, vb []byte) bool {
	for _, x := range []*runtime.Tensor{kt, v} {
		if x.Type != runtime.TypeF16 || x.Nb[0] != 2 || x.Nb[1]%2 != 0 || x.Nb[2]%2 != 0 || x.Nb[3]%2 != 0 {
			return false
		}
	}
	return len(vb) > 0 && uintptr(unsafe.Pointer(&vb[0]))%2 == 0
}

// exp32 is exp rounded to float32, the reference kernels' expf.
func exp32(x float32) float32 { return float32(math.Exp(float64(x))) }
