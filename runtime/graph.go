package runtime

import (
	"fmt"
	"math"
	"sync/atomic"
)

// Graph is ggml's compute graph: leafs (constants and inputs, op NONE
// without FlagParam) and nodes (computed tensors, in evaluation order).
type Graph struct {
	leafs []*Tensor
	nodes []*Tensor
	// visited maps each tensor of the graph to its place: leaf k is
	// -(k+1), node k is k; a tensor on the current visit's path is
	// onPath until it is placed.
	visited map[*Tensor]int32
	index   *GraphIndex
	// version counts the changes to the graph (see GraphIndex.Numbers).
	version uint64
}

const onPath = math.MinInt32

// NewGraph returns an empty graph.
func NewGraph() *Graph { return &Graph{visited: map[*Tensor]int32{}} }

// NewGraphFrom returns a graph with the given leaf and node order, as a
// graph file states it. It checks that every source of a node is a leaf,
// an earlier node, or a tensor outside the graph that is not a node later.
func NewGraphFrom(leafs, nodes []*Tensor) (*Graph, error) {
	g := &Graph{visited: make(map[*Tensor]int32, len(leafs)+len(nodes))}
	for i, l := range leafs {
		if l == nil {
			return nil, fmt.Errorf("leaf %d is nil: %w", i, ErrGraph)
		}
		if _, dup := g.visited[l]; dup {
			return nil, fmt.Errorf("leaf %d %q appears twice: %w", i, l.Name, ErrGraph)
		}
		g.visited[l] = int32(-(i + 1))
	}
	for i, n := range nodes {
		if n == nil {
			return nil, fmt.Errorf("node %d is nil: %w", i, ErrGraph)
		}
		if code, dup := g.visited[n]; dup {
			if code < 0 {
				return nil, fmt.Errorf("tensor %q is both a leaf and a node: %w", n.Name, ErrGraph)
			}
			return nil, fmt.Errorf("node %d %q appears twice: %w", i, n.Name, ErrGraph)
		}
		g.visited[n] = int32(i)
	}
	for i, n := range nodes {
		for j, s := range n.Src {
			if s == nil {
				continue
			}
			if p, ok := g.visited[s]; ok && p >= int32(i) {
				return nil, fmt.Errorf("node %d %q: source %d %q is node %d, not computed before it (cycle or wrong order): %w", i, n.Name, j, s.Name, p, ErrGraph)
			}
		}
	}
	g.leafs = append(g.leafs, leafs...)
	g.nodes = append(g.nodes, nodes...)
	return g, nil
}

// Leafs returns the graph's leafs in order.
func (g *Graph) Leafs() []*Tensor { return g.leafs }

// Nodes returns the graph's nodes in evaluation order.
func (g *Graph) Nodes() []*Tensor { return g.nodes }

// NumNodes returns the number of nodes.
func (g *Graph) NumNodes() int { return len(g.nodes) }

// NumLeafs returns the number of leafs.
func (g *Graph) NumLeafs() int { return len(g.leafs) }

// BuildForwardExpand adds t and everything it depends on that the graph
// does not hold yet, visiting sources in order, depth first, exactly as
// ggml_build_forward_expand: a tensor with op NONE and without FlagParam
// becomes a leaf, any other tensor a node after its sources.
//
// A tensor that depends on itself (a cycle through sources, such as
// b.Src[0] = b), a view of itself or a view whose ViewSrc is itself a view
// (views name their base, as Context's view builders do) is an error
// wrapping ErrGraph that names it; the graph is then left as it was before
// the call, and tensors this call named are unnamed again.
func (g *Graph) BuildForwardExpand(t *Tensor) error {
	if t == nil {
		return fmt.Errorf("build graph: nil tensor (an earlier builder call failed; see Context.Err): %w", ErrGraph)
	}
	type frame struct {
		t    *Tensor
		next int
	}
	if _, seen := g.visited[t]; seen {
		return nil
	}
	nLeafs, nNodes := len(g.leafs), len(g.nodes)
	var marked, named []*Tensor // for undoing a failed call
	fail := func(err error) error {
		for _, m := range marked {
			delete(g.visited, m)
		}
		for _, n := range named {
			n.Name = ""
		}
		clear(g.leafs[nLeafs:])
		clear(g.nodes[nNodes:])
		g.leafs, g.nodes = g.leafs[:nLeafs], g.nodes[:nNodes]
		return err
	}
	g.index = nil
	g.version++
	g.visited[t] = onPath
	marked = append(marked, t)
	stack := []frame{{t: t}}
	for len(stack) > 0 {
		f := &stack[len(stack)-1]
		pushed := false
		for f.next < MaxSrc {
			s := f.t.Src[f.next]
			f.next++
			if s == nil {
				continue
			}
			if code, seen := g.visited[s]; seen {
				if code == onPath {
					return fail(fmt.Errorf("build graph: tensor %q: source %d %q depends on it (cycle): %w", f.t.Name, f.next-1, s.Name, ErrGraph))
				}
				continue
			}
			g.visited[s] = onPath
			marked = append(marked, s)
			stack = append(stack, frame{t: s})
			pushed = true
			break
		}
		if pushed {
			continue
		}
		n := f.t
		if v := n.ViewSrc; v == n || v != nil && v.ViewSrc != nil {
			return fail(fmt.Errorf("build graph: tensor %q: view of %q, which is itself a view (a view names its base): %w", n.Name, v.Name, ErrGraph))
		}
		stack = stack[:len(stack)-1]
		if n.Op == OpNone && !n.HasFlag(FlagParam) {
			if n.Name == "" {
				n.Name = fmt.Sprintf("leaf_%d", len(g.leafs))
				named = append(named, n)
			}
			g.visited[n] = int32(-(len(g.leafs) + 1))
			g.leafs = append(g.leafs, n)
		} else {
			if n.Name == "" {
				n.Name = fmt.Sprintf("node_%d", len(g.nodes))
				named = append(named, n)
			}
			g.visited[n] = int32(len(g.nodes))
			g.nodes = append(g.nodes, n)
		}
	}
	return nil
}

// GraphIndex numbers every tensor the graph allocator looks at — leafs,
// nodes, their sources and their view sources — so per-tensor state can
// live in slices instead of a hash table.
type GraphIndex struct {
	// Tensors lists the indexed tensors: leafs first, then nodes, then the
	// others in the order they were found.
	Tensors []*Tensor
	// Leafs and Nodes give the index of each leaf and node.
	Leafs, Nodes []int32
	// SrcStart and SrcIDs give each node's sources: node i's source
	// slots, up to its last one in use, are SrcIDs[SrcStart[i]:
	// SrcStart[i+1]], each the index of the source or -1 for an empty
	// slot (see NodeSrc).
	SrcStart, SrcIDs []int32
	// ViewSrc gives, per indexed tensor, the index of its view source (-1).
	ViewSrc []int32
	// InGraph marks the indexed tensors that are leafs or nodes.
	InGraph []bool

	// graph and version name the graph this numbers, as it stood.
	graph   *Graph
	version uint64
}

// NodeSrc returns the indices of node i's source slots up to its last one
// in use (-1 for an empty slot).
func (ix *GraphIndex) NodeSrc(i int) []int32 { return ix.SrcIDs[ix.SrcStart[i]:ix.SrcStart[i+1]] }

// Numbers reports whether ix is the numbering of g as g stands now: made
// from g (by Graph.Index or an IndexBuffer) and g unchanged since.
func (ix *GraphIndex) Numbers(g *Graph) bool {
	return ix != nil && g != nil && ix.graph == g && ix.version == g.version
}

// Index returns the graph's tensor numbering, computed once and kept until
// the graph changes. An IndexBuffer numbers graphs without keeping the
// numbering, into arrays it reuses.
func (g *Graph) Index() *GraphIndex {
	if g.index != nil {
		return g.index
	}
	ix := new(GraphIndex)
	var extra map[*Tensor]int32
	g.number(ix, &extra)
	g.index = ix
	return ix
}

// IndexBuffer holds the arrays of a graph numbering for reuse, so that
// numbering graph after graph (a graph allocator's reserve on each new
// graph) allocates nothing once the arrays are large enough. The zero
// value is ready to use; an IndexBuffer is not safe for concurrent use.
type IndexBuffer struct {
	ix GraphIndex
	// extra maps the tensors outside the graph to their numbers (kept
	// for its buckets).
	extra map[*Tensor]int32
}

// Index returns g's numbering: the one g keeps if Graph.Index made it,
// else the one in b's arrays, computed again unless b last numbered g and
// g is unchanged since. Equal to what Graph.Index returns. A numbering in
// b's arrays stays valid until b numbers another graph (or g changes); g
// does not keep it.
func (b *IndexBuffer) Index(g *Graph) *GraphIndex {
	if g.index != nil {
		return g.index
	}
	if b.ix.Numbers(g) {
		return &b.ix
	}
	if b.extra != nil {
		clear(b.extra)
	}
	g.number(&b.ix, &b.extra)
	return &b.ix
}

// resize returns s with length n, reusing its array when it is large
// enough.
func resize[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// stamp sets t's index hint to k unless it holds k already: a graph
// numbered again over the same tensors (a graph rebuilt each step over
// the same weights, say) then writes none of them. The store is atomic
// (an exchange on amd64, some 20 cycles) so that graphs sharing tensors
// can be numbered at once; the load first costs a plain read.
func stamp(t *Tensor, k int32) {
	if atomic.LoadInt32(&t.indexHint) != k {
		atomic.StoreInt32(&t.indexHint, k)
	}
}

// number computes g's numbering into ix, reusing its arrays; *extra is the
// map (nil or empty) for the tensors outside the graph.
//
// Each leaf and node is first stamped with its number (Tensor.indexHint),
// so that a source is numbered by reading its stamp and checking that the
// indexed tensor at that number is the source itself; a stamp left by
// another graph (or overwritten by one being numbered at the same time)
// fails the check and the source is looked up in the graph's map instead.
// The answers are those of the map alone.
func (g *Graph) number(ix *GraphIndex, extra *map[*Tensor]int32) {
	nl, nn := len(g.leafs), len(g.nodes)
	n := nl + nn
	ix.graph, ix.version = g, g.version
	ix.Tensors = resize(ix.Tensors, n)
	ix.Leafs = resize(ix.Leafs, nl)
	ix.Nodes = resize(ix.Nodes, nn)
	ix.SrcStart = resize(ix.SrcStart, nn+1)
	copy(ix.Tensors, g.leafs)
	copy(ix.Tensors[nl:], g.nodes)
	for i, l := range g.leafs {
		ix.Leafs[i] = int32(i)
		stamp(l, int32(i))
	}
	slots := int32(0)
	for i, nd := range g.nodes {
		ix.Nodes[i] = int32(nl + i)
		stamp(nd, int32(nl+i))
		ix.SrcStart[i] = slots
		slots += int32(nd.NumSrc())
	}
	ix.SrcStart[nn] = slots
	inGraph := n
	// Tensors outside the graph (sources or view sources that are neither
	// leafs nor nodes) get numbers after the graph's own.
	id := func(t *Tensor) int32 {
		if h := atomic.LoadInt32(&t.indexHint); h >= 0 && int(h) < inGraph && ix.Tensors[h] == t {
			return h
		}
		if code, ok := g.visited[t]; ok && code != onPath {
			if code < 0 {
				return -(code + 1)
			}
			return int32(nl) + code
		}
		if k, ok := (*extra)[t]; ok {
			return k
		}
		if *extra == nil {
			*extra = map[*Tensor]int32{}
		}
		k := int32(len(ix.Tensors))
		(*extra)[t] = k
		ix.Tensors = append(ix.Tensors, t)
		return k
	}
	ix.SrcIDs = resize(ix.SrcIDs, int(slots))
	for i, nd := range g.nodes {
		src := ix.SrcIDs[ix.SrcStart[i]:ix.SrcStart[i+1]]
		for j := range src {
			src[j] = -1
			if s := nd.Src[j]; s != nil {
				src[j] = id(s)
			}
		}
	}
	viewSrc := resize(ix.ViewSrc, n)
	for i := 0; i < len(ix.Tensors); i++ { // grows while view sources are added
		v := int32(-1)
		if vs := ix.Tensors[i].ViewSrc; vs != nil {
			v = id(vs)
		}
		if i < n {
			viewSrc[i] = v
		} else {
			viewSrc = append(viewSrc, v)
		}
	}
	ix.ViewSrc = viewSrc
	ix.InGraph = resize(ix.InGraph, len(ix.Tensors))
	for i := range ix.InGraph {
		ix.InGraph[i] = i < inGraph
	}
}
