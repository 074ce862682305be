// Command benchvsllama measures gogml's decoder beside llama.cpp 0.7.0
// (Debian's llama-bench and llama-completion, run from the peer sysroot of
// scripts/ggml-peer.sh) on the same GGUF files, in one run:
//
//   - prompt processing and generation speed: llama-bench -p P -n N -t T
//     against gogml run -model with a P-token prompt and N generated
//     tokens on T workers, interleaved round by round, each side keeping
//     its best round;
//   - time to first token and peak RSS on a freshly mapped file: the file's
//     pages are dropped from the page cache (posix_fadvise DONTNEED), then
//     the whole process (load, prompt, one token) is timed and its maximum
//     resident set size read from rusage, for llama-completion and for
//     gogml run -text with the same text.
//
// The model files are written here: gogml gguf write-demo writes an f16
// llama file of the chosen shape (random weights), and Debian's
// llama-quantize --pure turns it into every other type, so both programs
// read byte-identical files quantized by ggml itself.
//
// Usage (make bench-vs-llama):
//
//	go run ./internal/cmd/benchvsllama -types f16,q8_0,q4_0,q4_K -p 128 -n 64 -t 2 -out docs/llama-bench.md
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gogml/gogml/internal/ggmlpeer"
)

type options struct {
	types               []string
	prompt, gen         int
	threads             []int
	rounds              int
	dim, heads, kvHeads int
	ffn, layers, vocab  int
	dir, out            string
	text                string
	args                string // the command line, for the report
	target              string // the make target, for the report
	timeout             time.Duration
}

// ctx is the context length of the files and of both programs' runs:
// room for the benchmark and for the first-token text.
func (o options) ctx() int { return max(o.prompt+o.gen+1, 512) }

// maxThreads is the largest thread count (the first-token runs use it).
func (o options) maxThreads() int { return slices.Max(o.threads) }

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "benchvsllama:", err)
		os.Exit(1)
	}
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("benchvsllama", flag.ContinueOnError)
	fs.SetOutput(stderr)
	types := fs.String("types", "f16,q8_0,q4_0,q4_K", "model types, comma separated (f16 is written by gogml, the others, f32 too, by llama-quantize --pure)")
	fs.IntVar(&o.prompt, "p", 128, "prompt tokens (llama-bench -p)")
	fs.IntVar(&o.gen, "n", 64, "generated tokens (llama-bench -n)")
	threads := fs.String("t", "2", "threads on both sides (llama-bench -t, gogml run -threads); a comma-separated list gives a row per count")
	fs.IntVar(&o.rounds, "r", 2, "interleaved rounds; each side keeps its best")
	fs.IntVar(&o.dim, "dim", 2048, "model width")
	fs.IntVar(&o.heads, "heads", 16, "attention heads")
	fs.IntVar(&o.kvHeads, "kv-heads", 4, "key/value heads")
	fs.IntVar(&o.ffn, "ffn", 5632, "feed-forward width")
	fs.IntVar(&o.layers, "layers", 4, "decoder layers")
	fs.IntVar(&o.vocab, "vocab", 32000, "vocabulary size")
	fs.StringVar(&o.dir, "dir", "", "directory for the model files (default: a temporary one, removed at the end)")
	fs.StringVar(&o.out, "out", "", "write the markdown report here (default: stdout)")
	fs.StringVar(&o.target, "target", "bench-vs-llama", "the make target named in the report")
	fs.StringVar(&o.text, "text", "Once upon a time, in a small town by the sea, there lived an old clockmaker.", "prompt text of the time-to-first-token runs")
	fs.DurationVar(&o.timeout, "timeout", 10*time.Minute, "time limit of one program run")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	for t := range strings.SplitSeq(*types, ",") {
		if t = strings.TrimSpace(t); t != "" {
			o.types = append(o.types, t)
		}
	}
	for t := range strings.SplitSeq(*threads, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(t))
		if err != nil || n < 1 || n > 1024 {
			return o, fmt.Errorf("-t %q: want thread counts from 1 to 1024", *threads)
		}
		o.threads = append(o.threads, n)
	}
	switch {
	case len(o.types) == 0:
		return o, errors.New("-types is empty")
	case o.prompt < 1 || o.gen < 1 || o.rounds < 1:
		return o, errors.New("-p, -n, -t and -r must be at least 1")
	case o.prompt+o.gen+1 > 1<<16:
		return o, errors.New("-p plus -n is too large (at most 65534)")
	}
	// The report's command line: the run's lengths, threads and types, and
	// the model shape where it is not the default.
	shown := []string{"-types " + *types, "-p " + strconv.Itoa(o.prompt), "-n " + strconv.Itoa(o.gen), "-t " + joinInts(o.threads), "-r " + strconv.Itoa(o.rounds)}
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "dim", "heads", "kv-heads", "ffn", "layers", "vocab":
			shown = append(shown, "-"+f.Name+" "+f.Value.String())
		}
	})
	o.args = strings.Join(shown, " ")
	return o, nil
}

// result is one type's figures; 0 means not measured.
type result struct {
	typ, file        string
	threads          int
	size             int64
	llamaPP, gogPP   float64 // tokens/s
	llamaTG, gogTG   float64
	llamaTTFT        time.Duration
	gogTTFT          time.Duration
	llamaRSS         int64 // bytes
	gogRSS           int64
	llamaErr, gogErr string
}

func run(args []string, stdout, stderr io.Writer) error {
	o, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	start := time.Now()
	ctx := context.Background()
	root, err := ggmlpeer.RepoRoot(".")
	if err != nil {
		return err
	}
	peer, err := ggmlpeer.Locate(ctx, root)
	if err != nil {
		return fmt.Errorf("the llama.cpp peer: %w", err)
	}
	dir := o.dir
	if dir == "" {
		if dir, err = os.MkdirTemp("", "gogml-benchvsllama-"); err != nil {
			return err
		}
		defer os.RemoveAll(dir)
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	logf := func(format string, a ...any) { fmt.Fprintf(stderr, "benchvsllama: "+format+"\n", a...) }
	logf("building gogml")
	gog, err := ggmlpeer.BuildGogml(ctx, root, dir, "")
	if err != nil {
		return err
	}
	res, err := prepare(ctx, o, peer, gog, dir, logf)
	if err != nil {
		return err
	}
	for r := range o.rounds {
		for _, x := range res {
			logf("round %d/%d: %s, %d threads", r+1, o.rounds, x.typ, x.threads)
			speedRound(ctx, o, peer, gog, x, logf)
		}
	}
	for _, x := range res {
		if x.threads == o.maxThreads() {
			logf("time to first token: %s", x.typ)
			firstToken(ctx, o, peer, gog, x)
		}
	}
	var b bytes.Buffer
	writeReport(&b, o, peer.Version, res, time.Since(start))
	if o.out == "" {
		_, err = stdout.Write(b.Bytes())
		return err
	}
	return os.WriteFile(o.out, b.Bytes(), 0o644)
}

// prepare writes the f16 file with gogml and quantizes the other types
// with llama-quantize --pure.
func prepare(ctx context.Context, o options, peer *ggmlpeer.Peer, gog, dir string, logf func(string, ...any)) ([]*result, error) {
	f16 := filepath.Join(dir, "model-f16.gguf")
	logf("writing %s", f16)
	if _, err := output(ctx, o.timeout, "gogml gguf write-demo", exec.Command(gog, "gguf", "write-demo", f16, "-type", "f16",
		"-dim", strconv.Itoa(o.dim), "-heads", strconv.Itoa(o.heads), "-kv-heads", strconv.Itoa(o.kvHeads),
		"-ffn", strconv.Itoa(o.ffn), "-layers", strconv.Itoa(o.layers), "-vocab", strconv.Itoa(o.vocab),
		"-ctx", strconv.Itoa(o.ctx()))); err != nil {
		return nil, err
	}
	var res []*result
	for _, t := range o.types {
		x := &result{typ: t, file: f16}
		if !strings.EqualFold(t, "f16") {
			x.file = filepath.Join(dir, "model-"+t+".gguf")
			logf("llama-quantize --pure %s", t)
			cmd, err := peer.Command(ctx, "", "llama-quantize", "--pure", f16, x.file, t, strconv.Itoa(o.maxThreads()))
			if err != nil {
				return nil, err
			}
			if _, err := output(ctx, o.timeout, "llama-quantize", cmd); err != nil {
				return nil, fmt.Errorf("llama-quantize %s: %w", t, err)
			}
		}
		st, err := os.Stat(x.file)
		if err != nil {
			return nil, err
		}
		x.size = st.Size()
		for _, n := range o.threads {
			row := *x
			row.threads = n
			res = append(res, &row)
		}
	}
	return res, nil
}

// output runs cmd under a time limit with stdin closed and returns its
// stdout; the error carries the tail of its stderr.
func output(ctx context.Context, limit time.Duration, name string, cmd *exec.Cmd) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	c := exec.CommandContext(ctx, cmd.Path, cmd.Args[1:]...)
	c.Env, c.Dir = cmd.Env, cmd.Dir
	var stdout, stderr bytes.Buffer
	c.Stdout, c.Stderr = &stdout, &stderr
	if err := c.Run(); err != nil {
		return stdout.Bytes(), fmt.Errorf("%s: %w\n%s", name, err, tail(stderr.Bytes()))
	}
	return stdout.Bytes(), nil
}

func tail(b []byte) string {
	const n = 1500
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

// llamaBenchEntry is the part of one llama-bench -o json record read here.
type llamaBenchEntry struct {
	NPrompt int     `json:"n_prompt"`
	NGen    int     `json:"n_gen"`
	AvgTS   float64 `json:"avg_ts"`
}

// parseLlamaBench returns the prompt and generation tokens/s of one
// llama-bench -o json output.
func parseLlamaBench(b []byte) (pp, tg float64, err error) {
	var es []llamaBenchEntry
	if err := json.Unmarshal(b, &es); err != nil {
		return 0, 0, fmt.Errorf("llama-bench json: %w", err)
	}
	for _, e := range es {
		switch {
		case e.NPrompt > 0 && e.NGen == 0:
			pp = e.AvgTS
		case e.NGen > 0 && e.NPrompt == 0:
			tg = e.AvgTS
		}
	}
	if pp == 0 || tg == 0 {
		return pp, tg, errors.New("llama-bench json: no prompt or no generation record")
	}
	return pp, tg, nil
}

var (
	promptRE = regexp.MustCompile(`(?m)^prompt: (\d+) tokens in [0-9.]+ ms \(([0-9.]+) tokens/s\)`)
	tokenRE  = regexp.MustCompile(`(?m)^per token: .* over (\d+) tokens: ([0-9.]+) tokens/s`)
)

// parseGogmlRun returns the prompt and generation tokens/s gogml run printed.
func parseGogmlRun(b []byte) (pp, tg float64, err error) {
	m1, m2 := promptRE.FindSubmatch(b), tokenRE.FindSubmatch(b)
	if m1 == nil || m2 == nil {
		return 0, 0, errors.New("gogml run printed no prompt or per-token line")
	}
	pp, _ = strconv.ParseFloat(string(m1[2]), 64)
	tg, _ = strconv.ParseFloat(string(m2[2]), 64)
	return pp, tg, nil
}

// speedRound runs llama-bench once (-r 1) and gogml run once on x's file
// and keeps each side's best figures.
func speedRound(ctx context.Context, o options, peer *ggmlpeer.Peer, gog string, x *result, logf func(string, ...any)) {
	cmd, err := peer.Command(ctx, "", "llama-bench", "-m", x.file, "-p", strconv.Itoa(o.prompt), "-n", strconv.Itoa(o.gen),
		"-t", strconv.Itoa(x.threads), "-r", "1", "-o", "json")
	if err == nil {
		var out []byte
		if out, err = output(ctx, o.timeout, "llama-bench", cmd); err == nil {
			var pp, tg float64
			if pp, tg, err = parseLlamaBench(out); err == nil {
				x.llamaPP, x.llamaTG = max(x.llamaPP, pp), max(x.llamaTG, tg)
			}
		}
	}
	if err != nil {
		x.llamaErr = firstLine(err)
		logf("llama-bench %s: %v", x.typ, err)
	}
	ids := make([]string, o.prompt)
	for i := range ids {
		ids[i] = strconv.Itoa(3 + i%(o.vocab-3))
	}
	// gogml's first generated token comes with the prompt's evaluation, so
	// -n gen+1 gives gen single-token steps, as llama-bench -n gen times.
	out, err := output(ctx, o.timeout, "gogml run", exec.Command(gog, "run", "-model", x.file, "-prompt-ids", strings.Join(ids, ","),
		"-n", strconv.Itoa(o.gen+1), "-threads", strconv.Itoa(x.threads), "-ctx", strconv.Itoa(o.ctx()),
		"-q", "-per-token=false", "-warmup"))
	if err == nil {
		var pp, tg float64
		if pp, tg, err = parseGogmlRun(out); err == nil {
			x.gogPP, x.gogTG = max(x.gogPP, pp), max(x.gogTG, tg)
		}
	}
	if err != nil {
		x.gogErr = firstLine(err)
		logf("gogml run %s: %v", x.typ, err)
	}
}

// firstToken times llama-completion and gogml run -text from a cold page
// cache to their exit, generating one token, and reads their peak RSS.
func firstToken(ctx context.Context, o options, peer *ggmlpeer.Peer, gog string, x *result) {
	cmd, err := peer.Command(ctx, "", "llama-completion", "-m", x.file, "-p", o.text, "-n", "1",
		"-t", strconv.Itoa(x.threads), "-c", strconv.Itoa(o.ctx()))
	if err == nil {
		x.llamaTTFT, x.llamaRSS, err = timeCold(ctx, o.timeout, x.file, "llama-completion", cmd)
	}
	if err != nil && x.llamaErr == "" {
		x.llamaErr = firstLine(err)
	}
	x.gogTTFT, x.gogRSS, err = timeCold(ctx, o.timeout, x.file, "gogml run", exec.Command(gog, "run", "-model", x.file, "-text", o.text,
		"-n", "1", "-threads", strconv.Itoa(x.threads), "-ctx", strconv.Itoa(o.ctx()), "-q"))
	if err != nil && x.gogErr == "" {
		x.gogErr = firstLine(err)
	}
}

// timeCold drops file's pages from the page cache, runs cmd and returns
// its wall time and peak resident set size.
func timeCold(ctx context.Context, limit time.Duration, file, name string, cmd *exec.Cmd) (time.Duration, int64, error) {
	if err := dropCache(file); err != nil {
		return 0, 0, err
	}
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	c := exec.CommandContext(ctx, cmd.Path, cmd.Args[1:]...)
	c.Env = cmd.Env
	var stderr bytes.Buffer
	c.Stderr = &stderr
	t0 := time.Now()
	if err := c.Run(); err != nil {
		return 0, 0, fmt.Errorf("%s: %w\n%s", name, err, tail(stderr.Bytes()))
	}
	wall := time.Since(t0)
	var rss int64
	if ru, ok := c.ProcessState.SysUsage().(*syscall.Rusage); ok {
		rss = ru.Maxrss * 1024 // kilobytes on Linux
	}
	return wall, rss, nil
}

func firstLine(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}

func writeReport(w *bytes.Buffer, o options, version string, res []*result, elapsed time.Duration) {
	fmt.Fprintf(w, "# gogml vs llama.cpp 0.7.0: a decoder on the same GGUF files\n\n")
	fmt.Fprintf(w, "Generated by `go run ./internal/cmd/benchvsllama %s` (`make %s`) on %s, %s, in %s; do not edit by hand.\n\n",
		o.args, o.target, ggmlpeer.CPUModel(), time.Now().UTC().Format("2006-01-02 15:04 UTC"), elapsed.Round(time.Second))
	fmt.Fprintf(w, "- peer: %s (Debian, scripts/ggml-peer.sh): `llama-bench`, `llama-completion`, `llama-quantize`\n", version)
	fmt.Fprintf(w, "- model: llama architecture, random weights written by `gogml gguf write-demo` (f16): dim %d, %d heads (%d key/value), %d layers, ffn %d, vocabulary %d; the other types are `llama-quantize --pure` of that file, so both sides read the same bytes\n",
		o.dim, o.heads, o.kvHeads, o.layers, o.ffn, o.vocab)
	fmt.Fprintf(w, "- speed: `llama-bench -m F -p %d -n %d -t T -r 1` (its defaults: f16 KV cache, flash attention auto, repacked CPU weights) against `gogml run -model F -warmup` with a %d-token prompt in one batch and %d single-token steps after it, on T workers (f32 KV cache), T the row's threads; both sides time warm runs (llama-bench runs a warmup first, gogml run -warmup evaluates the prompt and one token before its timed run). The rounds interleave the two programs; each side keeps its best round. ratio = gogml ÷ llama.cpp (> 1: gogml faster).\n",
		o.prompt, o.gen, o.prompt, o.gen)
	fmt.Fprintf(w, "- first token: the file's pages are dropped from the page cache (posix_fadvise DONTNEED), then the whole process is timed from start to exit — load, the prompt %q, one generated token — for `llama-completion -n 1` and `gogml run -text … -n 1`, at %d threads; peak RSS is the process's maximum resident set size (rusage), which counts the mapped file pages each touched.\n\n", o.text, o.maxThreads())
	fmt.Fprintf(w, "| type | file | threads | llama.cpp pp%d t/s | gogml pp%d t/s | ratio | llama.cpp tg%d t/s | gogml tg%d t/s | ratio |\n|---|---|---|---|---|---|---|---|---|\n", o.prompt, o.prompt, o.gen, o.gen)
	for _, x := range res {
		fmt.Fprintf(w, "| %s | %s | %d | %s | %s | %s | %s | %s | %s |\n", x.typ, mib(x.size), x.threads,
			ts(x.llamaPP), ts(x.gogPP), ratio(x.gogPP, x.llamaPP), ts(x.llamaTG), ts(x.gogTG), ratio(x.gogTG, x.llamaTG))
	}
	fmt.Fprintf(w, "\n| type | llama.cpp first token | gogml first token | llama.cpp peak RSS | gogml peak RSS |\n|---|---|---|---|---|\n")
	for _, x := range res {
		if x.threads != o.maxThreads() {
			continue
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s |\n", x.typ, dur(x.llamaTTFT), dur(x.gogTTFT), mib(x.llamaRSS), mib(x.gogRSS))
	}
	var notes []string
	for _, x := range res {
		if x.llamaErr != "" {
			notes = append(notes, fmt.Sprintf("- %s, %d threads, llama.cpp: %s", x.typ, x.threads, x.llamaErr))
		}
		if x.gogErr != "" {
			notes = append(notes, fmt.Sprintf("- %s, %d threads, gogml: %s", x.typ, x.threads, x.gogErr))
		}
	}
	if len(notes) > 0 {
		fmt.Fprintf(w, "\nRuns that failed (–: not measured):\n\n%s\n", strings.Join(notes, "\n"))
	}
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ",")
}

func ts(v float64) string {
	if v == 0 {
		return "–"
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}

func ratio(g, l float64) string {
	if g == 0 || l == 0 {
		return "–"
	}
	return strconv.FormatFloat(g/l, 'f', 2, 64)
}

func dur(d time.Duration) string {
	if d == 0 {
		return "–"
	}
	return strconv.FormatFloat(d.Seconds(), 'f', 2, 64) + " s"
}

func mib(n int64) string {
	if n == 0 {
		return "–"
	}
	return strconv.FormatFloat(float64(n)/(1<<20), 'f', 0, 64) + " MiB"
}
