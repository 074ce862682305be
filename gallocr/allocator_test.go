package gallocr_test

import (
	"encoding/binary"
	"errors"
	"math"
	"testing"

	"github.com/gogml/gogml/backends/backendtest"
	"github.com/gogml/gogml/backends/cpu"
	"github.com/gogml/gogml/gallocr"
	"github.com/gogml/gogml/runtime"
)

// liveType records the buffers it hands out, so a test can check that all
// of them were freed (a freed buffer answers ErrFreed).
type liveType struct {
	runtime.BufferType
	bufs *[]runtime.Buffer
}

func newLive(bt runtime.BufferType) liveType {
	return liveType{BufferType: bt, bufs: new([]runtime.Buffer)}
}

func (l liveType) AllocBuffer(size uint64) (runtime.Buffer, error) {
	b, err := l.BufferType.AllocBuffer(size)
	if err == nil {
		*l.bufs = append(*l.bufs, b)
	}
	return b, err
}

// live counts the handed-out buffers not yet freed.
func (l liveType) live() int {
	n := 0
	for _, b := range *l.bufs {
		if err := b.Clear(0); !errors.Is(err, runtime.ErrFreed) {
			n++
		}
	}
	return n
}

// maxSizeType reports a max size without enforcing it, as a device whose
// limit is advisory.
type maxSizeType struct {
	runtime.BufferType
	max uint64
}

func (m maxSizeType) MaxSize() uint64 { return m.max }

// smallGraph builds x -> mul_mat(w, x) -> scale -> add(…, x2) with an
// output, so there is reuse in place and freeing.
func smallGraph(t testing.TB) (*runtime.Graph, []*runtime.Tensor) {
	ctx := runtime.NewContext()
	w := ctx.NewTensor(runtime.TypeF32, 64, 64)
	w.Name = "w"
	x := ctx.NewTensor(runtime.TypeF32, 64, 8)
	x.Name = "x"
	x.SetInput()
	y := ctx.MulMat(w, x)
	z := ctx.Scale(y, 0.5)
	v := ctx.View2D(z, 64, 4, z.Nb[1], 0)
	u := ctx.Cont(v)
	u.SetOutput()
	if err := ctx.Err(); err != nil {
		t.Fatal(err)
	}
	g := runtime.NewGraph()
	if err := g.BuildForwardExpand(u); err != nil {
		t.Fatal(err)
	}
	return g, []*runtime.Tensor{w, x, y, z, v, u}
}

func TestAllocGraphMatchesPlan(t *testing.T) {
	bt := cpu.DefaultBufferType()
	g, ts := smallGraph(t)
	a, err := gallocr.New(bt)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Free()
	if err := a.AllocGraph(g); err != nil {
		t.Fatal(err)
	}
	pl := a.Plan()
	bufs := a.Buffers(0)
	if len(bufs) != 1 {
		t.Fatalf("got %d buffers, want 1", len(bufs))
	}
	for _, tn := range ts {
		p, ok := pl.Placement(tn)
		if !ok || p.Buffer < 0 {
			t.Fatalf("tensor %s not placed in plan", tn.Name)
		}
		if tn.Buffer != bufs[0] || tn.Offset != p.Offset {
			t.Errorf("tensor %s at (%v, %d), plan says offset %d", tn.Name, tn.Buffer != nil, tn.Offset, p.Offset)
		}
		if (bufs[0].Base()+tn.Offset)%bt.Alignment() != 0 {
			t.Errorf("tensor %s misaligned", tn.Name)
		}
	}
	// Warm: same graph again needs no new reserve and keeps places.
	if a.NeedsRealloc(g) {
		t.Fatal("same graph needs realloc")
	}
	if err := a.AllocGraph(g); err != nil {
		t.Fatal(err)
	}
	size, _ := a.BufferSize(0)
	if size != pl.TotalSize() {
		t.Errorf("buffer size %d, plan %d", size, pl.TotalSize())
	}
}

func TestReserveFailureLeaksNothing(t *testing.T) {
	failing := backendtest.NewFailing(cpu.DefaultBufferType(), backendtest.FailingOptions{FailAfter: 0})
	bt := newLive(failing)
	a, err := gallocr.NewN([]runtime.BufferType{bt, cpu.DefaultBufferType()})
	if err != nil {
		t.Fatal(err)
	}
	g, _ := smallGraph(t)
	err = a.ReserveN(g, nil, nil)
	if !errors.Is(err, runtime.ErrOutOfMemory) {
		t.Fatalf("reserve error = %v, want out of memory", err)
	}
	if bt.live() != 0 {
		t.Fatalf("%d buffers left allocated after failed reserve", bt.live())
	}
	if err := a.AllocGraph(g); !errors.Is(err, gallocr.ErrNeedsReserve) {
		t.Fatalf("alloc graph on failed multi-buffer allocator: %v, want ErrNeedsReserve", err)
	}
	failing.SetOptions(backendtest.FailingOptions{FailAfter: backendtest.Never})
	if err := a.ReserveN(g, nil, nil); err != nil {
		t.Fatalf("reserve after failure: %v", err)
	}
	if err := a.AllocGraph(g); err != nil {
		t.Fatal(err)
	}
	a.Free()
	if bt.live() != 0 {
		t.Fatalf("%d buffers left after Free", bt.live())
	}
}

func TestAllocGraphGrowsSingleBuffer(t *testing.T) {
	bt := cpu.DefaultBufferType()
	a, _ := gallocr.New(bt)
	defer a.Free()
	small, _ := smallGraph(t)
	if err := a.AllocGraph(small); err != nil {
		t.Fatal(err)
	}
	ctx := runtime.NewContext()
	x := ctx.NewTensor(runtime.TypeF32, 1024, 64)
	x.SetInput()
	y := ctx.Sqr(x)
	y.SetOutput()
	g := runtime.NewGraph()
	g.BuildForwardExpand(y)
	if !a.NeedsRealloc(g) {
		t.Fatal("bigger graph should need realloc")
	}
	if err := a.AllocGraph(g); err != nil {
		t.Fatal(err)
	}
	if size, _ := a.BufferSize(0); size < 1024*64*4 {
		t.Fatalf("buffer size %d too small", size)
	}
}

func TestTallocr(t *testing.T) {
	bt := cpu.DefaultBufferType()
	buf, err := bt.AllocBuffer(256)
	if err != nil {
		t.Fatal(err)
	}
	defer buf.Free()
	ta, err := gallocr.NewTallocr(buf)
	if err != nil {
		t.Fatal(err)
	}
	ctx := runtime.NewContext()
	a := ctx.NewTensor(runtime.TypeF32, 3) // 12 bytes -> 32
	b := ctx.NewTensor(runtime.TypeF32, 40)
	c := ctx.NewTensor(runtime.TypeF32, 64)
	for _, x := range []*runtime.Tensor{a, b} {
		if err := ta.Alloc(x); err != nil {
			t.Fatal(err)
		}
	}
	if a.Offset != 0 || b.Offset != 32 {
		t.Fatalf("offsets %d %d, want 0 32", a.Offset, b.Offset)
	}
	if err := ta.Alloc(c); !errors.Is(err, runtime.ErrOutOfMemory) {
		t.Fatalf("overfull alloc: %v", err)
	}
	if c.Buffer != nil {
		t.Fatal("failed alloc left a place")
	}
}

func TestAllocCtxTensorsSplits(t *testing.T) {
	tests := []struct {
		name    string
		maxSize uint64
		sizes   []int64 // f32 element counts
		want    []uint64
	}{
		{"one buffer", runtime.NoMaxSize, []int64{8, 8, 8}, []uint64{96}},
		{"split", 64, []int64{8, 8, 8}, []uint64{64, 32}},
		{"too large alone", 64, []int64{4, 100, 4}, []uint64{32, 416, 32}},
		{"exact fit", 96, []int64{8, 8, 8}, []uint64{96}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			bt := maxSizeType{cpu.DefaultBufferType(), tc.maxSize}
			ctx := runtime.NewContext()
			var ts []*runtime.Tensor
			for _, n := range tc.sizes {
				ts = append(ts, ctx.NewTensor(runtime.TypeF32, n))
			}
			view := ctx.View1D(ts[0], 2, 4)
			total, err := gallocr.CtxTensorsSize(ctx, bt)
			if err != nil {
				t.Fatal(err)
			}
			var want uint64
			for _, w := range tc.want {
				want += w
			}
			if total != want {
				t.Fatalf("dry run %d, want %d", total, want)
			}
			buf, err := gallocr.AllocCtxTensors(ctx, bt)
			if err != nil {
				t.Fatal(err)
			}
			defer buf.Free()
			var got []uint64
			if mb, ok := buf.(*runtime.MultiBuffer); ok {
				for _, p := range mb.Parts() {
					got = append(got, p.Size())
				}
			} else {
				got = []uint64{buf.Size()}
			}
			if len(got) != len(tc.want) {
				t.Fatalf("buffers %v, want %v", got, tc.want)
			}
			for i := range got {
				if got[i] < tc.want[i] {
					t.Fatalf("buffers %v, want %v", got, tc.want)
				}
			}
			if buf.Usage() != runtime.UsageWeights {
				t.Errorf("usage %v", buf.Usage())
			}
			for _, x := range ts {
				if x.Buffer == nil {
					t.Fatalf("tensor %s unplaced", x.Name)
				}
			}
			if view.Buffer != ts[0].Buffer || view.Offset != ts[0].Offset+4 {
				t.Fatal("view not initialised from its base")
			}
			data := []byte{1, 2, 3, 4, 5, 6, 7, 8}
			if err := runtime.SetTensorData(ts[len(ts)-1], data, 0); err != nil {
				t.Fatal(err)
			}
			if err := buf.Clear(0); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestAllocCtxTensorsFailureLeaksNothing(t *testing.T) {
	failing := backendtest.NewFailing(maxSizeType{cpu.DefaultBufferType(), 64}, backendtest.FailingOptions{FailAfter: 1})
	bt := newLive(failing)
	ctx := runtime.NewContext()
	a := ctx.NewTensor(runtime.TypeF32, 16)
	b := ctx.NewTensor(runtime.TypeF32, 16)
	if _, err := gallocr.AllocCtxTensors(ctx, bt); !errors.Is(err, runtime.ErrOutOfMemory) {
		t.Fatalf("err = %v", err)
	}
	if bt.live() != 0 || a.Buffer != nil || b.Buffer != nil {
		t.Fatalf("leak: %d live buffers, a placed %v, b placed %v", bt.live(), a.Buffer != nil, b.Buffer != nil)
	}
}

// TestAllocGraphSameShapeNewGraph reserves for one graph and allocates a
// second graph of the same shape built from new tensors: it matches by
// position, needs no new reserve, and places every tensor as the first.
func TestAllocGraphSameShapeNewGraph(t *testing.T) {
	bt := cpu.DefaultBufferType()
	g1, ts1 := smallGraph(t)
	g2, ts2 := smallGraph(t)
	a, err := gallocr.New(bt)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Free()
	if err := a.Reserve(g1); err != nil {
		t.Fatal(err)
	}
	if a.NeedsRealloc(g2) {
		t.Fatal("same-shape graph needs realloc")
	}
	if err := a.AllocGraph(g2); err != nil {
		t.Fatal(err)
	}
	pl := a.Plan()
	for i, tn := range ts2 {
		p, _ := pl.Placement(ts1[i])
		if tn.Buffer != a.Buffers(0)[0] || tn.Offset != p.Offset {
			t.Errorf("%s at offset %d, first graph's plan says %d", tn.Name, tn.Offset, p.Offset)
		}
	}
}

// TestAllocGraphViewBeforeBase: a leaf that views a node is met before its
// base has memory. ggml 1.4.1 leaves such a view without memory; the plan
// puts it at its base's place plus its offset, and alloc graph agrees.
func TestAllocGraphViewBeforeBase(t *testing.T) {
	f, err := runtime.ParseGraphFile([]byte(`{"format": "graph/v1",
  "buffer_types": [{"name": "host", "alignment": 32, "max_size": 0}],
  "tensors": [
    {"name": "x", "type": "f32", "ne": [64], "op": "NONE", "flags": ["input"]},
    {"name": "y", "type": "f32", "ne": [64], "op": "SCALE", "src": [0], "flags": ["output"]},
    {"name": "yv", "type": "f32", "ne": [16], "op": "NONE", "view_src": 1, "view_offs": 64}],
  "leafs": [0, 2], "nodes": [1]}`))
	if err != nil {
		t.Fatal(err)
	}
	pl, err := gallocr.PlanFile(f, gallocr.StrategyGGML)
	if err != nil {
		t.Fatal(err)
	}
	y, yv := f.Tensors[1], f.Tensors[2]
	py, _ := pl.Placement(y)
	pv, _ := pl.Placement(yv)
	if pv.Buffer != py.Buffer || pv.Offset != py.Offset+64 {
		t.Fatalf("plan: view at %+v, base at %+v", pv, py)
	}
	a, err := gallocr.New(cpu.DefaultBufferType())
	if err != nil {
		t.Fatal(err)
	}
	defer a.Free()
	if err := a.AllocGraph(f.Graph); err != nil {
		t.Fatal(err)
	}
	if yv.Buffer == nil || yv.Buffer != y.Buffer || yv.Offset != y.Offset+64 {
		t.Fatalf("view %q not bound to its base after alloc graph", yv.Name)
	}
}

// TestAllocGraphChunkedComputes plans a chain of element-wise ops into CPU
// buffers of at most 4 KiB, so the compute buffer is split into chunks, and
// checks that every tensor lies inside one chunk's buffer and that the CPU
// backend computes the right answer from those places.
func TestAllocGraphChunkedComputes(t *testing.T) {
	bt, err := cpu.NewBufferType(cpu.BufferTypeOptions{Alignment: 32, MaxSize: 4096})
	if err != nil {
		t.Fatal(err)
	}
	const n = 256 // 1 KiB per tensor
	ctx := runtime.NewContext()
	x := ctx.NewTensor(runtime.TypeF32, n)
	x.SetInput()
	var ys []*runtime.Tensor
	for i := 0; i < 8; i++ {
		ys = append(ys, ctx.Scale(x, float32(i+1))) // eight tensors alive at once
	}
	sum := ys[0]
	for _, y := range ys[1:] {
		sum = ctx.Add(sum, y)
	}
	sum.SetOutput()
	if err := ctx.Err(); err != nil {
		t.Fatal(err)
	}
	g := runtime.NewGraph()
	for _, y := range append(ys, sum) { // every y computed before the first add
		if err := g.BuildForwardExpand(y); err != nil {
			t.Fatal(err)
		}
	}
	a, err := gallocr.New(bt)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Free()
	if err := a.AllocGraph(g); err != nil {
		t.Fatal(err)
	}
	bufs := a.Buffers(0)
	if len(bufs) < 2 {
		t.Fatalf("%d chunk buffers, want several under a 4 KiB max size", len(bufs))
	}
	for _, tn := range append(g.Leafs(), g.Nodes()...) {
		found := false
		for _, b := range bufs {
			if tn.Buffer == b && tn.Offset+tn.NBytes() <= b.Size() && b.Size() <= 4096 {
				found = true
			}
		}
		if !found {
			t.Fatalf("tensor %s is not inside one chunk buffer", tn.Name)
		}
	}
	in := make([]byte, 4*n)
	for i := 0; i < n; i++ {
		putF32(in[4*i:], float32(i))
	}
	if err := runtime.SetTensorData(x, in, 0); err != nil {
		t.Fatal(err)
	}
	be := cpu.NewBackend(cpu.BackendOptions{Threads: 2})
	defer be.Close()
	if err := be.Compute(g); err != nil {
		t.Fatal(err)
	}
	out := make([]byte, 4*n)
	if err := runtime.GetTensorData(sum, out, 0); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		if got, want := getF32(out[4*i:]), float32(i)*36; got != want { // 1+2+…+8
			t.Fatalf("sum[%d] = %g, want %g", i, got, want)
		}
	}
}

func putF32(b []byte, v float32) { binary.LittleEndian.PutUint32(b, math.Float32bits(v)) }
func getF32(b []byte) float32    { return math.Float32frombits(binary.LittleEndian.Uint32(b)) }
