package gallocr

import (
	"fmt"
	"math"

	"github.com/gogml/gogml/runtime"
)

// MaxChunks is the most chunks one dynamic allocator opens; the last one
// has no size limit.
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

type chunk struct {
	free    []freeBlock // sorted by offset, never empty blocks
	highest uint64      // high-water mark: bytes the chunk's buffer needs
}

// Dyn is the best-fit dynamic allocator of the graph allocator. It hands out
// aligned ranges inside virtual chunks and merges freed ranges with their
// neighbours. With an unlimited max size it behaves exactly like ggml's
// single-buffer allocator (one chunk); with a finite max size it opens up to
// MaxChunks chunks as upstream ggml does. Unlike ggml it has no limit on the
// number of free blocks.
type Dyn struct {
	alignment uint64
	maxChunk  uint64 // 0: unlimited
	chunks    []chunk
}

// NewDyn returns a dynamic allocator for the given alignment (a power of
// two) and per-chunk max size (runtime.NoMaxSize or 0 for unlimited).
func NewDyn(alignment, maxSize uint64) (*Dyn, error) {
	if !runtime.IsPow2(alignment) {
		return nil, fmt.Errorf("dynamic allocator: alignment %d is not a power of two: %w", alignment, runtime.ErrAlignment)
	}
	d := &Dyn{alignment: alignment}
	if maxSize != runtime.NoMaxSize && maxSize < unlimitedBlock {
		d.maxChunk = maxSize
	}
	d.Reset()
	return d, nil
}

// Unlimited reports whether the allocator has no per-chunk size limit.
func (d *Dyn) Unlimited() bool { return d.maxChunk == 0 }

// Alignment returns the allocator's alignment.
func (d *Dyn) Alignment() uint64 { return d.alignment }

// Reset forgets every allocation. An unlimited allocator keeps one empty
// chunk, as ggml's does; a limited one opens chunks on demand.
func (d *Dyn) Reset() {
	for i := range d.chunks {
		d.chunks[i].free = d.chunks[i].free[:0]
	}
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
		c := &d.chunks[len(d.chunks)-1]
		c.free = append(c.free[:0], freeBlock{0, size})
		c.highest = 0
	} else {
		d.chunks = append(d.chunks, chunk{free: []freeBlock{{0, size}}})
	}
	return len(d.chunks) - 1
}

// Alloc reserves size bytes (rounded up to the alignment) and returns where.
func (d *Dyn) Alloc(size uint64) (Address, error) {
	if size > unlimitedBlock {
		return Address{}, fmt.Errorf("allocate %d bytes: %w", size, runtime.ErrOverflow)
	}
	size = runtime.AlignUp(size, d.alignment)
	bestChunk, bestBlock := -1, -1

	// Best fit among each chunk's blocks but its last; among equal sizes the
	// later block wins, and a later chunk's winner replaces an earlier's.
	for c := range d.chunks {
		free := d.chunks[c].free
		bestSize := uint64(math.MaxUint64)
		for i := 0; i < len(free)-1; i++ {
			if b := free[i]; b.size >= size && b.size <= bestSize {
				bestChunk, bestBlock, bestSize = c, i, b.size
			}
		}
	}

	// Else the chunks' last blocks: prefer a chunk that already covers the
	// tensor with the least waste, else the one that must grow least.
	if bestBlock < 0 {
		bestReuse := int64(math.MinInt64)
		for c := range d.chunks {
			ch := &d.chunks[c]
			if len(ch.free) == 0 {
				continue
			}
			last := ch.free[len(ch.free)-1]
			if last.size < size {
				continue
			}
			reuse := int64(ch.highest - last.offset - size)
			betterReuse := bestReuse < 0 && reuse > bestReuse
			betterFit := reuse >= 0 && reuse < bestReuse
			if betterReuse || betterFit {
				bestChunk, bestBlock, bestReuse = c, len(ch.free)-1, reuse
			}
		}
	}

	if bestBlock < 0 {
		bestChunk = d.newChunk(size)
		if bestChunk < 0 {
			return Address{}, fmt.Errorf("allocate %d bytes: all %d chunks are full: %w", size, MaxChunks, runtime.ErrOutOfMemory)
		}
		bestBlock = 0
		if d.chunks[bestChunk].free[0].size < size {
			return Address{}, fmt.Errorf("allocate %d bytes: largest free block is %d bytes: %w", size, d.chunks[bestChunk].free[0].size, runtime.ErrOutOfMemory)
		}
	}

	ch := &d.chunks[bestChunk]
	b := &ch.free[bestBlock]
	at := Address{Chunk: bestChunk, Offset: b.offset}
	b.offset += size
	b.size -= size
	if b.size == 0 {
		ch.free = append(ch.free[:bestBlock], ch.free[bestBlock+1:]...)
	}
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
	free := ch.free
	// p: first block after the freed range.
	lo, hi := 0, len(free)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if free[m].offset < a.Offset {
			lo = m + 1
		} else {
			hi = m
		}
	}
	p := lo
	end := a.Offset + size
	if p > 0 && free[p-1].offset+free[p-1].size > a.Offset || p < len(free) && free[p].offset < end {
		return fmt.Errorf("free %d bytes at chunk %d offset %d: range is already free: %w", size, a.Chunk, a.Offset, runtime.ErrOutOfBounds)
	}
	mergePrev := p > 0 && free[p-1].offset+free[p-1].size == a.Offset
	mergeNext := p < len(free) && free[p].offset == end
	switch {
	case mergePrev && mergeNext:
		free[p-1].size += size + free[p].size
		ch.free = append(free[:p], free[p+1:]...)
	case mergePrev:
		free[p-1].size += size
	case mergeNext:
		free[p].offset = a.Offset
		free[p].size += size
	default:
		free = append(free, freeBlock{})
		copy(free[p+1:], free[p:])
		free[p] = freeBlock{a.Offset, size}
		ch.free = free
	}
	return nil
}
