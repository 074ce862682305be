package cpu

import (
	"errors"
	"fmt"
	goruntime "runtime"
	"sync"
	"sync/atomic"

	cpukernels "github.com/gogml/gogml/internal/kernels/cpukernels"
	"github.com/gogml/gogml/runtime"
)

// ErrClosed is returned by Compute on a closed backend.
var ErrClosed = errors.New("cpu backend: closed")

// MaxThreads is the most worker goroutines a Backend runs; larger
// settings are lowered to it. Each worker has its own goroutine and
// scratch memory, and no host has more cores than this.
const MaxThreads = 1024

// BackendOptions configures a CPU backend. The zero value uses every core
// and the default host buffer type.
type BackendOptions struct {
	// Threads is the number of worker goroutines a node's rows are split
	// across. Zero or less means runtime.NumCPU(); more than MaxThreads
	// means MaxThreads.
	Threads int
	// BufferType is the backend's default buffer type; nil means
	// DefaultBufferType().
	BufferType runtime.BufferType
}

// Backend runs graphs on the host's cores: each node in order, its rows
// split across a persistent pool of worker goroutines (started by the
// first Compute that needs them, ended by Close, by SetThreads, or when
// the Backend is garbage collected), with fast kernels (package vec) for the
// common contiguous f32 cases and the reference kernels (package
// cpukernels) for everything else. It implements runtime.Backend. Its
// methods are safe for concurrent use: Computes run one at a time, and
// Close and SetThreads wait for a running Compute to end.
type Backend struct {
	mu      sync.Mutex // held by Compute, Close and SetThreads
	threads atomic.Int64
	bt      runtime.BufferType
	closed  bool
	pool    *workerPool
	cleanup goruntime.Cleanup
	scratch *scratchPool // not part of Backend's memory: jobs held by workers point at it
	minWork int64        // minWorkPerThread, lowered by tests to split every node
	// roundStage is maxRoundedStage, lowered by tests to take
	// mulMatRoundedBlocked with small products.
	roundStage int64
}

// NewBackend returns a CPU backend configured by o.
func NewBackend(o BackendOptions) *Backend {
	b := &Backend{bt: o.BufferType, scratch: &scratchPool{}, minWork: minWorkPerThread, roundStage: maxRoundedStage}
	if b.bt == nil {
		b.bt = DefaultBufferType()
	}
	b.SetThreads(o.Threads)
	return b
}

// SetThreads sets the number of worker goroutines; n < 1 means
// runtime.NumCPU(), n > MaxThreads means MaxThreads. The workers of the
// previous setting, if any, are stopped.
func (b *Backend) SetThreads(n int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if n < 1 {
		n = goruntime.NumCPU()
	}
	n = min(n, MaxThreads)
	b.threads.Store(int64(n))
	if b.pool != nil {
		b.cleanup.Stop()
		b.pool.stop()
	}
	b.pool = newWorkerPool(n)
	if !b.closed {
		// Stop the workers of a Backend dropped without Close.
		b.cleanup = goruntime.AddCleanup(b, (*workerPool).stop, b.pool)
	} else {
		b.pool.stop()
	}
}

// Threads returns the number of worker goroutines.
func (b *Backend) Threads() int { return int(b.threads.Load()) }

// Name returns "CPU".
func (b *Backend) Name() string { return "CPU" }

// Device describes the host: its core count and memory.
func (b *Backend) Device() runtime.DeviceInfo {
	d := runtime.DeviceInfo{
		Name:        "CPU",
		Description: fmt.Sprintf("%s/%s, %d cores, %d worker goroutines", goruntime.GOOS, goruntime.GOARCH, goruntime.NumCPU(), b.Threads()),
	}
	if total, free, ok := hostMemory(); ok {
		d.TotalMemory, d.FreeMemory = total, free
	}
	return d
}

// DefaultBufferType returns the buffer type tensors for this backend are
// allocated in.
func (b *Backend) DefaultBufferType() runtime.BufferType { return b.bt }

// SupportsBufferType reports whether bt is host memory in ggml's layout
// or the repacking type (RepackBufferType).
func (b *Backend) SupportsBufferType(bt runtime.BufferType) bool {
	_, repack := bt.(*RepackBufferType)
	return bt != nil && (bt.IsHost() || repack)
}

// SupportsOp reports whether Compute implements node t with its types and
// layouts: exactly the reference kernels' coverage (cpukernels.Supports);
// the fast kernels only speed up a subset.
func (b *Backend) SupportsOp(t *runtime.Tensor) bool { return cpukernels.Supports(t) == nil }

// Close marks the backend closed and stops its worker goroutines; later
// Computes fail with ErrClosed. It waits for a running Compute to end.
func (b *Backend) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	b.cleanup.Stop()
	b.pool.stop()
	b.scratch = &scratchPool{}
	return nil
}

// Compute runs every node of g in order. Every node and source must live
// in a host buffer (runtime.HostBuffer). The first failing node stops the
// run with an error naming it. A buffer of this package freed during the
// run fails the next node that uses it (runtime.ErrFreed); Free waits for
// the node using it to end.
func (b *Backend) Compute(g *runtime.Graph) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return ErrClosed
	}
	if g == nil {
		return fmt.Errorf("cpu backend: nil graph: %w", runtime.ErrGraph)
	}
	// b must stay reachable while its workers run: its cleanup stops them.
	defer goruntime.KeepAlive(b)
	// The nodes' memory and jobs in the scratch pool are dropped once the
	// graph is done, so nothing of it stays referenced between Computes.
	defer b.scratch.release()
	for i, n := range g.Nodes() {
		if n.Op == runtime.OpNone || n.Op.IsViewOp() {
			continue
		}
		if err := b.computeNode(n, b.scratch); err != nil {
			return fmt.Errorf("node %d: %w", i, err)
		}
	}
	return nil
}

// hostMem resolves a tensor placed in a host buffer to its bytes.
func hostMem(t *runtime.Tensor) ([]byte, error) {
	if t.Buffer == nil {
		return nil, fmt.Errorf("tensor %q has no buffer: %w", t.Name, runtime.ErrNotAllocated)
	}
	// This package's buffers first: asserting to an interface looks
	// the type up, and hostMem runs for every node and source.
	var mem []byte
	switch b := t.Buffer.(type) {
	case *Buffer:
		mem = b.mem
	case *RepackBuffer:
		mem = b.buf.mem
	case runtime.HostBuffer:
		mem = b.Bytes()
	default:
		return nil, fmt.Errorf("tensor %q is in buffer %s, not host memory: %w", t.Name, t.Buffer.Type().Name(), runtime.ErrUnsupported)
	}
	n := t.NBytes()
	if t.Offset > uint64(len(mem)) || n > uint64(len(mem))-t.Offset {
		return nil, fmt.Errorf("tensor %q: %d bytes at offset %d outside its buffer of %d bytes: %w", t.Name, n, t.Offset, len(mem), runtime.ErrOutOfBounds)
	}
	return mem[t.Offset : t.Offset+n : t.Offset+n], nil
}

// computeNode checks node n and its sources, then runs it.
func (b *Backend) computeNode(n *runtime.Tensor, scratch *scratchPool) error {
	if err := cpukernels.Supports(n); err != nil {
		return err
	}
	var pins pinned
	defer pins.release()
	if err := pins.pin(n); err != nil {
		return err
	}
	if err := checkRepackedSources(n); err != nil {
		return err
	}
	// The bytes of the node and its sources live in the scratch pool (used
	// by one Compute at a time, under b.mu): the kernels' closures keep
	// slices of this array, which on the stack would move to the heap, one
	// allocation per node. Compute releases it at the end of the graph.
	mem := &scratch.mem
	var err error
	if mem[0], err = hostMem(n); err != nil {
		return err
	}
	if ro, ok := n.Buffer.(interface{ ReadOnly() bool }); ok && ro.ReadOnly() {
		return fmt.Errorf("tensor %s: result in read-only buffer %s: %w", n, n.Buffer.Type().Name(), runtime.ErrUnsupported)
	}
	for i, s := range n.Src {
		if s != nil {
			if mem[i+1], err = hostMem(s); err != nil {
				return fmt.Errorf("tensor %s: source %d: %w", n, i, err)
			}
		}
	}
	nth := b.threadsFor(n)
	if n.Op == runtime.OpMulMat {
		if quant, dot, rows := mulMatQuantKernels(n, mem[0], mem[1], mem[2], scratch, b.Threads()); dot != nil {
			if err := b.pool.run(b.threadsForWork(rows*n.Src[0].Ne[0]*4), quant); err != nil {
				return err
			}
			return b.pool.run(nth, dot)
		}
		if Repacked(n.Src[0]) {
			return fmt.Errorf("tensor %s: repacked weights %s with these activations and result: %w", n, n.Src[0].Name, runtime.ErrUnsupported)
		}
		if round, mm, rows := mulMatRoundedKernels(n, mem[0], mem[1], mem[2], scratch, b.Threads(), b.roundStage); mm != nil {
			if round != nil {
				if err := b.pool.run(b.threadsForWork(rows*n.Src[1].Ne[0]), round); err != nil {
					return err
				}
			}
			return b.pool.run(nth, mm)
		}
	}
	if f := fastKernel(n, mem[0], mem[1:], scratch, nth); f != nil {
		return b.pool.run(nth, f)
	}
	return b.pool.run(nth, func(ith, nth int) error { return cpukernels.Compute(n, hostMem, ith, nth) })
}

// threadsFor picks the worker count for n: fewer for small nodes, where
// handing rows to other workers costs more than it saves.
func (b *Backend) threadsFor(n *runtime.Tensor) int {
	work := n.Nelements()
	switch n.Op {
	case runtime.OpMulMat:
		work *= n.Src[0].Ne[0]
	case runtime.OpConv2D, runtime.OpConv3D: // a dot product of a kernel row per element
		if k := n.Src[0]; k.Ne[3] > 0 {
			work *= k.Nelements() / k.Ne[3]
		}
	case runtime.OpFlashAttnExt: // each result element reads every key
		work *= n.Src[1].Ne[1]
	}
	return b.threadsForWork(work)
}

// minWorkPerThread is the least work (output elements, or multiply-adds
// for MUL_MAT) worth a worker of its own: a dispatch to the pool costs
// about 0.3 µs, and splitting also moves the node's inputs and outputs
// between cores' caches. Measured on the decoder of gogml run, where
// 8192 made two workers 30-50% slower than one and 32768 made them even.
const minWorkPerThread = 32768

// threadsForWork is the worker count for about work units of work.
func (b *Backend) threadsForWork(work int64) int {
	nth := int(b.threads.Load())
	if lim := work / b.minWork; int64(nth) > lim {
		nth = int(max(lim, 1))
	}
	return nth
}
