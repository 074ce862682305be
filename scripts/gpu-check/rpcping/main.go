// Command rpcping is the device check's protocol round trip against a
// ggml RPC server (protocol 8.0.0, as ggml 0.27.0 speaks it), such as
// `gogml rpc-server -backend cuda`:
//
//	rpcping -addr 127.0.0.1:50052 [-device 0] [-size 1M] [-timeout 20s]
//
// It says HELLO, counts the devices, reads device 0's memory, alignment
// and max size, allocates a buffer, clears it to a byte, reads it back
// with GET_TENSOR and checks every byte, then frees it, printing one line
// per step and the read-back bandwidth. It needs no tensors of its own
// beyond the one it reads through, so it stays independent of the
// server's code. Exit status 1 names the step that failed.
package main

import (
	"bufio"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"time"
)

// Protocol 8.0.0 command numbers (ggml-rpc.cpp's enum rpc_cmd).
const (
	cmdAllocBuffer     = 0
	cmdGetAlignment    = 1
	cmdGetMaxSize      = 2
	cmdBufferGetBase   = 3
	cmdFreeBuffer      = 4
	cmdBufferClear     = 5
	cmdGetTensor       = 8
	cmdGetDeviceMemory = 11
	cmdHello           = 14
	cmdDeviceCount     = 15
)

// Sizes of the layouts used: the HELLO transport block, the serialized
// tensor (rpc_tensor, packed) and the largest reply read (a cap, so a bad
// size field cannot drive an allocation).
const (
	connCapsSize = 24
	tensorSize   = 296
	maxReply     = 1 << 30
	protoMajor   = 8
	typeI8       = 24 // GGML_TYPE_I8
	clearByte    = 0x5A
)

// errReply is wrapped by every malformed or unexpected reply.
var errReply = errors.New("rpcping: bad reply")

var le = binary.LittleEndian

// client is one connection.
type client struct{ rw *bufio.ReadWriter }

func newClient(c io.ReadWriter) *client {
	return &client{rw: bufio.NewReadWriter(bufio.NewReader(c), bufio.NewWriter(c))}
}

// send writes | cmd | size | payload |.
func (c *client) send(cmd byte, payload []byte) error {
	hdr := le.AppendUint64([]byte{cmd}, uint64(len(payload)))
	if _, err := c.rw.Write(hdr); err != nil {
		return err
	}
	if _, err := c.rw.Write(payload); err != nil {
		return err
	}
	return c.rw.Flush()
}

// reply reads | size | payload | and checks the size is want.
func (c *client) reply(want uint64) ([]byte, error) {
	var b [8]byte
	if _, err := io.ReadFull(c.rw, b[:]); err != nil {
		return nil, fmt.Errorf("reading the reply size: %w", err)
	}
	n := le.Uint64(b[:])
	if n != want || n > maxReply {
		return nil, fmt.Errorf("reply of %d bytes, want %d: %w", n, want, errReply)
	}
	p := make([]byte, n)
	if _, err := io.ReadFull(c.rw, p); err != nil {
		return nil, fmt.Errorf("reading a %d-byte reply: %w", n, err)
	}
	return p, nil
}

// call sends a command and reads a reply of want bytes.
func (c *client) call(cmd byte, payload []byte, want uint64) ([]byte, error) {
	if err := c.send(cmd, payload); err != nil {
		return nil, err
	}
	return c.reply(want)
}

// tensorI8 serializes a 1-D I8 tensor of n bytes at data in buffer buf.
func tensorI8(buf, data, n uint64) []byte {
	t := make([]byte, tensorSize)
	le.PutUint64(t[0:], 1)      // id
	le.PutUint32(t[8:], typeI8) // type
	le.PutUint64(t[12:], buf)   // buffer
	le.PutUint32(t[20:], uint32(n))
	for i := 1; i < 4; i++ {
		le.PutUint32(t[20+4*i:], 1) // ne
	}
	le.PutUint32(t[36:], 1) // nb[0]
	for i := 1; i < 4; i++ {
		le.PutUint32(t[36+4*i:], uint32(n)) // nb[1..3]
	}
	le.PutUint64(t[220:], data) // data
	copy(t[228:], "rpcping")
	return t
}

// ping runs the round trip on one connection, printing a line per step.
func ping(conn io.ReadWriter, out io.Writer, device uint32, size uint64) error {
	c := newClient(conn)
	step := func(name string, err error) error {
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		return nil
	}
	p, err := c.call(cmdHello, make([]byte, connCapsSize), 4+connCapsSize)
	if err != nil {
		return step("HELLO", err)
	}
	fmt.Fprintf(out, "hello: server protocol %d.%d.%d\n", p[0], p[1], p[2])
	if p[0] != protoMajor {
		return step("HELLO", fmt.Errorf("protocol %d.%d.%d, want %d.x: %w", p[0], p[1], p[2], protoMajor, errReply))
	}
	if p, err = c.call(cmdDeviceCount, nil, 4); err != nil {
		return step("DEVICE_COUNT", err)
	}
	n := le.Uint32(p)
	fmt.Fprintf(out, "devices: %d\n", n)
	if device >= n {
		return step("DEVICE_COUNT", fmt.Errorf("device %d asked for, %d served: %w", device, n, errReply))
	}
	dev := le.AppendUint32(nil, device)
	if p, err = c.call(cmdGetDeviceMemory, dev, 16); err != nil {
		return step("GET_DEVICE_MEMORY", err)
	}
	free, total := le.Uint64(p), le.Uint64(p[8:])
	if p, err = c.call(cmdGetAlignment, dev, 8); err != nil {
		return step("GET_ALIGNMENT", err)
	}
	align := le.Uint64(p)
	if p, err = c.call(cmdGetMaxSize, dev, 8); err != nil {
		return step("GET_MAX_SIZE", err)
	}
	fmt.Fprintf(out, "device %d: %d MiB free of %d MiB, alignment %d, max buffer %d bytes\n", device, free>>20, total>>20, align, le.Uint64(p))

	if p, err = c.call(cmdAllocBuffer, le.AppendUint64(le.AppendUint32(nil, device), size), 16); err != nil {
		return step("ALLOC_BUFFER", err)
	}
	buf, got := le.Uint64(p), le.Uint64(p[8:])
	if buf == 0 || got < size {
		return step("ALLOC_BUFFER", fmt.Errorf("%d bytes asked, got buffer %#x of %d bytes: %w", size, buf, got, errReply))
	}
	if p, err = c.call(cmdBufferGetBase, le.AppendUint64(nil, buf), 8); err != nil {
		return step("BUFFER_GET_BASE", err)
	}
	base := le.Uint64(p)
	fmt.Fprintf(out, "alloc: buffer %#x, %d bytes at %#x\n", buf, got, base)
	if err := c.send(cmdBufferClear, append(le.AppendUint64(nil, buf), clearByte)); err != nil {
		return step("BUFFER_CLEAR", err)
	}
	t0 := time.Now()
	req := le.AppendUint64(le.AppendUint64(tensorI8(buf, base, size), 0), size)
	if p, err = c.call(cmdGetTensor, req, size); err != nil {
		return step("GET_TENSOR", err)
	}
	dt := time.Since(t0)
	for i, b := range p {
		if b != clearByte {
			return step("GET_TENSOR", fmt.Errorf("byte %d = %#x after BUFFER_CLEAR %#x: %w", i, b, clearByte, errReply))
		}
	}
	fmt.Fprintf(out, "clear + get_tensor: %d bytes of %#x read back in %v (%.2f GB/s)\n", size, clearByte, dt, float64(size)/dt.Seconds()/1e9)
	if err := c.send(cmdFreeBuffer, le.AppendUint64(nil, buf)); err != nil {
		return step("FREE_BUFFER", err)
	}
	// FREE_BUFFER has no reply: a DEVICE_COUNT after it shows the server
	// took it and is still serving.
	if _, err := c.call(cmdDeviceCount, nil, 4); err != nil {
		return step("FREE_BUFFER", err)
	}
	fmt.Fprintln(out, "free: ok")
	return nil
}

// parseSize reads a byte count with an optional K, M or G suffix (powers
// of 1024), at most 1 GiB.
func parseSize(s string) (uint64, error) {
	mult := uint64(1)
	if n := len(s); n > 0 {
		switch s[n-1] {
		case 'K', 'k':
			mult, s = 1<<10, s[:n-1]
		case 'M', 'm':
			mult, s = 1<<20, s[:n-1]
		case 'G', 'g':
			mult, s = 1<<30, s[:n-1]
		}
	}
	var v uint64
	if _, err := fmt.Sscanf(s, "%d", &v); err != nil || fmt.Sprint(v) != s || v == 0 || v > maxReply/mult {
		return 0, fmt.Errorf("size %q: want 1 byte to 1G", s)
	}
	return v * mult, nil
}

func main() {
	addr := flag.String("addr", "127.0.0.1:50052", "server address")
	device := flag.Uint("device", 0, "device index")
	sizeS := flag.String("size", "1M", "buffer size to allocate and read back (K, M, G suffixes)")
	timeout := flag.Duration("timeout", 20*time.Second, "limit for the whole round trip")
	flag.Parse()
	size, err := parseSize(*sizeS)
	if err != nil {
		fmt.Fprintln(os.Stderr, "rpcping:", err)
		os.Exit(2)
	}
	conn, err := net.DialTimeout("tcp", *addr, *timeout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "rpcping:", err)
		os.Exit(1)
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(*timeout)); err != nil {
		fmt.Fprintln(os.Stderr, "rpcping:", err)
		os.Exit(1)
	}
	if err := ping(conn, os.Stdout, uint32(*device), size); err != nil {
		fmt.Fprintln(os.Stderr, "rpcping: FAIL:", err)
		os.Exit(1)
	}
	fmt.Println("rpcping: OK")
}
