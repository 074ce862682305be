package rpcserver

import (
	"net"
	"testing"

	"github.com/gogml/gogml/internal/rpcwire"
	"github.com/gogml/gogml/runtime"
)

// FuzzServeConn feeds arbitrary command streams after a HELLO to a server
// (buffers capped at 1 MiB per connection; gogml's op-support query
// enabled): the connection must end
// without a panic, and the server must keep serving.
func FuzzServeConn(f *testing.F) {
	hello := append([]byte{byte(rpcwire.CmdHello)}, u64(rpcwire.HelloReqSize)...)
	hello = append(hello, make([]byte, rpcwire.HelloReqSize)...)
	msg := func(cmd rpcwire.Cmd, p []byte) []byte {
		return append(append([]byte{byte(cmd)}, u64(uint64(len(p)))...), p...)
	}
	alloc := msg(rpcwire.CmdAllocBuffer, append(u32(0), u64(4096)...))
	b := rbuffer{handle: 1, base: firstBase, size: 4096}
	x := f32(b, 0, 4)
	y := opTensor(b, 64, runtime.OpScale, []*rpcwire.Tensor{&x}, 4)
	f.Add(alloc)
	f.Add(append(bytesOf(alloc), msg(rpcwire.CmdSetTensor, append(append(append(tensorBytes(&x), 0), u64(0)...), floats(1, 2, 3, 4)...))...))
	f.Add(append(bytesOf(alloc), msg(rpcwire.CmdGraphCompute, graph(0, 1, []*rpcwire.Tensor{&y}, &x, &y))...))
	f.Add(append(bytesOf(alloc), msg(rpcwire.CmdGetTensor, append(append(tensorBytes(&x), u64(0)...), u64(16)...))...))
	f.Add(msg(rpcwire.CmdDeviceCount, nil))
	f.Add(msg(rpcwire.CmdGogmlSupportsOp, graph(0, 0, []*rpcwire.Tensor{&y}, &x, &y)))
	s, err := New(Options{Backends: []runtime.Backend{newCPU(f)}, MaxConnBytes: 1 << 20, SupportsOpQuery: true})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		cl, sv := net.Pipe()
		done := make(chan struct{})
		go func() { s.ServeConn(sv); close(done) }()
		go func() {
			// Drain replies so the server never blocks on writing.
			buf := make([]byte, 4096)
			for {
				if _, err := cl.Read(buf); err != nil {
					return
				}
			}
		}()
		cl.Write(hello)
		cl.Write(in)
		cl.Close()
		<-done
	})
}

func bytesOf(b []byte) []byte { return append([]byte(nil), b...) }
