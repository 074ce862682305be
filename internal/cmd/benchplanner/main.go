// Command benchplanner times gogml's graph allocator (package gallocr)
// side by side with ggml's own (ggml_gallocr of Debian's ggml 0.27.0) on
// every graph of the allocator corpus, and checks that both place every
// tensor alike.
//
// The C side (cside/gallocr_bench.c, built here with the system gcc
// against the ggml sysroot) rebuilds each graph from a plain text form
// with ggml's own tensors (shapes, strides, ops, sources, views, flags)
// over buffer types without memory, as gogml's graph files describe them.
// Both sides then run, in interleaved batches over several rounds, each
// repetition timed alone:
//
//   - fresh: a new allocator, reserve, alloc graph, free (ggml:
//     ggml_gallocr_new_n, reserve_n, alloc_graph, free). gogml's time
//     includes numbering a graph it has not seen (the allocator numbers
//     it into its pooled plan memory), which ggml does inside reserve with
//     its hash set; gogml's time on a graph that keeps its numbering
//     (runtime.Graph.Index) is shown too.
//   - warm: alloc graph on an allocator already reserved, every tensor
//     placed again.
//
// Each gogml batch starts after an untimed spin (-settle), so that the Go
// runtime's monitor thread, which the harness's own collection can set
// polling every 20 µs, has backed off (RATIONALE.md, "benchplanner lets
// the Go runtime settle before a batch"); the harness waits for the C
// side in a blocking system call, which leaves it as it was.
//
// It writes a Markdown report (make bench-planner-vs-ggml: docs/planner-bench.md).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/gogml/gogml/runtime"
)

type options struct {
	corpus, out, sysroot, only string
	samples                    string
	rounds                     int
	batch                      time.Duration
	maxReps                    int
	synth                      int
	settle                     time.Duration
}

func main() {
	var o options
	flag.StringVar(&o.corpus, "corpus", "../shared/conformance", "directory of *.graph.json files")
	flag.StringVar(&o.out, "out", "docs/planner-bench.md", "Markdown report to write (- for stdout)")
	flag.StringVar(&o.sysroot, "sysroot", "", "Debian ggml 0.27.0 sysroot (default: scripts/ggml-peer.sh path, else $GOGML_GGML_SYSROOT)")
	flag.StringVar(&o.only, "graphs", "", "regular expression: only graphs whose name matches")
	flag.IntVar(&o.rounds, "rounds", 9, "interleaved rounds (each round: one batch per side and mode per graph)")
	flag.DurationVar(&o.batch, "batch", 3*time.Millisecond, "target time of one batch of repetitions")
	flag.IntVar(&o.maxReps, "max-reps", 400, "most repetitions in one batch")
	flag.IntVar(&o.synth, "synth-layers", 96, "also plan a synthesized llama-style graph with this many layers (0: none)")
	flag.StringVar(&o.samples, "samples", "", "also write every timed repetition (graph, mode, batch, repetition, wall and CPU ns) to this tab-separated file")
	flag.DurationVar(&o.settle, "settle", 6*time.Millisecond, "untimed spin before each gogml batch, for the Go runtime's monitor thread to back off (0: none)")
	flag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "benchplanner:", err)
		os.Exit(1)
	}
}

func run(o options) error {
	if o.rounds < 1 || o.maxReps < 1 || o.batch <= 0 {
		return fmt.Errorf("-rounds, -max-reps and -batch must be positive")
	}
	if o.settle < 0 {
		return fmt.Errorf("-settle must not be negative")
	}
	var filter *regexp.Regexp
	if o.only != "" {
		var err error
		if filter, err = regexp.Compile(o.only); err != nil {
			return fmt.Errorf("-graphs: %w", err)
		}
	}
	start := time.Now()
	graphs, err := loadCorpus(o.corpus, filter)
	if err != nil {
		return err
	}
	if o.synth > 0 {
		name := fmt.Sprintf("synth-llama-%d", o.synth)
		if filter == nil || filter.MatchString(name) {
			f, err := synthLlama(o.synth)
			if err != nil {
				return fmt.Errorf("synthesized graph: %w", err)
			}
			graphs = append(graphs, newGogmlGraph(name, f))
		}
	}
	if len(graphs) == 0 {
		return fmt.Errorf("no graphs in %s", o.corpus)
	}
	root, err := findSysroot(o.sysroot)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "benchplanner")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c, err := buildGGMLSide(ctx, root, dir)
	if err != nil {
		return err
	}
	defer c.close()
	res := make([]*result, len(graphs))
	for i, g := range graphs {
		r, err := prepare(c, g, dir, i, o)
		if err != nil {
			return fmt.Errorf("%s: %w", g.name, err)
		}
		res[i] = r
	}
	clocks, err := measureClocks(c)
	if err != nil {
		return err
	}
	gc := newCollector()
	for round := range o.rounds {
		for i, r := range res {
			if err := r.measure(c, (round+i)%2 == 0, o.settle, gc); err != nil {
				return fmt.Errorf("%s: round %d: %w", r.g.name, round, err)
			}
		}
		fmt.Fprintf(os.Stderr, "benchplanner: round %d of %d done (%s)\n", round+1, o.rounds, time.Since(start).Round(time.Second))
	}
	if o.samples != "" {
		if err := writeSamples(o.samples, res); err != nil {
			return err
		}
	}
	return writeReport(o, res, gc, clocks, time.Since(start))
}

// clockCost is what the instrument adds to every repetition of a side:
// the median wall and CPU time of an empty interval, in ns.
type clockCost struct{ gogml, ggml sample }

// measureClocks times empty intervals on both sides, alternating, and
// returns each side's medians.
func measureClocks(c *ggmlSide) (clockCost, error) {
	const reps, rounds = 1000, 3
	var g, cs []sample
	for range rounds {
		s, err := c.empty(reps)
		if err != nil {
			return clockCost{}, err
		}
		cs = append(cs, s...)
		g = append(g, emptyIntervals(reps)...)
	}
	med := func(s []sample) sample { return sample{median(wallOf(s)), median(cpuOf(s))} }
	return clockCost{gogml: med(g), ggml: med(cs)}, nil
}

// loadCorpus reads every *.graph.json of dir whose name matches filter.
func loadCorpus(dir string, filter *regexp.Regexp) ([]*gogmlGraph, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.graph.json"))
	if err != nil {
		return nil, err
	}
	var out []*gogmlGraph
	for _, p := range paths {
		name := strings.TrimSuffix(filepath.Base(p), ".graph.json")
		if filter != nil && !filter.MatchString(name) {
			continue
		}
		file, err := os.Open(p)
		if err != nil {
			return nil, err
		}
		f, err := runtime.ReadGraphFile(file)
		file.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		out = append(out, newGogmlGraph(name, f))
	}
	return out, nil
}
