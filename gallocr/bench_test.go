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
// big-01 (about a thousand nodes), per iteration; the graph's tensor index
// is rebuilt each time too, as ggml rebuilds its hash set.
func BenchmarkReserveFresh(b *testing.B) {
	f := loadBig(b)
	bufts := f.BufferList()
	nodes := f.Graph.NumNodes()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		g, err := runtime.NewGraphFrom(f.Graph.Leafs(), f.Graph.Nodes())
		if err != nil {
			b.Fatal(err)
		}
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
		b.StopTimer()
		clearPlaces(g.Index())
		a.Free()
		b.StartTimer()
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
