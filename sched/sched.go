// Package sched runs one compute graph over several backends, the job of
// ggml's backend scheduler (ggml_backend_sched).
//
// A Scheduler holds backends in priority order (the first is preferred).
// For each graph it assigns every node to a backend — a user's pin first,
// then the backend whose memory holds the node's weights, then ggml's
// expansion passes so that neighbours follow, then the first backend that
// supports the op — cuts the node list into splits of consecutive nodes on
// one backend, gives each split a copy of every input that lives where its
// backend cannot read, and plans all splits' tensors with one gallocr
// allocator over the backends' buffer types (ReserveN with node and leaf
// buffer ids). Compute copies each split's inputs, then runs the split on
// its backend.
//
// Like ggml, the scheduler rewires the sources of a split's nodes to the
// input copies while the schedule is in force; Reset (or the next
// schedule) puts the original sources back.
package sched

import (
	"errors"
	"fmt"

	"github.com/gogml/gogml/gallocr"
	"github.com/gogml/gogml/runtime"
)

// ErrUnsupported: no backend of the scheduler supports a node's op with its
// types and layouts.
var ErrUnsupported = errors.New("no backend supports the op")

// ErrBackendIndex: a pin names a backend the scheduler does not have.
var ErrBackendIndex = errors.New("backend index out of range")

// Option configures a Scheduler.
type Option func(*Scheduler)

// WithBufferTypes sets the buffer type used for each backend's compute
// memory (default: each backend's DefaultBufferType). The list must have
// one entry per backend.
func WithBufferTypes(bts ...runtime.BufferType) Option {
	return func(s *Scheduler) { s.bufts = append([]runtime.BufferType(nil), bts...) }
}

// WithStrategy selects the allocator's placement strategy.
func WithStrategy(st gallocr.Strategy) Option {
	return func(s *Scheduler) { s.strategy = st }
}

// Split is one run of consecutive nodes on one backend, with the inputs it
// copies from other backends' memory.
type Split struct {
	// Backend is the index of the split's backend.
	Backend int
	// Nodes are the split's nodes in evaluation order.
	Nodes []*runtime.Tensor
	// Inputs are the tensors the split reads from memory its backend cannot
	// use, and Copies their copies in the split backend's memory (same
	// index).
	Inputs, Copies []*runtime.Tensor

	graph *runtime.Graph
}

// CopyBytes is the number of bytes the split's input copies move.
func (sp *Split) CopyBytes() uint64 {
	var n uint64
	for _, c := range sp.Copies {
		n += c.NBytes()
	}
	return n
}

type srcPatch struct {
	node *runtime.Tensor
	j    int
	orig *runtime.Tensor
}

type copyKey struct {
	t       *runtime.Tensor
	backend int
}

// Scheduler assigns, splits, plans and runs graphs over several backends.
// It is not safe for concurrent use.
type Scheduler struct {
	backends []runtime.Backend
	bufts    []runtime.BufferType
	strategy gallocr.Strategy
	alloc    *gallocr.Allocator

	pins map[*runtime.Tensor]int

	// The schedule in force.
	graph    *runtime.Graph // the graph scheduled last
	assign   map[*runtime.Tensor]int
	splits   []*Split
	copies   map[copyKey]*runtime.Tensor
	patches  []srcPatch
	allocG   *runtime.Graph
	nodeIDs  []int
	leafIDs  []int
	reserved bool
}

// New returns a scheduler over backends in priority order. As in ggml, the
// last backend should be the CPU: graph inputs are placed there, so that
// callers can write them from the host, and it is the fallback for ops the
// others lack.
func New(backends []runtime.Backend, opts ...Option) (*Scheduler, error) {
	if len(backends) == 0 {
		return nil, errors.New("sched: no backends")
	}
	s := &Scheduler{backends: append([]runtime.Backend(nil), backends...), pins: map[*runtime.Tensor]int{}}
	for _, o := range opts {
		o(s)
	}
	if s.bufts == nil {
		for _, b := range s.backends {
			if b == nil {
				return nil, errors.New("sched: nil backend")
			}
			s.bufts = append(s.bufts, b.DefaultBufferType())
		}
	}
	if len(s.bufts) != len(s.backends) {
		return nil, fmt.Errorf("sched: %d buffer types for %d backends", len(s.bufts), len(s.backends))
	}
	for i, b := range s.backends {
		if b == nil {
			return nil, fmt.Errorf("sched: backend %d is nil", i)
		}
		if s.bufts[i] == nil || !b.SupportsBufferType(s.bufts[i]) {
			return nil, fmt.Errorf("sched: backend %d (%s) cannot compute in its buffer type", i, b.Name())
		}
	}
	a, err := gallocr.NewN(s.bufts, gallocr.WithStrategy(s.strategy))
	if err != nil {
		return nil, fmt.Errorf("sched: %w", err)
	}
	s.alloc = a
	return s, nil
}

// Backends returns the scheduler's backends in priority order.
func (s *Scheduler) Backends() []runtime.Backend { return s.backends }

// SetBackend pins t to backend i for the graphs scheduled from now on
// (ggml_backend_sched_set_tensor_backend).
func (s *Scheduler) SetBackend(t *runtime.Tensor, i int) error {
	if i < 0 || i >= len(s.backends) {
		return fmt.Errorf("sched: pin %q to backend %d of %d: %w", t.Name, i, len(s.backends), ErrBackendIndex)
	}
	s.pins[t] = i
	return nil
}

// Unpin removes t's pin.
func (s *Scheduler) Unpin(t *runtime.Tensor) { delete(s.pins, t) }

// Backend returns the index of the backend t was assigned to by the last
// schedule, or -1.
func (s *Scheduler) Backend(t *runtime.Tensor) int {
	if i, ok := s.assign[t]; ok {
		return i
	}
	return -1
}

// Splits returns the last schedule's splits.
func (s *Scheduler) Splits() []*Split { return s.splits }

// Allocator returns the graph allocator that plans every split's memory
// (for its plan and buffer sizes).
func (s *Scheduler) Allocator() *gallocr.Allocator { return s.alloc }

// Reset puts back the sources the last schedule rewired to input copies
// and forgets the schedule; the allocator keeps its buffers.
func (s *Scheduler) Reset() {
	for i := len(s.patches) - 1; i >= 0; i-- {
		p := s.patches[i]
		p.node.Src[p.j] = p.orig
	}
	s.patches = nil
	s.graph, s.assign, s.splits, s.copies, s.allocG = nil, nil, nil, nil, nil
}

// Free resets the scheduler and frees the allocator's buffers.
func (s *Scheduler) Free() {
	s.Reset()
	s.alloc.Free()
	s.reserved = false
}

// Reserve schedules g and sizes the backends' compute buffers for it, so
// that later graphs of the same shape run without reallocating.
func (s *Scheduler) Reserve(g *runtime.Graph) error {
	if err := s.schedule(g); err != nil {
		return err
	}
	if err := s.alloc.ReserveN(s.allocG, s.nodeIDs, s.leafIDs); err != nil {
		return fmt.Errorf("sched: %w", err)
	}
	s.reserved = true
	return nil
}

// AllocGraph schedules g and places every tensor of every split, reserving
// again when g no longer fits the buffers.
func (s *Scheduler) AllocGraph(g *runtime.Graph) error {
	if err := s.schedule(g); err != nil {
		return err
	}
	if !s.reserved || s.alloc.NeedsRealloc(s.allocG) {
		if err := s.alloc.ReserveN(s.allocG, s.nodeIDs, s.leafIDs); err != nil {
			return fmt.Errorf("sched: %w", err)
		}
		s.reserved = true
	}
	if err := s.alloc.AllocGraph(s.allocG); err != nil {
		return fmt.Errorf("sched: %w", err)
	}
	return nil
}

// Compute runs g: it schedules and places g unless g is the graph placed
// last, then, split by split, copies the inputs and computes the nodes on
// the split's backend. An error names the split and its backend.
func (s *Scheduler) Compute(g *runtime.Graph) error {
	if g == nil {
		return fmt.Errorf("sched: nil graph: %w", runtime.ErrGraph)
	}
	if s.graph != g || s.allocG == nil {
		if err := s.AllocGraph(g); err != nil {
			return err
		}
	}
	for k, sp := range s.splits {
		for i, in := range sp.Inputs {
			if err := runtime.CopyTensorData(in, sp.Copies[i]); err != nil {
				return fmt.Errorf("sched: split %d (%s): copy input %q: %w", k, s.backends[sp.Backend].Name(), in.Name, err)
			}
		}
		if err := s.backends[sp.Backend].Compute(sp.graph); err != nil {
			return fmt.Errorf("sched: split %d (%s): %w", k, s.backends[sp.Backend].Name(), err)
		}
	}
	return nil
}
