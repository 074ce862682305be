package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	goruntime "runtime"
	"runtime/metrics"
	"slices"
	"strings"
	"time"

	"github.com/gogml/gogml/runtime"
)

// Timed modes, in the order of the report's columns.
const (
	ggmlFresh      = iota // ggml: new_n + reserve_n + alloc_graph + free
	gogmlFreshNum         // gogml: the same, numbering a graph it has not seen
	gogmlFreshKept        // gogml: the same, numbering kept from the last time
	ggmlWarm              // ggml: alloc_graph on a reserved allocator
	gogmlWarm             // gogml: the same
	nModes
)

// result collects one graph's comparison and samples (ns per repetition).
type result struct {
	g       *gogmlGraph
	id      int // the C side's graph id
	nodes   int
	reps    int
	samples [nModes][]sample
	// bytes sums, per gogml mode, the bytes its batches allocated per
	// repetition (the garbage a collection will cost later), one term a
	// batch.
	bytes   [nModes]float64
	batches [nModes]int
	// Plan comparison: buffer sizes equal, tensors placed alike, tensors
	// placed differently (first one described in firstDiff).
	sizesEqual        bool
	same, differ      int
	ggmlSizes, gSizes []uint64
	firstDiff         string
	// skip says why ggml cannot plan the graph ("": it can); unpadded,
	// why the graph is compared with its alloc_pad dropped ("": as is).
	skip, unpadded string
}

// prepare hands graph g to the C side, compares both plans and sizes a
// batch of repetitions to about o.batch of ggml's fresh time. A graph
// whose alloc_pad ggml 0.27.0 refuses is compared without it, on both
// sides.
func prepare(c *ggmlSide, g *gogmlGraph, dir string, i int, o options) (*result, error) {
	r := &result{g: g, nodes: g.f.Graph.NumNodes()}
	var err error
	r.id, err = load(c, g, filepath.Join(dir, fmt.Sprintf("g%03d.txt", i)))
	if msg, ok := unsupported(err); ok {
		r.g, r.unpadded = unpadded(g), msg
		r.id, err = load(c, r.g, filepath.Join(dir, fmt.Sprintf("g%03d-unpadded.txt", i)))
		if msg, ok := unsupported(err); ok {
			r.skip = msg
			return r, nil
		}
	}
	if err != nil {
		return nil, err
	}
	if err := r.compare(c); err != nil {
		return nil, err
	}
	probe, err := c.times("fresh", r.id, 5)
	if err != nil {
		return nil, err
	}
	per := max(median(wallOf(probe)), 1)
	r.reps = int(float64(o.batch.Nanoseconds()) / per)
	r.reps = min(max(r.reps, 10), o.maxReps)
	return r, nil
}

// load writes g's text form to path and hands it to the C side.
func load(c *ggmlSide, g *gogmlGraph, path string) (int, error) {
	file, err := os.Create(path)
	if err != nil {
		return 0, err
	}
	err = writeGraphText(file, g.f)
	if cerr := file.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, err
	}
	return c.load(path)
}

// unsupported reports whether err is the C side refusing a graph ggml
// cannot plan, and why.
func unsupported(err error) (string, bool) {
	if err == nil {
		return "", false
	}
	return strings.CutPrefix(err.Error(), "ggml side: unsupported: ")
}

// unpadded returns g with every buffer type's alloc_pad dropped (the same
// tensors and graph).
func unpadded(g *gogmlGraph) *gogmlGraph {
	f := *g.f
	f.BufferTypes = make([]*runtime.VirtualBufferType, len(g.f.BufferTypes))
	for i, bt := range g.f.BufferTypes {
		c := *bt
		c.AllocPad = 1
		f.BufferTypes[i] = &c
	}
	return newGogmlGraph(g.name, &f)
}

// compare plans the graph on both sides and records where they differ.
func (r *result) compare(c *ggmlSide) error {
	cs, cp, err := c.plan(r.id, len(r.g.f.Tensors))
	if err != nil {
		return err
	}
	gs, gp, err := r.g.plan()
	if err != nil {
		return err
	}
	r.ggmlSizes, r.gSizes = cs, gs
	r.sizesEqual = slices.Equal(cs, gs)
	for i := range gp {
		if gp[i] == cp[i] {
			r.same++
			continue
		}
		if r.differ == 0 {
			r.firstDiff = fmt.Sprintf("tensor %d %q: ggml %s, gogml %s", i, r.g.f.Tensors[i].Name, cp[i], gp[i])
		}
		r.differ++
	}
	return nil
}

func (p place) String() string {
	if p.typ < 0 {
		return "no place"
	}
	return fmt.Sprintf("type %d chunk %d offset %d", p.typ, p.chunk, p.offset)
}

// measure runs one batch per mode, the C side first when ggmlFirst.
func (r *result) measure(c *ggmlSide, ggmlFirst bool, settle time.Duration, gc *collector) error {
	if r.skip != "" {
		return nil
	}
	type batch struct {
		mode int
		run  func() ([]sample, float64, error)
		prep func() error // untimed, before the collection
	}
	ggml := func(mode string) func() ([]sample, float64, error) {
		return func() ([]sample, float64, error) {
			s, err := c.times(mode, r.id, r.reps)
			return s, 0, err
		}
	}
	cSide := []batch{{ggmlFresh, ggml("fresh"), nil}, {ggmlWarm, ggml("warm"), nil}}
	var graphs []*runtime.Graph
	goSide := []batch{
		{gogmlFreshNum, func() ([]sample, float64, error) { return r.g.fresh(r.reps, graphs, settle) },
			func() (err error) { graphs, err = r.g.newGraphs(r.reps + 1); return err }},
		{gogmlFreshKept, func() ([]sample, float64, error) { return r.g.fresh(r.reps, nil, settle) }, nil},
		{gogmlWarm, func() ([]sample, float64, error) { return r.g.warm(r.reps, settle) }, nil},
	}
	order := append(cSide, goSide...)
	if !ggmlFirst {
		order = append(goSide, cSide...)
	}
	for _, b := range order {
		if b.prep != nil {
			if err := b.prep(); err != nil {
				return err
			}
		}
		// Every batch, either side's, starts with the harness's own
		// garbage collected (earlier batches' graphs and samples, the C
		// side's answers), after the graphs for a numbering batch are
		// built, so that no batch is timed with a collection of garbage
		// (or a heap grown by allocations) it did not make; what gogml's
		// repetitions allocate is reported instead, and so are
		// collections that start during a batch anyway (RATIONALE.md,
		// "benchplanner collects before each batch"). gogml's batches
		// then let the runtime settle (quiesce).
		gc.before()
		s, bytes, err := b.run()
		gc.after(b.mode)
		graphs = nil
		if err != nil {
			return err
		}
		r.samples[b.mode] = append(r.samples[b.mode], s...)
		r.bytes[b.mode] += bytes
		r.batches[b.mode]++
	}
	return nil
}

// bytesPerRep returns the bytes gogml's mode allocated per repetition,
// averaged over its batches.
func (r *result) bytesPerRep(mode int) float64 {
	return r.bytes[mode] / float64(max(r.batches[mode], 1))
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func mean(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	var s float64
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

func wallOf(s []sample) []float64 {
	out := make([]float64, len(s))
	for i, x := range s {
		out[i] = x.wall
	}
	return out
}

func cpuOf(s []sample) []float64 {
	out := make([]float64, len(s))
	for i, x := range s {
		out[i] = x.cpu
	}
	return out
}

// figures returns every mode's median and mean in ns per node, of wall
// time or (cpu) of CPU time.
func (r *result) figures(cpu bool) (med, avg [nModes]float64) {
	n := float64(max(r.nodes, 1))
	for m := range nModes {
		v := wallOf(r.samples[m])
		if cpu {
			v = cpuOf(r.samples[m])
		}
		med[m], avg[m] = median(v)/n, mean(v)/n
	}
	return med, avg
}

// bestBatches returns, per mode, the lowest of its batches' median CPU
// times in ns per node (each batch holds r.reps repetitions, in the order
// run).
func (r *result) bestBatches() (best [nModes]float64) {
	n := float64(max(r.nodes, 1))
	for m := range nModes {
		v := cpuOf(r.samples[m])
		best[m] = math.Inf(1)
		for i := 0; i < len(v); i += max(r.reps, 1) {
			best[m] = min(best[m], median(v[i:min(i+max(r.reps, 1), len(v))])/n)
		}
	}
	return best
}

// collector runs the harness's collection before each batch and counts,
// per mode, the collections that start during a batch (none should:
// -samples and the report say if one did). Reading runtime/metrics
// neither stops the world nor allocates.
type collector struct {
	cycles  uint64 // collections so far when the current batch started
	s       [1]metrics.Sample
	inBatch [nModes]uint64
}

func newCollector() *collector {
	c := &collector{}
	c.s[0].Name = "/gc/cycles/total:gc-cycles"
	return c
}

// read returns the collections completed so far.
func (c *collector) read() uint64 {
	metrics.Read(c.s[:])
	return c.s[0].Value.Uint64()
}

// before collects and notes where the batch starts.
func (c *collector) before() {
	goruntime.GC()
	c.cycles = c.read()
}

// after counts the collections that ran during a batch of mode.
func (c *collector) after(mode int) {
	c.inBatch[mode] += c.read() - c.cycles
}
