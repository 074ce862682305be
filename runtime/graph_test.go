package runtime

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
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
		if os.Getenv("CI") != "" {
			t.Fatal("shared/conformance not found beside the checkout (CI must provide it)")
		}
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

// TestBuildForwardExpandRejectsCycles: a tensor that depends on itself, a
// view of itself and a view of a view are errors naming the tensor, and
// the graph is left as it was (a later sound expand works).
func TestBuildForwardExpandRejectsCycles(t *testing.T) {
	for _, tc := range []struct {
		name  string
		build func(ctx *Context, x *Tensor) *Tensor
		names string
	}{
		{"self source", func(ctx *Context, x *Tensor) *Tensor {
			b := ctx.Scale(x, 2)
			b.Name = "b"
			b.Src[0] = b
			return ctx.Scale(b, 3)
		}, `"b"`},
		{"two-tensor cycle", func(ctx *Context, x *Tensor) *Tensor {
			a := ctx.Scale(x, 2)
			b := ctx.Scale(a, 2)
			a.Name, b.Name = "a", "b"
			a.Src[0] = b
			return b
		}, `"a"`},
		{"cycle through a second source", func(ctx *Context, x *Tensor) *Tensor {
			a := ctx.Add(x, x)
			b := ctx.Scale(a, 2)
			c := ctx.Scale(b, 2)
			a.Name = "a"
			a.Src[1] = c
			return c
		}, `"a"`},
		{"view of itself", func(ctx *Context, x *Tensor) *Tensor {
			v := ctx.View1D(ctx.Scale(x, 2), 4, 0)
			v.Name = "v"
			v.ViewSrc = v
			return v
		}, `"v"`},
		{"view of a view", func(ctx *Context, x *Tensor) *Tensor {
			v := ctx.View1D(ctx.Scale(x, 2), 4, 0)
			w := ctx.View1D(v, 2, 0)
			w.Name = "w"
			w.ViewSrc = v
			return w
		}, `"w"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := NewContext()
			x := ctx.NewTensor(TypeF32, 8)
			g := NewGraph()
			y := ctx.Scale(x, 5)
			if err := g.BuildForwardExpand(y); err != nil {
				t.Fatal(err)
			}
			nl, nn := g.NumLeafs(), g.NumNodes()
			bad := tc.build(ctx, x)
			err := g.BuildForwardExpand(bad)
			if !errors.Is(err, ErrGraph) || !strings.Contains(err.Error(), tc.names) {
				t.Fatalf("error %v, want ErrGraph naming %s", err, tc.names)
			}
			if g.NumLeafs() != nl || g.NumNodes() != nn {
				t.Fatalf("graph changed by a failed expand: %d leafs %d nodes, was %d %d", g.NumLeafs(), g.NumNodes(), nl, nn)
			}
			z := ctx.Scale(y, 2)
			if err := g.BuildForwardExpand(z); err != nil || g.NumNodes() != nn+1 {
				t.Fatalf("expand after a failure: %v, %d nodes", err, g.NumNodes())
			}
			if ix := g.Index(); len(ix.Nodes) != nn+1 {
				t.Fatalf("index has %d nodes, want %d", len(ix.Nodes), nn+1)
			}
		})
	}
}

// checkIndex verifies that ix numbers g's tensors consistently: leafs and
// nodes in order, every source and view source at its own number, every
// number used once.
func checkIndex(t *testing.T, g *Graph, ix *GraphIndex) {
	t.Helper()
	seen := map[*Tensor]int32{}
	for i, x := range ix.Tensors {
		if _, dup := seen[x]; dup {
			t.Fatalf("tensor %q numbered twice", x.Name)
		}
		seen[x] = int32(i)
		if ix.InGraph[i] != (i < g.NumLeafs()+g.NumNodes()) {
			t.Fatalf("InGraph[%d] wrong", i)
		}
		if vs := ix.ViewSrc[i]; (vs < 0) != (x.ViewSrc == nil) || vs >= 0 && ix.Tensors[vs] != x.ViewSrc {
			t.Fatalf("ViewSrc of %q wrong", x.Name)
		}
	}
	for i, l := range g.Leafs() {
		if ix.Tensors[ix.Leafs[i]] != l {
			t.Fatalf("leaf %d numbered wrong", i)
		}
	}
	for i, n := range g.Nodes() {
		if ix.Tensors[ix.Nodes[i]] != n {
			t.Fatalf("node %d numbered wrong", i)
		}
		srcs := ix.NodeSrc(i)
		if len(srcs) != n.NumSrc() {
			t.Fatalf("node %d: %d source slots, want %d", i, len(srcs), n.NumSrc())
		}
		for j, r := range srcs {
			s := n.Src[j]
			if (s == nil) != (r < 0) || s != nil && ix.Tensors[r] != s {
				t.Fatalf("node %d source %d numbered wrong", i, j)
			}
		}
	}
}

// sharedTensorGraphs returns graphs over the same tensors: the whole graph
// of a product, views of it and of its input, a source outside the other
// graphs and a chain of `links` more nodes (each adds the last one scaled
// and a view of it), then
// three partial graphs: one with a node's sources in the other order, two
// with sources outside the graph. It also returns x, w, y (the product of
// w and x) and v (a view of y).
func sharedTensorGraphs(t *testing.T, links int) (graphs []*Graph, x, w, y, v *Tensor) {
	t.Helper()
	ctx := NewContext()
	w = ctx.NewTensor(TypeF32, 8, 8)
	x = ctx.NewTensor(TypeF32, 8, 4)
	y = ctx.MulMat(w, x)
	v = ctx.View1D(y, 8, 32)
	z := ctx.Add(ctx.Scale(v, 2), ctx.View1D(x, 8, 0))
	outside := ctx.NewTensor(TypeF32, 8) // a source of no graph member
	u := ctx.Add(z, outside)
	last := u
	for range links {
		last = ctx.Add(ctx.Scale(last, 0.5), ctx.View1D(last, 8, 0))
	}
	build := func(leafs, nodes []*Tensor) *Graph {
		t.Helper()
		g, err := NewGraphFrom(leafs, nodes)
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	full := NewGraph()
	if err := full.BuildForwardExpand(last); err != nil {
		t.Fatal(err)
	}
	return []*Graph{
		full,
		build([]*Tensor{x, w}, []*Tensor{y, v}), // y's sources in the other order
		build(nil, []*Tensor{v, z}),             // sources outside the graph
		build([]*Tensor{outside}, []*Tensor{u}), // z and its sources outside
	}, x, w, y, v
}

// TestIndexSharedTensors: graphs over the same tensors in different
// orders, indexed in turn (each leaving its numbers on the tensors) and at
// once from several goroutines, all number every tensor right.
func TestIndexSharedTensors(t *testing.T) {
	graphs, _, _, _, _ := sharedTensorGraphs(t, 0)
	for range 3 {
		for _, g := range graphs {
			g.index = nil
			checkIndex(t, g, g.Index())
		}
	}
	var wg sync.WaitGroup
	for k := range 8 {
		g := graphs[k%len(graphs)]
		c, err := NewGraphFrom(g.Leafs(), g.Nodes())
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				c.index = nil
				c.Index()
			}
		}()
		defer func() { checkIndex(t, c, c.Index()) }()
	}
	wg.Wait()
}

// TestIndexBuffer: an IndexBuffer numbering graphs of different sizes in
// turn (with tensors outside the graph, and a graph that keeps its own
// numbering) gives Graph.Index's numbering each time, without the graph
// keeping it, and allocates nothing once its arrays are large enough;
// GraphIndex.Numbers follows the graph's changes.
func TestIndexBuffer(t *testing.T) {
	all, x, w, y, v := sharedTensorGraphs(t, 40)
	graphs := []*Graph{all[1], all[0], all[2], all[3]} // small, large, small
	same := func(a, b *GraphIndex) bool {
		return slices.Equal(a.Tensors, b.Tensors) && slices.Equal(a.Leafs, b.Leafs) && slices.Equal(a.Nodes, b.Nodes) &&
			slices.Equal(a.SrcStart, b.SrcStart) && slices.Equal(a.SrcIDs, b.SrcIDs) && slices.Equal(a.ViewSrc, b.ViewSrc) &&
			slices.Equal(a.InGraph, b.InGraph)
	}
	var b IndexBuffer
	for range 2 {
		for i, g := range graphs {
			got := b.Index(g)
			if !got.Numbers(g) || g.index != nil {
				t.Fatalf("graph %d: Numbers %v, graph keeps a numbering: %v", i, got.Numbers(g), g.index != nil)
			}
			checkIndex(t, g, got)
			want := g.Index()
			if got == want || !same(got, want) {
				t.Fatalf("graph %d: the buffer's numbering differs from Graph.Index's", i)
			}
			if b.Index(g) != want {
				t.Fatalf("graph %d: the buffer does not return the numbering the graph keeps", i)
			}
			g.index = nil
		}
	}
	if n := testing.AllocsPerRun(20, func() {
		for _, g := range graphs {
			b.Index(g)
		}
	}); n != 0 {
		t.Errorf("numbering into a grown buffer: %v allocations, want 0", n)
	}
	g, err := NewGraphFrom([]*Tensor{x, w}, []*Tensor{y})
	if err != nil {
		t.Fatal(err)
	}
	ix := b.Index(g)
	if graphs[0].Index().Numbers(g) || !ix.Numbers(g) {
		t.Fatal("Numbers: wrong graph")
	}
	if err := g.BuildForwardExpand(v); err != nil {
		t.Fatal(err)
	}
	if ix.Numbers(g) || !b.Index(g).Numbers(g) {
		t.Fatal("Numbers: a numbering made before the graph grew still numbers it")
	}
	checkIndex(t, g, b.Index(g))
	var none *GraphIndex
	if none.Numbers(g) {
		t.Fatal("a nil numbering numbers a graph")
	}
}
