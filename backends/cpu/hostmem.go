package cpu

import (
	"fmt"
	"unsafe"

	"github.com/gogml/gogml/runtime"
)

// HostMemType is the buffer type of buffers made by BufferFromHostMemory:
// host memory gogml did not allocate, such as a model file's read-only
// mapping. It allocates nothing itself.
type HostMemType struct {
	name  string
	align uint64
}

var _ runtime.BufferType = (*HostMemType)(nil)

// Name is "CPU_Mapped" for read-only memory, "CPU_HostPtr" otherwise.
func (t *HostMemType) Name() string { return t.name }

// AllocBuffer fails: buffers of this type wrap memory they are given.
func (t *HostMemType) AllocBuffer(uint64) (runtime.Buffer, error) {
	return nil, fmt.Errorf("%s: buffers wrap existing memory (cpu.BufferFromHostMemory): %w", t.name, runtime.ErrUnsupported)
}

// Alignment is the alignment tensor addresses need inside the memory.
func (t *HostMemType) Alignment() uint64 { return t.align }

// MaxSize is unlimited.
func (t *HostMemType) MaxSize() uint64 { return runtime.NoMaxSize }

// AllocSize is t.NBytes().
func (t *HostMemType) AllocSize(x *runtime.Tensor) uint64 { return x.NBytes() }

// IsHost reports true.
func (t *HostMemType) IsHost() bool { return true }

// HostMemBuffer is a host buffer over memory it was given (ggml's
// ggml_backend_cpu_buffer_from_ptr): nothing is copied, so a mapped file's
// pages are read from disk when a kernel first touches them, and a file
// larger than RAM can be used. A read-only buffer refuses every write
// with an error (writing a PROT_READ mapping would fault).
type HostMemBuffer struct {
	bt       *HostMemType
	mem      []byte
	readOnly bool
	usage    runtime.BufferUsage
	release  func() error
	freed    bool
}

var _ runtime.HostBuffer = (*HostMemBuffer)(nil)

// BufferFromHostMemory wraps mem as a host buffer, without copying.
// Tensors placed in it need addresses aligned to align (a power of two; 0
// means DefaultAlignment). readOnly marks memory that must not be
// written. release, if not nil, is called once by Free (to unmap a file,
// say); the memory must stay valid until then.
func BufferFromHostMemory(mem []byte, align uint64, readOnly bool, release func() error) (*HostMemBuffer, error) {
	if align == 0 {
		align = DefaultAlignment
	}
	if !runtime.IsPow2(align) {
		return nil, fmt.Errorf("cpu: host memory buffer: alignment %d is not a power of two: %w", align, runtime.ErrAlignment)
	}
	name := "CPU_HostPtr"
	if readOnly {
		name = "CPU_Mapped"
	}
	return &HostMemBuffer{bt: &HostMemType{name: name, align: align}, mem: mem, readOnly: readOnly, release: release}, nil
}

// Type returns the buffer's type.
func (b *HostMemBuffer) Type() runtime.BufferType { return b.bt }

// Base is the address of the memory's first byte (a fake non-zero one
// when it is empty).
func (b *HostMemBuffer) Base() uint64 {
	if len(b.mem) == 0 {
		return b.bt.align
	}
	return uint64(uintptr(unsafe.Pointer(unsafe.SliceData(b.mem))))
}

// Size is len(mem).
func (b *HostMemBuffer) Size() uint64 { return uint64(len(b.mem)) }

// Usage returns the usage hint.
func (b *HostMemBuffer) Usage() runtime.BufferUsage { return b.usage }

// SetUsage sets the usage hint.
func (b *HostMemBuffer) SetUsage(u runtime.BufferUsage) { b.usage = u }

// Bytes returns the memory; nil after Free. A read-only buffer's bytes
// must not be written.
func (b *HostMemBuffer) Bytes() []byte { return b.mem }

// ReadOnly reports whether writes are refused; the CPU backend will not
// compute a node whose result lies in such a buffer.
func (b *HostMemBuffer) ReadOnly() bool { return b.readOnly }

func (b *HostMemBuffer) check(what string, write bool) error {
	if b.freed {
		return fmt.Errorf("%s buffer: %s: %w", b.bt.name, what, runtime.ErrFreed)
	}
	if write && b.readOnly {
		return fmt.Errorf("%s buffer: %s: the memory is read-only: %w", b.bt.name, what, runtime.ErrUnsupported)
	}
	return nil
}

// InitTensor checks that t lies inside the memory.
func (b *HostMemBuffer) InitTensor(t *runtime.Tensor) error {
	if err := b.check("init tensor", false); err != nil {
		return err
	}
	_, err := runtime.CheckBufferRange(b, t, 0, t.NBytes())
	return err
}

// MemsetTensor fills size bytes of t from offset with value.
func (b *HostMemBuffer) MemsetTensor(t *runtime.Tensor, value byte, offset, size uint64) error {
	if err := b.check("memset", true); err != nil {
		return err
	}
	pos, err := runtime.CheckBufferRange(b, t, offset, size)
	if err != nil {
		return err
	}
	Fill(b.mem[pos:pos+size], value)
	return nil
}

// SetTensor copies src into t's bytes from offset.
func (b *HostMemBuffer) SetTensor(t *runtime.Tensor, src []byte, offset uint64) error {
	if err := b.check("set tensor", true); err != nil {
		return err
	}
	pos, err := runtime.CheckBufferRange(b, t, offset, uint64(len(src)))
	if err != nil {
		return err
	}
	copy(b.mem[pos:], src)
	return nil
}

// GetTensor copies t's bytes from offset into dst.
func (b *HostMemBuffer) GetTensor(t *runtime.Tensor, dst []byte, offset uint64) error {
	if err := b.check("get tensor", false); err != nil {
		return err
	}
	pos, err := runtime.CheckBufferRange(b, t, offset, uint64(len(dst)))
	if err != nil {
		return err
	}
	copy(dst, b.mem[pos:pos+uint64(len(dst))])
	return nil
}

// CopyTensor copies src into dst when both are in host buffers and dst is
// writable; it reports false when it cannot.
func (b *HostMemBuffer) CopyTensor(src, dst *runtime.Tensor) (bool, error) {
	if err := b.check("copy tensor", dst.Buffer == b); err != nil {
		return false, err
	}
	sb, ok1 := src.Buffer.(runtime.HostBuffer)
	db, ok2 := dst.Buffer.(runtime.HostBuffer)
	if !ok1 || !ok2 || (src.Buffer != b && dst.Buffer != b) {
		return false, nil
	}
	return copyHost(src, dst, sb, db)
}

// copyHost copies all of src's bytes (in host buffer sb) into dst (in db),
// refusing a read-only db.
func copyHost(src, dst *runtime.Tensor, sb, db runtime.HostBuffer) (bool, error) {
	if ro, ok := db.(interface{ ReadOnly() bool }); ok && ro.ReadOnly() {
		return false, fmt.Errorf("copy to %q: %s buffer is read-only: %w", dst.Name, db.Type().Name(), runtime.ErrUnsupported)
	}
	n := src.NBytes()
	if n != dst.NBytes() {
		return false, fmt.Errorf("copy %q (%d bytes) -> %q (%d bytes): %w", src.Name, n, dst.Name, dst.NBytes(), runtime.ErrShape)
	}
	sp, err := runtime.CheckBufferRange(sb, src, 0, n)
	if err != nil {
		return false, err
	}
	dp, err := runtime.CheckBufferRange(db, dst, 0, n)
	if err != nil {
		return false, err
	}
	sm, dm := sb.Bytes(), db.Bytes()
	if uint64(len(sm)) < sp+n || uint64(len(dm)) < dp+n {
		return false, fmt.Errorf("copy %q -> %q: a buffer has no bytes there: %w", src.Name, dst.Name, runtime.ErrFreed)
	}
	copy(dm[dp:dp+n], sm[sp:sp+n])
	return true, nil
}

// Clear fills the memory with value.
func (b *HostMemBuffer) Clear(value byte) error {
	if err := b.check("clear", true); err != nil {
		return err
	}
	Fill(b.mem, value)
	return nil
}

// Reset does nothing.
func (b *HostMemBuffer) Reset() {}

// Free forgets the memory and calls release. Freeing twice is an error
// wrapping runtime.ErrFreed.
func (b *HostMemBuffer) Free() error {
	if err := b.check("free", false); err != nil {
		return err
	}
	b.freed = true
	b.mem = nil
	if b.release != nil {
		if err := b.release(); err != nil {
			return fmt.Errorf("%s buffer: release: %w", b.bt.name, err)
		}
	}
	return nil
}
