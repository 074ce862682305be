package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gogml/gogml/backends/cpu"
	"github.com/gogml/gogml/device"
	"github.com/gogml/gogml/gallocr"
	"github.com/gogml/gogml/membench"
	"github.com/gogml/gogml/model/llama"
	"github.com/gogml/gogml/runtime"
)

// errBackendUnavailable is wrapped when the chosen backend cannot be opened.
var errBackendUnavailable = errors.New("backend not available")

// runOptions are gogml run's flags.
type runOptions struct {
	backend  string
	device   int
	threads  int
	prompt   string
	n        int
	typ      string
	strategy string
	maxBuf   string
	cfg      llama.Config
	quiet    bool
	warmup   bool
	perToken bool
	model    string
	text     string
	devices  string
	split    string
	samp     sampleFlags
	cpuProf  string
	noRepack bool
}

func parseRunFlags(args []string, stderr io.Writer) (*runOptions, error) {
	o := &runOptions{cfg: llama.DefaultConfig()}
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: gogml run [flags]\n\nRuns a small llama-style decoder with seeded random weights: the prompt in one\nbatch, then generation one token at a time (greedy, or sampled with -temp). Prints the memory plan,\nper-token times, tokens/s, the generated ids and a logits checksum.\n\nflags:")
		fs.PrintDefaults()
	}
	fs.StringVar(&o.backend, "backend", "cpu", "compute backend: cpu, cuda or opengl")
	fs.IntVar(&o.device, "device", 0, "device index for cuda and opengl")
	fs.StringVar(&o.devices, "devices", "", "spread the model (built-in or -model) over these devices (replaces -backend): cpu, cuda[:N], opengl[:N], rpc://HOST:PORT[/N], comma separated; list the CPU last")
	fs.StringVar(&o.split, "split", "", "with -devices: each device's share of the layers, comma separated (default: equal)")
	fs.IntVar(&o.threads, "threads", 0, fmt.Sprintf("CPU worker goroutines (0: all cores; at most %d)", cpu.MaxThreads))
	fs.StringVar(&o.prompt, "prompt", "1,2,3,4", "prompt token ids, comma separated")
	fs.StringVar(&o.prompt, "prompt-ids", "1,2,3,4", "the same as -prompt")
	fs.StringVar(&o.model, "model", "", "run this GGUF file (llama family) instead of the random weights")
	fs.StringVar(&o.text, "text", "", "with -model: a text prompt, tokenized with the file's vocabulary (replaces -prompt)")
	fs.IntVar(&o.n, "n", 16, "tokens to generate (0: evaluate the prompt only)")
	fs.BoolVar(&o.warmup, "warmup", false, "evaluate the prompt and one token once, untimed, before the timed run (llama-bench's warmup)")
	fs.StringVar(&o.typ, "type", "f32", "weight type: f32 or q8_0")
	fs.StringVar(&o.strategy, "strategy", "ggml", "graph allocator strategy: ggml or optimized")
	fs.StringVar(&o.maxBuf, "max-buffer-size", "", "artificial max buffer size for weights and KV cache (bytes; k, m, g suffixes), splits the weights")
	fs.Uint64Var(&o.cfg.Seed, "weight-seed", o.cfg.Seed, "the built-in model's weight seed")
	addSampleFlags(fs, &o.samp)
	fs.IntVar(&o.cfg.Vocab, "vocab", o.cfg.Vocab, "vocabulary size")
	fs.IntVar(&o.cfg.Dim, "dim", o.cfg.Dim, "model width")
	fs.IntVar(&o.cfg.Heads, "heads", o.cfg.Heads, "attention heads")
	fs.IntVar(&o.cfg.Layers, "layers", o.cfg.Layers, "decoder layers")
	fs.IntVar(&o.cfg.FFN, "ffn", o.cfg.FFN, "feed-forward width")
	fs.IntVar(&o.cfg.Ctx, "ctx", o.cfg.Ctx, "context length (KV cache slots)")
	fs.BoolVar(&o.quiet, "q", false, "no progress line on stderr")
	fs.BoolVar(&o.perToken, "per-token", true, "print each generated token's time")
	fs.BoolVar(&o.noRepack, "no-repack", false, "with -model on the CPU: keep q4_0/q4_K/q8_0 weights (and f16 ones the mapping serves with 4 KiB pages) in the file's mapping instead of moving them to the repacking buffer (q4_0/q4_K/q8_0 interleaved by four rows) for the decode dots (llama.cpp's --no-repack)")
	fs.BoolVar(&o.noRepack, "nr", false, "the same as -no-repack")
	fs.StringVar(&o.cpuProf, "cpuprofile", "", "write a Go CPU profile of the prompt and generation to this file (go tool pprof)")
	if err := fs.Parse(args); err != nil {
		return nil, usageErr(err)
	}
	if fs.NArg() > 0 {
		return nil, usageErr(fmt.Errorf("unexpected argument %q", fs.Arg(0)))
	}
	if o.threads < 0 || o.threads > cpu.MaxThreads {
		return nil, fmt.Errorf("-threads %d: want 0 (all cores) to %d", o.threads, cpu.MaxThreads)
	}
	if o.n < 0 {
		return nil, fmt.Errorf("-n %d: want 0 or more tokens", o.n)
	}
	typ, err := runtime.ParseType(o.typ)
	if err != nil {
		return nil, fmt.Errorf("-type: %w", err)
	}
	o.cfg.WeightType = typ
	return o, o.cfg.Validate()
}

// parseTokens reads "1,2,3".
func parseTokens(s string) ([]int32, error) {
	var out []int32
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		v, err := strconv.ParseInt(f, 10, 32)
		if errors.Is(err, strconv.ErrRange) {
			return nil, fmt.Errorf("-prompt: token %q does not fit in 32 bits: %w", f, llama.ErrToken)
		}
		if err != nil {
			return nil, fmt.Errorf("-prompt: %q is not a token id (want comma-separated integers such as 1,2,3): %w", f, llama.ErrToken)
		}
		out = append(out, int32(v))
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("-prompt: no token ids: %w", llama.ErrToken)
	}
	return out, nil
}

// parseSize reads the -max-buffer-size flag with membench.ParseSize's
// syntax (k, m, g suffixes are powers of 1024); "" is 0, meaning no limit.
func parseSize(s string) (uint64, error) {
	if strings.TrimSpace(s) == "" {
		return 0, nil
	}
	v, err := membench.ParseSize(s)
	if err != nil || v == 0 {
		return 0, fmt.Errorf("-max-buffer-size %q: want a positive byte count", s)
	}
	return v, nil
}

// openBackend opens -backend's device -device through the device
// registry (the same drivers as -devices and rpc-server), with the buffer
// type for weights: the device's own, limited by -max-buffer-size.
func openBackend(o *runOptions, maxBuf uint64) (runtime.Backend, runtime.BufferType, error) {
	spec := fmt.Sprintf("%s:%d", o.backend, o.device)
	devs, err := device.Default(device.Options{Threads: o.threads, MaxBufferSize: maxBuf}).Open(spec)
	if err != nil {
		if errors.Is(err, device.ErrUnknownDriver) || errors.Is(err, device.ErrUnavailable) {
			return nil, nil, fmt.Errorf("-backend %s: %w: %w", o.backend, errBackendUnavailable, err)
		}
		return nil, nil, fmt.Errorf("-backend %s: %w", o.backend, err)
	}
	return devs[0].Backend(), devs[0].BufferType(), nil
}

func ms(d time.Duration) string { return fmt.Sprintf("%.3f ms", float64(d)/1e6) }

// runRun is gogml run: the small llama-style decoder end to end.
func runRun(args []string, stdout, stderr io.Writer) error {
	o, err := parseRunFlags(args, stderr)
	if err != nil {
		return err
	}
	prompt, err := parseTokens(o.prompt)
	if err != nil {
		return err
	}
	if o.model != "" {
		if o.cfg, prompt, err = ggufRunConfig(o, prompt); err != nil {
			return err
		}
	}
	if err := o.cfg.CheckGenerate(prompt, o.n); err != nil {
		if errors.Is(err, llama.ErrContextFull) {
			return fmt.Errorf("%w (raise -ctx, now %d, or shorten -prompt or -n)", err, o.cfg.Ctx)
		}
		return err
	}
	strat, err := gallocr.ParseStrategy(o.strategy)
	if err != nil {
		return fmt.Errorf("-strategy: %w", err)
	}
	maxBuf, err := parseSize(o.maxBuf)
	if err != nil {
		return err
	}
	if o.devices != "" {
		return runDevices(o, prompt, strat, maxBuf, stdout, stderr)
	}
	be, bt, err := openBackend(o, maxBuf)
	if err != nil {
		return err
	}
	defer be.Close()

	cfg := o.cfg
	fmt.Fprintf(stdout, "model: llama-style decoder, vocab %d, dim %d, heads %d (head size %d), layers %d, ffn %d, ctx %d, weights %s, seed %d\n",
		cfg.Vocab, cfg.Dim, cfg.Heads, cfg.HeadDim(), cfg.Layers, cfg.FFN, cfg.Ctx, cfg.WeightType, cfg.Seed)
	smp, err := o.samp.sampler(stdout)
	if err != nil {
		return err
	}
	dev := be.Device()
	fmt.Fprintf(stdout, "backend: %s (%s)\n", be.Name(), dev.Description)

	t0 := time.Now()
	m, err := newRunModel(o, be, bt, strat, stderr)
	if err != nil {
		return err
	}
	defer m.Close()
	if err := m.Reserve(min(len(prompt), cfg.Ctx)); err != nil {
		return err
	}
	st := m.Stats()
	fmt.Fprintf(stdout, "load: %s (weights generated, uploaded, compute buffer reserved)\n", ms(time.Since(t0)))
	maxNote := ""
	if mx := bt.MaxSize(); mx != runtime.NoMaxSize {
		maxNote = fmt.Sprintf(", max buffer size %s", runtime.FormatBytes(mx))
	}
	fmt.Fprintf(stdout, "memory plan (strategy %s):\n", st.Strategy)
	fmt.Fprintf(stdout, "  weights   %10d bytes (%s) in %d buffer(s) of %s%s\n", st.WeightsBytes, runtime.FormatBytes(st.WeightsBytes), st.WeightsBuffers, bt.Name(), maxNote)
	fmt.Fprintf(stdout, "  kv cache  %10d bytes (%s) in %d buffer(s): %d layers x 2 x %d slots x %d f32\n",
		st.KVBytes, runtime.FormatBytes(st.KVBytes), st.KVBuffers, cfg.Layers, cfg.Ctx, cfg.Dim)
	over := 0.0
	if st.ComputeLowerBound > 0 {
		over = 100 * (float64(st.ComputeBytes)/float64(st.ComputeLowerBound) - 1)
	}
	fmt.Fprintf(stdout, "  compute   %10d bytes (%s), live-bytes lower bound %d (+%.2f%%); graph %d nodes, %d leafs, batch up to %d\n",
		st.ComputeBytes, runtime.FormatBytes(st.ComputeBytes), st.ComputeLowerBound, over, st.Nodes, st.Leafs, st.ReservedBatch)
	if st.DecodeComputeBytes > 0 {
		fmt.Fprintf(stdout, "  compute   %10d bytes (%s) more for the single-token graphs\n", st.DecodeComputeBytes, runtime.FormatBytes(st.DecodeComputeBytes))
	}

	total := o.n
	progress := false
	showProgress := !o.quiet && isTerminal(stderr)
	if o.warmup {
		// As llama-bench's warmup run: the graphs are built and placed,
		// the scratch memory allocated and touched, before the timing.
		// Greedy, so a sampler's seed sequence is left for the timed run;
		// Generate starts from an empty cache again.
		if _, err := m.GenerateWith(prompt, min(o.n, 2), nil, nil); err != nil {
			return err
		}
	}
	if o.cpuProf != "" {
		stop, err := startCPUProfile(o.cpuProf)
		if err != nil {
			return err
		}
		defer stop()
	}
	res, err := m.GenerateWith(prompt, o.n, smp, func(s llama.Step) {
		if progress {
			fmt.Fprint(stderr, "\r\033[K") // clear the progress line before printing
		}
		if s.Index > 0 && o.perToken {
			fmt.Fprintf(stdout, "token %3d: id %4d  %s\n", s.Index, s.Next, ms(s.Time))
		} else if s.Index == 0 {
			pick := ""
			if o.n > 0 {
				pick = fmt.Sprintf("; first pick %d", s.Next)
			}
			fmt.Fprintf(stdout, "prompt: %d tokens in %s (%.1f tokens/s)%s\n",
				s.Tokens, ms(s.Time), float64(s.Tokens)/s.Time.Seconds(), pick)
		}
		if showProgress {
			progress = true
			fmt.Fprintf(stderr, "\rgogml run: %d/%d tokens, last %s   ", s.Index+min(1, total), total, ms(s.Time))
		}
	})
	if progress {
		fmt.Fprintln(stderr)
	}
	if err != nil {
		return err
	}
	ids := make([]string, len(res.Generated))
	for i, t := range res.Generated {
		ids[i] = strconv.Itoa(int(t))
	}
	if len(ids) == 0 {
		fmt.Fprintln(stdout, "generated: nothing (-n 0: the prompt only)")
	} else {
		fmt.Fprintf(stdout, "generated: %s\n", strings.Join(ids, ","))
	}
	printGeneratedText(o, stdout, prompt, res.Generated)
	if n := len(res.TokenTimes); n > 0 {
		ts := append([]time.Duration(nil), res.TokenTimes...)
		sort.Slice(ts, func(i, j int) bool { return ts[i] < ts[j] })
		var sum time.Duration
		for _, d := range ts {
			sum += d
		}
		fmt.Fprintf(stdout, "per token: mean %s, median %s, min %s, max %s over %d tokens: %.1f tokens/s\n",
			ms(sum/time.Duration(n)), ms(ts[n/2]), ms(ts[0]), ms(ts[n-1]), n, res.TokensPerSecond())
		p, dn := res.TokenPhases, time.Duration(n)
		fmt.Fprintf(stdout, "per token phases (mean): build graph %s, allocate %s, compute %s, read logits %s\n",
			ms(p.Build/dn), ms(p.Alloc/dn), ms(p.Compute/dn), ms(p.Read/dn))
	}
	fmt.Fprintf(stdout, "logits checksum: %s\n", res.Logits)
	return nil
}

// isTerminal reports whether w is a terminal, where a progress line that
// rewrites itself belongs (not in a log file or a pipe).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// startCPUProfile starts a Go CPU profile written to path; the returned
// function stops it and closes the file.
func startCPUProfile(path string) (func(), error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("-cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("-cpuprofile: %w", err)
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}
