package gallocr

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/gogml/gogml/runtime"
)

// conformanceDir finds ../shared/conformance beside the checkout (CI lays
// shared/ there), or a shared/ inside it.
func conformanceDir(t testing.TB) string {
	for _, d := range []string{"../../shared/conformance", "../shared/conformance"} {
		if st, err := os.Stat(d); err == nil && st.IsDir() {
			return d
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("shared/conformance not found beside the checkout")
	}
	t.Skip("shared/conformance not found")
	return ""
}

func loadGraphFile(t testing.TB, path string) *runtime.GraphFile {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := runtime.ParseGraphFile(data)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return f
}

// forEachCorpusGraph runs test on every graph of the corpus, as a subtest
// named after the graph.
func forEachCorpusGraph(t *testing.T, test func(t *testing.T, dir, name string, f *runtime.GraphFile)) {
	dir := conformanceDir(t)
	graphs, _ := filepath.Glob(filepath.Join(dir, "*.graph.json"))
	if len(graphs) == 0 {
		t.Fatal("no graphs in corpus")
	}
	for _, gpath := range graphs {
		name := strings.TrimSuffix(filepath.Base(gpath), ".graph.json")
		t.Run(name, func(t *testing.T) { test(t, dir, name, loadGraphFile(t, gpath)) })
	}
}

// TestConformance plans every graph of the corpus and compares the result
// with the plan ggml computed, as parsed JSON values; it also plans each
// graph with every free list indexed, and parses both plan files strictly.
func TestConformance(t *testing.T) {
	forEachCorpusGraph(t, func(t *testing.T, dir, name string, f *runtime.GraphFile) {
		pl, err := PlanFile(f, StrategyGGML)
		if err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		if err := WritePlanFile(&got, f, pl); err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(filepath.Join(dir, name+".plan.json"))
		if err != nil {
			t.Fatal(err)
		}
		// Both plan files parse strictly (ParsePlanFile).
		if _, err := ParsePlanFile(want); err != nil {
			t.Fatalf("ggml's plan: %v", err)
		}
		if _, err := ParsePlanFile(got.Bytes()); err != nil {
			t.Fatalf("our plan: %v", err)
		}
		// Free lists indexed from their first freed block (instead of past
		// listLimit blocks) give the same plan.
		ix, _, err := planWithIndexAt(f.Graph, f.BufferList(), PlanOptions{NodeBufferIDs: f.NodeBufferIDs, LeafBufferIDs: f.LeafBufferIDs}, 0)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(pl.Placements, ix.Placements) || !reflect.DeepEqual(pl.Chunks, ix.Chunks) {
			t.Error("indexed free lists change the plan")
		}
		var gv, wv any
		if err := json.Unmarshal(got.Bytes(), &gv); err != nil {
			t.Fatalf("our plan is not JSON: %v", err)
		}
		if err := json.Unmarshal(want, &wv); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(gv, wv) {
			t.Errorf("plan differs from ggml's:\n%s", diffPlans(gv, wv))
		}
	})
}

func diffPlans(got, want any) string {
	g, w := got.(map[string]any), want.(map[string]any)
	var out []string
	if !reflect.DeepEqual(g["buffers"], w["buffers"]) {
		out = append(out, "buffers: got "+toJSON(g["buffers"])+" want "+toJSON(w["buffers"]))
	}
	gt, _ := g["tensors"].([]any)
	wt, _ := w["tensors"].([]any)
	for i := 0; i < len(gt) && i < len(wt) && len(out) < 8; i++ {
		if !reflect.DeepEqual(gt[i], wt[i]) {
			out = append(out, "got  "+toJSON(gt[i])+"\n  want "+toJSON(wt[i]))
		}
	}
	if len(gt) != len(wt) {
		out = append(out, "tensor counts differ")
	}
	return strings.Join(out, "\n  ")
}

func toJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
