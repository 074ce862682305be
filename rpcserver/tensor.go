package rpcserver

import (
	"errors"
	"fmt"
	"math"
	"math/bits"

	"github.com/gogml/gogml/internal/rpcwire"
	"github.com/gogml/gogml/runtime"
)

// Errors that close a connection; the message names what and where.
var (
	// ErrMalformed: a message that breaks the protocol's layout or sizes.
	ErrMalformed = errors.New("malformed message")
	// ErrBadTensor: a tensor with an invalid type, op, shape or stride, or
	// a byte range outside its buffer or view source.
	ErrBadTensor = errors.New("bad tensor")
	// ErrNoBuffer: a buffer handle this connection does not own.
	ErrNoBuffer = errors.New("unknown buffer")
	// ErrNoDevice: a device index beyond the served devices.
	ErrNoDevice = errors.New("unknown device")
)

// rbuf is a buffer a connection allocated: the real gogml buffer and the
// virtual address range the client sees.
type rbuf struct {
	handle uint64
	base   uint64
	size   uint64
	dev    *device
	buf    runtime.Buffer
}

// end is one past the last virtual address of the buffer.
func (b *rbuf) end() uint64 { return b.base + b.size }

// wtensor is a decoded wire tensor: the runtime tensor, its buffer (nil if
// none) and its byte span.
type wtensor struct {
	t      *runtime.Tensor
	rb     *rbuf
	data   uint64 // virtual address (0 without buffer)
	nbytes uint64 // ggml_nbytes; 0 for a tensor with no elements
	empty  bool   // some ne is 0
}

// spanBytes returns ggml_nbytes of a tensor (0 when an ne is 0) with every
// product checked for overflow; the result is at most MaxInt64.
func spanBytes(ty runtime.Type, ne [4]int64, nb [4]uint64) (uint64, error) {
	for _, n := range ne {
		if n == 0 {
			return 0, nil
		}
	}
	bs := ty.BlockSize()
	if ne[0]%bs != 0 {
		return 0, fmt.Errorf("ne[0] = %d is not a multiple of %s's block size %d: %w", ne[0], ty, bs, ErrBadTensor)
	}
	var span uint64
	if bs == 1 {
		span = ty.Size()
		hi, lo := bits.Mul64(uint64(ne[0]-1), nb[0])
		if hi != 0 {
			return 0, fmt.Errorf("ne[0]*nb[0] overflows: %w", ErrBadTensor)
		}
		span += lo
	} else {
		hi, lo := bits.Mul64(uint64(ne[0]), nb[0])
		if hi != 0 {
			return 0, fmt.Errorf("ne[0]*nb[0] overflows: %w", ErrBadTensor)
		}
		span = lo / uint64(bs)
	}
	for i := 1; i < 4; i++ {
		hi, lo := bits.Mul64(uint64(ne[i]-1), nb[i])
		var c uint64
		span, c = bits.Add64(span, lo, 0)
		if hi != 0 || c != 0 {
			return 0, fmt.Errorf("byte span overflows in dimension %d: %w", i, ErrBadTensor)
		}
	}
	if span > math.MaxInt64 {
		return 0, fmt.Errorf("byte span %d: %w", span, ErrBadTensor)
	}
	return span, nil
}

// decodeOptions say how strictly a tensor is decoded.
type decodeOptions struct {
	// lenientBuffer treats an unknown buffer handle as "no buffer" (as
	// ggml does for GET_ALLOC_SIZE, whose sources may live on another
	// server) instead of failing.
	lenientBuffer bool
}

// decodeTensor validates a wire tensor and turns it into a runtime tensor
// placed in its buffer. Sources and views are not linked here.
func (c *conn) decodeTensor(w *rpcwire.Tensor, o decodeOptions) (*wtensor, error) {
	name := w.NameString()
	ty, ok := c.s.tab.Type(w.Type)
	if !ok {
		return nil, fmt.Errorf("tensor %q: type %d is not a ggml 0.27.0 type: %w", name, w.Type, ErrBadTensor)
	}
	op, ok := c.s.tab.Op(w.Op)
	if !ok {
		return nil, fmt.Errorf("tensor %q: op %d is not a ggml 0.27.0 op: %w", name, w.Op, ErrBadTensor)
	}
	t := &runtime.Tensor{Name: name, Type: ty, Op: op, OpParams: w.OpParams, Flags: runtime.TensorFlag(w.Flags)}
	empty := false
	for i := range 4 {
		t.Ne[i] = int64(w.Ne[i])
		t.Nb[i] = uint64(w.Nb[i])
		if w.Ne[i] == 0 {
			empty = true
		}
	}
	switch op {
	case runtime.OpUnary:
		u, ok := c.s.tab.Unary(w.OpParams[0])
		if !ok {
			return nil, fmt.Errorf("tensor %q: unary function %d is not a ggml 0.27.0 one: %w", name, w.OpParams[0], ErrBadTensor)
		}
		t.OpParams[0] = int32(u)
	case runtime.OpGlu:
		g, ok := c.s.tab.Glu(w.OpParams[0])
		if !ok {
			return nil, fmt.Errorf("tensor %q: GLU function %d is not a ggml 0.27.0 one: %w", name, w.OpParams[0], ErrBadTensor)
		}
		t.OpParams[0] = int32(g)
	}
	nbytes, err := spanBytes(ty, t.Ne, t.Nb)
	if err != nil {
		return nil, fmt.Errorf("tensor %q (%s %v): %w", name, ty, t.Ne, err)
	}
	wt := &wtensor{t: t, nbytes: nbytes, empty: empty}
	if w.Buffer == 0 {
		if w.Data != 0 && !o.lenientBuffer {
			return nil, fmt.Errorf("tensor %q: data %#x without a buffer: %w", name, w.Data, ErrBadTensor)
		}
		return wt, nil
	}
	rb := c.buffers[w.Buffer]
	if rb == nil {
		if o.lenientBuffer {
			return wt, nil
		}
		return nil, fmt.Errorf("tensor %q: buffer %#x: %w", name, w.Buffer, ErrNoBuffer)
	}
	// data and data+nbytes must lie in [base, end] (ggml lets a tensor
	// without elements sit anywhere in its buffer).
	if w.Data < rb.base || w.Data > rb.end() || nbytes > rb.end()-w.Data {
		return nil, fmt.Errorf("tensor %q: bytes [%#x, +%d) outside buffer %#x [%#x, %#x): %w",
			name, w.Data, nbytes, rb.handle, rb.base, rb.end(), ErrBadTensor)
	}
	wt.rb, wt.data = rb, w.Data
	t.Buffer, t.Offset = rb.buf, w.Data-rb.base
	return wt, nil
}

// dataTensor decodes a tensor that must have a buffer.
func (c *conn) dataTensor(w *rpcwire.Tensor) (*wtensor, error) {
	wt, err := c.decodeTensor(w, decodeOptions{})
	if err != nil {
		return nil, err
	}
	if wt.rb == nil {
		return nil, fmt.Errorf("tensor %q has no buffer: %w", wt.t.Name, ErrBadTensor)
	}
	return wt, nil
}

// region checks that [data+offset, data+offset+size) lies in the tensor's
// buffer, with data+offset strictly inside it as ggml requires, and in the
// tensor's own bytes; it returns the offset in the buffer.
func (wt *wtensor) region(offset, size uint64) (uint64, error) {
	rb := wt.rb
	start := wt.data + offset
	if start < wt.data || start >= rb.end() || size > rb.end()-start {
		return 0, fmt.Errorf("tensor %q: region [+%d, +%d) outside buffer [%#x, %#x): %w",
			wt.t.Name, offset, size, rb.base, rb.end(), ErrBadTensor)
	}
	if offset > wt.nbytes || size > wt.nbytes-offset {
		return 0, fmt.Errorf("tensor %q: region [+%d, +%d) outside its %d bytes: %w",
			wt.t.Name, offset, size, wt.nbytes, ErrBadTensor)
	}
	return start - rb.base, nil
}

// byteTensor is an I8 tensor over n bytes of rb at off, so that raw byte
// ranges go through the buffer's own range-checked Set/Get/Memset/Copy.
func byteTensor(rb *rbuf, off, n uint64) *runtime.Tensor {
	return &runtime.Tensor{
		Name: "rpc-bytes", Type: runtime.TypeI8,
		Ne: [4]int64{int64(n), 1, 1, 1}, Nb: [4]uint64{1, n, n, n},
		Buffer: rb.buf, Offset: off,
	}
}
