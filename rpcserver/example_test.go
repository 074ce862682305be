package rpcserver_test

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"

	"github.com/gogml/gogml/backends/cpu"
	"github.com/gogml/gogml/rpcserver"
	"github.com/gogml/gogml/runtime"
)

// Serve the CPU backend on a loopback port, then greet it as a ggml client
// does: HELLO (command 14) with 24 bytes of transport caps, answered with
// the protocol version and caps of its own.
func Example() {
	be := cpu.NewBackend(cpu.BackendOptions{Threads: 1})
	defer be.Close()
	srv, err := rpcserver.New(rpcserver.Options{Backends: []runtime.Backend{be}})
	if err != nil {
		panic(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	go srv.Serve(ln)
	defer srv.Close()
	// llama.cpp would now use it with --rpc 127.0.0.1:PORT.

	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		panic(err)
	}
	defer c.Close()
	req := append([]byte{14}, binary.LittleEndian.AppendUint64(nil, 24)...)
	c.Write(append(req, make([]byte, 24)...))
	rsp := make([]byte, 8+28)
	if _, err := io.ReadFull(c, rsp); err != nil {
		panic(err)
	}
	fmt.Printf("devices: %d, protocol %d.%d.%d\n", srv.Devices(), rsp[8], rsp[9], rsp[10])
	// Output: devices: 1, protocol 8.0.0
}
