package rpcserver

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/gogml/gogml/backends/cuda"
	"github.com/gogml/gogml/backends/opengl"
	"github.com/gogml/gogml/internal/rpcwire"
	"github.com/gogml/gogml/runtime"
)

// TestEveryCommand round-trips each command of protocol 8.0.0 against a
// CPU device.
func TestEveryCommand(t *testing.T) { everyCommand(t, newCPU(t)) }

// TestEveryCommandCUDA does the same on CUDA device 0 (the device check;
// skipped without a GPU).
func TestEveryCommandCUDA(t *testing.T) {
	b, err := cuda.New(0)
	if err != nil {
		t.Skipf("no CUDA device: %v", err)
	}
	defer b.Close()
	everyCommand(t, b)
}

// TestEveryCommandOpenGL does the same on OpenGL device 0 (built with the
// tags opengl,egl; skipped without a GL context).
func TestEveryCommandOpenGL(t *testing.T) {
	b, err := opengl.New(opengl.Config{})
	if err != nil {
		t.Skipf("no OpenGL device: %v", err)
	}
	defer b.Close()
	everyCommand(t, b)
}

func everyCommand(t *testing.T, be runtime.Backend) {
	cache := t.TempDir()
	_, addr := startServer(t, Options{CacheDir: cache, Backends: []runtime.Backend{be}})
	c := connect(t, addr)

	if n := binary.LittleEndian.Uint32(c.call(rpcwire.CmdDeviceCount, nil, 4)); n != 1 {
		t.Fatalf("device count %d", n)
	}
	align := binary.LittleEndian.Uint64(c.call(rpcwire.CmdGetAlignment, u32(0), 8))
	if !runtime.IsPow2(align) {
		t.Fatalf("alignment %d", align)
	}
	if m := binary.LittleEndian.Uint64(c.call(rpcwire.CmdGetMaxSize, u32(0), 8)); m == 0 {
		t.Fatal("max size 0")
	}
	mem := c.call(rpcwire.CmdGetDeviceMemory, u32(0), 16)
	// Memory as the backend reports it (OpenGL cannot tell: 0/0).
	if free, total := binary.LittleEndian.Uint64(mem), binary.LittleEndian.Uint64(mem[8:]); free > total {
		t.Fatalf("memory %d/%d", free, total)
	}

	b := c.alloc(0, 4096)
	if b.base%align != 0 || b.size < 4096 {
		t.Fatalf("buffer %+v", b)
	}
	x := f32(b, 0, 4)
	y := f32(b, 64, 4)
	z := opTensor(b, 128, runtime.OpAdd, []*rpcwire.Tensor{&x, &y}, 4)
	c.set(&x, 0, floats(1, 2, 3, 4))
	c.set(&y, 0, floats(10, 20, 30, 40))
	if got := toFloats(c.get(&x, 4, 8)); got[0] != 2 || got[1] != 3 {
		t.Fatalf("get: %v", got)
	}

	// GRAPH_COMPUTE, then GRAPH_RECOMPUTE after changing an input.
	c.send(rpcwire.CmdGraphCompute, graph(0, 77, []*rpcwire.Tensor{&z}, &x, &y, &z))
	if got := toFloats(c.get(&z, 0, 16)); got[3] != 44 {
		t.Fatalf("add: %v", got)
	}
	c.set(&x, 0, floats(100, 100, 100, 100))
	c.send(rpcwire.CmdGraphRecompute, append(u32(0), u64(77)...))
	if got := toFloats(c.get(&z, 0, 16)); got[0] != 110 || got[3] != 140 {
		t.Fatalf("recompute: %v", got)
	}

	// MEMSET_TENSOR and BUFFER_CLEAR.
	p := append(tensorBytes(&y), u64(4)...)
	p = append(p, u64(8)...)
	c.send(rpcwire.CmdMemsetTensor, append(p, 0))
	if got := toFloats(c.get(&y, 0, 16)); got[0] != 10 || got[1] != 0 || got[2] != 0 || got[3] != 40 {
		t.Fatalf("memset: %v", got)
	}

	// COPY_TENSOR.
	if r := c.call(rpcwire.CmdCopyTensor, append(tensorBytes(&x), tensorBytes(&y)...), 1); r[0] != 1 {
		t.Fatal("copy answered 0")
	}
	if got := toFloats(c.get(&y, 0, 16)); got[2] != 100 {
		t.Fatalf("copy: %v", got)
	}

	// SET_TENSOR_2D and GET_TENSOR_2D: two rows of 4 bytes, stride 8.
	p = append(tensorBytes(&z), u64(0)...)
	p = append(p, u64(4)...)
	p = append(p, u64(2)...)
	p = append(p, u64(8)...)
	c.send(rpcwire.CmdSetTensor2D, append(bytes.Clone(p), floats(-1, -2)...))
	if got := toFloats(c.get(&z, 0, 16)); got[0] != -1 || got[2] != -2 {
		t.Fatalf("set 2d: %v", got)
	}
	if got := toFloats(c.call(rpcwire.CmdGetTensor2D, p, 8)); got[0] != -1 || got[1] != -2 {
		t.Fatalf("get 2d: %v", got)
	}

	// INIT_TENSOR and GET_ALLOC_SIZE.
	c.send(rpcwire.CmdInitTensor, tensorBytes(&x))
	req := append(u32(0), tensorBytes(&z)...)
	for i := range rpcwire.MaxSrc {
		var s rpcwire.Tensor
		if i < 2 {
			s = []rpcwire.Tensor{x, y}[i]
		}
		req = append(req, tensorBytes(&s)...)
	}
	if n := binary.LittleEndian.Uint64(c.call(rpcwire.CmdGetAllocSize, req, 8)); n != 16 {
		t.Fatalf("alloc size %d", n)
	}

	// SET_TENSOR_HASH: a miss, a SET_TENSOR that asks to cache, a hit.
	data := floats(5, 6, 7, 8)
	hash := fnv1a(fnvOffset, data)
	hreq := append(tensorBytes(&x), u64(0)...)
	hreq = append(hreq, u64(hash)...)
	if r := c.call(rpcwire.CmdSetTensorHash, hreq, 1); r[0] != 0 {
		t.Fatal("hash hit before caching")
	}
	sp := append(tensorBytes(&x), 1)
	sp = append(sp, u64(0)...)
	c.send(rpcwire.CmdSetTensor, append(sp, data...))
	c.set(&x, 0, floats(0, 0, 0, 0))
	if r := c.call(rpcwire.CmdSetTensorHash, hreq, 1); r[0] != 1 {
		t.Fatal("hash miss after caching")
	}
	if got := toFloats(c.get(&x, 0, 16)); got[3] != 8 {
		t.Fatalf("hash load: %v", got)
	}
	if _, err := os.Stat(filepath.Join(cache, "0123456789abcdef")); err == nil {
		t.Fatal("unexpected cache file")
	}

	// BUFFER_CLEAR.
	c.send(rpcwire.CmdBufferClear, append(u64(b.handle), 0))
	if got := toFloats(c.get(&x, 0, 16)); got[0] != 0 || got[3] != 0 {
		t.Fatalf("clear: %v", got)
	}

	// COMM_INIT answers "not joined"; COMM_FREE is accepted.
	if r := c.call(rpcwire.CmdCommInit, make([]byte, rpcwire.CommInitReqSize), 1); r[0] != 0 {
		t.Fatal("comm init joined")
	}
	c.send(rpcwire.CmdCommFree, u32(0))

	// FREE_BUFFER, then the handle is gone.
	c.send(rpcwire.CmdFreeBuffer, u64(b.handle))
	if binary.LittleEndian.Uint32(c.call(rpcwire.CmdDeviceCount, nil, 4)) != 1 {
		t.Fatal("connection unusable after free")
	}
	c.send(rpcwire.CmdBufferGetBase, u64(b.handle))
	if !c.closed() {
		t.Fatal("freed handle accepted")
	}
}

// TestUnsupportedOpPoisonsAndContinues: a graph with an op the CPU backend
// lacks leaves NaN in its output and the connection serving.
func TestUnsupportedOpPoisonsAndContinues(t *testing.T) {
	_, addr := startServer(t, Options{})
	c := connect(t, addr)
	b := c.alloc(0, 4096)
	x := f32(b, 0, 4)
	z := opTensor(b, 64, runtime.OpCustom, []*rpcwire.Tensor{&x}, 4)
	c.set(&z, 0, floats(1, 2, 3, 4))
	c.send(rpcwire.CmdGraphCompute, graph(0, 0, []*rpcwire.Tensor{&z}, &x, &z))
	for _, v := range toFloats(c.get(&z, 0, 16)) {
		if !math.IsNaN(float64(v)) {
			t.Fatalf("output %v after an unsupported op, want NaN", v)
		}
	}
	// Still serving: a supported graph runs.
	y := opTensor(b, 128, runtime.OpScale, []*rpcwire.Tensor{&x}, 4)
	y.OpParams[0] = int32(math.Float32bits(2))
	c.set(&x, 0, floats(1, 2, 3, 4))
	c.send(rpcwire.CmdGraphCompute, graph(0, 0, []*rpcwire.Tensor{&y}, &x, &y))
	if got := toFloats(c.get(&y, 0, 16)); got[3] != 8 {
		t.Fatalf("scale after unsupported: %v", got)
	}
}

// TestNodesWithoutComputeFlagAreSkipped follows ggml 0.27.0: a node
// without GGML_TENSOR_FLAG_COMPUTE belongs to another split.
func TestNodesWithoutComputeFlagAreSkipped(t *testing.T) {
	_, addr := startServer(t, Options{})
	c := connect(t, addr)
	b := c.alloc(0, 4096)
	x := f32(b, 0, 4)
	y := opTensor(b, 64, runtime.OpScale, []*rpcwire.Tensor{&x}, 4)
	y.Flags = 0
	y.OpParams[0] = int32(math.Float32bits(2))
	c.set(&x, 0, floats(1, 2, 3, 4))
	c.set(&y, 0, floats(9, 9, 9, 9))
	c.send(rpcwire.CmdGraphCompute, graph(0, 0, []*rpcwire.Tensor{&y}, &x, &y))
	if got := toFloats(c.get(&y, 0, 16)); got[0] != 9 {
		t.Fatalf("node without COMPUTE flag ran: %v", got)
	}
}

// TestBuffersFreedOnDisconnect: a dropped connection's buffers go back.
func TestBuffersFreedOnDisconnect(t *testing.T) {
	s, addr := startServer(t, Options{MaxConnBytes: 1 << 20})
	c := connect(t, addr)
	b := c.alloc(0, 1<<20)
	rsp := c.call(rpcwire.CmdAllocBuffer, append(u32(0), u64(1)...), 16)
	if binary.LittleEndian.Uint64(rsp) != 0 {
		t.Fatal("allocation over the connection cap succeeded")
	}
	_ = b
	c.nc.Close()
	// A new connection has its own cap.
	c2 := connect(t, addr)
	c2.alloc(0, 1<<20)
	_ = s
}

// panicky is a CPU backend whose Compute panics.
type panicky struct{ runtime.Backend }

func (panicky) Compute(*runtime.Graph) error { panic("kernel index out of range") }

// TestBackendPanicIsContained: a panicking Compute poisons the outputs and
// the connection keeps serving.
func TestBackendPanicIsContained(t *testing.T) {
	_, addr := startServer(t, Options{Backends: []runtime.Backend{panicky{newCPU(t)}}})
	c := connect(t, addr)
	b := c.alloc(0, 4096)
	x := f32(b, 0, 4)
	y := opTensor(b, 64, runtime.OpScale, []*rpcwire.Tensor{&x}, 4)
	c.send(rpcwire.CmdGraphCompute, graph(0, 0, []*rpcwire.Tensor{&y}, &x, &y))
	if got := toFloats(c.get(&y, 0, 16)); !math.IsNaN(float64(got[0])) {
		t.Fatalf("output after a panic: %v", got)
	}
}

// TestHelloKeepsPlainTCP: a client offering an RDMA upgrade in its caps
// gets all-zero caps back, which keeps the connection on plain TCP.
func TestHelloKeepsPlainTCP(t *testing.T) {
	_, addr := startServer(t, Options{})
	c := dial(t, addr)
	caps := bytes.Repeat([]byte{0xAB}, rpcwire.ConnCapsSize)
	rsp := c.call(rpcwire.CmdHello, caps, rpcwire.HelloRspSize)
	if !bytes.Equal(rsp, append([]byte{8, 0, 0, 0}, make([]byte, rpcwire.ConnCapsSize)...)) {
		t.Fatalf("hello reply % x", rsp)
	}
	if binary.LittleEndian.Uint32(c.call(rpcwire.CmdDeviceCount, nil, 4)) != 1 {
		t.Fatal("device count after hello")
	}
}

// TestEmptyKernelConvIsZeros: a convolution with an empty kernel (ggml's
// test-backend-ops has such cases) gives zeros, as ggml computes it, where
// other ops with an empty source are refused.
func TestEmptyKernelConvIsZeros(t *testing.T) {
	_, addr := startServer(t, Options{})
	c := connect(t, addr)
	b := c.alloc(0, 4096)
	k := f32(b, 0, 0, 1, 1, 1) // {0, 1, 1, 1}: no elements
	x := f32(b, 64, 2, 2, 1, 1)
	z := opTensor(b, 128, runtime.OpConv2D, []*rpcwire.Tensor{&k, &x}, 3, 3, 1, 1)
	copy(z.OpParams[:], []int32{1, 1, 0, 0, 1, 1})
	c.set(&z, 0, floats(1, 1, 1, 1, 1, 1, 1, 1, 1))
	c.send(rpcwire.CmdGraphCompute, graph(0, 0, []*rpcwire.Tensor{&z}, &k, &x, &z))
	for _, v := range toFloats(c.get(&z, 0, 36)) {
		if v != 0 {
			t.Fatalf("output %v of a convolution with an empty kernel, want 0", v)
		}
	}
}

// TestEmptySetRowsLeavesDestination: a SET_ROWS whose values (and ids)
// have no rows writes nothing, as ggml's loop over zero rows; the server
// must neither refuse it nor poison the destination it views.
func TestEmptySetRowsLeavesDestination(t *testing.T) {
	tests := []struct {
		name        string
		rows, nrows uint32 // rows of the values, ids
	}{
		{"no values, no ids", 0, 0},
		{"values without rows", 0, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, addr := startServer(t, Options{})
			c := connect(t, addr)
			b := c.alloc(0, 4096)
			dst := f32(b, 0, 2, 3)
			vals := f32(b, 256, 2, tc.rows)
			ids := f32(b, 512, tc.nrows)
			ids.Type = uint32(runtime.TypeI64)
			ids.Nb = [4]uint32{8, 8 * tc.nrows, 8 * tc.nrows, 8 * tc.nrows}
			out := opTensor(b, 0, runtime.OpSetRows, []*rpcwire.Tensor{&vals, &ids, &dst}, 2, 3)
			out.ViewSrc = dst.ID
			c.set(&dst, 0, floats(1, 2, 3, 4, 5, 6))
			c.send(rpcwire.CmdGraphCompute, graph(0, 0, []*rpcwire.Tensor{&out}, &vals, &ids, &dst, &out))
			if got := toFloats(c.get(&dst, 0, 24)); got[0] != 1 || got[5] != 6 {
				t.Fatalf("destination after an empty SET_ROWS: %v, want 1..6", got)
			}
		})
	}
}

// TestCastSelfReference follows ggml_cast: a CPY into a new tensor whose
// src[1] is the node itself (llama.cpp's dream, glm5-next and deepseek4
// graphs have them) copies into the node, not a source cycle.
func TestCastSelfReference(t *testing.T) {
	_, addr := startServer(t, Options{})
	c := connect(t, addr)
	b := c.alloc(0, 4096)
	x := f32(b, 0, 4)
	z := opTensor(b, 64, runtime.OpCpy, []*rpcwire.Tensor{&x}, 4)
	z.Src[1] = z.ID
	c.set(&x, 0, floats(1, 2, 3, 4))
	c.send(rpcwire.CmdGraphCompute, graph(0, 0, []*rpcwire.Tensor{&z}, &x, &z))
	if got := toFloats(c.get(&z, 0, 16)); got[0] != 1 || got[3] != 4 {
		t.Fatalf("cast copied %v, want 1 2 3 4", got)
	}
}

// TestConcatWithEmptySource: a CONCAT of a zero-width tensor and x (as
// llama.cpp's minicpm3 builds) is x.
func TestConcatWithEmptySource(t *testing.T) {
	_, addr := startServer(t, Options{})
	c := connect(t, addr)
	b := c.alloc(0, 4096)
	x := f32(b, 0, 4, 2)
	e := f32(b, 64, 0, 2)
	z := opTensor(b, 128, runtime.OpConcat, []*rpcwire.Tensor{&e, &x}, 4, 2)
	c.set(&x, 0, floats(1, 2, 3, 4, 5, 6, 7, 8))
	c.send(rpcwire.CmdGraphCompute, graph(0, 0, []*rpcwire.Tensor{&z}, &e, &x, &z))
	if got := toFloats(c.get(&z, 0, 32)); got[0] != 1 || got[7] != 8 {
		t.Fatalf("concat with an empty source gave %v, want 1..8", got)
	}
}

// TestSupportsOpQuery: gogml's extension answers, for tensors without
// memory, whether the device would compute the op, and is refused (the
// connection closed) unless enabled.
func TestSupportsOpQuery(t *testing.T) {
	unplaced := func(w rpcwire.Tensor) rpcwire.Tensor {
		w.Buffer, w.Data = 0, 0
		return w
	}
	_, addr := startServer(t, Options{SupportsOpQuery: true})
	c := connect(t, addr)
	b := c.alloc(0, 4096)
	x := unplaced(f32(b, 0, 4))
	scale := unplaced(opTensor(b, 64, runtime.OpScale, []*rpcwire.Tensor{&x}, 4))
	custom := unplaced(opTensor(b, 128, runtime.OpCustom, []*rpcwire.Tensor{&x}, 4))
	for _, tt := range []struct {
		name string
		node *rpcwire.Tensor
		want byte
	}{{"leaf", &x, 1}, {"scale", &scale, 1}, {"custom", &custom, 0}} {
		r := c.call(rpcwire.CmdGogmlSupportsOp, graph(0, 0, []*rpcwire.Tensor{tt.node}, &x, tt.node), 1)
		if r[0] != tt.want {
			t.Errorf("%s: answer %d, want %d", tt.name, r[0], tt.want)
		}
	}
	// A source missing from the message is answered "no", not fatal.
	lone := unplaced(opTensor(b, 64, runtime.OpScale, []*rpcwire.Tensor{&x}, 4))
	if r := c.call(rpcwire.CmdGogmlSupportsOp, graph(0, 0, []*rpcwire.Tensor{&lone}, &lone), 1); r[0] != 0 {
		t.Errorf("op without its source: answer %d, want 0", r[0])
	}
	// Two nodes break the request's layout: the connection closes.
	c.send(rpcwire.CmdGogmlSupportsOp, graph(0, 0, []*rpcwire.Tensor{&scale, &x}, &x, &scale))
	if !c.closed() {
		t.Error("two-node query accepted")
	}

	_, plain := startServer(t, Options{})
	c = connect(t, plain)
	c.send(rpcwire.CmdGogmlSupportsOp, graph(0, 0, []*rpcwire.Tensor{&scale}, &x, &scale))
	if !c.closed() {
		t.Error("query answered without Options.SupportsOpQuery")
	}
}
