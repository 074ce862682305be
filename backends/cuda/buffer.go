package cuda

import (
	"fmt"
	goruntime "runtime"
	"sync"
	"unsafe"

	"github.com/gogml/gogml/runtime"
)

// DeviceAlignment is the alignment of tensor offsets in CUDA device
// buffers, as ggml's CUDA backend uses.
const DeviceAlignment uint64 = 128

// matrixRowPadding is the element count quantized rows are padded to in
// device memory, so that kernels may read whole tiles past a row's end.
const matrixRowPadding = 512

// DeviceBufferType is CUDA device memory on one device ("CUDA<n>").
// It is immutable and safe for concurrent use.
type DeviceBufferType struct {
	dev     *device
	name    string
	maxSize uint64
}

// Name returns "CUDA<n>".
func (bt *DeviceBufferType) Name() string { return bt.name }

// Alignment returns DeviceAlignment.
func (bt *DeviceBufferType) Alignment() uint64 { return DeviceAlignment }

// MaxSize returns the device's total memory, or the artificial limit set
// with WithMaxSize.
func (bt *DeviceBufferType) MaxSize() uint64 { return bt.maxSize }

// IsHost reports false: device memory is not host-readable.
func (bt *DeviceBufferType) IsHost() bool { return false }

// WithMaxSize returns a copy of bt whose buffers may be at most n bytes,
// to exercise code that splits tensors across buffers. n = 0 restores the
// device's total memory.
func (bt *DeviceBufferType) WithMaxSize(n uint64) *DeviceBufferType {
	c := *bt
	if n == 0 || n > bt.dev.total {
		n = bt.dev.total
	}
	c.maxSize = n
	return &c
}

// AllocSize returns t's bytes, plus, for quantized types whose rows are
// not a multiple of 512 elements, the bytes of the elements that pad the
// last row to the next multiple of 512.
func (bt *DeviceBufferType) AllocSize(t *runtime.Tensor) uint64 {
	return deviceAllocSize(t)
}

func deviceAllocSize(t *runtime.Tensor) uint64 {
	n := t.NBytes()
	if t.Type.IsQuantized() && t.Ne[0]%matrixRowPadding != 0 {
		n += t.Type.RowSize(matrixRowPadding - t.Ne[0]%matrixRowPadding)
	}
	return n
}

// AllocBuffer allocates size bytes of device memory. A size beyond
// MaxSize, or beyond what the device has free, is an error matching
// ErrOutOfMemory (and runtime.ErrOutOfMemory); the device stays usable.
func (bt *DeviceBufferType) AllocBuffer(size uint64) (runtime.Buffer, error) {
	if size > bt.maxSize {
		return nil, fmt.Errorf("%s: %d bytes asked, at most %d per buffer: %w", bt.name, size, bt.maxSize, ErrOutOfMemory)
	}
	// A zero-byte buffer still gets a real (aligned) address.
	n := size
	if n == 0 {
		n = 1
	}
	var ptr uint64
	err := bt.dev.do(func() error {
		return bt.dev.drv.check("cuMemAlloc_v2", bt.dev.drv.cuMemAlloc(&ptr, n))
	})
	if err != nil {
		return nil, fmt.Errorf("%s: allocating %d bytes: %w", bt.name, size, err)
	}
	bt.dev.retain()
	return &deviceBuffer{bt: bt, ptr: ptr, size: size}, nil
}

// sync checks r, the result of a call that the driver may leave running on
// the device after it returns (device memsets and device-to-device copies
// are asynchronous with respect to the host even in their "synchronous"
// form), then waits for the context's work, so that the operation is
// complete, and any fault it raised is reported, when the buffer method
// returns, as the buffer contract expects.
func (d *driver) sync(fn string, r Result) error {
	if err := d.check(fn, r); err != nil {
		return err
	}
	return d.check("cuCtxSynchronize", d.cuCtxSynchronize())
}

// deviceBuffer is one cuMemAlloc allocation.
type deviceBuffer struct {
	bt    *DeviceBufferType
	ptr   uint64
	size  uint64
	mu    sync.Mutex
	usage runtime.BufferUsage
	freed bool
}

func (b *deviceBuffer) Type() runtime.BufferType { return b.bt }

// Base returns the device address of byte 0.
func (b *deviceBuffer) Base() uint64 { return b.ptr }

func (b *deviceBuffer) Size() uint64 { return b.size }

func (b *deviceBuffer) Usage() runtime.BufferUsage { return b.usage }

func (b *deviceBuffer) SetUsage(u runtime.BufferUsage) { b.usage = u }

func (b *deviceBuffer) live() error {
	if b.freed {
		return fmt.Errorf("%s buffer: %w", b.bt.name, runtime.ErrFreed)
	}
	return nil
}

func (b *deviceBuffer) call(f func(d *driver) error) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.live(); err != nil {
		return err
	}
	return b.bt.dev.do(func() error { return f(b.bt.dev.drv) })
}

// InitTensor zeroes the row padding of quantized tensors so that kernels
// reading past a row's end see zeros, not stale bytes.
func (b *deviceBuffer) InitTensor(t *runtime.Tensor) error {
	if err := b.live(); err != nil {
		return err
	}
	if t.IsView() || !t.Type.IsQuantized() {
		return nil
	}
	n, padded := t.NBytes(), deviceAllocSize(t)
	if padded == n {
		return nil
	}
	pos := t.Offset + n
	if pos > b.size || padded-n > b.size-pos {
		// The allocator placed only NBytes; nothing to clear.
		return nil
	}
	return b.call(func(d *driver) error {
		// Ordered before any later copy or kernel (the legacy stream
		// and the backends' blocking streams order with each other), so
		// no wait here.
		return d.check("cuMemsetD8_v2", d.cuMemsetD8(b.ptr+pos, 0, padded-n))
	})
}

// MemsetTensor fills size bytes of t from offset with value.
func (b *deviceBuffer) MemsetTensor(t *runtime.Tensor, value byte, offset, size uint64) error {
	if err := b.live(); err != nil {
		return err
	}
	pos, err := runtime.CheckBufferRange(b, t, offset, size)
	if err != nil || size == 0 {
		return err
	}
	return b.call(func(d *driver) error {
		return d.sync("cuMemsetD8_v2", d.cuMemsetD8(b.ptr+pos, value, size))
	})
}

// SetTensor copies src into t's bytes at offset.
func (b *deviceBuffer) SetTensor(t *runtime.Tensor, src []byte, offset uint64) error {
	if err := b.live(); err != nil {
		return err
	}
	pos, err := runtime.CheckBufferRange(b, t, offset, uint64(len(src)))
	if err != nil || len(src) == 0 {
		return err
	}
	err = b.call(func(d *driver) error {
		return d.check("cuMemcpyHtoD_v2", d.cuMemcpyHtoD(b.ptr+pos, unsafe.Pointer(&src[0]), uint64(len(src))))
	})
	goruntime.KeepAlive(src)
	return err
}

// GetTensor copies t's bytes at offset into dst.
func (b *deviceBuffer) GetTensor(t *runtime.Tensor, dst []byte, offset uint64) error {
	if err := b.live(); err != nil {
		return err
	}
	pos, err := runtime.CheckBufferRange(b, t, offset, uint64(len(dst)))
	if err != nil || len(dst) == 0 {
		return err
	}
	err = b.call(func(d *driver) error {
		return d.check("cuMemcpyDtoH_v2", d.cuMemcpyDtoH(unsafe.Pointer(&dst[0]), b.ptr+pos, uint64(len(dst))))
	})
	goruntime.KeepAlive(dst)
	return err
}

// CopyTensor copies src into dst when one of them lives in this buffer and
// the other in device memory of the same device or in host memory. It
// reports false for other pairs.
func (b *deviceBuffer) CopyTensor(src, dst *runtime.Tensor) (bool, error) {
	if err := b.live(); err != nil {
		return false, err
	}
	if src.Buffer == nil || dst.Buffer == nil {
		return false, fmt.Errorf("copy %q -> %q: %w", src.Name, dst.Name, runtime.ErrNotAllocated)
	}
	n := src.NBytes()
	if n != dst.NBytes() {
		return false, fmt.Errorf("copy %q (%d bytes) -> %q (%d bytes): %w", src.Name, n, dst.Name, dst.NBytes(), runtime.ErrShape)
	}
	switch {
	case dst.Buffer == runtime.Buffer(b):
		dpos, err := runtime.CheckBufferRange(b, dst, 0, n)
		if err != nil {
			return false, err
		}
		if sb, ok := src.Buffer.(*deviceBuffer); ok && sb.bt.dev.ordinal == b.bt.dev.ordinal {
			spos, err := runtime.CheckBufferRange(sb, src, 0, n)
			if err != nil {
				return false, err
			}
			if err := sb.live(); err != nil {
				return false, err
			}
			if n == 0 {
				return true, nil
			}
			return true, b.call(func(d *driver) error {
				return d.sync("cuMemcpyDtoD_v2", d.cuMemcpyDtoD(b.ptr+dpos, sb.ptr+spos, n))
			})
		}
		if hb, ok := src.Buffer.(runtime.HostBuffer); ok {
			spos, err := runtime.CheckBufferRange(hb, src, 0, n)
			if err != nil {
				return false, err
			}
			if n == 0 {
				return true, nil
			}
			mem := hb.Bytes()
			return true, b.call(func(d *driver) error {
				return d.check("cuMemcpyHtoD_v2", d.cuMemcpyHtoD(b.ptr+dpos, unsafe.Pointer(&mem[spos]), n))
			})
		}
	case src.Buffer == runtime.Buffer(b):
		spos, err := runtime.CheckBufferRange(b, src, 0, n)
		if err != nil {
			return false, err
		}
		if hb, ok := dst.Buffer.(runtime.HostBuffer); ok {
			dpos, err := runtime.CheckBufferRange(hb, dst, 0, n)
			if err != nil {
				return false, err
			}
			if n == 0 {
				return true, nil
			}
			mem := hb.Bytes()
			return true, b.call(func(d *driver) error {
				return d.check("cuMemcpyDtoH_v2", d.cuMemcpyDtoH(unsafe.Pointer(&mem[dpos]), b.ptr+spos, n))
			})
		}
	}
	return false, nil
}

// Clear fills the whole buffer with value.
func (b *deviceBuffer) Clear(value byte) error {
	if err := b.live(); err != nil {
		return err
	}
	if b.size == 0 {
		return nil
	}
	return b.call(func(d *driver) error {
		return d.sync("cuMemsetD8_v2", d.cuMemsetD8(b.ptr, value, b.size))
	})
}

// Reset has no per-tensor data to drop.
func (b *deviceBuffer) Reset() {}

// Free releases the device memory; a second Free is an error matching
// runtime.ErrFreed.
func (b *deviceBuffer) Free() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.live(); err != nil {
		return err
	}
	b.freed = true
	err := b.bt.dev.do(func() error {
		return b.bt.dev.drv.check("cuMemFree_v2", b.bt.dev.drv.cuMemFree(b.ptr))
	})
	if rerr := b.bt.dev.release(); err == nil {
		err = rerr
	}
	return err
}
