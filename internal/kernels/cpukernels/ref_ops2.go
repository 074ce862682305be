package cpukernels

import (
	"encoding/binary"
	"fmt"
	"math"
	"sort"

	"github.com/gogml/gogml/runtime"
)

// This file holds the reference kernels of the ops ggml added after the
// seed's set (GLU, SET_ROWS, SUM, SIN, COS, L2_NORM, ARGSORT, TOP_K,
// ADD_ID), each with ggml's CPU formula and order of operations.

// unsupported2 returns why node t of an op not handled by unsupported
// cannot be computed, or "".
func unsupported2(t *runtime.Tensor) string {
	if why, ok := unsupportedConv(t); ok {
		return why
	}
	if why, ok := unsupportedAttn(t); ok {
		return why
	}
	if why, ok := unsupported3(t); ok {
		return why
	}
	if why, ok := unsupported4(t); ok {
		return why
	}
	if why, ok := unsupportedSeq(t); ok {
		return why
	}
	s0, s1, s2 := t.Src[0], t.Src[1], t.Src[2]
	f32 := runtime.TypeF32
	switch t.Op {
	case runtime.OpGlu:
		if why := srcOK(t, 1); why != "" {
			return why
		}
		g := runtime.GluOp(t.OpParamI32(0))
		if g < 0 || g >= runtime.GluCount {
			return fmt.Sprintf("glu function %d", int32(g))
		}
		if !IsFloat(s0.Type) || t.Type != s0.Type {
			return "want f32, f16 or bf16 source and result of one type"
		}
		nc := s0.Ne[0] / 2
		if s1 != nil {
			if s1.Type != s0.Type || s1.Ne != s0.Ne {
				return "the two halves must have one type and shape"
			}
			nc = s0.Ne[0]
		}
		if t.Ne != [4]int64{nc, s0.Ne[1], s0.Ne[2], s0.Ne[3]} || nc < 1 {
			return "result shape does not fit the source"
		}
		return ""
	case runtime.OpSetRows:
		if why := srcOK(t, 3); why != "" {
			return why
		}
		if s0.Type != f32 && s0.Type != runtime.TypeF16 {
			return "values must be f32 or f16"
		}
		if s1.Type != runtime.TypeI32 && s1.Type != runtime.TypeI64 {
			return "row ids must be i32 or i64"
		}
		if !CanQuantize(t.Type) || !t.IsContiguousRows() || !s0.IsContiguousRows() || s2.Type != t.Type || s2.Ne != t.Ne {
			return fmt.Sprintf("rows of %s into %s (dense rows of a row type)", s0.Type, t.Type)
		}
		if t.Ne[0] != s0.Ne[0] || t.Ne[2] != s0.Ne[2] || t.Ne[3] != s0.Ne[3] || s0.Ne[1] != s1.Ne[0] ||
			s0.Ne[2]%s1.Ne[1] != 0 || s0.Ne[3]%s1.Ne[2] != 0 || s1.Ne[3] != 1 {
			return "shapes do not fit"
		}
		return ""
	case runtime.OpSum:
		if why := srcOK(t, 1); why != "" {
			return why
		}
		if !IsFloat(s0.Type) || t.Type != s0.Type || !t.IsScalar() {
			return "want a float source and a scalar result of its type"
		}
		return ""
	case runtime.OpSin, runtime.OpCos:
		if why := srcOK(t, 1); why != "" {
			return why
		}
		if !IsFloat(t.Type) || s0.Type != t.Type || s0.Ne != t.Ne {
			return "want f32, f16 or bf16 source and result of one type and shape"
		}
		return ""
	case runtime.OpL2Norm:
		if why := srcOK(t, 1); why != "" {
			return why
		}
		if t.Type != f32 || s0.Type != f32 || s0.Ne != t.Ne || !(t.OpParamF32(0) >= 0) {
			return "want f32 source and result of one shape and eps ≥ 0"
		}
		return ""
	case runtime.OpArgsort, runtime.OpTopK:
		if why := srcOK(t, 1); why != "" {
			return why
		}
		if s0.Type != f32 || t.Type != runtime.TypeI32 || t.Ne[1] != s0.Ne[1] || t.Ne[2] != s0.Ne[2] || t.Ne[3] != s0.Ne[3] {
			return "want f32 source and i32 result with its rows"
		}
		if t.Op == runtime.OpArgsort {
			if o := t.OpParamI32(0); t.Ne[0] != s0.Ne[0] || (o != 0 && o != 1) {
				return "argsort needs the source's row length and order 0 or 1"
			}
		} else if t.Ne[0] > s0.Ne[0] {
			return "top_k needs k ≤ ne[0]"
		}
		return ""
	case runtime.OpAddId:
		if why := srcOK(t, 3); why != "" {
			return why
		}
		if t.Type != f32 || s0.Type != f32 || s1.Type != f32 || s2.Type != runtime.TypeI32 {
			return "want f32 a, b and result, i32 ids"
		}
		if s0.Ne != t.Ne || s1.Ne[0] != t.Ne[0] || s2.Ne[0] != t.Ne[1] || s2.Ne[1] != t.Ne[2] {
			return "shapes do not fit"
		}
		return ""
	}
	return fmt.Sprintf("op %s", t.Op)
}

// ownSplit reports whether op splits its work across parts in its own
// way rather than by result rows.
func ownSplit(op runtime.Op) bool {
	return op == runtime.OpSetRows || wholeOp(op) || convOwnSplit(op) || seqOp(op)
}

// computeOwnSplit runs part ith of nth of the ops ownSplit names.
func (k *kernel) computeOwnSplit(ith, nth int) error {
	switch k.t.Op {
	case runtime.OpSetRows:
		return k.setRows(ith, nth)
	}
	if convOwnSplit(k.t.Op) {
		return k.computeConvSplit(ith, nth)
	}
	if seqOp(k.t.Op) {
		return k.computeSeq(ith, nth)
	}
	if wholeOp(k.t.Op) {
		if ith != 0 {
			return nil
		}
		return k.computeWhole()
	}
	return fmt.Errorf("tensor %s: %w", k.t, runtime.ErrUnsupported)
}

// compute2 computes result rows [r0, r1) of the ops of this file.
func (k *kernel) compute2(r0, r1 int64) error {
	t := k.t
	switch t.Op {
	case runtime.OpGlu:
		k.glu(r0, r1)
	case runtime.OpSum:
		return k.sum()
	case runtime.OpSin:
		k.map1(r0, r1, func(x float32) float32 { return float32(math.Sin(float64(x))) })
	case runtime.OpCos:
		k.map1(r0, r1, func(x float32) float32 { return float32(math.Cos(float64(x))) })
	case runtime.OpL2Norm:
		k.l2Norm(r0, r1)
	case runtime.OpArgsort, runtime.OpTopK:
		k.argsort(r0, r1)
	case runtime.OpAddId:
		return k.addID(r0, r1)
	case runtime.OpFlashAttnExt:
		return k.flashAttn(r0, r1)
	case runtime.OpMulMatId:
		return k.mulMatID(r0, r1)
	default:
		if ok, err := k.computeConv(r0, r1); ok {
			return err
		}
		if ok, err := k.compute3(r0, r1); ok {
			return err
		}
		if ok, err := k.compute4(r0, r1); ok {
			return err
		}
		return fmt.Errorf("tensor %s: %w", t, runtime.ErrUnsupported)
	}
	return nil
}

// GluFunc returns GLU function g as ggml's CPU backend computes it on one
// element x of the activated half and g of the gate half; alpha and limit
// are SWIGLU_OAI's (op parameters 2 and 3; SWIGLU_CLAMP uses limit).
func GluFunc(g runtime.GluOp, alpha, limit float32) func(x, y float32) float32 {
	switch g {
	case runtime.GluReglu:
		return func(x, y float32) float32 {
			if x > 0 {
				return x * y
			}
			return 0
		}
	case runtime.GluGeglu:
		return func(x, y float32) float32 {
			switch {
			case x <= -10:
				return 0
			case x >= 10:
				return x * y
			}
			return halfRound(geluF32(halfRound(x))) * y
		}
	case runtime.GluSwiglu:
		return func(x, y float32) float32 { return x / (1 + expf(-x)) * y }
	case runtime.GluSwigluOai:
		return func(x, y float32) float32 {
			x = min(x, limit)
			y = max(-limit, min(y, limit))
			return x / (1 + expf(alpha*-x)) * (y + 1)
		}
	case runtime.GluGegluErf:
		return func(x, y float32) float32 { return GeluErf(x) * y }
	case runtime.GluGegluQuick:
		return func(x, y float32) float32 { return GeluQuick(x) * y }
	case runtime.GluSwigluClamp:
		return func(x, y float32) float32 {
			x = min(x, limit)
			y = max(-limit, min(y, limit))
			return x / (1 + expf(-x)) * y
		}
	}
	return nil
}

// glu computes GLU rows: the activated half x and the gate half g are the
// two halves of a source row (x first unless op parameter 1, swapped, is
// set) or the rows of the two sources.
func (k *kernel) glu(r0, r1 int64) {
	t, a, b := k.t, k.t.Src[0], k.t.Src[1]
	f := GluFunc(runtime.GluOp(t.OpParamI32(0)), t.OpParamF32(2), t.OpParamF32(3))
	nc := t.Ne[0]
	x := make([]float32, a.Ne[0])
	out := make([]float32, nc)
	var g []float32
	if b != nil {
		g = make([]float32, b.Ne[0])
	}
	for r := r0; r < r1; r++ {
		i1, i2, i3 := rowCoords(t.Ne, r)
		loadRow(a, k.src[0], i1, i2, i3, x)
		var xs, gs []float32
		switch {
		case b != nil:
			loadRow(b, k.src[1], i1, i2, i3, g)
			xs, gs = x, g
		case t.OpParamI32(1) != 0: // swapped: the gate comes first
			xs, gs = x[nc:2*nc], x[:nc]
		default:
			xs, gs = x[:nc], x[nc:2*nc]
		}
		for i := range out {
			out[i] = f(xs[i], gs[i])
		}
		k.storeRow(out, off3(t.Nb, i1, i2, i3))
	}
}

// setRows writes row i of each matrix (i2, i3) of the values (source 0)
// into row ids[i, i2%ne11, i3%ne12] of the result, converting to its type.
// Parts split the values' rows, as ggml's kernel does.
func (k *kernel) setRows(ith, nth int) error {
	t, v, ids := k.t, k.t.Src[0], k.t.Src[1]
	i0, i1 := RowRange(v.Ne[1], ith, nth)
	row := make([]float32, v.Ne[0])
	n := t.Type.RowSize(t.Ne[0])
	for i3 := int64(0); i3 < v.Ne[3]; i3++ {
		for i2 := int64(0); i2 < v.Ne[2]; i2++ {
			for i := i0; i < i1; i++ {
				o := uint64(i)*ids.Nb[0] + off3(ids.Nb, i2%ids.Ne[1], i3%ids.Ne[2], 0)
				var dst int64
				if ids.Type == runtime.TypeI64 {
					dst = int64(binary.LittleEndian.Uint64(k.src[1][o:]))
				} else {
					dst = int64(int32(binary.LittleEndian.Uint32(k.src[1][o:])))
				}
				if dst < 0 || dst >= t.Ne[1] {
					return fmt.Errorf("tensor %s: row id %d at (%d, %d, %d) of %q outside [0, %d): %w",
						t, dst, i, i2%ids.Ne[1], i3%ids.Ne[2], ids.Name, t.Ne[1], runtime.ErrOutOfBounds)
				}
				do := off3(t.Nb, dst, i2, i3)
				if v.Type == t.Type {
					so := off3(v.Nb, i, i2, i3)
					copy(k.dst[do:do+n], k.src[0][so:so+n])
					continue
				}
				loadRow(v, k.src[0], i, i2, i3, row)
				if err := k.storeRow(row, do); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// sum adds the elements of source 0 row by row, as ggml's SUM does: each
// row's sum and the total in float64 for f32, in float32 for f16 and bf16.
// Like ggml's kernel it reads each row as ne0 adjacent elements from the
// row's start whatever the source's nb[0] (a permuted source sums other
// elements than its own); a row read past the source's memory is an error.
func (k *kernel) sum() error {
	t, s := k.t, k.t.Src[0]
	es := s.Type.Size()
	dense := *s
	dense.Nb[0] = es
	row := make([]float32, s.Ne[0])
	var sum64 float64
	var sum32 float32
	for r := int64(0); r < s.Nrows(); r++ {
		i1, i2, i3 := rowCoords(s.Ne, r)
		if end := off3(s.Nb, i1, i2, i3) + uint64(s.Ne[0])*es; end > uint64(len(k.src[0])) {
			return fmt.Errorf("tensor %s: row %d of %q ends at byte %d, past its %d: %w",
				t, r, s.Name, end, len(k.src[0]), runtime.ErrOutOfBounds)
		}
		loadRow(&dense, k.src[0], i1, i2, i3, row)
		if s.Type == runtime.TypeF32 {
			var rs float64
			for _, v := range row {
				rs += float64(v)
			}
			sum64 += rs
			continue
		}
		var rs float32
		for _, v := range row {
			rs += v
		}
		sum32 += rs
	}
	if s.Type == runtime.TypeF32 {
		sum32 = float32(sum64)
	}
	storeF(t.Type, k.dst, 0, sum32)
	return nil
}

// l2Norm divides each row by max(‖row‖, eps), the squares rounded to
// float32 before their float64 sum and the norm taken in float32, as
// ggml's kernel does.
func (k *kernel) l2Norm(r0, r1 int64) {
	t, s := k.t, k.t.Src[0]
	eps := t.OpParamF32(0)
	row := make([]float32, t.Ne[0])
	for r := r0; r < r1; r++ {
		i1, i2, i3 := rowCoords(t.Ne, r)
		loadRow(s, k.src[0], i1, i2, i3, row)
		var sum float64
		for _, v := range row {
			sum += float64(v * v)
		}
		scale := 1 / maxNaN(float32(math.Sqrt(float64(float32(sum)))), eps)
		for i := range row {
			row[i] *= scale
		}
		k.storeRow(row, off3(t.Nb, i1, i2, i3))
	}
}

// argsort writes the indices that sort each row (ARGSORT: all of them, in
// ascending order for op parameter 0 = 0, descending for 1; TOP_K: the
// first k in descending order, the first two swapped as ggml's kernel
// does to show the order is not part of the contract). Ties keep index
// order.
func (k *kernel) argsort(r0, r1 int64) {
	t, s := k.t, k.t.Src[0]
	row := make([]float32, s.Ne[0])
	idx := make([]int32, s.Ne[0])
	desc := t.Op == runtime.OpTopK || t.OpParamI32(0) == 1
	for r := r0; r < r1; r++ {
		i1, i2, i3 := rowCoords(t.Ne, r)
		loadRow(s, k.src[0], i1, i2, i3, row)
		for i := range idx {
			idx[i] = int32(i)
		}
		sort.SliceStable(idx, func(a, b int) bool {
			if desc {
				return row[idx[a]] > row[idx[b]]
			}
			return row[idx[a]] < row[idx[b]]
		})
		out := idx[:t.Ne[0]]
		if t.Op == runtime.OpTopK && len(out) > 1 {
			out[0], out[1] = out[1], out[0]
		}
		do := off3(t.Nb, i1, i2, i3)
		for i, v := range out {
			binary.LittleEndian.PutUint32(k.dst[do+uint64(i)*t.Nb[0]:], uint32(v))
		}
	}
}

// addID adds to row (i1, i2, i3) of a the row ids[i1, i2] of b.
func (k *kernel) addID(r0, r1 int64) error {
	t, a, b, ids := k.t, k.t.Src[0], k.t.Src[1], k.t.Src[2]
	x := make([]float32, t.Ne[0])
	y := make([]float32, t.Ne[0])
	for r := r0; r < r1; r++ {
		i1, i2, i3 := rowCoords(t.Ne, r)
		id := int64(int32(binary.LittleEndian.Uint32(k.src[2][uint64(i1)*ids.Nb[0]+uint64(i2)*ids.Nb[1]:])))
		if id < 0 || id >= b.Ne[1] {
			return fmt.Errorf("tensor %s: id %d at (%d, %d) of %q outside [0, %d): %w", t, id, i1, i2, ids.Name, b.Ne[1], runtime.ErrOutOfBounds)
		}
		loadRow(a, k.src[0], i1, i2, i3, x)
		loadRow(b, k.src[1], id, 0, 0, y)
		for i := range x {
			x[i] += y[i]
		}
		k.storeRow(x, off3(t.Nb, i1, i2, i3))
	}
	return nil
}
