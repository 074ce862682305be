package gallocr

import (
	"fmt"

	"github.com/gogml/gogml/runtime"
)

// Tallocr is ggml's linear allocator: it places tensors one after another
// in a buffer, each at the next aligned address.
type Tallocr struct {
	buf    runtime.Buffer
	align  uint64
	offset uint64
}

// alignedOffset returns the smallest offset >= off whose address base+off
// is a multiple of align.
func alignedOffset(base, off, align uint64) uint64 {
	return off + (align-(base+off)%align)%align
}

// NewTallocr returns a linear allocator over buf.
func NewTallocr(buf runtime.Buffer) (*Tallocr, error) {
	align := buf.Type().Alignment()
	if !runtime.IsPow2(align) {
		return nil, fmt.Errorf("tallocr: %s alignment %d: %w", buf.Type().Name(), align, runtime.ErrAlignment)
	}
	return &Tallocr{buf: buf, align: align, offset: alignedOffset(buf.Base(), 0, align)}, nil
}

// Offset returns the next free offset.
func (a *Tallocr) Offset() uint64 { return a.offset }

// Alloc places t at the next aligned offset. Not enough space is an error
// wrapping runtime.ErrOutOfMemory; the allocator is unchanged then.
func (a *Tallocr) Alloc(t *runtime.Tensor) error {
	size := runtime.AlignUp(a.buf.Type().AllocSize(t), a.align)
	if a.offset > a.buf.Size() || size > a.buf.Size()-a.offset {
		return fmt.Errorf("tallocr: tensor %q needs %d bytes, %d left in the %s buffer: %w",
			t.Name, size, a.buf.Size()-min(a.offset, a.buf.Size()), a.buf.Type().Name(), runtime.ErrOutOfMemory)
	}
	if err := runtime.TensorAlloc(a.buf, t, a.offset); err != nil {
		return fmt.Errorf("tallocr: %w", err)
	}
	a.offset += size
	return nil
}
