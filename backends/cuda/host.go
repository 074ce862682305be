package cuda

import (
	"fmt"
	"sync"
	"unsafe"

	"github.com/gogml/gogml/runtime"
)

// HostAlignment is the alignment of tensor offsets in pinned host buffers,
// the CPU backend's alignment, so that CPU kernels can use them.
const HostAlignment uint64 = 32

// HostBufferType is page-locked ("pinned") host memory from the CUDA
// driver ("CUDA_Host"): ordinary host memory for CPU code, and fast
// (DMA) transfers to and from the device. Its buffers implement
// runtime.HostBuffer. It is safe for concurrent use.
type HostBufferType struct {
	dev *device
}

// Name returns "CUDA_Host".
func (bt *HostBufferType) Name() string { return "CUDA_Host" }

// Alignment returns HostAlignment.
func (bt *HostBufferType) Alignment() uint64 { return HostAlignment }

// MaxSize returns runtime.NoMaxSize.
func (bt *HostBufferType) MaxSize() uint64 { return runtime.NoMaxSize }

// AllocSize returns t's bytes.
func (bt *HostBufferType) AllocSize(t *runtime.Tensor) uint64 { return t.NBytes() }

// IsHost reports true.
func (bt *HostBufferType) IsHost() bool { return true }

// AllocBuffer allocates size bytes of pinned host memory
// (cuMemHostAlloc, portable across contexts). Failure is an error matching
// ErrOutOfMemory.
func (bt *HostBufferType) AllocBuffer(size uint64) (runtime.Buffer, error) {
	n := size
	if n == 0 {
		n = 1
	}
	// Pinned memory is resident RAM: refuse more than the machine has
	// before the driver tries to lock it (which for absurd sizes may fail
	// with another code than out-of-memory, or page the machine to a halt).
	if ram := physicalMemory(); n > 1<<62 || (ram != 0 && n > ram) {
		return nil, fmt.Errorf("CUDA_Host: %d bytes, more than the machine's %d bytes of RAM: %w", size, ram, ErrOutOfMemory)
	}
	var p unsafe.Pointer
	err := bt.dev.do(func() error {
		return bt.dev.drv.check("cuMemHostAlloc", bt.dev.drv.cuMemHostAlloc(&p, n, memHostAllocPortable|memHostAllocDeviceMap))
	})
	if err != nil {
		return nil, fmt.Errorf("CUDA_Host: allocating %d bytes: %w", size, err)
	}
	if p == nil {
		return nil, fmt.Errorf("CUDA_Host: cuMemHostAlloc returned no memory: %w", ErrOutOfMemory)
	}
	bt.dev.retain()
	return &hostBuffer{bt: bt, p: p, mem: unsafe.Slice((*byte)(p), size)}, nil
}

// hostBuffer is one cuMemHostAlloc allocation.
type hostBuffer struct {
	bt    *HostBufferType
	p     unsafe.Pointer // outside the Go heap
	mem   []byte
	mu    sync.Mutex
	usage runtime.BufferUsage
	freed bool
}

func (b *hostBuffer) Type() runtime.BufferType { return b.bt }

// Base returns the host address of byte 0 (with unified addressing, also
// its device address).
func (b *hostBuffer) Base() uint64 { return uint64(uintptr(b.p)) }

func (b *hostBuffer) Size() uint64 { return uint64(len(b.mem)) }

func (b *hostBuffer) Usage() runtime.BufferUsage { return b.usage }

func (b *hostBuffer) SetUsage(u runtime.BufferUsage) { b.usage = u }

// Bytes returns the pinned memory; valid until Free.
func (b *hostBuffer) Bytes() []byte { return b.mem }

func (b *hostBuffer) live() error {
	if b.freed {
		return fmt.Errorf("CUDA_Host buffer: %w", runtime.ErrFreed)
	}
	return nil
}

func (b *hostBuffer) InitTensor(t *runtime.Tensor) error { return b.live() }

func (b *hostBuffer) MemsetTensor(t *runtime.Tensor, value byte, offset, size uint64) error {
	if err := b.live(); err != nil {
		return err
	}
	pos, err := runtime.CheckBufferRange(b, t, offset, size)
	if err != nil {
		return err
	}
	m := b.mem[pos : pos+size]
	for i := range m {
		m[i] = value
	}
	return nil
}

func (b *hostBuffer) SetTensor(t *runtime.Tensor, src []byte, offset uint64) error {
	if err := b.live(); err != nil {
		return err
	}
	pos, err := runtime.CheckBufferRange(b, t, offset, uint64(len(src)))
	if err != nil {
		return err
	}
	copy(b.mem[pos:], src)
	return nil
}

func (b *hostBuffer) GetTensor(t *runtime.Tensor, dst []byte, offset uint64) error {
	if err := b.live(); err != nil {
		return err
	}
	pos, err := runtime.CheckBufferRange(b, t, offset, uint64(len(dst)))
	if err != nil {
		return err
	}
	copy(dst, b.mem[pos:pos+uint64(len(dst))])
	return nil
}

// CopyTensor copies into dst (in this buffer) from any host buffer, or
// from device memory of this buffer type's device. Device-side copies out
// of this buffer are left to the device buffer's CopyTensor.
func (b *hostBuffer) CopyTensor(src, dst *runtime.Tensor) (bool, error) {
	if err := b.live(); err != nil {
		return false, err
	}
	if dst.Buffer != runtime.Buffer(b) {
		if db, ok := dst.Buffer.(*deviceBuffer); ok {
			return db.CopyTensor(src, dst)
		}
		if src.Buffer == runtime.Buffer(b) {
			if hb, ok := dst.Buffer.(runtime.HostBuffer); ok {
				n := src.NBytes()
				if n != dst.NBytes() {
					return false, fmt.Errorf("copy %q -> %q: %w", src.Name, dst.Name, runtime.ErrShape)
				}
				spos, err := runtime.CheckBufferRange(b, src, 0, n)
				if err != nil {
					return false, err
				}
				dpos, err := runtime.CheckBufferRange(hb, dst, 0, n)
				if err != nil {
					return false, err
				}
				copy(hb.Bytes()[dpos:dpos+n], b.mem[spos:spos+n])
				return true, nil
			}
		}
		return false, nil
	}
	n := dst.NBytes()
	if src.Buffer == nil {
		return false, fmt.Errorf("copy %q: %w", src.Name, runtime.ErrNotAllocated)
	}
	if n != src.NBytes() {
		return false, fmt.Errorf("copy %q -> %q: %w", src.Name, dst.Name, runtime.ErrShape)
	}
	dpos, err := runtime.CheckBufferRange(b, dst, 0, n)
	if err != nil {
		return false, err
	}
	switch sb := src.Buffer.(type) {
	case *deviceBuffer:
		return sb.CopyTensor(src, dst)
	case runtime.HostBuffer:
		spos, err := runtime.CheckBufferRange(sb, src, 0, n)
		if err != nil {
			return false, err
		}
		copy(b.mem[dpos:dpos+n], sb.Bytes()[spos:spos+n])
		return true, nil
	}
	return false, nil
}

func (b *hostBuffer) Clear(value byte) error {
	if err := b.live(); err != nil {
		return err
	}
	for i := range b.mem {
		b.mem[i] = value
	}
	return nil
}

func (b *hostBuffer) Reset() {}

// Free returns the pinned memory to the driver; a second Free is an error
// matching runtime.ErrFreed.
func (b *hostBuffer) Free() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.live(); err != nil {
		return err
	}
	b.freed = true
	p := b.p
	b.mem = nil
	err := b.bt.dev.do(func() error {
		return b.bt.dev.drv.check("cuMemFreeHost", b.bt.dev.drv.cuMemFreeHost(p))
	})
	if rerr := b.bt.dev.release(); err == nil {
		err = rerr
	}
	return err
}
