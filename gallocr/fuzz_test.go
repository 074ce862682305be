package gallocr

import (
	"fmt"
	"testing"

	"github.com/gogml/gogml/runtime"
)

// byteSource turns fuzz input into choices; it yields zeros when exhausted.
type byteSource struct {
	data []byte
	pos  int
}

func (s *byteSource) next(n int) int {
	if n <= 1 {
		return 0
	}
	if s.pos >= len(s.data) {
		return 0
	}
	v := int(s.data[s.pos])
	s.pos++
	return v % n
}

var fuzzUnary = []runtime.Op{runtime.OpScale, runtime.OpSqr, runtime.OpSqrt, runtime.OpLog, runtime.OpUnary,
	runtime.OpRmsNorm, runtime.OpSoftMax, runtime.OpCont, runtime.OpSumRows, runtime.OpDup}
var fuzzBinary = []runtime.Op{runtime.OpAdd, runtime.OpMul, runtime.OpSub, runtime.OpDiv, runtime.OpSiluBack, runtime.OpConcat}

// randomFuzzGraph builds a random graph with in-place-eligible ops, views,
// inputs, outputs and preallocated tensors, and random buffer types.
func randomFuzzGraph(data []byte) (*runtime.Graph, []runtime.BufferType, []int, error) {
	s := &byteSource{data: data}
	ctx := runtime.NewContext()
	var pool []*runtime.Tensor
	nLeaf := 1 + s.next(4)
	for i := 0; i < nLeaf; i++ {
		t := ctx.NewTensor(runtime.TypeF32, int64(1+s.next(40)), int64(1+s.next(5)))
		t.Name = fmt.Sprintf("leaf%d", i)
		switch s.next(3) {
		case 0:
			t.SetInput()
		case 1:
			t.Preallocated = true
		}
		pool = append(pool, t)
	}
	nOps := 1 + s.next(40)
	for i := 0; i < nOps; i++ {
		a := pool[s.next(len(pool))]
		var t *runtime.Tensor
		switch k := s.next(10); {
		case k < 5:
			t = ctx.NewOp(fuzzUnary[s.next(len(fuzzUnary))], a.Type, a.Ne, a)
		case k < 8:
			b := pool[s.next(len(pool))]
			t = ctx.NewOp(fuzzBinary[s.next(len(fuzzBinary))], a.Type, a.Ne, a, b)
		case k < 9:
			n := a.Nelements()
			t = ctx.View1D(a, 1+int64(s.next(int(n))), 0)
		default:
			t = ctx.Transpose(a)
		}
		if t == nil {
			return nil, nil, nil, ctx.Err()
		}
		t.Name = fmt.Sprintf("n%d", i)
		if s.next(5) == 0 {
			t.SetOutput()
		}
		pool = append(pool, t)
	}
	g := runtime.NewGraph()
	for _, t := range pool[max(0, len(pool)-1-s.next(3)):] {
		if err := g.BuildForwardExpand(t); err != nil {
			return nil, nil, nil, err
		}
	}
	nb := 1 + s.next(3)
	var bufts []runtime.BufferType
	for i := 0; i < nb; i++ {
		maxSize := runtime.NoMaxSize
		if s.next(2) == 0 {
			maxSize = uint64(64 + s.next(2000))
		}
		bufts = append(bufts, &runtime.VirtualBufferType{TypeName: fmt.Sprint("bt", i),
			Align: 1 << s.next(8), Max: maxSize, AllocPad: uint64(1 + s.next(40))})
	}
	if s.next(2) == 0 {
		bufts = append(bufts, bufts[0]) // a repeated buffer type shares memory
	}
	nodeIDs := make([]int, g.NumNodes())
	for i := range nodeIDs {
		nodeIDs[i] = s.next(len(bufts))
	}
	return g, bufts, nodeIDs, nil
}

// checkPlanSteps verifies a plan's invariants independently of how it was made:
// alignment, bounds, no overlap between tensors alive at the same step
// (unless one reuses the other in place), outputs never overwritten after
// they are produced, inputs placed before any node.
func checkPlanSteps(t *testing.T, g *runtime.Graph, bufts []runtime.BufferType, pl *Plan) {
	t.Helper()
	ix := pl.Index
	nodes := g.Nodes()
	const never = 1 << 30
	n := len(ix.Tensors)
	birth := make([]int, n)
	death := make([]int, n)
	for i := range birth {
		birth[i], death[i] = never, -1
	}
	for _, id := range ix.Leafs {
		birth[id] = -1
	}
	for i, id := range ix.Nodes {
		if nodes[i].HasFlag(runtime.FlagInput) {
			birth[id] = -1
		}
		birth[id] = min(birth[id], i)
		for _, s := range ix.NodeSrc(i) {
			if s < 0 {
				continue
			}
			birth[s] = min(birth[s], i)
			death[s] = max(death[s], i)
			if v := ix.ViewSrc[s]; v >= 0 {
				death[v] = max(death[v], i)
			}
		}
	}
	for i, tn := range ix.Tensors {
		if tn.HasFlag(runtime.FlagOutput) {
			death[i] = never
		}
	}
	type rng struct {
		id           int
		dyn, chunk   int
		lo, hi       uint64
		block        int32
		birth, death int
	}
	blockOf := make([]int32, n)
	for i := range blockOf {
		blockOf[i] = -1
	}
	for bi := range pl.Blocks {
		for _, id := range pl.BlockTensors(bi) {
			blockOf[id] = int32(bi)
		}
	}
	var rs []rng
	for i, tn := range ix.Tensors {
		p := pl.Placements[i]
		if p.Buffer < 0 {
			continue
		}
		d := pl.DynOf[p.Buffer]
		chunks := pl.Chunks[p.Buffer]
		if p.Chunk >= len(chunks) {
			t.Fatalf("tensor %s in chunk %d of %d", tn.Name, p.Chunk, len(chunks))
		}
		if tn.ViewSrc != nil {
			if p.Offset+tn.NBytes() > chunks[p.Chunk] {
				t.Fatalf("view %s ends past its chunk", tn.Name)
			}
			continue
		}
		if p.Offset%bufts[p.Buffer].Alignment() != 0 {
			t.Fatalf("tensor %s at offset %d not aligned to %d", tn.Name, p.Offset, bufts[p.Buffer].Alignment())
		}
		if p.Offset+p.Size > chunks[p.Chunk] {
			t.Fatalf("tensor %s [%d,+%d) outside chunk of %d", tn.Name, p.Offset, p.Size, chunks[p.Chunk])
		}
		if birth[i] == never {
			t.Fatalf("tensor %s placed but never used", tn.Name)
		}
		if birth[i] >= 0 && tn.HasFlag(runtime.FlagInput) {
			t.Fatalf("input %s not placed before the nodes", tn.Name)
		}
		rs = append(rs, rng{i, d, p.Chunk, p.Offset, p.Offset + p.Size, blockOf[i], birth[i], max(death[i], birth[i])})
	}
	for x := 0; x < len(rs); x++ {
		for y := x + 1; y < len(rs); y++ {
			a, b := rs[x], rs[y]
			if a.dyn != b.dyn || a.chunk != b.chunk || a.hi <= a.lo || b.hi <= b.lo || a.lo >= b.hi || b.lo >= a.hi {
				continue
			}
			if a.block == b.block && a.block >= 0 {
				continue // in-place reuse
			}
			if a.birth <= b.death && b.birth <= a.death {
				t.Fatalf("tensors %s [%d,%d) steps %d..%d and %s [%d,%d) steps %d..%d overlap",
					ix.Tensors[a.id].Name, a.lo, a.hi, a.birth, a.death, ix.Tensors[b.id].Name, b.lo, b.hi, b.birth, b.death)
			}
		}
	}
}

func FuzzPlanInvariants(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{3, 7, 1, 2, 0, 9, 4, 4, 4, 1, 0, 0, 2, 5, 6, 7, 8, 9, 1, 2, 3})
	f.Add([]byte("in-place reuse, views and outputs: a longer seed for more ops"))
	for i := 0; i < 16; i++ {
		seed := make([]byte, 96)
		for j := range seed {
			seed[j] = byte((i*131 + j*17 + j*j) % 251)
		}
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		g, bufts, nodeIDs, err := randomFuzzGraph(data)
		if err != nil {
			return
		}
		for _, s := range []Strategy{StrategyGGML, StrategyOptimized} {
			pl, err := PlanGraph(g, bufts, PlanOptions{NodeBufferIDs: nodeIDs, Strategy: s})
			if err != nil {
				t.Fatalf("%s strategy: %v", s, err)
			}
			checkPlanSteps(t, g, bufts, pl)
		}
	})
}

// FuzzGraphFile drives gallocr end to end from graph files: parse, plan
// with both strategies and check every plan's invariants, then reserve and
// allocate through an Allocator and check that each tensor lands where the
// plan put it. Any input may be rejected with an error; none may panic,
// hang or give an unsound plan. Seeds include sizes near 2^63.
func FuzzGraphFile(f *testing.F) {
	for _, tc := range hugeGraphFiles {
		f.Add([]byte(tc.json))
	}
	f.Add([]byte(`{"format":"graph/v1","buffer_types":[{"name":"host","alignment":32,"max_size":0}],
"tensors":[{"name":"w","type":"f32","ne":[64,64],"op":"NONE","preallocated":true},{"name":"x","type":"f32","ne":[64,8],"op":"NONE","flags":["input"]},
{"name":"y","type":"f32","ne":[64,8],"op":"MUL_MAT","src":[0,1]},{"name":"yv","type":"f32","ne":[64,4],"nb":[4,256,1024,1024],"op":"VIEW","src":[2],"view_src":2,"view_offs":1024},
{"name":"z","type":"f32","ne":[64,4],"op":"SCALE","src":[3],"flags":["output"]}],"leafs":[0,1],"nodes":[2,3,4]}`))
	f.Add([]byte(`{"format":"graph/v1","buffer_types":[{"name":"dev","alignment":64,"max_size":4096,"alloc_pad":96},{"name":"host","alignment":16,"max_size":0}],
"buffers":[0,1,0],"tensors":[{"name":"a","type":"f32","ne":[300],"op":"NONE","flags":["input"]},{"name":"b","type":"f32","ne":[300],"op":"SQR","src":[0]},
{"name":"c","type":"f32","ne":[300],"op":"ADD","src":[1,0]},{"name":"d","type":"f32","ne":[900],"op":"CONCAT","src":[2,1],"flags":["output"]}],
"leafs":[0],"nodes":[1,2,3],"leaf_buffer_ids":[1],"node_buffer_ids":[0,2,1]}`))
	f.Add([]byte(`{"format":"graph/v1","buffer_types":[{"name":"dev","alignment":32,"max_size":4611686018427387904}],"tensors":[
{"name":"x0","type":"f32","ne":[1152921504606846976],"op":"NONE","flags":["input"]},{"name":"x1","type":"f32","ne":[1152921504606846975],"op":"NONE","flags":["input"]},
{"name":"y","type":"f32","ne":[1152921504606846976],"op":"ADD","src":[0,1]}],"leafs":[0,1],"nodes":[2]}`))
	f.Add([]byte(`{"format":"graph/v1","buffer_types":[{"name":"host","alignment":9223372036854775808,"max_size":9223372036854775807}],
"tensors":[{"name":"x","type":"f32","ne":[1],"op":"NONE","flags":["input"]},{"name":"y","type":"f32","ne":[1],"op":"SCALE","src":[0]}],"leafs":[0],"nodes":[1]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		gf, err := runtime.ParseGraphFile(data)
		if err != nil {
			return
		}
		if len(gf.Tensors) > 512 {
			return // the invariant check is quadratic
		}
		bufts := gf.BufferList()
		var ggml *Plan
		for _, s := range []Strategy{StrategyGGML, StrategyOptimized} {
			pl, err := PlanFile(gf, s)
			if err != nil {
				if ggml != nil {
					t.Fatalf("ggml strategy plans, %s does not: %v", s, err)
				}
				return
			}
			checkPlanSteps(t, gf.Graph, bufts, pl)
			if s == StrategyGGML {
				ggml = pl
			}
		}
		a, err := NewN(bufts)
		if err != nil {
			t.Fatal(err)
		}
		if err := a.ReserveN(gf.Graph, gf.NodeBufferIDs, gf.LeafBufferIDs); err != nil {
			t.Fatalf("plan succeeds, reserve fails: %v", err)
		}
		if err := a.AllocGraph(gf.Graph); err != nil {
			t.Fatalf("alloc graph: %v", err)
		}
		for i, tn := range ggml.Index.Tensors {
			p := ggml.Placements[i]
			if p.Buffer < 0 || !ggml.Index.InGraph[i] {
				continue
			}
			if want := a.Buffers(p.Buffer)[p.Chunk]; tn.Buffer != want || tn.Offset != p.Offset {
				t.Fatalf("tensor %q at (%v, %d), planned (buffer %d chunk %d, %d)", tn.Name, tn.Buffer, tn.Offset, p.Buffer, p.Chunk, p.Offset)
			}
		}
		a.Free()
	})
}
