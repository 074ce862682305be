// Package gallocr is ggml's memory allocators in Go: the linear allocator
// (Tallocr), the best-fit dynamic allocator (Dyn), the graph allocator
// (Allocator: reserve, reserve with per-node/leaf buffer ids, alloc graph
// with the needs-realloc check), chunked buffers when a buffer type has a
// finite max size, and allocation of a context's tensors split across
// several buffers (AllocCtxTensors).
//
// With the default strategy every tensor lands exactly where ggml's graph
// allocator puts it. Where ggml aborts, gallocr returns an error and leaves
// nothing allocated; planning is a pure function (PlanGraph) that needs no
// backend.
package gallocr

import (
	"errors"
	"fmt"
	"sync"

	"github.com/gogml/gogml/runtime"
)

// ErrNeedsReserve: AllocGraph on an allocator with several buffers found a
// graph that no longer fits its last reserve; call Reserve again.
var ErrNeedsReserve = errors.New("graph does not fit the last reserve; reserve again")

// Allocator is ggml's graph allocator over a list of buffer types. Entries
// of the list with the same buffer type share one dynamic allocator and one
// set of buffers. An Allocator is not safe for concurrent use.
type Allocator struct {
	bufts   []runtime.BufferType
	dynOf   []int
	firstOf []int
	// mem holds the allocator's dynamic allocators and buffers (per dyn:
	// one buffer per chunk; nil: none yet); it comes from allocMemPool
	// and goes back on Free (nil until the next reserve takes one again).
	mem *allocMem
	// retired remembers the last maxRetired buffers this allocator freed
	// (oldest first in retiredOrder), so tensors still naming them are
	// recognised as its own and placed again rather than taken for memory
	// held elsewhere.
	// retired indexes retiredOrder once it is longer than retiredScan
	// (nil before: a short list is scanned).
	retired      map[runtime.Buffer]struct{}
	retiredOrder []runtime.Buffer
	// retiredFirst holds the first few retired buffers, and listInline and
	// indexInline the buffer list and its dynOf and firstOf when the list
	// is short, inside the Allocator itself: NewN then makes one
	// allocation.
	retiredFirst [4]runtime.Buffer
	listInline   [inlineList]runtime.BufferType
	indexInline  [2 * inlineList]int
	strategy     Strategy
	// lastGraph is the graph last allocated; Free unbinds its tensors.
	lastGraph *runtime.Graph

	plan *Plan // the last successful reserve; nil before one or after an error
	// planMem holds plan's arrays, reused once plan is replaced or freed.
	planMem *planMemory
}

// inlineList is the longest buffer list an Allocator holds inside itself
// (with its dynOf and firstOf); at most dynScan.
const inlineList = 4

// Option configures an Allocator.
type Option func(*Allocator)

// WithStrategy selects the placement strategy (default StrategyGGML).
func WithStrategy(s Strategy) Option { return func(a *Allocator) { a.strategy = s } }

// New returns a graph allocator for one buffer type.
func New(bt runtime.BufferType, opts ...Option) (*Allocator, error) {
	return NewN([]runtime.BufferType{bt}, opts...)
}

// NewN returns a graph allocator for a buffer list; node and leaf buffer ids
// given to ReserveN index it.
func NewN(bufts []runtime.BufferType, opts ...Option) (*Allocator, error) {
	if len(bufts) == 0 {
		return nil, fmt.Errorf("gallocr: empty buffer list: %w", ErrBufferID)
	}
	for i, bt := range bufts {
		if bt == nil {
			return nil, fmt.Errorf("gallocr: buffer type %d is nil", i)
		}
	}
	a := new(Allocator)
	switch n := len(bufts); {
	case n == 1:
		a.listInline[0] = bufts[0]
		a.bufts = a.listInline[:1:1]
		a.dynOf, a.firstOf = a.indexInline[0:1:1], a.indexInline[1:2:2] // both {0}
	case n <= inlineList:
		a.bufts = a.listInline[:n:n]
		copy(a.bufts, bufts)
		a.dynOf, a.firstOf = dynIndexScan(a.bufts, a.indexInline[:2*n])
	default:
		a.bufts = append([]runtime.BufferType(nil), bufts...)
		a.dynOf, a.firstOf = dynIndex(a.bufts)
	}
	a.retiredOrder = a.retiredFirst[:0:len(a.retiredFirst)]
	for _, i := range a.firstOf {
		if bt := a.bufts[i]; !runtime.IsPow2(bt.Alignment()) {
			return nil, fmt.Errorf("gallocr: buffer type %s: dynamic allocator: alignment %d is not a power of two: %w", bt.Name(), bt.Alignment(), runtime.ErrAlignment)
		}
	}
	a.takeMem()
	for _, o := range opts {
		o(a)
	}
	return a, nil
}

// allocMem is an Allocator's working memory between NewN (or the first
// reserve after a Free) and Free: its dynamic allocators, with their chunk
// and free-list arrays, and its per-dyn buffer lists. Pooled, so that an
// allocator made, used and freed per graph (as ggml_gallocr_new/free are)
// allocates little (the buffer lists themselves are new with each
// reallocation: callers may keep them); see RATIONALE.md, "An allocator's working memory from
// a pool".
type allocMem struct {
	dyns    []*Dyn
	buffers [][]runtime.Buffer
	// index numbers, at Free, a last graph other than the plan's.
	index runtime.IndexBuffer
	// scratch is the planning passes' working memory, and spare the plan
	// memory the allocator's last plan left (nil: none), which its next
	// reserve takes: an allocator made, used and freed per graph then
	// takes all of its working memory from the pool at once (one Get and
	// one Put rather than three of each).
	scratch planScratch
	spare   *planMemory
	// deferred collects, during AllocGraph, views met before their base
	// had a place.
	deferred []*runtime.Tensor
}

var allocMemPool = sync.Pool{New: func() any { return new(allocMem) }}

// takeMem gives a (whose buffer types NewN checked) working memory: one
// empty dynamic allocator per distinct buffer type and no buffers.
func (a *Allocator) takeMem() {
	m := allocMemPool.Get().(*allocMem)
	n := len(a.firstOf)
	for len(m.dyns) < n {
		m.dyns = append(m.dyns, new(Dyn))
	}
	if cap(m.buffers) < n {
		m.buffers = make([][]runtime.Buffer, n)
	}
	m.buffers = m.buffers[:n]
	for d, i := range a.firstOf {
		bt := a.bufts[i]
		m.dyns[d].init(bt.Alignment(), bt.MaxSize())
		m.buffers[d] = nil
	}
	a.mem = m
}

// putMem hands a's working memory back (its buffers already released).
func (a *Allocator) putMem() {
	if a.mem == nil {
		return
	}
	allocMemPool.Put(a.mem)
	a.mem = nil
}

// ours reports whether buf was allocated by this allocator (now or before a
// reallocation).
func (a *Allocator) ours(buf runtime.Buffer) bool {
	if a.mem != nil {
		for _, bs := range a.mem.buffers {
			for _, b := range bs {
				if b == buf {
					return true
				}
			}
		}
	}
	return a.isRetired(buf)
}

// retiredScan is the length up to which the retired buffers are scanned
// rather than looked up in a map.
const retiredScan = 8

func (a *Allocator) isRetired(buf runtime.Buffer) bool {
	if a.retired != nil {
		_, ok := a.retired[buf]
		return ok
	}
	for _, b := range a.retiredOrder {
		if b == buf {
			return true
		}
	}
	return false
}

func (a *Allocator) external(base *runtime.Tensor) bool {
	return base.Buffer != nil && !a.ours(base.Buffer)
}

// Reserve plans g with every node and leaf in buffer 0 and makes the
// buffers large enough for it.
func (a *Allocator) Reserve(g *runtime.Graph) error { return a.ReserveN(g, nil, nil) }

// ReserveN plans g with the given buffer id per node and per leaf (nil: all
// 0) and (re)allocates every buffer that is too small. A graph that cannot
// be planned leaves the last reserve as it was; when a buffer cannot be
// allocated, nothing of this allocator stays allocated. Either way Reserve
// may be called again.
func (a *Allocator) ReserveN(g *runtime.Graph, nodeIDs, leafIDs []int) error {
	if a.mem == nil {
		a.takeMem() // freed before
	}
	mem := a.takePlanMem()
	// Reserving the graph of the last plan again: its numbering moves to
	// the new plan's memory (and back if planning fails) rather than
	// being computed again.
	again := a.planMem != nil && a.plan.Index.Numbers(g)
	if again {
		mem.index, a.planMem.index = a.planMem.index, mem.index
	}
	pl, err := planWith(g, a.bufts, a.dynOf, a.firstOf, a.mem.dyns[:len(a.firstOf)], PlanOptions{
		NodeBufferIDs: nodeIDs, LeafBufferIDs: leafIDs, Strategy: a.strategy, External: a.external,
	}, mem, &a.mem.scratch)
	if err != nil {
		if again {
			mem.index, a.planMem.index = a.planMem.index, mem.index
		}
		a.givePlanMem(mem)
		return fmt.Errorf("gallocr: reserve: %w", err)
	}
	a.setPlan(pl, mem)
	return a.reallocate(pl)
}

// setPlan makes pl (with its arrays in mem) the allocator's plan and hands
// the arrays of the plan it replaces back for reuse.
func (a *Allocator) setPlan(pl *Plan, mem *planMemory) {
	if a.planMem != nil {
		a.givePlanMem(a.planMem)
	}
	a.plan, a.planMem = pl, mem
}

// takePlanMem returns plan memory for a reserve: the allocator's spare,
// else some from the pool.
func (a *Allocator) takePlanMem() *planMemory {
	if m := a.mem.spare; m != nil {
		a.mem.spare = nil
		return m
	}
	return planMemPool.Get().(*planMemory)
}

// givePlanMem keeps m as the allocator's spare plan memory, or hands it
// to the pool when the allocator has one already (or no working memory).
func (a *Allocator) givePlanMem(m *planMemory) {
	if a.mem != nil && a.mem.spare == nil {
		a.mem.spare = m
		return
	}
	planMemPool.Put(m)
}

// reallocate gives each dynamic allocator one buffer per chunk of at least
// the plan's size, replacing buffers that are too small.
func (a *Allocator) reallocate(pl *Plan) error {
	for d, first := range a.firstOf {
		need := pl.Chunks[first]
		cur := a.mem.buffers[d]
		grow := cur == nil || len(need) > len(cur)
		for c := 0; !grow && c < len(need); c++ {
			grow = need[c] > cur[c].Size()
		}
		if !grow {
			continue
		}
		a.releaseDyn(d)
		bufs := make([]runtime.Buffer, 0, len(need)) // the caller may keep Buffers' slices
		for c, size := range need {
			b, err := a.bufts[first].AllocBuffer(size)
			if err != nil {
				for _, x := range bufs {
					x.Free()
				}
				a.freeAll()
				return fmt.Errorf("gallocr: allocate %s buffer %d (chunk %d) of %d bytes: %w", a.bufts[first].Name(), first, c, size, err)
			}
			b.SetUsage(runtime.UsageCompute)
			bufs = append(bufs, b)
		}
		a.mem.buffers[d] = bufs
	}
	return nil
}

// maxRetired bounds the freed buffers an allocator remembers. A tensor
// still naming a buffer freed longer ago counts as held elsewhere: give it
// a place again by allocating a graph that holds it before that many
// reallocations.
const maxRetired = 64

// releaseDyn frees the buffers of dynamic allocator d, remembering them so
// tensors still pointing at them are recognised as ours.
func (a *Allocator) releaseDyn(d int) {
	for _, b := range a.mem.buffers[d] {
		b.Free()
		if a.isRetired(b) {
			continue
		}
		if len(a.retiredOrder) == maxRetired {
			delete(a.retired, a.retiredOrder[0])
			a.retiredOrder = append(a.retiredOrder[:0], a.retiredOrder[1:]...)
		}
		a.retiredOrder = append(a.retiredOrder, b)
		switch {
		case a.retired != nil:
			a.retired[b] = struct{}{}
		case len(a.retiredOrder) > retiredScan:
			a.retired = make(map[runtime.Buffer]struct{}, maxRetired)
			for _, r := range a.retiredOrder {
				a.retired[r] = struct{}{}
			}
		}
	}
	a.mem.buffers[d] = nil
}

func (a *Allocator) freeAll() {
	if a.mem != nil {
		for d := range a.mem.buffers {
			a.releaseDyn(d)
		}
	}
	a.setPlan(nil, nil)
}

// Free releases every buffer of the allocator. The tensors of the graph it
// allocated last (and of its last reserve) that lie in its buffers lose
// their place (Buffer nil), so another allocator given that graph places
// them anew; tensors of graphs allocated before still name the freed
// buffers until they are allocated again. The allocator can reserve again.
func (a *Allocator) Free() {
	pix := a.planIndex()
	if g := a.lastGraph; g != nil && !pix.Numbers(g) {
		if a.mem != nil {
			a.unbind(a.mem.index.Index(g))
		} else {
			a.unbind(g.Index())
		}
	}
	if pix != nil {
		a.unbind(pix)
	}
	a.lastGraph = nil
	a.freeAll()
	a.putMem()
}

// unbind takes their place from the tensors of ix that lie in a's buffers.
func (a *Allocator) unbind(ix *runtime.GraphIndex) {
	for _, t := range ix.Tensors {
		if t.Buffer != nil && !t.Preallocated && a.ours(t.Buffer) {
			t.Buffer, t.Offset = nil, 0
		}
	}
}

func (a *Allocator) planIndex() *runtime.GraphIndex {
	if a.plan == nil {
		return nil
	}
	return a.plan.Index
}

// Plan returns the plan of the last successful reserve (nil before). The
// plan, the value and its arrays (placements, blocks, members, and the
// graph's numbering, Index, unless the graph keeps its own from
// runtime.Graph.Index), is the allocator's: it stays valid until its next
// successful reserve or Free, which reuse it, so a caller that keeps a
// plan across them keeps a copy; PlanGraph returns plans of their own.
func (a *Allocator) Plan() *Plan { return a.plan }

// Buffers returns the backend buffers of buffer-list entry i, one per chunk.
func (a *Allocator) Buffers(i int) []runtime.Buffer {
	if a.mem == nil {
		return nil // freed
	}
	return a.mem.buffers[a.dynOf[i]]
}

// BufferSize returns the bytes allocated for buffer-list entry i; 0 for an
// entry that shares its buffer type with an earlier one (counted there).
func (a *Allocator) BufferSize(i int) (uint64, error) {
	if i < 0 || i >= len(a.bufts) {
		return 0, fmt.Errorf("gallocr: buffer %d of %d: %w", i, len(a.bufts), ErrBufferID)
	}
	if a.firstOf[a.dynOf[i]] != i {
		return 0, nil
	}
	var s uint64
	for _, b := range a.Buffers(i) {
		s += b.Size()
	}
	return s, nil
}

// placedIn returns the buffer a planned tensor lives in.
func (a *Allocator) placedIn(ta Placement) runtime.Buffer {
	return a.mem.buffers[a.dynOf[ta.Buffer]][ta.Chunk]
}

// allocSizeOK reports whether t still fits its planned place. A tensor that
// already sits at that place, or has memory outside the allocator, fits.
func (a *Allocator) allocSizeOK(t *runtime.Tensor, ta Placement) bool {
	if t.ViewSrc != nil || t.Preallocated {
		return true
	}
	if t.Buffer != nil {
		if ta.Buffer >= 0 && t.Buffer == a.placedIn(ta) && t.Offset == ta.Offset {
			return true
		}
		if !a.ours(t.Buffer) {
			return true
		}
	}
	if ta.Buffer < 0 {
		return false
	}
	return ta.Size >= a.bufts[ta.Buffer].AllocSize(t)
}

// NeedsRealloc reports whether g does not fit the last reserve: a different
// number of nodes or leafs, or a node or source that needs more bytes than
// planned.
func (a *Allocator) NeedsRealloc(g *runtime.Graph) bool {
	if a.plan == nil || g.NumNodes() != len(a.plan.Index.Nodes) || g.NumLeafs() != len(a.plan.Index.Leafs) {
		return true
	}
	rix := a.plan.Index
	if rix.Numbers(g) {
		// The graph the plan was made for: check each tensor once.
		for id, t := range rix.Tensors {
			if !a.allocSizeOK(t, a.plan.Placements[id]) {
				return true
			}
		}
		return false
	}
	for i, n := range g.Nodes() {
		if !a.allocSizeOK(n, a.plan.Placements[rix.Nodes[i]]) {
			return true
		}
		srcs := rix.NodeSrc(i)
		for j, s := range n.Src {
			if s == nil {
				continue
			}
			if j >= len(srcs) || srcs[j] < 0 || !a.allocSizeOK(s, a.plan.Placements[srcs[j]]) {
				return true
			}
		}
	}
	return false
}

// AllocGraph places every tensor of g as the last reserve planned. If g no
// longer fits, an allocator with one buffer reserves again by itself; one
// with several returns ErrNeedsReserve.
func (a *Allocator) AllocGraph(g *runtime.Graph) error {
	if a.NeedsRealloc(g) {
		if len(a.bufts) != 1 {
			return fmt.Errorf("gallocr: alloc graph: %w", ErrNeedsReserve)
		}
		if err := a.Reserve(g); err != nil {
			return err
		}
	}
	for _, bs := range a.mem.buffers {
		for _, b := range bs {
			b.Reset()
		}
	}
	rix := a.plan.Index
	same := rix.Numbers(g)
	a.lastGraph = g
	a.mem.deferred = a.mem.deferred[:0]
	for i, l := range g.Leafs() {
		if err := a.initTensor(l, a.plan.Placements[rix.Leafs[i]]); err != nil {
			return err
		}
	}
	for i, n := range g.Nodes() {
		for j, r := range rix.NodeSrc(i) {
			s := n.Src[j]
			if s == nil {
				continue
			}
			if same && rix.InGraph[r] {
				continue // a leaf or an earlier node: initialised in its turn
			}
			if err := a.initTensor(s, a.plan.Placements[r]); err != nil {
				return err
			}
		}
		if err := a.initTensor(n, a.plan.Placements[rix.Nodes[i]]); err != nil {
			return err
		}
	}
	// ggml leaves a view without memory when its base is placed after it
	// in this order (a leaf viewing a node, say); the plan puts it at its
	// base's place plus its offset, and so does this.
	for _, v := range a.mem.deferred {
		if v.Buffer == nil && v.ViewSrc.Buffer != nil {
			if err := runtime.ViewInit(v); err != nil {
				return fmt.Errorf("gallocr: %w", err)
			}
		}
	}
	return nil
}

func (a *Allocator) initTensor(t *runtime.Tensor, ta Placement) error {
	if t.ViewSrc != nil {
		base := t.ViewSrc
		if base.Buffer != nil && t.Buffer == base.Buffer && t.Offset == base.Offset+t.ViewOffs {
			return nil // bound already
		}
		if t.Buffer != nil && !a.ours(t.Buffer) {
			return nil // memory held elsewhere
		}
		t.Buffer = nil
		if base.Buffer == nil {
			if !base.Preallocated {
				a.mem.deferred = append(a.mem.deferred, t) // its base may come later
			}
			return nil
		}
		return runtime.ViewInit(t)
	}
	if t.Preallocated {
		return nil
	}
	if t.Buffer != nil {
		if ta.Buffer >= 0 && t.Buffer == a.placedIn(ta) && t.Offset == ta.Offset {
			return nil // placed already
		}
		if !a.ours(t.Buffer) {
			return nil // memory held elsewhere
		}
		t.Buffer = nil // a stale place from an earlier reserve
	}
	if ta.Buffer < 0 {
		return fmt.Errorf("gallocr: tensor %q has no place in the last reserve: %w", t.Name, ErrNeedsReserve)
	}
	// The plan checked alignment and bounds, and NeedsRealloc the size, so
	// the tensor is bound directly (runtime.TensorAlloc would check again).
	buf := a.placedIn(ta)
	t.Buffer, t.Offset = buf, ta.Offset
	if err := buf.InitTensor(t); err != nil {
		t.Buffer, t.Offset = nil, 0
		return fmt.Errorf("gallocr: tensor %q: init: %w", t.Name, err)
	}
	return nil
}
