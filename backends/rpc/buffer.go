package rpc

import (
	"encoding/binary"
	"fmt"
	"math"
	"sync"

	"github.com/gogml/gogml/internal/rpcwire"
	"github.com/gogml/gogml/runtime"
)

// BufferType is the memory of one remote device.
type BufferType struct {
	c         *Client
	dev       uint32
	name      string
	alignment uint64
	maxSize   uint64

	mu        sync.Mutex
	allocSize map[allocKey]uint64
}

type allocKey struct {
	typ runtime.Type
	ne  [runtime.MaxDims]int64
}

var _ runtime.BufferType = (*BufferType)(nil)

// BufferType returns the buffer type of device dev, asking the server for
// its alignment and maximum buffer size.
func (c *Client) BufferType(dev int) (*BufferType, error) {
	if dev < 0 || dev >= int(c.devices) {
		return nil, fmt.Errorf("rpc %s: device %d of %d", c.endpoint, dev, c.devices)
	}
	al, err := c.deviceU64(rpcwire.CmdGetAlignment, uint32(dev))
	if err != nil {
		return nil, err
	}
	if !runtime.IsPow2(al) {
		return nil, c.failLocked(fmt.Errorf("device %d: alignment %d is not a power of two", dev, al))
	}
	ms, err := c.deviceU64(rpcwire.CmdGetMaxSize, uint32(dev))
	if err != nil {
		return nil, err
	}
	if ms == 0 {
		ms = runtime.NoMaxSize
	}
	return &BufferType{c: c, dev: uint32(dev), name: fmt.Sprintf("RPC%d[%s]", dev, c.endpoint),
		alignment: al, maxSize: ms, allocSize: map[allocKey]uint64{}}, nil
}

func (c *Client) failLocked(err error) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.fail(err)
}

// Name is "RPC<device>[host:port]".
func (bt *BufferType) Name() string { return bt.name }

// Alignment is the remote buffer type's alignment.
func (bt *BufferType) Alignment() uint64 { return bt.alignment }

// MaxSize is the remote buffer type's largest buffer.
func (bt *BufferType) MaxSize() uint64 { return bt.maxSize }

// IsHost is false: the bytes are on the server.
func (bt *BufferType) IsHost() bool { return false }

// AllocSize is t's size in the remote memory: ggml's size for unquantized
// types, the server's answer (which may add row padding) for quantized
// ones, asked once per type and shape. A failed request gives NBytes; the
// failure is reported by the client's next use.
func (bt *BufferType) AllocSize(t *runtime.Tensor) uint64 {
	if !t.Type.IsQuantized() {
		return t.NBytes()
	}
	k := allocKey{t.Type, t.Ne}
	bt.mu.Lock()
	if n, ok := bt.allocSize[k]; ok {
		bt.mu.Unlock()
		return n
	}
	bt.mu.Unlock()
	ser := newSerializer(bt.c)
	w, err := ser.wire(t, false)
	if err != nil {
		return t.NBytes()
	}
	w.Buffer, w.Data = 0, 0
	p := binary.LittleEndian.AppendUint32(nil, bt.dev)
	p = rpcwire.AppendTensor(p, &w)
	for range rpcwire.MaxSrc {
		p = rpcwire.AppendTensor(p, &rpcwire.Tensor{})
	}
	rsp, err := bt.c.call(rpcwire.CmdGetAllocSize, p, 8)
	if err != nil {
		return t.NBytes()
	}
	n := max(binary.LittleEndian.Uint64(rsp), t.NBytes())
	bt.mu.Lock()
	bt.allocSize[k] = n
	bt.mu.Unlock()
	return n
}

// AllocBuffer allocates a buffer on the device. A server that answers with
// no buffer is out of memory (runtime.ErrOutOfMemory).
func (bt *BufferType) AllocBuffer(size uint64) (runtime.Buffer, error) {
	p := binary.LittleEndian.AppendUint32(nil, bt.dev)
	p = binary.LittleEndian.AppendUint64(p, size)
	rsp, err := bt.c.call(rpcwire.CmdAllocBuffer, p, 16)
	if err != nil {
		return nil, err
	}
	h, got := binary.LittleEndian.Uint64(rsp), binary.LittleEndian.Uint64(rsp[8:])
	if h == 0 {
		return nil, fmt.Errorf("rpc %s: %s: %d bytes: %w", bt.c.endpoint, bt.name, size, runtime.ErrOutOfMemory)
	}
	rsp, err = bt.c.call(rpcwire.CmdBufferGetBase, binary.LittleEndian.AppendUint64(nil, h), 8)
	if err != nil {
		return nil, err
	}
	base := binary.LittleEndian.Uint64(rsp)
	if got < size || base > math.MaxUint64-got {
		bt.c.post(rpcwire.CmdFreeBuffer, binary.LittleEndian.AppendUint64(nil, h))
		return nil, bt.c.failLocked(fmt.Errorf("buffer of %d bytes at %#x for a request of %d", got, base, size))
	}
	return &Buffer{bt: bt, handle: h, base: base, size: got}, nil
}

// Buffer is one allocation on a remote device.
type Buffer struct {
	bt     *BufferType
	handle uint64
	base   uint64
	size   uint64

	mu    sync.Mutex
	usage runtime.BufferUsage
	freed bool
}

var _ runtime.Buffer = (*Buffer)(nil)

// Type returns the buffer's type.
func (b *Buffer) Type() runtime.BufferType { return b.bt }

// emptyBase stands for the base of an empty buffer, which ggml's server
// gives as 0 (gogml's buffers always have a non-zero base).
const emptyBase = 1 << 12

// Base is the server's address of byte 0 (an address in the server's
// space for this connection, used only to compute tensor addresses); an
// empty buffer that the server gave no address has a fixed stand-in.
func (b *Buffer) Base() uint64 {
	if b.base == 0 {
		return emptyBase
	}
	return b.base
}

// Size is the buffer's size as the server allocated it.
func (b *Buffer) Size() uint64 { return b.size }

// Usage returns the usage hint.
func (b *Buffer) Usage() runtime.BufferUsage {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.usage
}

// SetUsage records the usage hint (the protocol does not carry it).
func (b *Buffer) SetUsage(u runtime.BufferUsage) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.usage = u
}

func (b *Buffer) check(what string) error {
	b.mu.Lock()
	freed := b.freed
	b.mu.Unlock()
	if freed {
		return fmt.Errorf("rpc %s: %s on freed buffer: %w", b.bt.c.endpoint, what, runtime.ErrFreed)
	}
	return b.bt.c.Err()
}

// tensorRange checks [offset, offset+size) against t and t against the
// buffer, and returns t's wire form.
func (b *Buffer) tensorRange(t *runtime.Tensor, what string, offset, size uint64) (rpcwire.Tensor, error) {
	if err := b.check(what); err != nil {
		return rpcwire.Tensor{}, err
	}
	if _, err := runtime.CheckBufferRange(b, t, offset, size); err != nil {
		return rpcwire.Tensor{}, err
	}
	return newSerializer(b.bt.c).wire(t, false)
}

// InitTensor tells the server about a quantized tensor placed in the
// buffer (it may zero the row padding, as ggml's CUDA backend does).
func (b *Buffer) InitTensor(t *runtime.Tensor) error {
	if err := b.check("init tensor"); err != nil {
		return err
	}
	if t.ViewSrc != nil || !t.Type.IsQuantized() {
		return nil
	}
	w, err := newSerializer(b.bt.c).wire(t, false)
	if err != nil {
		return err
	}
	return b.bt.c.post(rpcwire.CmdInitTensor, rpcwire.AppendTensor(nil, &w))
}

// MemsetTensor fills size bytes of t from offset with value.
func (b *Buffer) MemsetTensor(t *runtime.Tensor, value byte, offset, size uint64) error {
	w, err := b.tensorRange(t, "memset", offset, size)
	if err != nil {
		return err
	}
	p := rpcwire.AppendTensor(nil, &w)
	p = binary.LittleEndian.AppendUint64(p, offset)
	p = binary.LittleEndian.AppendUint64(p, size)
	return b.bt.c.post(rpcwire.CmdMemsetTensor, append(p, value))
}

// SetTensor copies src into t's bytes from offset. Payloads of
// rpcwire.HashThreshold bytes or more first offer their hash, so a server
// with a cache (-c) that has the bytes already skips the transfer.
func (b *Buffer) SetTensor(t *runtime.Tensor, src []byte, offset uint64) error {
	w, err := b.tensorRange(t, "set", offset, uint64(len(src)))
	if err != nil {
		return err
	}
	c := b.bt.c
	if len(src) >= rpcwire.HashThreshold {
		p := rpcwire.AppendTensor(nil, &w)
		p = binary.LittleEndian.AppendUint64(p, offset)
		p = binary.LittleEndian.AppendUint64(p, fnv1a(src))
		rsp, err := c.call(rpcwire.CmdSetTensorHash, p, 1)
		if err != nil {
			return err
		}
		if rsp[0] == 1 {
			return nil
		}
	}
	p := rpcwire.AppendTensor(nil, &w)
	flag := byte(0)
	if len(src) >= rpcwire.HashThreshold {
		flag = 1 // worth caching on the server
	}
	p = append(p, flag)
	p = binary.LittleEndian.AppendUint64(p, offset)
	return c.post(rpcwire.CmdSetTensor, p, src)
}

// GetTensor copies t's bytes from offset into dst.
func (b *Buffer) GetTensor(t *runtime.Tensor, dst []byte, offset uint64) error {
	w, err := b.tensorRange(t, "get", offset, uint64(len(dst)))
	if err != nil {
		return err
	}
	p := rpcwire.AppendTensor(nil, &w)
	p = binary.LittleEndian.AppendUint64(p, offset)
	p = binary.LittleEndian.AppendUint64(p, uint64(len(dst)))
	c := b.bt.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.send(rpcwire.CmdGetTensor, p); err != nil {
		return err
	}
	_, err = c.recv(len(dst), dst)
	return err
}

// CopyTensor copies on the server when both tensors are in buffers of the
// same connection; otherwise it reports false.
func (b *Buffer) CopyTensor(src, dst *runtime.Tensor) (bool, error) {
	sb, ok1 := src.Buffer.(*Buffer)
	db, ok2 := dst.Buffer.(*Buffer)
	if !ok1 || !ok2 || sb.bt.c != b.bt.c || db.bt.c != b.bt.c {
		return false, nil
	}
	ws, err := sb.tensorRange(src, "copy", 0, src.NBytes())
	if err != nil {
		return false, err
	}
	wd, err := db.tensorRange(dst, "copy", 0, dst.NBytes())
	if err != nil {
		return false, err
	}
	p := rpcwire.AppendTensor(nil, &ws)
	p = rpcwire.AppendTensor(p, &wd)
	rsp, err := b.bt.c.call(rpcwire.CmdCopyTensor, p, 1)
	if err != nil {
		return false, err
	}
	return rsp[0] == 1, nil
}

// Clear fills the whole buffer with value.
func (b *Buffer) Clear(value byte) error {
	if err := b.check("clear"); err != nil {
		return err
	}
	p := binary.LittleEndian.AppendUint64(nil, b.handle)
	return b.bt.c.post(rpcwire.CmdBufferClear, append(p, value))
}

// Reset has nothing to drop: the buffer keeps no per-tensor data.
func (b *Buffer) Reset() {}

// Free releases the remote memory. Freeing twice is an error wrapping
// runtime.ErrFreed.
func (b *Buffer) Free() error {
	b.mu.Lock()
	if b.freed {
		b.mu.Unlock()
		return fmt.Errorf("rpc %s: buffer freed twice: %w", b.bt.c.endpoint, runtime.ErrFreed)
	}
	b.freed = true
	b.mu.Unlock()
	if b.bt.c.Err() != nil {
		return nil // the connection is gone, and the server freed it
	}
	return b.bt.c.post(rpcwire.CmdFreeBuffer, binary.LittleEndian.AppendUint64(nil, b.handle))
}

// fnv1a is the 64-bit FNV-1a hash SET_TENSOR_HASH names data by.
func fnv1a(p []byte) uint64 {
	h := uint64(0xcbf29ce484222325)
	for _, c := range p {
		h ^= uint64(c)
		h *= 0x100000001b3
	}
	return h
}
