package cpu

import (
	"encoding/binary"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
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
	q, kt, v := t.Src[0], t.Src[1], t.Src[2]
	dk, dv, nkv := q.Ne[0], v.Ne[0], kt.Ne[1]
	if !f32Layout(t, dm) || !f32Layout(q, src[0]) {
		return nil
	}
	if nkv <= 0 || kt.Ne[2] <= 0 || v.Ne[2] <= 0 || kt.Ne[3] <= 0 || v.Ne[3] <= 0 || q.Ne[2]%kt.Ne[2] != 0 || q.Ne[2]%v.Ne[2] != 0 ||
		q.Ne[3]%kt.Ne[3] != 0 || q.Ne[3]%v.Ne[3] != 0 {
		return nil // no keys, or heads that do not map onto K's and V's: the reference's case
	}
	direct := attnDirect(kt, v, src[2])
	if direct && q.Ne[1] <= attnDirectRows {
		return flashAttnDecode(t, dm, src)
	}
	if (dk+dv+attnBlock)*nkv*4 > maxAttnHeadBytes {
		return nil
	}
	a := newAttnDecode(t, dm, src)
	return func(ith, nth int) error {
		r0, r1 := cpukernels.RowRange(q.Nrows(), ith, nth)
		if r0 >= r1 {
			return nil
		}
		kc := headCache{t: kt, b: src[1], n: dk * nkv}
		vc := headCache{t: v, b: src[2], n: dv * nkv, transposed: true}
		qb := make([]float32, attnBlock*dk)
		sb := make([]float32, attnBlock*nkv)
		ob := make([]float32, attnBlock*dv)
		var sc *attnScratch // the direct path's, made when first needed
		mb := make([]float32, nkv)
		for r := r0; r < r1; {
			iq1, iq2, iq3 := rowCoords(q.Ne, r)
			n := min(r1-r, q.Ne[1]-iq1, attnBlock) // rows iq1.. of head (iq2, iq3)
			if direct && n <= attnDirectRows {
				// A row or two at the edge of a worker's range: read K and
				// V in place rather than converting the head for them.
				if sc == nil {
					sc = newAttnScratch(1, dk, nkv, dv)
				}
				for i := range n {
					if err := a.part(attnUnit{iq1: iq1 + i, iq2: iq2, iq3: iq3, heads: 1, c1: nkv}, sc, sc.o, nil); err != nil {
						return err
					}
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
			sums := make([]float32, n)
			for i := range n {
				sums[i], _ = a.weights(sb[i*nkv:(i+1)*nkv], iq1+i, iq2, iq3, 0, true, mb)
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
// returns their sum with the sink's exp(sink - max), and max (the largest
// score or the sink; -Inf when every key is masked and there is no sink,
// the weights and the sum then 0). A score is s·scale, then
// softcap·tanh of it when softcap is set, plus slope times the mask (f16
// row mrow, nil without a mask).
func attnWeights(s []float32, mrow []byte, mask *runtime.Tensor, scale, softcap, slope, sink float32) (sum, m float32) {
	ninf := float32(math.Inf(-1))
	m = sink
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
	return expWeights(s, m, sink)
}

// expWeights sets s[i] = exp(s[i] - m) (m: the largest score or the sink)
// and returns their sum with the sink's exp(sink - m), and m; with m
// -Inf (every key masked, no sink) the weights and the sum are 0.
func expWeights(s []float32, m, sink float32) (sum, mx float32) {
	if math.IsInf(float64(m), -1) {
		clear(s)
		return 0, m
	}
	sum = float32(vec.ExpSub(s, s, m))
	if !math.IsInf(float64(sink), -1) {
		sum += exp32(sink - m)
	}
	return sum, m
}

// headCache holds matrix (i2, i3) of K or V (tensor t, bytes b) as
// float32 rows (transposed: as columns), converted when a q row first
// needs another matrix.
type headCache struct {
	t          *runtime.Tensor
	b          []byte
	n          int64     // elements of one matrix
	f          []float32 // made on the first call of head
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
	if c.f == nil {
		c.f = make([]float32, c.n)
	}
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

// attnDecode holds what every unit of FLASH_ATTN_EXT's direct decode
// path needs: the node, its operands' bytes and its parameters.
type attnDecode struct {
	t, q, k, v, mask, sinks *runtime.Tensor
	dm                      []byte
	src                     [][]byte
	scale, maxBias, softcap float32
	maskHalves              bool // the mask's rows are 2-byte aligned halves
}

func newAttnDecode(t *runtime.Tensor, dm []byte, src [][]byte) *attnDecode {
	a := &attnDecode{t: t, q: t.Src[0], k: t.Src[1], v: t.Src[2], mask: t.Src[3], sinks: t.Src[4], dm: dm, src: src,
		scale: t.OpParamF32(0), maxBias: t.OpParamF32(1), softcap: t.OpParamF32(2)}
	if a.softcap != 0 {
		a.scale /= a.softcap
	}
	a.maskHalves = a.mask != nil && halfLayout(a.mask, src[3])
	return a
}

// attnUnit is one piece of decode work: q row iq1 of heads iq2 ..
// iq2+heads-1 (which share one K head and one V head) of batch iq3,
// against keys c0 .. c1-1.
type attnUnit struct {
	iq1, iq2, iq3 int64
	heads         int64
	c0, c1        int64
}

// weights turns the scores s (keys c0.. of q row iq1, head iq2, batch
// iq3) into soft-max weights, counting the head's sink when withSink is
// set, and returns their sum and maximum. Without softcap, and with an
// f16 mask whose rows are 2-byte aligned (maskHalves) or none, the mask
// row is widened into mb (len(s) floats) and the scores scaled and masked
// by vector kernels; otherwise attnWeights, one element at a time.
func (a *attnDecode) weights(s []float32, iq1, iq2, iq3, c0 int64, withSink bool, mb []float32) (sum, m float32) {
	slope := cpukernels.AlibiSlope(a.maxBias, iq2, a.q.Ne[2])
	sink := float32(math.Inf(-1))
	if withSink && a.sinks != nil {
		sink = floats(a.src[4], uint64(iq2)*a.sinks.Nb[0], 1)[0]
	}
	var moff uint64
	if a.mask != nil {
		moff = off3(a.mask.Nb, iq1, iq2%a.mask.Ne[2], iq3%a.mask.Ne[3]) + uint64(c0)*a.mask.Nb[0]
	}
	if a.softcap != 0 || a.mask != nil && (!a.maskHalves || len(mb) < len(s)) {
		var mrow []byte
		if a.mask != nil {
			mrow = a.src[3][moff:]
		}
		return attnWeights(s, mrow, a.mask, a.scale, a.softcap, slope, sink)
	}
	var mf []float32
	if a.mask != nil {
		mf = mb[:len(s)]
		h := halves(a.src[3], moff, int64(len(s)))
		for i := vec.F16ToF32(mf, h); i < len(mf); i++ {
			mf[i] = cpukernels.F16ToF32(h[i])
		}
	}
	return expWeights(s, max(vec.ScaleMaskMax(s, s, mf, a.scale, slope), sink), sink)
}

// attnScratch is one worker's scratch for decode units: the q rows
// (heads·dk floats), the scores (heads·keys), the outputs (heads·dv) and
// a widened mask row (keys).
type attnScratch struct{ q, s, o, m []float32 }

func newAttnScratch(heads, dk, keys, dv int64) *attnScratch {
	return &attnScratch{q: make([]float32, heads*dk), s: make([]float32, heads*keys), o: make([]float32, heads*dv), m: make([]float32, keys)}
}

// part computes unit u with scratch sc. With p nil (u covers every key)
// it writes the node's outputs, divided by their sums; else the
// unnormalized outputs go to out (heads·dv floats) and each head's sum
// and maximum (the sink left out) to p, for merge.
func (a *attnDecode) part(u attnUnit, sc *attnScratch, out []float32, p []attnPart) error {
	q, k, v, t := a.q, a.k, a.v, a.t
	dk, dv, nc, g := q.Ne[0], v.Ne[0], u.c1-u.c0, u.heads
	for h := range g {
		row := sc.q[h*dk : (h+1)*dk]
		copy(row, floats(a.src[0], off3(q.Nb, u.iq1, u.iq2+h, u.iq3), dk))
		if err := cpukernels.RoundActivations(k.Type, row); err != nil {
			return fmt.Errorf("tensor %s: %w", t, err)
		}
	}
	ik2, ik3 := u.iq2/(q.Ne[2]/k.Ne[2]), u.iq3/(q.Ne[3]/k.Ne[3])
	iv2, iv3 := u.iq2/(q.Ne[2]/v.Ne[2]), u.iq3/(q.Ne[3]/v.Ne[3])
	s := sc.s[:g*nc]
	if err := vec.DotF16Group(s, int(nc), a.src[1][off3(k.Nb, u.c0, ik2, ik3):], int(k.Nb[1]), int(nc), sc.q, int(dk), int(g), int(dk)); err != nil {
		return fmt.Errorf("tensor %s: %w", t, err)
	}
	var sums [attnMaxGroup]float32
	for h := range g {
		sum, m := a.weights(s[h*nc:(h+1)*nc], u.iq1, u.iq2+h, u.iq3, u.c0, p == nil, sc.m)
		sums[h] = sum
		if p != nil {
			p[h] = attnPart{sum: sum, max: m}
		}
	}
	o := out[:g*dv]
	clear(o)
	if err := vec.MadF16Group(o, int(dv), a.src[2][off3(v.Nb, u.c0, iv2, iv3):], int(v.Nb[1]), int(nc), s, int(nc), int(g), int(dv)); err != nil {
		return fmt.Errorf("tensor %s: %w", t, err)
	}
	if p != nil {
		return nil
	}
	for h := range g {
		inv := float32(0)
		if sums[h] != 0 {
			inv = 1 / sums[h]
		}
		vec.Scale(floats(a.dm, off3(t.Nb, u.iq2+h, u.iq1, u.iq3), dv), o[h*dv:(h+1)*dv], inv)
	}
	return nil
}

// attnPart is one part's soft-max sum and maximum for one head.
type attnPart struct{ sum, max float32 }

// attnMaxGroup is the most q heads one decode unit takes together (the
// heads of a K/V head, up to this many at a time).
const attnMaxGroup = 8

// attnMinSplit is the fewest keys a decode unit takes when the keys are
// split across workers.
const attnMinSplit = 256

// flashAttnDecode is FLASH_ATTN_EXT for decoding (at most attnDirectRows
// q rows per head, f16 K and V read in place). The q heads that share a
// K head and a V head (grouped-query attention) are taken together, up
// to attnMaxGroup at a time, so each K and V row is read and widened once
// for all of them (vec.DotF16Group, vec.MadF16Group); the weights are the
// soft-max of all the unit's scores at once. The units (q row, group) are
// split across the workers; when there are fewer units than workers,
// ggml's split of the keys too: each worker's part keeps its own maximum
// and sum, and the last part of a unit to finish merges them (rescaling
// each by exp(max - overall max), the sink counted once) and writes the
// outputs.
func flashAttnDecode(t *runtime.Tensor, dm []byte, src [][]byte) func(ith, nth int) error {
	a := newAttnDecode(t, dm, src)
	q, k, v := a.q, a.k, a.v
	rk, rv := q.Ne[2]/k.Ne[2], q.Ne[2]/v.Ne[2]
	g := min(gcd(rk, rv), attnMaxGroup) // a divisor of both: groups never straddle a K or V head
	for rk%g != 0 || rv%g != 0 {
		g--
	}
	groups := q.Ne[2] / g
	units := q.Ne[1] * groups * q.Ne[3]
	nkv, dk, dv := k.Ne[1], q.Ne[0], v.Ne[0]
	unitAt := func(i int64) attnUnit {
		iq1, rest := i%q.Ne[1], i/q.Ne[1]
		return attnUnit{iq1: iq1, iq2: (rest % groups) * g, iq3: rest / groups, heads: g, c1: nkv}
	}
	var once sync.Once
	var sh *attnSplit
	return func(ith, nth int) error {
		split := min((int64(nth)+units-1)/units, nkv/attnMinSplit)
		if split <= 1 {
			u0, u1 := cpukernels.RowRange(units, ith, nth)
			if u0 >= u1 {
				return nil
			}
			sc := newAttnScratch(g, dk, nkv, dv)
			for i := u0; i < u1; i++ {
				if err := a.part(unitAt(i), sc, sc.o, nil); err != nil {
					return err
				}
			}
			return nil
		}
		once.Do(func() { sh = newAttnSplit(units, split, g, dv) })
		i0, i1 := cpukernels.RowRange(units*split, ith, nth)
		sc := newAttnScratch(g, dk, (nkv+split-1)/split, dv)
		for i := i0; i < i1; i++ {
			ui, pi := i/split, i%split
			u := unitAt(ui)
			u.c0, u.c1 = pi*nkv/split, (pi+1)*nkv/split
			at := i * g
			if err := a.part(u, sc, sh.outs[at*dv:(at+g)*dv], sh.parts[at:at+g]); err != nil {
				return err
			}
			if sh.left[ui].Add(-1) == 0 { // the unit's last part: merge
				a.merge(u, sh.parts[ui*split*g:(ui+1)*split*g], sh.outs[ui*split*g*dv:(ui+1)*split*g*dv], split, sc.o)
			}
		}
		return nil
	}
}

// attnSplit is the shared state of a decode whose keys are split: each
// part's per-head sums and maxima, its unnormalized outputs, and each
// unit's count of parts still running.
type attnSplit struct {
	parts []attnPart
	outs  []float32
	left  []atomic.Int64
}

func newAttnSplit(units, split, g, dv int64) *attnSplit {
	sh := &attnSplit{parts: make([]attnPart, units*split*g), outs: make([]float32, units*split*g*dv), left: make([]atomic.Int64, units)}
	for i := range sh.left {
		sh.left[i].Store(split)
	}
	return sh
}

// merge writes unit u's outputs from its split parts (parts and outs:
// part-major, then head), rescaling each part by exp(its max - the
// overall max) and counting the head's sink once; o is scratch of dv.
func (a *attnDecode) merge(u attnUnit, parts []attnPart, outs []float32, split int64, o []float32) {
	dv, g := a.v.Ne[0], u.heads
	for h := range g {
		m := float32(math.Inf(-1))
		if a.sinks != nil {
			m = floats(a.src[4], uint64(u.iq2+h)*a.sinks.Nb[0], 1)[0]
		}
		sink := m
		for pi := range split {
			m = max(m, parts[pi*g+h].max)
		}
		o = o[:dv]
		clear(o)
		var sum float32
		if !math.IsInf(float64(m), -1) {
			for pi := range split {
				p := parts[pi*g+h]
				if math.IsInf(float64(p.max), -1) {
					continue
				}
				f := exp32(p.max - m)
				sum += f * p.sum
				vec.ScaleAdd(o, outs[(pi*g+h)*dv:(pi*g+h+1)*dv], f)
			}
			if !math.IsInf(float64(sink), -1) {
				sum += exp32(sink - m)
			}
		}
		inv := float32(0)
		if sum != 0 {
			inv = 1 / sum
		}
		vec.Scale(floats(a.dm, off3(a.t.Nb, u.iq2+h, u.iq1, u.iq3), dv), o, inv)
	}
}

// gcd is the greatest common divisor of two positive numbers.
func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}
