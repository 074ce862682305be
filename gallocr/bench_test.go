package gallocr

import (
	"path/filepath"
	"testing"

	"github.com/gogml/gogml/runtime"
)

func loadBig(b *testing.B) *runtime.GraphFile {
	return loadGraphFile(b, filepath.Join(conformanceDir(b), "big-01.graph.json"))
}

// clearPlaces removes the places the allocator gave, so the next alloc
// graph places every tensor again (as for a freshly built graph).
func clearPlaces(ix *runtime.GraphIndex) {
	for _, t := range ix.Tensors {
		if !t.Preallocated {
			t.Buffer, t.Offset = nil, 0
		}
	}
}

// BenchmarkReserveFresh: a new allocator, reserve and alloc graph for
// big-01 (about a thousand nodes) per iteration. The graph's tensor index
// is built once, as a graph keeps it.
func BenchmarkReserveFresh(b *testing.B) {
	f := loadBig(b)
	benchReserve(b, f, func() *runtime.Graph { return f.Graph })
}

func benchReserve(b *testing.B, f *runtime.GraphFile, graph func() *runtime.Graph) {
	bufts := f.BufferList()
	nodes := f.Graph.NumNodes()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		g := graph()
		a, err := NewN(bufts)
		if err != nil {
			b.Fatal(err)
		}
		if err := a.ReserveN(g, f.NodeBufferIDs, f.LeafBufferIDs); err != nil {
			b.Fatal(err)
		}
		if err := a.AllocGraph(g); err != nil {
			b.Fatal(err)
		}
		clearPlaces(f.Graph.Index()) // the same tensors, numbered once
		a.Free()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(nodes), "ns/node")
}

// BenchmarkAllocGraphWarm: alloc graph on an allocator already reserved for
// big-01, placing every tensor again each time.
func BenchmarkAllocGraphWarm(b *testing.B) {
	f := loadBig(b)
	a, err := NewN(f.BufferList())
	if err != nil {
		b.Fatal(err)
	}
	defer a.Free()
	g := f.Graph
	if err := a.ReserveN(g, f.NodeBufferIDs, f.LeafBufferIDs); err != nil {
		b.Fatal(err)
	}
	ix := g.Index()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		clearPlaces(ix)
		if err := a.AllocGraph(g); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(g.NumNodes()), "ns/node")
}

// BenchmarkReserveFreshNumbered is BenchmarkReserveFresh with a graph the
// allocator has not seen each time, so the graph's tensor numbering
// (runtime.Graph.Index) is part of the time, as for a graph built anew
// per token. The graphs are built in batches outside the timer.
func BenchmarkReserveFreshNumbered(b *testing.B) {
	f := loadBig(b)
	benchReserve(b, f, newGraphs(b, f, 64))
}

// BenchmarkReserveFreshSmall is BenchmarkReserveFreshNumbered on some of
// the corpus's smallest graphs, where a fresh reserve's cost per graph
// (allocator, pooled memory, numbering set-up, Free) weighs most.
func BenchmarkReserveFreshSmall(b *testing.B) {
	for _, name := range []string{"random-31", "chunked-llama-03", "random-02", "chunked-random-01"} {
		b.Run(name, func(b *testing.B) {
			f := loadGraphFile(b, filepath.Join(conformanceDir(b), name+".graph.json"))
			benchReserve(b, f, newGraphs(b, f, 256))
		})
	}
}

// newGraphs returns a function that hands out a new graph over f's
// tensors each call, built batch at a time with the timer stopped.
func newGraphs(b *testing.B, f *runtime.GraphFile, batch int) func() *runtime.Graph {
	var spare []*runtime.Graph
	return func() *runtime.Graph {
		if len(spare) == 0 {
			b.StopTimer()
			for range batch {
				g, err := runtime.NewGraphFrom(f.Graph.Leafs(), f.Graph.Nodes())
				if err != nil {
					b.Fatal(err)
				}
				spare = append(spare, g)
			}
			b.StartTimer()
		}
		g := spare[len(spare)-1]
		spare = spare[:len(spare)-1]
		return g
	}
}
