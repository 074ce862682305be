package gallocr

import (
	"encoding/xml"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gogml/gogml/runtime"
)

// hugeGraphFiles are valid graph files with a leaf, an input or a node that
// no buffer can hold: sizes at 2^63 once aligned, or an alloc_pad that
// pads a tiny tensor to 2^63-1 bytes.
var hugeGraphFiles = []struct{ name, json, tensor string }{
	{"f32 input of 2^63-4 bytes", `{"format":"graph/v1","buffer_types":[{"name":"host","alignment":32,"max_size":0}],
"tensors":[{"name":"x","type":"f32","ne":[2305843009213693951],"op":"NONE","flags":["input"]},
{"name":"y","type":"f32","ne":[2305843009213693951],"op":"SCALE","src":[0]}],"leafs":[0],"nodes":[1]}`, "x"},
	{"huge alloc_pad", `{"format":"graph/v1","buffer_types":[{"name":"host","alignment":32,"max_size":0,"alloc_pad":9223372036854775807}],
"tensors":[{"name":"x","type":"f32","ne":[4],"op":"NONE","flags":["input"]},
{"name":"y","type":"f32","ne":[4],"op":"SCALE","src":[0]}],"leafs":[0],"nodes":[1]}`, "x"},
	{"huge node after a small leaf", `{"format":"graph/v1","buffer_types":[{"name":"host","alignment":32,"max_size":0}],
"tensors":[{"name":"a","type":"f32","ne":[4],"op":"NONE"},
{"name":"big","type":"f32","ne":[2305843009213693951],"op":"REPEAT","src":[0]},
{"name":"z","type":"f32","ne":[2305843009213693951],"op":"SCALE","src":[1]}],"leafs":[0],"nodes":[1,2]}`, "big"},
	{"second of two huge leafs", `{"format":"graph/v1","buffer_types":[{"name":"host","alignment":32,"max_size":0}],
"tensors":[{"name":"a","type":"f32","ne":[1152921504606846976],"op":"NONE"},
{"name":"b","type":"f32","ne":[1152921504606846976],"op":"NONE"},
{"name":"c","type":"f32","ne":[1152921504606846976],"op":"ADD","src":[0,1]}],"leafs":[0,1],"nodes":[2]}`, "b"},
}

// TestUnplaceableTensor: a tensor that cannot be placed is an error naming
// it (never a panic), with either strategy, and through an Allocator that
// stays usable afterwards.
func TestUnplaceableTensor(t *testing.T) {
	good, _ := smallGraphFile(t)
	for _, tc := range hugeGraphFiles {
		t.Run(tc.name, func(t *testing.T) {
			f, err := runtime.ParseGraphFile([]byte(tc.json))
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			for _, s := range []Strategy{StrategyGGML, StrategyOptimized} {
				_, err := PlanFile(f, s)
				if err == nil || !errors.Is(err, runtime.ErrOutOfMemory) && !errors.Is(err, runtime.ErrOverflow) {
					t.Fatalf("%s: error %v, want out of memory", s, err)
				}
				if !strings.Contains(err.Error(), `tensor "`+tc.tensor+`"`) {
					t.Fatalf("%s: error %q does not name tensor %q", s, err, tc.tensor)
				}
			}
			a, err := New(f.BufferList()[0])
			if err != nil {
				t.Fatal(err)
			}
			if err := a.AllocGraph(f.Graph); err == nil {
				t.Fatal("AllocGraph of an unplaceable graph succeeded")
			}
			if f.BufferTypes[0].AllocPad > 1 {
				return // every tensor is too large for this buffer type
			}
			// The allocator is still usable.
			if err := a.AllocGraph(good.Graph); err != nil {
				t.Fatalf("AllocGraph after a failure: %v", err)
			}
			if good.Graph.Nodes()[0].Buffer == nil {
				t.Fatal("node not placed after a failure")
			}
		})
	}
}

// fragmentingChain builds n nodes y_i = cont(y_{i-1}), each a little larger
// than the one before, every other one an output: the freed ones leave
// holes too small for anything later, so the free list grows by one block
// per two nodes (ggml aborts past 256).
func fragmentingChain(n int) *runtime.Graph {
	ctx := runtime.NewContext()
	x := ctx.NewTensor(runtime.TypeF32, 8)
	x.SetInput()
	g := runtime.NewGraph()
	prev := x
	for i := range n {
		y := ctx.NewOp(runtime.OpCont, runtime.TypeF32, [runtime.MaxDims]int64{int64(16 + 8*i), 1, 1, 1}, prev)
		if i%2 == 0 {
			y.SetOutput()
		}
		g.BuildForwardExpand(y)
		prev = y
	}
	return g
}

// planWithIndexAt plans like PlanGraph with the free-list length past which
// chunks switch to a blockIndex set to indexAt.
func planWithIndexAt(g *runtime.Graph, bufts []runtime.BufferType, opt PlanOptions, indexAt int) (*Plan, []*Dyn, error) {
	dynOf, firstOf := dynIndex(bufts)
	dyns := make([]*Dyn, len(firstOf))
	for d, i := range firstOf {
		dd, err := NewDyn(bufts[i].Alignment(), bufts[i].MaxSize())
		if err != nil {
			return nil, nil, err
		}
		dd.indexAt = indexAt
		dyns[d] = dd
	}
	pl, err := planWith(g, bufts, dynOf, firstOf, dyns, opt, nil, nil)
	return pl, dyns, err
}

// TestLongFreeListSamePlan: a free list far past ggml's 256 blocks is
// searched through the index, and the plan is the one the plain list
// gives (the reference, indexAt = MaxInt), on a fragmenting chain and on
// both buffer kinds (unlimited, chunked).
func TestLongFreeListSamePlan(t *testing.T) {
	g := fragmentingChain(3000)
	for _, bt := range []*runtime.VirtualBufferType{
		{TypeName: "host", Align: 32, Max: runtime.NoMaxSize},
		{TypeName: "dev", Align: 64, Max: 1 << 26},
	} {
		bufts := []runtime.BufferType{bt}
		ref, _, err := planWithIndexAt(g, bufts, PlanOptions{}, math.MaxInt)
		if err != nil {
			t.Fatal(err)
		}
		got, dyns, err := planWithIndexAt(g, bufts, PlanOptions{}, listLimit)
		if err != nil {
			t.Fatal(err)
		}
		indexed := false
		for _, c := range dyns[0].chunks {
			if c.indexed && c.numFree() > 256 {
				indexed = true
			}
		}
		if !indexed {
			t.Fatalf("%s: no chunk has an indexed free list of more than 256 blocks", bt.TypeName)
		}
		if !reflect.DeepEqual(ref.Placements, got.Placements) || !reflect.DeepEqual(ref.Chunks, got.Chunks) {
			t.Fatalf("%s: indexed free list changes the plan", bt.TypeName)
		}
	}
}

// FuzzDynIndexed drives two dynamic allocators with the same allocs and
// frees, one always on the plain list and one indexed from the start: every
// address and chunk size must agree.
func FuzzDynIndexed(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 200, 100, 50, 25, 12, 6, 3})
	f.Add([]byte("alloc free alloc free a longer sequence of operations"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s := &byteSource{data: data}
		maxSize := runtime.NoMaxSize
		if s.next(2) == 0 {
			maxSize = uint64(256 + 64*s.next(64))
		}
		align := uint64(1) << s.next(7)
		list, _ := NewDyn(align, maxSize)
		list.indexAt = math.MaxInt
		ix, _ := NewDyn(align, maxSize)
		ix.indexAt = 0
		type live struct {
			at   Address
			size uint64
		}
		var alive []live
		for s.pos < len(s.data) {
			if len(alive) > 0 && s.next(3) == 0 {
				k := s.next(len(alive))
				a := alive[k]
				alive = append(alive[:k], alive[k+1:]...)
				e1, e2 := list.Free(a.at, a.size), ix.Free(a.at, a.size)
				if (e1 == nil) != (e2 == nil) {
					t.Fatalf("free %v: list %v, index %v", a, e1, e2)
				}
				continue
			}
			size := uint64(1 + s.next(256)*s.next(64))
			a1, e1 := list.Alloc(size)
			a2, e2 := ix.Alloc(size)
			if a1 != a2 || (e1 == nil) != (e2 == nil) {
				t.Fatalf("alloc %d: list %v %v, index %v %v", size, a1, e1, a2, e2)
			}
			if e1 == nil {
				alive = append(alive, live{a1, size})
			}
		}
		if !reflect.DeepEqual(list.ChunkSizes(), ix.ChunkSizes()) {
			t.Fatalf("chunk sizes: list %v, index %v", list.ChunkSizes(), ix.ChunkSizes())
		}
	})
}

// TestOptBreadthMatchesWalk: the range-maximum breadth equals the walk
// over every moment of each lifetime (the former, quadratic, computation).
func TestOptBreadthMatchesWalk(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for trial := range 200 {
		n := 1 + r.IntN(60)
		items := make([]optItem, n)
		for i := range items {
			start := r.IntN(50)
			end := start + 1 + r.IntN(30)
			if r.IntN(5) == 0 {
				end = math.MaxInt
			}
			items[i] = optItem{size: uint64(1 + r.IntN(1000)), start: start, end: end}
		}
		got := optBreadth(items)
		for i, it := range items {
			var want uint64
			for at := it.start; at < min(it.end, 100); at++ {
				var live uint64
				for _, o := range items {
					if o.start <= at && at < o.end {
						live += o.size
					}
				}
				want = max(want, live)
			}
			if got[i] != want {
				t.Fatalf("trial %d item %d %+v: breadth %d, want %d", trial, i, it, got[i], want)
			}
		}
	}
}

// sliceType is a buffer type whose dynamic type is not comparable.
type sliceType struct {
	runtime.BufferType
	tags []string
}

// boxType is comparable, but may hold a value that is not.
type boxType struct {
	runtime.BufferType
	tag any
}

// TestDynIndexManyBufferTypes groups 60,000 buffer-list entries (linear
// time; the pairwise comparison took minutes) and groups them right:
// repeated types share an allocator, others (and types that cannot be
// compared) get their own.
func TestDynIndexManyBufferTypes(t *testing.T) {
	const n = 60000
	bufts := make([]runtime.BufferType, n)
	for i := range bufts {
		if i%3 == 2 {
			bufts[i] = bufts[i-1] // a repeat shares the allocator
			continue
		}
		bufts[i] = &runtime.VirtualBufferType{TypeName: "bt", Align: 32, Max: runtime.NoMaxSize}
	}
	host := bufts[0]
	bufts = append(bufts, sliceType{host, nil}, sliceType{host, nil}, boxType{host, []int{1}}, boxType{host, []int{1}}, boxType{host, 1}, boxType{host, 1})
	dynOf, firstOf := dynIndex(bufts)
	want := n - n/3 + 5
	if len(firstOf) != want {
		t.Fatalf("%d allocators, want %d", len(firstOf), want)
	}
	for i := 2; i < n; i += 3 {
		if dynOf[i] != dynOf[i-1] {
			t.Fatalf("entry %d does not share its allocator with entry %d", i, i-1)
		}
	}
	if dynOf[n+4] != dynOf[n+5] || dynOf[n] == dynOf[n+1] || dynOf[n+2] == dynOf[n+3] {
		t.Fatalf("grouping of the last entries: %v", dynOf[n:])
	}
	// A plan over all of them: a node in every 16th buffer.
	ctx := runtime.NewContext()
	x := ctx.NewTensor(runtime.TypeF32, 8)
	x.SetInput()
	g := runtime.NewGraph()
	ids := make([]int, 0, len(bufts)/16)
	for i := 0; i < len(bufts); i += 16 {
		y := ctx.Scale(x, 2)
		y.SetOutput()
		g.BuildForwardExpand(y)
		ids = append(ids, i)
	}
	if _, err := PlanGraph(g, bufts, PlanOptions{NodeBufferIDs: ids}); err != nil {
		t.Fatal(err)
	}
}

// TestDynIndexScanMatchesMap: short buffer lists, grouped by pairwise
// comparison, get the groups the map gives, with repeats, equal values,
// nil, and types that cannot be compared or hashed.
func TestDynIndexScanMatchesMap(t *testing.T) {
	host := &runtime.VirtualBufferType{TypeName: "host", Align: 32, Max: runtime.NoMaxSize}
	dev := &runtime.VirtualBufferType{TypeName: "dev", Align: 64, Max: runtime.NoMaxSize}
	for _, bufts := range [][]runtime.BufferType{
		{host, dev},
		{host, host},
		{host, dev, host, dev},
		{sliceType{host, nil}, sliceType{host, nil}, host},
		{boxType{host, []int{1}}, boxType{host, []int{1}}, boxType{host, 1}, boxType{host, 1}},
		{nil, host, nil, host},
		{dev, boxType{host, 1}, sliceType{dev, nil}, boxType{host, 1}, dev, host, boxType{host, []int{2}}, host},
	} {
		gotOf, gotFirst := dynIndexScan(bufts, make([]int, 2*len(bufts)))
		wantOf, wantFirst := dynIndexMap(bufts)
		if !slices.Equal(gotOf, wantOf) || !slices.Equal(gotFirst, wantFirst) {
			t.Errorf("%d entries: scan %v %v, map %v %v", len(bufts), gotOf, gotFirst, wantOf, wantFirst)
		}
	}
}

// TestSourcesChangedAfterBuild: a graph whose node was given itself or a
// later node as a source after it was built is an error from AllocGraph
// and PlanGraph (it used to panic or loop forever), and the allocator then
// allocates a sound graph.
func TestSourcesChangedAfterBuild(t *testing.T) {
	host := &runtime.VirtualBufferType{TypeName: "host", Align: 32, Max: runtime.NoMaxSize}
	for _, tc := range []struct {
		name   string
		mutate func(b, c *runtime.Tensor)
	}{
		{"self source", func(b, c *runtime.Tensor) { b.Src[0] = b }},
		{"later node as source", func(b, c *runtime.Tensor) { b.Src[0] = c }},
		{"self as second source", func(b, c *runtime.Tensor) { b.Src[1] = b }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := runtime.NewContext()
			x := ctx.NewTensor(runtime.TypeF32, 8)
			x.SetInput()
			b := ctx.Scale(ctx.Scale(x, 2), 2)
			c := ctx.Scale(b, 2)
			g := runtime.NewGraph()
			if err := g.BuildForwardExpand(c); err != nil {
				t.Fatal(err)
			}
			tc.mutate(b, c)
			a, _ := New(host)
			if err := a.AllocGraph(g); !errors.Is(err, runtime.ErrGraph) {
				t.Fatalf("AllocGraph: %v, want a graph error", err)
			}
			if _, err := PlanGraph(g, []runtime.BufferType{host}, PlanOptions{Strategy: StrategyOptimized}); !errors.Is(err, runtime.ErrGraph) {
				t.Fatalf("PlanGraph: %v, want a graph error", err)
			}
			good, _ := smallGraphFile(t)
			if err := a.AllocGraph(good.Graph); err != nil {
				t.Fatalf("AllocGraph after the error: %v", err)
			}
		})
	}
}

func smallGraphFile(t *testing.T) (*runtime.GraphFile, error) {
	t.Helper()
	f, err := runtime.ParseGraphFile([]byte(`{"format":"graph/v1","buffer_types":[{"name":"host","alignment":32,"max_size":0}],
"tensors":[{"name":"x","type":"f32","ne":[8],"op":"NONE","flags":["input"]},{"name":"y","type":"f32","ne":[8],"op":"SCALE","src":[0]}],"leafs":[0],"nodes":[1]}`))
	if err != nil {
		t.Fatal(err)
	}
	return f, nil
}

// TestAllocGraphAfterOtherAllocatorFreed: after allocator A allocated g
// and was freed, allocator B really allocates g (every tensor A had placed
// lands in B's buffer), and A remembers a bounded number of freed buffers
// however often it reallocates or is freed.
func TestAllocGraphAfterOtherAllocatorFreed(t *testing.T) {
	host := &runtime.VirtualBufferType{TypeName: "host", Align: 32, Max: runtime.NoMaxSize}
	f, _ := smallGraphFile(t)
	g := f.Graph
	a, _ := New(host)
	if err := a.AllocGraph(g); err != nil {
		t.Fatal(err)
	}
	freed := a.Buffers(0)
	a.Free()
	// A few freed buffers are scanned, not hashed.
	if a.retired != nil || len(a.retiredOrder) != 1 || !a.ours(freed[0]) {
		t.Fatalf("after one free: map %v, %d remembered, ours %v", a.retired != nil, len(a.retiredOrder), a.ours(freed[0]))
	}
	b, _ := New(host)
	if err := b.AllocGraph(g); err != nil {
		t.Fatal(err)
	}
	if len(b.Buffers(0)) != 1 {
		t.Fatalf("B has %d buffers, want 1", len(b.Buffers(0)))
	}
	for _, tn := range append(g.Leafs(), g.Nodes()...) {
		if tn.Buffer != b.Buffers(0)[0] {
			t.Fatalf("tensor %q is in %v, not in B's buffer", tn.Name, tn.Buffer)
		}
	}
	// A is still usable, and its memory of freed buffers is bounded.
	for i := range 3 * maxRetired {
		ctx := runtime.NewContext()
		x := ctx.NewTensor(runtime.TypeF32, int64(8+i)) // larger each time: a reallocation
		x.SetInput()
		gi := runtime.NewGraph()
		gi.BuildForwardExpand(ctx.Scale(x, 2))
		if err := a.AllocGraph(gi); err != nil {
			t.Fatal(err)
		}
		if i%2 == 0 {
			a.Free()
		}
	}
	for _, r := range a.retiredOrder {
		if !a.ours(r) {
			t.Fatal("a remembered buffer is not recognised")
		}
	}
	if len(a.retired) > maxRetired || len(a.retiredOrder) != len(a.retired) {
		t.Fatalf("allocator remembers %d freed buffers (%d in order), at most %d", len(a.retired), len(a.retiredOrder), maxRetired)
	}
}

// TestTotalsSaturate: buffer sizes and live bytes that pass 2^64 in sum
// report math.MaxUint64 instead of wrapping around (4 x 2^62 bytes once
// printed a total of 32).
func TestTotalsSaturate(t *testing.T) {
	four := `{"format":"graph/v1","buffer_types":[{"name":"a","alignment":32,"max_size":0},{"name":"b","alignment":32,"max_size":0},{"name":"c","alignment":32,"max_size":0},{"name":"d","alignment":32,"max_size":0}],
"buffers":[0,1,2,3],"tensors":[
{"name":"x0","type":"f32","ne":[1152921504606846976],"op":"NONE","flags":["input"]},{"name":"x1","type":"f32","ne":[1152921504606846976],"op":"NONE","flags":["input"]},
{"name":"x2","type":"f32","ne":[1152921504606846976],"op":"NONE","flags":["input"]},{"name":"x3","type":"f32","ne":[1152921504606846976],"op":"NONE","flags":["input"]}],
"leafs":[0,1,2,3],"nodes":[],"leaf_buffer_ids":[0,1,2,3]}`
	chunked := `{"format":"graph/v1","buffer_types":[{"name":"dev","alignment":32,"max_size":4611686018427387904}],"tensors":[
{"name":"x0","type":"f32","ne":[1152921504606846976],"op":"NONE","flags":["input"]},{"name":"x1","type":"f32","ne":[1152921504606846976],"op":"NONE","flags":["input"]},
{"name":"x2","type":"f32","ne":[1152921504606846976],"op":"NONE","flags":["input"]},{"name":"x3","type":"f32","ne":[1152921504606846976],"op":"NONE","flags":["input"]}],
"leafs":[0,1,2,3],"nodes":[]}`
	for _, tc := range []struct {
		name, json string
		dyn        uint64 // every allocator's size and bound
	}{
		{"four buffer types", four, 1 << 62},
		{"four chunks", chunked, math.MaxUint64},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := runtime.ParseGraphFile([]byte(tc.json))
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range []Strategy{StrategyGGML, StrategyOptimized} {
				pl, err := PlanFile(f, s)
				if err != nil {
					t.Fatal(err)
				}
				if got := pl.TotalSize(); got != math.MaxUint64 {
					t.Errorf("%s: total %d, want saturated", s, got)
				}
				for d, v := range pl.DynSizes() {
					if v != tc.dyn || pl.LowerBound()[d] != tc.dyn {
						t.Errorf("%s: allocator %d size %d bound %d, want %d", s, d, v, pl.LowerBound()[d], tc.dyn)
					}
				}
			}
		})
	}
}

// TestSVG: the drawing is well-formed XML whatever the tensor names
// (control characters, markup, invalid UTF-8), two plans share one byte
// scale, axes have ticks, a block far below a pixel is still drawn a
// pixel high, and the largest blocks are listed in a legend.
func TestSVG(t *testing.T) {
	f, err := runtime.ParseGraphFile([]byte(`{"format":"graph/v1","buffer_types":[{"name":"host\u0001","alignment":32,"max_size":0}],
"tensors":[{"name":"x\u0000<&>\"'\u001b[31m","type":"f32","ne":[1048576],"op":"NONE","flags":["input"]},
{"name":"tiny\u0007","type":"f32","ne":[1],"op":"NONE","flags":["input"]},
{"name":"a","type":"f32","ne":[1048576],"op":"SCALE","src":[0]},
{"name":"b","type":"f32","ne":[1048576],"op":"ADD","src":[2,1]},
{"name":"c","type":"f32","ne":[2097152],"op":"CONCAT","src":[3,2],"flags":["output"]}],
"leafs":[0,1],"nodes":[2,3,4]}`))
	if err != nil {
		t.Fatal(err)
	}
	f.Tensors[2].Name = "bad utf-8 \xff\xfe"
	ggml, err := PlanFile(f, StrategyGGML)
	if err != nil {
		t.Fatal(err)
	}
	opt, err := PlanFile(f, StrategyOptimized)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := WriteSVGs(&b, f.BufferList(), []*Plan{ggml, opt}, SVGOptions{Title: "t\u0002", PanelHeight: 400}); err != nil {
		t.Fatal(err)
	}
	svg := b.String()
	dec := xml.NewDecoder(strings.NewReader(svg))
	var frames []float64
	minHeight := math.Inf(1)
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v", err)
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "rect" {
			attrs := map[string]string{}
			for _, a := range se.Attr {
				attrs[a.Name.Local] = a.Value
			}
			h, _ := strconv.ParseFloat(attrs["height"], 64)
			if attrs["fill"] == "#f6f6f6" {
				frames = append(frames, h)
			} else if attrs["height"] != "100%" {
				minHeight = min(minHeight, h)
			}
		}
	}
	if len(frames) != 2 {
		t.Fatalf("%d panels, want 2", len(frames))
	}
	gs, os := float64(ggml.Chunks[0][0]), float64(opt.Chunks[0][0])
	if want := frames[0] * os / gs; math.Abs(frames[1]-max(want, svgMinPanel)) > 0.2 {
		t.Errorf("panel heights %v for sizes %v and %v: not one scale", frames, gs, os)
	}
	if minHeight < svgMinMark {
		t.Errorf("a block is drawn %.2f px high", minHeight)
	}
	for _, want := range []string{"<line", "ggml strategy", "optimized strategy", "largest blocks", `\x07`, `\x00`, "&lt;&amp;&gt;"} {
		if !strings.Contains(svg, want) {
			t.Errorf("SVG lacks %q", want)
		}
	}
}

// TestUnlimitedHasOneChunk: a dynamic allocator without a size limit never
// opens a second chunk (it did when its one block was too small); the
// request is an out-of-memory error instead, and the allocator still works.
func TestUnlimitedHasOneChunk(t *testing.T) {
	d, err := NewDyn(32, runtime.NoMaxSize)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Alloc(1 << 62); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Alloc(1 << 62); !errors.Is(err, runtime.ErrOutOfMemory) {
		t.Fatalf("second 2^62-byte alloc: %v, want out of memory", err)
	}
	if d.NumChunks() != 1 {
		t.Fatalf("%d chunks, want exactly 1", d.NumChunks())
	}
	if at, err := d.Alloc(64); err != nil || at.Chunk != 0 {
		t.Fatalf("small alloc after the failure: %v %v", at, err)
	}
}

const goodPlan = `{
  "format": "plan/v1",
  "buffers": [
    {"buffer_type": 0, "chunks": [4096]}
  ],
  "tensors": [
    {"id": 0, "name": "w", "buffer": -1},
    {"id": 1, "name": "x", "buffer": 0, "chunk": 0, "offset": 0, "size": 2048}
  ]
}`

// TestParsePlanFile: plan files parse strictly — keys exactly as spelled
// and once per object — and every place lies inside its chunk.
func TestParsePlanFile(t *testing.T) {
	if _, err := ParsePlanFile([]byte(goodPlan)); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, old, new, want string }{
		{"upper-case key", `"offset": 0`, `"Offset": 0`, `"Offset"`},
		{"duplicate key", `"offset": 0`, `"offset": 0, "offset": 8`, "twice"},
		{"duplicate key, other case", `"offset": 0`, `"offset": 0, "OFFSET": 8`, `"OFFSET"`},
		{"duplicate top key", `"format": "plan/v1",`, `"format": "plan/v1", "format": "plan/v1",`, "twice"},
		{"unknown key", `"size": 2048`, `"size": 2048, "color": 1`, "color"},
		{"wrong format", `"plan/v1"`, `"plan/v2"`, "format"},
		{"id out of order", `"id": 1`, `"id": 2`, "id 2"},
		{"buffer out of range", `"buffer": 0`, `"buffer": 1`, "buffer 1"},
		{"chunk out of range", `"chunk": 0`, `"chunk": 1`, "chunk 1"},
		{"outside its chunk", `"offset": 0`, `"offset": 3072`, "outside"},
		{"offset near 2^64", `"offset": 0`, `"offset": 18446744073709551615`, "outside"},
		{"trailing data", "  ]\n}", "  ]\n}{}", "trailing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := strings.Replace(goodPlan, tc.old, tc.new, 1)
			if data == goodPlan {
				t.Fatal("edit did not apply")
			}
			_, err := ParsePlanFile([]byte(data))
			if !errors.Is(err, runtime.ErrFormat) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want ErrFormat mentioning %s", err, tc.want)
			}
		})
	}
}

func FuzzParsePlanFile(f *testing.F) {
	f.Add([]byte(goodPlan))
	f.Add([]byte(strings.Replace(goodPlan, `"offset": 0`, `"offset": 18446744073709551615`, 1)))
	f.Add([]byte(`{"format":"plan/v1","buffers":[{"buffer_type":0,"chunks":[9223372036854775808]}],"tensors":[{"id":0,"name":"a\u0000","buffer":0,"chunk":0,"offset":9223372036854775807,"size":1}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		pf, err := ParsePlanFile(data)
		if err != nil {
			return
		}
		for i, tn := range pf.Tensors {
			if tn.Buffer >= 0 && tn.Offset+tn.Size > pf.Buffers[tn.Buffer].Chunks[tn.Chunk] {
				t.Fatalf("tensor %d outside its chunk accepted", i)
			}
		}
	})
}
