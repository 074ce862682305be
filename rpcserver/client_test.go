package rpcserver

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gogml/gogml/backends/cpu"
	"github.com/gogml/gogml/internal/rpcwire"
	"github.com/gogml/gogml/runtime"
)

// client speaks the wire as ggml 0.27.0's client does, for tests.
type client struct {
	t  testing.TB
	nc net.Conn
}

// startServer serves one CPU device on a loopback port.
func startServer(t testing.TB, o Options) (*Server, string) {
	t.Helper()
	if o.Backends == nil {
		o.Backends = []runtime.Backend{newCPU(t)}
	}
	if o.Log == nil {
		o.Log = testLog{t}
	}
	s, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { s.Serve(ln); close(done) }()
	t.Cleanup(func() { s.Close(); <-done })
	return s, ln.Addr().String()
}

// newCPU returns a 2-thread CPU backend closed at the end of the test.
func newCPU(t testing.TB) runtime.Backend {
	b := cpu.NewBackend(cpu.BackendOptions{Threads: 2})
	t.Cleanup(func() { b.Close() })
	return b
}

// testLog sends the server's log lines to the test log.
type testLog struct{ t testing.TB }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}

// dial connects without HELLO.
func dial(t testing.TB, addr string) *client {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	nc.SetDeadline(time.Now().Add(60 * time.Second))
	t.Cleanup(func() { nc.Close() })
	return &client{t: t, nc: nc}
}

// connect dials and says HELLO.
func connect(t testing.TB, addr string) *client {
	c := dial(t, addr)
	rsp := c.call(rpcwire.CmdHello, make([]byte, rpcwire.HelloReqSize), rpcwire.HelloRspSize)
	if rsp[0] != 8 || rsp[1] != 0 || rsp[2] != 0 {
		t.Fatalf("hello: version %d.%d.%d", rsp[0], rsp[1], rsp[2])
	}
	for _, b := range rsp[4:] {
		if b != 0 {
			t.Fatalf("hello: conn caps % x, want zeros (plain TCP)", rsp[4:])
		}
	}
	return c
}

// send writes a request.
func (c *client) send(cmd rpcwire.Cmd, p []byte) {
	c.t.Helper()
	b := append([]byte{byte(cmd)}, binary.LittleEndian.AppendUint64(nil, uint64(len(p)))...)
	if _, err := c.nc.Write(append(b, p...)); err != nil {
		c.t.Fatalf("%s: %v", cmd, err)
	}
}

// call writes a request and reads a reply of exactly n bytes.
func (c *client) call(cmd rpcwire.Cmd, p []byte, n int) []byte {
	c.t.Helper()
	c.send(cmd, p)
	var hdr [8]byte
	if _, err := io.ReadFull(c.nc, hdr[:]); err != nil {
		c.t.Fatalf("%s: reply: %v", cmd, err)
	}
	if got := binary.LittleEndian.Uint64(hdr[:]); got != uint64(n) {
		c.t.Fatalf("%s: reply of %d bytes, want %d", cmd, got, n)
	}
	out := make([]byte, n)
	if _, err := io.ReadFull(c.nc, out); err != nil {
		c.t.Fatalf("%s: reply: %v", cmd, err)
	}
	return out
}

// closed reports whether the server closed the connection.
func (c *client) closed() bool {
	c.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	var b [1]byte
	_, err := c.nc.Read(b[:])
	return err != nil
}

func u32(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }
func u64(v uint64) []byte { return binary.LittleEndian.AppendUint64(nil, v) }

// rbuffer is a buffer as the client sees it.
type rbuffer struct {
	handle, base, size uint64
}

func (c *client) alloc(dev uint32, size uint64) rbuffer {
	c.t.Helper()
	rsp := c.call(rpcwire.CmdAllocBuffer, append(u32(dev), u64(size)...), 16)
	b := rbuffer{handle: binary.LittleEndian.Uint64(rsp), size: binary.LittleEndian.Uint64(rsp[8:])}
	if b.handle == 0 {
		c.t.Fatalf("alloc %d bytes failed", size)
	}
	b.base = binary.LittleEndian.Uint64(c.call(rpcwire.CmdBufferGetBase, u64(b.handle), 8))
	return b
}

// nextID hands out tensor IDs; clients in concurrent tests share it.
var nextID atomic.Uint64

// f32 describes a contiguous f32 tensor of ne elements at base+off of b.
func f32(b rbuffer, off uint64, ne ...uint32) rpcwire.Tensor {
	id := 0x7f00_0000_1000 + nextID.Add(0x200)
	t := rpcwire.Tensor{ID: id, Type: 0, Buffer: b.handle, Data: b.base + off}
	for i := range 4 {
		t.Ne[i] = 1
	}
	copy(t.Ne[:], ne)
	t.Nb[0] = 4
	for i := 1; i < 4; i++ {
		t.Nb[i] = t.Nb[i-1] * t.Ne[i-1]
	}
	t.SetName(fmt.Sprintf("t%x", id))
	return t
}

func tensorBytes(t *rpcwire.Tensor) []byte { return rpcwire.AppendTensor(nil, t) }

func (c *client) set(t *rpcwire.Tensor, off uint64, data []byte) {
	p := append(tensorBytes(t), 0)
	p = append(p, u64(off)...)
	c.send(rpcwire.CmdSetTensor, append(p, data...))
}

func (c *client) get(t *rpcwire.Tensor, off, n uint64) []byte {
	p := append(tensorBytes(t), u64(off)...)
	return c.call(rpcwire.CmdGetTensor, append(p, u64(n)...), int(n))
}

func floats(v ...float32) []byte {
	var b []byte
	for _, f := range v {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(f))
	}
	return b
}

func toFloats(b []byte) []float32 {
	out := make([]float32, len(b)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

// opTensor makes node = op(srcs...) of shape ne in b at off.
func opTensor(b rbuffer, off uint64, op runtime.Op, srcs []*rpcwire.Tensor, ne ...uint32) rpcwire.Tensor {
	t := f32(b, off, ne...)
	w, _ := rpcwire.GGML027().WireOp(op)
	t.Op = w
	t.Flags = flagCompute
	for i, s := range srcs {
		t.Src[i] = s.ID
	}
	return t
}

// graph encodes a GRAPH_COMPUTE request of the given nodes over tensors.
func graph(dev uint32, uid uint64, nodes []*rpcwire.Tensor, tensors ...*rpcwire.Tensor) []byte {
	g := &rpcwire.Graph{Device: dev, UID: uid}
	for _, n := range nodes {
		g.Nodes = append(g.Nodes, n.ID)
	}
	for _, t := range tensors {
		g.Tensors = append(g.Tensors, *t)
	}
	return rpcwire.AppendGraph(nil, g)
}
