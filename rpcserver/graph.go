package rpcserver

import (
	"fmt"
	"strings"

	"github.com/gogml/gogml/internal/rpcwire"
	"github.com/gogml/gogml/runtime"
)

// flagCompute is ggml 0.27.0's GGML_TENSOR_FLAG_COMPUTE: only nodes that
// carry it are computed (the rest belong to another split).
const flagCompute = 16

// maxDepth bounds the recursion over sources and view sources.
const maxDepth = 1 << 16

// storedGraph is a deserialized graph, kept for GRAPH_RECOMPUTE.
type storedGraph struct {
	dev   *device
	graph *runtime.Graph
	// nodes are the computed nodes, with their spans for poisoning.
	nodes []*wtensor
	// unsupported names why the backend cannot run the graph ("" if it
	// can).
	unsupported string
	// zeros are nodes whose result is a sum of no terms (emptySum): they
	// are set to 0 before the graph runs and are not part of it.
	zeros []*wtensor
}

// emptySum reports whether node t is a convolution with an empty source:
// ggml computes each of its (existing) result elements as a sum of no
// terms, 0, where gogml's tensors cannot have an empty dimension.
func emptySum(t *runtime.Tensor) bool {
	if t.Op != runtime.OpConv2D && t.Op != runtime.OpConv3D {
		return false
	}
	for _, s := range t.Src[:2] {
		if s == nil {
			return false
		}
	}
	for _, s := range t.Src[:2] {
		for _, n := range s.Ne {
			if n == 0 {
				return true
			}
		}
	}
	return false
}

// graphBuilder links decoded tensors by the client's ids.
type graphBuilder struct {
	c     *conn
	byID  map[uint64]*rpcwire.Tensor
	done  map[uint64]*wtensor
	onWay map[uint64]bool
}

// newGraphBuilder indexes g's tensors by id (the first of duplicates).
func newGraphBuilder(c *conn, g *rpcwire.Graph) *graphBuilder {
	b := &graphBuilder{c: c, byID: make(map[uint64]*rpcwire.Tensor, len(g.Tensors)),
		done: make(map[uint64]*wtensor, len(g.Tensors)), onWay: map[uint64]bool{}}
	for i := range g.Tensors {
		if _, dup := b.byID[g.Tensors[i].ID]; !dup {
			b.byID[g.Tensors[i].ID] = &g.Tensors[i]
		}
	}
	return b
}

// tensor returns the linked tensor of id, decoding it and its sources and
// view source first.
func (b *graphBuilder) tensor(id uint64, depth int) (*wtensor, error) {
	if wt := b.done[id]; wt != nil {
		return wt, nil
	}
	if b.onWay[id] {
		return nil, fmt.Errorf("tensor id %#x depends on itself: %w", id, ErrBadTensor)
	}
	if depth > maxDepth {
		return nil, fmt.Errorf("tensor id %#x: sources nested deeper than %d: %w", id, maxDepth, ErrBadTensor)
	}
	w := b.byID[id]
	if w == nil {
		return nil, fmt.Errorf("tensor id %#x is not in the graph: %w", id, ErrBadTensor)
	}
	b.onWay[id] = true
	defer delete(b.onWay, id)
	wt, err := b.c.decodeTensor(w, decodeOptions{})
	if err != nil {
		return nil, err
	}
	for i, sid := range w.Src {
		if sid == 0 {
			continue
		}
		if sid == id && i == 1 && wt.t.Op == runtime.OpCpy {
			// ggml_cast: a CPY into a new tensor names itself as the
			// destination (src[1] = result). The copy writes the node's
			// own memory, so the self-reference is dropped, not a cycle.
			continue
		}
		s, err := b.tensor(sid, depth+1)
		if err != nil {
			return nil, fmt.Errorf("tensor %q source %d: %w", wt.t.Name, i, err)
		}
		wt.t.Src[i] = s.t
	}
	if w.ViewSrc != 0 {
		vs, err := b.tensor(w.ViewSrc, depth+1)
		if err != nil {
			return nil, fmt.Errorf("view %q: %w", wt.t.Name, err)
		}
		if err := linkView(wt, vs); err != nil {
			return nil, err
		}
	}
	b.done[id] = wt
	return wt, nil
}

// linkView checks that view wt lies inside its source vs and points wt at
// the base tensor of vs, as gogml's views require.
func linkView(wt, vs *wtensor) error {
	name := wt.t.Name
	if wt.rb != vs.rb {
		return fmt.Errorf("view %q: not in the buffer of its source %q: %w", name, vs.t.Name, runtime.ErrView)
	}
	if wt.rb != nil && !wt.empty {
		if wt.data < vs.data || wt.data-vs.data > vs.nbytes || wt.nbytes > vs.nbytes-(wt.data-vs.data) {
			return fmt.Errorf("view %q: bytes [%#x, +%d) outside its source %q [%#x, +%d): %w",
				name, wt.data, wt.nbytes, vs.t.Name, vs.data, vs.nbytes, runtime.ErrView)
		}
	}
	base := vs.t.Base()
	wt.t.ViewSrc = base
	if wt.rb != nil && base.Buffer != nil && wt.t.Offset >= base.Offset {
		wt.t.ViewOffs = wt.t.Offset - base.Offset
	}
	return nil
}

// decodeGraph decodes a GRAPH_COMPUTE-shaped payload and finds its device.
func (c *conn) decodeGraph(p []byte) (*rpcwire.Graph, *device, error) {
	g, err := rpcwire.DecodeGraph(p)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	d, err := c.device(g.Device)
	if err != nil {
		return nil, nil, err
	}
	return g, d, nil
}

// graphCompute deserializes, checks and runs a GRAPH_COMPUTE payload.
func (c *conn) graphCompute(p []byte) error {
	g, d, err := c.decodeGraph(p)
	if err != nil {
		return err
	}
	c.debugf("[graph_compute] device: %d, uid: %d, n_nodes: %d, n_tensors: %d", g.Device, g.UID, len(g.Nodes), len(g.Tensors))
	// Evict exactly when ggml's client does (see GraphCacheMax).
	stored := c.graphs[d.index]
	if g.UID != 0 && len(stored) >= rpcwire.GraphCacheMax {
		clear(stored)
	}
	b := newGraphBuilder(c, g)
	sg := &storedGraph{dev: d}
	var nodes []*runtime.Tensor
	inGraph := map[*runtime.Tensor]bool{}
	for i, id := range g.Nodes {
		if id == 0 {
			continue
		}
		wt, err := b.tensor(id, 0)
		if err != nil {
			return fmt.Errorf("node %d: %w", i, err)
		}
		t := wt.t
		if inGraph[t] || t.Flags&flagCompute == 0 || wt.empty || t.Op == runtime.OpNone || t.Op.IsViewOp() || writesNothing(t) {
			continue
		}
		if wt.rb == nil {
			return fmt.Errorf("node %d %q has no memory: %w", i, t.Name, runtime.ErrNotAllocated)
		}
		if err := checkNode(t); err != nil {
			return fmt.Errorf("node %d: %w", i, err)
		}
		dropEmptyConcat(t)
		if emptySum(t) {
			inGraph[t] = true
			sg.zeros = append(sg.zeros, wt)
			sg.nodes = append(sg.nodes, wt)
			continue
		}
		if why := c.checkSources(d, wt); why != "" && sg.unsupported == "" {
			sg.unsupported = why
		}
		inGraph[t] = true
		nodes = append(nodes, t)
		sg.nodes = append(sg.nodes, wt)
	}
	graph, err := runtime.NewGraphFrom(nil, nodes)
	if err != nil {
		return err
	}
	sg.graph = graph
	if g.UID != 0 {
		stored[g.UID] = sg
	}
	c.run(sg)
	return nil
}

// dropEmptyConcat turns a CONCAT with one empty source (llama.cpp's
// minicpm3 concatenates a zero-width k_nope with k_pe) into a DUP of the
// other source: ggml's concat then copies that source whole, and gogml's
// kernels need no empty operand.
func dropEmptyConcat(t *runtime.Tensor) {
	if t.Op != runtime.OpConcat || t.Src[0] == nil || t.Src[1] == nil {
		return
	}
	var keep *runtime.Tensor
	switch {
	case t.Src[0].Nelements() == 0 && t.Src[1].Nelements() != 0:
		keep = t.Src[1]
	case t.Src[1].Nelements() == 0 && t.Src[0].Nelements() != 0:
		keep = t.Src[0]
	default:
		return
	}
	if keep.Ne != t.Ne || keep.Type != t.Type {
		return // not a plain copy: left to the usual checks
	}
	t.Op = runtime.OpDup
	t.Src[0], t.Src[1] = keep, nil
	t.OpParams = [len(t.OpParams)]int32{}
}

// writesNothing reports whether node t leaves its memory as it is: a
// SET_ROWS without rows to write (its result is a view of the destination,
// which ggml's loop over zero rows leaves untouched).
func writesNothing(t *runtime.Tensor) bool {
	if t.Op != runtime.OpSetRows {
		return false
	}
	for _, s := range t.Src[:2] {
		if s != nil && s.Nelements() == 0 {
			return true
		}
	}
	return false
}

// checkSources reports why the device cannot compute node wt: an op the
// backend lacks, an empty source, or memory it cannot reach. "" if none.
func (c *conn) checkSources(d *device, wt *wtensor) string {
	t := wt.t
	if !d.backend.SupportsBufferType(wt.rb.buf.Type()) {
		return fmt.Sprintf("node %q: %s cannot compute in %s memory", t.Name, d.backend.Name(), wt.rb.buf.Type().Name())
	}
	for i, s := range t.Src {
		if s == nil {
			continue
		}
		if s.Buffer == nil {
			return fmt.Sprintf("node %q: source %d %q has no memory", t.Name, i, s.Name)
		}
		if !d.backend.SupportsBufferType(s.Buffer.Type()) {
			return fmt.Sprintf("node %q: source %d in %s memory", t.Name, i, s.Buffer.Type().Name())
		}
	}
	return whyNotOp(d, t)
}

// whyNotOp reports why the device cannot compute node t wherever its
// memory is: an empty source, or an op, type or mode the backend lacks.
// "" if none.
func whyNotOp(d *device, t *runtime.Tensor) string {
	for i, s := range t.Src {
		if s == nil {
			continue
		}
		for _, n := range s.Ne {
			if n == 0 {
				return fmt.Sprintf("node %q: source %d %q has no elements", t.Name, i, s.Name)
			}
		}
	}
	if !d.supportsOp(t) {
		var srcs []string
		for _, s := range t.Src[:t.NumSrc()] {
			if s != nil {
				srcs = append(srcs, s.Type.String())
			}
		}
		return fmt.Sprintf("unsupported op %s (node %q, %s %v from %s)", opDesc(t), t.Name, t.Type, t.Ne, strings.Join(srcs, ","))
	}
	return ""
}

// supportsOpQuery answers gogml's extension rpcwire.CmdGogmlSupportsOp: 1
// if the device would compute the request's one node, by the checks
// GRAPH_COMPUTE makes before it runs a node (its memory aside: the
// tensors have none yet), 0 if not. A payload that breaks the graph
// layout closes the connection; a tensor gogml cannot decode is answered
// 0, with the reason logged.
func (c *conn) supportsOpQuery(size uint64) error {
	p, err := c.graphPayload(size)
	if err != nil {
		return err
	}
	g, d, err := c.decodeGraph(p)
	if err != nil {
		return err
	}
	if len(g.Nodes) != 1 {
		return fmt.Errorf("%d nodes, want the one op asked about: %w", len(g.Nodes), ErrMalformed)
	}
	why := ""
	if wt, err := newGraphBuilder(c, g).tensor(g.Nodes[0], 0); err != nil {
		why = err.Error()
	} else {
		why = wouldNotRun(d, wt)
	}
	if why != "" {
		c.debugf("[supports_op] device %d: %s", d.index, why)
		return c.reply([]byte{0})
	}
	return c.reply([]byte{1})
}

// wouldNotRun reports why GRAPH_COMPUTE would not compute node wt on
// device d, memory aside ("" if it would, or if the node needs no
// computing: a view, a leaf, an empty result).
func wouldNotRun(d *device, wt *wtensor) string {
	t := wt.t
	if wt.empty || t.Op == runtime.OpNone || t.Op.IsViewOp() || writesNothing(t) {
		return ""
	}
	if err := checkNode(t); err != nil {
		return err.Error()
	}
	dropEmptyConcat(t)
	if emptySum(t) {
		return ""
	}
	return whyNotOp(d, t)
}

// opDesc names a node's op as ggml's test-backend-ops does: the unary or
// GLU function for those ops.
func opDesc(t *runtime.Tensor) string {
	switch t.Op {
	case runtime.OpUnary:
		return t.UnaryOp().String()
	case runtime.OpGlu:
		return runtime.GluOp(t.OpParams[0]).String()
	}
	return t.Op.String()
}

// run computes a graph, or, when the backend cannot, fills its nodes'
// bytes with 0xFF (NaN in float types) and logs why: the protocol has no
// answer to GRAPH_COMPUTE, and a poisoned result is visible where a stale
// one would not be.
func (c *conn) run(sg *storedGraph) {
	d := sg.dev
	why := sg.unsupported
	if why == "" {
		for _, wt := range sg.zeros {
			c.fill(wt, 0)
		}
	}
	if why == "" && sg.graph.NumNodes() > 0 {
		if err := d.compute(sg.graph); err != nil {
			why = fmt.Sprintf("compute failed: %v", err)
		}
	}
	if why == "" {
		return
	}
	c.s.logf("[graph_compute] device %d: %s: %d node outputs filled with NaN", d.index, why, len(sg.nodes))
	for _, wt := range sg.nodes {
		c.fill(wt, 0xFF)
	}
}

// fill sets every byte of node wt's span to v.
func (c *conn) fill(wt *wtensor, v byte) {
	if wt.nbytes == 0 {
		return
	}
	off := wt.data - wt.rb.base
	wt.rb.dev.mu.Lock()
	err := wt.rb.buf.MemsetTensor(byteTensor(wt.rb, off, wt.nbytes), v, 0, wt.nbytes)
	wt.rb.dev.mu.Unlock()
	if err != nil {
		c.s.logf("[graph_compute] fill %q with %#x: %v", wt.t.Name, v, err)
	}
}

// compute runs g on the device. A panic in the backend (a kernel indexing
// out of range on input it did not validate) is turned into an error, so
// one client's graph cannot take the server down; panics in the backend's
// own worker goroutines are beyond its reach.
func (d *device) compute(g *runtime.Graph) (err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("backend panicked: %v", r)
		}
	}()
	return d.backend.Compute(g)
}

// supportsOp asks the backend, turning a panic into "no".
func (d *device) supportsOp(t *runtime.Tensor) (ok bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	defer func() {
		if r := recover(); r != nil {
			ok = false
		}
	}()
	return d.backend.SupportsOp(t)
}

// checkNode applies the checks ggml's server makes on op parameters that
// its CPU kernels trust: PAD_REFLECT_1D's pads must be non-negative and
// fit the output.
func checkNode(t *runtime.Tensor) error {
	if t.Op == runtime.OpPadReflect1D && t.Src[0] != nil {
		s := t.Src[0]
		p0, p1 := int64(t.OpParams[0]), int64(t.OpParams[1])
		if p0 < 0 || p1 < 0 || t.Ne[0] < s.Ne[0]+p0+p1 || t.Ne[1] != s.Ne[1] || t.Ne[2] != s.Ne[2] || t.Ne[3] != s.Ne[3] {
			return fmt.Errorf("node %q: PAD_REFLECT_1D pads %d, %d do not fit: %w", t.Name, p0, p1, ErrBadTensor)
		}
	}
	return nil
}

// graphRecompute runs a stored graph again.
func (c *conn) graphRecompute(dev uint32, uid uint64) error {
	d, err := c.device(dev)
	if err != nil {
		return err
	}
	sg := c.graphs[d.index][uid]
	if sg == nil {
		return fmt.Errorf("device %d: graph with uid %d not found: %w", dev, uid, ErrMalformed)
	}
	c.debugf("[graph_recompute] device: %d, uid: %d", dev, uid)
	c.run(sg)
	return nil
}
