//go:build opengl

package opengl

import (
	"fmt"
	"strings"

	"github.com/gogml/gogml/runtime"
)

// Compiled reports whether this binary contains the OpenGL backend.
const Compiled = true

// Backend runs graphs with GLSL compute shaders on one OpenGL device.
type Backend struct {
	dev *device
	bt  *bufferType
}

// New opens the OpenGL device cfg.Device: an EGL context on a GL thread of
// its own. Without EGL, a driver, or OpenGL 4.3, it returns an error
// wrapping ErrNoDevice.
func New(cfg Config) (*Backend, error) {
	if cfg.Upload != UploadAuto && cfg.Upload != UploadSubData && cfg.Upload != UploadMapped {
		return nil, fmt.Errorf("opengl: unknown upload mode %d", int(cfg.Upload))
	}
	d, err := openDevice(cfg.Device)
	if err != nil {
		return nil, err
	}
	mode := cfg.Upload
	if mode == UploadAuto {
		mode = UploadSubData
		if r := strings.ToLower(d.info.Renderer); strings.Contains(r, "llvmpipe") || strings.Contains(r, "softpipe") {
			mode = UploadMapped
		}
	}
	bt := newBufferType(d, mode)
	if cfg.MaxBufferSize != 0 && cfg.MaxBufferSize < bt.maxSize {
		bt.maxSize = cfg.MaxBufferSize &^ (bt.align - 1)
		if bt.maxSize == 0 {
			_ = d.close()
			return nil, fmt.Errorf("opengl: MaxBufferSize %d below the alignment %d", cfg.MaxBufferSize, bt.align)
		}
	}
	return &Backend{dev: d, bt: bt}, nil
}

// Name returns "GL<device index>".
func (b *Backend) Name() string { return b.bt.name }

// UploadMode returns the upload mode in use (never UploadAuto).
func (b *Backend) UploadMode() UploadMode { return b.bt.mode }

// Info returns the device's description and limits as read when opened.
func (b *Backend) Info() Info { return b.dev.info }

// Device describes the device; memory figures are zero where the driver
// does not report them.
func (b *Backend) Device() runtime.DeviceInfo {
	free, total := b.dev.memory()
	return runtime.DeviceInfo{
		Name:        b.bt.name,
		Description: b.dev.info.String(),
		FreeMemory:  free,
		TotalMemory: total,
	}
}

// DefaultBufferType returns the device's "GL<n>" buffer type.
func (b *Backend) DefaultBufferType() runtime.BufferType { return b.bt }

// BufferTypeWithMaxSize returns the device's buffer type with buffers of
// at most n bytes (rounded down to the alignment): its AllocBuffer refuses
// larger ones with runtime.ErrOutOfMemory, so that allocators split
// tensors across buffers. n = 0, or n at or above the device's limit,
// gives the default type; n below the alignment is an error.
func (b *Backend) BufferTypeWithMaxSize(n uint64) (runtime.BufferType, error) {
	if n == 0 || n >= b.bt.maxSize {
		return b.bt, nil
	}
	if n&^(b.bt.align-1) == 0 {
		return nil, fmt.Errorf("opengl: max buffer size %d below the alignment %d", n, b.bt.align)
	}
	c := *b.bt
	c.maxSize = n &^ (c.align - 1)
	return &c, nil
}

// SupportsBufferType reports whether bt is this device's buffer type.
func (b *Backend) SupportsBufferType(bt runtime.BufferType) bool {
	gbt, ok := bt.(*bufferType)
	return ok && gbt.dev == b.dev
}

// Finish waits until the device has executed every command issued so far
// (a fence wait on the GL thread). In UploadMapped mode it returns at once:
// transfers are memcpys into coherent mappings, and clears and device
// copies already end with a fence wait of their own.
func (b *Backend) Finish() error {
	if b.bt.mode == UploadMapped {
		if b.dev.dead.Load() {
			return ErrClosed
		}
		return nil
	}
	return b.dev.call(b.dev.finish)
}

// Close releases the context and its thread. Buffers of this backend
// become unusable (their operations return ErrClosed).
func (b *Backend) Close() error { return b.dev.close() }

var (
	_ runtime.Backend    = (*Backend)(nil)
	_ runtime.BufferType = (*bufferType)(nil)
	_ runtime.Buffer     = (*buffer)(nil)
)
