package gallocr

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"

	"github.com/gogml/gogml/runtime"
)

// The optimized strategy keeps every block that ggml's pass made (its size,
// its lifetime, the tensors that share it in place) and only chooses new
// places for them, offline, once the whole graph's lifetimes are known.
//
// Per dynamic allocator it runs a greedy placer several times, each time
// over a different order of the blocks (by size, by size times lifetime, by
// the live bytes around a block, by allocation time, ...). The placer puts
// each block into the tightest gap left among the already placed blocks
// whose lifetimes overlap its own (then, in a second round of orders, the
// lowest gap), or on top of them when no gap is large enough; with a chunk
// limit it picks the chunk that grows least and opens chunks as needed.
// The best order is then improved by local repair: the block that last
// raised the height moves to the front or to a random earlier position, or
// two blocks of the order swap, and the change is kept when the plan does
// not grow; a repack keeps the places of the unchanged prefix and stops as
// soon as it is worse. The search stops at the live-bytes lower bound, and
// the result is kept only when it is smaller than ggml's own placement of
// that allocator.

// ErrOptimize reports an internal inconsistency of the optimized strategy.
var ErrOptimize = errors.New("optimized planner")

// MaxChunkSize returns the per-chunk size limit of the allocator, or 0 when
// chunks are unlimited.
func (d *Dyn) MaxChunkSize() uint64 { return d.maxChunk }

// optPackWork bounds the search per allocator: at most optPackWork/n packs
// of n blocks (orders and repair rounds together, at least 2), so a graph
// of tens of thousands of nodes is planned in about a second while graphs
// of a few thousand get the whole search.
const optPackWork = 1 << 16

// optWorkBudget bounds the packer's work per allocator, counted in
// neighbour spans looked at and placed items moved: a graph whose blocks
// mostly overlap (long-lived outputs among hundreds of thousands of
// blocks) would otherwise cost a quadratic search per pack. When it runs
// out, the best complete pack so far is kept, or ggml's own placement
// when none completed.
const optWorkBudget = 1 << 28

// optRepairRounds bounds the local-repair rounds per allocator; planning
// time grows linearly with it.
const optRepairRounds = 64

// optRepairStall ends local repair after this many rounds in a row without
// a smaller plan.
const optRepairStall = 24

// optSortDegree is the neighbour count up to which the packer lists an
// item's neighbours and sorts the placed ones by offset; it walks the
// chunk in offset order for items with more.
const optSortDegree = 16

// optItem is one block as the packer sees it.
type optItem struct {
	size       uint64
	start, end int // lifetime [start, end); end math.MaxInt if never freed
}

// optSpan is an occupied byte range of a chunk.
type optSpan struct {
	lo, hi uint64
}

// optChunk is one chunk while packing.
type optChunk struct {
	capacity uint64  // most bytes the chunk may use
	height   uint64  // high-water mark so far
	byOffset []int32 // placed items by offset
}

// packer places the blocks of one dynamic allocator.
type packer struct {
	items    []optItem
	adj      [][]int32 // lifetime-overlapping items, nil for many
	align    uint64    // every size is a multiple, hence every offset
	maxChunk uint64    // 0: one unlimited chunk
	// firstFit takes the lowest gap that fits instead of the tightest.
	firstFit bool

	// State of the last pack: the order it followed, of which the first
	// valid items are placed; the places, the chunks and their total.
	stateOrder []int32
	valid      int
	off        []uint64
	chunk      []int32
	placed     []bool
	chunks     []optChunk
	sum        uint64
	// critical is the item that last raised a chunk's height; critAt
	// gives it after each position of the order.
	critical int32
	critAt   []int32

	spans []optSpan // scratch
	// work left of optWorkBudget; a pack stops when it runs out.
	work int64
}

func newPacker(items []optItem, align, maxChunk uint64) *packer {
	n := len(items)
	p := &packer{items: items, align: align, maxChunk: maxChunk,
		off: make([]uint64, n), chunk: make([]int32, n), placed: make([]bool, n),
		adj: make([][]int32, n), stateOrder: make([]int32, n), critAt: make([]int32, n), work: optWorkBudget}
	byStart := make([]int32, n)
	for i := range byStart {
		byStart[i] = int32(i)
	}
	byStartCmp := func(a, b int32) int { return cmp.Compare(items[a].start, items[b].start) }
	if !slices.IsSortedFunc(byStart, byStartCmp) { // blocks come in allocation order
		slices.SortStableFunc(byStart, byStartCmp)
	}
	starts := make([]int, n)
	ends := make([]int, n)
	for x, i := range byStart {
		starts[x] = items[i].start
		ends[x] = items[i].end
	}
	slices.Sort(ends)
	// Neighbour counts without listing pairs: the items that start before
	// i ends, less those that end before i starts, less i itself.
	deg := make([]int, n)
	for i, it := range items {
		before, _ := slices.BinarySearch(starts, it.end)
		endedBefore, _ := slices.BinarySearch(ends, it.start+1)
		deg[i] = before - endedBefore - 1
	}
	// Only items with few neighbours keep a neighbour list (so memory stays
	// linear): those started earlier and still alive, and those starting
	// during the item's life. The sweep keeps the items alive at each
	// start, in a heap by end time.
	var alive optAlive
	alive.pos = make([]int32, n)
	listed := 0
	for _, d := range deg {
		if d <= optSortDegree {
			listed += d
		}
	}
	backing := make([]int32, listed)
	for x, i := range byStart {
		it := items[i]
		alive.expire(items, it.start)
		if d := deg[i]; d <= optSortDegree {
			adj := backing[:0:d]
			backing = backing[d:]
			adj = append(adj, alive.items...)
			for _, j := range byStart[x+1:] {
				if items[j].start >= it.end {
					break
				}
				adj = append(adj, j)
			}
			p.adj[i] = adj
		}
		alive.add(items, i)
	}
	return p
}

// optAlive is the set of items alive at a moment of a sweep: a list in
// any order plus a min-heap by end time for expiring them.
type optAlive struct {
	items []int32
	pos   []int32 // item -> index in items
	heap  []int32
}

func (a *optAlive) add(items []optItem, i int32) {
	a.pos[i] = int32(len(a.items))
	a.items = append(a.items, i)
	h := append(a.heap, i)
	for k := len(h) - 1; k > 0; {
		parent := (k - 1) / 2
		if items[h[parent]].end <= items[h[k]].end {
			break
		}
		h[parent], h[k] = h[k], h[parent]
		k = parent
	}
	a.heap = h
}

// expire drops the items that end at or before t.
func (a *optAlive) expire(items []optItem, t int) {
	for len(a.heap) > 0 && items[a.heap[0]].end <= t {
		i := a.heap[0]
		h := a.heap
		last := len(h) - 1
		h[0] = h[last]
		h = h[:last]
		for k := 0; ; {
			l, r, m := 2*k+1, 2*k+2, k
			if l < len(h) && items[h[l]].end < items[h[m]].end {
				m = l
			}
			if r < len(h) && items[h[r]].end < items[h[m]].end {
				m = r
			}
			if m == k {
				break
			}
			h[k], h[m] = h[m], h[k]
			k = m
		}
		a.heap = h
		// Swap-remove from the list.
		k := a.pos[i]
		moved := a.items[len(a.items)-1]
		a.items[k] = moved
		a.pos[moved] = k
		a.items = a.items[:len(a.items)-1]
	}
}

// fitIn finds the place for item i in chunk c: the tightest gap among the
// placed overlapping items of that chunk, else on top of them. It returns
// the offset, the gap's slack (math.MaxUint64 for the top) and whether the
// item fits within the chunk's capacity.
func (p *packer) fitIn(i int32, c int32) (off, slack uint64, ok bool) {
	size := p.items[i].size
	ch := &p.chunks[c]
	var cur uint64
	best, bestSlack := uint64(0), uint64(math.MaxUint64)
	visit := func(lo, hi uint64) {
		if lo > cur && lo-cur >= size {
			if g := lo - cur - size; g < bestSlack && (!p.firstFit || bestSlack == math.MaxUint64) {
				best, bestSlack = cur, g
			}
		}
		cur = max(cur, hi)
	}
	if p.adj[i] != nil {
		p.work -= int64(len(p.adj[i]))
		// Few neighbours: sort the placed ones by offset.
		spans := p.spans[:0]
		for _, j := range p.adj[i] {
			if p.placed[j] && p.chunk[j] == c {
				spans = append(spans, optSpan{p.off[j], p.off[j] + p.items[j].size})
			}
		}
		slices.SortFunc(spans, func(a, b optSpan) int { return cmp.Compare(a.lo, b.lo) })
		p.spans = spans
		for _, s := range spans {
			visit(s.lo, s.hi)
		}
	} else {
		// Many: walk the chunk's items in offset order and skip those
		// whose lifetimes do not meet item i's.
		it := p.items[i]
		p.work -= int64(len(ch.byOffset))
		for _, j := range ch.byOffset {
			if o := p.items[j]; o.start < it.end && it.start < o.end {
				visit(p.off[j], p.off[j]+o.size)
			}
		}
	}
	if bestSlack != math.MaxUint64 {
		return best, bestSlack, true
	}
	return cur, math.MaxUint64, cur+size <= ch.capacity && cur+size >= cur
}

// openChunk appends an empty chunk, reusing an earlier pack's storage.
func (p *packer) openChunk(capacity uint64) {
	if len(p.chunks) < cap(p.chunks) {
		p.chunks = p.chunks[:len(p.chunks)+1]
		ch := &p.chunks[len(p.chunks)-1]
		*ch = optChunk{capacity: capacity, byOffset: ch.byOffset[:0]}
		return
	}
	p.chunks = append(p.chunks, optChunk{capacity: capacity})
}

// pack places the items in the given order and returns the total bytes,
// or math.MaxUint64 as soon as the total passes limit. It keeps the places
// of the longest prefix that the order shares with the previous pack's.
func (p *packer) pack(order []int32, limit uint64) uint64 {
	k := 0
	for k < p.valid && order[k] == p.stateOrder[k] {
		k++
	}
	p.rollback(k)
	copy(p.stateOrder[k:], order[k:])
	for pos := k; pos < len(order); pos++ {
		p.place(order[pos])
		p.critAt[pos] = p.critical
		p.valid = pos + 1
		if p.sum > limit || p.work < 0 {
			return math.MaxUint64
		}
	}
	return p.sum
}

// rollback forgets every place but those of the previous pack's first k
// items.
func (p *packer) rollback(k int) {
	if k == 0 {
		clear(p.placed)
		p.chunks = p.chunks[:0]
		if p.maxChunk == 0 {
			p.openChunk(unlimitedBlock)
		}
		p.critical, p.sum, p.valid = -1, 0, 0
		return
	}
	for _, i := range p.stateOrder[k:p.valid] {
		p.placed[i] = false
	}
	// Chunks opened after the prefix hold no prefix item and come last.
	n := 0
	p.sum = 0
	for c := range p.chunks {
		ch := &p.chunks[c]
		ch.byOffset = slices.DeleteFunc(ch.byOffset, func(j int32) bool { return !p.placed[j] })
		ch.height = 0
		for _, j := range ch.byOffset {
			ch.height = max(ch.height, p.off[j]+p.items[j].size)
		}
		p.sum = satAdd(p.sum, ch.height)
		if len(ch.byOffset) > 0 || c == 0 && p.maxChunk == 0 {
			n = c + 1
		}
	}
	p.chunks = p.chunks[:n]
	p.critical, p.valid = p.critAt[k-1], k
}

// place puts item i at the best place among the open chunks, or opens one.
func (p *packer) place(i int32) {
	size := p.items[i].size
	bestC, bestOff := int32(-1), uint64(0)
	var bestGrow, bestSlack uint64
	for c := range p.chunks {
		off, slack, ok := p.fitIn(i, int32(c))
		if !ok {
			continue
		}
		grow := uint64(0)
		if h := off + size; h > p.chunks[c].height {
			grow = h - p.chunks[c].height
		}
		if bestC < 0 || grow < bestGrow || grow == bestGrow && slack < bestSlack {
			bestC, bestOff, bestGrow, bestSlack = int32(c), off, grow, slack
		}
	}
	if bestC < 0 {
		// Only a limited allocator gets here: open a chunk. The last one
		// has no limit; a block larger than the limit gets a chunk of its
		// own size.
		capacity := max(p.maxChunk, size)
		if len(p.chunks) == MaxChunks-1 {
			capacity = unlimitedBlock
		}
		p.openChunk(capacity)
		bestC, bestOff = int32(len(p.chunks)-1), 0
		bestGrow = size
	}
	p.off[i], p.chunk[i], p.placed[i] = bestOff, bestC, true
	ch := &p.chunks[bestC]
	ch.height = max(ch.height, bestOff+size)
	p.sum = satAdd(p.sum, bestGrow)
	k, _ := slices.BinarySearchFunc(ch.byOffset, bestOff, func(j int32, off uint64) int { return cmp.Compare(p.off[j], off) })
	p.work -= int64(len(ch.byOffset)-k) / 16 // the move of the items above
	ch.byOffset = slices.Insert(ch.byOffset, k, i)
	if bestGrow > 0 {
		p.critical = i
	}
}

// optBreadth returns, per item, the most bytes alive at any moment of its
// lifetime (the "breadth" of Pisarchyk & Lee).
func optBreadth(items []optItem) []uint64 {
	type ev struct {
		at    int
		delta int64
	}
	evs := make([]ev, 0, 2*len(items))
	for _, it := range items {
		evs = append(evs, ev{it.start, int64(it.size)})
		if it.end != math.MaxInt {
			evs = append(evs, ev{it.end, -int64(it.size)})
		}
	}
	slices.SortFunc(evs, func(a, b ev) int { return cmp.Compare(a.at, b.at) })
	times := make([]int, 0, len(evs))
	live := make([]uint64, 0, len(evs)) // live bytes from times[k] on
	var cur int64
	for k, e := range evs {
		cur += e.delta
		if k+1 < len(evs) && evs[k+1].at == e.at {
			continue
		}
		times = append(times, e.at)
		live = append(live, uint64(max(cur, 0)))
	}
	// suffix[k]: most live bytes from times[k] to the end, for items
	// never freed.
	suffix := make([]uint64, len(live)+1)
	for k := len(live) - 1; k >= 0; k-- {
		suffix[k] = max(suffix[k+1], live[k])
	}
	// tree: a segment tree of live for range maxima, so a long life costs
	// a logarithmic query, not a walk over every moment it spans.
	m := len(live)
	tree := make([]uint64, 2*m)
	copy(tree[m:], live)
	for k := m - 1; k > 0; k-- {
		tree[k] = max(tree[2*k], tree[2*k+1])
	}
	breadth := make([]uint64, len(items))
	for i, it := range items {
		k, _ := slices.BinarySearch(times, it.start)
		if it.end == math.MaxInt {
			breadth[i] = suffix[k]
			continue
		}
		e, _ := slices.BinarySearch(times, it.end) // first moment at or after the end
		var b uint64
		for lo, hi := k+m, e+m; lo < hi; lo, hi = lo>>1, hi>>1 {
			if lo&1 == 1 {
				b = max(b, tree[lo])
				lo++
			}
			if hi&1 == 1 {
				hi--
				b = max(b, tree[hi])
			}
		}
		breadth[i] = b
	}
	return breadth
}

// optOrderCount is the number of starting orders optOrder knows.
const optOrderCount = 6

// optKey sorts items: smallest keys first, ties on the item index.
type optKey struct {
	k [3]uint64
	i int32
}

// optOrder returns starting order number k for the packer. Every order
// ends its ties on the item index, so it is deterministic.
func optOrder(k int, items []optItem, events int, breadth func() []uint64) []int32 {
	var br []uint64
	if k == 3 {
		br = breadth()
	}
	keys := make([]optKey, len(items))
	for i, it := range items {
		end := it.end
		if end == math.MaxInt {
			end = events
		}
		life := uint64(max(end-it.start, 1))
		size, start := it.size, uint64(max(it.start, 0))
		var key [3]uint64 // ascending; ^x sorts x descending
		switch k {
		case 0: // largest first, longer lives first among equals
			key = [3]uint64{^size, ^life, start}
		case 1: // largest first, earlier first among equals
			key = [3]uint64{^size, start, 0}
		case 2: // largest area (bytes times lifetime) first
			key = [3]uint64{^math.Float64bits(float64(size) * float64(life)), ^size, start}
		case 3: // items alive at the busiest moments first
			key = [3]uint64{^br[i], ^size, start}
		case 4: // longest lived first
			key = [3]uint64{^life, ^size, start}
		default: // allocation order, as an online allocator sees it
			key = [3]uint64{start, ^size, 0}
		}
		keys[i] = optKey{key, int32(i)}
	}
	slices.SortFunc(keys, func(a, b optKey) int {
		for x := range a.k {
			if a.k[x] != b.k[x] {
				return cmp.Compare(a.k[x], b.k[x])
			}
		}
		return cmp.Compare(a.i, b.i)
	})
	o := make([]int32, len(items))
	for x, key := range keys {
		o[x] = key.i
	}
	return o
}

// liveBound returns the most bytes alive at one moment: no pack of items
// needs fewer. Times must lie in [0, events]; otherwise it returns 0. The
// sums are exact (128-bit); a bound past math.MaxUint64 is math.MaxUint64.
func liveBound(items []optItem, events int) uint64 {
	type sum128 struct{ hi, lo uint64 }
	add := func(s *sum128, v uint64) {
		var c uint64
		s.lo, c = bits.Add64(s.lo, v, 0)
		s.hi += c
	}
	plus := make([]sum128, events+1)
	minus := make([]sum128, events+1)
	for _, it := range items {
		if it.start < 0 || it.start > events || it.end != math.MaxInt && (it.end < 0 || it.end > events) {
			return 0
		}
		add(&plus[it.start], it.size)
		if it.end != math.MaxInt {
			add(&minus[it.end], it.size)
		}
	}
	var live, peak sum128
	for t := range plus {
		var c uint64
		live.lo, c = bits.Add64(live.lo, plus[t].lo, 0)
		live.hi += plus[t].hi + c
		live.lo, c = bits.Sub64(live.lo, minus[t].lo, 0)
		live.hi -= minus[t].hi + c
		if live.hi > peak.hi || live.hi == peak.hi && live.lo > peak.lo {
			peak = live
		}
	}
	if peak.hi != 0 {
		return math.MaxUint64
	}
	return peak.lo
}

// packDyn finds places for items and returns offsets, chunks and the total
// bytes of the best pack found.
func packDyn(items []optItem, events int, align, maxChunk, bound uint64) (off []uint64, chunk []int32, total uint64) {
	if slices.ContainsFunc(items, func(it optItem) bool { return it.end <= it.start || it.size%align != 0 }) {
		// An empty lifetime meets nothing; give it one moment instead,
		// which only adds constraints. Aligned sizes keep every offset
		// aligned.
		items = slices.Clone(items)
		for x := range items {
			items[x].end = max(items[x].end, items[x].start+1)
			items[x].size = runtime.AlignUp(items[x].size, align)
		}
	}
	p := newPacker(items, align, maxChunk)
	best := uint64(math.MaxUint64)
	var bestOrder []int32
	var bestCritical int32
	keep := func(order []int32, t uint64) {
		best, bestOrder, bestCritical = t, order, p.critical
		off = slices.Clone(p.off)
		chunk = slices.Clone(p.chunk)
	}
	var br []uint64
	breadth := func() []uint64 {
		if br == nil {
			br = optBreadth(items)
		}
		return br
	}
	bestFirstFit := false
	maxPacks, packs := max(2, optPackWork/max(len(items), 1)), 0
	for k := range 2 * optOrderCount {
		if packs >= maxPacks || p.work < 0 {
			break
		}
		packs++
		if k == optOrderCount {
			p.firstFit, p.valid = true, 0
		}
		order := optOrder(k%optOrderCount, items, events, breadth)
		if t := p.pack(order, best-1); t < best {
			keep(order, t)
			bestFirstFit = p.firstFit
		}
		if best <= bound {
			return off, chunk, best
		}
	}
	if p.firstFit != bestFirstFit {
		p.firstFit, p.valid = bestFirstFit, 0
	}
	// Local repair: perturb the current order and keep the change when the
	// total does not grow.
	rng := rand.New(rand.NewPCG(uint64(len(items)), 0x9e3779b97f4a7c15))
	order, critical := slices.Clone(bestOrder), bestCritical
	cand := make([]int32, len(order))
	n := len(order)
	stall := 0
	for round := 0; round < optRepairRounds && stall < optRepairStall && best > bound && n > 1 && packs < maxPacks && p.work >= 0; round++ {
		stall++
		packs++
		copy(cand, order)
		c := slices.Index(cand, critical)
		switch {
		case c > 0 && round%3 == 0:
			// Move the block that set the height to the front.
			copy(cand[1:c+1], cand[:c])
			cand[0] = critical
		case c > 0 && round%3 == 1:
			// Move it to a random earlier position.
			to := rng.IntN(c)
			copy(cand[to+1:c+1], cand[to:c])
			cand[to] = critical
		default:
			a, b := rng.IntN(n), rng.IntN(n)
			cand[a], cand[b] = cand[b], cand[a]
		}
		t := p.pack(cand, best)
		if t > best {
			continue
		}
		order, cand = cand, order
		critical = p.critical
		if t < best {
			keep(slices.Clone(order), t)
			stall = 0
		}
	}
	return off, chunk, best
}

// optimizeBlocks reassigns the blocks' places for StrategyOptimized.
func optimizeBlocks(pl *Plan, dyns []*Dyn) error {
	perDyn := make([][]int, len(dyns))
	for k, b := range pl.Blocks {
		if b.Dyn < 0 || b.Dyn >= len(dyns) {
			return fmt.Errorf("block %d: allocator %d of %d: %w", k, b.Dyn, len(dyns), ErrOptimize)
		}
		perDyn[b.Dyn] = append(perDyn[b.Dyn], k)
	}
	for d, ks := range perDyn {
		if len(ks) == 0 {
			continue
		}
		dd := dyns[d]
		items := make([]optItem, len(ks))
		var ggml uint64
		ggmlChunks := map[int]uint64{}
		for x, k := range ks {
			b := pl.Blocks[k]
			end := b.Freed
			if end < 0 {
				end = math.MaxInt
			}
			items[x] = optItem{size: b.Size, start: b.Alloc, end: end}
			ggmlChunks[b.At.Chunk] = max(ggmlChunks[b.At.Chunk], b.At.Offset+b.Size)
		}
		for _, s := range ggmlChunks {
			ggml = satAdd(ggml, s)
		}
		bound := liveBound(items, pl.Events)
		off, chunk, total := packDyn(items, pl.Events, dd.Alignment(), dd.MaxChunkSize(), bound)
		if total >= ggml {
			continue // ggml's own placement is as good
		}
		for x, k := range ks {
			pl.Blocks[k].At = Address{Chunk: int(chunk[x]), Offset: off[x]}
		}
	}
	return nil
}
