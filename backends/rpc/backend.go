package rpc

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/gogml/gogml/internal/rpcwire"
	"github.com/gogml/gogml/runtime"
)

// flagCompute is GGML_TENSOR_FLAG_COMPUTE: a node the graph must compute.
const flagCompute = 1 << 4

// serializer turns tensors into their wire form, numbering them once per
// message (the ids only link a graph's tensors to each other).
type serializer struct {
	c   *Client
	ids map[*runtime.Tensor]uint64
	out []rpcwire.Tensor
}

func newSerializer(c *Client) *serializer {
	return &serializer{c: c, ids: map[*runtime.Tensor]uint64{}}
}

func (s *serializer) id(t *runtime.Tensor) uint64 {
	if t == nil {
		return 0
	}
	if id, ok := s.ids[t]; ok {
		return id
	}
	id := uint64(len(s.ids) + 1)
	s.ids[t] = id
	return id
}

// wire returns t's serialized form. With links, its sources and view
// source get ids (the caller adds them too); without, they are 0.
func (s *serializer) wire(t *runtime.Tensor, links bool) (rpcwire.Tensor, error) {
	w := rpcwire.Tensor{ID: s.id(t), Flags: int32(t.Flags), OpParams: t.OpParams, ViewOffs: t.ViewOffs}
	var ok bool
	if w.Type, ok = s.c.tab.WireType(t.Type); !ok {
		return w, fmt.Errorf("tensor %q: type %s: %w", t.Name, t.Type, ErrWire)
	}
	if w.Op, ok = s.c.tab.WireOp(t.Op); !ok {
		return w, fmt.Errorf("tensor %q: op %s: %w", t.Name, t.Op, ErrWire)
	}
	for i := range runtime.MaxDims {
		if t.Ne[i] < 0 || t.Ne[i] > math.MaxUint32 || t.Nb[i] > math.MaxUint32 {
			return w, fmt.Errorf("tensor %q: ne %v nb %v: dimensions and strides must be below 2^32: %w", t.Name, t.Ne, t.Nb, ErrWire)
		}
		w.Ne[i], w.Nb[i] = uint32(t.Ne[i]), uint32(t.Nb[i])
	}
	if t.Buffer != nil {
		b, ok := t.Buffer.(*Buffer)
		if !ok || b.bt.c != s.c {
			return w, fmt.Errorf("tensor %q is in %s, not on server %s: %w", t.Name, t.Buffer.Type().Name(), s.c.endpoint, ErrWire)
		}
		w.Buffer, w.Data = b.handle, b.base+t.Offset
	}
	if links {
		for i, src := range t.Src {
			w.Src[i] = s.id(src)
		}
		w.ViewSrc = s.id(t.ViewSrc)
	}
	w.SetName(t.Name)
	return w, nil
}

// add serializes t and, first, everything it refers to, once each.
func (s *serializer) add(t *runtime.Tensor, seen map[*runtime.Tensor]bool) error {
	if t == nil || seen[t] {
		return nil
	}
	seen[t] = true
	for _, src := range t.Src {
		if err := s.add(src, seen); err != nil {
			return err
		}
	}
	if err := s.add(t.ViewSrc, seen); err != nil {
		return err
	}
	w, err := s.wire(t, true)
	if err != nil {
		return err
	}
	s.out = append(s.out, w)
	return nil
}

// Backend computes on one remote device.
type Backend struct {
	c  *Client
	bt *BufferType
}

var _ runtime.Backend = (*Backend)(nil)

// Backend returns the backend of device dev.
func (c *Client) Backend(dev int) (*Backend, error) {
	bt, err := c.BufferType(dev)
	if err != nil {
		return nil, err
	}
	return &Backend{c: c, bt: bt}, nil
}

// Name is the device's buffer type name, "RPC<device>[host:port]".
func (b *Backend) Name() string { return b.bt.name }

// Device reports the remote device's memory (zeros when the request
// fails; the failure is reported by the client's next use).
func (b *Backend) Device() runtime.DeviceInfo {
	free, total, _ := b.c.DeviceMemory(int(b.bt.dev))
	return runtime.DeviceInfo{Name: b.bt.name, Description: "ggml RPC device " + fmt.Sprint(b.bt.dev) + " at " + b.c.endpoint,
		FreeMemory: free, TotalMemory: total}
}

// DefaultBufferType is the device's memory.
func (b *Backend) DefaultBufferType() runtime.BufferType { return b.bt }

// SupportsBufferType accepts this device's memory only.
func (b *Backend) SupportsBufferType(bt runtime.BufferType) bool {
	return bt == runtime.BufferType(b.bt)
}

// SupportsOp claims every op and type the protocol can carry (the protocol
// has no op query; ggml's client claims them all too) except custom ops,
// whose Go functions cannot travel, narrowed by Options.SupportsOp.
func (b *Backend) SupportsOp(t *runtime.Tensor) bool {
	if t.Op.IsCustom() { // a Go function cannot travel; the server would refuse it
		return false
	}
	if _, ok := b.c.tab.WireOp(t.Op); !ok {
		return false
	}
	for _, x := range append([]*runtime.Tensor{t}, t.Src[:]...) {
		if x == nil {
			continue
		}
		if _, ok := b.c.tab.WireType(x.Type); !ok {
			return false
		}
		for _, n := range x.Ne {
			if n > math.MaxUint32 {
				return false
			}
		}
	}
	return b.c.opts.SupportsOp == nil || b.c.opts.SupportsOp(t)
}

// Compute sends g to the server (GRAPH_COMPUTE) and waits for it to finish:
// the protocol has no reply to a graph, so a request with one (the
// device's alignment) follows it, and its answer means the graph is done.
// Every tensor of g must be in this server's buffers.
func (b *Backend) Compute(g *runtime.Graph) error {
	if g == nil {
		return fmt.Errorf("rpc: nil graph: %w", runtime.ErrGraph)
	}
	s := newSerializer(b.c)
	seen := map[*runtime.Tensor]bool{}
	nodes := make([]uint64, 0, g.NumNodes())
	for _, n := range g.Nodes() {
		if err := s.add(n, seen); err != nil {
			return err
		}
		nodes = append(nodes, s.id(n))
	}
	// ggml 0.27.0 computes only the nodes flagged for it.
	isNode := make(map[uint64]bool, len(nodes))
	for _, id := range nodes {
		isNode[id] = true
	}
	for i := range s.out {
		if isNode[s.out[i].ID] {
			s.out[i].Flags |= flagCompute
		}
	}
	c := b.c
	c.mu.Lock()
	defer c.mu.Unlock()
	uid := c.nextUID
	c.nextUID++
	p := rpcwire.AppendGraph(nil, &rpcwire.Graph{Device: b.bt.dev, UID: uid, Nodes: nodes, Tensors: s.out})
	if err := c.send(rpcwire.CmdGraphCompute, p); err != nil {
		return err
	}
	if _, err := c.roundTrip(rpcwire.CmdGetAlignment, binary.LittleEndian.AppendUint32(nil, b.bt.dev), 8); err != nil {
		return err
	}
	return nil
}

// Close does nothing: the connection belongs to the Client.
func (b *Backend) Close() error { return nil }
