// Package device is the layer between gogml's backends and the programs
// that choose among them, as ggml 0.27's device registry is: a Registry
// holds Drivers (cpu, cuda, opengl, rpc), a Driver opens Devices, and a
// Device has its memory (buffer types), its free and total memory, and the
// backend that computes on it.
//
// It is shaped like database/sql's drivers, without the global: a program
// builds the Registry it wants (Default has every driver gogml ships) and
// opens devices by spec:
//
//	cpu             the host
//	cuda, cuda:1    CUDA device 0 or 1
//	opengl, gl:0    an OpenGL (EGL) device
//	rpc://HOST:PORT every device of a ggml RPC server
//	rpc://HOST:PORT/1   its device 1
//
// The scheduler (package sched), `gogml run -devices`, `gogml rpc-server
// -backend` and `gogml membench` all enumerate devices through it.
package device

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/gogml/gogml/runtime"
)

// ErrUnknownDriver: a spec names a driver the registry does not have.
var ErrUnknownDriver = errors.New("device: unknown driver")

// ErrUnavailable: the driver exists but cannot open the device here (no
// GPU, no driver library, no server); wraps the driver's own error.
var ErrUnavailable = errors.New("device: not available")

// Device is one piece of hardware with memory and a compute stream.
type Device interface {
	// Name is unique among open devices: "CPU", "CUDA0", "GL0",
	// "RPC0[127.0.0.1:50052]".
	Name() string
	// Description says what the hardware is.
	Description() string
	// Memory reports free and total bytes, as the device knows them.
	Memory() (free, total uint64)
	// BufferType is the device's own memory.
	BufferType() runtime.BufferType
	// HostBufferType is host memory the device transfers to and from
	// fastest (pinned memory on CUDA), or nil if it has none of its own.
	HostBufferType() runtime.BufferType
	// Backend is the device's compute stream, opened with the device and
	// closed by Close.
	Backend() runtime.Backend
	// Close releases the device and its backend.
	Close() error
}

// Driver opens the devices of one kind.
type Driver interface {
	// Name is the spec prefix: "cpu", "cuda", "opengl", "rpc".
	Name() string
	// Open opens the devices that arg selects: "" the driver's default
	// (usually device 0, every device for rpc), else the driver's own
	// syntax ("1" for an index, "host:port[/index]" for rpc).
	Open(arg string) ([]Device, error)
}

// Registry is a set of drivers by name. It is immutable once made and safe
// for concurrent use.
type Registry struct {
	drivers map[string]Driver
	aliases map[string]string
}

// NewRegistry returns a registry of the given drivers; two drivers of one
// name are an error.
func NewRegistry(drivers ...Driver) (*Registry, error) {
	r := &Registry{drivers: map[string]Driver{}, aliases: map[string]string{"gl": "opengl"}}
	for _, d := range drivers {
		if d == nil {
			return nil, errors.New("device: nil driver")
		}
		if _, dup := r.drivers[d.Name()]; dup {
			return nil, fmt.Errorf("device: driver %q registered twice", d.Name())
		}
		r.drivers[d.Name()] = d
	}
	return r, nil
}

// Drivers returns the driver names in order.
func (r *Registry) Drivers() []string {
	var out []string
	for n := range r.drivers {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Open opens the devices of one spec ("cpu", "cuda:1", "rpc://host:port").
func (r *Registry) Open(spec string) ([]Device, error) {
	spec = strings.TrimSpace(spec)
	name, arg := spec, ""
	if i := strings.Index(spec, "://"); i >= 0 {
		name, arg = spec[:i], spec[i+3:]
	} else if i := strings.IndexByte(spec, ':'); i >= 0 {
		name, arg = spec[:i], spec[i+1:]
	}
	if a, ok := r.aliases[name]; ok {
		name = a
	}
	d, ok := r.drivers[name]
	if !ok {
		return nil, fmt.Errorf("%w %q in %q (have %s)", ErrUnknownDriver, name, spec, strings.Join(r.Drivers(), ", "))
	}
	devs, err := d.Open(arg)
	if err != nil {
		return nil, fmt.Errorf("device %q: %w", spec, err)
	}
	return devs, nil
}

// OpenList opens every spec of a comma-separated list, in order. On error
// the devices opened so far are closed.
func (r *Registry) OpenList(list string) ([]Device, error) {
	var out []Device
	for _, spec := range strings.Split(list, ",") {
		if strings.TrimSpace(spec) == "" {
			continue
		}
		devs, err := r.Open(spec)
		if err != nil {
			CloseAll(out)
			return nil, err
		}
		out = append(out, devs...)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("device: empty device list %q", list)
	}
	return out, nil
}

// CloseAll closes every device and returns the first error.
func CloseAll(devs []Device) error {
	var first error
	for _, d := range devs {
		if err := d.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// Backends returns the devices' backends, in order.
func Backends(devs []Device) []runtime.Backend {
	out := make([]runtime.Backend, len(devs))
	for i, d := range devs {
		out[i] = d.Backend()
	}
	return out
}

// backendDevice is a Device over an opened backend.
type backendDevice struct {
	be   runtime.Backend
	host runtime.BufferType
	bt   runtime.BufferType
	desc string
	// closeFn closes what the device owns besides the backend (an RPC
	// connection); nil if nothing.
	closeFn func() error
}

func (d *backendDevice) Name() string { return d.be.Name() }
func (d *backendDevice) Description() string {
	if d.desc != "" {
		return d.desc
	}
	return d.be.Device().Description
}
func (d *backendDevice) Memory() (free, total uint64) {
	info := d.be.Device()
	return info.FreeMemory, info.TotalMemory
}
func (d *backendDevice) BufferType() runtime.BufferType {
	if d.bt != nil {
		return d.bt
	}
	return d.be.DefaultBufferType()
}
func (d *backendDevice) HostBufferType() runtime.BufferType { return d.host }
func (d *backendDevice) Backend() runtime.Backend           { return d.be }
func (d *backendDevice) Close() error {
	err := d.be.Close()
	if d.closeFn != nil {
		if cerr := d.closeFn(); err == nil {
			err = cerr
		}
	}
	return err
}
