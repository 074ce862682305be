package main

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"slices"
	"time"

	"github.com/gogml/gogml/internal/ggmlpeer"
)

// summary aggregates one ratio (gogml ÷ ggml median time) over graphs.
type summary struct {
	wins, n      int     // graphs where gogml's median is at most ggml's
	worst        float64 // largest ratio
	worstGraph   string
	logSum       float64
	maxTail      float64 // largest gogml mean ÷ median
	maxTailGraph string
}

func (s *summary) add(name string, ratio, tail float64) {
	s.n++
	if ratio <= 1 {
		s.wins++
	}
	if ratio > s.worst {
		s.worst, s.worstGraph = ratio, name
	}
	if tail > s.maxTail {
		s.maxTail, s.maxTailGraph = tail, name
	}
	s.logSum += math.Log(ratio)
}

func (s *summary) geomean() float64 { return math.Exp(s.logSum / float64(max(s.n, 1))) }

func writeReport(o options, res []*result, gc *collector, clocks clockCost, elapsed time.Duration) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# gogml's graph allocator vs ggml's (ggml_gallocr, Debian ggml 0.27.0)\n\n")
	fmt.Fprintf(&b, "Written by `make bench-planner-vs-ggml` (`go run ./internal/cmd/benchplanner`): %d graphs, %d interleaved rounds, batches of about %s per side and mode, each repetition timed alone; machine: %s; %s; took %s.\n\n",
		len(res), o.rounds, o.batch, ggmlpeer.CPUModel(), time.Now().UTC().Format("2006-01-02 15:04 UTC"), elapsed.Round(time.Second))
	b.WriteString("Both allocators plan the same graphs: the corpus's graph files (and a synthesized llama graph of ~3,000 nodes), rebuilt on ggml's side as ggml tensors (shapes, strides, ops, sources, views, flags) over buffer types without memory. ")
	b.WriteString("*fresh*: a new allocator, reserve, alloc graph, free; gogml's time includes numbering a new graph over the same tensors, which the allocator does into its pooled plan memory (ggml hashes its tensors inside reserve, into a hash set it allocates); *kept* is gogml on a graph that keeps its numbering (runtime.Graph.Index). ")
	b.WriteString("*warm*: alloc graph on an allocator already reserved, every tensor placed again. ")
	b.WriteString("Each repetition is timed by the wall clock and by the process's CPU time (gogml's includes its garbage collector's threads; other processes on a busy machine inflate neither). ")
	b.WriteString("Both sides time each batch the same way: the harness first builds what the batch needs (gogml: the new graphs of a numbering batch), then collects its garbage (earlier batches' graphs, the C side's answers, earlier samples), so no batch is timed with a collection of garbage it did not make (collections that started during a batch anyway are counted below), and each batch starts with one untimed repetition, so neither side's first repetition pays for the caches the other side left; a collection that gogml's own repetitions start is timed where it falls, and what they allocate is shown below. ")
	fmt.Fprintf(&b, "Before each gogml batch the harness also spins for %s (untimed, no system call), so that the Go runtime's monitor thread, which the harness's collection can set polling every 20 µs, is back to polling every few milliseconds: the process CPU clock charged its wake-ups to gogml's repetitions. The harness waits for the C side's answers in a blocking system call, not in the runtime's poller, so that the monitor thread does not fall asleep during a C batch and restart at 20 µs polling after it; it keeps waking every few milliseconds during C batches too, on the other vCPU. gogml's allocation is counted over untimed repetitions after each batch (the exact count stops the world). ", o.settle)
	fmt.Fprintf(&b, "Both sides read the clocks alike, wall then CPU at each end of a repetition, the CPU clock by a system call (it has no vDSO fast path), so a repetition's wall time holds one such call and its CPU time about one; an empty interval measures %.0f ns wall / %.0f ns CPU on gogml's side and %.0f / %.0f on ggml's (medians), which every repetition of either side includes. ",
		clocks.gogml.wall, clocks.gogml.cpu, clocks.ggml.wall, clocks.ggml.cpu)
	b.WriteString("Times are ns per node; ratio is gogml's median ÷ ggml's (below 1: gogml faster); tail is mean ÷ median.\n\n")

	var sums [2][3]summary // [wall, cpu][fresh, kept, warm]
	var best [3]summary    // CPU, ratio of each side's fastest batch median
	plansEqual, sizesEqual := 0, 0
	var skipped []*result
	for _, r := range res {
		if r.skip != "" {
			skipped = append(skipped, r)
			continue
		}
		for c, cpu := range []bool{false, true} {
			m, a := r.figures(cpu)
			sums[c][0].add(r.g.name, m[gogmlFreshNum]/m[ggmlFresh], a[gogmlFreshNum]/m[gogmlFreshNum])
			sums[c][1].add(r.g.name, m[gogmlFreshKept]/m[ggmlFresh], a[gogmlFreshKept]/m[gogmlFreshKept])
			sums[c][2].add(r.g.name, m[gogmlWarm]/m[ggmlWarm], a[gogmlWarm]/m[gogmlWarm])
		}
		b := r.bestBatches()
		best[0].add(r.g.name, b[gogmlFreshNum]/b[ggmlFresh], 0)
		best[1].add(r.g.name, b[gogmlFreshKept]/b[ggmlFresh], 0)
		best[2].add(r.g.name, b[gogmlWarm]/b[ggmlWarm], 0)
		if r.sizesEqual {
			sizesEqual++
		}
		if r.sizesEqual && r.differ == 0 {
			plansEqual++
		}
	}
	// Each mode's tail: mean ÷ median, averaged over graphs, and how many
	// stay within 1.2.
	type tail struct {
		sum    float64
		within int
	}
	var tails [2][nModes]tail // [wall, cpu][mode]
	for _, r := range res {
		if r.skip != "" {
			continue
		}
		for c, cpu := range []bool{false, true} {
			m, a := r.figures(cpu)
			for mode := range nModes {
				t := a[mode] / m[mode]
				tails[c][mode].sum += t
				if t <= 1.2 {
					tails[c][mode].within++
				}
			}
		}
	}
	b.WriteString("## Summary\n\n| mode | clock | graphs where gogml ≤ ggml | geometric mean ratio | worst ratio | gogml's largest tail |\n| --- | --- | --- | --- | --- | --- |\n")
	for k, mode := range []string{"fresh, numbering counted", "fresh, numbering kept", "warm"} {
		for c, clock := range []string{"wall", "CPU"} {
			s := &sums[c][k]
			fmt.Fprintf(&b, "| %s | %s | %d of %d | %.2f | %.2f (%s) | %.2f (%s) |\n", mode, clock, s.wins, s.n, s.geomean(), s.worst, s.worstGraph, s.maxTail, s.maxTailGraph)
		}
	}
	b.WriteString("\nBatch by batch, each side's median flips between two levels about 1.5× apart (on the shared 2-vCPU machine: likely the other vCPU, which shares the core, busy or not; RATIONALE.md, \"benchplanner's medians flip between two speeds a batch\"), so a graph whose gogml batches were mostly at the slow level and ggml's at the fast one shows up to 1.5× its ratio at equal levels. The same ratios from each side's fastest batch (median of its repetitions, CPU time; not the headline figure):\n\n| mode | graphs where gogml ≤ ggml | geometric mean ratio | worst ratio |\n| --- | --- | --- | --- |\n")
	for k, mode := range []string{"fresh, numbering counted", "fresh, numbering kept", "warm"} {
		s := &best[k]
		fmt.Fprintf(&b, "| %s | %d of %d | %.2f | %.2f (%s) |\n", mode, s.wins, s.n, s.geomean(), s.worst, s.worstGraph)
	}
	compared := max(len(res)-len(skipped), 1)
	b.WriteString("\nTails (mean ÷ median of single repetitions, averaged over graphs; in brackets, graphs within 1.2):\n\n| clock | ggml fresh | gogml fresh, numbering counted | gogml fresh, numbering kept | ggml warm | gogml warm |\n| --- | --- | --- | --- | --- | --- |\n")
	for c, clock := range []string{"wall", "CPU"} {
		fmt.Fprintf(&b, "| %s |", clock)
		for _, mode := range []int{ggmlFresh, gogmlFreshNum, gogmlFreshKept, ggmlWarm, gogmlWarm} {
			t := tails[c][mode]
			fmt.Fprintf(&b, " %.2f (%d of %d) |", t.sum/float64(compared), t.within, compared)
		}
		b.WriteString("\n")
	}
	// What gogml's repetitions allocate: the garbage whose collection is
	// timed only when it falls inside a batch.
	b.WriteString("\ngogml's heap allocation per repetition (bytes; mean over graphs, largest):")
	for k, mode := range []int{gogmlFreshNum, gogmlFreshKept, gogmlWarm} {
		var sum, most float64
		var mostGraph string
		for _, r := range res {
			if r.skip != "" {
				continue
			}
			v := r.bytesPerRep(mode)
			sum += v
			if v >= most {
				most, mostGraph = v, r.g.name
			}
		}
		sep := map[bool]string{true: " ", false: "; "}[k == 0]
		fmt.Fprintf(&b, "%s%s %.0f (%.0f, %s)", sep, []string{"fresh, numbering counted", "fresh, numbering kept", "warm"}[k], sum/float64(compared), most, mostGraph)
	}
	b.WriteString(".\n")
	fmt.Fprintf(&b, "\nCollections that started during a batch (timed where they fell): ggml fresh %d, gogml fresh with numbering %d, kept %d, ggml warm %d, gogml warm %d.\n",
		gc.inBatch[ggmlFresh], gc.inBatch[gogmlFreshNum], gc.inBatch[gogmlFreshKept], gc.inBatch[ggmlWarm], gc.inBatch[gogmlWarm])
	fmt.Fprintf(&b, "\nPlans: ggml's buffer sizes equal gogml's on %d of %d graphs; every tensor placed alike on %d.\n", sizesEqual, len(res)-len(skipped), plansEqual)
	var unpadded []*result
	for _, r := range res {
		if r.unpadded != "" && r.skip == "" {
			unpadded = append(unpadded, r)
		}
	}
	listGraphs(&b, unpadded, fmt.Sprintf("%d graphs (marked † below) are compared with their buffer types' `alloc_pad` dropped on both sides: ggml 0.27.0 asserts that a buffer type pads no tensor's alloc size beyond its bytes (but for quantized types and a few ops), which `alloc_pad` does:", len(unpadded)))
	listGraphs(&b, skipped, fmt.Sprintf("%d graphs are not compared (ggml cannot plan them even so):", len(skipped)))
	b.WriteString("\n")

	b.WriteString("## Per graph (CPU time; wall-clock ratios at the end)\n\n| graph | nodes | reps | ggml fresh | gogml fresh | ratio | tail | gogml kept | ratio | ggml warm | gogml warm | ratio | tail | ggml tail (fresh) | wall ratio fresh / kept / warm | plan |\n")
	b.WriteString("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n")
	sorted := slices.Clone(res)
	slices.SortStableFunc(sorted, func(x, y *result) int { return y.nodes - x.nodes })
	for _, r := range sorted {
		if r.skip != "" {
			continue
		}
		m, a := r.figures(true)
		w, _ := r.figures(false)
		plan := "same"
		switch {
		case !r.sizesEqual:
			plan = fmt.Sprintf("sizes differ: ggml %v, gogml %v", r.ggmlSizes, r.gSizes)
		case r.differ > 0:
			plan = fmt.Sprintf("sizes same; %d tensors placed differently (%s)", r.differ, r.firstDiff)
		}
		fmt.Fprintf(&b, "| %s | %d | %d×%d | %.0f | %.0f | %.2f | %.2f | %.0f | %.2f | %.0f | %.0f | %.2f | %.2f | %.2f | %.2f / %.2f / %.2f | %s |\n",
			r.g.name+map[bool]string{false: "", true: " †"}[r.unpadded != ""], r.nodes, o.rounds, r.reps, m[ggmlFresh], m[gogmlFreshNum], m[gogmlFreshNum]/m[ggmlFresh], a[gogmlFreshNum]/m[gogmlFreshNum],
			m[gogmlFreshKept], m[gogmlFreshKept]/m[ggmlFresh], m[ggmlWarm], m[gogmlWarm], m[gogmlWarm]/m[ggmlWarm], a[gogmlWarm]/m[gogmlWarm], a[ggmlFresh]/m[ggmlFresh],
			w[gogmlFreshNum]/w[ggmlFresh], w[gogmlFreshKept]/w[ggmlFresh], w[gogmlWarm]/w[ggmlWarm], plan)
	}
	if o.out == "-" {
		_, err := os.Stdout.Write(b.Bytes())
		return err
	}
	if err := os.WriteFile(o.out, b.Bytes(), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "benchplanner: wrote %s\n", o.out)
	os.Stderr.Write(b.Bytes()[:bytes.Index(b.Bytes(), []byte("## Per graph"))])
	return nil
}

// listGraphs writes intro and the names of rs, if any.
func listGraphs(b *bytes.Buffer, rs []*result, intro string) {
	if len(rs) == 0 {
		return
	}
	b.WriteString(intro)
	for i, r := range rs {
		sep := ", "
		if i == 0 {
			sep = " "
		}
		fmt.Fprintf(b, "%s%s", sep, r.g.name)
	}
	b.WriteString(".\n")
}

// modeNames names the timed modes in the samples file.
var modeNames = [nModes]string{"ggml-fresh", "gogml-fresh-numbered", "gogml-fresh-kept", "ggml-warm", "gogml-warm"}

// writeSamples writes every timed repetition to path, one a line:
// graph, nodes, mode, batch (in the order run), repetition within the
// batch, wall ns, CPU ns.
func writeSamples(path string, res []*result) error {
	var b bytes.Buffer
	b.WriteString("graph\tnodes\tmode\tbatch\trep\twall\tcpu\n")
	for _, r := range res {
		for m := range nModes {
			for i, s := range r.samples[m] {
				fmt.Fprintf(&b, "%s\t%d\t%s\t%d\t%d\t%.0f\t%.0f\n", r.g.name, r.nodes, modeNames[m], i/max(r.reps, 1), i%max(r.reps, 1), s.wall, s.cpu)
			}
		}
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}
