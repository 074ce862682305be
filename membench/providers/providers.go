// Package providers offers the buffer types of gogml's backends to
// membench: the host types, CUDA device and pinned memory, and the OpenGL
// device. It sits above both, so that the backends never import membench
// (nor, through it, the plotting library): a program that only computes
// links none of the experiments.
package providers

import (
	"fmt"
	"time"

	"github.com/gogml/gogml/backends/cuda"
	"github.com/gogml/gogml/backends/opengl"
	"github.com/gogml/gogml/backends/rpc"
	"github.com/gogml/gogml/membench"
	"github.com/gogml/gogml/runtime"
)

// All returns every backend's provider, the host first (it is the
// reference every other buffer type copies with).
func All() []membench.Provider {
	return []membench.Provider{membench.CPUProvider(), CUDA(), OpenGL()}
}

// CUDA offers CUDA0 device memory and CUDA_Host pinned memory. Without a
// usable driver or device its Open fails with an error wrapping
// runtime.ErrUnsupported, and membench skips it.
func CUDA() membench.Provider {
	return membench.Provider{Name: "cuda", Open: func() ([]membench.Target, func() error, error) {
		b, err := cuda.New(0)
		if err != nil {
			return nil, nil, fmt.Errorf("%w: %w", runtime.ErrUnsupported, err)
		}
		dev := &cudaTarget{b: b}
		return []membench.Target{dev, membench.NewTarget("", b.HostBufferType())}, b.Close, nil
	}}
}

// cudaTarget is CUDA0 for membench, with pinned transfers, device-event
// timing and CUDA_Host as a copy peer.
type cudaTarget struct{ b *cuda.Backend }

func (t *cudaTarget) Name() string                   { return t.b.DeviceBufferType().Name() }
func (t *cudaTarget) BufferType() runtime.BufferType { return t.b.DeviceBufferType() }
func (t *cudaTarget) Peers() []string                { return []string{t.b.HostBufferType().Name()} }
func (t *cudaTarget) Synchronize() error             { return t.b.Synchronize() }

func (t *cudaTarget) TimeDevice(run func() error) (time.Duration, error) {
	return t.b.TimeDevice(run)
}

// AllocPinned returns n bytes of CUDA_Host memory.
func (t *cudaTarget) AllocPinned(n uint64) ([]byte, func() error, error) {
	buf, err := t.b.HostBufferType().AllocBuffer(n)
	if err != nil {
		return nil, nil, err
	}
	hb, ok := buf.(runtime.HostBuffer)
	if !ok {
		_ = buf.Free()
		return nil, nil, fmt.Errorf("%s buffer is not host memory: %w", buf.Type().Name(), runtime.ErrUnsupported)
	}
	return hb.Bytes(), buf.Free, nil
}

// OpenGL offers the default OpenGL device's buffer type ("GL0"). Without
// the opengl build tags, EGL, a driver or an OpenGL 4.3 context its Open
// fails with an error wrapping runtime.ErrUnsupported (and
// opengl.ErrNotCompiled or opengl.ErrNoDevice), and membench skips it.
//
// GL0 is timed on the host, with a fence wait (Synchronizer) closing each
// sample where commands may still be queued, rather than with GL timer
// queries: set and get run partly or wholly on the host (a memcpy into a
// persistent mapping on llvmpipe, glGetBufferSubData's read-back
// elsewhere), which a GPU timestamp would not see. Copies with host memory
// are measured against membench's reference (first) target, the plain CPU
// buffer type.
func OpenGL() membench.Provider {
	return membench.Provider{Name: "opengl", Open: func() ([]membench.Target, func() error, error) {
		b, err := opengl.New(opengl.Config{})
		if err != nil {
			return nil, nil, fmt.Errorf("%w: %w", runtime.ErrUnsupported, err)
		}
		return []membench.Target{GLTarget(b)}, b.Close, nil
	}}
}

// GLTarget returns the membench target of b's default buffer type.
func GLTarget(b *opengl.Backend) membench.Target { return glTarget{b} }

// glTarget is a GL device's buffer type for membench.
type glTarget struct{ b *opengl.Backend }

func (t glTarget) Name() string                   { return t.b.DefaultBufferType().Name() }
func (t glTarget) BufferType() runtime.BufferType { return t.b.DefaultBufferType() }
func (t glTarget) Synchronize() error             { return t.b.Finish() }

var (
	_ membench.PinnedAllocator = (*cudaTarget)(nil)
	_ membench.DeviceTimer     = (*cudaTarget)(nil)
	_ membench.Synchronizer    = (*cudaTarget)(nil)
	_ membench.CopyPeers       = (*cudaTarget)(nil)
	_ membench.Synchronizer    = glTarget{}
)

// RPC returns the provider of every device of the ggml RPC server at
// endpoint ("host:port": ggml's rpc-server or gogml rpc-server): its
// buffers' set, get, clear and copies cross the network. A server that
// cannot be reached is skipped (runtime.ErrUnsupported), as an absent GPU
// is.
func RPC(endpoint string) membench.Provider {
	return membench.Provider{Name: "rpc " + endpoint, Open: func() ([]membench.Target, func() error, error) {
		c, err := rpc.Dial(endpoint, rpc.Options{})
		if err != nil {
			return nil, nil, fmt.Errorf("%w: %w", runtime.ErrUnsupported, err)
		}
		var ts []membench.Target
		for d := range c.Devices() {
			bt, err := c.BufferType(d)
			if err != nil {
				c.Close()
				return nil, nil, err
			}
			ts = append(ts, rpcTarget{bt})
		}
		return ts, c.Close, nil
	}}
}

// rpcTarget measures one remote device's memory.
type rpcTarget struct{ bt *rpc.BufferType }

func (t rpcTarget) Name() string                   { return t.bt.Name() }
func (t rpcTarget) BufferType() runtime.BufferType { return t.bt }
