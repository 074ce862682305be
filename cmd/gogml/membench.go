package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"github.com/gogml/gogml/membench"
	"github.com/gogml/gogml/membench/providers"
	"github.com/gogml/gogml/runtime"
)

// runMembench is `gogml membench`: it measures every available buffer type
// and prints a table, optionally writing every sample as JSON and a plot.
func runMembench(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("membench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: gogml membench [flags]")
		fmt.Fprintln(stderr, "Measures allocation, clear, set/get, copy and first-touch speed of every buffer type over power-of-two sizes.")
		fs.PrintDefaults()
	}
	minS := fs.String("min", "4K", "smallest size (K, M, G suffixes are powers of 1024)")
	maxS := fs.String("max", "", "largest size (default: 64M, or the smallest max buffer size of the types if lower)")
	reps := fs.Int("reps", membench.DefaultReps, "timed repetitions per figure")
	warmup := fs.Int("warmup", membench.DefaultWarmup, "untimed warm-up runs per figure (0 for none)")
	sample := fs.String("sample", "4M", "bytes one sample moves at least, repeating small operations")
	types := fs.String("types", "", "comma-separated buffer types to measure (default: all available)")
	ops := fs.String("ops", "", "comma-separated operations: alloc_free,first_touch,clear,set,get,set_pinned,get_pinned,copy,copy_to,copy_from (default: all)")
	jsonPath := fs.String("json", "", "write every sample as JSON to this file")
	plotPath := fs.String("plot", "", "draw bandwidth against size to this .png or .svg file")
	rpcEndpoints := fs.String("rpc", "", "also measure the devices of these ggml RPC servers (HOST:PORT, comma separated)")
	quiet := fs.Bool("q", false, "no progress on stderr (a line rewritten in place on a terminal, a line per size otherwise)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return usageErr(err)
	}
	if fs.NArg() > 0 {
		return usageErr(fmt.Errorf("unexpected arguments %q", fs.Args()))
	}
	if *plotPath != "" {
		if err := membench.CheckPlotPath(*plotPath); err != nil {
			return fmt.Errorf("-plot: %w", err)
		}
	}
	var cfg membench.Config
	var err error
	if cfg.MinSize, err = membench.ParseSize(*minS); err != nil {
		return fmt.Errorf("-min: %w", err)
	}
	if *maxS != "" {
		if cfg.MaxSize, err = membench.ParseSize(*maxS); err != nil {
			return fmt.Errorf("-max: %w", err)
		}
		if cfg.MaxSize == 0 {
			return errors.New("-max: must be positive")
		}
	}
	if cfg.SampleBytes, err = membench.ParseSize(*sample); err != nil {
		return fmt.Errorf("-sample: %w", err)
	}
	if *reps < 1 {
		return fmt.Errorf("-reps: %d, want at least 1", *reps)
	}
	cfg.Reps = *reps
	cfg.Warmup = *warmup
	if *warmup == 0 {
		cfg.Warmup = -1
	}
	if *ops != "" {
		cfg.Ops = splitList(*ops)
	}
	if !*quiet {
		cfg.Progress = stderr
		cfg.ProgressLines = !isTerminal(stderr)
	}

	provs := providers.All()
	if *rpcEndpoints != "" {
		for _, ep := range splitList(*rpcEndpoints) {
			provs = append(provs, providers.RPC(ep))
		}
	}
	targets, closeAll, skipped, err := membench.NewRegistry(provs...).Open()
	for _, s := range skipped {
		if errors.Is(s, runtime.ErrUnsupported) {
			fmt.Fprintf(stderr, "gogml membench: skipping %v\n", s)
		} else {
			fmt.Fprintf(stderr, "gogml membench: cannot open %v\n", s)
		}
	}
	if err != nil {
		return err
	}
	defer func() {
		if err := closeAll(); err != nil {
			fmt.Fprintf(stderr, "gogml membench: closing: %v\n", err)
		}
	}()
	if *types != "" {
		targets, err = selectTargets(targets, splitList(*types))
		if err != nil {
			return err
		}
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	rep, err := membench.Run(ctx, targets, cfg)
	if err != nil {
		return err
	}
	if err := rep.WriteTable(stdout); err != nil {
		return err
	}
	if *jsonPath != "" {
		if err := writeFile(*jsonPath, rep.WriteJSON); err != nil {
			return err
		}
	}
	if *plotPath != "" {
		if err := rep.Plot(*plotPath); err != nil {
			return err
		}
	}
	return nil
}

// selectTargets keeps the targets named, in the registry's order.
func selectTargets(all []membench.Target, names []string) ([]membench.Target, error) {
	var out []membench.Target
	have := map[string]bool{}
	for _, t := range all {
		have[t.Name()] = true
		for _, n := range names {
			if strings.EqualFold(n, t.Name()) {
				out = append(out, t)
				break
			}
		}
	}
	for _, n := range names {
		found := false
		for name := range have {
			if strings.EqualFold(n, name) {
				found = true
			}
		}
		if !found {
			var avail []string
			for _, t := range all {
				avail = append(avail, t.Name())
			}
			return nil, fmt.Errorf("no buffer type %q here (available: %s)", n, strings.Join(avail, ", "))
		}
	}
	return out, nil
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func writeFile(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
