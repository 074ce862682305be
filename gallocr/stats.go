package gallocr

import "sort"

// LowerBound returns, per dynamic allocator (see Plan.DynOf), the live-bytes
// lower bound of the plan's lifetimes: the largest sum, over the moments of
// the graph, of the aligned sizes of blocks alive at that moment. A tensor
// that reuses its parent in place shares the parent's block and counts once.
// No placement with these lifetimes needs fewer bytes.
func (pl *Plan) LowerBound() []uint64 {
	nd := len(pl.FirstOf)
	type ev struct {
		at    int
		delta int64
	}
	per := make([][]ev, nd)
	for _, b := range pl.Blocks {
		per[b.Dyn] = append(per[b.Dyn], ev{b.Alloc, int64(b.Size)})
		if b.Freed >= 0 {
			per[b.Dyn] = append(per[b.Dyn], ev{b.Freed, -int64(b.Size)})
		}
	}
	out := make([]uint64, nd)
	for d, evs := range per {
		// Events have distinct times; sort by time.
		sort.Slice(evs, func(i, j int) bool { return evs[i].at < evs[j].at })
		var live, peak int64
		for _, e := range evs {
			live += e.delta
			peak = max(peak, live)
		}
		out[d] = uint64(peak)
	}
	return out
}

// DynSizes returns, per dynamic allocator, the total bytes of its chunks.
func (pl *Plan) DynSizes() []uint64 {
	out := make([]uint64, len(pl.FirstOf))
	for d, first := range pl.FirstOf {
		for _, c := range pl.Chunks[first] {
			out[d] += c
		}
	}
	return out
}
