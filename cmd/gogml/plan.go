package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"math"
	"math/bits"
	"os"
	"text/tabwriter"

	"github.com/gogml/gogml/gallocr"
	"github.com/gogml/gogml/runtime"
)

func runPlan(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("plan", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("o", "", "write the plan (plan/v1 JSON) to this file instead of stdout")
	stats := fs.Bool("stats", false, "print buffer sizes, the live-bytes lower bound and ratios (both strategies) instead of the plan (with -o the plan still goes to that file)")
	svg := fs.String("svg", "", "draw the memory map to this SVG file: the chosen strategy above the other, on one scale")
	strategyName := fs.String("strategy", "ggml", "placement strategy: ggml (identical to ggml) or optimized")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: gogml plan GRAPH.json [-o PLAN.json] [-stats] [-svg MAP.svg] [-strategy ggml|optimized]")
		fs.PrintDefaults()
	}
	// Accept flags before and after the file name.
	if err := fs.Parse(args); err != nil {
		return usageErr(err)
	}
	rest := fs.Args()
	if len(rest) < 1 {
		return usageErr(fmt.Errorf("missing the graph file to plan: gogml plan GRAPH.json [flags] (examples/graphs has some; -h lists the flags)"))
	}
	path := rest[0]
	if err := fs.Parse(rest[1:]); err != nil {
		return usageErr(err)
	}
	if fs.NArg() > 0 {
		return usageErr(fmt.Errorf("unexpected arguments %q", fs.Args()))
	}
	strategy, err := gallocr.ParseStrategy(*strategyName)
	if err != nil {
		return err
	}
	file, err := os.Open(path)
	if err != nil {
		return err
	}
	gf, err := runtime.ReadGraphFile(file) // reads at most MaxGraphFileSize bytes
	file.Close()
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	pl, err := gallocr.PlanFile(gf, strategy)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if *svg != "" {
		// The chosen strategy on top, the other below it on the same
		// scale (when it plans).
		plans := []*gallocr.Plan{pl}
		if alt, err := gallocr.PlanFile(gf, otherStrategy(strategy)); err == nil {
			plans = append(plans, alt)
		}
		var b bytes.Buffer
		if err := gallocr.WriteSVGs(&b, gf.BufferList(), plans, gallocr.SVGOptions{Title: path}); err != nil {
			return err
		}
		if err := os.WriteFile(*svg, b.Bytes(), 0o644); err != nil {
			return err
		}
	}
	if *stats {
		if err := printStats(stdout, gf, pl); err != nil || *out == "" {
			return err
		}
	}
	var b bytes.Buffer
	if err := gallocr.WritePlanFile(&b, gf, pl); err != nil {
		return err
	}
	if *out != "" {
		return os.WriteFile(*out, b.Bytes(), 0o644)
	}
	_, err = stdout.Write(b.Bytes())
	return err
}

func otherStrategy(s gallocr.Strategy) gallocr.Strategy {
	if s == gallocr.StrategyOptimized {
		return gallocr.StrategyGGML
	}
	return gallocr.StrategyOptimized
}

// printStats prints, per buffer type of the plan, the chunk sizes of the
// chosen strategy, both strategies' totals, the live-bytes lower bound and
// the ratios plan/bound.
func printStats(w io.Writer, gf *runtime.GraphFile, pl *gallocr.Plan) error {
	other := otherStrategy(pl.Strategy)
	alt, altErr := gallocr.PlanFile(gf, other)
	plans := map[gallocr.Strategy]*gallocr.Plan{pl.Strategy: pl}
	if altErr == nil {
		plans[other] = alt
	}
	bound := pl.LowerBound()
	fmt.Fprintf(w, "graph: %d nodes, %d leafs, %d tensors; strategy %s\n\n", gf.Graph.NumNodes(), gf.Graph.NumLeafs(), len(gf.Tensors), pl.Strategy)
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "buffer\ttype\tchunks\tggml\toptimized\tlower bound\tggml/bound\toptimized/bound\t")
	for i, bi := range gf.Buffers {
		d := pl.DynOf[i]
		if first := pl.FirstOf[d]; first != i {
			fmt.Fprintf(tw, "%d\t%s\t(shares buffer %d)\t\t\t\t\t\t\n", i, gf.BufferTypes[bi].Name(), first)
			continue
		}
		size := func(s gallocr.Strategy) (uint64, bool) {
			p, ok := plans[s]
			if !ok {
				return 0, false
			}
			return p.DynSizes()[d], true
		}
		g, gok := size(gallocr.StrategyGGML)
		o, ook := size(gallocr.StrategyOptimized)
		fmt.Fprintf(tw, "%d\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t\n", i, gf.BufferTypes[bi].Name(), len(pl.Chunks[i]),
			num(g, gok), num(o, ook), num(bound[d], true), ratio(g, bound[d], gok), ratio(o, bound[d], ook))
	}
	total := func(s gallocr.Strategy) (uint64, bool) {
		if p, ok := plans[s]; ok {
			return p.TotalSize(), true
		}
		return 0, false
	}
	var boundTotal uint64
	for _, b := range bound {
		sum, carry := bits.Add64(boundTotal, b, 0)
		boundTotal = sum
		if carry != 0 {
			boundTotal = math.MaxUint64 // saturated, as gallocr's totals
		}
	}
	g, gok := total(gallocr.StrategyGGML)
	o, ook := total(gallocr.StrategyOptimized)
	fmt.Fprintf(tw, "total\t\t\t%s\t%s\t%s\t%s\t%s\t\n", num(g, gok), num(o, ook), num(boundTotal, true),
		ratio(g, boundTotal, gok), ratio(o, boundTotal, ook))
	tw.Flush()
	if altErr != nil {
		fmt.Fprintf(w, "\n(%s strategy: %v)\n", other, altErr)
	}
	for i := range gf.Buffers {
		if pl.FirstOf[pl.DynOf[i]] == i && len(pl.Chunks[i]) > 1 {
			fmt.Fprintf(w, "buffer %d chunks (%s): %v\n", i, pl.Strategy, pl.Chunks[i])
		}
	}
	return nil
}

// num prints a byte count; gallocr saturates sums that pass 64 bits at
// math.MaxUint64, printed as ">=2^64".
func num(v uint64, ok bool) string {
	if !ok {
		return "n/a"
	}
	if v == math.MaxUint64 {
		return ">=2^64"
	}
	return fmt.Sprint(v)
}

func ratio(v, bound uint64, ok bool) string {
	if !ok || v == math.MaxUint64 || bound == math.MaxUint64 {
		return "n/a"
	}
	if bound == 0 {
		if v == 0 {
			return "1.000"
		}
		return "inf"
	}
	return fmt.Sprintf("%.3f", float64(v)/float64(bound))
}
