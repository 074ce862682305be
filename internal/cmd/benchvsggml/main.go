// Command benchvsggml measures gogml's CPU backend side by side with real
// ggml (the Debian peer's test-backend-ops) on the same ops, shapes and
// thread counts, interleaved in rounds, and writes a markdown report
// (docs/performance.md by default; make bench-vs-ggml).
//
// ggml's side: one `test-backend-ops perf -b CPU --test-file F` per round
// and thread count, F listing every case as a generic op (ggml's own
// test-file format), so both sides run exactly the same shapes.
// test-backend-ops 0.7.0 gives the CPU backend hardware_concurrency()/2
// threads (at least one) and has no option for it; through
// scripts/ggml-peer.sh its preload makes hardware_concurrency() return
// twice the round's thread count (GGML_PEER_HW_CONCURRENCY), and
// OMP_THREAD_LIMIT caps ggml's OpenMP threads at it. gogml's side: the same one-node graph
// built with gogml's API, placed by gallocr and run by Backend.Compute with
// that many workers, timed like ggml (a warm-up, then runs until a time
// budget, mean µs/run). Each side's figure is its best round. The report
// also gives the machine's references measured in the same run: the f32
// FMA peak of each SIMD level and the copy bandwidth.
//
// ggml's perf loop runs a test-file case for at least a second and 8 GB
// of operand traffic, so compute-bound cases take long: the k×k prompt
// MUL_MAT and FLASH_ATTN_EXT rows use the batches -prompt lists (default
// 32). The n=512 MUL_MAT rows (-prompt-big) are test-backend-ops' own perf
// cases (4096×14336 weights), which it sizes by FLOPs instead: one or two
// runs of 60 GFLOP. One round at 1 and 2 threads takes about a quarter
// of an hour on a busy 2-core machine.
//
// The peer is found with scripts/ggml-peer.sh when the checkout has it,
// else in the sysroot named by GOGML_GGML_SYSROOT (a directory holding
// usr/lib/x86_64-linux-gnu and usr/libexec/x86_64-linux-gnu/llama.cpp-tests).
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gogml/gogml/internal/ggmlpeer"
	"github.com/gogml/gogml/internal/kernels/cpukernels/vec"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "benchvsggml:", err)
		os.Exit(1)
	}
}

type options struct {
	threads []int
	rounds  int
	k       int64
	prompts []int64
	// promptBig is the batch of the MUL_MAT rows at ggml's own perf shape
	// (0: none).
	promptBig int64
	out       string
	filter    *regexp.Regexp
	budget    time.Duration
	timeout   time.Duration
}

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("benchvsggml", flag.ContinueOnError)
	threads := fs.String("threads", "1,2", "comma-separated thread counts")
	rounds := fs.Int("rounds", 1, "interleaved rounds (each side's best round is reported)")
	k := fs.Int64("k", 4096, "MUL_MAT weight size k×k (rows of length k, k rows)")
	prompt := fs.String("prompt", "32", "comma-separated activation rows of the k×k prompt MUL_MAT and the FLASH_ATTN_EXT prompt cases (decode is 1)")
	promptBig := fs.Int64("prompt-big", 512, "activation rows of the MUL_MAT prompt cases at test-backend-ops' own perf shape (4096×14336 weights, ggml runs its own case; 0: none)")
	out := fs.String("out", "docs/performance.md", "report path (- for stdout only)")
	filter := fs.String("cases", "", "regexp selecting cases by name (default all)")
	budget := fs.Duration("budget", 500*time.Millisecond, "gogml timing budget per case and round")
	timeout := fs.Duration("timeout", 10*time.Minute, "limit for each ggml run")
	if err := fs.Parse(args); err != nil {
		return err
	}
	o := options{rounds: max(*rounds, 1), k: *k, promptBig: *promptBig, out: *out, budget: *budget, timeout: *timeout}
	if o.promptBig != 0 && o.promptBig != 512 {
		return fmt.Errorf("-prompt-big %d: ggml's own perf cases have 512 rows (or 0: none)", o.promptBig)
	}
	for f := range strings.SplitSeq(*threads, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > 1024 {
			return fmt.Errorf("-threads: %q is not a thread count in [1, 1024]", f)
		}
		o.threads = append(o.threads, n)
	}
	for f := range strings.SplitSeq(*prompt, ",") {
		n, err := strconv.ParseInt(strings.TrimSpace(f), 10, 64)
		if err != nil || n < 2 || n > 4096 {
			return fmt.Errorf("-prompt: %q is not a row count in [2, 4096]", f)
		}
		if slices.Contains(o.prompts, n) {
			return fmt.Errorf("-prompt: %d given twice", n)
		}
		o.prompts = append(o.prompts, n)
	}
	var err error
	if o.filter, err = regexp.Compile(*filter); err != nil {
		return fmt.Errorf("-cases: %w", err)
	}
	if o.k < 256 || o.k%256 != 0 || o.k > 16384 {
		return fmt.Errorf("-k %d: want a multiple of 256 in [256, 16384] (k-quant blocks)", o.k)
	}
	peer, err := findPeer()
	if err != nil {
		return err
	}
	ops, err := parseOpEnum(peer.header)
	if err != nil {
		return err
	}
	all := benchCases(o.k, o.prompts)
	if o.promptBig > 0 {
		all = append(all, bigPromptCases(o.promptBig)...)
	}
	cases := slices.DeleteFunc(all, func(c benchCase) bool { return !o.filter.MatchString(c.name) })
	if len(cases) == 0 {
		return errors.New("no case matches -cases")
	}
	dir, err := os.MkdirTemp("", "benchvsggml")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	testFile := filepath.Join(dir, "cases.txt")
	var tf bytes.Buffer
	var builtins []benchCase // ggml runs its own perf cases for these
	for _, c := range cases {
		if c.builtin != "" {
			builtins = append(builtins, c)
			continue
		}
		line, err := c.ggml.line(ops, c.name)
		if err != nil {
			return err
		}
		tf.WriteString(line + "\n")
	}
	if err := os.WriteFile(testFile, tf.Bytes(), 0o644); err != nil {
		return err
	}

	start := time.Now()
	load0 := loadAvg()
	// res[threads][case] = best µs/run of each side.
	type pair struct{ ggml, gogml float64 }
	res := map[int]map[string]*pair{}
	for _, nt := range o.threads {
		res[nt] = map[string]*pair{}
		for _, c := range cases {
			res[nt][c.name] = &pair{}
		}
	}
	better := func(old, v float64) float64 {
		if old == 0 || (v > 0 && v < old) {
			return v
		}
		return old
	}
	h := newHarness()
	defer h.close()
	for r := range o.rounds {
		for _, nt := range o.threads {
			fmt.Fprintf(stdout, "round %d/%d, %d thread(s): ggml...\n", r+1, o.rounds, nt)
			g := map[string]float64{}
			if len(builtins) < len(cases) {
				if g, err = peer.runPerf(testFile, nt, o.timeout); err != nil {
					return err
				}
			}
			if err := peer.runBuiltins(builtins, g, nt, o.timeout); err != nil {
				return err
			}
			for name, us := range g {
				if p := res[nt][name]; p != nil {
					p.ggml = better(p.ggml, us)
				}
			}
			fmt.Fprintf(stdout, "round %d/%d, %d thread(s): gogml...\n", r+1, o.rounds, nt)
			for _, c := range cases {
				us, err := h.time(c, nt, o.budget)
				if err != nil {
					return fmt.Errorf("gogml %s: %w", c.name, err)
				}
				p := res[nt][c.name]
				p.gogml = better(p.gogml, us)
				fmt.Fprintf(stdout, "  %-28s ggml %10.1f us  gogml %10.1f us\n", c.name, g[c.name], us)
			}
			debug.FreeOSMemory()
		}
	}
	refs := measureRefs(o.threads)
	refs.ggmlCores = map[int]float64{}
	for nt, u := range peer.use {
		refs.ggmlCores[nt] = u.cores()
	}
	elapsed := time.Since(start)

	var md bytes.Buffer
	writeReport(&md, o, cases, refs, elapsed, load0+" at the start, "+loadAvg()+" at the end", func(nt int, name string) (float64, float64) {
		p := res[nt][name]
		return p.ggml, p.gogml
	})
	if _, err := stdout.Write(md.Bytes()); err != nil {
		return err
	}
	if o.out == "-" {
		return nil
	}
	return os.WriteFile(o.out, md.Bytes(), 0o644)
}

// refs are the machine's references, measured in the same run.
type refs struct {
	peak   map[string]map[int]float64 // level -> threads -> GFLOP/s
	copyGB map[int]float64            // threads -> GB/s (bytes read + written)
	levels []string
	// ggmlCores is, per thread count, the cores test-backend-ops kept busy
	// over its whole runs (setup included): CPU time ÷ wall time.
	ggmlCores map[int]float64
}

func measureRefs(threads []int) refs {
	r := refs{peak: map[string]map[int]float64{}, copyGB: map[int]float64{}}
	r.levels = vec.PeakLevels()
	for _, l := range r.levels {
		r.peak[l] = map[int]float64{}
		for _, nt := range threads {
			var best float64
			for range 3 {
				best = max(best, vec.PeakGFLOPSLevel(l, nt, 200*time.Millisecond))
			}
			r.peak[l][nt] = best
		}
	}
	for _, nt := range threads {
		r.copyGB[nt] = copyBandwidth(nt)
	}
	return r
}

func writeReport(w *bytes.Buffer, o options, cases []benchCase, r refs, elapsed time.Duration, load string, get func(nt int, name string) (float64, float64)) {
	fmt.Fprintf(w, "# gogml vs ggml 0.27.0: CPU backend\n\n")
	fmt.Fprintf(w, "Generated by `make bench-vs-ggml` (`go run ./internal/cmd/benchvsggml -threads %s -rounds %d -k %d -prompt %s -prompt-big %d`) on %s, %s, in %s.\n",
		joinInts(o.threads), o.rounds, o.k, joinInts(o.prompts), o.promptBig, ggmlpeer.CPUModel(), time.Now().UTC().Format("2006-01-02 15:04 UTC"), elapsed.Round(time.Second))
	fmt.Fprintf(w, "gogml kernels: %s (SIMD level %s). Load average (1 min) %s: on a shared machine\n", vec.Implementation(), vec.Level(), load)
	fmt.Fprintf(w, "every figure moves with the other work, which is why both sides run interleaved and each keeps its best round.\n\n")
	fmt.Fprintf(w, "ggml: Debian's ggml 0.27.0 `test-backend-ops perf -b CPU --test-file F` (F lists every case below as a generic op),\n")
	fmt.Fprintf(w, "on as many threads as the round (test-backend-ops gives the CPU backend half of hardware_concurrency(), which\n")
	fmt.Fprintf(w, "scripts/ggml-peer.sh's preload sets to twice the round's threads; OMP_THREAD_LIMIT caps its OpenMP threads).\n")
	fmt.Fprintf(w, "gogml: the same one-node graph through `Backend.Compute`\n")
	fmt.Fprintf(w, "with as many workers. Both report the mean µs/run of a timed loop; each side's figure is its best of %d\n", o.rounds)
	fmt.Fprintf(w, "interleaved rounds. ratio = gogml throughput ÷ ggml throughput (ggml µs ÷ gogml µs; > 1: gogml faster).\n")
	fmt.Fprintf(w, "ggml's MUL_MAT here is its plain CPU path (test-backend-ops does not use the repacking \"extra\" buffer type).\n")
	fmt.Fprintf(w, "Rows marked \"ggml's own perf case\" are test-backend-ops' built-in MUL_MAT cases of that shape (`perf -o MUL_MAT -p ...`),\n")
	fmt.Fprintf(w, "which ggml times for 8 GFLOP and at least a second; a test-file line is timed for 8 GB of operands, a hundred\n")
	fmt.Fprintf(w, "runs and more at n=512.\n\n")
	fmt.Fprintf(w, "## References measured in the same run\n\n| threads |")
	for _, l := range r.levels {
		fmt.Fprintf(w, " %s FMA peak GFLOP/s |", l)
	}
	fmt.Fprintf(w, " copy GB/s (read+write) |\n|---|")
	for range r.levels {
		fmt.Fprintf(w, "---|")
	}
	fmt.Fprintf(w, "---|\n")
	for _, nt := range o.threads {
		fmt.Fprintf(w, "| %d |", nt)
		for _, l := range r.levels {
			fmt.Fprintf(w, " %.0f |", r.peak[l][nt])
		}
		fmt.Fprintf(w, " %.1f |\n", r.copyGB[nt])
	}
	fmt.Fprintf(w, "\nCores test-backend-ops kept busy over its runs (its process CPU time ÷ wall time, setup and data\n")
	fmt.Fprintf(w, "initialization included, other work on the machine lowering it):")
	for i, nt := range o.threads {
		sep := ","
		if i == len(o.threads)-1 {
			sep = "."
		}
		fmt.Fprintf(w, " %.2f at %d thread(s)%s", r.ggmlCores[nt], nt, sep)
	}
	fmt.Fprintf(w, " Where the figure at more threads is no higher than at one,\n")
	fmt.Fprintf(w, "ggml ran on one core there, and that thread count's ratios compare gogml's threads with one of ggml's.\n")
	fmt.Fprintf(w, "\n## Ops\n\n| op | case |")
	for _, nt := range o.threads {
		fmt.Fprintf(w, " ggml µs (%dt) | gogml µs (%dt) | ratio (%dt) |", nt, nt, nt)
	}
	fmt.Fprintf(w, "\n|---|---|")
	for range o.threads {
		fmt.Fprintf(w, "---|---|---|")
	}
	fmt.Fprintf(w, "\n")
	for _, c := range cases {
		fmt.Fprintf(w, "| %s | %s |", c.op, c.desc)
		for _, nt := range o.threads {
			g, m := get(nt, c.name)
			fmt.Fprintf(w, " %s | %s | %s |", us(g), us(m), ratio(g, m))
		}
		fmt.Fprintf(w, "\n")
	}
}

// loadAvg returns the 1-minute load average from /proc/loadavg, or "?".
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	if f := strings.Fields(string(b)); len(f) > 0 {
		return f[0]
	}
	return "?"
}

func us(v float64) string {
	if v <= 0 {
		return "—"
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}

func ratio(g, m float64) string {
	if g <= 0 || m <= 0 {
		return "—"
	}
	return fmt.Sprintf("%.2f", g/m)
}

func joinInts[T int | int64](v []T) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = strconv.FormatInt(int64(n), 10)
	}
	return strings.Join(s, ",")
}

// peer runs ggml's test-backend-ops.
type peer struct {
	header string   // ggml.h
	argv   []string // command prefix before test-backend-ops' own arguments
	// use adds up, per thread count, the CPU time (user + system) and the
	// wall time of every test-backend-ops process, so the report can say
	// how many cores ggml kept busy.
	use map[int]*cpuUse
}

// cpuUse is the CPU and wall time of a side's processes.
type cpuUse struct{ cpu, wall time.Duration }

// cores returns the cores kept busy on average (CPU time ÷ wall time).
func (u *cpuUse) cores() float64 {
	if u == nil || u.wall <= 0 {
		return 0
	}
	return u.cpu.Seconds() / u.wall.Seconds()
}

// findPeer locates the Debian peer: scripts/ggml-peer.sh when present, else
// $GOGML_GGML_SYSROOT.
func findPeer() (*peer, error) {
	const script = "scripts/ggml-peer.sh"
	if _, err := os.Stat(script); err == nil {
		out, err := exec.Command("bash", script, "path").Output()
		if err != nil {
			return nil, fmt.Errorf("%s path: %w", script, err)
		}
		root := strings.TrimSpace(string(out))
		return &peer{
			header: filepath.Join(root, "usr/include/ggml.h"),
			argv:   []string{"bash", script, "run", "test-backend-ops"},
		}, nil
	}
	root := os.Getenv("GOGML_GGML_SYSROOT")
	if root == "" {
		return nil, errors.New("no scripts/ggml-peer.sh in this checkout and GOGML_GGML_SYSROOT is unset: set it to the Debian ggml 0.27.0 sysroot")
	}
	lib := filepath.Join(root, "usr/lib/x86_64-linux-gnu")
	p := &peer{
		header: filepath.Join(root, "usr/include/ggml.h"),
		argv: []string{filepath.Join(lib, "ld-linux-x86-64.so.2"), "--library-path", lib + ":" + filepath.Join(lib, "llama"),
			filepath.Join(root, "usr/libexec/x86_64-linux-gnu/llama.cpp-tests/test-backend-ops")},
	}
	for _, f := range []string{p.header, p.argv[0], p.argv[len(p.argv)-1]} {
		if _, err := os.Stat(f); err != nil {
			return nil, fmt.Errorf("GOGML_GGML_SYSROOT=%s: %w", root, err)
		}
	}
	return p, nil
}

var (
	ansiRE = regexp.MustCompile(`\x1b\[[0-9;]*m`)
	perfRE = regexp.MustCompile(`^\s*[A-Z_0-9]+\(name=([A-Za-z0-9_]+),.*\):\s+(\d+) runs -\s+([0-9.]+) us/run`)
)

// runPerf runs every case of testFile on ggml with nt threads and returns
// µs/run by case name.
func (p *peer) runPerf(testFile string, nt int, timeout time.Duration) (map[string]float64, error) {
	out, err := p.perf(timeout, nt, "--test-file", testFile)
	if err != nil {
		return nil, err
	}
	res := map[string]float64{}
	for line := range strings.SplitSeq(out, "\n") {
		if m := perfRE.FindStringSubmatch(line); m != nil {
			v, err := strconv.ParseFloat(m[3], 64)
			if err == nil {
				res[m[1]] = v
			}
		}
	}
	if len(res) == 0 {
		return nil, fmt.Errorf("ggml test-backend-ops printed no timing\n%s", tail([]byte(out)))
	}
	return res, nil
}

// perf runs test-backend-ops perf on the CPU backend with nt threads and
// the given arguments and returns its output, colours removed.
func (p *peer) perf(timeout time.Duration, nt int, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	argv := append(slices.Clone(p.argv), append([]string{"perf", "-b", "CPU"}, args...)...)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	// GGML_PEER_HW_CONCURRENCY: test-backend-ops runs the CPU backend on
	// half of hardware_concurrency(), which the script's preload returns
	// (see scripts/ggml-peer/preload.c); a sysroot run without the script
	// keeps half the machine's CPUs.
	cmd.Env = append(os.Environ(), "OMP_THREAD_LIMIT="+strconv.Itoa(nt), "OMP_NUM_THREADS="+strconv.Itoa(nt),
		"GGML_PEER_HW_CONCURRENCY="+strconv.Itoa(2*nt))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	began := time.Now()
	out, err := cmd.Output()
	if ps := cmd.ProcessState; ps != nil {
		if p.use == nil {
			p.use = map[int]*cpuUse{}
		}
		if p.use[nt] == nil {
			p.use[nt] = &cpuUse{}
		}
		p.use[nt].cpu += ps.UserTime() + ps.SystemTime()
		p.use[nt].wall += time.Since(began)
	}
	if err != nil {
		return "", fmt.Errorf("ggml test-backend-ops: %w\n%s%s", err, tail(out), tail(stderr.Bytes()))
	}
	return ansiRE.ReplaceAllString(string(out), ""), nil
}

// builtinRE matches a perf line of one of test-backend-ops' own cases:
// the op, its parameters and µs/run.
var builtinRE = regexp.MustCompile(`^\s*([A-Z_0-9]+)\((.*)\):\s+(\d+) runs -\s+([0-9.]+) us/run`)

// runBuiltins runs test-backend-ops' own perf cases that cs name (their
// op and the start of their parameters) on ggml with nt threads and sets
// each case's µs/run in res.
func (p *peer) runBuiltins(cs []benchCase, res map[string]float64, nt int, timeout time.Duration) error {
	if len(cs) == 0 {
		return nil
	}
	var alts []string
	for _, c := range cs {
		if c.op != cs[0].op {
			return fmt.Errorf("ggml's own perf cases of %s and %s in one run", cs[0].op, c.op)
		}
		alts = append(alts, regexp.QuoteMeta(c.builtin))
	}
	out, err := p.perf(timeout, nt, "-o", cs[0].op, "-p", "^("+strings.Join(alts, "|")+")")
	if err != nil {
		return err
	}
	for line := range strings.SplitSeq(out, "\n") {
		m := builtinRE.FindStringSubmatch(line)
		if m == nil || m[1] != cs[0].op {
			continue
		}
		v, err := strconv.ParseFloat(m[4], 64)
		if err != nil {
			continue
		}
		for _, c := range cs {
			if _, done := res[c.name]; !done && strings.HasPrefix(m[2], c.builtin) {
				res[c.name] = v
			}
		}
	}
	for _, c := range cs {
		if _, ok := res[c.name]; !ok {
			return fmt.Errorf("ggml test-backend-ops ran no perf case %s(%s...)\n%s", c.op, c.builtin, tail([]byte(out)))
		}
	}
	return nil
}

func tail(b []byte) string {
	const n = 2000
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

// parseOpEnum reads ggml.h's enum ggml_op (sequential values from 0) and
// returns each name's value, so that the test file matches the peer's
// numbering.
func parseOpEnum(header string) (map[string]int, error) {
	b, err := os.ReadFile(header)
	if err != nil {
		return nil, err
	}
	s := string(b)
	i := strings.Index(s, "enum ggml_op {")
	if i < 0 {
		return nil, fmt.Errorf("%s: no enum ggml_op", header)
	}
	s = s[i+len("enum ggml_op {"):]
	if j := strings.Index(s, "}"); j >= 0 {
		s = s[:j]
	}
	ops := map[string]int{}
	name := regexp.MustCompile(`^\s*(GGML_OP_[A-Z0-9_]+)\s*(=\s*0\s*)?,?`)
	for line := range strings.SplitSeq(s, "\n") {
		m := name.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		if m[1] == "GGML_OP_COUNT" {
			break
		}
		ops[strings.TrimPrefix(m[1], "GGML_OP_")] = len(ops)
	}
	if ops["NONE"] != 0 || ops["MUL_MAT"] == 0 {
		return nil, fmt.Errorf("%s: enum ggml_op not understood", header)
	}
	return ops, nil
}
