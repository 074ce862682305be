package gallocr

import (
	"math"
	"math/bits"
	"sort"
)

// satAdd returns a+b, or math.MaxUint64 when the sum does not fit.
func satAdd(a, b uint64) uint64 {
	s, carry := bits.Add64(a, b, 0)
	if carry != 0 {
		return math.MaxUint64
	}
	return s
}

// LowerBound returns, per dynamic allocator (see Plan.DynOf), the live-bytes
// lower bound of the plan's lifetimes: the largest sum, over the moments of
// the graph, of the aligned sizes of blocks alive at that moment. A tensor
// that reuses its parent in place shares the parent's block and counts once.
// No placement with these lifetimes needs fewer bytes. The sums are exact
// (128-bit); a bound past math.MaxUint64 is reported as math.MaxUint64.
func (pl *Plan) LowerBound() []uint64 {
	nd := len(pl.FirstOf)
	type ev struct {
		at    int
		size  uint64
		alloc bool
	}
	per := make([][]ev, nd)
	for _, b := range pl.Blocks {
		per[b.Dyn] = append(per[b.Dyn], ev{b.Alloc, b.Size, true})
		if b.Freed >= 0 {
			per[b.Dyn] = append(per[b.Dyn], ev{b.Freed, b.Size, false})
		}
	}
	out := make([]uint64, nd)
	for d, evs := range per {
		// Events have distinct times; sort by time.
		sort.Slice(evs, func(i, j int) bool { return evs[i].at < evs[j].at })
		var liveHi, liveLo, peakHi, peakLo uint64
		for _, e := range evs {
			var c uint64
			if e.alloc {
				liveLo, c = bits.Add64(liveLo, e.size, 0)
				liveHi += c
			} else {
				liveLo, c = bits.Sub64(liveLo, e.size, 0)
				liveHi -= c
			}
			if liveHi > peakHi || liveHi == peakHi && liveLo > peakLo {
				peakHi, peakLo = liveHi, liveLo
			}
		}
		out[d] = peakLo
		if peakHi != 0 {
			out[d] = math.MaxUint64
		}
	}
	return out
}

// DynSizes returns, per dynamic allocator, the total bytes of its chunks
// (math.MaxUint64 when the total does not fit in 64 bits).
func (pl *Plan) DynSizes() []uint64 {
	out := make([]uint64, len(pl.FirstOf))
	for d, first := range pl.FirstOf {
		for _, c := range pl.Chunks[first] {
			out[d] = satAdd(out[d], c)
		}
	}
	return out
}
