package sched

import (
	"fmt"

	"github.com/gogml/gogml/runtime"
)

// noCompute reports whether t is computed by nobody: a leaf-like op-NONE
// tensor or a view op, which only reinterprets its source's memory.
func noCompute(t *runtime.Tensor) bool { return t.Op == runtime.OpNone || t.Op.IsViewOp() }

// supports reports whether backend i can run t (tensors computed by nobody
// run anywhere).
func (s *Scheduler) supports(i int, t *runtime.Tensor) bool {
	return noCompute(t) || s.backends[i].SupportsOp(t)
}

// fromBuffer returns the first backend that can use memory of type bt and
// run t, or -1 (ggml_backend_sched_backend_from_buffer).
func (s *Scheduler) fromBuffer(bt runtime.BufferType, t *runtime.Tensor) int {
	for i, b := range s.backends {
		if b.SupportsBufferType(bt) && s.supports(i, t) {
			return i
		}
	}
	return -1
}

// fixedBackend is ggml's first pass for one tensor: a pin, the memory it
// already has, the CPU for graph inputs, the backend of its weights.
func (s *Scheduler) fixedBackend(t *runtime.Tensor) int {
	if i, ok := s.pins[t]; ok {
		return i
	}
	if base := t.Base(); base.Buffer != nil {
		if i := s.fromBuffer(base.Buffer.Type(), t); i >= 0 {
			return i
		}
	}
	if t.Op == runtime.OpNone && t.ViewSrc == nil && t.HasFlag(runtime.FlagInput) {
		return len(s.backends) - 1
	}
	for _, src := range t.Src {
		if src == nil {
			continue
		}
		if base := src.Base(); base.Buffer != nil && base.Buffer.Usage() == runtime.UsageWeights {
			if i := s.fromBuffer(base.Buffer.Type(), t); i >= 0 {
				return i
			}
		}
	}
	return -1
}

// expand gives unassigned nodes the backend of the last assigned node met
// walking in one direction, where that backend supports them; with
// skipLast, runs on the last (CPU) backend are not spread (ggml expands the
// GPU backends first, then the rest).
func (s *Scheduler) expand(nodes []*runtime.Tensor, assign map[*runtime.Tensor]int, backward, skipLast bool) {
	cur := -1
	for k := range nodes {
		n := nodes[k]
		if backward {
			n = nodes[len(nodes)-1-k]
		}
		if id, ok := assign[n]; ok {
			cur = id
			if skipLast && id == len(s.backends)-1 {
				cur = -1
			}
			continue
		}
		if cur >= 0 && s.supports(cur, n) {
			assign[n] = cur
		}
	}
}

// assignAll decides every node's and leaf's backend.
func (s *Scheduler) assignAll(g *runtime.Graph) (map[*runtime.Tensor]int, error) {
	nodes, leafs := g.Nodes(), g.Leafs()
	assign := make(map[*runtime.Tensor]int, len(nodes)+len(leafs))
	for _, l := range leafs {
		if i := s.fixedBackend(l); i >= 0 {
			assign[l] = i
		}
	}
	for _, n := range nodes {
		if i := s.fixedBackend(n); i >= 0 {
			if !s.supports(i, n) {
				return nil, fmt.Errorf("sched: node %q (%s) is pinned to %s, which does not support it: %w", n.Name, n.Op, s.backends[i].Name(), ErrUnsupported)
			}
			assign[n] = i
		}
	}
	s.expand(nodes, assign, false, true)
	s.expand(nodes, assign, true, true)
	s.expand(nodes, assign, false, false)
	s.expand(nodes, assign, true, false)
	for _, n := range nodes {
		if _, ok := assign[n]; ok {
			continue
		}
		found := false
		for i := range s.backends {
			if s.supports(i, n) {
				assign[n], found = i, true
				break
			}
		}
		if !found {
			return nil, fmt.Errorf("sched: node %q: op %s (type %s): %w", n.Name, n.Op, n.Type, ErrUnsupported)
		}
	}
	// A view lives in its base's memory: it belongs to its base's backend.
	for _, n := range nodes {
		if _, pinned := s.pins[n]; n.ViewSrc != nil && !pinned {
			if i, ok := assign[n.Base()]; ok {
				assign[n] = i
			}
		}
	}
	// Sources nobody placed (leafs without memory, tensors outside the
	// graph) go where their first consumer runs.
	for _, n := range nodes {
		for _, src := range n.Src {
			if src == nil {
				continue
			}
			if _, ok := assign[src]; !ok {
				if i, ok := assign[src.Base()]; ok {
					assign[src] = i
				} else {
					assign[src] = assign[n]
				}
			}
		}
	}
	for _, l := range leafs {
		if _, ok := assign[l]; !ok {
			assign[l] = len(s.backends) - 1
		}
	}
	return assign, nil
}

// readable reports whether backend b computes directly on src's memory:
// the buffer src has, or else the one its backend's compute memory will be.
func (s *Scheduler) readable(b int, src *runtime.Tensor, assign map[*runtime.Tensor]int) bool {
	if base := src.Base(); base.Buffer != nil {
		return s.backends[b].SupportsBufferType(base.Buffer.Type())
	}
	home, ok := assign[src.Base()]
	if !ok {
		home = assign[src]
	}
	return home == b || s.backends[b].SupportsBufferType(s.bufts[home])
}

// schedule assigns, splits and builds the allocation graph for g.
func (s *Scheduler) schedule(g *runtime.Graph) error {
	if g == nil {
		return fmt.Errorf("sched: nil graph: %w", runtime.ErrGraph)
	}
	s.Reset()
	assign, err := s.assignAll(g)
	if err != nil {
		return err
	}
	s.assign = assign
	s.copies = map[copyKey]*runtime.Tensor{}

	// Cut the node list where the backend changes; views stay in the split
	// they are met in (nobody computes them).
	var cur *Split
	for _, n := range g.Nodes() {
		b := assign[n]
		if cur == nil || (!noCompute(n) && b != cur.Backend) {
			if cur != nil && allViews(cur.Nodes) {
				cur.Backend = b // a leading run of views joins the first compute split
			} else {
				cur = &Split{Backend: b}
				s.splits = append(s.splits, cur)
			}
		}
		cur.Nodes = append(cur.Nodes, n)
	}

	for _, sp := range s.splits {
		for _, n := range sp.Nodes {
			if noCompute(n) {
				continue
			}
			for j, src := range n.Src {
				if src == nil || s.readable(sp.Backend, src, assign) {
					continue
				}
				c := s.copyOf(src, sp.Backend)
				if !contains(sp.Copies, c) {
					sp.Inputs = append(sp.Inputs, src)
					sp.Copies = append(sp.Copies, c)
				}
				s.patches = append(s.patches, srcPatch{node: n, j: j, orig: src})
				n.Src[j] = c
			}
		}
	}
	return s.buildGraphs(g)
}

func allViews(ns []*runtime.Tensor) bool {
	for _, n := range ns {
		if !noCompute(n) {
			return false
		}
	}
	return true
}

func contains(ts []*runtime.Tensor, t *runtime.Tensor) bool {
	for _, x := range ts {
		if x == t {
			return true
		}
	}
	return false
}

// copyOf returns the copy of src in backend b's memory, made once per
// schedule: same type and layout (ggml_dup_tensor_layout), an input of the
// split.
func (s *Scheduler) copyOf(src *runtime.Tensor, b int) *runtime.Tensor {
	k := copyKey{src, b}
	if c, ok := s.copies[k]; ok {
		return c
	}
	c := &runtime.Tensor{
		Name:  s.backends[b].Name() + "#" + src.Name,
		Type:  src.Type,
		Ne:    src.Ne,
		Nb:    src.Nb,
		Flags: runtime.FlagInput,
	}
	s.copies[k] = c
	s.assign[c] = b
	return c
}

// buildGraphs makes each split's compute graph and the one graph the
// allocator plans: the original leafs and the input copies as leafs; per
// split, a view of each input's base (it keeps the input's memory alive until the
// split copies it), then the split's nodes.
func (s *Scheduler) buildGraphs(g *runtime.Graph) error {
	leafs := append([]*runtime.Tensor(nil), g.Leafs()...)
	var nodes []*runtime.Tensor
	inGraph := make(map[*runtime.Tensor]bool, len(g.Nodes())+len(leafs))
	for _, t := range g.Nodes() {
		inGraph[t] = true
	}
	for _, t := range leafs {
		inGraph[t] = true
	}
	for k, sp := range s.splits {
		for i, in := range sp.Inputs {
			c := sp.Copies[i]
			if !inGraph[c] {
				leafs = append(leafs, c)
				inGraph[c] = true
			}
			base := in.Base()
			if !inGraph[base] {
				continue // memory outside the graph: nothing to keep alive
			}
			dep := &runtime.Tensor{
				Name:     fmt.Sprintf("%s (split %d input)", in.Name, k),
				Type:     in.Type,
				Ne:       in.Ne,
				Nb:       in.Nb,
				Op:       runtime.OpView,
				ViewSrc:  base,
				ViewOffs: in.ViewOffs,
			}
			// The base, not in: a view input may itself be a node of this
			// split, met after the copy is made.
			dep.Src[0] = base
			s.assign[dep] = s.assign[base]
			nodes = append(nodes, dep)
		}
		nodes = append(nodes, sp.Nodes...)
		sg, err := runtime.NewGraphFrom(nil, sp.Nodes)
		if err != nil {
			return fmt.Errorf("sched: split %d: %w", k, err)
		}
		sp.graph = sg
	}
	ag, err := runtime.NewGraphFrom(leafs, nodes)
	if err != nil {
		return fmt.Errorf("sched: %w", err)
	}
	s.nodeIDs = make([]int, len(nodes))
	for i, n := range nodes {
		s.nodeIDs[i] = s.assign[n]
	}
	s.leafIDs = make([]int, len(leafs))
	for i, l := range leafs {
		s.leafIDs[i] = s.assign[l]
	}
	s.graph, s.allocG = g, ag
	return nil
}
