// Package rpcserver serves gogml backends to ggml programs over ggml's RPC
// protocol 8.0.0, exactly as ggml 0.27.0 speaks it: llama.cpp's --rpc,
// test-backend-ops through the RPC backend, and every other ggml client
// place tensors in gogml buffers (host mmaps, OpenGL buffer objects, CUDA
// memory) and run graphs there.
//
// Each backend given to New is one RPC device. A connection owns the
// buffers it allocates; they are freed when it closes. The client's
// addresses are virtual: every buffer gets a base in a per-connection
// address range, and base+offset is mapped back to (buffer, offset), so no
// real address leaves the server. Every tensor of every message is checked
// (type, shape, strides, byte span, buffer range, view range) before use.
//
// Failures follow the protocol: a malformed message, an unknown command or
// a short read closes the connection (the other connections carry on). A
// well-formed graph with an op the backend cannot run is not malformed: the
// protocol has no reply to GRAPH_COMPUTE, so the server logs the op, fills
// the outputs of the graph's nodes with 0xFF bytes (NaN in float types) so
// the client sees a wrong result instead of a stale one, and keeps serving.
package rpcserver

import (
	"errors"
	"fmt"
	"io"
	"net"
	"sync"

	"github.com/gogml/gogml/internal/rpcwire"
	"github.com/gogml/gogml/runtime"
)

// Defaults of Options.
const (
	// DefaultMaxGraphBytes caps a GRAPH_COMPUTE message (about 226k
	// tensors; a 70B llama graph is a few MiB).
	DefaultMaxGraphBytes = 64 << 20
)

// Options configures a Server.
type Options struct {
	// Backends are the devices served, in device order. The server uses
	// each backend's default buffer type and serializes all work on one
	// backend (gogml backends run one Compute at a time).
	Backends []runtime.Backend
	// CacheDir, if set, enables SET_TENSOR_HASH: tensor data the client
	// marks is stored there under its FNV-1a hash and reused on reload.
	CacheDir string
	// MaxGraphBytes caps a GRAPH_COMPUTE message; 0 means
	// DefaultMaxGraphBytes.
	MaxGraphBytes uint64
	// MaxConnBytes caps the bytes of buffers one connection may hold;
	// 0 means no cap beyond the devices' own limits.
	MaxConnBytes uint64
	// Log receives one line per connection event and per rejected
	// message; nil discards them.
	Log io.Writer
	// Debug also logs every command (as GGML_RPC_DEBUG does in ggml).
	Debug bool
	// SupportsOpQuery answers gogml's protocol extension
	// rpcwire.CmdGogmlSupportsOp (does a device run this op?), which ggml's
	// clients never send; off, the command closes the connection as any
	// unknown command does.
	SupportsOpQuery bool
}

// device is one served backend.
type device struct {
	index   uint32
	backend runtime.Backend
	bt      runtime.BufferType
	// mu serializes compute and memory operations on the backend.
	mu sync.Mutex
}

// Server serves ggml RPC clients. It is safe for concurrent use; each
// connection runs in its own goroutine.
type Server struct {
	opts Options
	devs []*device
	tab  *rpcwire.Table

	logMu sync.Mutex

	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	lns    map[net.Listener]struct{}
	closed bool
	wg     sync.WaitGroup
}

// ErrClosed is returned by Serve after Close.
var ErrClosed = errors.New("rpcserver: closed")

// New returns a server for the given backends (at least one).
func New(o Options) (*Server, error) {
	if len(o.Backends) == 0 {
		return nil, errors.New("rpcserver: no backends")
	}
	if o.MaxGraphBytes == 0 {
		o.MaxGraphBytes = DefaultMaxGraphBytes
	}
	s := &Server{opts: o, tab: rpcwire.GGML027(), conns: map[net.Conn]struct{}{}, lns: map[net.Listener]struct{}{}}
	for i, b := range o.Backends {
		if b == nil {
			return nil, fmt.Errorf("rpcserver: backend %d is nil", i)
		}
		bt := b.DefaultBufferType()
		if bt == nil || !runtime.IsPow2(bt.Alignment()) {
			return nil, fmt.Errorf("rpcserver: backend %d (%s): no usable buffer type", i, b.Name())
		}
		s.devs = append(s.devs, &device{index: uint32(i), backend: b, bt: bt})
	}
	return s, nil
}

// Devices returns the number of devices served.
func (s *Server) Devices() int { return len(s.devs) }

func (s *Server) logf(format string, args ...any) {
	if s.opts.Log == nil {
		return
	}
	s.logMu.Lock()
	defer s.logMu.Unlock()
	fmt.Fprintf(s.opts.Log, format+"\n", args...)
}

// Serve accepts connections on ln and serves each in its own goroutine
// until ln fails or Close is called (then it returns ErrClosed).
func (s *Server) Serve(ln net.Listener) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return ErrClosed
	}
	s.lns[ln] = struct{}{}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.lns, ln)
		s.mu.Unlock()
	}()
	for {
		c, err := ln.Accept()
		if err != nil {
			s.mu.Lock()
			closed := s.closed
			s.mu.Unlock()
			if closed {
				return ErrClosed
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return err
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.ServeConn(c)
		}()
	}
}

// ServeConn serves one client connection until it closes or sends a
// malformed message, then frees everything the connection allocated and
// closes c.
func (s *Server) ServeConn(c net.Conn) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		c.Close()
		return
	}
	s.conns[c] = struct{}{}
	s.mu.Unlock()
	cn := newConn(s, c)
	s.logf("Accepted client connection from %s", c.RemoteAddr())
	err := cn.serve()
	cn.release()
	c.Close()
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
	if errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) {
		s.logf("Client connection %s closed", c.RemoteAddr())
	} else {
		s.logf("Client connection %s closed: %v", c.RemoteAddr(), err)
	}
}

// Close stops the listeners passed to Serve, closes every connection and
// waits for their goroutines to free their buffers. The backends are not
// closed: they belong to the caller.
func (s *Server) Close() error {
	s.mu.Lock()
	s.closed = true
	for ln := range s.lns {
		ln.Close()
	}
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
	return nil
}

// DeviceLine describes device i as ggml's rpc-server prints it at start:
// "NAME: DESCRIPTION (TOTAL MiB, FREE MiB free)".
func (s *Server) DeviceLine(i int) string {
	d := s.devs[i]
	info := d.backend.Device()
	name := info.Name
	if name == "" {
		name = d.backend.Name()
	}
	return fmt.Sprintf("%s: %s (%d MiB, %d MiB free)", name, info.Description, info.TotalMemory>>20, info.FreeMemory>>20)
}
