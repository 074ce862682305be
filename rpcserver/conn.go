package rpcserver

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"

	"github.com/gogml/gogml/internal/rpcwire"
	"github.com/gogml/gogml/runtime"
)

// Address layout of a connection's virtual buffers: the first base, the
// alignment of every base, and the gap left after each buffer so that an
// address one past a buffer never falls into the next one.
const (
	firstBase = 1 << 32
	baseAlign = 1 << 16
	baseGap   = 1 << 20
	// maxBase keeps base+size far from overflow.
	maxBase = 1 << 62
	// chunk is the most bytes staged in memory for one transfer step.
	chunk = 4 << 20
)

// conn is one client connection and everything it owns.
type conn struct {
	s  *Server
	nc net.Conn
	r  *bufio.Reader
	w  *bufio.Writer

	buffers    map[uint64]*rbuf
	nextHandle uint64
	nextBase   uint64
	held       uint64
	// graphs are the stored graphs per device, by uid (see GraphCacheMax).
	graphs []map[uint64]*storedGraph
	// scratch is the reusable transfer buffer.
	scratch []byte
}

func newConn(s *Server, nc net.Conn) *conn {
	c := &conn{s: s, nc: nc, r: bufio.NewReaderSize(nc, 64<<10), w: bufio.NewWriterSize(nc, 64<<10),
		buffers: map[uint64]*rbuf{}, nextHandle: 1, nextBase: firstBase}
	c.graphs = make([]map[uint64]*storedGraph, len(s.devs))
	for i := range c.graphs {
		c.graphs[i] = map[uint64]*storedGraph{}
	}
	return c
}

// release frees every buffer the connection still holds.
func (c *conn) release() {
	for h, rb := range c.buffers {
		rb.dev.mu.Lock()
		if err := rb.buf.Free(); err != nil {
			c.s.logf("free buffer %#x: %v", h, err)
		}
		rb.dev.mu.Unlock()
		delete(c.buffers, h)
	}
	c.graphs = nil
}

func (c *conn) debugf(format string, args ...any) {
	if c.s.opts.Debug {
		c.s.logf(format, args...)
	}
}

// readFull reads exactly len(p) bytes; a short read is an error.
func (c *conn) readFull(p []byte) error {
	_, err := io.ReadFull(c.r, p)
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("short read: %w", err)
	}
	return err
}

// header reads a command's size field.
func (c *conn) header() (uint64, error) {
	var b [8]byte
	if err := c.readFull(b[:]); err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(b[:]), nil
}

// fixed reads the payload of a fixed-size command after checking its size.
func (c *conn) fixed(cmd rpcwire.Cmd, size uint64) ([]byte, error) {
	want, _ := rpcwire.RequestSize(cmd)
	if size != want {
		return nil, fmt.Errorf("request of %d bytes, want %d: %w", size, want, ErrMalformed)
	}
	p := make([]byte, size)
	if err := c.readFull(p); err != nil {
		return nil, err
	}
	return p, nil
}

// reply writes | size | payload | and flushes.
func (c *conn) reply(p []byte) error {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(len(p)))
	c.w.Write(b[:])
	c.w.Write(p)
	return c.w.Flush()
}

func (c *conn) device(i uint32) (*device, error) {
	if uint64(i) >= uint64(len(c.s.devs)) {
		return nil, fmt.Errorf("device %d of %d: %w", i, len(c.s.devs), ErrNoDevice)
	}
	return c.s.devs[i], nil
}

// serve runs the command loop: HELLO first, then any command until EOF or
// the first error.
func (c *conn) serve() error {
	var cb [1]byte
	if err := c.readFull(cb[:]); err != nil {
		return err
	}
	if rpcwire.Cmd(cb[0]) != rpcwire.CmdHello {
		return fmt.Errorf("first command %s, want HELLO: %w", rpcwire.Cmd(cb[0]), ErrMalformed)
	}
	size, err := c.header()
	if err != nil {
		return err
	}
	if _, err := c.fixed(rpcwire.CmdHello, size); err != nil {
		return fmt.Errorf("HELLO: %w", err)
	}
	// Transport caps all zero: plain TCP, whatever the client offers
	// (RDMA is not implemented).
	rsp := make([]byte, rpcwire.HelloRspSize)
	rsp[0], rsp[1], rsp[2] = rpcwire.ProtoMajor, rpcwire.ProtoMinor, rpcwire.ProtoPatch
	if err := c.reply(rsp); err != nil {
		return err
	}
	c.debugf("[hello] version: %d.%d.%d", rpcwire.ProtoMajor, rpcwire.ProtoMinor, rpcwire.ProtoPatch)
	for {
		if err := c.readFull(cb[:]); err != nil {
			return err
		}
		cmd := rpcwire.Cmd(cb[0])
		if cmd == rpcwire.CmdHello {
			return fmt.Errorf("HELLO after the handshake: %w", ErrMalformed)
		}
		ext := cmd == rpcwire.CmdGogmlSupportsOp && c.s.opts.SupportsOpQuery
		if !ext && (cmd >= rpcwire.CmdCount || cmd == rpcwire.CmdNone) {
			return fmt.Errorf("unknown command %d: %w", cb[0], ErrMalformed)
		}
		size, err := c.header()
		if err != nil {
			return err
		}
		if ext {
			if err := c.supportsOpQuery(size); err != nil {
				return fmt.Errorf("%s: %w", cmd, err)
			}
			continue
		}
		if err := c.dispatch(cmd, size); err != nil {
			return fmt.Errorf("%s: %w", cmd, err)
		}
	}
}

func (c *conn) dispatch(cmd rpcwire.Cmd, size uint64) error {
	switch cmd {
	case rpcwire.CmdSetTensor:
		return c.setTensor(size)
	case rpcwire.CmdSetTensor2D:
		return c.setTensor2D(size)
	case rpcwire.CmdGraphCompute:
		p, err := c.graphPayload(size)
		if err != nil {
			return err
		}
		return c.graphCompute(p)
	}
	p, err := c.fixed(cmd, size)
	if err != nil {
		return err
	}
	r := rpcwire.NewReader(p)
	switch cmd {
	case rpcwire.CmdDeviceCount:
		return c.reply(binary.LittleEndian.AppendUint32(nil, uint32(len(c.s.devs))))
	case rpcwire.CmdAllocBuffer:
		return c.allocBuffer(r.U32(), r.U64())
	case rpcwire.CmdGetAlignment, rpcwire.CmdGetMaxSize, rpcwire.CmdGetDeviceMemory:
		d, err := c.device(r.U32())
		if err != nil {
			return err
		}
		switch cmd {
		case rpcwire.CmdGetAlignment:
			return c.reply(binary.LittleEndian.AppendUint64(nil, d.bt.Alignment()))
		case rpcwire.CmdGetMaxSize:
			return c.reply(binary.LittleEndian.AppendUint64(nil, d.bt.MaxSize()))
		}
		d.mu.Lock()
		info := d.backend.Device()
		d.mu.Unlock()
		out := binary.LittleEndian.AppendUint64(nil, info.FreeMemory)
		return c.reply(binary.LittleEndian.AppendUint64(out, info.TotalMemory))
	case rpcwire.CmdBufferGetBase:
		rb, err := c.buffer(r.U64())
		if err != nil {
			return err
		}
		return c.reply(binary.LittleEndian.AppendUint64(nil, rb.base))
	case rpcwire.CmdFreeBuffer:
		return c.freeBuffer(r.U64())
	case rpcwire.CmdBufferClear:
		rb, err := c.buffer(r.U64())
		if err != nil {
			return err
		}
		v := r.U8()
		rb.dev.mu.Lock()
		defer rb.dev.mu.Unlock()
		return rb.buf.Clear(v)
	case rpcwire.CmdMemsetTensor:
		w, off, n, v := r.Tensor(), r.U64(), r.U64(), r.U8()
		return c.memsetTensor(&w, off, n, v)
	case rpcwire.CmdSetTensorHash:
		w, off, hash := r.Tensor(), r.U64(), r.U64()
		return c.setTensorHash(&w, off, hash)
	case rpcwire.CmdGetTensor:
		w, off, n := r.Tensor(), r.U64(), r.U64()
		return c.getTensor(&w, off, n, 1, 0, false)
	case rpcwire.CmdGetTensor2D:
		w, off, n, copies, stride := r.Tensor(), r.U64(), r.U64(), r.U64(), r.U64()
		return c.getTensor(&w, off, n, copies, stride, true)
	case rpcwire.CmdCopyTensor:
		src, dst := r.Tensor(), r.Tensor()
		return c.copyTensor(&src, &dst)
	case rpcwire.CmdInitTensor:
		w := r.Tensor()
		return c.initTensor(&w)
	case rpcwire.CmdGetAllocSize:
		return c.getAllocSize(r)
	case rpcwire.CmdGraphRecompute:
		return c.graphRecompute(r.U32(), r.U64())
	case rpcwire.CmdCommInit:
		// Server-to-server allreduce is not implemented: answer "not
		// joined", which clients handle by not using it.
		c.debugf("[comm_init] not supported")
		return c.reply([]byte{0})
	case rpcwire.CmdCommAllreduce:
		return fmt.Errorf("no communicator (COMM_INIT is not supported): %w", runtime.ErrUnsupported)
	case rpcwire.CmdCommFree:
		_, err := c.device(r.U32())
		return err
	}
	return fmt.Errorf("command %d: %w", cmd, ErrMalformed)
}

// graphPayload reads a GRAPH_COMPUTE-shaped payload of size bytes, capped
// by Options.MaxGraphBytes before it is allocated.
func (c *conn) graphPayload(size uint64) ([]byte, error) {
	if size < rpcwire.GraphComputeHeaderSize || size > c.s.opts.MaxGraphBytes {
		return nil, fmt.Errorf("graph of %d bytes (limit %d): %w", size, c.s.opts.MaxGraphBytes, ErrMalformed)
	}
	p := make([]byte, size)
	if err := c.readFull(p); err != nil {
		return nil, err
	}
	return p, nil
}

func (c *conn) buffer(h uint64) (*rbuf, error) {
	rb := c.buffers[h]
	if rb == nil {
		return nil, fmt.Errorf("buffer %#x: %w", h, ErrNoBuffer)
	}
	return rb, nil
}

func (c *conn) allocBuffer(dev uint32, size uint64) error {
	d, err := c.device(dev)
	if err != nil {
		return err
	}
	fail := func(why error) error {
		c.s.logf("[alloc_buffer] device %d, %d bytes: %v", dev, size, why)
		return c.reply(make([]byte, 16))
	}
	if max := c.s.opts.MaxConnBytes; max > 0 && (size > max || c.held > max-size) {
		return fail(fmt.Errorf("connection would hold more than %d bytes: %w", max, runtime.ErrOutOfMemory))
	}
	if size > maxBase {
		return fail(runtime.ErrOutOfMemory)
	}
	d.mu.Lock()
	buf, err := d.bt.AllocBuffer(size)
	d.mu.Unlock()
	if err != nil {
		return fail(err)
	}
	align := max(d.bt.Alignment(), baseAlign)
	base := runtime.AlignUp(c.nextBase, align)
	bsize := buf.Size()
	if base > maxBase || bsize > maxBase {
		d.mu.Lock()
		buf.Free()
		d.mu.Unlock()
		return fail(errors.New("connection's address range exhausted"))
	}
	rb := &rbuf{handle: c.nextHandle, base: base, size: bsize, dev: d, buf: buf}
	c.nextHandle++
	c.nextBase = base + runtime.AlignUp(bsize, baseAlign) + baseGap
	c.buffers[rb.handle] = rb
	c.held += bsize
	c.debugf("[alloc_buffer] device: %d, size: %d -> remote_ptr: %#x, base: %#x, remote_size: %d", dev, size, rb.handle, base, bsize)
	out := binary.LittleEndian.AppendUint64(nil, rb.handle)
	return c.reply(binary.LittleEndian.AppendUint64(out, bsize))
}

func (c *conn) freeBuffer(h uint64) error {
	rb, err := c.buffer(h)
	if err != nil {
		return err
	}
	// Stored graphs may point into the buffer: forget them (their uids
	// stay counted, as in ggml, so both ends evict at the same point).
	for _, m := range c.graphs {
		for uid := range m {
			m[uid] = nil
		}
	}
	delete(c.buffers, h)
	c.held -= rb.size
	rb.dev.mu.Lock()
	defer rb.dev.mu.Unlock()
	return rb.buf.Free()
}

func (c *conn) memsetTensor(w *rpcwire.Tensor, off, n uint64, v byte) error {
	wt, err := c.dataTensor(w)
	if err != nil {
		return err
	}
	pos, err := wt.region(off, n)
	if err != nil || n == 0 {
		return err
	}
	wt.rb.dev.mu.Lock()
	defer wt.rb.dev.mu.Unlock()
	bt := byteTensor(wt.rb, pos, n)
	return wt.rb.buf.MemsetTensor(bt, v, 0, n)
}

// setTensor streams | tensor | cache flag | offset | data | into the
// buffer in chunks, so a large upload is never staged whole.
func (c *conn) setTensor(size uint64) error {
	if size < rpcwire.SetTensorHeaderSize {
		return fmt.Errorf("%d bytes: %w", size, ErrMalformed)
	}
	hdr := make([]byte, rpcwire.SetTensorHeaderSize)
	if err := c.readFull(hdr); err != nil {
		return err
	}
	r := rpcwire.NewReader(hdr)
	w, flag, off := r.Tensor(), r.U8(), r.U64()
	n := size - rpcwire.SetTensorHeaderSize
	wt, err := c.dataTensor(&w)
	if err != nil {
		return err
	}
	pos, err := wt.region(off, n)
	if err != nil {
		return err
	}
	c.debugf("[set_tensor] buffer: %#x, data: %#x, offset: %d, size: %d", wt.rb.handle, wt.data, off, n)
	var cache *cacheWriter
	if flag != 0 && c.s.opts.CacheDir != "" {
		cache = newCacheWriter(c.s.opts.CacheDir)
	}
	err = c.stream(wt.rb, pos, n, cache)
	if cache != nil {
		if cerr := cache.finish(err == nil); cerr != nil {
			c.s.logf("[set_tensor] cache: %v", cerr)
		} else if err == nil {
			c.s.logf("[set_tensor] saved to '%s'", cache.path)
		}
	}
	return err
}

// stream copies n bytes from the connection into rb at pos.
func (c *conn) stream(rb *rbuf, pos, n uint64, cache *cacheWriter) error {
	if c.scratch == nil {
		c.scratch = make([]byte, chunk)
	}
	for n > 0 {
		k := min(n, chunk)
		p := c.scratch[:k]
		if err := c.readFull(p); err != nil {
			return err
		}
		if cache != nil {
			cache.write(p)
		}
		rb.dev.mu.Lock()
		err := rb.buf.SetTensor(byteTensor(rb, pos, k), p, 0)
		rb.dev.mu.Unlock()
		if err != nil {
			return err
		}
		pos += k
		n -= k
	}
	return nil
}

// span2D checks a 2-D region (n_copies rows of size bytes, stride apart)
// and returns the span (n_copies-1)*stride + size.
func span2D(size, copies, stride uint64) (uint64, error) {
	if copies == 0 || size == 0 {
		return 0, fmt.Errorf("2d region of %d x %d bytes: %w", copies, size, ErrMalformed)
	}
	hi, lo := mul64(copies-1, stride)
	span := lo + size
	if hi != 0 || span < lo {
		return 0, fmt.Errorf("2d region of %d x %d bytes, stride %d, overflows: %w", copies, size, stride, ErrMalformed)
	}
	if hi, tot := mul64(copies, size); hi != 0 || tot > 1<<62 {
		return 0, fmt.Errorf("2d region of %d x %d bytes: %w", copies, size, ErrMalformed)
	}
	return span, nil
}

func (c *conn) setTensor2D(size uint64) error {
	if size < rpcwire.SetTensor2DHeaderSize {
		return fmt.Errorf("%d bytes: %w", size, ErrMalformed)
	}
	hdr := make([]byte, rpcwire.SetTensor2DHeaderSize)
	if err := c.readFull(hdr); err != nil {
		return err
	}
	r := rpcwire.NewReader(hdr)
	w, off, n, copies, stride := r.Tensor(), r.U64(), r.U64(), r.U64(), r.U64()
	span, err := span2D(n, copies, stride)
	if err != nil {
		return err
	}
	if copies*n != size-rpcwire.SetTensor2DHeaderSize {
		return fmt.Errorf("%d data bytes for %d x %d: %w", size-rpcwire.SetTensor2DHeaderSize, copies, n, ErrMalformed)
	}
	wt, err := c.dataTensor(&w)
	if err != nil {
		return err
	}
	pos, err := wt.region(off, span)
	if err != nil {
		return err
	}
	if copies*n > wt.nbytes {
		return fmt.Errorf("tensor %q: %d rows of %d bytes exceed its %d bytes: %w", wt.t.Name, copies, n, wt.nbytes, ErrBadTensor)
	}
	for i := range copies {
		if err := c.stream(wt.rb, pos+i*stride, n, nil); err != nil {
			return err
		}
	}
	return nil
}

// getTensor replies with copies rows of n bytes, stride apart, from the
// tensor's bytes at off (GET_TENSOR is one row).
func (c *conn) getTensor(w *rpcwire.Tensor, off, n, copies, stride uint64, twoD bool) error {
	wt, err := c.dataTensor(w)
	if err != nil {
		return err
	}
	span := n
	if twoD {
		if span, err = span2D(n, copies, stride); err != nil {
			return err
		}
	}
	pos, err := wt.region(off, span)
	if err != nil {
		return err
	}
	if twoD && copies*n > wt.nbytes {
		return fmt.Errorf("tensor %q: %d rows of %d bytes exceed its %d bytes: %w", wt.t.Name, copies, n, wt.nbytes, ErrBadTensor)
	}
	c.debugf("[get_tensor] buffer: %#x, data: %#x, offset: %d, size: %d x %d", wt.rb.handle, wt.data, off, copies, n)
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], copies*n)
	c.w.Write(b[:])
	if c.scratch == nil {
		c.scratch = make([]byte, chunk)
	}
	for i := range copies {
		p0, left := pos+i*stride, n
		for left > 0 {
			k := min(left, chunk)
			p := c.scratch[:k]
			wt.rb.dev.mu.Lock()
			err := wt.rb.buf.GetTensor(byteTensor(wt.rb, p0, k), p, 0)
			wt.rb.dev.mu.Unlock()
			if err != nil {
				return err
			}
			if _, err := c.w.Write(p); err != nil {
				return err
			}
			p0 += k
			left -= k
		}
	}
	return c.w.Flush()
}

func (c *conn) copyTensor(ws, wd *rpcwire.Tensor) error {
	src, err := c.dataTensor(ws)
	if err != nil {
		return err
	}
	dst, err := c.dataTensor(wd)
	if err != nil {
		return err
	}
	n := src.nbytes
	if dst.data > dst.rb.end() || n > dst.rb.end()-dst.data {
		return fmt.Errorf("copy %q (%d bytes) into %q at %#x: outside buffer [%#x, %#x): %w",
			src.t.Name, n, dst.t.Name, dst.data, dst.rb.base, dst.rb.end(), ErrBadTensor)
	}
	c.debugf("[copy_tensor] src: %#x, dst: %#x, %d bytes", src.data, dst.data, n)
	if n > 0 {
		if err := c.copyBytes(src.rb, src.data-src.rb.base, dst.rb, dst.data-dst.rb.base, n); err != nil {
			return err
		}
	}
	return c.reply([]byte{1})
}

// copyBytes copies n bytes between buffers: on the device when a buffer
// can, else through host memory in chunks.
func (c *conn) copyBytes(sb *rbuf, so uint64, db *rbuf, do, n uint64) error {
	unlock := lockPair(sb.dev, db.dev)
	defer unlock()
	st, dt := byteTensor(sb, so, n), byteTensor(db, do, n)
	if ok, err := db.buf.CopyTensor(st, dt); err != nil || ok {
		return err
	}
	if ok, err := sb.buf.CopyTensor(st, dt); err != nil || ok {
		return err
	}
	if c.scratch == nil {
		c.scratch = make([]byte, chunk)
	}
	for done := uint64(0); done < n; {
		k := min(n-done, chunk)
		p := c.scratch[:k]
		if err := sb.buf.GetTensor(byteTensor(sb, so+done, k), p, 0); err != nil {
			return err
		}
		if err := db.buf.SetTensor(byteTensor(db, do+done, k), p, 0); err != nil {
			return err
		}
		done += k
	}
	return nil
}

// lockPair locks one or two devices in index order.
func lockPair(a, b *device) func() {
	if a == b {
		a.mu.Lock()
		return a.mu.Unlock
	}
	if a.index > b.index {
		a, b = b, a
	}
	a.mu.Lock()
	b.mu.Lock()
	return func() { b.mu.Unlock(); a.mu.Unlock() }
}

func (c *conn) initTensor(w *rpcwire.Tensor) error {
	wt, err := c.decodeTensor(w, decodeOptions{})
	if err != nil {
		return err
	}
	if wt.rb == nil {
		c.s.logf("[init_tensor] tensor %q has no buffer", wt.t.Name)
		return nil
	}
	if wt.empty {
		return nil
	}
	// The buffer checks the tensor's range itself; a backend that pads
	// (CUDA, quantized rows) writes padding only where it fits.
	wt.rb.dev.mu.Lock()
	defer wt.rb.dev.mu.Unlock()
	return wt.rb.buf.InitTensor(wt.t)
}

func (c *conn) getAllocSize(r *rpcwire.Reader) error {
	d, err := c.device(r.U32())
	if err != nil {
		return err
	}
	w := r.Tensor()
	wt, err := c.decodeTensor(&w, decodeOptions{lenientBuffer: true})
	if err != nil {
		return err
	}
	for i := range rpcwire.MaxSrc {
		ws := r.Tensor()
		if ws.ID == 0 {
			continue
		}
		st, err := c.decodeTensor(&ws, decodeOptions{lenientBuffer: true})
		if err != nil {
			return fmt.Errorf("source %d: %w", i, err)
		}
		wt.t.Src[i] = st.t
	}
	bt := d.bt
	if wt.rb != nil {
		bt = wt.rb.buf.Type()
	}
	var size uint64
	if !wt.empty {
		size = bt.AllocSize(wt.t)
	}
	c.debugf("[get_alloc_size] device: %d, %q -> %d", d.index, wt.t.Name, size)
	return c.reply(binary.LittleEndian.AppendUint64(nil, size))
}

// setTensorHash loads the cached file named by hash, if any, into the
// tensor's bytes at off and answers 1; 0 when there is no such file.
func (c *conn) setTensorHash(w *rpcwire.Tensor, off, hash uint64) error {
	dir := c.s.opts.CacheDir
	if dir == "" {
		return c.reply([]byte{0})
	}
	path := filepath.Join(dir, fmt.Sprintf("%016x", hash))
	f, err := os.Open(path)
	if err != nil {
		return c.reply([]byte{0})
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return c.reply([]byte{0})
	}
	wt, err := c.dataTensor(w)
	if err != nil {
		return err
	}
	n := uint64(fi.Size())
	pos, err := wt.region(off, n)
	if err != nil {
		return err
	}
	if c.scratch == nil {
		c.scratch = make([]byte, chunk)
	}
	for done := uint64(0); done < n; {
		k := min(n-done, chunk)
		p := c.scratch[:k]
		if _, err := io.ReadFull(f, p); err != nil {
			return fmt.Errorf("cache file %s: %w", path, err)
		}
		wt.rb.dev.mu.Lock()
		err := wt.rb.buf.SetTensor(byteTensor(wt.rb, pos+done, k), p, 0)
		wt.rb.dev.mu.Unlock()
		if err != nil {
			return err
		}
		done += k
	}
	c.debugf("[set_tensor_hash] %016x: %d bytes from cache", hash, n)
	return c.reply([]byte{1})
}
