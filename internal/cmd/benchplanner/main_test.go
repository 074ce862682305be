package main

import (
	"errors"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"testing"
	"time"

	"github.com/gogml/gogml/runtime"
)

// TestWriteGraphText writes a small graph with a view, a preallocated
// weight, flags, an empty source slot and buffer ids in the C side's form.
func TestWriteGraphText(t *testing.T) {
	f, err := runtime.ParseGraphFile([]byte(`{
  "format": "graph/v1",
  "buffer_types": [{"name": "host", "alignment": 32, "max_size": 0}, {"name": "dev", "alignment": 64, "max_size": 4096, "alloc_pad": 16}],
  "buffers": [0, 1],
  "tensors": [
    {"name": "w", "type": "f32", "ne": [64, 64], "op": "NONE", "preallocated": true},
    {"name": "x", "type": "f32", "ne": [64, 8], "op": "NONE", "flags": ["input"]},
    {"name": "y", "type": "f32", "ne": [64, 8], "op": "MUL_MAT", "src": [0, 1]},
    {"name": "yv", "type": "f32", "ne": [64, 4], "nb": [4, 256, 1024, 1024], "op": "VIEW", "src": [2], "view_src": 2, "view_offs": 1024},
    {"name": "z", "type": "f32", "ne": [64, 4], "op": "ADD", "src": [3, null, 1], "flags": ["output"]}
  ],
  "leafs": [0, 1],
  "nodes": [2, 3, 4],
  "leaf_buffer_ids": [0, 1],
  "node_buffer_ids": [1, 0, 1]
}`))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := writeGraphText(&b, f); err != nil {
		t.Fatal(err)
	}
	want := `gogml-planner-graph 1
buffer_types 2
32 0 1
64 4096 16
buffers 2 0 1
tensors 5
f32 NONE 0 1 -1 0 64 64 1 1 4 256 16384 16384 0
f32 NONE 1 0 -1 0 64 8 1 1 4 256 2048 2048 0
f32 MUL_MAT 0 0 -1 0 64 8 1 1 4 256 2048 2048 2 0 1
f32 VIEW 0 0 2 1024 64 4 1 1 4 256 1024 1024 1 2
f32 ADD 2 0 -1 0 64 4 1 1 4 256 1024 1024 3 3 -1 1
leafs 2 0 1
nodes 3 2 3 4
leaf_buffer_ids 2 0 1
node_buffer_ids 3 1 0 1
`
	if got := b.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestMedianMean(t *testing.T) {
	for _, tc := range []struct {
		v         []float64
		med, mean float64
	}{
		{nil, 0, 0},
		{[]float64{3}, 3, 3},
		{[]float64{4, 1, 3}, 3, 8.0 / 3},
		{[]float64{10, 1, 2, 3}, 2.5, 4},
	} {
		if m := median(tc.v); m != tc.med {
			t.Errorf("median(%v) = %v, want %v", tc.v, m, tc.med)
		}
		if m := mean(tc.v); m != tc.mean {
			t.Errorf("mean(%v) = %v, want %v", tc.v, m, tc.mean)
		}
	}
}

// TestSynthLlama: the synthesized graph has about 31 nodes per layer and
// plans.
func TestSynthLlama(t *testing.T) {
	f, err := synthLlama(4)
	if err != nil {
		t.Fatal(err)
	}
	if n := f.Graph.NumNodes(); n < 4*25 || n > 4*40 {
		t.Errorf("%d nodes for 4 layers", n)
	}
	g := newGogmlGraph("synth", f)
	sizes, places, err := g.plan()
	if err != nil {
		t.Fatal(err)
	}
	if len(sizes) != 1 || sizes[0] == 0 || len(places) != len(f.Tensors) {
		t.Errorf("sizes %v, %d places for %d tensors", sizes, len(places), len(f.Tensors))
	}
}

// TestAllocBytes: allocBytes runs one uncounted repetition (index 0) and
// then at most allocReps counted ones, none for n <= 0, passes each its
// index, divides by the repetitions it counted, and stops at the first
// error.
func TestAllocBytes(t *testing.T) {
	errRep := errors.New("rep failed")
	var sink [][]byte
	for _, tc := range []struct {
		name     string
		n        int
		fail     int // index whose repetition fails (-1: none)
		wantRuns int
		wantErr  bool
	}{
		{"none", 0, -1, 0, false},
		{"negative", -3, -1, 0, false},
		{"few", 3, -1, 4, false},
		{"bounded", 10 * allocReps, -1, allocReps + 1, false},
		{"error", 5, 2, 4, true},
		{"first fails", 5, 0, 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			runs := 0
			bytes, err := allocBytes(tc.n, func(i int) error {
				if want := max(runs-1, 0); i != want {
					t.Errorf("repetition %d got index %d, want %d", runs, i, want)
				}
				runs++
				if i == tc.fail && (runs > 1 || tc.fail == 0) {
					return errRep
				}
				sink = append(sink, make([]byte, 4096))
				return nil
			})
			if runs != tc.wantRuns {
				t.Errorf("ran %d repetitions, want %d", runs, tc.wantRuns)
			}
			if tc.wantErr != (err != nil) || err != nil && !errors.Is(err, errRep) {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			if !tc.wantErr && tc.wantRuns > 0 && bytes < 4096 {
				t.Errorf("%.0f bytes per repetition, want at least 4096", bytes)
			}
			sink = sink[:0]
		})
	}
}

// TestWriteSamples: one line per timed repetition, numbered by batch and
// position in the batch, modes named.
func TestWriteSamples(t *testing.T) {
	r := &result{g: &gogmlGraph{name: "g"}, nodes: 7, reps: 2}
	r.samples[ggmlFresh] = []sample{{10, 9}, {11, 10}, {12, 11}}
	r.samples[gogmlWarm] = []sample{{5, 4}}
	path := filepath.Join(t.TempDir(), "s.tsv")
	if err := writeSamples(path, []*result{r}); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := "graph\tnodes\tmode\tbatch\trep\twall\tcpu\n" +
		"g\t7\tggml-fresh\t0\t0\t10\t9\n" +
		"g\t7\tggml-fresh\t0\t1\t11\t10\n" +
		"g\t7\tggml-fresh\t1\t0\t12\t11\n" +
		"g\t7\tgogml-warm\t0\t0\t5\t4\n"
	if string(got) != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// TestCollector: a collection before a batch is not counted; one during
// it is, under its mode.
func TestCollector(t *testing.T) {
	c := newCollector()
	c.before()
	c.after(gogmlWarm)
	if c.inBatch != [nModes]uint64{} {
		t.Fatalf("collections counted without one in the batch: %v", c.inBatch)
	}
	c.before()
	goruntime.GC()
	c.after(gogmlFreshNum)
	if c.inBatch[gogmlFreshNum] == 0 {
		t.Errorf("a collection during the batch was not counted: %v", c.inBatch)
	}
}

// TestClocks: the raw read of the process CPU clock advances with work,
// and an empty interval, timed as a repetition is, is never negative.
func TestClocks(t *testing.T) {
	c0 := processCPU()
	if c0 <= 0 {
		t.Fatalf("process CPU clock read %d", c0)
	}
	for t0 := time.Now(); time.Since(t0) < 2*time.Millisecond; {
	}
	if c1 := processCPU(); c1 <= c0 {
		t.Errorf("process CPU clock went from %d to %d over 2 ms of spinning", c0, c1)
	}
	for i, s := range emptyIntervals(100) {
		if s.wall < 0 || s.cpu < 0 {
			t.Fatalf("empty interval %d: wall %v, CPU %v", i, s.wall, s.cpu)
		}
	}
}

// TestBestBatches: each mode's figure is the lowest batch median, per
// node, batches being r.reps repetitions in the order run.
func TestBestBatches(t *testing.T) {
	r := &result{nodes: 2, reps: 3}
	for _, v := range []float64{10, 30, 20, 4, 6, 100} { // medians 20, 6
		r.samples[ggmlFresh] = append(r.samples[ggmlFresh], sample{cpu: v})
	}
	for _, v := range []float64{8, 8, 8, 9} { // a short last batch: medians 8, 9
		r.samples[gogmlWarm] = append(r.samples[gogmlWarm], sample{cpu: v})
	}
	for _, tc := range []struct {
		mode int
		want float64
	}{
		{ggmlFresh, 3},
		{gogmlWarm, 4},
	} {
		if got := r.bestBatches()[tc.mode]; got != tc.want {
			t.Errorf("%s: best batch %v ns per node, want %v", modeNames[tc.mode], got, tc.want)
		}
	}
}
