package gallocr

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/gogml/gogml/runtime"
)

func benchPlan(b *testing.B, name string, strategy Strategy) {
	dir := conformanceDir(b)
	data, err := os.ReadFile(filepath.Join(dir, name+".graph.json"))
	if err != nil {
		b.Fatal(err)
	}
	f, err := runtime.ParseGraphFile(data)
	if err != nil {
		b.Fatal(err)
	}
	nodes := f.Graph.NumNodes()
	pl, err := PlanFile(f, strategy)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := PlanFile(f, strategy); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(nodes), "ns/node")
	b.ReportMetric(float64(pl.TotalSize()), "bytes")
}

// BenchmarkPlanGGML plans the 32-layer llama graph with ggml's strategy.
func BenchmarkPlanGGML(b *testing.B) { benchPlan(b, "big-01", StrategyGGML) }

// BenchmarkPlanOptimized plans the 32-layer llama graph with the optimized
// strategy.
func BenchmarkPlanOptimized(b *testing.B) { benchPlan(b, "big-01", StrategyOptimized) }

// BenchmarkPlanOptimizedRandom plans the corpus's slowest random graph (a
// dense one that does not reach the bound) with the optimized strategy.
func BenchmarkPlanOptimizedRandom(b *testing.B) { benchPlan(b, "random-30", StrategyOptimized) }

// BenchmarkPlanGGMLRandom is BenchmarkPlanOptimizedRandom's baseline.
func BenchmarkPlanGGMLRandom(b *testing.B) { benchPlan(b, "random-30", StrategyGGML) }

// largeChainGraph builds n nodes of element-wise ops over a sliding window
// of recent tensors, every 40th an output that lives to the end: the
// shape used to measure how planning time grows with graph size.
func largeChainGraph(n int) *runtime.Graph {
	r := rand.New(rand.NewPCG(1, 2))
	ctx := runtime.NewContext()
	var pool []*runtime.Tensor
	for range 8 {
		x := ctx.NewTensor(runtime.TypeF32, int64(64+r.IntN(4096)))
		x.SetInput()
		pool = append(pool, x)
	}
	g := runtime.NewGraph()
	for range n {
		a := pool[len(pool)-1-r.IntN(min(len(pool), 50))]
		var y *runtime.Tensor
		switch r.IntN(3) {
		case 0:
			y = ctx.Scale(a, 2)
		case 1:
			y = ctx.NewOp(runtime.OpCont, a.Type, a.Ne, a)
		default:
			y = ctx.NewOp(runtime.OpCont, runtime.TypeF32, [runtime.MaxDims]int64{int64(64 + r.IntN(8192)), 1, 1, 1}, a)
		}
		if r.IntN(40) == 0 {
			y.SetOutput()
		}
		pool = append(pool, y)
		g.BuildForwardExpand(y)
	}
	return g
}

// BenchmarkPlanLarge plans synthetic graphs of 2,000 to 20,000 nodes with
// both strategies, reporting ns/node and the plan's size over its lower
// bound (the optimized search is bounded by optPackWork).
func BenchmarkPlanLarge(b *testing.B) {
	host := &runtime.VirtualBufferType{TypeName: "host", Align: 32, Max: runtime.NoMaxSize}
	for _, n := range []int{2000, 8000, 20000} {
		g := largeChainGraph(n)
		for _, s := range []Strategy{StrategyGGML, StrategyOptimized} {
			b.Run(fmt.Sprintf("nodes=%d/%s", n, s), func(b *testing.B) {
				var pl *Plan
				for b.Loop() {
					var err error
					if pl, err = PlanGraph(g, []runtime.BufferType{host}, PlanOptions{Strategy: s}); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(g.NumNodes()), "ns/node")
				b.ReportMetric(float64(pl.TotalSize())/float64(pl.LowerBound()[0]), "size/bound")
			})
		}
	}
}

// BenchmarkFragmentingChain plans a chain whose free list grows by a block
// every two nodes, with the plain list (ggml's search, the reference) and
// with the index chunks switch to past listLimit blocks, side by side.
func BenchmarkFragmentingChain(b *testing.B) {
	host := &runtime.VirtualBufferType{TypeName: "host", Align: 32, Max: runtime.NoMaxSize}
	for _, n := range []int{2000, 20000} {
		g := fragmentingChain(n)
		for _, mode := range []struct {
			name    string
			indexAt int
		}{{"list", math.MaxInt}, {"indexed", listLimit}} {
			b.Run(fmt.Sprintf("nodes=%d/%s", n, mode.name), func(b *testing.B) {
				for b.Loop() {
					if _, _, err := planWithIndexAt(g, []runtime.BufferType{host}, PlanOptions{}, mode.indexAt); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(g.NumNodes()), "ns/node")
			})
		}
	}
}
