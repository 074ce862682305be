// Package rpctest runs a gogml RPC server on loopback for tests, as
// net/http/httptest does for HTTP.
package rpctest

import (
	"net"

	"github.com/gogml/gogml/rpcserver"
	"github.com/gogml/gogml/runtime"
)

// Server is a gogml RPC server listening on 127.0.0.1.
type Server struct {
	// Endpoint is the server's "127.0.0.1:port".
	Endpoint string
	srv      *rpcserver.Server
	done     chan struct{}
}

// NewServer serves the backends (one device each) on a free loopback port
// until Close. It panics when it cannot listen, as httptest.NewServer does:
// it is for tests only.
func NewServer(backends ...runtime.Backend) *Server {
	srv, err := rpcserver.New(rpcserver.Options{Backends: backends})
	if err != nil {
		panic("rpctest: " + err.Error())
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic("rpctest: " + err.Error())
	}
	s := &Server{Endpoint: ln.Addr().String(), srv: srv, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		_ = srv.Serve(ln)
	}()
	return s
}

// Close stops the server, closes its connections (their buffers are
// freed) and waits for it. The backends stay open.
func (s *Server) Close() {
	_ = s.srv.Close()
	<-s.done
}
