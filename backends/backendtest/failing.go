package backendtest

import (
	"errors"
	"fmt"
	"sync"

	"github.com/gogml/gogml/runtime"
)

// ErrInjected marks an allocation failure made on purpose by a
// FailingBufferType. Such errors also wrap runtime.ErrOutOfMemory.
var ErrInjected = errors.New("injected allocation failure")

// Never is the FailAfter value that never fails by count.
const Never = -1

// FailingOptions says when a FailingBufferType refuses allocations.
type FailingOptions struct {
	// FailAfter lets this many allocations succeed, then fails every later
	// one. Negative (Never) means never fail by count; zero fails them all.
	FailAfter int
	// FailAbove fails every allocation of more than this many bytes. Zero
	// means no size limit.
	FailAbove uint64
}

// FailingBufferType wraps a buffer type and makes AllocBuffer fail on
// demand, for testing how allocators handle out-of-memory. Every other
// method forwards to the wrapped type. Buffers it hands out are the wrapped
// type's own buffers (their Type() is the wrapped type). It is safe for
// concurrent use.
type FailingBufferType struct {
	runtime.BufferType

	mu       sync.Mutex
	opts     FailingOptions
	allocs   int
	failures int
}

var _ runtime.BufferType = (*FailingBufferType)(nil)

// NewFailing wraps bt with the failure rules in opts.
func NewFailing(bt runtime.BufferType, opts FailingOptions) *FailingBufferType {
	return &FailingBufferType{BufferType: bt, opts: opts}
}

// SetOptions replaces the failure rules; the counters are kept.
func (f *FailingBufferType) SetOptions(opts FailingOptions) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.opts = opts
}

// Allocs returns the number of successful allocations so far.
func (f *FailingBufferType) Allocs() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.allocs
}

// Failures returns the number of injected failures so far.
func (f *FailingBufferType) Failures() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.failures
}

// AllocBuffer fails with an error wrapping ErrInjected and
// runtime.ErrOutOfMemory when the rules say so, else forwards to the
// wrapped type.
func (f *FailingBufferType) AllocBuffer(size uint64) (runtime.Buffer, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.opts.FailAfter >= 0 && f.allocs >= f.opts.FailAfter {
		f.failures++
		return nil, fmt.Errorf("%s: allocation %d of %d bytes (after %d allowed): %w: %w",
			f.Name(), f.allocs+f.failures, size, f.opts.FailAfter, ErrInjected, runtime.ErrOutOfMemory)
	}
	if f.opts.FailAbove > 0 && size > f.opts.FailAbove {
		f.failures++
		return nil, fmt.Errorf("%s: allocation of %d bytes above the %d-byte limit: %w: %w",
			f.Name(), size, f.opts.FailAbove, ErrInjected, runtime.ErrOutOfMemory)
	}
	buf, err := f.BufferType.AllocBuffer(size)
	if err != nil {
		return nil, err
	}
	f.allocs++
	return buf, nil
}
