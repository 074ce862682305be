package gallocr

import (
	"errors"
	"fmt"
	"reflect"
	"sync"

	"github.com/gogml/gogml/runtime"
)

// Strategy selects how the graph allocator assigns offsets.
type Strategy int

const (
	// StrategyGGML places every tensor exactly where ggml's graph allocator
	// places it (the default; checked against ggml's own plans).
	StrategyGGML Strategy = iota
	// StrategyOptimized keeps ggml's lifetimes and in-place decisions but
	// assigns offsets for the whole graph at once, in less memory.
	StrategyOptimized
)

// String names the strategy as the command line spells it.
func (s Strategy) String() string {
	switch s {
	case StrategyOptimized:
		return "optimized"
	}
	return "ggml"
}

// ParseStrategy reads "ggml" or "optimized".
func ParseStrategy(s string) (Strategy, error) {
	switch s {
	case "ggml", "":
		return StrategyGGML, nil
	case "optimized":
		return StrategyOptimized, nil
	}
	return 0, fmt.Errorf("unknown strategy %q (want ggml or optimized)", s)
}

// ErrBufferID reports a node or leaf buffer id outside the buffer list.
var ErrBufferID = errors.New("buffer id out of range")

// Placement is where the plan puts one tensor.
type Placement struct {
	// Buffer is an index into the allocator's buffer list (the first one
	// whose buffer type holds the tensor), or -1 when the allocator does not
	// place the tensor (preallocated, a view of one, or outside the graph).
	Buffer int
	Chunk  int
	Offset uint64
	// Size is the buffer type's alloc size of the tensor itself.
	Size uint64
}

// Block is one range handed out by the dynamic allocator, and its
// lifetime: the tensors that share it (a tensor and those that reuse it in
// place) and the events at which it was allocated and freed. Freed is -1
// for blocks never freed (outputs, and tensors alive at the end).
type Block struct {
	Dyn   int // index of the dynamic allocator (one per distinct buffer type)
	Size  uint64
	Alloc int
	Freed int
	At    Address
	// The block's tensors (graph-index ids, in allocation order) are
	// Plan.Members[First : First+Count]; see Plan.BlockTensors.
	First, Count int32
}

// Plan is the result of planning a graph: a placement for every tensor of
// the graph's index, the chunk sizes of every buffer, and the blocks with
// their lifetimes (for drawing, statistics and other strategies).
type Plan struct {
	Index *runtime.GraphIndex
	// Placements is indexed like Index.Tensors.
	Placements []Placement
	// Chunks gives, per entry of the buffer list, the byte size of each
	// chunk (backend buffer). Entries sharing a buffer type repeat sizes.
	Chunks [][]uint64
	// DynOf maps each entry of the buffer list to its dynamic allocator,
	// and FirstOf each dynamic allocator to its first entry in the list.
	DynOf, FirstOf []int
	// Blocks lists every allocation in the order it was made.
	Blocks []Block
	// Members holds every block's tensors, block after block.
	Members []int32
	// Events is the number of allocation events (the time axis of Blocks).
	Events   int
	Strategy Strategy
}

// tensorState is the planner's per-tensor state, one array of it per pass
// (kept by an Allocator between reserves).
type tensorState struct {
	size      uint64 // alloc size in its buffer type (same layout in place)
	nChildren int32
	nViews    int32
	bufferID  int32
	block     int32 // index into Plan.Blocks, -1 none
	nodePos   int32 // position among the graph's nodes, -1 if not a node
	// next is the tensor after this one in its block's chain (-1 at the
	// end); a block's First and Count hold the chain's head and tail
	// while the pass runs.
	next      int32
	allocated bool
	ext       bool // memory outside this allocator
}

// planScratch is a planning pass's working memory: the per-tensor state
// and the blocks as they are made (the plan gets an exact copy).
type planScratch struct {
	st     []tensorState
	blocks []Block
}

// scratchPool lends planScratch to planning passes, so that planning a
// graph on a new allocator allocates only the plan itself (see
// RATIONALE.md, "Planner scratch from a sync.Pool").
var scratchPool = sync.Pool{New: func() any { return new(planScratch) }}

// planMemory holds the arrays of an Allocator's plan; the allocator hands
// them back (to planMemPool) when a later reserve or Free replaces the
// plan.
type planMemory struct {
	placements []Placement
	blocks     []Block
	members    []int32
	// plan is the Plan itself, chunks its Chunks, dynChunks the chunk
	// sizes per dynamic allocator and sizes their storage (MaxChunks per
	// dynamic allocator), so that a reserve in steady state allocates
	// nothing.
	plan      Plan
	chunks    [][]uint64
	dynChunks [][]uint64
	sizes     []uint64
	// index holds the numbering of the planned graph (Plan.Index), unless
	// the graph keeps its own (runtime.Graph.Index).
	index runtime.IndexBuffer
}

var planMemPool = sync.Pool{New: func() any { return new(planMemory) }}

// take returns pm's array of n elements (reused when large enough) and
// keeps it in pm; a nil pm always allocates.
func take[T any](pm *planMemory, field *[]T, n int) []T {
	if pm != nil && cap(*field) >= n {
		return (*field)[:n]
	}
	v := make([]T, n)
	if pm != nil {
		*field = v
	}
	return v
}

// planner holds the per-graph state of one planning pass.
type planner struct {
	bufts  []runtime.BufferType
	dynOf  []int // buffer index -> dyn index
	dyns   []*Dyn
	ix     *runtime.GraphIndex
	st     []tensorState
	blocks []Block
	events int
	lookup map[*runtime.Tensor]int32
	err    error
}

// lookupBufferType finds bt in seen. hashable is false when bt cannot be
// a map key: a nil type, a dynamic type that is not comparable, or a
// comparable struct holding an interface whose value is not (hashing it
// panics); such a buffer type equals no other entry.
func lookupBufferType(seen map[runtime.BufferType]int, bt runtime.BufferType) (d int, found, hashable bool) {
	if bt == nil || !reflect.TypeOf(bt).Comparable() {
		return 0, false, false
	}
	defer func() {
		if recover() != nil {
			d, found, hashable = 0, false, false
		}
	}()
	d, found = seen[bt]
	return d, found, true
}

// dynIndex groups a buffer list by buffer type: entries with the same type
// share one dynamic allocator, as in ggml. A map keeps it linear in the
// length of the list.
func dynIndex(bufts []runtime.BufferType) (dynOf []int, firstOf []int) {
	switch {
	case len(bufts) == 1:
		return []int{0}, []int{0}
	case len(bufts) <= dynScan:
		idx := make([]int, 2*len(bufts))
		return dynIndexScan(bufts, idx)
	}
	return dynIndexMap(bufts)
}

// dynScan is the list length up to which dynIndex compares entries pairwise
// instead of hashing them.
const dynScan = 8

// dynIndexScan is dynIndex by pairwise comparison, into idx (two ints per
// entry: dynOf, then firstOf's array): the same groups as dynIndexMap (an
// entry that cannot be hashed cannot be compared either, and equal keys
// are equal values), without building a map.
func dynIndexScan(bufts []runtime.BufferType, idx []int) (dynOf []int, firstOf []int) {
	n := len(bufts)
	dynOf, firstOf = idx[:n:n], idx[n:n:2*n]
	var hashable [dynScan]bool
	for i, bt := range bufts {
		hashable[i] = comparableBufferType(bt)
		dynOf[i] = -1
		if hashable[i] {
			for d, f := range firstOf {
				if hashable[f] && sameBufferType(bufts[f], bt) {
					dynOf[i] = d
					break
				}
			}
		}
		if dynOf[i] < 0 {
			dynOf[i] = len(firstOf)
			firstOf = append(firstOf, i)
		}
	}
	return dynOf, firstOf
}

// comparableBufferType reports whether bt can be a map key (and so be
// compared with ==): not nil, of a comparable dynamic type, and holding no
// value that is not (comparing it with itself would panic).
func comparableBufferType(bt runtime.BufferType) (ok bool) {
	if bt == nil || !reflect.TypeOf(bt).Comparable() {
		return false
	}
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	sameBufferType(bt, bt) // panics on a value that cannot be compared
	return true
}

func sameBufferType(a, b runtime.BufferType) bool { return a == b }

// dynIndexMap is dynIndex through a map: linear in the list's length.
func dynIndexMap(bufts []runtime.BufferType) (dynOf []int, firstOf []int) {
	dynOf = make([]int, len(bufts))
	seen := make(map[runtime.BufferType]int)
	for i, bt := range bufts {
		d, found, hashable := lookupBufferType(seen, bt)
		if found {
			dynOf[i] = d
			continue
		}
		if hashable {
			seen[bt] = len(firstOf)
		}
		dynOf[i] = len(firstOf)
		firstOf = append(firstOf, i)
	}
	return dynOf, firstOf
}

func (p *planner) fail(err error) {
	if p.err == nil {
		p.err = err
	}
}

func (p *planner) tensor(id int32) *runtime.Tensor { return p.ix.Tensors[id] }

// allocate gives tensor id memory in buffer bufID unless it has memory,
// is a view, or can take over a parent's memory in place.
func (p *planner) allocate(id int32, bufID int) {
	st := &p.st[id]
	t := p.tensor(id)
	if p.err != nil || st.allocated || st.ext || t.ViewSrc != nil {
		return
	}
	if t.Op.CanInplace() {
		var buf [runtime.MaxSrc]int32
		for j, sid := range p.srcIDs(id, &buf) {
			parent := t.Src[j]
			if parent == nil || sid < 0 {
				continue
			}
			ps := &p.st[sid]
			if !ps.allocated {
				continue // memory not owned by this allocator
			}
			if parent.HasFlag(runtime.FlagOutput) || parent.ViewSrc != nil && parent.ViewSrc.HasFlag(runtime.FlagOutput) {
				continue
			}
			if !runtime.SameLayout(t, parent) {
				continue
			}
			if ps.nChildren != 1 || ps.nViews != 0 {
				continue
			}
			if parent.ViewSrc != nil {
				// A view is never marked allocated, so this is not reached;
				// memory is never reused through a view.
				continue
			}
			st.allocated = true
			st.bufferID = ps.bufferID
			st.block = ps.block
			st.size = ps.size
			b := &p.blocks[st.block]
			p.st[b.Count].next = id // Count is the chain's tail for now
			b.Count = id
			ps.allocated = false
			return
		}
	}
	if bufID < 0 || bufID >= len(p.bufts) {
		p.fail(fmt.Errorf("tensor %q: buffer id %d, have %d buffers: %w", t.Name, bufID, len(p.bufts), ErrBufferID))
		return
	}
	size := p.bufts[bufID].AllocSize(t)
	d := p.dynOf[bufID]
	at, err := p.dyns[d].Alloc(size)
	if err != nil {
		p.fail(fmt.Errorf("tensor %q (%d bytes) in %s: %w", t.Name, size, p.bufts[bufID].Name(), err))
		return
	}
	// Marked allocated only now that it has memory: a failed tensor is
	// never freed or reused in place by a later one.
	st.allocated = true
	st.bufferID = int32(bufID)
	st.block = int32(len(p.blocks))
	st.size = size
	p.blocks = append(p.blocks, Block{Dyn: d, Size: runtime.AlignUp(size, p.dyns[d].alignment), Alloc: p.events, Freed: -1, At: at, First: id, Count: id})
	p.events++
}

func (p *planner) free(id int32) {
	t := p.tensor(id)
	st := &p.st[id]
	if p.err != nil || t.HasFlag(runtime.FlagOutput) || st.block < 0 {
		return
	}
	b := &p.blocks[st.block]
	if err := p.dyns[b.Dyn].Free(b.At, st.size); err != nil {
		p.fail(fmt.Errorf("free tensor %q: %w", t.Name, err))
	}
	b.Freed = p.events
	p.events++
	st.allocated = false
}

// srcIDs returns the indices of tensor id's source slots up to its last
// one in use (-1 for none or for a source the index does not hold, which
// only a tensor outside the graph can have); buf holds them when id is not
// a node.
func (p *planner) srcIDs(id int32, buf *[runtime.MaxSrc]int32) []int32 {
	if n := p.st[id].nodePos; n >= 0 {
		return p.ix.NodeSrc(int(n))
	}
	if p.lookup == nil {
		p.lookup = make(map[*runtime.Tensor]int32, len(p.ix.Tensors))
		for i, t := range p.ix.Tensors {
			p.lookup[t] = int32(i)
		}
	}
	for j, s := range p.tensor(id).Src {
		buf[j] = -1
		if s != nil {
			if k, ok := p.lookup[s]; ok {
				buf[j] = k
			}
		}
	}
	return buf[:]
}

func bufferIDAt(ids []int, i int) int {
	if ids == nil {
		return 0
	}
	return ids[i]
}

// run is the ggml pass: leafs, then inputs, then nodes in order, freeing
// parents when their last consumer has run.
func (p *planner) run(g *runtime.Graph, nodeIDs, leafIDs []int) {
	ix := p.ix
	for i, id := range ix.Leafs {
		p.allocate(id, bufferIDAt(leafIDs, i))
		if p.err != nil {
			return // the walk stops at the first tensor that cannot be placed
		}
	}
	nodes := g.Nodes()
	for i, id := range ix.Nodes {
		n := nodes[i]
		if n.ViewSrc != nil && n.Op != runtime.OpNone {
			p.st[ix.ViewSrc[id]].nViews++
		}
		if n.HasFlag(runtime.FlagInput) {
			p.allocate(id, bufferIDAt(nodeIDs, i))
		}
		for j, s := range ix.NodeSrc(i) {
			if s < 0 {
				continue
			}
			p.st[s].nChildren++
			if n.Src[j].HasFlag(runtime.FlagInput) {
				p.allocate(s, bufferIDAt(nodeIDs, i))
			}
		}
		if p.err != nil {
			return
		}
	}
	for i, id := range ix.Nodes {
		bufID := bufferIDAt(nodeIDs, i)
		srcs := ix.NodeSrc(i)
		for _, s := range srcs {
			if s >= 0 {
				p.allocate(s, bufID)
			}
		}
		p.allocate(id, bufID)
		for _, s := range srcs {
			if s < 0 {
				continue
			}
			ps := &p.st[s]
			ps.nChildren--
			if ps.nChildren != 0 || ps.nViews != 0 {
				continue
			}
			if vs := ix.ViewSrc[s]; vs >= 0 {
				vst := &p.st[vs]
				vst.nViews--
				if vst.nViews == 0 && vst.nChildren == 0 && vst.allocated {
					p.free(vs)
				}
			} else if ps.allocated {
				p.free(s)
			}
		}
		if p.err != nil {
			return
		}
	}
}

// PlanOptions tune PlanGraph.
type PlanOptions struct {
	// NodeBufferIDs and LeafBufferIDs give, per node and leaf, an index into
	// the buffer list (nil: all 0), as ggml's reserve_n takes them.
	NodeBufferIDs, LeafBufferIDs []int
	Strategy                     Strategy
	// External reports tensors whose memory is held outside this plan
	// besides Preallocated ones (nil: a tensor with a Buffer is external).
	External func(t *runtime.Tensor) bool
}

// PlanGraph plans the memory of g over the buffer list bufts without
// allocating anything: a pure function of the graph, the buffer list and
// the buffer types' alignment, max size and alloc sizes.
func PlanGraph(g *runtime.Graph, bufts []runtime.BufferType, opt PlanOptions) (*Plan, error) {
	if len(bufts) == 0 {
		return nil, fmt.Errorf("plan: empty buffer list: %w", ErrBufferID)
	}
	dynOf, firstOf := dynIndex(bufts)
	dyns := make([]*Dyn, len(firstOf))
	for d, i := range firstOf {
		bt := bufts[i]
		dd, err := NewDyn(bt.Alignment(), bt.MaxSize())
		if err != nil {
			return nil, fmt.Errorf("plan: buffer type %s: %w", bt.Name(), err)
		}
		dyns[d] = dd
	}
	return planWith(g, bufts, dynOf, firstOf, dyns, opt, nil, nil)
}

// planWith plans g with the given dynamic allocators. The plan's arrays
// come from pm when it is not nil (an Allocator's recycled plan memory),
// and the pass's working memory from sc (nil: from scratchPool).
func planWith(g *runtime.Graph, bufts []runtime.BufferType, dynOf, firstOf []int, dyns []*Dyn, opt PlanOptions, pm *planMemory, sc *planScratch) (*Plan, error) {
	if g == nil {
		return nil, fmt.Errorf("plan: nil graph: %w", runtime.ErrGraph)
	}
	if opt.NodeBufferIDs != nil && len(opt.NodeBufferIDs) != g.NumNodes() {
		return nil, fmt.Errorf("plan: %d node buffer ids for %d nodes: %w", len(opt.NodeBufferIDs), g.NumNodes(), ErrBufferID)
	}
	if opt.LeafBufferIDs != nil && len(opt.LeafBufferIDs) != g.NumLeafs() {
		return nil, fmt.Errorf("plan: %d leaf buffer ids for %d leafs: %w", len(opt.LeafBufferIDs), g.NumLeafs(), ErrBufferID)
	}
	for _, ids := range [][]int{opt.NodeBufferIDs, opt.LeafBufferIDs} {
		for i, id := range ids {
			if id < 0 || id >= len(bufts) {
				return nil, fmt.Errorf("plan: buffer id %d at position %d, have %d buffers: %w", id, i, len(bufts), ErrBufferID)
			}
		}
	}
	var ix *runtime.GraphIndex
	if pm != nil {
		ix = pm.index.Index(g)
	} else {
		ix = g.Index()
	}
	n := len(ix.Tensors)
	if sc == nil {
		sc = scratchPool.Get().(*planScratch)
		defer scratchPool.Put(sc)
	}
	if cap(sc.st) < n {
		sc.st = make([]tensorState, n)
	}
	st := sc.st[:n]
	p := &planner{bufts: bufts, dynOf: dynOf, dyns: dyns, ix: ix, st: st}
	for _, d := range dyns {
		d.Reset()
	}
	// At most one block per tensor that may get memory of its own.
	nBlocks := 0
	for i, t := range ix.Tensors {
		b := t.Base()
		ext := false
		switch {
		case t.Preallocated || b.Preallocated:
			ext = true
		case opt.External != nil:
			ext = opt.External(b)
		default:
			ext = b.Buffer != nil
		}
		st[i] = tensorState{block: -1, nodePos: -1, next: -1, ext: ext}
		if !ext && t.ViewSrc == nil {
			nBlocks++
		}
	}
	if cap(sc.blocks) < nBlocks {
		sc.blocks = make([]Block, 0, nBlocks)
	}
	p.blocks = sc.blocks[:0]
	for i, id := range ix.Nodes {
		st[id].nodePos = int32(i)
	}
	// Sources must come first: a tensor's memory is taken over or freed by
	// its consumers, so a source that is the node itself or a later node
	// (a graph whose tensors were changed after it was built) would
	// corrupt the plan.
	for i, id := range ix.Nodes {
		for j, s := range ix.NodeSrc(i) {
			if s >= 0 && st[s].nodePos >= int32(i) {
				t := ix.Tensors[id]
				return nil, fmt.Errorf("plan: node %d %q: source %d %q is node %d, not computed before it (a cycle, or sources changed after the graph was built): %w",
					i, t.Name, j, ix.Tensors[s].Name, st[s].nodePos, runtime.ErrGraph)
			}
		}
	}
	p.run(g, opt.NodeBufferIDs, opt.LeafBufferIDs)
	if p.err != nil {
		return nil, fmt.Errorf("plan: %w", p.err)
	}
	// The plan's blocks, each with its tensors in allocation order, from
	// one array.
	var blocks []Block
	if pm != nil {
		blocks = take(pm, &pm.blocks, len(p.blocks))
	} else {
		blocks = make([]Block, len(p.blocks))
	}
	copy(blocks, p.blocks)
	sc.blocks = p.blocks[:0] // grown by append: keep the larger array
	var members []int32
	if pm != nil {
		members = take(pm, &pm.members, n)[:0]
	} else {
		members = make([]int32, 0, n)
	}
	for b := range blocks {
		blk := &blocks[b]
		start := len(members)
		for id := blk.First; id >= 0; id = st[id].next {
			members = append(members, id)
		}
		blk.First, blk.Count = int32(start), int32(len(members)-start)
	}
	var pl *Plan
	if pm != nil {
		pl = &pm.plan
	} else {
		pl = new(Plan)
	}
	*pl = Plan{Index: ix, DynOf: dynOf, FirstOf: firstOf, Blocks: blocks, Members: members, Events: p.events, Strategy: opt.Strategy}
	if opt.Strategy == StrategyOptimized {
		if err := optimizeBlocks(pl, dyns); err != nil {
			return nil, fmt.Errorf("plan (optimized): %w", err)
		}
	}
	pl.Chunks = chunkSizes(pl.Blocks, dyns, dynOf, pm)
	if pm != nil {
		pl.Placements = take(pm, &pm.placements, n)
	} else {
		pl.Placements = make([]Placement, n)
	}
	for i, t := range ix.Tensors {
		pl.Placements[i] = Placement{Buffer: -1}
		if st[i].ext {
			continue
		}
		src := int32(i)
		var extra uint64
		if t.ViewSrc != nil {
			src = ix.ViewSrc[i]
			extra = t.ViewOffs
		}
		ss := &st[src]
		if ss.block < 0 {
			continue
		}
		b := &pl.Blocks[ss.block]
		size := ss.size
		if t.ViewSrc != nil {
			size = bufts[ss.bufferID].AllocSize(t)
		}
		pl.Placements[i] = Placement{
			Buffer: firstOf[dynOf[ss.bufferID]],
			Chunk:  b.At.Chunk,
			Offset: b.At.Offset + extra,
			Size:   size,
		}
	}
	return pl, nil
}

// chunkSizes returns, per entry of the buffer list, the size of each chunk
// of its dynamic allocator: the end of the highest block placed in it (an
// unlimited allocator always has its one chunk). The arrays come from pm
// when it is not nil.
func chunkSizes(blocks []Block, dyns []*Dyn, dynOf []int, pm *planMemory) [][]uint64 {
	var dynChunks, chunks [][]uint64
	var sizes []uint64
	if pm != nil {
		dynChunks = take(pm, &pm.dynChunks, len(dyns))
		chunks = take(pm, &pm.chunks, len(dynOf))
		sizes = take(pm, &pm.sizes, len(dyns)*MaxChunks)
	} else {
		dynChunks = make([][]uint64, len(dyns))
		chunks = make([][]uint64, len(dynOf))
	}
	for d, dd := range dyns {
		dynChunks[d] = nil
		if sizes != nil {
			// A dynamic allocator opens at most MaxChunks chunks: the
			// three-index slice keeps appends inside its own share.
			dynChunks[d] = sizes[d*MaxChunks : d*MaxChunks : (d+1)*MaxChunks]
		}
		if dd.Unlimited() {
			dynChunks[d] = append(dynChunks[d], 0)
		}
	}
	for _, b := range blocks {
		cs := dynChunks[b.Dyn]
		for len(cs) <= b.At.Chunk {
			cs = append(cs, 0)
		}
		cs[b.At.Chunk] = max(cs[b.At.Chunk], b.At.Offset+b.Size)
		dynChunks[b.Dyn] = cs
	}
	for i, d := range dynOf {
		chunks[i] = dynChunks[d]
		if len(chunks[i]) == 0 {
			chunks[i] = nil // no chunk opened, as without pm
		}
	}
	return chunks
}

// BlockTensors returns the graph-index ids of block b's tensors: the one
// that allocated it, then those that reused it in place.
func (pl *Plan) BlockTensors(b int) []int32 {
	blk := &pl.Blocks[b]
	return pl.Members[blk.First : blk.First+blk.Count]
}

// Placement returns the plan's placement of t, and false when t is not in
// the plan's index.
func (pl *Plan) Placement(t *runtime.Tensor) (Placement, bool) {
	for i, u := range pl.Index.Tensors {
		if u == t {
			return pl.Placements[i], true
		}
	}
	return Placement{Buffer: -1}, false
}

// TotalSize returns the bytes of all distinct buffers of the plan (entries
// that share a buffer type are counted once), or math.MaxUint64 when the
// total does not fit in 64 bits.
func (pl *Plan) TotalSize() uint64 {
	var total uint64
	for _, s := range pl.DynSizes() {
		total = satAdd(total, s)
	}
	return total
}
