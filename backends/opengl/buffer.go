//go:build opengl

package opengl

import (
	"fmt"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/go-gl/gl/v4.3-core/gl"
	"github.com/gogml/gogml/runtime"
)

// fakeBase is the Base of every GL buffer: buffer objects have no
// addresses, so only offsets matter. It is a multiple of any alignment a
// driver reports.
const fakeBase uint64 = 1 << 32

// maxIndexable caps buffer sizes so that 32-bit word indices in shaders
// never overflow.
const maxIndexable uint64 = 1<<32 - 4096

// bufferType is the "GL<n>" buffer type of one device.
type bufferType struct {
	dev     *device
	name    string
	align   uint64
	maxSize uint64
	block   uint64 // GL_MAX_SHADER_STORAGE_BLOCK_SIZE, capped and aligned: the most one binding may span
	mode    UploadMode
}

func newBufferType(d *device, mode UploadMode) *bufferType {
	align := d.info.SSBOOffsetAlignment
	if align < 16 {
		align = 16
	}
	for !runtime.IsPow2(align) {
		align++
	}
	block := min(d.info.MaxSSBOBlockSize, maxIndexable) &^ (align - 1)
	return &bufferType{dev: d, name: fmt.Sprintf("GL%d", d.index), align: align, maxSize: maxIndexable &^ (align - 1), block: block, mode: mode}
}

// Name returns "GL<device index>".
func (bt *bufferType) Name() string { return bt.name }

// Alignment is the SSBO offset alignment, at least 16.
func (bt *bufferType) Alignment() uint64 { return bt.align }

// MaxSize is 4 GiB less a page (32-bit byte offsets stay valid). A buffer
// larger than GL_MAX_SHADER_STORAGE_BLOCK_SIZE is bound by ranges around
// each dispatch's tensors, so one tensor (its bytes from ggml's nb
// strides) must fit in a block: SupportsOp refuses nodes whose tensors do
// not.
func (bt *bufferType) MaxSize() uint64 { return bt.maxSize }

// AllocSize is the tensor's byte count.
func (bt *bufferType) AllocSize(t *runtime.Tensor) uint64 { return t.NBytes() }

// IsHost reports false: GL buffers are not host memory in ggml's sense.
func (bt *bufferType) IsHost() bool { return false }

// AllocBuffer creates an immutable-storage buffer object of size bytes
// (rounded up to 4, the size of a shader word).
func (bt *bufferType) AllocBuffer(size uint64) (runtime.Buffer, error) {
	b := &buffer{bt: bt, size: size}
	if size == 0 {
		return b, nil
	}
	if size > bt.maxSize {
		return nil, fmt.Errorf("%s: buffer of %d bytes exceeds the device's %d-byte limit: %w", bt.name, size, bt.maxSize, runtime.ErrOutOfMemory)
	}
	store := runtime.AlignUp(size, 4)
	err := bt.dev.call(func() error {
		var id uint32
		gl.GenBuffers(1, &id)
		gl.BindBuffer(gl.SHADER_STORAGE_BUFFER, id)
		flags := uint32(gl.DYNAMIC_STORAGE_BIT)
		if bt.mode == UploadMapped {
			flags |= gl.MAP_READ_BIT | gl.MAP_WRITE_BIT | gl.MAP_PERSISTENT_BIT | gl.MAP_COHERENT_BIT
		}
		gl.BufferStorage(gl.SHADER_STORAGE_BUFFER, int(store), nil, flags)
		if err := glErrors(); err != nil {
			gl.BindBuffer(gl.SHADER_STORAGE_BUFFER, 0)
			gl.DeleteBuffers(1, &id)
			return err
		}
		if bt.mode == UploadMapped {
			p := gl.MapBufferRange(gl.SHADER_STORAGE_BUFFER, 0, int(store), gl.MAP_READ_BIT|gl.MAP_WRITE_BIT|gl.MAP_PERSISTENT_BIT|gl.MAP_COHERENT_BIT)
			if p == nil {
				gl.BindBuffer(gl.SHADER_STORAGE_BUFFER, 0)
				gl.DeleteBuffers(1, &id)
				return fmt.Errorf("%w: glMapBufferRange failed: %v", ErrGL, glErrors())
			}
			b.mapped = unsafe.Slice((*byte)(p), store)
		}
		gl.BindBuffer(gl.SHADER_STORAGE_BUFFER, 0)
		b.id = id
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("%s: allocating %d bytes: %w: %w", bt.name, size, runtime.ErrOutOfMemory, err)
	}
	return b, nil
}

// buffer is one GL buffer object.
type buffer struct {
	bt     *bufferType
	id     uint32 // 0 for an empty buffer
	size   uint64
	mapped []byte // persistent coherent mapping (UploadMapped only); C memory

	mu    sync.Mutex
	usage runtime.BufferUsage
	freed atomic.Bool

	// pin is held for reading while a caller copies through mapped, and
	// for writing by Free while it unmaps: a copy never touches a mapping
	// that Free (or, through device.mapMu, Backend.Close) is destroying.
	pin sync.RWMutex
}

// Type returns the buffer's type.
func (b *buffer) Type() runtime.BufferType { return b.bt }

// Base returns the fixed fake base address.
func (b *buffer) Base() uint64 { return fakeBase }

// Size returns the size asked for.
func (b *buffer) Size() uint64 { return b.size }

// Usage returns the usage hint.
func (b *buffer) Usage() runtime.BufferUsage {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.usage
}

// SetUsage sets the usage hint.
func (b *buffer) SetUsage(u runtime.BufferUsage) {
	b.mu.Lock()
	b.usage = u
	b.mu.Unlock()
}

func (b *buffer) live() error {
	if b.freed.Load() {
		return fmt.Errorf("%s buffer %d: %w", b.bt.name, b.id, runtime.ErrFreed)
	}
	return nil
}

// withMapping runs f on the persistent mapping while neither Free nor
// Backend.Close can unmap it. After either, it returns an error wrapping
// runtime.ErrFreed or ErrClosed and f does not run.
func (b *buffer) withMapping(f func(m []byte)) error {
	b.pin.RLock()
	defer b.pin.RUnlock()
	if err := b.live(); err != nil {
		return err
	}
	d := b.bt.dev
	d.mapMu.RLock()
	defer d.mapMu.RUnlock()
	if d.dead.Load() {
		return fmt.Errorf("%s buffer %d: %w", b.bt.name, b.id, ErrClosed)
	}
	f(b.mapped)
	return nil
}

// liveOnThread is live for code on the GL thread: Free deletes the buffer
// object on that thread too, so a buffer found live here stays live until
// the calling function returns (its id cannot yet name another buffer).
func (b *buffer) liveOnThread() error {
	if err := b.bt.dev.onThread(); err != nil {
		return err
	}
	return b.live()
}

// InitTensor checks that t lies inside the buffer; GL keeps no per-tensor
// data.
func (b *buffer) InitTensor(t *runtime.Tensor) error {
	if err := b.live(); err != nil {
		return err
	}
	_, err := runtime.CheckBufferRange(b, t, 0, t.NBytes())
	return err
}

// MemsetTensor fills size bytes of t from offset with value
// (glClearBufferSubData).
func (b *buffer) MemsetTensor(t *runtime.Tensor, value byte, offset, size uint64) error {
	if err := b.live(); err != nil {
		return err
	}
	pos, err := runtime.CheckBufferRange(b, t, offset, size)
	if err != nil || size == 0 {
		return err
	}
	return b.bt.dev.call(func() error { return b.clearRange(pos, size, value) })
}

func (b *buffer) clearRange(pos, size uint64, value byte) error {
	if err := b.liveOnThread(); err != nil {
		return err
	}
	gl.BindBuffer(gl.SHADER_STORAGE_BUFFER, b.id)
	gl.ClearBufferSubData(gl.SHADER_STORAGE_BUFFER, gl.R8UI, int(pos), int(size), gl.RED_INTEGER, gl.UNSIGNED_BYTE, unsafe.Pointer(&value))
	gl.BindBuffer(gl.SHADER_STORAGE_BUFFER, 0)
	if b.mapped != nil {
		return b.bt.dev.finish()
	}
	return nil
}

// SetTensor writes src into t's bytes from offset.
func (b *buffer) SetTensor(t *runtime.Tensor, src []byte, offset uint64) error {
	if err := b.live(); err != nil {
		return err
	}
	pos, err := runtime.CheckBufferRange(b, t, offset, uint64(len(src)))
	if err != nil || len(src) == 0 {
		return err
	}
	if b.bt.mode == UploadMapped {
		return b.withMapping(func(m []byte) { copy(m[pos:pos+uint64(len(src))], src) })
	}
	return b.bt.dev.call(func() error { return b.upload(pos, src) })
}

// upload is glBufferSubData; it runs on the GL thread.
func (b *buffer) upload(pos uint64, src []byte) error {
	if err := b.liveOnThread(); err != nil {
		return err
	}
	gl.BindBuffer(gl.SHADER_STORAGE_BUFFER, b.id)
	gl.BufferSubData(gl.SHADER_STORAGE_BUFFER, int(pos), len(src), unsafe.Pointer(&src[0]))
	gl.BindBuffer(gl.SHADER_STORAGE_BUFFER, 0)
	return nil
}

// GetTensor reads t's bytes from offset into dst.
func (b *buffer) GetTensor(t *runtime.Tensor, dst []byte, offset uint64) error {
	if err := b.live(); err != nil {
		return err
	}
	pos, err := runtime.CheckBufferRange(b, t, offset, uint64(len(dst)))
	if err != nil || len(dst) == 0 {
		return err
	}
	if b.bt.mode == UploadMapped {
		return b.withMapping(func(m []byte) { copy(dst, m[pos:pos+uint64(len(dst))]) })
	}
	return b.bt.dev.call(func() error { return b.download(pos, dst) })
}

// download is glGetBufferSubData; it runs on the GL thread.
func (b *buffer) download(pos uint64, dst []byte) error {
	if err := b.liveOnThread(); err != nil {
		return err
	}
	gl.BindBuffer(gl.SHADER_STORAGE_BUFFER, b.id)
	gl.GetBufferSubData(gl.SHADER_STORAGE_BUFFER, int(pos), len(dst), unsafe.Pointer(&dst[0]))
	gl.BindBuffer(gl.SHADER_STORAGE_BUFFER, 0)
	return nil
}

// CopyTensor copies src into dst when one of them is in this buffer: on
// the device (glCopyBufferSubData) when both are in buffers of the same
// device, or straight between the GL buffer and host memory when the other
// tensor is in a host buffer. Otherwise it reports false and the caller
// copies through host memory.
func (b *buffer) CopyTensor(src, dst *runtime.Tensor) (bool, error) {
	if err := b.live(); err != nil {
		return false, err
	}
	n := src.NBytes()
	if n != dst.NBytes() {
		return false, fmt.Errorf("copy %q (%d bytes) -> %q (%d bytes): %w", src.Name, n, dst.Name, dst.NBytes(), runtime.ErrShape)
	}
	if src.Buffer != b && dst.Buffer != b {
		return false, fmt.Errorf("copy %q -> %q: neither tensor is in this %s buffer: %w", src.Name, dst.Name, b.bt.name, runtime.ErrNotAllocated)
	}
	sb, sGL := src.Buffer.(*buffer)
	db, dGL := dst.Buffer.(*buffer)
	switch {
	case sGL && dGL && sb.bt.dev == db.bt.dev:
		if err := sb.live(); err != nil {
			return false, err
		}
		if err := db.live(); err != nil {
			return false, err
		}
		spos, err := runtime.CheckBufferRange(sb, src, 0, n)
		if err != nil {
			return false, err
		}
		dpos, err := runtime.CheckBufferRange(db, dst, 0, n)
		if err != nil || n == 0 {
			return err == nil, err
		}
		return true, b.bt.dev.call(func() error {
			if err := sb.liveOnThread(); err != nil {
				return err
			}
			if err := db.liveOnThread(); err != nil {
				return err
			}
			gl.BindBuffer(gl.COPY_READ_BUFFER, sb.id)
			gl.BindBuffer(gl.COPY_WRITE_BUFFER, db.id)
			gl.CopyBufferSubData(gl.COPY_READ_BUFFER, gl.COPY_WRITE_BUFFER, int(spos), int(dpos), int(n))
			gl.BindBuffer(gl.COPY_READ_BUFFER, 0)
			gl.BindBuffer(gl.COPY_WRITE_BUFFER, 0)
			if db.mapped != nil {
				return b.bt.dev.finish()
			}
			return nil
		})
	case dGL && db == b:
		hb, ok := src.Buffer.(runtime.HostBuffer)
		if !ok {
			return false, nil
		}
		spos, err := runtime.CheckBufferRange(hb, src, 0, n)
		if err != nil {
			return false, err
		}
		return true, b.SetTensor(dst, hb.Bytes()[spos:spos+n], 0)
	case sGL && sb == b:
		hb, ok := dst.Buffer.(runtime.HostBuffer)
		if !ok {
			return false, nil
		}
		dpos, err := runtime.CheckBufferRange(hb, dst, 0, n)
		if err != nil {
			return false, err
		}
		return true, b.GetTensor(src, hb.Bytes()[dpos:dpos+n], 0)
	}
	return false, nil
}

// Clear fills the whole buffer with value.
func (b *buffer) Clear(value byte) error {
	if err := b.live(); err != nil {
		return err
	}
	if b.id == 0 {
		return nil
	}
	return b.bt.dev.call(func() error { return b.clearRange(0, runtime.AlignUp(b.size, 4), value) })
}

// Reset does nothing: GL keeps no per-tensor data.
func (b *buffer) Reset() {}

// Free deletes the buffer object. Freeing twice is an error wrapping
// runtime.ErrFreed. It waits for SetTensor and GetTensor calls copying
// through the buffer's mapping to finish; later ones return ErrFreed.
func (b *buffer) Free() error {
	b.pin.Lock()
	defer b.pin.Unlock()
	if b.freed.Swap(true) {
		return fmt.Errorf("%s buffer: %w", b.bt.name, runtime.ErrFreed)
	}
	if b.id == 0 {
		return nil
	}
	err := b.bt.dev.call(func() error {
		if b.mapped != nil {
			gl.BindBuffer(gl.SHADER_STORAGE_BUFFER, b.id)
			gl.UnmapBuffer(gl.SHADER_STORAGE_BUFFER)
			gl.BindBuffer(gl.SHADER_STORAGE_BUFFER, 0)
		}
		gl.DeleteBuffers(1, &b.id)
		return nil
	})
	b.mapped = nil
	if err == ErrClosed {
		// The context is gone, and the buffer with it.
		return nil
	}
	return err
}
