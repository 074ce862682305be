package cpukernels

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/gogml/gogml/runtime"
)

// Mem resolves a tensor to its bytes: the returned slice starts at the
// tensor's first byte and holds at least t.NBytes() bytes. Views resolve to
// their base's memory at the view offset.
type Mem func(t *runtime.Tensor) ([]byte, error)

// Supports reports whether Compute implements node t with its sources'
// types, returning nil if so and otherwise an error wrapping
// runtime.ErrUnsupported that names the tensor. View ops and NONE are
// supported (they compute nothing).
func Supports(t *runtime.Tensor) error {
	if t == nil {
		return fmt.Errorf("nil tensor: %w", runtime.ErrUnsupported)
	}
	if why := unsupported(t); why != "" {
		return fmt.Errorf("tensor %s: %s: %w", t, why, runtime.ErrUnsupported)
	}
	return nil
}

func srcOK(t *runtime.Tensor, n int) string {
	for i := 0; i < n; i++ {
		if t.Src[i] == nil {
			return fmt.Sprintf("source %d missing", i)
		}
	}
	return ""
}

// unsupported returns why t cannot be computed, or "".
func unsupported(t *runtime.Tensor) string {
	s0, s1 := t.Src[0], t.Src[1]
	floatSame := func() string {
		if why := srcOK(t, 1); why != "" {
			return why
		}
		if !IsFloat(t.Type) || s0.Type != t.Type || s0.Ne != t.Ne {
			return "want f32, f16 or bf16 source and result of one type and shape"
		}
		return ""
	}
	switch t.Op {
	case runtime.OpNone, runtime.OpView, runtime.OpReshape, runtime.OpPermute, runtime.OpTranspose:
		return ""
	case runtime.OpDup, runtime.OpCont, runtime.OpCpy:
		if why := srcOK(t, 1); why != "" {
			return why
		}
		if s0.Nelements() != t.Nelements() {
			return "element counts differ"
		}
		switch {
		case IsFloat(s0.Type) && CanQuantize(t.Type):
			if t.Type.IsQuantized() && !t.IsContiguousRows() {
				return "quantized result rows must be dense"
			}
			return ""
		case s0.Type.IsQuantized() && IsRowType(s0.Type) && (s0.Type == t.Type || CanQuantize(t.Type)):
			if s0.Ne[0] != t.Ne[0] || !s0.IsContiguousRows() || !t.IsContiguousRows() {
				return "copy from a quantized type needs equal, dense rows"
			}
			return ""
		case s0.Type == t.Type && t.Type.BlockSize() == 1:
			return ""
		case (s0.Type == runtime.TypeF32 && t.Type == runtime.TypeI32) || (s0.Type == runtime.TypeI32 && t.Type == runtime.TypeF32):
			return ""
		}
		return fmt.Sprintf("copy %s to %s", s0.Type, t.Type)
	case runtime.OpAdd, runtime.OpSub, runtime.OpMul, runtime.OpDiv:
		if why := floatSame(); why != "" {
			return why
		}
		if !IsFloat(s1.Type) || !runtime.CanRepeat(s1, t) {
			return "b must be f32, f16 or bf16 and broadcastable to a"
		}
		return ""
	case runtime.OpAdd1:
		if why := floatSame(); why != "" {
			return why
		}
		if !IsFloat(s1.Type) || !s1.IsScalar() {
			return "b must be an f32, f16 or bf16 scalar"
		}
		return ""
	case runtime.OpScale, runtime.OpSqr, runtime.OpSqrt, runtime.OpLog, runtime.OpClamp,
		runtime.OpNorm, runtime.OpRmsNorm, runtime.OpDiagMaskInf:
		return floatSame()
	case runtime.OpUnary:
		if u := t.UnaryOp(); UnaryFuncOf(t) == nil {
			return fmt.Sprintf("unary %s", u)
		}
		return floatSame()
	case runtime.OpSumRows, runtime.OpMean:
		if why := srcOK(t, 1); why != "" {
			return why
		}
		if !IsFloat(s0.Type) || !IsFloat(t.Type) || t.Ne != [4]int64{1, s0.Ne[1], s0.Ne[2], s0.Ne[3]} {
			return "want float source and a result of one element per row"
		}
		return ""
	case runtime.OpRepeat:
		if why := srcOK(t, 1); why != "" {
			return why
		}
		if s0.Type != t.Type || t.Type.BlockSize() != 1 || !runtime.CanRepeat(s0, t) {
			return "want a non-block type and a result shape that repeats the source"
		}
		return ""
	case runtime.OpConcat:
		if why := srcOK(t, 2); why != "" {
			return why
		}
		dim := t.OpParamI32(0)
		if s0.Type != t.Type || s1.Type != t.Type || dim < 0 || dim > 3 {
			return "want sources and result of one type"
		}
		if bs := t.Type.BlockSize(); bs < 1 || s0.Ne[0]%bs != 0 || s1.Ne[0]%bs != 0 {
			return "rows must be whole blocks"
		}
		for d := 0; d < 4; d++ {
			want := s0.Ne[d]
			if d == int(dim) {
				want += s1.Ne[d]
			} else if s1.Ne[d] != s0.Ne[d] {
				return "source shapes differ"
			}
			if t.Ne[d] != want {
				return "result shape does not join the sources"
			}
		}
		return ""
	case runtime.OpMulMat:
		if why := srcOK(t, 2); why != "" {
			return why
		}
		if !IsRowType(s0.Type) || !IsFloat(s1.Type) || t.Type != runtime.TypeF32 {
			return "want a f32/f16/bf16/q4_0/q8_0, b f32/f16/bf16, result f32"
		}
		if !s0.IsContiguousRows() || s0.Ne[0] != s1.Ne[0] || s1.Ne[2]%s0.Ne[2] != 0 || s1.Ne[3]%s0.Ne[3] != 0 ||
			t.Ne != [4]int64{s0.Ne[1], s1.Ne[1], s1.Ne[2], s1.Ne[3]} {
			return "shapes do not multiply (or a's rows are not dense)"
		}
		return ""
	case runtime.OpGetRows:
		if why := srcOK(t, 2); why != "" {
			return why
		}
		if s1.Type != runtime.TypeI32 {
			return "indices must be i32"
		}
		if t.Ne != [4]int64{s0.Ne[0], s1.Ne[0], s1.Ne[1], s1.Ne[2]} || s0.Ne[2] != s1.Ne[1] || s0.Ne[3] != s1.Ne[2] || s1.Ne[3] != 1 {
			return "shapes do not fit"
		}
		switch {
		case s0.Type == runtime.TypeI32 && t.Type == runtime.TypeI32:
			return ""
		case IsRowType(s0.Type) && IsFloat(t.Type):
			if s0.Type.IsQuantized() && !s0.IsContiguousRows() {
				return "quantized rows must be dense"
			}
			return ""
		}
		return fmt.Sprintf("rows of %s into %s", s0.Type, t.Type)
	case runtime.OpSoftMax:
		if why := srcOK(t, 1); why != "" {
			return why
		}
		if s0.Type != runtime.TypeF32 || t.Type != runtime.TypeF32 || s0.Ne != t.Ne {
			return "want f32 source and result of one shape"
		}
		if m := s1; m != nil {
			if (m.Type != runtime.TypeF32 && m.Type != runtime.TypeF16) || m.Ne[0] != t.Ne[0] || m.Ne[1] < t.Ne[1] ||
				t.Ne[2]%m.Ne[2] != 0 || t.Ne[3]%m.Ne[3] != 0 {
				return "mask must be f32 or f16 and fit the source"
			}
		} else if t.OpParamF32(1) > 0 {
			return "max_bias > 0 needs a mask"
		}
		if sk := t.Src[2]; sk != nil && (sk.Type != runtime.TypeF32 || sk.Ne[0] != t.Ne[2]) {
			return "sinks must be f32 with one per index of dimension 2"
		}
		return ""
	case runtime.OpSoftMaxBack, runtime.OpSiluBack, runtime.OpRmsNormBack:
		if why := srcOK(t, 2); why != "" {
			return why
		}
		if t.Type != runtime.TypeF32 || s0.Type != runtime.TypeF32 || s1.Type != runtime.TypeF32 || s0.Ne != t.Ne || s1.Ne != t.Ne {
			return "want f32 sources and result of one shape"
		}
		if t.Op == runtime.OpSoftMaxBack && t.OpParamF32(1) != 0 {
			return "max_bias must be 0"
		}
		return ""
	case runtime.OpRope, runtime.OpRopeBack:
		if why := floatSame(); why != "" {
			return why
		}
		if t.Type == runtime.TypeBF16 {
			return "rope of bf16"
		}
		nDims, mode := t.OpParamI32(1), t.OpParamI32(2)
		npos := t.Ne[2]
		if mode&runtime.RopeMrope != 0 {
			npos *= 4
		}
		if s1 == nil || s1.Type != runtime.TypeI32 || s1.Ne[0] < npos {
			return "positions must be i32 with one (four for multi-section modes) per index of dimension 2"
		}
		if why := ropeModeOK(t); why != "" {
			return why
		}
		if nDims <= 0 || nDims%2 != 0 || int64(nDims) > t.Ne[0] || t.Ne[0]%2 != 0 {
			return fmt.Sprintf("n_dims %d with ne[0] %d", nDims, t.Ne[0])
		}
		if ff := t.Src[2]; ff != nil && (ff.Type != runtime.TypeF32 || ff.Ne[0] < int64(nDims/2)) {
			return "freq factors must be f32 with n_dims/2 elements"
		}
		return ""
	}
	return unsupported2(t)
}

// RowRange splits n rows into nth near-equal parts and returns part ith,
// [r0, r1), as ggml's kernels do.
func RowRange(n int64, ith, nth int) (r0, r1 int64) {
	if nth < 1 {
		nth = 1
	}
	dr := (n + int64(nth) - 1) / int64(nth)
	r0 = dr * int64(ith)
	r1 = min(r0+dr, n)
	if r0 > n {
		r0 = n
	}
	return r0, r1
}

// rowCoords splits row index r of shape ne into (i1, i2, i3).
func rowCoords(ne [4]int64, r int64) (i1, i2, i3 int64) {
	return r % ne[1], (r / ne[1]) % ne[2], r / (ne[1] * ne[2])
}

func off3(nb [4]uint64, i1, i2, i3 int64) uint64 {
	return uint64(i1)*nb[1] + uint64(i2)*nb[2] + uint64(i3)*nb[3]
}

// Compute runs node t with the reference kernels: part ith of nth, where
// the parts split t's rows (each part may run on its own goroutine; the
// parts write disjoint rows). mem resolves t and its sources to bytes.
// View ops and NONE do nothing. Unsupported nodes (see Supports) and bad
// data (a row index out of range) give errors naming the tensor.
func Compute(t *runtime.Tensor, mem Mem, ith, nth int) error {
	if err := Supports(t); err != nil {
		return err
	}
	if t.Op == runtime.OpNone || t.Op.IsViewOp() {
		return nil
	}
	if nth < 1 || ith < 0 || ith >= nth {
		return fmt.Errorf("tensor %s: part %d of %d: %w", t, ith, nth, runtime.ErrShape)
	}
	k := kernel{t: t}
	var err error
	if k.dst, err = resolve(mem, t); err != nil {
		return err
	}
	for i := range t.Src {
		if s := t.Src[i]; s != nil {
			if k.src[i], err = resolve(mem, s); err != nil {
				return err
			}
		}
	}
	if ownSplit(t.Op) {
		return k.computeOwnSplit(ith, nth)
	}
	r0, r1 := RowRange(t.Nrows(), ith, nth)
	if r0 >= r1 {
		return nil
	}
	switch t.Op {
	case runtime.OpDup, runtime.OpCont, runtime.OpCpy:
		return k.dup(r0, r1)
	case runtime.OpAdd, runtime.OpSub, runtime.OpMul, runtime.OpDiv:
		k.binary(r0, r1)
	case runtime.OpAdd1:
		s := loadF(t.Src[1].Type, k.src[1], 0)
		k.map1(r0, r1, func(x float32) float32 { return x + s })
	case runtime.OpScale:
		s, b := t.OpParamF32(0), t.OpParamF32(1) // ggml_scale_bias: x*s + b
		if b == 0 {
			k.map1(r0, r1, func(x float32) float32 { return x * s })
		} else {
			k.map1(r0, r1, func(x float32) float32 { return x*s + b })
		}
	case runtime.OpSqr:
		k.map1(r0, r1, func(x float32) float32 { return x * x })
	case runtime.OpSqrt:
		k.map1(r0, r1, func(x float32) float32 { return float32(math.Sqrt(float64(x))) })
	case runtime.OpLog:
		k.map1(r0, r1, func(x float32) float32 { return float32(math.Log(float64(x))) })
	case runtime.OpClamp:
		lo, hi := t.OpParamF32(0), t.OpParamF32(1)
		k.map1(r0, r1, func(x float32) float32 { return Clamp(x, lo, hi) })
	case runtime.OpUnary:
		k.map1(r0, r1, UnaryFuncOf(t))
	case runtime.OpSumRows, runtime.OpMean:
		k.sumRows(r0, r1)
	case runtime.OpRepeat:
		k.repeat(r0, r1)
	case runtime.OpConcat:
		k.concat(r0, r1)
	case runtime.OpNorm, runtime.OpRmsNorm:
		k.norm(r0, r1)
	case runtime.OpMulMat:
		return k.mulMat(r0, r1)
	case runtime.OpGetRows:
		return k.getRows(r0, r1)
	case runtime.OpDiagMaskInf:
		k.diagMaskInf(r0, r1)
	case runtime.OpSoftMax:
		k.softMax(r0, r1)
	case runtime.OpSoftMaxBack:
		k.softMaxBack(r0, r1)
	case runtime.OpRope, runtime.OpRopeBack:
		k.rope(r0, r1)
	case runtime.OpSiluBack:
		k.siluBack(r0, r1)
	case runtime.OpRmsNormBack:
		k.rmsNormBack(r0, r1)
	default:
		return k.compute2(r0, r1)
	}
	return nil
}

// resolve gets t's bytes and checks they cover t.NBytes().
func resolve(mem Mem, t *runtime.Tensor) ([]byte, error) {
	b, err := mem(t)
	if err != nil {
		return nil, err
	}
	if n := t.NBytes(); uint64(len(b)) < n {
		return nil, fmt.Errorf("tensor %s: memory of %d bytes, needs %d: %w", t, len(b), n, runtime.ErrOutOfBounds)
	}
	return b, nil
}

// kernel holds one node's tensors and their bytes.
type kernel struct {
	t   *runtime.Tensor
	dst []byte
	src [runtime.MaxSrc][]byte
}

// map1 applies f element-wise from source 0 to the result; each element
// is read before it is written, so the result may alias the source.
func (k *kernel) map1(r0, r1 int64, f func(float32) float32) {
	t, s := k.t, k.t.Src[0]
	for r := r0; r < r1; r++ {
		i1, i2, i3 := rowCoords(t.Ne, r)
		do, so := off3(t.Nb, i1, i2, i3), off3(s.Nb, i1, i2, i3)
		for i0 := int64(0); i0 < t.Ne[0]; i0++ {
			v := loadF(s.Type, k.src[0], so+uint64(i0)*s.Nb[0])
			storeF(t.Type, k.dst, do+uint64(i0)*t.Nb[0], f(v))
		}
	}
}

// binary computes ADD, SUB, MUL, DIV with source 1 repeated over source 0.
func (k *kernel) binary(r0, r1 int64) {
	t, a, b := k.t, k.t.Src[0], k.t.Src[1]
	var f func(x, y float32) float32
	switch t.Op {
	case runtime.OpAdd:
		f = func(x, y float32) float32 { return x + y }
	case runtime.OpSub:
		f = func(x, y float32) float32 { return x - y }
	case runtime.OpMul:
		f = func(x, y float32) float32 { return x * y }
	default:
		f = func(x, y float32) float32 { return x / y }
	}
	for r := r0; r < r1; r++ {
		i1, i2, i3 := rowCoords(t.Ne, r)
		do, ao := off3(t.Nb, i1, i2, i3), off3(a.Nb, i1, i2, i3)
		bo := off3(b.Nb, i1%b.Ne[1], i2%b.Ne[2], i3%b.Ne[3])
		for i0 := int64(0); i0 < t.Ne[0]; i0++ {
			x := loadF(a.Type, k.src[0], ao+uint64(i0)*a.Nb[0])
			y := loadF(b.Type, k.src[1], bo+uint64(i0%b.Ne[0])*b.Nb[0])
			storeF(t.Type, k.dst, do+uint64(i0)*t.Nb[0], f(x, y))
		}
	}
}

// flatCoords splits flat element index i of shape ne into coordinates.
func flatCoords(ne [4]int64, i int64) (i0, i1, i2, i3 int64) {
	i0 = i % ne[0]
	i /= ne[0]
	i1 = i % ne[1]
	i /= ne[1]
	i2 = i % ne[2]
	return i0, i1, i2, i / ne[2]
}

// dup copies source 0 into the result in row-major element order,
// converting types; shapes may differ when element counts agree.
func (k *kernel) dup(r0, r1 int64) error {
	t, s := k.t, k.t.Src[0]
	row := make([]float32, t.Ne[0])
	switch {
	case s.Type.IsQuantized():
		// Equal, dense rows: row r of the result is row r of the source.
		for r := r0; r < r1; r++ {
			i1, i2, i3 := rowCoords(t.Ne, r)
			j1, j2, j3 := rowCoords(s.Ne, r)
			so, do := off3(s.Nb, j1, j2, j3), off3(t.Nb, i1, i2, i3)
			n := s.Type.RowSize(s.Ne[0])
			if s.Type == t.Type {
				copy(k.dst[do:do+n], k.src[0][so:so+n])
				continue
			}
			if err := ToFloat(s.Type, k.src[0][so:so+n], row); err != nil {
				return fmt.Errorf("tensor %s: %w", t, err)
			}
			k.storeRow(row, do)
		}
		return nil
	case IsFloat(s.Type) && IsRowType(t.Type):
		for r := r0; r < r1; r++ {
			i1, i2, i3 := rowCoords(t.Ne, r)
			for i0 := range row {
				j0, j1, j2, j3 := flatCoords(s.Ne, r*t.Ne[0]+int64(i0))
				row[i0] = loadF(s.Type, k.src[0], uint64(j0)*s.Nb[0]+off3(s.Nb, j1, j2, j3))
			}
			if err := k.storeRow(row, off3(t.Nb, i1, i2, i3)); err != nil {
				return err
			}
		}
		return nil
	}
	if s.Type != t.Type { // f32 <-> i32: C's conversions (truncation toward 0)
		for r := r0; r < r1; r++ {
			i1, i2, i3 := rowCoords(t.Ne, r)
			do := off3(t.Nb, i1, i2, i3)
			for i0 := int64(0); i0 < t.Ne[0]; i0++ {
				j0, j1, j2, j3 := flatCoords(s.Ne, r*t.Ne[0]+i0)
				so := uint64(j0)*s.Nb[0] + off3(s.Nb, j1, j2, j3)
				d := do + uint64(i0)*t.Nb[0]
				v := binary.LittleEndian.Uint32(k.src[0][so:])
				if s.Type == runtime.TypeF32 {
					v = uint32(f32ToI32(math.Float32frombits(v)))
				} else {
					v = math.Float32bits(float32(int32(v)))
				}
				binary.LittleEndian.PutUint32(k.dst[d:], v)
			}
		}
		return nil
	}
	// Same non-block type: copy element bytes.
	es := t.Type.Size()
	for r := r0; r < r1; r++ {
		i1, i2, i3 := rowCoords(t.Ne, r)
		do := off3(t.Nb, i1, i2, i3)
		for i0 := int64(0); i0 < t.Ne[0]; i0++ {
			j0, j1, j2, j3 := flatCoords(s.Ne, r*t.Ne[0]+i0)
			so := uint64(j0)*s.Nb[0] + off3(s.Nb, j1, j2, j3)
			d := do + uint64(i0)*t.Nb[0]
			copy(k.dst[d:d+es], k.src[0][so:so+es])
		}
	}
	return nil
}

// f32ToI32 is C's (int32_t) conversion as x86 computes it: truncation
// toward 0, and INT32_MIN for NaN and values out of range.
func f32ToI32(x float32) int32 {
	if !(x > -2147483904 && x < 2147483648) { // out of range or NaN
		return math.MinInt32
	}
	return int32(x)
}

// storeRow writes one row of float32 values at byte do of the result,
// element by element for float types and as blocks for quantized ones.
func (k *kernel) storeRow(row []float32, do uint64) error {
	t := k.t
	if t.Type.IsQuantized() {
		n := t.Type.RowSize(int64(len(row)))
		// ggml's CPU ops write through the CPU type traits' from_float.
		if err := FromFloatCPU(t.Type, row, k.dst[do:do+n]); err != nil {
			return fmt.Errorf("tensor %s: %w", t, err)
		}
		return nil
	}
	for i, v := range row {
		storeF(t.Type, k.dst, do+uint64(i)*t.Nb[0], v)
	}
	return nil
}

// loadRow reads row (i1, i2, i3) of tensor s (bytes b) into row.
func loadRow(s *runtime.Tensor, b []byte, i1, i2, i3 int64, row []float32) error {
	so := off3(s.Nb, i1, i2, i3)
	if s.Type.IsQuantized() {
		return ToFloat(s.Type, b[so:so+s.Type.RowSize(s.Ne[0])], row)
	}
	for i := range row {
		row[i] = loadF(s.Type, b, so+uint64(i)*s.Nb[0])
	}
	return nil
}

func (k *kernel) sumRows(r0, r1 int64) {
	t, s := k.t, k.t.Src[0]
	for r := r0; r < r1; r++ {
		i1, i2, i3 := rowCoords(t.Ne, r)
		so := off3(s.Nb, i1, i2, i3)
		var sum float64
		for i0 := int64(0); i0 < s.Ne[0]; i0++ {
			sum += float64(loadF(s.Type, k.src[0], so+uint64(i0)*s.Nb[0]))
		}
		v := float32(sum)
		if t.Op == runtime.OpMean {
			v /= float32(s.Ne[0])
		}
		storeF(t.Type, k.dst, off3(t.Nb, i1, i2, i3), v)
	}
}

func (k *kernel) repeat(r0, r1 int64) {
	t, s := k.t, k.t.Src[0]
	es := t.Type.Size()
	for r := r0; r < r1; r++ {
		i1, i2, i3 := rowCoords(t.Ne, r)
		do := off3(t.Nb, i1, i2, i3)
		so := off3(s.Nb, i1%s.Ne[1], i2%s.Ne[2], i3%s.Ne[3])
		for i0 := int64(0); i0 < t.Ne[0]; i0++ {
			d, o := do+uint64(i0)*t.Nb[0], so+uint64(i0%s.Ne[0])*s.Nb[0]
			copy(k.dst[d:d+es], k.src[0][o:o+es])
		}
	}
}

func (k *kernel) concat(r0, r1 int64) {
	t, a, b := k.t, k.t.Src[0], k.t.Src[1]
	dim := int(t.OpParamI32(0))
	// Rows move in whole blocks (elements of a non-block type), as
	// ggml's concat of any type does; a's extent along dim in those units:
	es, bs := t.Type.Size(), t.Type.BlockSize()
	split := a.Ne[dim]
	if dim == 0 {
		split /= bs
	}
	for r := r0; r < r1; r++ {
		i1, i2, i3 := rowCoords(t.Ne, r)
		for i0 := int64(0); i0 < t.Ne[0]/bs; i0++ {
			idx := [4]int64{i0, i1, i2, i3}
			src, bytes := a, k.src[0]
			if idx[dim] >= split {
				idx[dim] -= split
				src, bytes = b, k.src[1]
			}
			o := uint64(idx[0])*src.Nb[0] + off3(src.Nb, idx[1], idx[2], idx[3])
			d := uint64(i0)*t.Nb[0] + off3(t.Nb, i1, i2, i3)
			copy(k.dst[d:d+es], bytes[o:o+es])
		}
	}
}

// norm computes NORM and RMS_NORM row by row, reading the whole row before
// writing it.
func (k *kernel) norm(r0, r1 int64) {
	t, s := k.t, k.t.Src[0]
	eps := t.OpParamF32(0)
	row := make([]float32, t.Ne[0])
	n := float64(len(row))
	for r := r0; r < r1; r++ {
		i1, i2, i3 := rowCoords(t.Ne, r)
		loadRow(s, k.src[0], i1, i2, i3, row) // float types: cannot fail
		if t.Op == runtime.OpNorm {
			var sum float64
			for _, v := range row {
				sum += float64(v)
			}
			mean := float32(sum / n)
			var sum2 float64
			for i, v := range row {
				row[i] = v - mean
				sum2 += float64(row[i]) * float64(row[i])
			}
			scale := float32(1 / math.Sqrt(float64(float32(sum2/n)+eps)))
			for i := range row {
				row[i] *= scale
			}
		} else {
			var sum float64
			for _, v := range row {
				sum += float64(v) * float64(v)
			}
			scale := float32(1 / math.Sqrt(float64(float32(sum/n)+eps)))
			for i := range row {
				row[i] *= scale
			}
		}
		k.storeRow(row, off3(t.Nb, i1, i2, i3))
	}
}

// mulMat computes rows of the result: row (i1, i2, i3) holds the dot
// products of row (i1, i2, i3) of b with every row of the matching matrix
// of a (mulMatRow, shared with MUL_MAT_ID).
func (k *kernel) mulMat(r0, r1 int64) error {
	t, a, b := k.t, k.t.Src[0], k.t.Src[1]
	brow := make([]float32, b.Ne[0])
	arow := make([]float32, a.Ne[0])
	out := make([]float32, t.Ne[0])
	r2, r3 := b.Ne[2]/a.Ne[2], b.Ne[3]/a.Ne[3]
	for r := r0; r < r1; r++ {
		i1, i2, i3 := rowCoords(t.Ne, r)
		loadRow(b, k.src[1], i1, i2, i3, brow)
		if err := k.mulMatRow(a, k.src[0], i2/r2, i3/r3, brow, arow, out); err != nil {
			return err
		}
		k.storeRow(out, off3(t.Nb, i1, i2, i3))
	}
	return nil
}

func (k *kernel) getRows(r0, r1 int64) error {
	t, a, b := k.t, k.t.Src[0], k.t.Src[1]
	row := make([]float32, a.Ne[0])
	for r := r0; r < r1; r++ {
		i1, i2, i3 := rowCoords(t.Ne, r)
		idx := int64(int32(binary.LittleEndian.Uint32(k.src[1][off3(b.Nb, i2, i3, 0)+uint64(i1)*b.Nb[0]:])))
		if idx < 0 || idx >= a.Ne[1] {
			return fmt.Errorf("tensor %s: row index %d at (%d, %d, %d) of %q outside [0, %d): %w",
				t, idx, i1, i2, i3, b.Name, a.Ne[1], runtime.ErrOutOfBounds)
		}
		do := off3(t.Nb, i1, i2, i3)
		if a.Type == runtime.TypeI32 {
			so := off3(a.Nb, idx, i2, i3)
			for i0 := int64(0); i0 < a.Ne[0]; i0++ {
				d, o := do+uint64(i0)*t.Nb[0], so+uint64(i0)*a.Nb[0]
				copy(k.dst[d:d+4], k.src[0][o:o+4])
			}
			continue
		}
		if err := loadRow(a, k.src[0], idx, i2, i3, row); err != nil {
			return fmt.Errorf("tensor %s: %w", t, err)
		}
		k.storeRow(row, do)
	}
	return nil
}

func (k *kernel) diagMaskInf(r0, r1 int64) {
	t, s := k.t, k.t.Src[0]
	nPast := int64(t.OpParamI32(0))
	inf := float32(math.Inf(-1))
	for r := r0; r < r1; r++ {
		i1, i2, i3 := rowCoords(t.Ne, r)
		do, so := off3(t.Nb, i1, i2, i3), off3(s.Nb, i1, i2, i3)
		for i0 := int64(0); i0 < t.Ne[0]; i0++ {
			v := loadF(s.Type, k.src[0], so+uint64(i0)*s.Nb[0])
			if i0 > nPast+i1 {
				v = inf
			}
			storeF(t.Type, k.dst, do+uint64(i0)*t.Nb[0], v)
		}
	}
}

// AlibiSlope returns the ALiBi slope of head h of nHead heads for maxBias,
// as ggml's soft_max computes it (1 when maxBias is 0).
func AlibiSlope(maxBias float32, h, nHead int64) float32 {
	if maxBias <= 0 {
		return 1
	}
	nLog2 := int64(1) << uint(math.Floor(math.Log2(float64(nHead))))
	m0 := float32(math.Pow(2, float64(-maxBias/float32(nLog2))))
	m1 := float32(math.Pow(2, float64(-(maxBias/2)/float32(nLog2))))
	if h < nLog2 {
		return float32(math.Pow(float64(m0), float64(h+1)))
	}
	return float32(math.Pow(float64(m1), float64(2*(h-nLog2)+1)))
}

// softMax computes soft_max_ext row by row: w = x*scale + slope*mask, then
// exp(w - max) / sum, the sum accumulated in float64.
func (k *kernel) softMax(r0, r1 int64) {
	t, s, m := k.t, k.t.Src[0], k.t.Src[1]
	scale, maxBias := t.OpParamF32(0), t.OpParamF32(1)
	w := make([]float32, t.Ne[0])
	for r := r0; r < r1; r++ {
		i1, i2, i3 := rowCoords(t.Ne, r)
		loadRow(s, k.src[0], i1, i2, i3, w)
		slope := AlibiSlope(maxBias, i2, t.Ne[2])
		var mo uint64
		if m != nil {
			mo = off3(m.Nb, i1, i2%m.Ne[2], i3%m.Ne[3])
		}
		mx := float32(math.Inf(-1))
		for i := range w {
			w[i] *= scale
			if m != nil {
				w[i] += slope * loadF(m.Type, k.src[1], mo+uint64(i)*m.Nb[0])
			}
			mx = max(mx, w[i])
		}
		var sink float32
		if sk := t.Src[2]; sk != nil { // sinks: one more logit per head, as if in the row
			sink = loadF(sk.Type, k.src[2], uint64(i2)*sk.Nb[0])
			mx = max(mx, sink)
		}
		var sum float64

		for i, v := range w {
			e := float32(0)
			if v != float32(math.Inf(-1)) {
				e = float32(math.Exp(float64(v - mx)))
			}
			w[i] = e
			sum += float64(e)
		}
		if t.Src[2] != nil {
			sum += float64(float32(math.Exp(float64(sink - mx))))
		}
		inv := float32(1 / sum)
		for i := range w {
			w[i] *= inv
		}
		k.storeRow(w, off3(t.Nb, i1, i2, i3))
	}
}

// softMaxBack computes scale*y*(dy - dot(y, dy)) per row, with dy source 0
// and y source 1.
func (k *kernel) softMaxBack(r0, r1 int64) {
	t, g, y := k.t, k.t.Src[0], k.t.Src[1]
	scale := t.OpParamF32(0)
	dy := make([]float32, t.Ne[0])
	yv := make([]float32, t.Ne[0])
	for r := r0; r < r1; r++ {
		i1, i2, i3 := rowCoords(t.Ne, r)
		loadRow(g, k.src[0], i1, i2, i3, dy)
		loadRow(y, k.src[1], i1, i2, i3, yv)
		var dot float64
		for i := range dy {
			dot += float64(dy[i]) * float64(yv[i])
		}
		d := float32(dot)
		for i := range dy {
			dy[i] = scale * yv[i] * (dy[i] - d)
		}
		k.storeRow(dy, off3(t.Nb, i1, i2, i3))
	}
}

func (k *kernel) siluBack(r0, r1 int64) {
	t, g, x := k.t, k.t.Src[0], k.t.Src[1]
	dy := make([]float32, t.Ne[0])
	xv := make([]float32, t.Ne[0])
	for r := r0; r < r1; r++ {
		i1, i2, i3 := rowCoords(t.Ne, r)
		loadRow(g, k.src[0], i1, i2, i3, dy)
		loadRow(x, k.src[1], i1, i2, i3, xv)
		for i, v := range xv {
			s := float32(1 / (1 + math.Exp(-float64(v))))
			dy[i] = dy[i] * s * (1 + v*(1-s))
		}
		k.storeRow(dy, off3(t.Nb, i1, i2, i3))
	}
}

// rmsNormBack computes the gradient of RMS norm per row: with dz source 0
// and x source 1, dx = (dz - x·sum(x·dz)/(sum(x²)+eps·n)) / sqrt(mean(x²)+eps).
func (k *kernel) rmsNormBack(r0, r1 int64) {
	t, g, x := k.t, k.t.Src[0], k.t.Src[1]
	eps := float64(t.OpParamF32(0))
	dz := make([]float32, t.Ne[0])
	xv := make([]float32, t.Ne[0])
	n := float64(len(dz))
	for r := r0; r < r1; r++ {
		i1, i2, i3 := rowCoords(t.Ne, r)
		loadRow(g, k.src[0], i1, i2, i3, dz)
		loadRow(x, k.src[1], i1, i2, i3, xv)
		var sxx, sxdz float64
		for i, v := range xv {
			sxx += float64(v) * float64(v)
			sxdz += float64(v) * float64(dz[i])
		}
		meanEps := sxx/n + eps
		sumEps := sxx + eps*n
		rrms := float32(1 / math.Sqrt(meanEps))
		c := float32(-sxdz / sumEps)
		for i, v := range xv {
			dz[i] = (dz[i] + v*c) * rrms
		}
		k.storeRow(dz, off3(t.Nb, i1, i2, i3))
	}
}
