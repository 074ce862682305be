package cpukernels

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/gogml/gogml/runtime"
)

// This file holds the reference kernels of the rest of ggml 0.27.0's
// tensor ops: ARGMAX, COUNT_EQUAL, DIAG, DIAG_MASK_ZERO, PAD,
// PAD_REFLECT_1D, ROLL, ARANGE, TIMESTEP_EMBEDDING, LEAKY_RELU, TRI, FILL,
// CUMSUM, ACC, SET, REPEAT_BACK, GROUP_NORM, OUT_PROD and GET_ROWS_BACK,
// with ggml's CPU formulas and order of operations. Ops whose work does
// not split by result rows run whole in part 0 (wholeOp).

// wholeOp reports whether op runs whole in part 0 of a Compute.
func wholeOp(op runtime.Op) bool {
	switch op {
	case runtime.OpArgmax, runtime.OpCountEqual, runtime.OpAcc, runtime.OpSet, runtime.OpRepeatBack,
		runtime.OpGroupNorm, runtime.OpGetRowsBack, runtime.OpCrossEntropyLoss:
		return true
	}
	return false
}

// accSetRange checks that ACC's or SET's placement of b (byte strides
// nb1..nb3 and offset in op parameters 0..3) stays inside the result.
func accSetRange(t, b *runtime.Tensor) string {
	var hi uint64
	for i := 0; i < 4; i++ {
		if t.OpParamI32(i) < 0 {
			return "negative stride or offset"
		}
	}
	es := t.Type.Size()
	hi = uint64(t.OpParamI32(3)) + uint64(b.Ne[0])*es
	for d := 1; d < 4; d++ {
		hi += uint64(b.Ne[d]-1) * uint64(t.OpParamI32(d-1))
	}
	if hi > t.NBytes() || t.OpParamI32(3)%int32(es) != 0 {
		return fmt.Sprintf("b placed at offset %d with strides %d, %d, %d reaches byte %d of a result of %d",
			t.OpParamI32(3), t.OpParamI32(0), t.OpParamI32(1), t.OpParamI32(2), hi, t.NBytes())
	}
	return ""
}

// unsupported3 returns why node t of an op of this file cannot be
// computed, or "" (ok reports whether t's op is one of them).
func unsupported3(t *runtime.Tensor) (why string, ok bool) {
	s0, s1 := t.Src[0], t.Src[1]
	f32, i32 := runtime.TypeF32, runtime.TypeI32
	same := func(types ...runtime.Type) string {
		if w := srcOK(t, 1); w != "" {
			return w
		}
		for _, typ := range types {
			if t.Type == typ && s0.Type == typ && s0.Ne == t.Ne {
				return ""
			}
		}
		return fmt.Sprintf("want source and result of one shape and type %v", types)
	}
	switch t.Op {
	case runtime.OpArgmax:
		if w := srcOK(t, 1); w != "" {
			return w, true
		}
		if s0.Type != f32 || t.Type != i32 || !s0.IsMatrix() || t.Ne != [4]int64{s0.Ne[1], 1, 1, 1} {
			return "want an f32 matrix and an i32 vector of its rows", true
		}
		return "", true
	case runtime.OpCountEqual:
		if w := srcOK(t, 2); w != "" {
			return w, true
		}
		if s0.Type != i32 || s1.Type != i32 || s0.Ne != s1.Ne || t.Type != runtime.TypeI64 || !t.IsScalar() {
			return "want i32 sources of one shape and an i64 scalar", true
		}
		return "", true
	case runtime.OpDiag:
		if w := srcOK(t, 1); w != "" {
			return w, true
		}
		if s0.Type != f32 || t.Type != f32 || s0.Ne[1] != 1 || t.Ne != [4]int64{s0.Ne[0], s0.Ne[0], s0.Ne[2], s0.Ne[3]} {
			return "want f32 {n, 1, ...} source and {n, n, ...} result", true
		}
		return "", true
	case runtime.OpDiagMaskZero, runtime.OpLeakyRelu:
		return same(f32, runtime.TypeF16), true
	case runtime.OpCumsum, runtime.OpTri, runtime.OpRoll, runtime.OpGroupNorm:
		if w := same(f32); w != "" {
			return w, true
		}
		switch t.Op {
		case runtime.OpTri:
			if tt := t.OpParamI32(0); tt < 0 || tt > 3 || t.Ne[0] != t.Ne[1] {
				return "tri needs a square matrix and type 0..3", true
			}
		case runtime.OpRoll:
			for d := 0; d < 4; d++ {
				if s := int64(t.OpParamI32(d)); s <= -t.Ne[d] || s >= t.Ne[d] {
					return fmt.Sprintf("shift %d of dimension %d not inside ±ne", s, d), true
				}
			}
		case runtime.OpGroupNorm:
			if t.OpParamI32(0) < 1 {
				return "group count must be positive", true
			}
		}
		return "", true
	case runtime.OpFill:
		if w := srcOK(t, 1); w != "" {
			return w, true
		}
		if (t.Type != f32 && t.Type != runtime.TypeF16) || t.Ne != s0.Ne {
			return "want f32 or f16 result of the source's shape", true
		}
		return "", true
	case runtime.OpPad:
		if w := srcOK(t, 1); w != "" {
			return w, true
		}
		if s0.Type != f32 || t.Type != f32 {
			return "want f32", true
		}
		for d := 0; d < 4; d++ {
			lp, rp := int64(t.OpParamI32(2*d)), int64(t.OpParamI32(2*d+1))
			if lp < 0 || rp < 0 || t.Ne[d] != s0.Ne[d]+lp+rp {
				return fmt.Sprintf("pads %d, %d of dimension %d do not fit", lp, rp, d), true
			}
		}
		return "", true
	case runtime.OpPadReflect1D:
		if w := srcOK(t, 1); w != "" {
			return w, true
		}
		p0, p1 := int64(t.OpParamI32(0)), int64(t.OpParamI32(1))
		if s0.Type != f32 || t.Type != f32 || p0 < 0 || p1 < 0 || p0 >= s0.Ne[0] || p1 >= s0.Ne[0] ||
			t.Ne != [4]int64{s0.Ne[0] + p0 + p1, s0.Ne[1], s0.Ne[2], s0.Ne[3]} {
			return "want f32 and pads below ne0", true
		}
		return "", true
	case runtime.OpArange:
		if t.Type != f32 || !t.IsVector() {
			return "want an f32 vector", true
		}
		return "", true
	case runtime.OpTimestepEmbedding:
		if w := srcOK(t, 1); w != "" {
			return w, true
		}
		dim := int64(t.OpParamI32(0))
		if s0.Type != f32 || t.Type != f32 || dim < 1 || t.Ne[0] < dim || t.Ne[1] != s0.Ne[0] || t.OpParamI32(1) < 1 {
			return "want f32 timesteps and an f32 {dim, n} result", true
		}
		return "", true
	case runtime.OpAcc, runtime.OpSet:
		if w := srcOK(t, 2); w != "" {
			return w, true
		}
		types := []runtime.Type{f32}
		if t.Op == runtime.OpSet {
			types = append(types, i32)
		}
		if w := same(types...); w != "" || s1.Type != t.Type || !t.IsContiguous() {
			return "want contiguous a and result of one type (f32; SET also i32) and b of that type", true
		}
		return accSetRange(t, s1), true
	case runtime.OpRepeatBack:
		if w := srcOK(t, 1); w != "" {
			return w, true
		}
		if s0.Type != f32 || t.Type != f32 || !runtime.CanRepeat(t, s0) {
			return "want f32 and a source that repeats the result", true
		}
		return "", true
	case runtime.OpOutProd:
		if w := srcOK(t, 2); w != "" {
			return w, true
		}
		if !IsFloat(s0.Type) && !(IsRowType(s0.Type) && s0.IsContiguousRows()) {
			return fmt.Sprintf("a of %s (want float, or dense rows of a row type)", s0.Type), true
		}
		if s1.Type != f32 || t.Type != f32 || s0.Ne[1] != s1.Ne[1] || s1.Ne[2]%s0.Ne[2] != 0 ||
			s1.Ne[3]%s0.Ne[3] != 0 || t.Ne != [4]int64{s0.Ne[0], s1.Ne[0], s1.Ne[2], s1.Ne[3]} {
			return "want f32 b with a.ne1 == b.ne1 and an f32 {a.ne0, b.ne0, b.ne2, b.ne3} result", true
		}
		return "", true
	case runtime.OpGetRowsBack:
		if w := srcOK(t, 2); w != "" {
			return w, true
		}
		if (s0.Type != f32 && s0.Type != runtime.TypeF16) || s1.Type != i32 || t.Type != f32 || !s0.IsMatrix() || !s1.IsVector() ||
			!t.IsMatrix() || s0.Ne[0] != t.Ne[0] || s1.Ne[0] > s0.Ne[1] {
			return "want f32 or f16 rows, i32 ids vector (at most one per row), f32 matrix result", true
		}
		return "", true
	}
	return "", false
}

// compute3 computes result rows [r0, r1) of the row-split ops of this
// file (ok reports whether t's op is one of them).
func (k *kernel) compute3(r0, r1 int64) (bool, error) {
	t := k.t
	switch t.Op {
	case runtime.OpDiag:
		k.diag(r0, r1)
	case runtime.OpDiagMaskZero:
		k.diagMaskZero(r0, r1)
	case runtime.OpLeakyRelu:
		ns := t.OpParamF32(0)
		k.map1(r0, r1, func(x float32) float32 {
			p, n := float32(0), float32(0)
			if x > 0 {
				p = x
			}
			if x < 0 {
				n = x
			}
			return p + ns*n
		})
	case runtime.OpFill:
		c := t.OpParamF32(0)
		k.map1(r0, r1, func(float32) float32 { return c })
	case runtime.OpCumsum, runtime.OpTri, runtime.OpRoll, runtime.OpPad, runtime.OpPadReflect1D:
		k.rowsOp(r0, r1)
	case runtime.OpArange:
		start, step := t.OpParamF32(0), t.OpParamF32(2)
		for i := int64(0); i < t.Ne[0]; i++ { // one row: part 0 only
			storeF(t.Type, k.dst, uint64(i)*t.Nb[0], start+step*float32(i))
		}
	case runtime.OpTimestepEmbedding:
		k.timestepEmbedding(r0, r1)
	case runtime.OpOutProd:
		k.outProd(r0, r1)
	default:
		return false, nil
	}
	return true, nil
}

// computeWhole runs the wholeOp ops.
func (k *kernel) computeWhole() error {
	switch k.t.Op {
	case runtime.OpArgmax:
		k.argmax()
	case runtime.OpCountEqual:
		k.countEqual()
	case runtime.OpAcc, runtime.OpSet:
		k.accSet()
	case runtime.OpRepeatBack:
		k.repeatBack()
	case runtime.OpGroupNorm:
		k.groupNorm()
	case runtime.OpGetRowsBack:
		return k.getRowsBack()
	case runtime.OpCrossEntropyLoss:
		k.crossEntropy()
	}
	return nil
}

func (k *kernel) argmax() {
	t, s := k.t, k.t.Src[0]
	row := make([]float32, s.Ne[0])
	for i1 := int64(0); i1 < s.Ne[1]; i1++ {
		loadRow(s, k.src[0], i1, 0, 0, row)
		mx, idx := float32(math.Inf(-1)), 0
		for i, x := range row { // ggml: max = MAX(max, x); the last index equal to it wins
			if !(mx > x) {
				mx = x
			}
			if mx == x {
				idx = i
			}
		}
		binary.LittleEndian.PutUint32(k.dst[uint64(i1)*t.Nb[0]:], uint32(int32(idx)))
	}
}

func (k *kernel) countEqual() {
	a, b := k.t.Src[0], k.t.Src[1]
	var n int64
	for r := int64(0); r < a.Nrows(); r++ {
		i1, i2, i3 := rowCoords(a.Ne, r)
		ao, bo := off3(a.Nb, i1, i2, i3), off3(b.Nb, i1, i2, i3)
		for i0 := int64(0); i0 < a.Ne[0]; i0++ {
			if binary.LittleEndian.Uint32(k.src[0][ao+uint64(i0)*a.Nb[0]:]) == binary.LittleEndian.Uint32(k.src[1][bo+uint64(i0)*b.Nb[0]:]) {
				n++
			}
		}
	}
	binary.LittleEndian.PutUint64(k.dst, uint64(n))
}

func (k *kernel) diag(r0, r1 int64) {
	t, s := k.t, k.t.Src[0]
	for r := r0; r < r1; r++ {
		i1, i2, i3 := rowCoords(t.Ne, r)
		do := off3(t.Nb, i1, i2, i3)
		for i0 := int64(0); i0 < t.Ne[0]; i0++ {
			v := float32(0)
			if i0 == i1 {
				v = loadF(s.Type, k.src[0], uint64(i0)*s.Nb[0]+off3(s.Nb, 0, i2, i3))
			}
			storeF(t.Type, k.dst, do+uint64(i0)*t.Nb[0], v)
		}
	}
}

func (k *kernel) diagMaskZero(r0, r1 int64) {
	t, s := k.t, k.t.Src[0]
	nPast := int64(t.OpParamI32(0))
	for r := r0; r < r1; r++ {
		i1, i2, i3 := rowCoords(t.Ne, r)
		do, so := off3(t.Nb, i1, i2, i3), off3(s.Nb, i1, i2, i3)
		for i0 := int64(0); i0 < t.Ne[0]; i0++ {
			v := loadF(s.Type, k.src[0], so+uint64(i0)*s.Nb[0])
			if i0 > nPast+i1 {
				v = 0
			}
			storeF(t.Type, k.dst, do+uint64(i0)*t.Nb[0], v)
		}
	}
}

// wrap is ggml_wrap_around: i modulo n in [0, n).
func wrap(i, n int64) int64 { return ((i % n) + n) % n }

// rowsOp computes the f32 row ops CUMSUM, TRI, ROLL, PAD and
// PAD_REFLECT_1D, one result row at a time.
func (k *kernel) rowsOp(r0, r1 int64) {
	t, s := k.t, k.t.Src[0]
	out := make([]float32, t.Ne[0])
	src := make([]float32, s.Ne[0])
	at := func(i0, i1, i2, i3 int64) float32 {
		return loadF(s.Type, k.src[0], uint64(i0)*s.Nb[0]+off3(s.Nb, i1, i2, i3))
	}
	for r := r0; r < r1; r++ {
		i1, i2, i3 := rowCoords(t.Ne, r)
		switch t.Op {
		case runtime.OpCumsum:
			loadRow(s, k.src[0], i1, i2, i3, src)
			var acc float32
			for i, x := range src {
				if i == 0 {
					acc = x
				} else {
					acc += x
				}
				out[i] = acc
			}
		case runtime.OpTri:
			loadRow(s, k.src[0], i1, i2, i3, src)
			tt := t.OpParamI32(0)
			for i := range out {
				ii := int64(i)
				keep := (tt == 0 && ii >= i1) || (tt == 1 && ii > i1) || (tt == 2 && ii <= i1) || (tt == 3 && ii < i1)
				out[i] = 0
				if keep {
					out[i] = src[i]
				}
			}
		case runtime.OpRoll:
			j1 := wrap(i1-int64(t.OpParamI32(1)), s.Ne[1])
			j2 := wrap(i2-int64(t.OpParamI32(2)), s.Ne[2])
			j3 := wrap(i3-int64(t.OpParamI32(3)), s.Ne[3])
			s0 := int64(t.OpParamI32(0))
			for i := range out {
				out[i] = at(wrap(int64(i)-s0, s.Ne[0]), j1, j2, j3)
			}
		case runtime.OpPad:
			var lp [4]int64
			for d := range lp {
				lp[d] = int64(t.OpParamI32(2 * d))
			}
			circular := t.OpParamI32(8) != 0
			for i := range out {
				c := [4]int64{int64(i) - lp[0], i1 - lp[1], i2 - lp[2], i3 - lp[3]}
				inside := true
				for d := range c {
					if circular {
						c[d] = wrap(c[d], s.Ne[d])
					} else if c[d] < 0 || c[d] >= s.Ne[d] {
						inside = false
					}
				}
				out[i] = 0
				if inside {
					out[i] = at(c[0], c[1], c[2], c[3])
				}
			}
		case runtime.OpPadReflect1D:
			p0 := int64(t.OpParamI32(0))
			loadRow(s, k.src[0], i1, i2, i3, src)
			n := int64(len(src))
			for i := range out {
				j := int64(i) - p0
				if j < 0 {
					j = -j
				} else if j >= n {
					j = 2*(n-1) - j
				}
				out[i] = src[j]
			}
		}
		k.storeRow(out, off3(t.Nb, i1, i2, i3))
	}
}

// timestepEmbedding writes, for timestep i, cos(t·f_j) and sin(t·f_j)
// with f_j = exp(-ln(max_period)·j/half) at j and j+half (and 0 at the
// last element for an odd dim).
func (k *kernel) timestepEmbedding(r0, r1 int64) {
	t, s := k.t, k.t.Src[0]
	dim, maxPeriod := int64(t.OpParamI32(0)), t.OpParamI32(1)
	half := dim / 2
	lnMax := logf(float32(maxPeriod))
	for i := r0; i < r1; i++ {
		ts := loadF(s.Type, k.src[0], uint64(i)*s.Nb[0])
		do := uint64(i) * t.Nb[1]
		for j := int64(0); j < half; j++ {
			freq := expf(-lnMax * float32(j) / float32(half))
			arg := ts * freq
			storeF(t.Type, k.dst, do+uint64(j)*t.Nb[0], float32(math.Cos(float64(arg))))
			storeF(t.Type, k.dst, do+uint64(j+half)*t.Nb[0], float32(math.Sin(float64(arg))))
		}
		for j := 2 * half; j < t.Ne[0]; j++ {
			storeF(t.Type, k.dst, do+uint64(j)*t.Nb[0], 0)
		}
	}
}

// outProd computes dst[i0, i1, i2, i3] = Σ_k a[i0, k] · b[i1, k] in
// float32, k ascending, as ggml's mad loop accumulates.
func (k *kernel) outProd(r0, r1 int64) {
	t, a, b := k.t, k.t.Src[0], k.t.Src[1]
	out := make([]float32, t.Ne[0])
	arow := make([]float32, a.Ne[0])
	r2, r3 := b.Ne[2]/a.Ne[2], b.Ne[3]/a.Ne[3]
	for r := r0; r < r1; r++ {
		i1, i2, i3 := rowCoords(t.Ne, r)
		clear(out)
		for kk := int64(0); kk < a.Ne[1]; kk++ {
			loadRow(a, k.src[0], kk, i2/r2, i3/r3, arow)
			bv := loadF(b.Type, k.src[1], uint64(i1)*b.Nb[0]+off3(b.Nb, kk, i2, i3))
			for i, x := range arow {
				out[i] += x * bv
			}
		}
		k.storeRow(out, off3(t.Nb, i1, i2, i3))
	}
}

// accSet copies a into the result (unless in place) and then adds (ACC) or
// writes (SET) b's elements at the op parameters' byte offset and strides.
func (k *kernel) accSet() {
	t, a, b := k.t, k.t.Src[0], k.t.Src[1]
	n := t.NBytes()
	if &k.dst[0] != &k.src[0][0] {
		copy(k.dst[:n], k.src[0][:n])
	}
	nb := [4]uint64{t.Type.Size(), uint64(t.OpParamI32(0)), uint64(t.OpParamI32(1)), uint64(t.OpParamI32(2))}
	off := uint64(t.OpParamI32(3))
	es := t.Type.Size()
	for r := int64(0); r < b.Nrows(); r++ {
		i1, i2, i3 := rowCoords(b.Ne, r)
		for i0 := int64(0); i0 < b.Ne[0]; i0++ {
			d := off + uint64(i0)*nb[0] + off3(nb, i1, i2, i3)
			so := uint64(i0)*b.Nb[0] + off3(b.Nb, i1, i2, i3)
			if t.Op == runtime.OpSet {
				copy(k.dst[d:d+es], k.src[1][so:so+es])
				continue
			}
			v := loadF(a.Type, k.src[0], d) + loadF(b.Type, k.src[1], so)
			storeF(t.Type, k.dst, d, v)
		}
	}
}

// repeatBack sums the tiles of the source into the result, tile by tile
// in float32 (ggml's order).
func (k *kernel) repeatBack() {
	t, s := k.t, k.t.Src[0]
	acc := make([]float32, t.Nelements())
	var tiles [4]int64
	for d := range tiles {
		tiles[d] = s.Ne[d] / t.Ne[d]
	}
	for k3 := int64(0); k3 < tiles[3]; k3++ {
		for k2 := int64(0); k2 < tiles[2]; k2++ {
			for k1 := int64(0); k1 < tiles[1]; k1++ {
				for k0 := int64(0); k0 < tiles[0]; k0++ {
					for e := int64(0); e < t.Nelements(); e++ {
						i0, i1, i2, i3 := flatCoords(t.Ne, e)
						so := uint64(i0+k0*t.Ne[0])*s.Nb[0] + off3(s.Nb, i1+k1*t.Ne[1], i2+k2*t.Ne[2], i3+k3*t.Ne[3])
						acc[e] += loadF(s.Type, k.src[0], so)
					}
				}
			}
		}
	}
	for e, v := range acc {
		i0, i1, i2, i3 := flatCoords(t.Ne, int64(e))
		storeF(t.Type, k.dst, uint64(i0)*t.Nb[0]+off3(t.Nb, i1, i2, i3), v)
	}
}

// groupNorm normalizes each group of channels (dimension 2) of each
// sample to zero mean and unit variance, as ggml's kernel: float64 sums,
// float32 mean, variance and scale.
func (k *kernel) groupNorm() {
	t, s := k.t, k.t.Src[0]
	eps := t.OpParamF32(1)
	nc, ng := s.Ne[2], int64(t.OpParamI32(0))
	per := (nc + ng - 1) / ng
	row := make([]float32, s.Ne[0])
	for g := int64(0); g < ng; g++ {
		start, end := g*per, min(g*per+per, nc)
		if start >= end {
			continue
		}
		cnt := float64(s.Ne[0] * s.Ne[1] * (end - start))
		for i3 := int64(0); i3 < s.Ne[3]; i3++ {
			var sum float64
			for i2 := start; i2 < end; i2++ {
				for i1 := int64(0); i1 < s.Ne[1]; i1++ {
					loadRow(s, k.src[0], i1, i2, i3, row)
					var sr float64
					for _, x := range row {
						sr += float64(x)
					}
					sum += sr
				}
			}
			mean := float32(sum / cnt)
			var sum2 float64
			for i2 := start; i2 < end; i2++ {
				for i1 := int64(0); i1 < s.Ne[1]; i1++ {
					loadRow(s, k.src[0], i1, i2, i3, row)
					var sr float64
					for _, x := range row {
						v := x - mean
						sr += float64(v * v)
					}
					sum2 += sr
				}
			}
			variance := float32(sum2 / cnt)
			scale := 1 / float32(math.Sqrt(float64(variance+eps)))
			for i2 := start; i2 < end; i2++ {
				for i1 := int64(0); i1 < s.Ne[1]; i1++ {
					loadRow(s, k.src[0], i1, i2, i3, row)
					for i := range row {
						row[i] = (row[i] - mean) * scale
					}
					k.storeRow(row, off3(t.Nb, i1, i2, i3))
				}
			}
		}
	}
}

// getRowsBack adds row i of a into row ids[i] of the zeroed result, for
// each id i ascending.
func (k *kernel) getRowsBack() error {
	t, a, ids := k.t, k.t.Src[0], k.t.Src[1]
	acc := make([]float32, t.Ne[0]*t.Ne[1])
	row := make([]float32, a.Ne[0])
	for i := int64(0); i < ids.Ne[0]; i++ {
		id := int64(int32(binary.LittleEndian.Uint32(k.src[1][uint64(i)*ids.Nb[0]:])))
		if id < 0 || id >= t.Ne[1] {
			return fmt.Errorf("tensor %s: row id %d at %d of %q outside [0, %d): %w", t, id, i, ids.Name, t.Ne[1], runtime.ErrOutOfBounds)
		}
		loadRow(a, k.src[0], i, 0, 0, row)
		for j, x := range row {
			acc[id*t.Ne[0]+int64(j)] += x
		}
	}
	for r := int64(0); r < t.Ne[1]; r++ {
		k.storeRow(acc[r*t.Ne[0]:(r+1)*t.Ne[0]], off3(t.Nb, r, 0, 0))
	}
	return nil
}
