package cuda

import (
	"fmt"
	"time"

	"github.com/gogml/gogml/membench"
	"github.com/gogml/gogml/runtime"
)

// MembenchProvider offers CUDA0 device memory and CUDA_Host pinned memory
// to `gogml membench`. Without a usable driver or device its Open fails
// with an error wrapping runtime.ErrUnsupported, and membench skips it.
func MembenchProvider() membench.Provider {
	return membench.Provider{Name: "cuda", Open: func() ([]membench.Target, func() error, error) {
		b, err := New(0)
		if err != nil {
			return nil, nil, fmt.Errorf("%w: %w", runtime.ErrUnsupported, err)
		}
		dev := &deviceTarget{b: b}
		return []membench.Target{dev, membench.NewTarget("", b.HostBufferType())}, b.Close, nil
	}}
}

// deviceTarget is CUDA0 for membench, with pinned transfers, device-event
// timing and CUDA_Host as a copy peer.
type deviceTarget struct{ b *Backend }

func (t *deviceTarget) Name() string                   { return t.b.devType.Name() }
func (t *deviceTarget) BufferType() runtime.BufferType { return t.b.devType }
func (t *deviceTarget) Peers() []string                { return []string{t.b.hostType.Name()} }
func (t *deviceTarget) Synchronize() error             { return t.b.Synchronize() }

func (t *deviceTarget) TimeDevice(run func() error) (time.Duration, error) {
	return t.b.TimeDevice(run)
}

// AllocPinned returns n bytes of CUDA_Host memory.
func (t *deviceTarget) AllocPinned(n uint64) ([]byte, func() error, error) {
	buf, err := t.b.hostType.AllocBuffer(n)
	if err != nil {
		return nil, nil, err
	}
	return buf.(*hostBuffer).Bytes(), buf.Free, nil
}

var (
	_ membench.PinnedAllocator = (*deviceTarget)(nil)
	_ membench.DeviceTimer     = (*deviceTarget)(nil)
	_ membench.Synchronizer    = (*deviceTarget)(nil)
	_ membench.CopyPeers       = (*deviceTarget)(nil)
)
