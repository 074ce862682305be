// Package rpcwire is ggml's RPC protocol 8.0.0 as ggml 0.27.0 speaks it:
// command numbers, the little-endian message layouts, the serialized
// tensor, and the pinned table of ggml 0.27.0's op and type numbers.
//
// A request is | cmd (1 byte) | size (u64) | payload (size bytes) |; a
// reply, for the commands that have one, is | size (u64) | payload |. All
// integers are little-endian and structures are packed. Decoders never
// trust a size: every length is checked against the bytes present and
// against caps before anything is allocated.
package rpcwire

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Protocol version spoken (ggml-rpc.h of ggml 0.27.0).
const (
	ProtoMajor = 8
	ProtoMinor = 0
	ProtoPatch = 0
)

// Sizes and limits of the protocol.
const (
	// ConnCapsSize is the size of the transport capability block of HELLO.
	ConnCapsSize = 24
	// TensorSize is the size of a serialized tensor (rpc_tensor).
	TensorSize = 296
	// MaxDims, MaxSrc, MaxOpParams and MaxName are ggml's tensor limits.
	MaxDims     = 4
	MaxSrc      = 10
	MaxOpParams = 64
	MaxName     = 64
	// GraphCacheMax is the number of graphs per device both ends remember
	// for GRAPH_RECOMPUTE; both clear their cache when it is reached.
	GraphCacheMax = 1024
	// HashThreshold is the payload size above which clients try
	// SET_TENSOR_HASH first.
	HashThreshold = 10 << 20
	// HeaderSize is the size of a request header (command + size).
	HeaderSize = 9
)

// Cmd is an RPC command number.
type Cmd uint8

// The commands of protocol 8.0.0.
const (
	CmdAllocBuffer Cmd = iota
	CmdGetAlignment
	CmdGetMaxSize
	CmdBufferGetBase
	CmdFreeBuffer
	CmdBufferClear
	CmdSetTensor
	CmdSetTensorHash
	CmdGetTensor
	CmdCopyTensor
	CmdGraphCompute
	CmdGetDeviceMemory
	CmdInitTensor
	CmdGetAllocSize
	CmdHello
	CmdDeviceCount
	CmdGraphRecompute
	CmdMemsetTensor
	CmdSetTensor2D
	CmdGetTensor2D
	CmdCommInit
	CmdCommAllreduce
	CmdCommFree
	CmdNone
	// CmdCount is one past the last command.
	CmdCount
)

var cmdNames = [CmdCount]string{
	"ALLOC_BUFFER", "GET_ALIGNMENT", "GET_MAX_SIZE", "BUFFER_GET_BASE", "FREE_BUFFER", "BUFFER_CLEAR",
	"SET_TENSOR", "SET_TENSOR_HASH", "GET_TENSOR", "COPY_TENSOR", "GRAPH_COMPUTE", "GET_DEVICE_MEMORY",
	"INIT_TENSOR", "GET_ALLOC_SIZE", "HELLO", "DEVICE_COUNT", "GRAPH_RECOMPUTE", "MEMSET_TENSOR",
	"SET_TENSOR_2D", "GET_TENSOR_2D", "COMM_INIT", "COMM_ALLREDUCE", "COMM_FREE", "NONE",
}

// CmdGogmlSupportsOp is gogml's extension of the protocol, outside ggml's
// command numbers: "can device D run this op?", which protocol 8.0.0 cannot
// ask (ggml's RPC client claims every op). Its request is a GRAPH_COMPUTE
// payload whose one node is the op, with its sources and view sources and
// no buffers; the answer is one byte, 1 (supported) or 0. A gogml server
// answers it only when enabled (rpcserver.Options.SupportsOpQuery); ggml's
// own server closes the connection on it. scripts/ggml-peer/preload.c asks
// it for test-backend-ops, so that cases gogml declines read "not
// supported", as they do for ggml's local backends.
const CmdGogmlSupportsOp Cmd = 0xF0

// String returns the protocol's name of the command.
func (c Cmd) String() string {
	if c < CmdCount {
		return cmdNames[c]
	}
	if c == CmdGogmlSupportsOp {
		return "GOGML_SUPPORTS_OP"
	}
	return fmt.Sprintf("cmd(%d)", uint8(c))
}

// Variable reports whether the command's request has a variable size
// (SET_TENSOR, SET_TENSOR_2D, GRAPH_COMPUTE); the others have the exact
// size RequestSize gives.
func (c Cmd) Variable() bool {
	return c == CmdSetTensor || c == CmdSetTensor2D || c == CmdGraphCompute
}

// Fixed request sizes.
const (
	HelloReqSize           = ConnCapsSize
	HelloRspSize           = 4 + ConnCapsSize
	AllocBufferReqSize     = 4 + 8
	DeviceReqSize          = 4 // GET_ALIGNMENT, GET_MAX_SIZE, GET_DEVICE_MEMORY, COMM_FREE
	BufferReqSize          = 8 // BUFFER_GET_BASE, FREE_BUFFER
	BufferClearReqSize     = 8 + 1
	MemsetTensorReqSize    = TensorSize + 8 + 8 + 1
	SetTensorHashReqSize   = TensorSize + 8 + 8
	GetTensorReqSize       = TensorSize + 8 + 8
	CopyTensorReqSize      = 2 * TensorSize
	InitTensorReqSize      = TensorSize
	GetAllocSizeReqSize    = 4 + (1+MaxSrc)*TensorSize
	GraphRecomputeReqSize  = 4 + 8
	GetTensor2DReqSize     = TensorSize + 4*8
	CommInitReqSize        = 4*4 + 64
	CommAllreduceReqSize   = 4 + TensorSize
	SetTensorHeaderSize    = TensorSize + 1 + 8
	SetTensor2DHeaderSize  = TensorSize + 4*8
	GraphComputeHeaderSize = 4 + 8 + 4
)

// RequestSize returns the exact request size of a fixed-size command.
func RequestSize(c Cmd) (uint64, bool) {
	switch c {
	case CmdHello:
		return HelloReqSize, true
	case CmdDeviceCount:
		return 0, true
	case CmdAllocBuffer:
		return AllocBufferReqSize, true
	case CmdGetAlignment, CmdGetMaxSize, CmdGetDeviceMemory, CmdCommFree:
		return DeviceReqSize, true
	case CmdBufferGetBase, CmdFreeBuffer:
		return BufferReqSize, true
	case CmdBufferClear:
		return BufferClearReqSize, true
	case CmdMemsetTensor:
		return MemsetTensorReqSize, true
	case CmdSetTensorHash:
		return SetTensorHashReqSize, true
	case CmdGetTensor:
		return GetTensorReqSize, true
	case CmdCopyTensor:
		return CopyTensorReqSize, true
	case CmdInitTensor:
		return InitTensorReqSize, true
	case CmdGetAllocSize:
		return GetAllocSizeReqSize, true
	case CmdGraphRecompute:
		return GraphRecomputeReqSize, true
	case CmdGetTensor2D:
		return GetTensor2DReqSize, true
	case CmdCommInit:
		return CommInitReqSize, true
	case CmdCommAllreduce:
		return CommAllreduceReqSize, true
	}
	return 0, false
}

// Errors of the decoders.
var (
	// ErrShort: a message shorter than its layout.
	ErrShort = errors.New("rpc: message too short")
	// ErrSize: a size field that disagrees with the message or a cap.
	ErrSize = errors.New("rpc: bad message size")
)

// Tensor is the serialized tensor (rpc_tensor): 296 packed bytes. Src,
// ViewSrc and ID are the client's tensor addresses, used only as names;
// Buffer is a handle the server gave out; Data is an address in the
// buffer's address range (base + offset).
type Tensor struct {
	ID       uint64
	Type     uint32
	Buffer   uint64
	Ne       [MaxDims]uint32
	Nb       [MaxDims]uint32
	Op       uint32
	OpParams [MaxOpParams / 4]int32
	Flags    int32
	Src      [MaxSrc]uint64
	ViewSrc  uint64
	ViewOffs uint64
	Data     uint64
	Name     [MaxName]byte
	UseCount int32
}

var le = binary.LittleEndian

// DecodeTensor reads a tensor from the first TensorSize bytes of b.
func DecodeTensor(b []byte) (Tensor, error) {
	var t Tensor
	if len(b) < TensorSize {
		return t, fmt.Errorf("tensor: %d bytes, want %d: %w", len(b), TensorSize, ErrShort)
	}
	t.ID = le.Uint64(b[0:])
	t.Type = le.Uint32(b[8:])
	t.Buffer = le.Uint64(b[12:])
	for i := range MaxDims {
		t.Ne[i] = le.Uint32(b[20+4*i:])
		t.Nb[i] = le.Uint32(b[36+4*i:])
	}
	t.Op = le.Uint32(b[52:])
	for i := range t.OpParams {
		t.OpParams[i] = int32(le.Uint32(b[56+4*i:]))
	}
	t.Flags = int32(le.Uint32(b[120:]))
	for i := range MaxSrc {
		t.Src[i] = le.Uint64(b[124+8*i:])
	}
	t.ViewSrc = le.Uint64(b[204:])
	t.ViewOffs = le.Uint64(b[212:])
	t.Data = le.Uint64(b[220:])
	copy(t.Name[:], b[228:292])
	t.UseCount = int32(le.Uint32(b[292:]))
	return t, nil
}

// AppendTensor appends the 296-byte encoding of t to b.
func AppendTensor(b []byte, t *Tensor) []byte {
	b = le.AppendUint64(b, t.ID)
	b = le.AppendUint32(b, t.Type)
	b = le.AppendUint64(b, t.Buffer)
	for _, n := range t.Ne {
		b = le.AppendUint32(b, n)
	}
	for _, n := range t.Nb {
		b = le.AppendUint32(b, n)
	}
	b = le.AppendUint32(b, t.Op)
	for _, p := range t.OpParams {
		b = le.AppendUint32(b, uint32(p))
	}
	b = le.AppendUint32(b, uint32(t.Flags))
	for _, s := range t.Src {
		b = le.AppendUint64(b, s)
	}
	b = le.AppendUint64(b, t.ViewSrc)
	b = le.AppendUint64(b, t.ViewOffs)
	b = le.AppendUint64(b, t.Data)
	b = append(b, t.Name[:]...)
	return le.AppendUint32(b, uint32(t.UseCount))
}

// NameString returns the tensor's name up to its first NUL.
func (t *Tensor) NameString() string {
	for i, c := range t.Name {
		if c == 0 {
			return string(t.Name[:i])
		}
	}
	return string(t.Name[:])
}

// SetName stores s (truncated to 63 bytes) as the tensor's name.
func (t *Tensor) SetName(s string) {
	t.Name = [MaxName]byte{}
	copy(t.Name[:MaxName-1], s)
}

// Graph is a GRAPH_COMPUTE request: | device u32 | uid u64 | n_nodes u32 |
// node ids (n_nodes u64) | n_tensors u32 | tensors (n_tensors rpc_tensor) |.
type Graph struct {
	Device  uint32
	UID     uint64
	Nodes   []uint64
	Tensors []Tensor
}

// DecodeGraph decodes a GRAPH_COMPUTE payload. The counts are checked
// against len(b) before anything is allocated, so the allocation is bounded
// by the (already capped) message size.
func DecodeGraph(b []byte) (*Graph, error) {
	if len(b) < GraphComputeHeaderSize {
		return nil, fmt.Errorf("graph: %d bytes: %w", len(b), ErrShort)
	}
	g := &Graph{Device: le.Uint32(b), UID: le.Uint64(b[4:])}
	nNodes := uint64(le.Uint32(b[12:]))
	rest := uint64(len(b)) - GraphComputeHeaderSize
	if nNodes*8+4 > rest {
		return nil, fmt.Errorf("graph: %d nodes in %d bytes: %w", nNodes, rest, ErrShort)
	}
	p := b[GraphComputeHeaderSize:]
	g.Nodes = make([]uint64, nNodes)
	for i := range g.Nodes {
		g.Nodes[i] = le.Uint64(p[8*i:])
	}
	p = p[8*nNodes:]
	nTensors := uint64(le.Uint32(p))
	p = p[4:]
	if nTensors*TensorSize > uint64(len(p)) {
		return nil, fmt.Errorf("graph: %d tensors in %d bytes: %w", nTensors, len(p), ErrShort)
	}
	if nTensors*TensorSize != uint64(len(p)) {
		return nil, fmt.Errorf("graph: %d trailing bytes after %d tensors: %w", uint64(len(p))-nTensors*TensorSize, nTensors, ErrSize)
	}
	g.Tensors = make([]Tensor, nTensors)
	for i := range g.Tensors {
		g.Tensors[i], _ = DecodeTensor(p[TensorSize*i:])
	}
	return g, nil
}

// AppendGraph appends the encoding of g to b.
func AppendGraph(b []byte, g *Graph) []byte {
	b = le.AppendUint32(b, g.Device)
	b = le.AppendUint64(b, g.UID)
	b = le.AppendUint32(b, uint32(len(g.Nodes)))
	for _, n := range g.Nodes {
		b = le.AppendUint64(b, n)
	}
	b = le.AppendUint32(b, uint32(len(g.Tensors)))
	for i := range g.Tensors {
		b = AppendTensor(b, &g.Tensors[i])
	}
	return b
}

// Reader reads the fields of a fixed-layout message in order. Reading past
// the end sets a sticky error and returns zeros.
type Reader struct {
	b   []byte
	err error
}

// NewReader returns a Reader over b.
func NewReader(b []byte) *Reader { return &Reader{b: b} }

func (r *Reader) take(n int) []byte {
	if r.err != nil || len(r.b) < n {
		if r.err == nil {
			r.err = ErrShort
		}
		return nil
	}
	p := r.b[:n]
	r.b = r.b[n:]
	return p
}

// U8 reads a byte.
func (r *Reader) U8() uint8 {
	if p := r.take(1); p != nil {
		return p[0]
	}
	return 0
}

// U32 reads a little-endian uint32.
func (r *Reader) U32() uint32 {
	if p := r.take(4); p != nil {
		return le.Uint32(p)
	}
	return 0
}

// U64 reads a little-endian uint64.
func (r *Reader) U64() uint64 {
	if p := r.take(8); p != nil {
		return le.Uint64(p)
	}
	return 0
}

// Tensor reads a serialized tensor.
func (r *Reader) Tensor() Tensor {
	if p := r.take(TensorSize); p != nil {
		t, _ := DecodeTensor(p)
		return t
	}
	return Tensor{}
}

// Bytes reads n raw bytes (a sub-slice of the input).
func (r *Reader) Bytes(n int) []byte { return r.take(n) }

// Err returns ErrShort if a read went past the end, or ErrSize if bytes are
// left over, else nil.
func (r *Reader) Err() error {
	if r.err != nil {
		return r.err
	}
	if len(r.b) != 0 {
		return fmt.Errorf("%d trailing bytes: %w", len(r.b), ErrSize)
	}
	return nil
}
