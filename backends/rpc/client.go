// Package rpc is a gogml backend on a remote device: its buffers and its
// compute live on a ggml RPC server — ggml's own rpc-server (llama.cpp's
// `rpc-server`, Debian's ggml-rpc-server) or `gogml rpc-server` — spoken to
// over ggml's RPC protocol 8.0.0, byte for byte as ggml 0.27.0 speaks it.
//
// Dial opens one connection to a server and checks its version; each of
// the server's devices then gives a Backend and a BufferType that plan,
// place and run like any other gogml backend (gallocr, sched). Every
// request has a deadline: a server that dies or hangs gives an error within
// the timeout, never a hang, and once a connection has failed every later
// use of the client, its buffers and its backends reports that error.
//
// The protocol has no op-support query: a Backend claims every op and type
// that the wire can carry, as ggml's RPC client does, unless
// Options.SupportsOp narrows it.
package rpc

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/gogml/gogml/internal/rpcwire"
	"github.com/gogml/gogml/runtime"
)

// Defaults of Options.
const (
	DefaultDialTimeout = 5 * time.Second
	DefaultIOTimeout   = 2 * time.Minute
)

// ErrVersion: the server speaks another major protocol version (or a newer
// minor one).
var ErrVersion = errors.New("rpc: protocol version mismatch")

// ErrConnection: the connection to the server failed; the client is
// unusable from then on and every use reports the first failure.
var ErrConnection = errors.New("rpc: connection failed")

// ErrWire: a tensor cannot be described in the protocol (a dimension or
// stride of 2^32 or more, an op or type ggml 0.27.0 does not have, a
// source outside the server).
var ErrWire = errors.New("rpc: not expressible in the protocol")

// Options configures a client.
type Options struct {
	// DialTimeout bounds connecting and the HELLO handshake; 0 means
	// DefaultDialTimeout.
	DialTimeout time.Duration
	// IOTimeout bounds each request from its first byte sent to its last
	// byte received (a graph's compute included); 0 means DefaultIOTimeout.
	IOTimeout time.Duration
	// SupportsOp, if set, narrows the ops the backends claim.
	SupportsOp func(t *runtime.Tensor) bool
}

// Client is one connection to an RPC server. It is safe for concurrent
// use: requests are serialized on the connection.
type Client struct {
	endpoint string
	opts     Options
	tab      *rpcwire.Table

	mu      sync.Mutex
	nc      net.Conn
	r       *bufio.Reader
	w       *bufio.Writer
	err     error // sticky: the first connection failure
	devices uint32
	nextUID uint64
	version [3]uint8
	timeout time.Duration // of each request: IOTimeout, DialTimeout during HELLO
}

// Dial connects to the server at endpoint ("host:port"), performs the
// HELLO handshake (plain TCP, no transport upgrade) and asks its device
// count.
func Dial(endpoint string, o Options) (*Client, error) {
	if o.DialTimeout <= 0 {
		o.DialTimeout = DefaultDialTimeout
	}
	if o.IOTimeout <= 0 {
		o.IOTimeout = DefaultIOTimeout
	}
	nc, err := net.DialTimeout("tcp", endpoint, o.DialTimeout)
	if err != nil {
		return nil, fmt.Errorf("rpc %s: %w: %w", endpoint, ErrConnection, err)
	}
	c := &Client{endpoint: endpoint, opts: o, tab: rpcwire.GGML027(), nc: nc,
		r: bufio.NewReaderSize(nc, 64<<10), w: bufio.NewWriterSize(nc, 64<<10), nextUID: 1}
	if err := c.hello(); err != nil {
		nc.Close()
		return nil, err
	}
	return c, nil
}

func (c *Client) hello() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.timeout = c.opts.DialTimeout
	defer func() { c.timeout = c.opts.IOTimeout }()
	rsp, err := c.roundTrip(rpcwire.CmdHello, make([]byte, rpcwire.HelloReqSize), rpcwire.HelloRspSize)
	if err != nil {
		return err
	}
	c.version = [3]uint8{rsp[0], rsp[1], rsp[2]}
	if rsp[0] != rpcwire.ProtoMajor || rsp[1] > rpcwire.ProtoMinor {
		return fmt.Errorf("rpc %s: server speaks %d.%d.%d, client %d.%d.%d: %w", c.endpoint,
			rsp[0], rsp[1], rsp[2], rpcwire.ProtoMajor, rpcwire.ProtoMinor, rpcwire.ProtoPatch, ErrVersion)
	}
	for _, b := range rsp[4:] {
		if b != 0 {
			// A capability we did not offer: the server would upgrade
			// a transport we do not have.
			return fmt.Errorf("rpc %s: server asks for transport capabilities we did not offer: %w", c.endpoint, ErrVersion)
		}
	}
	rsp, err = c.roundTrip(rpcwire.CmdDeviceCount, nil, 4)
	if err != nil {
		return err
	}
	c.devices = binary.LittleEndian.Uint32(rsp)
	if c.devices == 0 {
		return fmt.Errorf("rpc %s: server has no devices", c.endpoint)
	}
	return nil
}

// Endpoint returns the server's address as given to Dial.
func (c *Client) Endpoint() string { return c.endpoint }

// Version returns the protocol version the server announced.
func (c *Client) Version() (major, minor, patch uint8) {
	return c.version[0], c.version[1], c.version[2]
}

// Devices returns the number of devices the server serves.
func (c *Client) Devices() int { return int(c.devices) }

// Err returns the connection's failure, or nil while it works.
func (c *Client) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Close closes the connection. The server frees every buffer the
// connection allocated; buffers of this client are unusable afterwards.
func (c *Client) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err == nil {
		c.err = fmt.Errorf("rpc %s: %w: client closed", c.endpoint, ErrConnection)
	}
	return c.nc.Close()
}

// fail records the first failure, closes the connection and returns it.
func (c *Client) fail(err error) error {
	if c.err == nil {
		c.err = fmt.Errorf("rpc %s: %w: %w", c.endpoint, ErrConnection, err)
		c.nc.Close()
	}
	return c.err
}

// send writes one request: | cmd | size u64 | payload |, then the data
// parts (sent after payload, counted in size). The caller holds mu.
func (c *Client) send(cmd rpcwire.Cmd, payload []byte, data ...[]byte) error {
	if c.err != nil {
		return c.err
	}
	c.nc.SetDeadline(time.Now().Add(c.timeout))
	size := uint64(len(payload))
	for _, d := range data {
		size += uint64(len(d))
	}
	var hdr [rpcwire.HeaderSize]byte
	hdr[0] = byte(cmd)
	binary.LittleEndian.PutUint64(hdr[1:], size)
	if _, err := c.w.Write(hdr[:]); err != nil {
		return c.fail(err)
	}
	if _, err := c.w.Write(payload); err != nil {
		return c.fail(err)
	}
	for _, d := range data {
		if _, err := c.w.Write(d); err != nil {
			return c.fail(err)
		}
	}
	if err := c.w.Flush(); err != nil {
		return c.fail(err)
	}
	return nil
}

// recv reads one reply of exactly n bytes into dst (allocated if nil).
func (c *Client) recv(n int, dst []byte) ([]byte, error) {
	var sz [8]byte
	if _, err := io.ReadFull(c.r, sz[:]); err != nil {
		return nil, c.fail(err)
	}
	if got := binary.LittleEndian.Uint64(sz[:]); got != uint64(n) {
		return nil, c.fail(fmt.Errorf("reply of %d bytes, want %d", got, n))
	}
	if dst == nil {
		dst = make([]byte, n)
	}
	if _, err := io.ReadFull(c.r, dst[:n]); err != nil {
		return nil, c.fail(err)
	}
	return dst[:n], nil
}

// roundTrip sends a request and reads its reply of n bytes. The caller
// holds mu.
func (c *Client) roundTrip(cmd rpcwire.Cmd, payload []byte, n int) ([]byte, error) {
	if err := c.send(cmd, payload); err != nil {
		return nil, err
	}
	return c.recv(n, nil)
}

// call is roundTrip under the lock.
func (c *Client) call(cmd rpcwire.Cmd, payload []byte, n int) ([]byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.roundTrip(cmd, payload, n)
}

// post sends a request that has no reply.
func (c *Client) post(cmd rpcwire.Cmd, payload []byte, data ...[]byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.send(cmd, payload, data...)
}

func u32(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }

func (c *Client) deviceU64(cmd rpcwire.Cmd, dev uint32) (uint64, error) {
	rsp, err := c.call(cmd, u32(dev), 8)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(rsp), nil
}

// DeviceMemory returns a device's free and total memory as the server
// reports them.
func (c *Client) DeviceMemory(dev int) (free, total uint64, err error) {
	if dev < 0 || dev >= int(c.devices) {
		return 0, 0, fmt.Errorf("rpc %s: device %d of %d", c.endpoint, dev, c.devices)
	}
	rsp, err := c.call(rpcwire.CmdGetDeviceMemory, u32(uint32(dev)), 16)
	if err != nil {
		return 0, 0, err
	}
	return binary.LittleEndian.Uint64(rsp), binary.LittleEndian.Uint64(rsp[8:]), nil
}
