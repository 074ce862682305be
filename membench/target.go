// Package membench measures how fast each kind of gogml memory allocates,
// fills, uploads, downloads and copies, across a range of sizes, with the
// host's own copy bandwidth measured in the same run as the reference.
//
// A Target is one buffer type to measure. Backends offer their targets
// through a Provider; a Registry opens every provider and hands the targets
// to Run. Targets may implement optional hooks: PinnedAllocator (set/get
// from pinned host memory), DeviceTimer (time device work with the device's
// own events), Synchronizer (wait for queued device work) and CopyPeers
// (more buffer types to copy with).
package membench

import (
	"errors"
	"fmt"
	"time"

	"github.com/gogml/gogml/backends/cpu"
	"github.com/gogml/gogml/runtime"
)

// Target is a buffer type membench can measure.
type Target interface {
	// Name labels the target in tables, plots and JSON; unique in a run.
	Name() string
	// BufferType is the memory measured.
	BufferType() runtime.BufferType
}

// PinnedAllocator is implemented by targets whose device transfers faster
// from page-locked host memory. Membench then measures set_pinned and
// get_pinned, moving bytes between the target and memory from AllocPinned.
type PinnedAllocator interface {
	// AllocPinned returns n bytes of pinned host memory and a function
	// that releases them.
	AllocPinned(n uint64) (mem []byte, free func() error, err error)
}

// DeviceTimer is implemented by targets that can time device work with the
// device's own events or fences. TimeDevice runs run, which queues device
// work, and returns the device time it took, after the work has finished.
type DeviceTimer interface {
	TimeDevice(run func() error) (time.Duration, error)
}

// Synchronizer is implemented by targets whose buffer operations may return
// before the device has finished; membench calls Synchronize inside each
// host-timed sample.
type Synchronizer interface {
	Synchronize() error
}

// CopyPeers is implemented by targets that want copies measured with other
// targets besides the run's first (reference) target, such as CUDA0 with
// CUDA_Host. Peers names those targets.
type CopyPeers interface {
	Peers() []string
}

// bufferTarget is a Target around a plain buffer type.
type bufferTarget struct {
	name string
	bt   runtime.BufferType
}

func (t bufferTarget) Name() string                   { return t.name }
func (t bufferTarget) BufferType() runtime.BufferType { return t.bt }

// NewTarget returns a Target without hooks that measures bt under name (the
// type's own name when name is empty).
func NewTarget(name string, bt runtime.BufferType) Target {
	if name == "" {
		name = bt.Name()
	}
	return bufferTarget{name: name, bt: bt}
}

// Provider opens the targets of one backend.
type Provider struct {
	// Name names the backend in messages.
	Name string
	// Open returns the backend's targets and a function that releases what
	// it opened (nil if nothing). An error wrapping runtime.ErrUnsupported
	// means the backend's device is absent here: the registry skips it.
	Open func() (targets []Target, closeFn func() error, err error)
}

// Registry is an ordered list of providers. The first target of the first
// provider is the reference every other target copies with.
type Registry struct {
	providers []Provider
}

// NewRegistry returns a registry of ps, in order.
func NewRegistry(ps ...Provider) *Registry {
	return &Registry{providers: append([]Provider(nil), ps...)}
}

// Add appends p.
func (r *Registry) Add(p Provider) { r.providers = append(r.providers, p) }

// Providers returns the registered providers in order.
func (r *Registry) Providers() []Provider { return r.providers }

// Open opens every provider. Providers that fail are left out and their
// errors returned in skipped; closeAll releases what the others opened.
// It fails only when no target at all could be opened.
func (r *Registry) Open() (targets []Target, closeAll func() error, skipped []error, err error) {
	var closers []func() error
	closeAll = func() error {
		var errs []error
		for i := len(closers) - 1; i >= 0; i-- {
			if err := closers[i](); err != nil {
				errs = append(errs, err)
			}
		}
		closers = nil
		return errors.Join(errs...)
	}
	for _, p := range r.providers {
		ts, c, err := p.Open()
		if err != nil {
			skipped = append(skipped, fmt.Errorf("%s: %w", p.Name, err))
			continue
		}
		if c != nil {
			closers = append(closers, c)
		}
		targets = append(targets, ts...)
	}
	if len(targets) == 0 {
		_ = closeAll()
		return nil, nil, skipped, errors.New("membench: no buffer type could be opened")
	}
	return targets, closeAll, skipped, nil
}

// CPUTargets returns the host buffer types: plain ("CPU"), transparent huge
// pages ("CPU_Huge") and locked into RAM ("CPU_Locked").
func CPUTargets() []Target {
	var ts []Target
	for _, o := range []cpu.BufferTypeOptions{{}, {HugePages: true}, {Locked: true}} {
		bt, err := cpu.NewBufferType(o)
		if err != nil {
			// The options above are valid by construction.
			continue
		}
		ts = append(ts, NewTarget("", bt))
	}
	return ts
}

// CPUProvider offers CPUTargets.
func CPUProvider() Provider {
	return Provider{Name: "cpu", Open: func() ([]Target, func() error, error) {
		return CPUTargets(), nil, nil
	}}
}
