package main

import (
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/gogml/gogml/gallocr"
	"github.com/gogml/gogml/gguf"
	"github.com/gogml/gogml/model/llama"
	"github.com/gogml/gogml/runtime"
)

// runGGUF is gogml gguf: info FILE, write-demo FILE.
func runGGUF(args []string, stdout, stderr io.Writer) error {
	usage := func(w io.Writer) {
		fmt.Fprintln(w, "usage: gogml gguf info FILE            metadata, tensor table, sizes by type, what gogml can run")
		fmt.Fprintln(w, "       gogml gguf write-demo FILE [-type f32|f16|bf16|q8_0|q4_0|q4_1|q5_0|q5_1|q2_k..q6_k] [shape flags]")
		fmt.Fprintln(w, "                                        the built-in decoder's weights as a llama GGUF file")
	}
	if len(args) == 0 || args[0] == "-h" || args[0] == "help" || args[0] == "--help" {
		usage(stdout)
		if len(args) == 0 {
			return fmt.Errorf("missing subcommand")
		}
		return flag.ErrHelp
	}
	switch args[0] {
	case "info":
		return ggufInfo(args[1:], stdout, stderr)
	case "write-demo":
		return ggufWriteDemo(args[1:], stdout, stderr)
	}
	usage(stderr)
	return fmt.Errorf("unknown subcommand %q", args[0])
}

// splitFileArg takes the one positional FILE from args, wherever it is
// among the flags.
func splitFileArg(args []string, fs *flag.FlagSet) (string, error) {
	var file string
	for {
		if err := fs.Parse(args); err != nil {
			return "", err
		}
		if fs.NArg() == 0 {
			break
		}
		if file != "" {
			return "", fmt.Errorf("unexpected argument %q", fs.Arg(0))
		}
		file, args = fs.Arg(0), fs.Args()[1:]
	}
	if file == "" {
		return "", fmt.Errorf("missing FILE")
	}
	return file, nil
}

func ggufInfo(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("gguf info", flag.ContinueOnError)
	fs.SetOutput(stderr)
	maxElems := fs.Int("elems", 8, "array elements shown per key")
	all := fs.Bool("all", false, "list every tensor (default: the first 64)")
	path, err := splitFileArg(args, fs)
	if err != nil {
		return err
	}
	m, err := gguf.Open(path)
	if err != nil {
		return err
	}
	defer m.Close()
	printInfo(stdout, m, *maxElems, *all)
	return nil
}

// printInfo writes the report of gogml gguf info.
func printInfo(w io.Writer, m *gguf.Mapped, maxElems int, all bool) {
	fmt.Fprintf(w, "file: %s, %d bytes (%s), GGUF v%d, alignment %d, data section at byte %d\n",
		m.Path, m.Size, runtime.FormatBytes(m.Size), m.Version, m.Alignment, m.DataOffset)
	fmt.Fprintf(w, "metadata: %d keys\n", len(m.KV))
	for _, kv := range m.KV {
		t := kv.Value.Type().String()
		if kv.Value.IsArray() {
			t = fmt.Sprintf("arr[%s,%d]", kv.Value.ElemType(), kv.Value.Len())
		}
		fmt.Fprintf(w, "  %-44s %-14s %s\n", kv.Key, t, formatValue(kv.Value, maxElems))
	}
	fmt.Fprintf(w, "tensors: %d\n", len(m.Tensors))
	type sum struct {
		n     int
		bytes uint64
		elems int64
	}
	byType := map[runtime.Type]*sum{}
	var total uint64
	for i, t := range m.Tensors {
		if i < 64 || all {
			fmt.Fprintf(w, "  %-32s %-6s %-22s %12d bytes at %d\n", t.Name, t.Type, fmt.Sprint(t.Shape()), t.NBytes(), m.DataOffset+t.Offset)
		} else if i == 64 {
			fmt.Fprintf(w, "  ... %d more (-all lists them)\n", len(m.Tensors)-64)
		}
		s := byType[t.Type]
		if s == nil {
			s = &sum{}
			byType[t.Type] = s
		}
		s.n++
		s.bytes += t.NBytes()
		s.elems += t.NElements()
		total += t.NBytes()
	}
	types := make([]runtime.Type, 0, len(byType))
	for t := range byType {
		types = append(types, t)
	}
	sort.Slice(types, func(i, j int) bool { return byType[types[i]].bytes > byType[types[j]].bytes })
	fmt.Fprintln(w, "sizes by type:")
	for _, t := range types {
		s := byType[t]
		pct := 0.0
		if total > 0 {
			pct = 100 * float64(s.bytes) / float64(total)
		}
		fmt.Fprintf(w, "  %-6s %5d tensors %14d elements %12s (%5.1f%%)\n", t, s.n, s.elems, runtime.FormatBytes(s.bytes), pct)
	}
	fmt.Fprintf(w, "  total  %5d tensors %12s\n", len(m.Tensors), runtime.FormatBytes(total))
	printTokenizerInfo(w, m.File)
	cfg, err := llama.CheckGGUF(m.File)
	if err != nil {
		fmt.Fprintf(w, "gogml run: cannot run this file: %v\n", err)
		return
	}
	arch, _ := m.String("general.architecture")
	var extra []string
	for _, f := range []struct {
		on   bool
		name string
	}{{cfg.RopeMode == runtime.RopeNeoX, "NeoX RoPE"}, {cfg.NoRopeStep > 0, fmt.Sprintf("no RoPE every %d layers", cfg.NoRopeStep)},
		{cfg.QKVBias, "q/k/v biases"}, {cfg.OutBias, "output bias"}, {cfg.QKNorm, "q/k norms"}, {cfg.RopeFreqs, "RoPE factors"},
		{cfg.FFNBias, "feed-forward biases"}, {cfg.OutputBias, "logit bias"}, {cfg.WeightScales, "per-tensor scales"},
		{cfg.RopeFreqScale != 0 && cfg.RopeFreqScale != 1, fmt.Sprintf("RoPE freq scale %g", cfg.RopeFreqScale)},
		{cfg.RopeExtFactor != 0, fmt.Sprintf("YaRN ext factor %g, attn factor %g, original context %d", cfg.RopeExtFactor, cfg.RopeAttnFactor, cfg.RopeCtxOrig)},
		{cfg.LogitScale != 0, fmt.Sprintf("granite multipliers: embedding %g, residual %g, attention %g, logits 1/%g", cfg.EmbedScale, cfg.ResidualScale, cfg.AttnScale, cfg.LogitScale)}} {
		if f.on {
			extra = append(extra, f.name)
		}
	}
	feat := ""
	if len(extra) > 0 {
		feat = " (" + strings.Join(extra, ", ") + ")"
	}
	fmt.Fprintf(w, "gogml run: can run it: llama decoder as %s%s, vocab %d, dim %d, heads %d (kv %d, head size %d), layers %d, ffn %d, context %d, rope base %g, rms eps %g, weights %s\n",
		arch, feat, cfg.Vocab, cfg.Dim, cfg.Heads, cfg.NKVHeads(), cfg.HeadDim(), cfg.Layers, cfg.FFN, cfg.Ctx, cfg.RopeBase, cfg.Eps, cfg.WeightType)
}

// formatValue prints a value with at most n array elements, strings
// shortened to 80 bytes.
func formatValue(v gguf.Value, n int) string {
	if s, ok := gguf.As[string](v); ok && len(s) > 80 {
		return fmt.Sprintf("%q... (%d bytes)", s[:80], len(s))
	}
	if !v.IsArray() || v.Len() <= n {
		return v.String()
	}
	if s, ok := gguf.ArrayAs[string](v); ok {
		q := make([]string, n)
		for i := range q {
			q[i] = fmt.Sprintf("%q", s[i])
		}
		return "[" + strings.Join(q, ", ") + fmt.Sprintf(", ... (%d elements)]", v.Len())
	}
	return v.String()
}

func ggufWriteDemo(args []string, stdout, stderr io.Writer) error {
	cfg := llama.DefaultConfig()
	fs := flag.NewFlagSet("gguf write-demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	typ := fs.String("type", "f32", "matrix type: f32, f16, bf16, q8_0, q4_0, q4_1, q5_0, q5_1, q2_k, q3_k, q4_k, q5_k or q6_k (norms stay f32;\n"+
		"a k-quant's rows are 256 elements, so unless -dim and -ffn are given the demo is 256 wide with an ffn of 512)")
	fs.Uint64Var(&cfg.Seed, "seed", cfg.Seed, "weight seed (the same weights as gogml run -weight-seed)")
	fs.IntVar(&cfg.Vocab, "vocab", cfg.Vocab, "vocabulary size (at least 14)")
	fs.IntVar(&cfg.Dim, "dim", cfg.Dim, "model width")
	fs.IntVar(&cfg.Heads, "heads", cfg.Heads, "attention heads")
	fs.IntVar(&cfg.KVHeads, "kv-heads", 0, "key/value heads (0: as many as heads)")
	fs.IntVar(&cfg.Layers, "layers", cfg.Layers, "decoder layers")
	fs.IntVar(&cfg.FFN, "ffn", cfg.FFN, "feed-forward width")
	fs.IntVar(&cfg.Ctx, "ctx", cfg.Ctx, "context length written as llama.context_length")
	path, err := splitFileArg(args, fs)
	if err != nil {
		return err
	}
	t, err := runtime.ParseType(*typ)
	if err != nil {
		return fmt.Errorf("-type: %w", err)
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	// Shapes not asked for grow to whole blocks of t (the k-quants' 256).
	bs := int(t.BlockSize())
	if !set["dim"] {
		cfg.Dim = (cfg.Dim + bs - 1) / bs * bs
	}
	if !set["ffn"] {
		cfg.FFN = (cfg.FFN + bs - 1) / bs * bs
	}
	gen := cfg
	gen.WeightType = runtime.TypeF32
	if err := gen.Validate(); err != nil {
		return err
	}
	gw, err := llama.NewGGUFWriter(llama.GenerateWeights(gen), t)
	if err != nil {
		return err
	}
	if err := gw.WriteFile(path); err != nil {
		return err
	}
	m, err := gguf.Open(path)
	if err != nil {
		return fmt.Errorf("reading back %s: %w", path, err)
	}
	defer m.Close()
	fmt.Fprintf(stdout, "wrote %s: %d bytes, %d tensors, %d keys; llama, vocab %d, dim %d, heads %d (kv %d), layers %d, ffn %d, ctx %d, matrices %s, seed %d\n",
		path, m.Size, len(m.Tensors), len(m.KV), cfg.Vocab, cfg.Dim, cfg.Heads, cfg.NKVHeads(), cfg.Layers, cfg.FFN, cfg.Ctx, t, cfg.Seed)
	return nil
}

// ggufRunConfig is the shape gogml run -model uses: the file's, with a KV
// cache for the prompt and the tokens asked for (at least -ctx, at most
// the file's context length). With -text the prompt is the text's tokens.
func ggufRunConfig(o *runOptions, prompt []int32) (llama.Config, []int32, error) {
	m, err := gguf.Open(o.model)
	if err != nil {
		return llama.Config{}, nil, err
	}
	defer m.Close()
	cfg, err := llama.CheckGGUF(m.File)
	if err != nil {
		return cfg, nil, fmt.Errorf("%s: %w", o.model, err)
	}
	if o.text != "" {
		tok, err := llama.TokenizerFromGGUF(m.File)
		if err != nil {
			return cfg, nil, fmt.Errorf("-text: %s: %w", o.model, err)
		}
		prompt = tok.Encode(o.text, true)
	}
	cfg.Ctx = min(cfg.Ctx, max(o.cfg.Ctx, len(prompt)+o.n))
	return cfg, prompt, nil
}

// printGeneratedText prints the prompt and the generated ids as text when
// the -model file has a vocabulary gogml can decode.
func printGeneratedText(o *runOptions, w io.Writer, prompt, gen []int32) {
	if o.model == "" {
		return
	}
	m, err := gguf.Open(o.model)
	if err != nil {
		return
	}
	defer m.Close()
	tok, err := llama.TokenizerFromGGUF(m.File)
	if err != nil {
		return
	}
	fmt.Fprintf(w, "prompt ids: %v\ntext: %q + %q\n", prompt, tok.Decode(prompt), tok.Decode(gen))
}

// newRunModel places gogml run's model: the -model file's weights, or
// the seeded random ones.
func newRunModel(o *runOptions, be runtime.Backend, bt runtime.BufferType, strat gallocr.Strategy, stderr io.Writer) (*llama.Model, error) {
	opts := llama.Options{Backend: be, BufferType: bt, Strategy: strat}
	if o.model == "" {
		return llama.New(llama.GenerateWeights(o.cfg), opts)
	}
	lo := llama.LoadOptions{Options: opts, Ctx: o.cfg.Ctx, NoRepack: o.noRepack}
	if !o.quiet && isTerminal(stderr) {
		t0 := time.Now()
		lo.Progress = func(done, total uint64) {
			fmt.Fprintf(stderr, "\r\033[Kgogml run: loading %s: %s", progressBar(done, total, 30), runtime.FormatBytes(done))
			if done == total {
				fmt.Fprintf(stderr, "\r\033[Kgogml run: loaded %s in %s\n", runtime.FormatBytes(total), ms(time.Since(t0)))
			}
		}
	}
	return llama.LoadGGUF(o.model, lo)
}

// progressBar draws [#####.....] 42%.
func progressBar(done, total uint64, width int) string {
	frac := 1.0
	if total > 0 {
		frac = float64(done) / float64(total)
	}
	n := int(frac * float64(width))
	return "[" + strings.Repeat("#", n) + strings.Repeat(".", width-n) + fmt.Sprintf("] %3.0f%%", 100*frac)
}
