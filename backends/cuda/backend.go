package cuda

import (
	"fmt"
	"io/fs"
	goruntime "runtime"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"

	kcuda "github.com/gogml/gogml/internal/kernels/cuda"
	"github.com/gogml/gogml/runtime"
)

// Backend runs graphs on one CUDA device.
type Backend struct {
	mu     sync.Mutex
	dev    *device
	name   string
	stream cuStream
	mods   []cuModule
	funcs  map[*kernel]cuFunction

	// scratch is an anonymous mapping (outside the Go heap) holding the
	// packed kernel arguments and the cuLaunchKernel "extra" array that
	// points at them.
	scratch []byte

	// status is 8 bytes of device memory where kernels report bad input
	// (get_rows, set_rows, add_id, mul_mat_id, ssm_scan: a flag and the
	// offending index).
	status uint64

	// qbuf is device memory (qsize bytes) for MulMat's activations
	// rounded to q8_0 (see quantizesActivations); 0 until first needed.
	qbuf  uint64
	qsize uint64

	// jitLog holds the JIT's info log of each module, "file: log".
	jitLog []string

	devType  *DeviceBufferType
	hostType *HostBufferType
	closed   bool
}

// Scratch layout: the extra array (5 words), then the size word, then the
// arguments.
const (
	scratchExtra = 0
	scratchSize  = 64
	scratchArgs  = 128
	scratchBytes = scratchArgs + maxArgBytes
)

// New opens CUDA device number device (0-based). Without a usable driver
// the error matches ErrNoDriver; without that device, ErrNoDevice.
func New(device int) (*Backend, error) {
	dev, err := openDevice(device)
	if err != nil {
		return nil, err
	}
	return newBackend(dev, device)
}

// newWithDriver opens device through an already bound driver (tests bind
// an emulated one).
func newWithDriver(drv *driver, device int) (*Backend, error) {
	dev, err := openDeviceWith(drv, device)
	if err != nil {
		return nil, err
	}
	return newBackend(dev, device)
}

func newBackend(dev *device, device int) (*Backend, error) {
	b := &Backend{dev: dev, name: "CUDA" + strconv.Itoa(device), funcs: map[*kernel]cuFunction{}}
	if err := b.init(); err != nil {
		_ = b.Close()
		return nil, err
	}
	return b, nil
}

func (b *Backend) init() error {
	b.devType = &DeviceBufferType{dev: b.dev, name: b.name, maxSize: b.dev.total}
	b.hostType = &HostBufferType{dev: b.dev}
	mem, err := unix.Mmap(-1, 0, scratchBytes, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
	if err != nil {
		return fmt.Errorf("cuda: launch scratch: %w", err)
	}
	b.scratch = mem
	return b.dev.do(func() error {
		d := b.dev.drv
		if err := d.check("cuStreamCreate", d.cuStreamCreate(&b.stream, 0)); err != nil {
			return err
		}
		if err := d.check("cuMemAlloc_v2", d.cuMemAlloc(&b.status, 8)); err != nil {
			return err
		}
		if err := d.check("cuMemsetD8_v2", d.cuMemsetD8(b.status, 0, 8)); err != nil {
			return err
		}
		byModule := map[string]cuModule{}
		files, err := fs.Glob(kcuda.PTX, "*.ptx")
		if err != nil {
			return err
		}
		for _, f := range files {
			src, err := kcuda.PTX.ReadFile(f)
			if err != nil {
				return err
			}
			m, info, err := d.loadModule(f, src)
			if err != nil {
				return err
			}
			if info != "" {
				b.jitLog = append(b.jitLog, f+": "+info)
			}
			b.mods = append(b.mods, m)
			byModule[strings.TrimSuffix(f, ".ptx")] = m
		}
		for _, k := range allKernels {
			m, ok := byModule[k.module]
			if !ok {
				return fmt.Errorf("cuda: module %s.ptx missing", k.module)
			}
			var fn cuFunction
			if err := d.check("cuModuleGetFunction("+k.name+")", d.cuModuleGetFunction(&fn, m, k.name)); err != nil {
				return err
			}
			b.funcs[k] = fn
		}
		return nil
	})
}

// Close releases the stream, the modules and the backend's reference to
// the device. Buffers allocated from its buffer types stay valid until
// freed.
func (b *Backend) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil
	}
	b.closed = true
	var first error
	keep := func(err error) {
		if err != nil && first == nil {
			first = err
		}
	}
	keep(b.dev.do(func() error {
		d := b.dev.drv
		var first error
		if b.stream != 0 {
			first = d.check("cuStreamSynchronize", d.cuStreamSynchronize(b.stream))
			if err := d.check("cuStreamDestroy_v2", d.cuStreamDestroy(b.stream)); first == nil {
				first = err
			}
		}
		for _, p := range []uint64{b.status, b.qbuf} {
			if p == 0 {
				continue
			}
			if err := d.check("cuMemFree_v2", d.cuMemFree(p)); first == nil {
				first = err
			}
		}
		for _, m := range b.mods {
			if err := d.check("cuModuleUnload", d.cuModuleUnload(m)); first == nil {
				first = err
			}
		}
		return first
	}))
	if b.scratch != nil {
		keep(unix.Munmap(b.scratch))
		b.scratch = nil
	}
	keep(b.dev.release())
	return first
}

// Name returns "CUDA<n>".
func (b *Backend) Name() string { return b.name }

// Device describes the GPU: its driver name and free/total memory.
func (b *Backend) Device() runtime.DeviceInfo {
	info := runtime.DeviceInfo{
		Name:        b.name,
		Description: fmt.Sprintf("%s (compute %d.%d, %d SMs)", b.dev.name, b.dev.ccMajor, b.dev.ccMinor, b.dev.sms),
		TotalMemory: b.dev.total,
	}
	if free, total, err := b.dev.memInfo(); err == nil {
		info.FreeMemory, info.TotalMemory = free, total
	}
	return info
}

// DefaultBufferType returns the device memory type, CUDA<n>.
func (b *Backend) DefaultBufferType() runtime.BufferType { return b.devType }

// DeviceBufferType returns the device memory type, CUDA<n>.
func (b *Backend) DeviceBufferType() *DeviceBufferType { return b.devType }

// HostBufferType returns the pinned host memory type, CUDA_Host.
func (b *Backend) HostBufferType() *HostBufferType { return b.hostType }

// SupportsBufferType reports whether kernels can address tensors in bt:
// this device's memory (from any Backend of the same device: they share
// the primary context), and pinned host memory when the device has
// unified addressing (then a pinned host address is also a device
// address).
func (b *Backend) SupportsBufferType(bt runtime.BufferType) bool {
	switch t := bt.(type) {
	case *DeviceBufferType:
		return t.dev.ordinal == b.dev.ordinal
	case *HostBufferType:
		return b.dev.uva
	}
	// Wrappers (a type embedding ours to cap MaxSize, say) keep the name;
	// Compute still checks every tensor's actual buffer.
	return bt != nil && (bt.Name() == b.devType.Name() || (bt.Name() == b.hostType.Name() && b.dev.uva))
}

// Synchronize waits for all work queued on the backend's stream.
func (b *Backend) Synchronize() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return ErrClosed
	}
	return b.dev.do(func() error {
		d := b.dev.drv
		if err := d.check("cuStreamSynchronize", d.cuStreamSynchronize(b.stream)); err != nil {
			return err
		}
		// Also the legacy default stream (handle 0), where the buffers'
		// copies and memsets run; the backend's own stream does not wait
		// for work queued there after its last kernel.
		return d.check("cuStreamSynchronize(legacy)", d.cuStreamSynchronize(0))
	})
}

// SetTensorAsync queues a copy of src into t (in device memory) on the
// backend's stream and waits for it: src is pageable Go memory, which the
// driver only "may" stage before returning, so the copy must be complete
// before the caller may reuse or drop src.
func (b *Backend) SetTensorAsync(t *runtime.Tensor, src []byte, offset uint64) error {
	db, ok := t.Buffer.(*deviceBuffer)
	if !ok {
		return runtime.SetTensorData(t, src, offset)
	}
	return b.copyOnStream(db, t, src, offset, "cuMemcpyHtoDAsync_v2", func(d *driver, dev uint64) Result {
		return d.cuMemcpyHtoDAsync(dev, unsafe.Pointer(&src[0]), uint64(len(src)), b.stream)
	})
}

// GetTensorAsync copies t's bytes into dst on the backend's stream, after
// the work queued there, and waits for the copy: dst is Go memory, which
// must not be written by the device after this returns.
func (b *Backend) GetTensorAsync(t *runtime.Tensor, dst []byte, offset uint64) error {
	db, ok := t.Buffer.(*deviceBuffer)
	if !ok {
		return runtime.GetTensorData(t, dst, offset)
	}
	return b.copyOnStream(db, t, dst, offset, "cuMemcpyDtoHAsync_v2", func(d *driver, dev uint64) Result {
		return d.cuMemcpyDtoHAsync(unsafe.Pointer(&dst[0]), dev, uint64(len(dst)), b.stream)
	})
}

// copyOnStream checks the range of host bytes against t in db, runs transfer
// (given the device address of the range) on the device's thread and waits
// for the backend's stream, keeping host alive until then.
func (b *Backend) copyOnStream(db *deviceBuffer, t *runtime.Tensor, host []byte, offset uint64, name string, transfer func(d *driver, dev uint64) Result) error {
	pos, err := runtime.CheckBufferRange(db, t, offset, uint64(len(host)))
	if err != nil || len(host) == 0 {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return ErrClosed
	}
	if err := db.live(); err != nil {
		return err
	}
	return b.dev.do(func() error {
		d := b.dev.drv
		err := d.check(name, transfer(d, db.ptr+pos))
		if err == nil {
			err = d.check("cuStreamSynchronize", d.cuStreamSynchronize(b.stream))
		}
		goruntime.KeepAlive(host)
		return err
	})
}

// launch queues kernel k with packed arguments a on the stream. The
// caller holds b.mu and runs inside dev.do.
func (b *Backend) launch(k *kernel, grid, block dim3, shmem uint32, a *args) error {
	if err := a.check(k); err != nil {
		return err
	}
	fn, ok := b.funcs[k]
	if !ok {
		return fmt.Errorf("cuda: kernel %s not loaded", k.name)
	}
	if grid.x == 0 || grid.y == 0 || grid.z == 0 {
		return nil // nothing to do
	}
	s := b.scratch
	copy(s[scratchArgs:], a.buf)
	base := uintptr(unsafe.Pointer(&s[0]))
	put := func(off int, v uint64) { *(*uint64)(unsafe.Pointer(&s[off])) = v }
	put(scratchSize, uint64(len(a.buf)))
	put(scratchExtra+0, launchParamBufferPointer)
	put(scratchExtra+8, uint64(base+scratchArgs))
	put(scratchExtra+16, launchParamBufferSize)
	put(scratchExtra+24, uint64(base+scratchSize))
	put(scratchExtra+32, launchParamEnd)
	d := b.dev.drv
	return d.check("cuLaunchKernel("+k.name+")", d.cuLaunchKernel(fn, grid.x, grid.y, grid.z, block.x, block.y, block.z, shmem, b.stream, nil, unsafe.Pointer(&s[scratchExtra])))
}

var _ runtime.AsyncBackend = (*Backend)(nil)
var _ runtime.HostBuffer = (*hostBuffer)(nil)
