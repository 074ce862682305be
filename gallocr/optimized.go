package gallocr

import (
	"cmp"
	"errors"
	"fmt"
	"math"
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
// whose lifetimes overlap its own, or on top of them when no gap is large
// enough. The best order is then improved by local repair: the block that
// sets the height is moved to the front, or two blocks of the order are
// swapped, and the change is kept when the plan does not grow. The search
// stops at the live-bytes lower bound, and the result is kept only when it
// is smaller than ggml's own placement of that allocator.

// ErrOptimize reports an internal inconsistency of the optimized strategy.
var ErrOptimize = errors.New("optimized planner")

// MaxChunkSize returns the per-chunk size limit of the allocator, or 0 when
// chunks are unlimited.
func (d *Dyn) MaxChunkSize() uint64 { return d.maxChunk }

// optRepairRounds bounds the local-repair rounds per allocator; planning
// time grows linearly with it.
const optRepairRounds = 64

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
	capacity uint64 // most bytes the chunk may use
	height   uint64 // high-water mark so far
}

// packer places the blocks of one dynamic allocator.
type packer struct {
	items    []optItem
	adj      [][]int32 // lifetime-overlapping items
	align    uint64
	maxChunk uint64 // 0: one unlimited chunk

	// Result of the last pack.
	off    []uint64
	chunk  []int32
	placed []bool
	chunks []optChunk
	// critical is the item that last raised a chunk's height.
	critical int32

	spans []optSpan // scratch
}

func newPacker(items []optItem, align, maxChunk uint64) *packer {
	n := len(items)
	p := &packer{items: items, align: align, maxChunk: maxChunk,
		off: make([]uint64, n), chunk: make([]int32, n), placed: make([]bool, n),
		adj: make([][]int32, n)}
	// Sweep by start time: j overlaps i (start_i <= start_j) iff
	// start_j < end_i.
	byStart := make([]int32, n)
	for i := range byStart {
		byStart[i] = int32(i)
	}
	slices.SortStableFunc(byStart, func(a, b int32) int { return cmp.Compare(items[a].start, items[b].start) })
	for x, i := range byStart {
		for _, j := range byStart[x+1:] {
			if items[j].start >= items[i].end {
				break
			}
			p.adj[i] = append(p.adj[i], j)
			p.adj[j] = append(p.adj[j], i)
		}
	}
	return p
}

// total returns the bytes of all chunks of the last pack.
func (p *packer) total() uint64 {
	var t uint64
	for _, c := range p.chunks {
		t += c.height
	}
	return t
}

// fitIn finds the place for item i in chunk c: the tightest gap among the
// placed overlapping items of that chunk, else on top of them. It returns
// the offset, the gap's slack (math.MaxUint64 for the top) and whether the
// item fits within the chunk's capacity.
func (p *packer) fitIn(i int32, c int32) (off, slack uint64, ok bool) {
	spans := p.spans[:0]
	for _, j := range p.adj[i] {
		if p.placed[j] && p.chunk[j] == c {
			spans = append(spans, optSpan{p.off[j], p.off[j] + p.items[j].size})
		}
	}
	slices.SortFunc(spans, func(a, b optSpan) int { return cmp.Compare(a.lo, b.lo) })
	p.spans = spans
	size := p.items[i].size
	capacity := p.chunks[c].capacity
	var cur uint64
	best, bestSlack := uint64(0), uint64(math.MaxUint64)
	for _, s := range spans {
		if s.lo > cur && s.lo-cur >= size {
			if g := s.lo - cur - size; g < bestSlack {
				best, bestSlack = cur, g
			}
		}
		cur = max(cur, runtime.AlignUp(s.hi, p.align))
	}
	if bestSlack != math.MaxUint64 {
		return best, bestSlack, true
	}
	return cur, math.MaxUint64, cur+size <= capacity && cur+size >= cur
}

// pack places the items in the given order and returns the total bytes.
func (p *packer) pack(order []int32) uint64 {
	clear(p.placed)
	p.chunks = p.chunks[:0]
	if p.maxChunk == 0 {
		p.chunks = append(p.chunks, optChunk{capacity: unlimitedBlock})
	}
	p.critical = -1
	for _, i := range order {
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
			// Only a limited allocator gets here: open a chunk. The last
			// one has no limit; a block larger than the limit gets a chunk
			// of its own size.
			capacity := max(p.maxChunk, size)
			if len(p.chunks) == MaxChunks-1 {
				capacity = unlimitedBlock
			}
			p.chunks = append(p.chunks, optChunk{capacity: capacity})
			bestC, bestOff = int32(len(p.chunks)-1), 0
			bestGrow = size
		}
		p.off[i], p.chunk[i], p.placed[i] = bestOff, bestC, true
		if h := bestOff + size; h > p.chunks[bestC].height {
			p.chunks[bestC].height = h
		}
		if bestGrow > 0 {
			p.critical = i
		}
	}
	return p.total()
}

// optOrders returns the starting orders the packer tries.
func optOrders(items []optItem, events int) [][]int32 {
	n := len(items)
	life := func(i int32) uint64 {
		end := items[i].end
		if end == math.MaxInt {
			end = events
		}
		return uint64(max(end-items[i].start, 1))
	}
	// Live bytes over each item's lifetime: the most bytes alive at any
	// moment while the item is alive (the "breadth" of Pisarchyk & Lee).
	type ev struct {
		at    int
		delta int64
	}
	evs := make([]ev, 0, 2*n)
	for _, it := range items {
		evs = append(evs, ev{it.start, int64(it.size)})
		if it.end != math.MaxInt {
			evs = append(evs, ev{it.end, -int64(it.size)})
		}
	}
	slices.SortStableFunc(evs, func(a, b ev) int { return cmp.Compare(a.at, b.at) })
	times := make([]int, 0, len(evs))
	live := make([]int64, 0, len(evs)) // live bytes from times[k] on
	var cur int64
	for k, e := range evs {
		cur += e.delta
		if k+1 < len(evs) && evs[k+1].at == e.at {
			continue
		}
		times = append(times, e.at)
		live = append(live, cur)
	}
	breadth := make([]int64, n)
	for i, it := range items {
		k, _ := slices.BinarySearch(times, it.start)
		for ; k < len(times) && times[k] < it.end; k++ {
			breadth[i] = max(breadth[i], live[k])
		}
	}
	base := make([]int32, n)
	for i := range base {
		base[i] = int32(i)
	}
	sorted := func(less func(a, b int32) int) []int32 {
		o := slices.Clone(base)
		slices.SortStableFunc(o, less)
		return o
	}
	bySize := func(a, b int32) int { return cmp.Compare(items[b].size, items[a].size) }
	byStart := func(a, b int32) int { return cmp.Compare(items[a].start, items[b].start) }
	return [][]int32{
		sorted(func(a, b int32) int {
			return cmp.Or(bySize(a, b), cmp.Compare(life(b), life(a)), byStart(a, b))
		}),
		sorted(func(a, b int32) int {
			return cmp.Or(bySize(a, b), byStart(a, b))
		}),
		sorted(func(a, b int32) int {
			x, y := float64(items[a].size)*float64(life(a)), float64(items[b].size)*float64(life(b))
			return cmp.Or(cmp.Compare(y, x), bySize(a, b), byStart(a, b))
		}),
		sorted(func(a, b int32) int {
			return cmp.Or(cmp.Compare(breadth[b], breadth[a]), bySize(a, b), byStart(a, b))
		}),
		sorted(func(a, b int32) int {
			return cmp.Or(cmp.Compare(life(b), life(a)), bySize(a, b), byStart(a, b))
		}),
		sorted(func(a, b int32) int {
			return cmp.Or(byStart(a, b), bySize(a, b))
		}),
	}
}

// packDyn finds places for items and returns offsets, chunks and the total
// bytes of the best pack found.
func packDyn(items []optItem, events int, align, maxChunk, bound uint64) (off []uint64, chunk []int32, total uint64) {
	p := newPacker(items, align, maxChunk)
	best := uint64(math.MaxUint64)
	var bestOrder []int32
	keep := func(order []int32, t uint64) {
		best = t
		bestOrder = order
		off = slices.Clone(p.off)
		chunk = slices.Clone(p.chunk)
	}
	for _, order := range optOrders(items, events) {
		if t := p.pack(order); t < best {
			keep(order, t)
		}
		if best <= bound {
			return off, chunk, best
		}
	}
	// Local repair on the best order.
	rng := rand.New(rand.NewPCG(uint64(len(items)), 0x9e3779b97f4a7c15))
	order := slices.Clone(bestOrder)
	_ = p.pack(order)
	for round := 0; round < optRepairRounds && best > bound; round++ {
		cand := slices.Clone(order)
		if c := p.critical; c >= 0 && round%2 == 0 {
			// Move the block that set the height to the front.
			k := slices.Index(cand, c)
			if k > 0 {
				copy(cand[1:k+1], cand[:k])
				cand[0] = c
			}
		} else if len(cand) > 1 {
			a := rng.IntN(len(cand))
			b := rng.IntN(len(cand))
			cand[a], cand[b] = cand[b], cand[a]
		}
		t := p.pack(cand)
		if t <= best {
			if t < best {
				keep(cand, t)
			}
			order = cand
		} else {
			_ = p.pack(order) // restore critical for the kept order
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
	bounds := pl.LowerBound()
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
			ggml += s
		}
		var bound uint64
		if d < len(bounds) {
			bound = bounds[d]
		}
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
