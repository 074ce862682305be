package rpcserver

import (
	"encoding/binary"
	"math"
	"net"
	"sync"
	"testing"

	"github.com/gogml/gogml/internal/rpcwire"
	"github.com/gogml/gogml/runtime"
)

// TestMalformedMessages sends each kind of bad message on its own
// connection and checks that the server closes that connection, stays up,
// and leaves another client's connection and data untouched.
func TestMalformedMessages(t *testing.T) {
	_, addr := startServer(t, Options{})
	other := connect(t, addr)
	ob := other.alloc(0, 4096)
	ot := f32(ob, 0, 4)
	other.set(&ot, 0, floats(1, 2, 3, 4))

	req := func(t *rpcwire.Tensor, ws ...uint64) []byte {
		p := tensorBytes(t)
		for _, w := range ws {
			p = append(p, u64(w)...)
		}
		return p
	}
	cases := []struct {
		name  string
		hello bool // say HELLO first
		send  func(c *client, b rbuffer)
	}{
		{"first command not HELLO", false, func(c *client, b rbuffer) { c.send(rpcwire.CmdDeviceCount, nil) }},
		{"HELLO of wrong size", false, func(c *client, b rbuffer) { c.send(rpcwire.CmdHello, make([]byte, 3)) }},
		{"second HELLO", true, func(c *client, b rbuffer) { c.send(rpcwire.CmdHello, make([]byte, rpcwire.HelloReqSize)) }},
		{"unknown command", true, func(c *client, b rbuffer) { c.send(99, nil) }},
		{"NONE command", true, func(c *client, b rbuffer) { c.send(rpcwire.CmdNone, nil) }},
		{"fixed size mismatch", true, func(c *client, b rbuffer) { c.send(rpcwire.CmdGetAlignment, make([]byte, 5)) }},
		{"short read", true, func(c *client, b rbuffer) {
			c.nc.Write(append([]byte{byte(rpcwire.CmdAllocBuffer)}, u64(12)...))
			c.nc.Write([]byte{0, 0, 0})
			c.nc.(*net.TCPConn).CloseWrite()
		}},
		{"huge graph size", true, func(c *client, b rbuffer) {
			c.nc.Write(append([]byte{byte(rpcwire.CmdGraphCompute)}, u64(1<<62)...))
		}},
		{"huge set_tensor size", true, func(c *client, b rbuffer) {
			x := f32(b, 0, 4)
			p := append(append(tensorBytes(&x), 0), u64(0)...)
			c.nc.Write(append(append([]byte{byte(rpcwire.CmdSetTensor)}, u64(1<<62)...), p...))
		}},
		{"bad device", true, func(c *client, b rbuffer) { c.send(rpcwire.CmdGetAlignment, u32(5)) }},
		{"alloc on bad device", true, func(c *client, b rbuffer) { c.send(rpcwire.CmdAllocBuffer, append(u32(7), u64(16)...)) }},
		{"unknown buffer", true, func(c *client, b rbuffer) { c.send(rpcwire.CmdBufferClear, append(u64(12345), 0)) }},
		{"tensor outside buffer", true, func(c *client, b rbuffer) {
			x := f32(b, b.size-8, 4)
			c.send(rpcwire.CmdGetTensor, req(&x, 0, 16))
		}},
		{"tensor before buffer", true, func(c *client, b rbuffer) {
			x := f32(b, 0, 4)
			x.Data = b.base - 4
			c.send(rpcwire.CmdGetTensor, req(&x, 0, 4))
		}},
		{"read past tensor", true, func(c *client, b rbuffer) {
			x := f32(b, 0, 4)
			c.send(rpcwire.CmdGetTensor, req(&x, 8, 16))
		}},
		{"offset overflow", true, func(c *client, b rbuffer) {
			x := f32(b, 0, 4)
			c.send(rpcwire.CmdGetTensor, req(&x, math.MaxUint64-2, 8))
		}},
		{"memset outside", true, func(c *client, b rbuffer) {
			x := f32(b, 0, 4)
			c.send(rpcwire.CmdMemsetTensor, append(req(&x, 0, 17), 0))
		}},
		{"data without buffer", true, func(c *client, b rbuffer) {
			x := f32(b, 0, 4)
			x.Buffer = 0
			c.send(rpcwire.CmdGetTensor, req(&x, 0, 4))
		}},
		{"removed type", true, func(c *client, b rbuffer) {
			x := f32(b, 0, 4)
			x.Type = 4
			c.send(rpcwire.CmdGetTensor, req(&x, 0, 4))
		}},
		{"type out of range", true, func(c *client, b rbuffer) {
			x := f32(b, 0, 4)
			x.Type = 1000
			c.send(rpcwire.CmdInitTensor, tensorBytes(&x))
		}},
		{"ne/nb overflow", true, func(c *client, b rbuffer) {
			x := f32(b, 0, 4)
			x.Ne = [4]uint32{math.MaxUint32, math.MaxUint32, math.MaxUint32, math.MaxUint32}
			x.Nb = [4]uint32{math.MaxUint32, math.MaxUint32, math.MaxUint32, math.MaxUint32}
			c.send(rpcwire.CmdGetTensor, req(&x, 0, 4))
		}},
		{"block size", true, func(c *client, b rbuffer) {
			x := f32(b, 0, 4)
			x.Type = 2 // q4_0: ne[0] must be a multiple of 32
			c.send(rpcwire.CmdGetTensor, req(&x, 0, 4))
		}},
		{"copy past destination", true, func(c *client, b rbuffer) {
			x := f32(b, 0, 256)
			y := f32(b, b.size-16, 4)
			c.send(rpcwire.CmdCopyTensor, append(tensorBytes(&x), tensorBytes(&y)...))
		}},
		{"2d stride overflow", true, func(c *client, b rbuffer) {
			x := f32(b, 0, 4)
			c.send(rpcwire.CmdGetTensor2D, req(&x, 0, 4, 3, math.MaxUint64/2))
		}},
		{"2d rows repeat past the tensor", true, func(c *client, b rbuffer) {
			x := f32(b, 0, 4)
			c.send(rpcwire.CmdGetTensor2D, req(&x, 0, 4, 1<<40, 0))
		}},
		{"2d empty rows", true, func(c *client, b rbuffer) {
			x := f32(b, 0, 4)
			c.send(rpcwire.CmdGetTensor2D, req(&x, 0, 0, 1, 0))
		}},
		{"2d data size mismatch", true, func(c *client, b rbuffer) {
			x := f32(b, 0, 4)
			c.send(rpcwire.CmdSetTensor2D, append(req(&x, 0, 4, 2, 8), 1, 2, 3))
		}},
		{"bad op", true, func(c *client, b rbuffer) {
			x := f32(b, 0, 4)
			z := opTensor(b, 64, runtime.OpAdd, []*rpcwire.Tensor{&x, &x}, 4)
			z.Op = 200
			c.send(rpcwire.CmdGraphCompute, graph(0, 0, []*rpcwire.Tensor{&z}, &x, &z))
		}},
		{"bad unary function", true, func(c *client, b rbuffer) {
			x := f32(b, 0, 4)
			z := opTensor(b, 64, runtime.OpUnary, []*rpcwire.Tensor{&x}, 4)
			z.OpParams[0] = 77
			c.send(rpcwire.CmdGraphCompute, graph(0, 0, []*rpcwire.Tensor{&z}, &x, &z))
		}},
		{"view outside source", true, func(c *client, b rbuffer) {
			x := f32(b, 0, 4)
			v := f32(b, 8, 4) // 16 bytes from +8: past x's 16 bytes
			v.Op, _ = rpcwire.GGML027().WireOp(runtime.OpView)
			v.ViewSrc, v.ViewOffs, v.Src[0] = x.ID, 8, x.ID
			z := opTensor(b, 128, runtime.OpScale, []*rpcwire.Tensor{&v}, 4)
			c.send(rpcwire.CmdGraphCompute, graph(0, 0, []*rpcwire.Tensor{&z}, &x, &v, &z))
		}},
		{"view in another buffer", true, func(c *client, b rbuffer) {
			b2 := c.alloc(0, 4096)
			x := f32(b, 0, 4)
			v := f32(b2, 0, 4)
			v.ViewSrc = x.ID
			z := opTensor(b, 128, runtime.OpScale, []*rpcwire.Tensor{&v}, 4)
			c.send(rpcwire.CmdGraphCompute, graph(0, 0, []*rpcwire.Tensor{&z}, &x, &v, &z))
		}},
		{"node not in graph", true, func(c *client, b rbuffer) {
			x := f32(b, 0, 4)
			z := opTensor(b, 64, runtime.OpScale, []*rpcwire.Tensor{&x}, 4)
			c.send(rpcwire.CmdGraphCompute, graph(0, 0, []*rpcwire.Tensor{&z}, &z))
		}},
		{"source cycle", true, func(c *client, b rbuffer) {
			z := opTensor(b, 64, runtime.OpScale, nil, 4)
			z.Src[0] = z.ID
			c.send(rpcwire.CmdGraphCompute, graph(0, 0, []*rpcwire.Tensor{&z}, &z))
		}},
		{"graph counts past the message", true, func(c *client, b rbuffer) {
			x := f32(b, 0, 4)
			p := graph(0, 0, []*rpcwire.Tensor{&x}, &x)
			binary.LittleEndian.PutUint32(p[12:], 1000)
			c.send(rpcwire.CmdGraphCompute, p)
		}},
		{"node without memory", true, func(c *client, b rbuffer) {
			x := f32(b, 0, 4)
			z := opTensor(b, 64, runtime.OpScale, []*rpcwire.Tensor{&x}, 4)
			z.Buffer, z.Data = 0, 0
			c.send(rpcwire.CmdGraphCompute, graph(0, 0, []*rpcwire.Tensor{&z}, &x, &z))
		}},
		{"PAD_REFLECT_1D with negative pad", true, func(c *client, b rbuffer) {
			x := f32(b, 0, 4)
			z := opTensor(b, 64, runtime.OpPadReflect1D, []*rpcwire.Tensor{&x}, 4)
			z.OpParams[0], z.OpParams[1] = -100, 100
			c.send(rpcwire.CmdGraphCompute, graph(0, 0, []*rpcwire.Tensor{&z}, &x, &z))
		}},
		{"recompute of unknown uid", true, func(c *client, b rbuffer) {
			c.send(rpcwire.CmdGraphRecompute, append(u32(0), u64(42)...))
		}},
		{"allreduce without comm", true, func(c *client, b rbuffer) {
			x := f32(b, 0, 4)
			c.send(rpcwire.CmdCommAllreduce, append(u32(0), tensorBytes(&x)...))
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var c *client
			var b rbuffer
			if tc.hello {
				c = connect(t, addr)
				b = c.alloc(0, 4096)
			} else {
				c = dial(t, addr)
			}
			tc.send(c, b)
			if !c.closed() {
				t.Fatal("server kept the connection open")
			}
			if got := toFloats(other.get(&ot, 0, 16)); got[3] != 4 {
				t.Fatalf("other connection's data changed: %v", got)
			}
			connect(t, addr).call(rpcwire.CmdDeviceCount, nil, 4)
		})
	}
}

// TestConcurrentClients runs several clients at once (run with -race).
func TestConcurrentClients(t *testing.T) {
	_, addr := startServer(t, Options{})
	const clients, rounds = 6, 20
	var wg sync.WaitGroup
	errs := make(chan string, clients)
	for k := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := connect(t, addr)
			b := c.alloc(0, 1<<16)
			x := f32(b, 0, 64)
			y := opTensor(b, 1024, runtime.OpScale, []*rpcwire.Tensor{&x}, 64)
			y.OpParams[0] = int32(math.Float32bits(float32(k + 1)))
			in := make([]float32, 64)
			for r := range rounds {
				for i := range in {
					in[i] = float32(r*64 + i)
				}
				c.set(&x, 0, floats(in...))
				c.send(rpcwire.CmdGraphCompute, graph(0, uint64(r%3+1), []*rpcwire.Tensor{&y}, &x, &y))
				got := toFloats(c.get(&y, 0, 256))
				for i, v := range got {
					if v != in[i]*float32(k+1) {
						errs <- "wrong result"
						return
					}
				}
			}
			c.send(rpcwire.CmdFreeBuffer, u64(b.handle))
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
}
