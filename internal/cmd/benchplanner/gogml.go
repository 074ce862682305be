package main

import (
	"fmt"
	goruntime "runtime"
	"time"

	"github.com/gogml/gogml/gallocr"
	"github.com/gogml/gogml/runtime"
)

// sample is one repetition's time in ns: wall clock and the process's CPU
// time (gogml's includes its garbage collector's threads; a busy
// machine's other processes inflate neither side's CPU time).
type sample struct{ wall, cpu float64 }

// stamp is a point in time for sample.
type stamp struct {
	wall time.Time
	cpu  int64
}

// now and since read the clocks in the C side's order (wall, then CPU,
// at both ends), so that both sides' intervals hold the same clock
// reads: each wall interval holds one CPU-clock system call (the start's)
// and each CPU interval the part of one between the two readings. since
// read the CPU clock first, as it did, put both system calls inside
// gogml's wall interval: ~1.4 µs more a repetition than ggml's on this
// VM (RATIONALE.md, "benchplanner reads the clocks in the C side's
// order").
func now() stamp { return stamp{time.Now(), processCPU()} }

func since(t0 stamp) sample {
	w := time.Since(t0.wall)
	c := processCPU()
	return sample{float64(w.Nanoseconds()), float64(c - t0.cpu)}
}

// emptyIntervals times reps empty intervals on gogml's side: the clock
// reads alone, as the C side's empty command does.
func emptyIntervals(reps int) []sample {
	out := make([]sample, reps)
	for i := range out {
		t0 := now()
		out[i] = since(t0)
	}
	return out
}

// gogmlGraph is one corpus graph on gogml's side.
type gogmlGraph struct {
	name  string
	f     *runtime.GraphFile
	bufts []runtime.BufferType
}

func newGogmlGraph(name string, f *runtime.GraphFile) *gogmlGraph {
	return &gogmlGraph{name: name, f: f, bufts: f.BufferList()}
}

// clearPlaces removes the places an allocator gave, so the next alloc
// graph places every tensor again.
func clearPlaces(ix *runtime.GraphIndex) {
	for _, t := range ix.Tensors {
		if !t.Preallocated {
			t.Buffer, t.Offset = nil, 0
		}
	}
}

// reserveAlloc is the fresh path: a new allocator, reserve, alloc graph.
func (g *gogmlGraph) reserveAlloc(gr *runtime.Graph) (*gallocr.Allocator, error) {
	a, err := gallocr.NewN(g.bufts)
	if err != nil {
		return nil, err
	}
	if err := a.ReserveN(gr, g.f.NodeBufferIDs, g.f.LeafBufferIDs); err != nil {
		a.Free()
		return nil, err
	}
	if err := a.AllocGraph(gr); err != nil {
		a.Free()
		return nil, err
	}
	return a, nil
}

// newGraphs returns n new graphs over the graph file's tensors, which no
// allocator has numbered.
func (g *gogmlGraph) newGraphs(n int) ([]*runtime.Graph, error) {
	graphs := make([]*runtime.Graph, n)
	for i := range graphs {
		ng, err := runtime.NewGraphFrom(g.f.Graph.Leafs(), g.f.Graph.Nodes())
		if err != nil {
			return nil, err
		}
		graphs[i] = ng
	}
	return graphs, nil
}

// fresh times reps repetitions of new allocator + reserve + alloc graph +
// free, after one untimed (as the C side does). Given reps+1 new graphs
// (newGraphs, built before the batch: ggml's side builds its graph once,
// untimed), each repetition plans a graph it has not seen, so numbering
// the graph's tensors is part of the time; with none, every repetition
// plans the graph file's graph, which keeps its numbering
// (runtime.Graph.Index). The batch starts after settle (see quiesce). It
// also returns the bytes a repetition allocates, counted over untimed
// repetitions run after the timed ones (allocBytes).
func (g *gogmlGraph) fresh(reps int, graphs []*runtime.Graph, settle time.Duration) ([]sample, float64, error) {
	if graphs == nil {
		graphs = make([]*runtime.Graph, reps+1)
		for i := range graphs {
			graphs[i] = g.f.Graph
		}
	}
	if len(graphs) != reps+1 {
		return nil, 0, fmt.Errorf("%d graphs for %d repetitions", len(graphs), reps+1)
	}
	clearPlaces(g.f.Graph.Index())
	rep := func(gr *runtime.Graph) error {
		a, err := g.reserveAlloc(gr)
		if err != nil {
			return err
		}
		a.Free()
		return nil
	}
	out := make([]sample, reps+1)
	quiesce(settle)
	for i, gr := range graphs {
		t0 := now()
		if err := rep(gr); err != nil {
			return nil, 0, err
		}
		out[i] = since(t0)
	}
	// The graphs again, untimed: planning a graph allocates the same
	// whether or not an allocator planned it before (a new allocator
	// keeps no numbering of it, and the graph keeps none).
	bytes, err := allocBytes(len(graphs)-1, func(i int) error { return rep(graphs[i+1]) })
	return out[1:], bytes, err
}

// warm times reps alloc graphs on an allocator reserved once, every tensor
// placed again each time, after one untimed and after settle (see
// quiesce); it also returns the bytes an alloc graph allocates, counted
// after (allocBytes).
func (g *gogmlGraph) warm(reps int, settle time.Duration) ([]sample, float64, error) {
	gr := g.f.Graph
	ix := gr.Index()
	clearPlaces(ix)
	a, err := g.reserveAlloc(gr)
	if err != nil {
		return nil, 0, err
	}
	defer a.Free()
	out := make([]sample, reps+1)
	quiesce(settle)
	for i := range out {
		clearPlaces(ix)
		t0 := now()
		if err := a.AllocGraph(gr); err != nil {
			return nil, 0, err
		}
		out[i] = since(t0)
	}
	bytes, err := allocBytes(reps, func(int) error {
		clearPlaces(ix)
		return a.AllocGraph(gr)
	})
	return out[1:], bytes, err
}

// quiesce spins for d without a system call or an allocation, so that the
// Go runtime's monitor thread (sysmon) is back to polling every few
// milliseconds before a batch is timed. The harness's own collection before
// each batch can put it into polling every 20 µs (plus the timer slack)
// for the next few milliseconds (its waits on the C side did too, when
// they parked in the network poller), and the process CPU
// clock charged each wake-up (a nanosleep and two context switches) to
// whatever repetition it overlapped: see RATIONALE.md, "benchplanner lets
// the Go runtime settle before a batch".
func quiesce(d time.Duration) {
	for t0 := time.Now(); time.Since(t0) < d; {
	}
}

// allocBytes returns the bytes n calls of rep allocate, per call, after
// one uncounted call. It reads the runtime's exact count
// (runtime.ReadMemStats stops the world and flushes every P's allocation
// cache), so it runs after a batch's timed repetitions: read between the
// untimed and the first timed one, as it was, the pause and the refilled
// caches were timed in the first repetitions.
func allocBytes(n int, rep func(i int) error) (float64, error) {
	n = min(n, allocReps)
	if n <= 0 {
		return 0, nil
	}
	// A yield and one repetition first, uncounted. The yield starts the
	// goroutine's time slice anew: sysmon preempts a goroutine that has
	// run 10 ms (which the spin, a batch and this count together could
	// reach), with a signal after which it may resume on the other P,
	// whose sync.Pool caches hold none of the planner's memory; the first
	// repetition after such a move allocates the plan's arrays anew.
	goruntime.Gosched()
	if err := rep(0); err != nil {
		return 0, err
	}
	b0 := allocated()
	for i := range n {
		if err := rep(i); err != nil {
			return 0, err
		}
	}
	return float64(allocated()-b0) / float64(n), nil
}

// allocReps bounds the untimed repetitions allocBytes runs.
const allocReps = 16

// allocated returns the bytes the Go heap has handed out so far (exact:
// runtime.ReadMemStats stops the world, so never inside a batch).
func allocated() uint64 {
	var m goruntime.MemStats
	goruntime.ReadMemStats(&m)
	return m.TotalAlloc
}

// plan reserves and allocates on a fresh allocator and returns the buffer
// sizes per buffer-list entry and every tensor's place, as the C side
// reports them.
func (g *gogmlGraph) plan() ([]uint64, []place, error) {
	clearPlaces(g.f.Graph.Index())
	a, err := g.reserveAlloc(g.f.Graph)
	if err != nil {
		return nil, nil, err
	}
	defer a.Free()
	sizes := make([]uint64, len(g.bufts))
	type where struct{ typ, chunk int }
	bufs := map[runtime.Buffer]where{}
	for i := range g.bufts {
		if sizes[i], err = a.BufferSize(i); err != nil {
			return nil, nil, err
		}
		for c, b := range a.Buffers(i) {
			if _, ok := bufs[b]; !ok {
				bufs[b] = where{g.f.Buffers[i], c}
			}
		}
	}
	places := make([]place, len(g.f.Tensors))
	for i, t := range g.f.Tensors {
		places[i] = place{-1, -1, 0}
		if t.Buffer == nil {
			continue
		}
		w, ok := bufs[t.Buffer]
		if !ok {
			return nil, nil, fmt.Errorf("tensor %d %q is in a buffer that is not the allocator's", i, t.Name)
		}
		places[i] = place{w.typ, w.chunk, t.Offset}
	}
	return sizes, places, nil
}
