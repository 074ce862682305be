package cpukernels

import (
	"encoding/binary"
	"fmt"

	"github.com/gogml/gogml/runtime"
)

// HostMem keeps tensors' bytes in ordinary Go memory, keyed by base
// tensor: the simplest memory for running the reference kernels (tests,
// the conformance suite's expected results). A view resolves to its base's
// bytes from the view offset on.
type HostMem map[*runtime.Tensor][]byte

// Alloc gives t's base tensor zeroed memory of its NBytes (if it has none
// yet) and returns t's bytes.
func (m HostMem) Alloc(t *runtime.Tensor) []byte {
	base := t.Base()
	if _, ok := m[base]; !ok {
		m[base] = make([]byte, base.NBytes())
	}
	b, _ := m.Mem(t)
	return b
}

// Mem resolves t to its bytes; it has the signature of Mem. A tensor
// whose base has no memory gives an error wrapping runtime.ErrNotAllocated.
func (m HostMem) Mem(t *runtime.Tensor) ([]byte, error) {
	base := t.Base()
	b, ok := m[base]
	if !ok {
		return nil, fmt.Errorf("tensor %q: %w", t.Name, runtime.ErrNotAllocated)
	}
	off := uint64(0)
	if t.IsView() {
		off = t.ViewOffs
	}
	if off > uint64(len(b)) || t.NBytes() > uint64(len(b))-off {
		return nil, fmt.Errorf("tensor %q: %d bytes at %d outside its base's %d: %w", t.Name, t.NBytes(), off, len(b), runtime.ErrOutOfBounds)
	}
	return b[off:], nil
}

// ComputeGraph runs every node of g with the reference kernels on one
// goroutine, allocating host memory for any tensor that has none.
func (m HostMem) ComputeGraph(g *runtime.Graph) error {
	for _, l := range g.Leafs() {
		m.Alloc(l)
	}
	for _, n := range g.Nodes() {
		m.Alloc(n)
		for _, s := range n.Src {
			if s != nil {
				m.Alloc(s)
			}
		}
		if err := Compute(n, m.Mem, 0, 1); err != nil {
			return err
		}
	}
	return nil
}

// SetF32 stores vals as t's elements in row-major order, converting to t's
// type (float or q4_0/q8_0). t must be contiguous, and vals must hold
// exactly t's element count.
func (m HostMem) SetF32(t *runtime.Tensor, vals []float32) error {
	if !t.IsContiguous() || int64(len(vals)) != t.Nelements() {
		return fmt.Errorf("tensor %s: set %d values: %w", t, len(vals), runtime.ErrShape)
	}
	return FromFloat(t.Type, vals, m.Alloc(t))
}

// F32 returns t's elements in row-major order as float32 (any layout of a
// float type; contiguous rows for q4_0/q8_0).
func (m HostMem) F32(t *runtime.Tensor) ([]float32, error) {
	b, err := m.Mem(t)
	if err != nil {
		return nil, err
	}
	return ReadF32(t, b)
}

// ReadF32 returns the elements of t, whose bytes are b, in row-major
// order as float32. Float types may have any strides; q4_0 and q8_0 need
// dense rows; i32 is converted.
func ReadF32(t *runtime.Tensor, b []byte) ([]float32, error) {
	out := make([]float32, 0, t.Nelements())
	row := make([]float32, t.Ne[0])
	for r := int64(0); r < t.Nrows(); r++ {
		i1, i2, i3 := rowCoords(t.Ne, r)
		switch {
		case IsRowType(t.Type):
			if t.Type.IsQuantized() && !t.IsContiguousRows() {
				return nil, fmt.Errorf("tensor %s: rows not dense: %w", t, runtime.ErrUnsupported)
			}
			if err := loadRow(t, b, i1, i2, i3, row); err != nil {
				return nil, err
			}
		case t.Type == runtime.TypeI32:
			o := off3(t.Nb, i1, i2, i3)
			for i := range row {
				row[i] = float32(int32(binary.LittleEndian.Uint32(b[o+uint64(i)*t.Nb[0]:])))
			}
		default:
			return nil, fmt.Errorf("tensor %s: read as f32: %w", t, runtime.ErrUnsupported)
		}
		out = append(out, row...)
	}
	return out, nil
}
