package device

import (
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/gogml/gogml/backends/cpu"
	"github.com/gogml/gogml/backends/cuda"
	"github.com/gogml/gogml/backends/opengl"
	"github.com/gogml/gogml/backends/rpc"
	"github.com/gogml/gogml/runtime"
)

// Options configures the drivers of Default.
type Options struct {
	// Threads is the CPU backend's worker count (0: every core).
	Threads int
	// MaxBufferSize, when non-zero, lowers every device's largest buffer
	// (to exercise splitting).
	MaxBufferSize uint64
	// RPC configures the connections of the rpc driver.
	RPC rpc.Options
}

// Default returns a registry of every driver gogml ships: cpu, cuda,
// opengl (working when built with the tags opengl,egl) and rpc.
func Default(o Options) *Registry {
	r, _ := NewRegistry(CPU{Threads: o.Threads, MaxBufferSize: o.MaxBufferSize},
		CUDA{MaxBufferSize: o.MaxBufferSize}, OpenGL{MaxBufferSize: o.MaxBufferSize}, RPC{Options: o.RPC})
	return r
}

func index(arg, driver string) (int, error) {
	if arg == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(arg)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%s: device index %q is not a number >= 0", driver, arg)
	}
	return n, nil
}

// CPU is the host driver: one device, "cpu".
type CPU struct {
	Threads       int
	MaxBufferSize uint64
}

// Name is "cpu".
func (CPU) Name() string { return "cpu" }

// Open opens the host device; arg must be empty or "0".
func (c CPU) Open(arg string) ([]Device, error) {
	if n, err := index(arg, "cpu"); err != nil || n != 0 {
		return nil, fmt.Errorf("cpu: there is one host device (cpu or cpu:0), not %q", arg)
	}
	var bt runtime.BufferType = cpu.DefaultBufferType()
	if c.MaxBufferSize > 0 {
		b, err := cpu.NewBufferType(cpu.BufferTypeOptions{MaxSize: c.MaxBufferSize})
		if err != nil {
			return nil, err
		}
		bt = b
	}
	be := cpu.NewBackend(cpu.BackendOptions{Threads: c.Threads, BufferType: bt})
	return []Device{&backendDevice{be: be}}, nil
}

// CUDA opens NVIDIA devices through the driver library found at run time.
type CUDA struct{ MaxBufferSize uint64 }

// Name is "cuda".
func (CUDA) Name() string { return "cuda" }

// Open opens CUDA device arg (default 0).
func (c CUDA) Open(arg string) ([]Device, error) {
	n, err := index(arg, "cuda")
	if err != nil {
		return nil, err
	}
	be, err := cuda.New(n)
	if err != nil {
		return nil, fmt.Errorf("cuda device %d: %w: %w", n, ErrUnavailable, err)
	}
	d := &backendDevice{be: be, host: be.HostBufferType()}
	if c.MaxBufferSize > 0 {
		d.bt = be.DeviceBufferType().WithMaxSize(c.MaxBufferSize) // enforced by its AllocBuffer
	}
	return []Device{d}, nil
}

// OpenGL opens EGL devices (build tags opengl,egl).
type OpenGL struct{ MaxBufferSize uint64 }

// Name is "opengl" (alias "gl").
func (OpenGL) Name() string { return "opengl" }

// Open opens EGL device arg (default 0).
func (g OpenGL) Open(arg string) ([]Device, error) {
	n, err := index(arg, "opengl")
	if err != nil {
		return nil, err
	}
	be, err := opengl.New(opengl.Config{Device: n, MaxBufferSize: g.MaxBufferSize})
	if err != nil {
		return nil, fmt.Errorf("opengl device %d: %w: %w", n, ErrUnavailable, err)
	}
	return []Device{&backendDevice{be: be}}, nil
}

// RPC opens the devices of ggml RPC servers (ggml's rpc-server or gogml
// rpc-server), one connection per Open.
type RPC struct{ Options rpc.Options }

// Name is "rpc".
func (RPC) Name() string { return "rpc" }

// Open connects to "host:port" and opens every device of the server, or
// only device k with "host:port/k".
func (r RPC) Open(arg string) ([]Device, error) {
	ep, sel, hasSel := strings.Cut(arg, "/")
	if ep == "" {
		return nil, fmt.Errorf("rpc: want rpc://HOST:PORT[/DEVICE], got %q", arg)
	}
	c, err := rpc.Dial(ep, r.Options)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	first, last := 0, c.Devices()-1
	if hasSel {
		k, err := index(sel, "rpc")
		if err != nil || k >= c.Devices() {
			c.Close()
			return nil, fmt.Errorf("rpc %s: device %q of %d", ep, sel, c.Devices())
		}
		first, last = k, k
	}
	conn := &sharedConn{c: c, users: last - first + 1}
	var out []Device
	for k := first; k <= last; k++ {
		be, err := c.Backend(k)
		if err != nil {
			c.Close()
			return nil, err
		}
		out = append(out, &backendDevice{be: be, closeFn: conn.release})
	}
	return out, nil
}

// sharedConn closes an RPC connection when the last of its devices closes.
type sharedConn struct {
	mu    sync.Mutex
	c     *rpc.Client
	users int
}

func (s *sharedConn) release() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.users--
	if s.users == 0 {
		return s.c.Close()
	}
	return nil
}
