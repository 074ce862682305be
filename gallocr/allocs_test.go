package gallocr

import (
	"path/filepath"
	"testing"
)

// TestSteadyStateAllocs counts the heap allocations of the planner's
// paths (in a Go program they are what the garbage collector's work, and
// so the timing tail of make bench-planner-vs-ggml, grows with): a reserve
// on an allocator whose buffers are large enough and an alloc graph on a
// reserved allocator allocate nothing; a new allocator's reserve, alloc
// graph and free allocate only the allocator, its copy of the buffer
// list, and per buffer type its buffer and the list holding it.
func TestSteadyStateAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector drops sync.Pool items at random")
	}
	dir := conformanceDir(t)
	for _, name := range []string{"llama-06", "big-01", "chunked-random-05", "random-19"} {
		t.Run(name, func(t *testing.T) {
			f := loadGraphFile(t, filepath.Join(dir, name+".graph.json"))
			g := f.Graph
			bufts := f.BufferList()
			a, err := NewN(bufts)
			if err != nil {
				t.Fatal(err)
			}
			defer a.Free()
			reserve := func() {
				if err := a.ReserveN(g, f.NodeBufferIDs, f.LeafBufferIDs); err != nil {
					t.Fatal(err)
				}
			}
			reserve()
			// Per buffer type: its buffers and the list holding them.
			var buffers float64
			for d := range a.firstOf {
				buffers += float64(len(a.buffers[d]) + 1)
			}
			// The allocator, its buffer list and, for lists longer than
			// one, dynOf and firstOf.
			own := 2.0
			if len(bufts) > 1 {
				own += 2
			}
			if n := testing.AllocsPerRun(50, reserve); n != 0 {
				t.Errorf("reserve on a reserved allocator: %v allocations, want 0", n)
			}
			if err := a.AllocGraph(g); err != nil {
				t.Fatal(err)
			}
			ix := g.Index()
			warm := func() {
				clearPlaces(ix)
				if err := a.AllocGraph(g); err != nil {
					t.Fatal(err)
				}
			}
			if n := testing.AllocsPerRun(50, warm); n != 0 {
				t.Errorf("alloc graph on a reserved allocator: %v allocations, want 0", n)
			}
			a.Free()
			fresh := func() {
				b, err := NewN(bufts)
				if err != nil {
					t.Fatal(err)
				}
				if err := b.ReserveN(g, f.NodeBufferIDs, f.LeafBufferIDs); err != nil {
					t.Fatal(err)
				}
				if err := b.AllocGraph(g); err != nil {
					t.Fatal(err)
				}
				b.Free()
			}
			if n := testing.AllocsPerRun(50, fresh); n > own+buffers {
				t.Errorf("new allocator, reserve, alloc graph, free: %v allocations, want at most %v", n, own+buffers)
			}
			// A freed allocator reserves again from pooled memory (and
			// remembers the buffers it freed: a bounded list).
			if n := testing.AllocsPerRun(50, func() { reserve(); a.Free() }); n > buffers+1 {
				t.Errorf("reserve after free: %v allocations, want at most %v", n, buffers+1)
			}
		})
	}
}
