package cpu

// This file holds the backend's memory: a buffer type whose buffers are
// anonymous memory mappings, outside the Go heap, at stable addresses,
// optionally backed by transparent huge pages and locked into RAM.

import (
	"errors"
	"fmt"
	"math"
	"os"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/gogml/gogml/runtime"
)

// DefaultAlignment is the alignment of tensor offsets in host buffers when
// BufferTypeOptions.Alignment is zero.
const DefaultAlignment uint64 = 32

// hugePageSize is the size of a transparent huge page on the platforms gogml
// runs on; huge-page mappings start on a multiple of it so the kernel can
// back them with huge pages from the first byte.
const hugePageSize uint64 = 2 << 20

// ErrMemlockLimit marks an mlock that failed because the process may not
// lock that much memory (RLIMIT_MEMLOCK). Such errors also wrap
// runtime.ErrOutOfMemory.
var ErrMemlockLimit = errors.New("locked-memory limit (RLIMIT_MEMLOCK) reached")

// BufferTypeOptions configures a host buffer type. The zero value gives the
// default type: name "CPU", 32-byte alignment, no size limit, ordinary pages.
type BufferTypeOptions struct {
	// Name is the type's name. Empty means "CPU", with "_Huge" and/or
	// "_Locked" appended when HugePages or Locked is set.
	Name string
	// Alignment is the alignment of tensor offsets, a power of two. Zero
	// means DefaultAlignment. Buffers start on a multiple of it.
	Alignment uint64
	// MaxSize is an artificial limit on one buffer's size, to exercise code
	// that splits tensors across buffers. Zero means runtime.NoMaxSize.
	MaxSize uint64
	// HugePages asks the kernel to back buffers with transparent huge pages
	// (madvise MADV_HUGEPAGE). Mappings of at least one huge page start on
	// a huge-page boundary.
	HugePages bool
	// Locked locks each buffer's pages into RAM (mlock), so they are
	// resident from allocation and never swapped. Allocation fails with an
	// error wrapping ErrMemlockLimit when RLIMIT_MEMLOCK forbids it.
	Locked bool
}

// BufferType allocates host buffers. It is immutable and safe for
// concurrent use; the buffers it returns are not safe for concurrent use.
type BufferType struct {
	name      string
	align     uint64
	maxSize   uint64
	hugePages bool
	locked    bool
}

var _ runtime.BufferType = (*BufferType)(nil)

// NewBufferType returns a host buffer type configured by o. It fails when
// o.Alignment is not a power of two (runtime.ErrAlignment).
func NewBufferType(o BufferTypeOptions) (*BufferType, error) {
	bt := &BufferType{name: o.Name, align: o.Alignment, maxSize: o.MaxSize, hugePages: o.HugePages, locked: o.Locked}
	if bt.align == 0 {
		bt.align = DefaultAlignment
	}
	if !runtime.IsPow2(bt.align) {
		return nil, fmt.Errorf("cpu buffer type: alignment %d is not a power of two: %w", o.Alignment, runtime.ErrAlignment)
	}
	if bt.align > 1<<30 {
		return nil, fmt.Errorf("cpu buffer type: alignment %d is above 1 GiB: %w", o.Alignment, runtime.ErrAlignment)
	}
	if bt.maxSize == 0 {
		bt.maxSize = runtime.NoMaxSize
	}
	if bt.name == "" {
		bt.name = "CPU"
		if o.HugePages {
			bt.name += "_Huge"
		}
		if o.Locked {
			bt.name += "_Locked"
		}
	}
	return bt, nil
}

// DefaultBufferType returns the plain host buffer type: "CPU", 32-byte
// alignment, no size limit.
func DefaultBufferType() *BufferType {
	return &BufferType{name: "CPU", align: DefaultAlignment, maxSize: runtime.NoMaxSize}
}

// Name returns the type's name.
func (bt *BufferType) Name() string { return bt.name }

// Alignment returns the alignment of tensor offsets, a power of two.
func (bt *BufferType) Alignment() uint64 { return bt.align }

// MaxSize returns the largest buffer AllocBuffer gives.
func (bt *BufferType) MaxSize() uint64 { return bt.maxSize }

// AllocSize returns t.NBytes(): host memory needs no padding.
func (bt *BufferType) AllocSize(t *runtime.Tensor) uint64 { return t.NBytes() }

// IsHost reports true: the bytes are ordinary host memory.
func (bt *BufferType) IsHost() bool { return true }

// HugePages reports whether buffers ask for transparent huge pages.
func (bt *BufferType) HugePages() bool { return bt.hugePages }

// Locked reports whether buffers are locked into RAM.
func (bt *BufferType) Locked() bool { return bt.locked }

// AllocBuffer maps size bytes of fresh zeroed memory. Size 0 gives an empty
// buffer with a non-zero fake base. Failures wrap runtime.ErrOutOfMemory.
func (bt *BufferType) AllocBuffer(size uint64) (runtime.Buffer, error) {
	return bt.Alloc(size)
}

// Alloc is AllocBuffer with the concrete result type.
func (bt *BufferType) Alloc(size uint64) (*Buffer, error) {
	if size > bt.maxSize {
		return nil, fmt.Errorf("%s: %d bytes exceed the type's max size %d: %w", bt.name, size, bt.maxSize, runtime.ErrOutOfMemory)
	}
	b := &Buffer{bt: bt, size: size}
	if size == 0 {
		b.base = bt.align
		return b, nil
	}
	// Map enough to place the buffer on the boundary it needs.
	start := bt.align
	if bt.hugePages && size >= hugePageSize && start < hugePageSize {
		start = hugePageSize
	}
	page := uint64(os.Getpagesize())
	extra := uint64(0)
	if start > page {
		extra = start
	}
	if size > math.MaxInt-extra-page {
		return nil, fmt.Errorf("%s: cannot map %d bytes: %w", bt.name, size, runtime.ErrOutOfMemory)
	}
	mapLen := runtime.AlignUp(size+extra, page)
	m, err := unix.Mmap(-1, 0, int(mapLen), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil, fmt.Errorf("%s: mmap %d bytes: %v: %w", bt.name, mapLen, err, runtime.ErrOutOfMemory)
	}
	addr := uint64(uintptr(unsafe.Pointer(unsafe.SliceData(m))))
	off := runtime.AlignUp(addr, start) - addr
	b.mapping = m
	b.mem = m[off : off+size : off+size]
	b.base = addr + off
	if bt.hugePages {
		if err := adviseHugePages(m); err != nil {
			_ = unix.Munmap(m)
			return nil, fmt.Errorf("%s: madvise(MADV_HUGEPAGE): %v: %w", bt.name, err, runtime.ErrUnsupported)
		}
	}
	if bt.locked {
		if err := unix.Mlock(b.mem); err != nil {
			_ = unix.Munmap(m)
			return nil, bt.mlockError(size, err)
		}
	}
	return b, nil
}

// mlockError explains a failed mlock, naming the RLIMIT_MEMLOCK limit when
// that is the cause.
func (bt *BufferType) mlockError(size uint64, err error) error {
	if !errors.Is(err, unix.ENOMEM) && !errors.Is(err, unix.EPERM) && !errors.Is(err, unix.EAGAIN) {
		return fmt.Errorf("%s: mlock %d bytes: %v: %w", bt.name, size, err, runtime.ErrOutOfMemory)
	}
	var lim unix.Rlimit
	limit := "unknown"
	if unix.Getrlimit(unix.RLIMIT_MEMLOCK, &lim) == nil {
		if lim.Cur == unix.RLIM_INFINITY {
			limit = "unlimited"
		} else {
			limit = fmt.Sprintf("%d bytes", lim.Cur)
		}
	}
	return fmt.Errorf("%s: mlock %d bytes: %v (RLIMIT_MEMLOCK is %s; raise it with `ulimit -l`, or use an unlocked buffer type): %w: %w",
		bt.name, size, err, limit, ErrMemlockLimit, runtime.ErrOutOfMemory)
}

// Buffer is one host allocation. Its bytes stay at the same address until
// Free. Free may run concurrently with the other methods and with a
// Backend's Compute: it waits for them, and they fail with
// runtime.ErrFreed afterwards. Concurrent writes to the same bytes are the
// caller's business.
type Buffer struct {
	// mu is held for reading while the bytes are in use (the methods
	// below, a Compute node), for writing by Free while it unmaps them.
	mu      sync.RWMutex
	bt      *BufferType
	mapping []byte // the whole mapping, nil for size 0
	mem     []byte // the buffer's bytes inside the mapping
	size    uint64
	base    uint64
	usage   runtime.BufferUsage
	freed   bool
}

var _ runtime.HostBuffer = (*Buffer)(nil)

// Type returns the buffer's type.
func (b *Buffer) Type() runtime.BufferType { return b.bt }

// Base returns the address of byte 0 (a non-zero fake one for size 0).
func (b *Buffer) Base() uint64 { return b.base }

// Size returns the buffer's size in bytes.
func (b *Buffer) Size() uint64 { return b.size }

// Usage returns the usage hint.
func (b *Buffer) Usage() runtime.BufferUsage { return b.usage }

// SetUsage sets the usage hint.
func (b *Buffer) SetUsage(u runtime.BufferUsage) { b.usage = u }

// Bytes returns the buffer's memory; nil after Free. The slice must not be
// used after Free (a Backend's Compute holds the buffer while it does).
func (b *Buffer) Bytes() []byte { return b.mem }

func (b *Buffer) errFreed(what string) error {
	return fmt.Errorf("%s buffer: %s: %w", b.bt.name, what, runtime.ErrFreed)
}

// InitTensor checks that t is placed inside the buffer. Host tensors need
// no backend data.
func (b *Buffer) InitTensor(t *runtime.Tensor) error {
	b.mu.RLock()
	defer b.mu.RUnlock()
	if b.freed {
		return b.errFreed("init tensor")
	}
	_, err := runtime.CheckBufferRange(b, t, 0, t.NBytes())
	return err
}

// MemsetTensor fills size bytes of t from offset with value.
func (b *Buffer) MemsetTensor(t *runtime.Tensor, value byte, offset, size uint64) error {
	b.mu.RLock()
	defer b.mu.RUnlock()
	if b.freed {
		return b.errFreed("memset")
	}
	pos, err := runtime.CheckBufferRange(b, t, offset, size)
	if err != nil {
		return err
	}
	Fill(b.mem[pos:pos+size], value)
	return nil
}

// SetTensor copies src into t's bytes from offset.
func (b *Buffer) SetTensor(t *runtime.Tensor, src []byte, offset uint64) error {
	b.mu.RLock()
	defer b.mu.RUnlock()
	if b.freed {
		return b.errFreed("set tensor")
	}
	pos, err := runtime.CheckBufferRange(b, t, offset, uint64(len(src)))
	if err != nil {
		return err
	}
	copy(b.mem[pos:], src)
	return nil
}

// GetTensor copies t's bytes from offset into dst.
func (b *Buffer) GetTensor(t *runtime.Tensor, dst []byte, offset uint64) error {
	b.mu.RLock()
	defer b.mu.RUnlock()
	if b.freed {
		return b.errFreed("get tensor")
	}
	pos, err := runtime.CheckBufferRange(b, t, offset, uint64(len(dst)))
	if err != nil {
		return err
	}
	copy(dst, b.mem[pos:pos+uint64(len(dst))])
	return nil
}

// CopyTensor copies all of src's bytes into dst when both live in host
// buffers (runtime.HostBuffer) and one of them is b. It reports false,
// without error, when either is not host memory, so the caller falls back
// to its own path.
func (b *Buffer) CopyTensor(src, dst *runtime.Tensor) (bool, error) {
	if src.Buffer != b && dst.Buffer != b {
		return false, nil
	}
	var pins pinned
	defer pins.release()
	if err := pins.pinBuffers(src.Buffer, dst.Buffer); err != nil {
		return false, err
	}
	sb, ok := src.Buffer.(runtime.HostBuffer)
	if !ok {
		return false, nil
	}
	db, ok := dst.Buffer.(runtime.HostBuffer)
	if !ok {
		return false, nil
	}
	return copyHost(src, dst, sb, db)
}

// Clear fills the whole buffer with value.
func (b *Buffer) Clear(value byte) error {
	b.mu.RLock()
	defer b.mu.RUnlock()
	if b.freed {
		return b.errFreed("clear")
	}
	Fill(b.mem, value)
	return nil
}

// Reset does nothing: host tensors carry no backend data.
func (b *Buffer) Reset() {}

// Free unmaps the memory. Freeing twice is an error wrapping
// runtime.ErrFreed.
func (b *Buffer) Free() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.freed {
		return b.errFreed("free")
	}
	b.freed = true
	m := b.mapping
	b.mapping, b.mem = nil, nil
	if m == nil {
		return nil
	}
	if err := unix.Munmap(m); err != nil {
		return fmt.Errorf("%s buffer: munmap: %w", b.bt.name, err)
	}
	return nil
}

// pinned holds the read locks of the Buffers a node or a copy uses (at
// most MaxSrc+1 distinct ones), so that none is unmapped under it.
type pinned struct {
	bufs [runtime.MaxSrc + 1]*Buffer
	n    int
}

// pin holds the buffers of node n and of its sources.
func (p *pinned) pin(n *runtime.Tensor) error {
	if err := p.pinBuffer(n.Buffer); err != nil {
		return err
	}
	for _, s := range n.Src {
		if s != nil {
			if err := p.pinBuffer(s.Buffer); err != nil {
				return err
			}
		}
	}
	return nil
}

// pinBuffers read-locks each distinct *Buffer among bufs once (a second
// read lock of one RWMutex by one goroutine can deadlock against a waiting
// Free) and fails with runtime.ErrFreed if one was freed.
func (p *pinned) pinBuffers(bufs ...runtime.Buffer) error {
	for _, rb := range bufs {
		if err := p.pinBuffer(rb); err != nil {
			return err
		}
	}
	return nil
}

// pinBuffer is pinBuffers of one buffer: rb's *Buffer (a RepackBuffer's
// own), unless it is not one or is already held.
func (p *pinned) pinBuffer(rb runtime.Buffer) error {
	var b *Buffer
	switch x := rb.(type) {
	case *Buffer:
		b = x
	case *RepackBuffer:
		if x != nil {
			b = x.buf
		}
	}
	if b == nil {
		return nil
	}
	for _, h := range p.bufs[:p.n] {
		if h == b {
			return nil
		}
	}
	b.mu.RLock()
	p.bufs[p.n] = b
	p.n++
	if b.freed {
		return b.errFreed("in use")
	}
	return nil
}

// release drops the read locks.
func (p *pinned) release() {
	for _, b := range p.bufs[:p.n] {
		b.mu.RUnlock()
	}
	p.n = 0
}

// Fill sets every byte of p to v, at memset speed.
func Fill(p []byte, v byte) {
	if len(p) == 0 {
		return
	}
	if v == 0 {
		clear(p)
		return
	}
	// Seed a block that stays in cache by doubling, then repeat it.
	const block = 16 << 10
	p[0] = v
	n := 1
	for n < len(p) && n < block {
		n += copy(p[n:], p[:n])
	}
	for i := n; i < len(p); i += n {
		copy(p[i:], p[:n])
	}
}
