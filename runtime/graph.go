package runtime

import "fmt"

// Graph is ggml's compute graph: leafs (constants and inputs, op NONE
// without FlagParam) and nodes (computed tensors, in evaluation order).
type Graph struct {
	leafs   []*Tensor
	nodes   []*Tensor
	visited map[*Tensor]struct{}
	index   *GraphIndex
}

// NewGraph returns an empty graph.
func NewGraph() *Graph { return &Graph{visited: map[*Tensor]struct{}{}} }

// NewGraphFrom returns a graph with the given leaf and node order, as a
// graph file states it. It checks that every source of a node is a leaf,
// an earlier node, or a tensor outside the graph that is not a node later.
func NewGraphFrom(leafs, nodes []*Tensor) (*Graph, error) {
	g := NewGraph()
	pos := make(map[*Tensor]int, len(nodes))
	for i, n := range nodes {
		if n == nil {
			return nil, fmt.Errorf("node %d is nil: %w", i, ErrGraph)
		}
		if _, dup := pos[n]; dup {
			return nil, fmt.Errorf("node %d %q appears twice: %w", i, n.Name, ErrGraph)
		}
		pos[n] = i
	}
	for i, l := range leafs {
		if l == nil {
			return nil, fmt.Errorf("leaf %d is nil: %w", i, ErrGraph)
		}
		if _, dup := g.visited[l]; dup {
			return nil, fmt.Errorf("leaf %d %q appears twice: %w", i, l.Name, ErrGraph)
		}
		if _, isNode := pos[l]; isNode {
			return nil, fmt.Errorf("tensor %q is both a leaf and a node: %w", l.Name, ErrGraph)
		}
		g.visited[l] = struct{}{}
	}
	for i, n := range nodes {
		for j, s := range n.Src {
			if s == nil {
				continue
			}
			if p, ok := pos[s]; ok && p >= i {
				return nil, fmt.Errorf("node %d %q: source %d %q is node %d, not computed before it (cycle or wrong order): %w", i, n.Name, j, s.Name, p, ErrGraph)
			}
		}
		g.visited[n] = struct{}{}
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
	g.index = nil
	g.visited[t] = struct{}{}
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
			if _, seen := g.visited[s]; seen {
				continue
			}
			g.visited[s] = struct{}{}
			stack = append(stack, frame{t: s})
			pushed = true
			break
		}
		if pushed {
			continue
		}
		n := f.t
		stack = stack[:len(stack)-1]
		if n.Op == OpNone && !n.HasFlag(FlagParam) {
			if n.Name == "" {
				n.Name = fmt.Sprintf("leaf_%d", len(g.leafs))
			}
			g.leafs = append(g.leafs, n)
		} else {
			if n.Name == "" {
				n.Name = fmt.Sprintf("node_%d", len(g.nodes))
			}
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
	// Src gives, per node, the index of each source (-1 for none).
	Src [][MaxSrc]int32
	// NSrc gives, per node, one past its last source slot in use.
	NSrc []uint8
	// ViewSrc gives, per indexed tensor, the index of its view source (-1).
	ViewSrc []int32
	// InGraph marks the indexed tensors that are leafs or nodes.
	InGraph []bool
}

// Index returns the graph's tensor numbering, computed once and kept until
// the graph changes.
func (g *Graph) Index() *GraphIndex {
	if g.index != nil {
		return g.index
	}
	n := len(g.leafs) + len(g.nodes)
	ix := &GraphIndex{
		Tensors: make([]*Tensor, 0, n+n/4),
		Leafs:   make([]int32, len(g.leafs)),
		Nodes:   make([]int32, len(g.nodes)),
		Src:     make([][MaxSrc]int32, len(g.nodes)),
		NSrc:    make([]uint8, len(g.nodes)),
	}
	ids := make(map[*Tensor]int32, n+n/4)
	add := func(t *Tensor) int32 {
		if id, ok := ids[t]; ok {
			return id
		}
		id := int32(len(ix.Tensors))
		ids[t] = id
		ix.Tensors = append(ix.Tensors, t)
		return id
	}
	for i, l := range g.leafs {
		ix.Leafs[i] = add(l)
	}
	for i, nd := range g.nodes {
		ix.Nodes[i] = add(nd)
	}
	inGraph := len(ix.Tensors)
	for i, nd := range g.nodes {
		for j, s := range nd.Src {
			if s == nil {
				ix.Src[i][j] = -1
			} else {
				ix.Src[i][j] = add(s)
				ix.NSrc[i] = uint8(j + 1)
			}
		}
	}
	for i := 0; i < len(ix.Tensors); i++ { // grows while view sources are added
		if vs := ix.Tensors[i].ViewSrc; vs != nil {
			add(vs)
		}
	}
	ix.ViewSrc = make([]int32, len(ix.Tensors))
	ix.InGraph = make([]bool, len(ix.Tensors))
	for i, t := range ix.Tensors {
		ix.ViewSrc[i] = -1
		if t.ViewSrc != nil {
			ix.ViewSrc[i] = ids[t.ViewSrc]
		}
		ix.InGraph[i] = i < inGraph
	}
	g.index = ix
	return ix
}
