package gallocr

import (
	"path/filepath"
	"testing"

	"github.com/gogml/gogml/runtime"
)

// TestSteadyStateAllocs counts the heap allocations of the planner's
// paths (in a Go program they are what the garbage collector's work, and
// so the timing tail of make bench-planner-vs-ggml, grows with): a reserve
// on an allocator whose buffers are large enough and an alloc graph on a
// reserved allocator allocate nothing, also for a new graph over the same
// tensors (ggml's graph built anew per token); a new allocator's reserve,
// alloc graph and free allocate only the allocator, its copy of the
// buffer list, and per buffer type its buffer and the list holding it,
// also when the graph is new (its numbering comes from pooled memory).
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
				buffers += float64(len(a.mem.buffers[d]) + 1)
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
			// New graphs over the same tensors, built before: AllocsPerRun
			// runs its function once more than it counts.
			const runs = 20
			graphs := make([]*runtime.Graph, 0, 3*(runs+1))
			for range cap(graphs) {
				ng, err := runtime.NewGraphFrom(g.Leafs(), g.Nodes())
				if err != nil {
					t.Fatal(err)
				}
				graphs = append(graphs, ng)
			}
			next := func() *runtime.Graph {
				ng := graphs[len(graphs)-1]
				graphs = graphs[:len(graphs)-1]
				return ng
			}
			if n := testing.AllocsPerRun(runs, func() {
				clearPlaces(ix)
				if err := a.AllocGraph(next()); err != nil {
					t.Fatal(err)
				}
			}); n != 0 {
				t.Errorf("alloc graph of a new graph on a reserved allocator: %v allocations, want 0", n)
			}
			if n := testing.AllocsPerRun(runs, func() {
				if err := a.ReserveN(next(), f.NodeBufferIDs, f.LeafBufferIDs); err != nil {
					t.Fatal(err)
				}
			}); n != 0 {
				t.Errorf("reserve of a new graph on a reserved allocator: %v allocations, want 0", n)
			}
			a.Free()
			for _, tn := range ix.Tensors {
				if tn.Buffer != nil && !tn.Preallocated && a.isRetired(tn.Buffer) {
					t.Fatalf("tensor %q keeps its place in a freed buffer", tn.Name)
				}
			}
			freshGraph := func() {
				ng := next()
				b, err := NewN(bufts)
				if err != nil {
					t.Fatal(err)
				}
				if err := b.ReserveN(ng, f.NodeBufferIDs, f.LeafBufferIDs); err != nil {
					t.Fatal(err)
				}
				if err := b.AllocGraph(ng); err != nil {
					t.Fatal(err)
				}
				b.Free()
			}
			if n := testing.AllocsPerRun(runs, freshGraph); n > own+buffers {
				t.Errorf("new allocator, reserve, alloc graph, free of a new graph: %v allocations, want at most %v", n, own+buffers)
			}
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
