package gallocr

import (
	"fmt"
	"math"

	"github.com/gogml/gogml/runtime"
)

// MaxChunks is the most chunks one dynamic allocator with a finite max size
// opens; the last one has no size limit. An unlimited allocator has exactly
// one chunk.
const MaxChunks = 16

// unlimitedBlock is the size of the free block a chunk without a size limit
// starts with: half the address space, so sums never overflow.
const unlimitedBlock = math.MaxUint64 / 2

// Address is a place inside a dynamic allocator: a chunk and a byte offset
// from the chunk's start.
type Address struct {
	Chunk  int
	Offset uint64
}

type freeBlock struct {
	offset, size uint64
}

// listLimit is the longest free list a chunk scans; past it the chunk
// keeps its blocks in a blockIndex (see RATIONALE: placements do not change).
const listLimit = 64

type chunk struct {
	free    []freeBlock // sorted by offset, never empty blocks (list mode)
	ix      *blockIndex // the free blocks when indexed is set
	indexed bool
	highest uint64 // high-water mark: bytes the chunk's buffer needs
}

func (c *chunk) numFree() int {
	if c.indexed {
		return c.ix.len()
	}
	return len(c.free)
}

// bestFit is ggml's first pass within one chunk: the smallest block but the
// last that holds size bytes, the later one among equal sizes.
func (c *chunk) bestFit(size uint64) (freeBlock, bool) {
	if c.indexed {
		return c.ix.bestFit(size)
	}
	best, found := freeBlock{size: math.MaxUint64}, false
	for i := 0; i < len(c.free)-1; i++ {
		if b := c.free[i]; b.size >= size && b.size <= best.size {
			best, found = b, true
		}
	}
	return best, found
}

// lastBlock returns the chunk's highest-addressed free block.
func (c *chunk) lastBlock() (freeBlock, bool) {
	if c.indexed {
		return c.ix.lastBlock()
	}
	if len(c.free) == 0 {
		return freeBlock{}, false
	}
	return c.free[len(c.free)-1], true
}

// search returns the index of the first listed block at or above offset.
func (c *chunk) search(offset uint64) int {
	lo, hi := 0, len(c.free)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if c.free[m].offset < offset {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// take cuts size bytes from the front of free block b.
func (c *chunk) take(b freeBlock, size uint64) {
	if c.indexed {
		c.ix.remove(b)
		if b.size > size {
			c.ix.insert(freeBlock{b.offset + size, b.size - size})
		}
		return
	}
	i := c.search(b.offset)
	if b.size > size {
		c.free[i] = freeBlock{b.offset + size, b.size - size}
	} else {
		c.free = append(c.free[:i], c.free[i+1:]...)
	}
}

// release returns [offset, offset+size) to the free blocks, merged with
// its neighbours; a range that overlaps a free block is an error.
func (c *chunk) release(offset, size uint64) bool {
	end := offset + size
	if c.indexed {
		prev, next, hasPrev, hasNext := c.ix.neighbours(offset)
		if hasPrev && prev.offset+prev.size > offset || hasNext && next.offset < end {
			return false
		}
		b := freeBlock{offset, size}
		if hasPrev && prev.offset+prev.size == offset {
			c.ix.remove(prev)
			b = freeBlock{prev.offset, prev.size + b.size}
		}
		if hasNext && next.offset == end {
			c.ix.remove(next)
			b.size += next.size
		}
		c.ix.insert(b)
		return true
	}
	free := c.free
	p := c.search(offset) // first block after the freed range
	if p > 0 && free[p-1].offset+free[p-1].size > offset || p < len(free) && free[p].offset < end {
		return false
	}
	mergePrev := p > 0 && free[p-1].offset+free[p-1].size == offset
	mergeNext := p < len(free) && free[p].offset == end
	switch {
	case mergePrev && mergeNext:
		free[p-1].size += size + free[p].size
		c.free = append(free[:p], free[p+1:]...)
	case mergePrev:
		free[p-1].size += size
	case mergeNext:
		free[p].offset = offset
		free[p].size += size
	default:
		free = append(free, freeBlock{})
		copy(free[p+1:], free[p:])
		free[p] = freeBlock{offset, size}
		c.free = free
	}
	return true
}

// index moves the chunk's free list into a blockIndex.
func (c *chunk) index() {
	if c.ix == nil {
		c.ix = &blockIndex{}
	}
	c.ix.clear()
	for _, b := range c.free {
		c.ix.insert(b)
	}
	c.free = c.free[:0]
	c.indexed = true
}

// reset leaves the chunk with the one free block b, in list mode.
func (c *chunk) reset(b freeBlock) {
	if cap(c.free) == 0 {
		c.free = make([]freeBlock, 0, 8) // room for a few freed blocks at once
	}
	c.free = append(c.free[:0], b)
	c.indexed = false
	c.highest = 0
}

// Dyn is the best-fit dynamic allocator of the graph allocator. It hands out
// aligned ranges inside virtual chunks and merges freed ranges with their
// neighbours. With an unlimited max size it behaves exactly like ggml's
// single-buffer allocator (one chunk); with a finite max size it opens up to
// MaxChunks chunks as upstream ggml does. Unlike ggml it has no limit on the
// number of free blocks, and a long free list is searched in logarithmic
// time with the same answers.
type Dyn struct {
	alignment uint64
	maxChunk  uint64 // 0: unlimited
	chunks    []chunk
	// indexAt is the free-list length past which a chunk switches to a
	// blockIndex (listLimit; tests lower it to check both agree).
	indexAt int
}

// NewDyn returns a dynamic allocator for the given alignment (a power of
// two) and per-chunk max size (runtime.NoMaxSize or 0 for unlimited).
func NewDyn(alignment, maxSize uint64) (*Dyn, error) {
	if !runtime.IsPow2(alignment) {
		return nil, fmt.Errorf("dynamic allocator: alignment %d is not a power of two: %w", alignment, runtime.ErrAlignment)
	}
	d := &Dyn{}
	d.init(alignment, maxSize)
	return d, nil
}

// init makes d an empty allocator for a valid alignment and max size,
// keeping the chunk arrays d had (an Allocator reuses its Dyns).
func (d *Dyn) init(alignment, maxSize uint64) {
	d.alignment, d.maxChunk, d.indexAt = alignment, 0, listLimit
	if maxSize != runtime.NoMaxSize && maxSize < unlimitedBlock {
		d.maxChunk = maxSize
	}
	d.Reset()
}

// Unlimited reports whether the allocator has no per-chunk size limit.
func (d *Dyn) Unlimited() bool { return d.maxChunk == 0 }

// Alignment returns the allocator's alignment.
func (d *Dyn) Alignment() uint64 { return d.alignment }

// Reset forgets every allocation. An unlimited allocator keeps one empty
// chunk, as ggml's does; a limited one opens chunks on demand.
func (d *Dyn) Reset() {
	d.chunks = d.chunks[:0]
	if d.Unlimited() {
		d.newChunk(0)
	}
}

// NumChunks returns the number of chunks opened.
func (d *Dyn) NumChunks() int { return len(d.chunks) }

// ChunkSize returns the high-water mark of chunk c: the size its buffer
// must have.
func (d *Dyn) ChunkSize(c int) uint64 { return d.chunks[c].highest }

// ChunkSizes returns every chunk's high-water mark.
func (d *Dyn) ChunkSizes() []uint64 {
	out := make([]uint64, len(d.chunks))
	for i := range d.chunks {
		out[i] = d.chunks[i].highest
	}
	return out
}

// newChunk opens a chunk able to hold at least minSize bytes and returns
// its index, or -1 when MaxChunks are open.
func (d *Dyn) newChunk(minSize uint64) int {
	if len(d.chunks) >= MaxChunks {
		return -1
	}
	size := uint64(unlimitedBlock)
	if !d.Unlimited() && len(d.chunks) < MaxChunks-1 {
		size = max(minSize, d.maxChunk)
	}
	if len(d.chunks) < cap(d.chunks) {
		d.chunks = d.chunks[:len(d.chunks)+1]
	} else {
		d.chunks = append(d.chunks, chunk{})
	}
	d.chunks[len(d.chunks)-1].reset(freeBlock{0, size})
	return len(d.chunks) - 1
}

// Alloc reserves size bytes (rounded up to the alignment) and returns where.
func (d *Dyn) Alloc(size uint64) (Address, error) {
	if size > unlimitedBlock {
		return Address{}, fmt.Errorf("allocate %d bytes: %w", size, runtime.ErrOverflow)
	}
	size = runtime.AlignUp(size, d.alignment)
	bestChunk := -1
	var best freeBlock

	// Best fit among each chunk's blocks but its last; among equal sizes the
	// later block wins, and a later chunk's winner replaces an earlier's.
	for c := range d.chunks {
		if b, ok := d.chunks[c].bestFit(size); ok {
			bestChunk, best = c, b
		}
	}

	// Else the chunks' last blocks: prefer a chunk that already covers the
	// tensor with the least waste, else the one that must grow least.
	if bestChunk < 0 {
		bestReuse := int64(math.MinInt64)
		for c := range d.chunks {
			ch := &d.chunks[c]
			last, ok := ch.lastBlock()
			if !ok || last.size < size {
				continue
			}
			reuse := int64(ch.highest - last.offset - size)
			betterReuse := bestReuse < 0 && reuse > bestReuse
			betterFit := reuse >= 0 && reuse < bestReuse
			if betterReuse || betterFit {
				bestChunk, best, bestReuse = c, last, reuse
			}
		}
	}

	if bestChunk < 0 {
		if d.Unlimited() {
			last, _ := d.chunks[0].lastBlock()
			return Address{}, fmt.Errorf("allocate %d bytes: largest free block at the end is %d bytes: %w", size, last.size, runtime.ErrOutOfMemory)
		}
		bestChunk = d.newChunk(size)
		if bestChunk < 0 {
			return Address{}, fmt.Errorf("allocate %d bytes: all %d chunks are full: %w", size, MaxChunks, runtime.ErrOutOfMemory)
		}
		best = d.chunks[bestChunk].free[0]
		if best.size < size {
			return Address{}, fmt.Errorf("allocate %d bytes: largest free block is %d bytes: %w", size, best.size, runtime.ErrOutOfMemory)
		}
	}

	ch := &d.chunks[bestChunk]
	at := Address{Chunk: bestChunk, Offset: best.offset}
	ch.take(best, size)
	ch.highest = max(ch.highest, at.Offset+size)
	return at, nil
}

// Free returns size bytes at a (as given by Alloc for the same size) to the
// allocator, merging them with adjacent free blocks of the same chunk.
func (d *Dyn) Free(a Address, size uint64) error {
	if a.Chunk < 0 || a.Chunk >= len(d.chunks) {
		return fmt.Errorf("free %d bytes at chunk %d: no such chunk: %w", size, a.Chunk, runtime.ErrOutOfBounds)
	}
	size = runtime.AlignUp(size, d.alignment)
	ch := &d.chunks[a.Chunk]
	if !ch.release(a.Offset, size) {
		return fmt.Errorf("free %d bytes at chunk %d offset %d: range is already free: %w", size, a.Chunk, a.Offset, runtime.ErrOutOfBounds)
	}
	if !ch.indexed && len(ch.free) > d.indexAt {
		ch.index()
	}
	return nil
}
