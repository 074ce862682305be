package runtime

import (
	"errors"
	"fmt"
	"math"
)

// NoMaxSize is the MaxSize of a buffer type without a per-allocation limit.
const NoMaxSize uint64 = math.MaxUint64

// BufferUsage says what a buffer holds; backends may use it as a hint.
type BufferUsage int

// Buffer usages, as in ggml.
const (
	UsageAny BufferUsage = iota
	UsageWeights
	UsageCompute
)

// String names the usage.
func (u BufferUsage) String() string {
	switch u {
	case UsageWeights:
		return "weights"
	case UsageCompute:
		return "compute"
	}
	return "any"
}

// BufferType is a kind of memory on one device. It allocates buffers and
// says how tensors are laid out in them.
type BufferType interface {
	// Name is short and unique per device: "CPU", "CUDA0", "CUDA_Host", "GL0".
	Name() string
	// AllocBuffer returns a new buffer of at least size bytes. Size 0 is
	// allowed and gives a valid empty buffer. Out of memory is an error
	// wrapping ErrOutOfMemory.
	AllocBuffer(size uint64) (Buffer, error)
	// Alignment is a power of two; every tensor offset handed out in this
	// type's buffers is a multiple of it.
	Alignment() uint64
	// MaxSize is the largest single buffer the device gives, NoMaxSize if
	// unlimited.
	MaxSize() uint64
	// AllocSize is the bytes t needs in this memory, at least t.NBytes().
	AllocSize(t *Tensor) uint64
	// IsHost reports whether the bytes are ordinary host memory in ggml's
	// layout, readable by CPU code.
	IsHost() bool
}

// Buffer is one allocation of a BufferType.
type Buffer interface {
	Type() BufferType
	// Base is the device address of byte 0. Memory without addresses uses a
	// fixed non-zero fake base; only offsets matter there.
	Base() uint64
	Size() uint64
	Usage() BufferUsage
	SetUsage(BufferUsage)
	// InitTensor is called when a tensor is placed in, or a view bound to,
	// the buffer.
	InitTensor(t *Tensor) error
	// MemsetTensor fills size bytes of t from offset with value.
	MemsetTensor(t *Tensor, value byte, offset, size uint64) error
	// SetTensor copies src into t's bytes starting at offset.
	SetTensor(t *Tensor, src []byte, offset uint64) error
	// GetTensor copies t's bytes starting at offset into dst.
	GetTensor(t *Tensor, dst []byte, offset uint64) error
	// CopyTensor copies src into dst without a host round trip, where one
	// of the two lies in this buffer and the other in any buffer (so both
	// ends get a chance: CopyTensorData asks dst's buffer, then src's). It
	// reports false when it cannot; callers then copy through host memory.
	CopyTensor(src, dst *Tensor) (bool, error)
	// Clear fills the whole buffer with value.
	Clear(value byte) error
	// Reset drops per-tensor backend data.
	Reset()
	// Free releases the memory. Using a freed buffer, or freeing it twice,
	// is an error wrapping ErrFreed.
	Free() error
}

// HostBuffer is a Buffer whose bytes are directly addressable host memory.
type HostBuffer interface {
	Buffer
	// Bytes returns the buffer's memory. The slice stays valid until Free.
	Bytes() []byte
}

// DeviceInfo describes the device behind a backend.
type DeviceInfo struct {
	Name        string
	Description string
	FreeMemory  uint64
	TotalMemory uint64
}

// Backend is an execution stream on one device.
type Backend interface {
	Name() string
	Device() DeviceInfo
	DefaultBufferType() BufferType
	// SupportsOp reports whether Compute can run node t with its sources'
	// types and layouts.
	SupportsOp(t *Tensor) bool
	// SupportsBufferType reports whether the backend computes on tensors in
	// buffers of bt.
	SupportsBufferType(bt BufferType) bool
	// Compute runs every node of g in order. Tensors must have memory.
	Compute(g *Graph) error
	// Close releases the backend's resources.
	Close() error
}

// AsyncBackend is implemented by backends with asynchronous transfers.
type AsyncBackend interface {
	Backend
	SetTensorAsync(t *Tensor, src []byte, offset uint64) error
	GetTensorAsync(t *Tensor, dst []byte, offset uint64) error
	Synchronize() error
}

// CheckRange validates that [offset, offset+size) lies inside t's bytes.
// Backends call it at the top of every tensor byte access.
func CheckRange(t *Tensor, offset, size uint64) error {
	n := t.NBytes()
	if offset > n || size > n-offset {
		return fmt.Errorf("tensor %q: bytes [%d, %d+%d) outside its %d bytes: %w", t.Name, offset, offset, size, n, ErrOutOfBounds)
	}
	return nil
}

// CheckBufferRange validates that t's bytes [offset, offset+size) lie inside
// buf, and that t is placed in buf. It returns the byte position in buf.
func CheckBufferRange(buf Buffer, t *Tensor, offset, size uint64) (uint64, error) {
	if err := CheckRange(t, offset, size); err != nil {
		return 0, err
	}
	if t.Buffer != buf {
		return 0, fmt.Errorf("tensor %q is not in buffer %s: %w", t.Name, buf.Type().Name(), ErrNotAllocated)
	}
	pos := t.Offset + offset
	if pos < t.Offset || pos > buf.Size() || size > buf.Size()-pos {
		return 0, fmt.Errorf("tensor %q: bytes [%d, +%d) outside buffer of %d bytes: %w", t.Name, pos, size, buf.Size(), ErrOutOfBounds)
	}
	return pos, nil
}

// FormatBytes writes a byte count for people, with a binary unit:
// "512 B", "1.5 KiB", "26.22 MiB", "1.00 GiB".
func FormatBytes(n uint64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.2f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// IsPow2 reports whether a is a power of two.
func IsPow2(a uint64) bool { return a != 0 && a&(a-1) == 0 }

// AlignUp rounds n up to a multiple of align, a power of two.
func AlignUp(n, align uint64) uint64 { return (n + align - 1) &^ (align - 1) }

// PadTo rounds n up to a multiple of pad (any positive number).
func PadTo(n, pad uint64) uint64 {
	if pad <= 1 {
		return n
	}
	return (n + pad - 1) / pad * pad
}

// TensorAlloc places t at offset bytes into buf after checking that the
// address is aligned and that the tensor's alloc size fits, then calls
// InitTensor.
func TensorAlloc(buf Buffer, t *Tensor, offset uint64) error {
	if t.IsView() {
		return fmt.Errorf("tensor %q: %w: a view gets its place from its base (use ViewInit)", t.Name, ErrView)
	}
	if t.Buffer != nil || t.Preallocated {
		return fmt.Errorf("tensor %q already has memory", t.Name)
	}
	bt := buf.Type()
	align := bt.Alignment()
	if !IsPow2(align) {
		return fmt.Errorf("buffer type %s: alignment %d: %w", bt.Name(), align, ErrAlignment)
	}
	if (buf.Base()+offset)%align != 0 {
		return fmt.Errorf("tensor %q: address %#x not aligned to %d: %w", t.Name, buf.Base()+offset, align, ErrAlignment)
	}
	size := bt.AllocSize(t)
	if offset > buf.Size() || size > buf.Size()-offset {
		return fmt.Errorf("tensor %q: %d bytes at offset %d do not fit in %s buffer of %d bytes: %w", t.Name, size, offset, bt.Name(), buf.Size(), ErrOutOfBounds)
	}
	t.Buffer, t.Offset = buf, offset
	if err := buf.InitTensor(t); err != nil {
		t.Buffer, t.Offset = nil, 0
		return fmt.Errorf("tensor %q: init: %w", t.Name, err)
	}
	return nil
}

// ViewInit binds view t to its base's buffer at the base's offset plus
// ViewOffs, then calls InitTensor.
func ViewInit(t *Tensor) error {
	if t.ViewSrc == nil {
		return fmt.Errorf("tensor %q: %w: not a view", t.Name, ErrView)
	}
	base := t.ViewSrc
	if base.Buffer == nil {
		return fmt.Errorf("view %q of %q: %w", t.Name, base.Name, ErrNotAllocated)
	}
	t.Buffer, t.Offset = base.Buffer, base.Offset+t.ViewOffs
	if err := t.Buffer.InitTensor(t); err != nil {
		t.Buffer, t.Offset = nil, 0
		return fmt.Errorf("view %q: init: %w", t.Name, err)
	}
	return nil
}

// SetTensorData writes src into t's bytes at offset through t's buffer.
func SetTensorData(t *Tensor, src []byte, offset uint64) error {
	if t.Buffer == nil {
		return fmt.Errorf("tensor %q: %w", t.Name, ErrNotAllocated)
	}
	return t.Buffer.SetTensor(t, src, offset)
}

// GetTensorData reads t's bytes at offset into dst through t's buffer.
func GetTensorData(t *Tensor, dst []byte, offset uint64) error {
	if t.Buffer == nil {
		return fmt.Errorf("tensor %q: %w", t.Name, ErrNotAllocated)
	}
	return t.Buffer.GetTensor(t, dst, offset)
}

// CopyTensorData copies src's bytes into dst, on the device when dst's
// buffer can, else through host memory. Both must have equal NBytes.
func CopyTensorData(src, dst *Tensor) error {
	if src.Buffer == nil || dst.Buffer == nil {
		return fmt.Errorf("copy %q -> %q: %w", src.Name, dst.Name, ErrNotAllocated)
	}
	n := src.NBytes()
	if n != dst.NBytes() {
		return fmt.Errorf("copy %q (%d bytes) -> %q (%d bytes): %w", src.Name, n, dst.Name, dst.NBytes(), ErrShape)
	}
	ok, err := dst.Buffer.CopyTensor(src, dst)
	if err != nil || ok {
		return err
	}
	if ok, err = src.Buffer.CopyTensor(src, dst); err != nil || ok {
		return err
	}
	tmp := make([]byte, n)
	if err := src.Buffer.GetTensor(src, tmp, 0); err != nil {
		return err
	}
	return dst.Buffer.SetTensor(dst, tmp, 0)
}

// MultiBuffer groups the buffers made when a context's tensors are split
// across several allocations. Each tensor lives in one of the parts; Free,
// Clear and SetUsage apply to all of them.
type MultiBuffer struct {
	parts []Buffer
	freed bool
}

// NewMultiBuffer groups parts, which must be non-empty and of one type.
func NewMultiBuffer(parts []Buffer) (*MultiBuffer, error) {
	if len(parts) == 0 {
		return nil, errors.New("multi-buffer: no parts")
	}
	for _, p := range parts[1:] {
		if p.Type() != parts[0].Type() {
			return nil, errors.New("multi-buffer: parts of different buffer types")
		}
	}
	return &MultiBuffer{parts: append([]Buffer(nil), parts...)}, nil
}

// Parts returns the buffers of the group.
func (m *MultiBuffer) Parts() []Buffer { return m.parts }

// Type returns the parts' buffer type.
func (m *MultiBuffer) Type() BufferType { return m.parts[0].Type() }

// Base returns the first part's base; tensors live in the parts.
func (m *MultiBuffer) Base() uint64 { return m.parts[0].Base() }

// Size returns the total size of the parts.
func (m *MultiBuffer) Size() uint64 {
	var s uint64
	for _, p := range m.parts {
		s += p.Size()
	}
	return s
}

// Usage returns the first part's usage.
func (m *MultiBuffer) Usage() BufferUsage { return m.parts[0].Usage() }

// SetUsage sets the usage of every part.
func (m *MultiBuffer) SetUsage(u BufferUsage) {
	for _, p := range m.parts {
		p.SetUsage(u)
	}
}

func (m *MultiBuffer) owner(t *Tensor) (Buffer, error) {
	if m.freed {
		return nil, ErrFreed
	}
	for _, p := range m.parts {
		if t.Buffer == p {
			return p, nil
		}
	}
	return nil, fmt.Errorf("tensor %q is not in this multi-buffer: %w", t.Name, ErrNotAllocated)
}

// InitTensor forwards to the part that holds t.
func (m *MultiBuffer) InitTensor(t *Tensor) error {
	p, err := m.owner(t)
	if err != nil {
		return err
	}
	return p.InitTensor(t)
}

// MemsetTensor forwards to the part that holds t.
func (m *MultiBuffer) MemsetTensor(t *Tensor, v byte, offset, size uint64) error {
	p, err := m.owner(t)
	if err != nil {
		return err
	}
	return p.MemsetTensor(t, v, offset, size)
}

// SetTensor forwards to the part that holds t.
func (m *MultiBuffer) SetTensor(t *Tensor, src []byte, offset uint64) error {
	p, err := m.owner(t)
	if err != nil {
		return err
	}
	return p.SetTensor(t, src, offset)
}

// GetTensor forwards to the part that holds t.
func (m *MultiBuffer) GetTensor(t *Tensor, dst []byte, offset uint64) error {
	p, err := m.owner(t)
	if err != nil {
		return err
	}
	return p.GetTensor(t, dst, offset)
}

// CopyTensor forwards to the part that holds dst.
func (m *MultiBuffer) CopyTensor(src, dst *Tensor) (bool, error) {
	p, err := m.owner(dst)
	if err != nil {
		return false, err
	}
	return p.CopyTensor(src, dst)
}

// Clear fills every part.
func (m *MultiBuffer) Clear(v byte) error {
	if m.freed {
		return ErrFreed
	}
	for _, p := range m.parts {
		if err := p.Clear(v); err != nil {
			return err
		}
	}
	return nil
}

// Reset resets every part.
func (m *MultiBuffer) Reset() {
	for _, p := range m.parts {
		p.Reset()
	}
}

// Free frees every part; the first error is returned after all are tried.
func (m *MultiBuffer) Free() error {
	if m.freed {
		return fmt.Errorf("multi-buffer: %w", ErrFreed)
	}
	m.freed = true
	var first error
	for _, p := range m.parts {
		if err := p.Free(); err != nil && first == nil {
			first = err
		}
	}
	return first
}
