package runtime

import "errors"

// Sentinel errors that callers branch on. Errors returned by this package
// wrap one of them (errors.Is) and add what and where.
var (
	// ErrUnknownType: a type name or value that is not one of ggml's types.
	ErrUnknownType = errors.New("unknown tensor type")
	// ErrUnknownOp: an op name or value that is not one of ggml's ops.
	ErrUnknownOp = errors.New("unknown op")
	// ErrShape: element counts, strides or shapes that do not fit together.
	ErrShape = errors.New("bad tensor shape")
	// ErrOverflow: a size that does not fit in 64 bits.
	ErrOverflow = errors.New("size overflows 64 bits")
	// ErrView: a view that lies outside its source, or names a view as base.
	ErrView = errors.New("bad view")
	// ErrGraph: a graph that is not a DAG in evaluation order, or refers to
	// tensors it does not hold.
	ErrGraph = errors.New("bad graph")
	// ErrFormat: malformed graph or plan JSON.
	ErrFormat = errors.New("bad graph file")
	// ErrAlignment: an alignment that is not a power of two, or an address
	// that is not aligned.
	ErrAlignment = errors.New("bad alignment")
	// ErrOutOfBounds: a byte range outside a tensor or buffer.
	ErrOutOfBounds = errors.New("out of bounds")
	// ErrFreed: use of a buffer after Free.
	ErrFreed = errors.New("buffer already freed")
	// ErrOutOfMemory: the device could not provide the memory asked for.
	ErrOutOfMemory = errors.New("out of memory")
	// ErrNotAllocated: a tensor without memory where memory is needed.
	ErrNotAllocated = errors.New("tensor has no memory")
	// ErrUnsupported: an op, type or buffer a backend cannot handle.
	ErrUnsupported = errors.New("not supported")
)
