package runtime

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"strings"
)

// Limits of ggml's tensor struct.
const (
	MaxDims     = 4  // dimensions of a tensor
	MaxSrc      = 10 // sources of a tensor
	MaxOpParams = 64 // bytes of op parameters
	MaxName     = 64 // bytes of a tensor name in ggml (gogml does not truncate)
)

// TensorFlag marks a tensor's role in a graph.
type TensorFlag int32

// Tensor flags, with ggml's values.
const (
	FlagInput  TensorFlag = 1 << 0 // set by the user before compute
	FlagOutput TensorFlag = 1 << 1 // read after compute: never overwritten
	FlagParam  TensorFlag = 1 << 2 // trainable parameter: a node, not a leaf
	FlagLoss   TensorFlag = 1 << 3 // the loss of a training graph
)

var flagNames = []struct {
	f    TensorFlag
	name string
}{{FlagInput, "input"}, {FlagOutput, "output"}, {FlagParam, "param"}, {FlagLoss, "loss"}}

// String lists the flags by name, separated by '|'.
func (f TensorFlag) String() string {
	var parts []string
	for _, fn := range flagNames {
		if f&fn.f != 0 {
			parts = append(parts, fn.name)
		}
	}
	return strings.Join(parts, "|")
}

// Tensor is ggml's tensor: an n-dimensional array description, the op that
// computes it from its sources, and its place in memory.
//
// A tensor has memory when Buffer is set (then it lives at Buffer.Base() +
// Offset) or when Preallocated says its memory is held outside gogml's
// buffers. A view shares the memory of ViewSrc, which is always a base
// (non-view) tensor, at ViewOffs bytes.
type Tensor struct {
	Name     string
	Type     Type
	Ne       [MaxDims]int64  // elements per dimension
	Nb       [MaxDims]uint64 // byte stride per dimension
	Op       Op
	OpParams [MaxOpParams / 4]int32
	Flags    TensorFlag
	Src      [MaxSrc]*Tensor

	ViewSrc  *Tensor
	ViewOffs uint64

	// Buffer and Offset are the tensor's place once allocated.
	Buffer Buffer
	Offset uint64
	// Preallocated marks memory that exists outside gogml's buffers
	// (ggml: data != NULL without a backend buffer).
	Preallocated bool
	// indexHint is the number the last Graph.Index over this tensor gave
	// it: a hint that Index checks before trusting (read and written
	// atomically, since graphs sharing tensors may be indexed at once).
	indexHint int32
	// Extra holds per-tensor backend data attached by Buffer.InitTensor.
	Extra any
	// Custom is the Go function of a MAP_CUSTOM1/2/3 or CUSTOM node (see
	// Context.MapCustom1); nil elsewhere, and on nodes that came over RPC
	// or from graph JSON, which cannot carry functions.
	Custom *CustomOp
}

// IsView reports whether t shares another tensor's memory.
func (t *Tensor) IsView() bool { return t.ViewSrc != nil }

// Base returns the tensor whose memory t uses: its ViewSrc, or t itself.
func (t *Tensor) Base() *Tensor {
	if t.ViewSrc != nil {
		return t.ViewSrc
	}
	return t
}

// HasData reports whether t (or the tensor it views) has memory.
func (t *Tensor) HasData() bool {
	b := t.Base()
	return t.Buffer != nil || b.Buffer != nil || b.Preallocated || t.Preallocated
}

// HasFlag reports whether all of f are set on t.
func (t *Tensor) HasFlag(f TensorFlag) bool { return t.Flags&f == f }

// SetFlag sets f on t.
func (t *Tensor) SetFlag(f TensorFlag) { t.Flags |= f }

// SetInput marks t as a graph input (allocated before any node).
func (t *Tensor) SetInput() { t.Flags |= FlagInput }

// SetOutput marks t as a graph output (never freed or reused).
func (t *Tensor) SetOutput() { t.Flags |= FlagOutput }

// NumSrc returns the index one past the last non-nil source.
func (t *Tensor) NumSrc() int {
	n := 0
	for i, s := range t.Src {
		if s != nil {
			n = i + 1
		}
	}
	return n
}

// Nelements returns the number of elements.
func (t *Tensor) Nelements() int64 { return t.Ne[0] * t.Ne[1] * t.Ne[2] * t.Ne[3] }

// Nrows returns the number of rows (elements / ne[0]).
func (t *Tensor) Nrows() int64 { return t.Ne[1] * t.Ne[2] * t.Ne[3] }

// NDims returns the number of dimensions, ignoring trailing ones of size 1
// (at least 1).
func (t *Tensor) NDims() int {
	for i := MaxDims - 1; i >= 1; i-- {
		if t.Ne[i] > 1 {
			return i + 1
		}
	}
	return 1
}

// NBytes returns the bytes the tensor spans, exactly as ggml computes them.
func (t *Tensor) NBytes() uint64 {
	if t.Type < 0 || t.Type >= TypeCount {
		return 0
	}
	tr := &typeTable[t.Type]
	if tr.BlockSize == 0 {
		return 0
	}
	var n uint64
	if tr.BlockSize == 1 {
		n = tr.TypeSize
		for i := 0; i < MaxDims; i++ {
			n += uint64(t.Ne[i]-1) * t.Nb[i]
		}
		return n
	}
	n = uint64(t.Ne[0]) * t.Nb[0] / uint64(tr.BlockSize)
	for i := 1; i < MaxDims; i++ {
		n += uint64(t.Ne[i]-1) * t.Nb[i]
	}
	return n
}

// RowSize returns the bytes of one contiguous row of t.
func (t *Tensor) RowSize() uint64 { return t.Type.RowSize(t.Ne[0]) }

// ContiguousStrides returns the strides of a contiguous tensor of type typ
// and shape ne (for shapes whose strides overflow, the strides up to the
// overflow; tensors made by a Context or the loader never have them).
func ContiguousStrides(typ Type, ne [MaxDims]int64) [MaxDims]uint64 {
	nb, _ := contiguousStrides(typ, ne)
	return nb
}

// IsContiguous reports whether t's elements are stored densely in ggml's
// order (ggml_is_contiguous).
func (t *Tensor) IsContiguous() bool { return t.isContiguousN(0) }

// IsContiguousRows reports whether each row is dense (dimension 0 only).
func (t *Tensor) IsContiguousRows() bool { return t.Nb[0] == t.Type.Size() }

// isContiguousN follows ggml_is_contiguous_n: dimensions of size 1 are
// skipped, and the first n dimensions after 0 may have gaps.
func (t *Tensor) isContiguousN(n int) bool {
	next := t.Type.Size()
	if t.Ne[0] != t.Type.BlockSize() && t.Nb[0] != next {
		return false
	}
	next *= uint64(t.Ne[0] / t.Type.BlockSize())
	for i := 1; i < MaxDims; i++ {
		if t.Ne[i] != 1 {
			if i > n {
				if t.Nb[i] != next {
					return false
				}
				next *= uint64(t.Ne[i])
			} else {
				next = uint64(t.Ne[i]) * t.Nb[i]
			}
		}
	}
	return true
}

// IsTransposed reports whether dimension 0 has a larger stride than 1.
func (t *Tensor) IsTransposed() bool { return t.Nb[0] > t.Nb[1] }

// IsPermuted reports whether the strides are not in increasing order.
func (t *Tensor) IsPermuted() bool {
	return t.Nb[0] > t.Nb[1] || t.Nb[1] > t.Nb[2] || t.Nb[2] > t.Nb[3]
}

// SameShape reports whether a and b have equal ne.
func SameShape(a, b *Tensor) bool { return a.Ne == b.Ne }

// SameLayout reports whether a and b have equal type, ne and nb (the
// allocator's test for in-place reuse).
func SameLayout(a, b *Tensor) bool { return a.Type == b.Type && a.Ne == b.Ne && a.Nb == b.Nb }

// CanRepeat reports whether b can be broadcast to a's shape (each of a's
// dimensions a multiple of b's).
func CanRepeat(b, a *Tensor) bool {
	for i := 0; i < MaxDims; i++ {
		if b.Ne[i] == 0 || a.Ne[i]%b.Ne[i] != 0 {
			return false
		}
	}
	return true
}

// Addr returns the device address of t's first byte (Buffer.Base() + Offset).
func (t *Tensor) Addr() (uint64, error) {
	if t.Buffer == nil {
		return 0, fmt.Errorf("tensor %q: %w", t.Name, ErrNotAllocated)
	}
	return t.Buffer.Base() + t.Offset, nil
}

// OpParamI32 returns op parameter i as an int32.
func (t *Tensor) OpParamI32(i int) int32 { return t.OpParams[i] }

// OpParamF32 returns op parameter i reinterpreted as a float32.
func (t *Tensor) OpParamF32(i int) float32 { return math.Float32frombits(uint32(t.OpParams[i])) }

// SetOpParamI32 stores v as op parameter i.
func (t *Tensor) SetOpParamI32(i int, v int32) { t.OpParams[i] = v }

// SetOpParamF32 stores the bits of v as op parameter i.
func (t *Tensor) SetOpParamF32(i int, v float32) { t.OpParams[i] = int32(math.Float32bits(v)) }

// OpParamBytes returns the op parameters as ggml's little-endian bytes.
func (t *Tensor) OpParamBytes() []byte {
	b := make([]byte, MaxOpParams)
	for i, p := range t.OpParams {
		binary.LittleEndian.PutUint32(b[4*i:], uint32(p))
	}
	return b
}

// UnaryOp returns the unary function of an OpUnary tensor.
func (t *Tensor) UnaryOp() UnaryOp { return UnaryOp(t.OpParams[0]) }

// String describes t briefly: name, op, type and shape.
func (t *Tensor) String() string {
	return fmt.Sprintf("%q (%s %s %v)", t.Name, t.Op, t.Type, t.Ne[:t.NDims()])
}

// checkShape validates element counts and that the tensor's byte span fits
// in 64 bits.
func checkShape(typ Type, ne [MaxDims]int64, nb [MaxDims]uint64) error {
	if !typ.Valid() {
		return fmt.Errorf("%w: %d", ErrUnknownType, int32(typ))
	}
	for i, n := range ne {
		if n < 1 {
			return fmt.Errorf("%w: ne[%d] = %d, want at least 1", ErrShape, i, n)
		}
	}
	if ne[0]%typ.BlockSize() != 0 {
		return fmt.Errorf("%w: ne[0] = %d is not a multiple of %s's block size %d", ErrShape, ne[0], typ, typ.BlockSize())
	}
	// Element count and byte span must fit in 63 bits.
	var count uint64 = 1
	for _, n := range ne {
		hi, lo := bits.Mul64(count, uint64(n))
		if hi != 0 || lo > math.MaxInt64 {
			return fmt.Errorf("%w: %d elements in %v", ErrOverflow, count, ne)
		}
		count = lo
	}
	span := typ.Size()
	if typ.BlockSize() > 1 {
		hi, lo := bits.Mul64(uint64(ne[0]/typ.BlockSize()), nb[0])
		if hi != 0 {
			return fmt.Errorf("%w: row of %d elements", ErrOverflow, ne[0])
		}
		span = lo
	} else {
		hi, lo := bits.Mul64(uint64(ne[0]-1), nb[0])
		if hi != 0 {
			return fmt.Errorf("%w: ne[0]*nb[0]", ErrOverflow)
		}
		var c uint64
		span, c = bits.Add64(span, lo, 0)
		if c != 0 {
			return fmt.Errorf("%w: tensor bytes", ErrOverflow)
		}
	}
	for i := 1; i < MaxDims; i++ {
		hi, lo := bits.Mul64(uint64(ne[i]-1), nb[i])
		if hi != 0 {
			return fmt.Errorf("%w: (ne[%d]-1)*nb[%d]", ErrOverflow, i, i)
		}
		var c uint64
		span, c = bits.Add64(span, lo, 0)
		if c != 0 || span > math.MaxInt64 {
			return fmt.Errorf("%w: tensor bytes", ErrOverflow)
		}
	}
	return nil
}
