//go:build opengl

package opengl

import (
	"fmt"

	"github.com/gogml/gogml/membench"
	"github.com/gogml/gogml/runtime"
)

// MembenchProvider offers the default OpenGL device's buffer type ("GL0")
// to `gogml membench`. Without EGL, a driver or an OpenGL 4.3 context its
// Open fails with an error wrapping runtime.ErrUnsupported (and
// ErrNoDevice), and membench skips it, printing the reason.
//
// GL0 is timed on the host, with a fence wait (Synchronizer) closing each
// sample where commands may still be queued, rather than with GL timer
// queries: set and get run partly or wholly on the host (a memcpy into a
// persistent mapping on llvmpipe, glGetBufferSubData's read-back
// elsewhere), which a GPU timestamp would not see. Copies with host memory are measured against membench's
// reference (first) target, the plain CPU buffer type.
func MembenchProvider() membench.Provider {
	return membench.Provider{Name: "opengl", Open: func() ([]membench.Target, func() error, error) {
		b, err := New(Config{})
		if err != nil {
			return nil, nil, fmt.Errorf("%w: %w", runtime.ErrUnsupported, err)
		}
		return []membench.Target{&membenchTarget{b: b}}, b.Close, nil
	}}
}

// membenchTarget is a GL device's buffer type for membench.
type membenchTarget struct{ b *Backend }

// Name returns the buffer type's name, "GL<n>".
func (t *membenchTarget) Name() string { return t.b.bt.Name() }

// BufferType returns the device's buffer type.
func (t *membenchTarget) BufferType() runtime.BufferType { return t.b.bt }

// Synchronize waits on the GL thread, with a fence, until the device has
// executed every command issued so far. In UploadMapped mode there is
// nothing to wait for: set and get are memcpys into coherent mappings, and
// clears and device copies already end with a fence wait of their own, so
// a second fence would only add a GL-thread round trip to every sample.
func (t *membenchTarget) Synchronize() error {
	if t.b.bt.mode == UploadMapped {
		return nil
	}
	return t.b.dev.call(t.b.dev.finish)
}

var _ membench.Synchronizer = (*membenchTarget)(nil)
