package runtime

import (
	"os"
	"path/filepath"
	"testing"
)

// TestBuildForwardExpandMatchesGGML rebuilds every conformance graph by
// expanding its nodes one by one in ggml's order: the depth-first visit must
// add nothing out of order, so the node order comes out as ggml's. (Leaf
// order depends on which tensors the graph's author expanded, which a file
// does not record, so only the leaf set is compared.)
func TestBuildForwardExpandMatchesGGML(t *testing.T) {
	var paths []string
	for _, dir := range []string{"../../shared/conformance", "../shared/conformance"} {
		paths, _ = filepath.Glob(filepath.Join(dir, "*.graph.json"))
		if len(paths) > 0 {
			break
		}
	}
	if len(paths) == 0 {
		t.Skip("shared/conformance not found")
	}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		f, err := ParseGraphFile(data)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		g := NewGraph()
		for _, n := range f.Graph.Nodes() {
			if err := g.BuildForwardExpand(n); err != nil {
				t.Fatal(err)
			}
		}
		same := func(a, b []*Tensor) bool {
			if len(a) != len(b) {
				return false
			}
			for i := range a {
				if a[i] != b[i] {
					return false
				}
			}
			return true
		}
		if !same(g.Nodes(), f.Graph.Nodes()) {
			t.Errorf("%s: node order differs from ggml's", filepath.Base(p))
		}
		leafSet := map[*Tensor]bool{}
		for _, l := range f.Graph.Leafs() {
			leafSet[l] = true
		}
		for _, l := range g.Leafs() {
			if !leafSet[l] {
				t.Errorf("%s: %q became a leaf, ggml made it none", filepath.Base(p), l.Name)
			}
		}
	}
}

func TestBuildForwardExpandNamesAndParams(t *testing.T) {
	ctx := NewContext()
	a := ctx.NewTensor(TypeF32, 4)
	p := ctx.NewTensor(TypeF32, 4)
	p.SetFlag(FlagParam)
	b := ctx.NewOp(OpAdd, TypeF32, a.Ne, a, p)
	g := NewGraph()
	if err := g.BuildForwardExpand(b); err != nil {
		t.Fatal(err)
	}
	if g.NumLeafs() != 1 || g.NumNodes() != 2 {
		t.Fatalf("leafs %d nodes %d: a param tensor is a node", g.NumLeafs(), g.NumNodes())
	}
	if a.Name != "leaf_0" || p.Name != "node_0" || b.Name != "node_1" {
		t.Fatalf("names %q %q %q", a.Name, p.Name, b.Name)
	}
	if err := g.BuildForwardExpand(nil); err == nil {
		t.Fatal("nil tensor accepted")
	}
}

// BenchmarkGraphIndex numbers the tensors of big-01 (about a thousand
// nodes), the work a graph does once so that the allocator needs no hash
// table; reported per node to add to gallocr's BenchmarkReserveFresh.
func BenchmarkGraphIndex(b *testing.B) {
	var data []byte
	for _, dir := range []string{"../../shared/conformance", "../shared/conformance"} {
		if d, err := os.ReadFile(filepath.Join(dir, "big-01.graph.json")); err == nil {
			data = d
			break
		}
	}
	if data == nil {
		b.Skip("shared/conformance not found")
	}
	f, err := ParseGraphFile(data)
	if err != nil {
		b.Fatal(err)
	}
	g := f.Graph
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		g.index = nil
		g.Index()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(g.NumNodes()), "ns/node")
}
