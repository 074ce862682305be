package gallocr

import (
	"path/filepath"
	"reflect"
	"testing"

	"github.com/gogml/gogml/runtime"
)

// TestPlanMemoryReuse: allocators hand their plans' arrays back for reuse
// when a reserve or Free replaces them; plans in use are never shared.
// Two allocators over different graphs reserve, reserve again, fail to
// reserve and free in turn, each time on a new graph over the graph
// file's tensors (numbered into the plan's memory, not kept by the
// graph), and each one's plan, numbering included, stays equal to
// PlanGraph's.
func TestPlanMemoryReuse(t *testing.T) {
	dir := conformanceDir(t)
	var files []*runtime.GraphFile
	for _, name := range []string{"llama-01", "big-01", "random-20"} {
		files = append(files, loadGraphFile(t, filepath.Join(dir, name+".graph.json")))
	}
	// One buffer list (graphs with a single buffer each) for all of them.
	bufts := files[0].BufferList()
	want := make([]*Plan, len(files))
	for i, f := range files {
		pl, err := PlanGraph(f.Graph, bufts, PlanOptions{NodeBufferIDs: f.NodeBufferIDs, LeafBufferIDs: f.LeafBufferIDs})
		if err != nil {
			t.Fatal(err)
		}
		want[i] = pl
	}
	allocs := make([]*Allocator, 2)
	for i := range allocs {
		a, err := NewN(bufts)
		if err != nil {
			t.Fatal(err)
		}
		defer a.Free()
		allocs[i] = a
	}
	check := func(step string, a *Allocator, k int) {
		t.Helper()
		pl := a.Plan()
		if pl == nil {
			t.Fatalf("%s: no plan", step)
		}
		for _, c := range []struct {
			what      string
			got, want any
		}{{"placements", pl.Placements, want[k].Placements}, {"blocks", pl.Blocks, want[k].Blocks},
			{"members", pl.Members, want[k].Members}, {"chunks", pl.Chunks, want[k].Chunks},
			{"tensors", pl.Index.Tensors, want[k].Index.Tensors}, {"sources", pl.Index.SrcIDs, want[k].Index.SrcIDs},
			{"view sources", pl.Index.ViewSrc, want[k].Index.ViewSrc}} {
			if !reflect.DeepEqual(c.got, c.want) {
				t.Fatalf("%s: %s of graph %d differ from PlanGraph's", step, c.what, k)
			}
		}
	}
	for round := range 6 {
		for i, a := range allocs {
			k := (round + i) % len(files)
			f := files[k]
			g, err := runtime.NewGraphFrom(f.Graph.Leafs(), f.Graph.Nodes())
			if err != nil {
				t.Fatal(err)
			}
			if err := a.ReserveN(g, f.NodeBufferIDs, f.LeafBufferIDs); err != nil {
				t.Fatal(err)
			}
			check("reserve", a, k)
			// The same graph again: its numbering moves to the new plan.
			if err := a.ReserveN(g, f.NodeBufferIDs, f.LeafBufferIDs); err != nil {
				t.Fatal(err)
			}
			check("reserve again", a, k)
			// A reserve that fails keeps the last plan.
			bad := make([]int, f.Graph.NumNodes())
			bad[0] = 99
			if err := a.ReserveN(g, bad, nil); err == nil {
				t.Fatal("buffer id 99 accepted")
			}
			check("failed reserve", a, k)
		}
		for i, a := range allocs {
			check("other's reserve", a, (round+i)%len(files))
		}
		if round%2 == 1 {
			allocs[0].Free()
			if allocs[0].Plan() != nil {
				t.Fatal("plan after Free")
			}
			check("other's free", allocs[1], (round+1)%len(files))
		}
	}
}
