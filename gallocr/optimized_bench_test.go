package gallocr

import (
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
