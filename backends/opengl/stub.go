//go:build !opengl

package opengl

import (
	"fmt"

	"github.com/gogml/gogml/runtime"
)

// Compiled reports whether this binary contains the OpenGL backend.
const Compiled = false

// Backend is the OpenGL backend; in this build it cannot be created.
type Backend struct{}

// New always fails in a build without the "opengl" tag.
func New(cfg Config) (*Backend, error) {
	return nil, fmt.Errorf("opengl device %d: %w", cfg.Device, ErrNotCompiled)
}

// Name returns "GL".
func (b *Backend) Name() string { return "GL" }

// Device returns an empty description.
func (b *Backend) Device() runtime.DeviceInfo { return runtime.DeviceInfo{Name: "GL"} }

// UploadMode returns UploadAuto.
func (b *Backend) UploadMode() UploadMode { return UploadAuto }

// Info returns an empty description.
func (b *Backend) Info() Info { return Info{} }

// DefaultBufferType returns nil: there is no device.
func (b *Backend) DefaultBufferType() runtime.BufferType { return nil }

// BufferTypeWithMaxSize fails with ErrNotCompiled.
func (b *Backend) BufferTypeWithMaxSize(uint64) (runtime.BufferType, error) {
	return nil, ErrNotCompiled
}

// SupportsOp reports false.
func (b *Backend) SupportsOp(*runtime.Tensor) bool { return false }

// SupportsBufferType reports false.
func (b *Backend) SupportsBufferType(runtime.BufferType) bool { return false }

// Compute fails with ErrNotCompiled.
func (b *Backend) Compute(*runtime.Graph) error { return ErrNotCompiled }

// Finish fails with ErrNotCompiled.
func (b *Backend) Finish() error { return ErrNotCompiled }

// Close does nothing.
func (b *Backend) Close() error { return nil }

var _ runtime.Backend = (*Backend)(nil)
