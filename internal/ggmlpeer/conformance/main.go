// Command conformance runs ggml 0.27.0's test-backend-ops, op by op,
// against gogml rpc-server on each listed backend and writes the per-op
// table of docs/ggml-conformance.md (make ggml-conformance).
//
//	go run ./internal/ggmlpeer/conformance [-backends cpu,opengl] [-out FILE]
//	    [-logs DIR [-reuse]] [-ops A,B] [-cuda DIR [-cuda-emulated]] [-check] [-src DIR]
//
// -budget bounds the time spent per backend: ops not started by then are
// listed as not run, or, with -reuse, with what an unfinished run's logs
// hold (marked unfinished). Each op runs in its own test-backend-ops process (-b RPC0 -o OP) with a
// time limit, so a crash or a hang costs one op; the server is restarted
// when an op killed it. -logs keeps every run's output (DIR/BACKEND/OP.out
// and .err); with -reuse a finished log is parsed instead of run again,
// and an op run in chunks whose run was cut off resumes at its first
// chunk not logged to the end (when -src is at the commit that ran them).
// -cuda DIR reads logs of the same layout (DIR/OP.out) made by the NVIDIA
// device check for a CUDA column, or, with -cuda-emulated, by the kernel
// emulator (make ggml-cuda-emu), which the column's name says. -check exits 1 when a claimed op
// (ggmlpeer.Claimed) is not clean.
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
	"slices"
	"strings"
	"time"

	"github.com/gogml/gogml/internal/ggmlpeer"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "conformance:", err)
		var ue unavailableError
		if errors.As(err, &ue) {
			os.Exit(3)
		}
		os.Exit(1)
	}
}

type unavailableError struct{ error }

type options struct {
	backends, out, logs, ops, cuda, src string
	cudaEmulated                        bool
	params                              string // test-backend-ops -p: a case filter
	archs                               string
	reuse, check                        bool
	timeout, budget                     time.Duration
}

func run(args []string, stdout, stderr io.Writer) error {
	var o options
	fs := flag.NewFlagSet("conformance", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.backends, "backends", "cpu", "comma-separated gogml backends to judge (opengl builds gogml with -tags opengl,egl)")
	fs.StringVar(&o.out, "out", "", "write the markdown table here (default: stdout)")
	fs.StringVar(&o.logs, "logs", "", "keep each run's output under this directory")
	fs.BoolVar(&o.reuse, "reuse", false, "parse a finished log under -logs instead of running its op again")
	fs.StringVar(&o.ops, "ops", "", "comma-separated ops (default: every op test-backend-ops --list-ops prints)")
	fs.StringVar(&o.params, "p", "", "judge only the cases whose parameters match this regular expression (test-backend-ops -p); the counts are of those cases alone")
	fs.StringVar(&o.archs, "archs", "llama,mistral3,qwen3,qwen3moe,granite,smollm3", "test-llama-archs architectures to run on each backend (empty: none)")
	fs.StringVar(&o.cuda, "cuda", "", "directory of CUDA0 logs (OP.out) from the device check, for a CUDA column")
	fs.BoolVar(&o.cudaEmulated, "cuda-emulated", false, "the -cuda logs come from the kernel emulator (make ggml-cuda-emu), not a GPU: the column and the method say so")
	fs.StringVar(&o.src, "src", "", "repository to build gogml from (default: this one)")
	fs.BoolVar(&o.check, "check", false, "exit 1 when a claimed op is not clean")
	fs.DurationVar(&o.timeout, "timeout", 10*time.Minute, "time limit of one op's run")
	fs.DurationVar(&o.budget, "budget", 0, "per backend: start no op run after this much time (0: no limit); the rest are marked not run")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if o.check {
		o.archs = withClaimedArchs(o.archs, splitList(o.backends))
	}
	wd, err := os.Getwd()
	if err != nil {
		return err
	}
	root, err := ggmlpeer.RepoRoot(wd)
	if err != nil {
		return err
	}
	if o.src == "" {
		o.src = root
	}
	ctx := context.Background()
	peer, err := ggmlpeer.Locate(ctx, root)
	if err != nil {
		if errors.Is(err, ggmlpeer.ErrUnavailable) {
			return unavailableError{err}
		}
		return err
	}
	ops := splitList(o.ops)
	if len(ops) == 0 {
		if ops, err = peer.ListOps(ctx); err != nil {
			return err
		}
	}
	var cols []column
	for _, b := range splitList(o.backends) {
		c, err := judge(ctx, peer, &o, b, ops, stderr)
		if err != nil {
			return fmt.Errorf("backend %s: %w", b, err)
		}
		cols = append(cols, c)
	}
	if o.cuda != "" {
		name := "cuda"
		if o.cudaEmulated {
			name = "cuda (emulated)"
		}
		c, err := readLogs(o.cuda, name, ops)
		if err != nil {
			return err
		}
		cols = append(cols, c)
	}
	doc := render(peer, &o, args, ops, cols)
	if o.out == "" {
		_, err = io.WriteString(stdout, doc)
	} else {
		err = os.WriteFile(o.out, []byte(doc), 0o644)
	}
	if err != nil {
		return err
	}
	if o.check {
		return checkClaims(cols, ops, splitList(o.archs))
	}
	return nil
}

// splitList splits a comma-separated flag value, dropping blanks.
func splitList(s string) []string {
	return strings.FieldsFunc(strings.ReplaceAll(s, " ", ""), func(r rune) bool { return r == ',' })
}

// column is one backend's per-op results.
type column struct {
	backend string
	results map[string]*ggmlpeer.OpResult
	notes   map[string]string
	// archRows are the RPC device's test-llama-archs rows by arch;
	// archNotes say why an arch has none.
	archRows  map[string][]ggmlpeer.ArchRow
	archNotes map[string]string
	// built says which gogml produced the results, in the order first
	// seen (from the logs' OP.built or .built file when they were
	// reused); builtOps lists the ops each one judged.
	built    []string
	builtOps map[string][]string
}

// judgedBy records that build b judged op.
func (c *column) judgedBy(b, op string) {
	c.built = appendNew(c.built, b)
	c.builtOps[b] = append(c.builtOps[b], op)
}

// provenance says which gogml judged which ops: the build alone when
// one judged them all, else each build with its ops, the build that
// judged most of them last, as "the other N ops".
func (c *column) provenance() string {
	if len(c.built) == 1 {
		return c.built[0]
	}
	most := ""
	for _, b := range c.built {
		if most == "" || len(c.builtOps[b]) > len(c.builtOps[most]) {
			most = b
		}
	}
	var parts []string
	for _, b := range c.built {
		if b != most {
			parts = append(parts, fmt.Sprintf("%s: %s", strings.Join(c.builtOps[b], ", "), b))
		}
	}
	if most != "" {
		parts = append(parts, fmt.Sprintf("the other %d ops: %s", len(c.builtOps[most]), most))
	}
	return strings.Join(parts, "; ")
}

// builtOf reads which gogml wrote op's logs under dir: OP.built, or the
// directory's .built for logs older than per-op provenance.
func builtOf(dir, op string) string {
	for _, name := range []string{op + ".built", ".built"} {
		if b, err := os.ReadFile(filepath.Join(dir, name)); err == nil {
			return strings.TrimSpace(string(b)) + " (from logs)"
		}
	}
	return "unknown gogml (logs without a .built file) (from logs)"
}

func tagsFor(backend string) string {
	if backend == "opengl" {
		return "opengl,egl"
	}
	return ""
}

func judge(ctx context.Context, peer *ggmlpeer.Peer, o *options, backend string, ops []string, log io.Writer) (column, error) {
	col := column{backend: backend, results: map[string]*ggmlpeer.OpResult{}, notes: map[string]string{},
		archRows: map[string][]ggmlpeer.ArchRow{}, archNotes: map[string]string{}, builtOps: map[string][]string{}}
	dir, err := os.MkdirTemp("", "gogml-conformance-")
	if err != nil {
		return col, err
	}
	defer os.RemoveAll(dir)
	var logDir string
	if o.logs != "" {
		logDir = filepath.Join(o.logs, backend)
		if err := os.MkdirAll(logDir, 0o755); err != nil {
			return col, err
		}
	}
	var bin, built string
	var srv *ggmlpeer.Server
	defer func() {
		if srv != nil {
			_ = srv.Close()
		}
	}()
	// ensure builds gogml once and (re)starts its server when needed.
	ensure := func() error {
		var err error
		if bin == "" {
			if bin, err = ggmlpeer.BuildGogml(ctx, o.src, dir, tagsFor(backend)); err != nil {
				return err
			}
			built = fmt.Sprintf("%s, built %s", describeSource(o.src), time.Now().UTC().Format("2006-01-02 15:04 UTC"))
			if logDir != "" {
				_ = os.WriteFile(filepath.Join(logDir, ".built"), []byte(built), 0o644)
			}
		}
		if srv == nil || !srv.Alive() {
			srv, err = ggmlpeer.StartGogmlServer(bin, backend)
		}
		return err
	}
	began := time.Now()
	for i, op := range ops {
		filters := []string{o.params}
		if o.params == "" {
			if c := ggmlpeer.Chunks(op); c != nil {
				filters = c
			}
		}
		if logDir != "" && o.reuse {
			if r, note, ok := reuseLog(logDir, op); ok {
				col.results[op], col.notes[op] = r, note
				col.judgedBy(builtOf(logDir, op), op)
				fmt.Fprintf(log, "[%s %d/%d] %s: %s (from log)\n", backend, i+1, len(ops), op, summary(r, note))
				continue
			}
		}
		if o.budget > 0 && time.Since(began) > o.budget {
			col.notes[op] = "not run: the time budget (-budget) was spent"
			if logDir != "" && o.reuse {
				if r, note, ok := partialLog(logDir, op); ok {
					col.results[op], col.notes[op] = r, note
					col.judgedBy(builtOf(logDir, op), op)
				}
			}
			continue
		}
		start := time.Now()
		parts := make([]*ggmlpeer.OpResult, 0, len(filters))
		note := ""
		opBuilt := built
		if logDir != "" && o.reuse && len(filters) > 1 {
			// An unfinished chunked run of this same source resumes at
			// its first chunk not logged to the end.
			if done, b := finishedChunks(logDir, op, len(filters), describeSource(o.src)); len(done) > 0 {
				parts, opBuilt = done, b
				note = fmt.Sprintf("chunks 1-%d from an unfinished run's logs", len(done))
			}
		}
		if logDir != "" && len(parts) == 0 {
			clearLogs(logDir, op)
		}
		for c := len(parts); c < len(filters); c++ {
			filter := filters[c]
			if srv != nil && !srv.Alive() {
				note = join(note, "server restarted before this op")
			}
			if err := ensure(); err != nil {
				return col, err
			}
			if c == 0 && logDir != "" {
				// Written first, so that an unfinished run's partial logs
				// name their build too.
				opBuilt = built
				_ = os.WriteFile(filepath.Join(logDir, op+".built"), []byte(built), 0o644)
			}
			stem := op
			if len(filters) > 1 {
				stem = fmt.Sprintf("%s.c%d", op, c+1)
			}
			r, n, timedOut, err := runOp(ctx, peer, srv, o.timeout, op, filter, logDir, stem)
			if err != nil {
				return col, err
			}
			if timedOut {
				// The server may still be computing the case the limit cut
				// off, which would hold the next run up to its own limit
				// (CONV_2D's largest case once made CONV_2D_DW time out
				// with no case run): the next run gets a new server.
				_ = srv.Close()
				srv = nil
			}
			if len(filters) > 1 && n != "" {
				n = "chunk " + filter + ": " + n
			}
			parts, note = append(parts, r), join(note, n)
		}
		r := mergeResults(op, parts)
		if len(filters) > 1 {
			note = join(chunkNote(filters), note)
		}
		if r.Total() == 0 && r.Unfinished == "" && note == "" {
			note = "no cases"
		}
		col.results[op], col.notes[op] = r, note
		col.judgedBy(opBuilt, op)
		if logDir != "" {
			_ = os.WriteFile(filepath.Join(logDir, op+".note"), []byte(note), 0o644)
		}
		fmt.Fprintf(log, "[%s %d/%d] %s: %s (%.0fs)\n", backend, i+1, len(ops), op, summary(r, note), time.Since(start).Seconds())
	}
	for _, arch := range splitList(o.archs) {
		if logDir != "" && o.reuse {
			if rows, ok := reuseArchs(logDir, arch); ok {
				col.archRows[arch] = rows
				if len(rows) == 0 {
					col.archNotes[arch] = "no row for the RPC device (from log)"
				}
				fmt.Fprintf(log, "[%s] test-llama-archs -a %s: %d rows (from log)\n", backend, arch, len(rows))
				continue
			}
		}
		if err := ensure(); err != nil {
			return col, err
		}
		octx, cancel := context.WithTimeout(ctx, o.timeout)
		run, err := peer.LlamaArchs(octx, srv.Endpoint, arch, 1)
		cancel()
		if run != nil && logDir != "" {
			_ = os.WriteFile(filepath.Join(logDir, "archs-"+arch+".out"), run.Stdout, 0o644)
			_ = os.WriteFile(filepath.Join(logDir, "archs-"+arch+".err"), run.Stderr, 0o644)
		}
		switch {
		case err != nil:
			col.archNotes[arch] = err.Error()
		default:
			col.archRows[arch] = run.Device(srv.Endpoint)
			if len(col.archRows[arch]) == 0 {
				col.archNotes[arch] = "no row for the RPC device (exit: " + fmt.Sprint(run.Err) + "): " + lastLines(string(run.Stderr), 2)
			}
		}
		fmt.Fprintf(log, "[%s] test-llama-archs -a %s: %d rows %s\n", backend, arch, len(col.archRows[arch]), col.archNotes[arch])
	}
	return col, nil
}

// reuseLog parses a finished run's log (one with a .note file, written
// after the run). An op run in chunks has one log per chunk, OP.c1.out,
// OP.c2.out, ..., merged here as the run merged them; chunks written by
// hand (runs with other -p filters, renamed) merge the same way.
func reuseLog(dir, op string) (*ggmlpeer.OpResult, string, bool) {
	note, err := os.ReadFile(filepath.Join(dir, op+".note"))
	if err != nil {
		return nil, "", false
	}
	r, ok := readOpLogs(dir, op)
	return r, strings.TrimSpace(string(note)), ok
}

// partialLog reads the logs an unfinished run of op left under dir (a
// run still going, or killed): the chunks it logged, merged, the last of
// them possibly cut inside a case. It is what a table written with the
// budget spent shows for such an op, marked unfinished, rather than
// nothing; -reuse alone never takes it for a finished run (reuseLog
// wants the note a finished run writes).
func partialLog(dir, op string) (*ggmlpeer.OpResult, string, bool) {
	r, ok := readOpLogs(dir, op)
	if !ok {
		return nil, "", false
	}
	logged, _ := filepath.Glob(filepath.Join(dir, op+".c*.out"))
	note := "unfinished run: its log as it stood when the table was written"
	if n := len(ggmlpeer.Chunks(op)); n > 0 {
		note = fmt.Sprintf("unfinished run: %d of its %d chunks logged (the last possibly cut inside a case) when the table was written", len(logged), n)
	}
	if r.Unfinished == "" {
		r.Unfinished = "the cases after those logged"
	}
	return r, note, true
}

// readOpLogs parses op's log under dir, DIR/OP.out or its chunks
// OP.c1.out, OP.c2.out, ... merged; false when there is none.
func readOpLogs(dir, op string) (*ggmlpeer.OpResult, bool) {
	stems := []string{op}
	for c := 1; ; c++ {
		stem := fmt.Sprintf("%s.c%d", op, c)
		if _, err := os.Stat(filepath.Join(dir, stem+".out")); err != nil {
			break
		}
		if c == 1 {
			stems = stems[:0]
		}
		stems = append(stems, stem)
	}
	parts := make([]*ggmlpeer.OpResult, 0, len(stems))
	for _, stem := range stems {
		out, err := os.ReadFile(filepath.Join(dir, stem+".out"))
		if err != nil {
			return nil, false
		}
		parts = append(parts, opResult(out, op))
	}
	return mergeResults(op, parts), true
}

// finishedChunks returns the results of the leading chunks of op that an
// unfinished run (no OP.note) logged to the end under dir, and the build
// that ran them, when that build was made from source (the same
// directory and commit, so a resumed run is one build's judgement); none
// otherwise. At most n-1 chunks: a run with all n logged finished.
func finishedChunks(dir, op string, n int, source string) ([]*ggmlpeer.OpResult, string) {
	if _, err := os.Stat(filepath.Join(dir, op+".note")); err == nil {
		return nil, ""
	}
	b, err := os.ReadFile(filepath.Join(dir, op+".built"))
	built := strings.TrimSpace(string(b))
	if err != nil || !strings.HasPrefix(built, source+", built ") || strings.Contains(source, "uncommitted") {
		return nil, ""
	}
	var done []*ggmlpeer.OpResult
	for c := 1; c < n; c++ {
		out, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("%s.c%d.out", op, c)))
		if err != nil {
			break
		}
		r := opResult(out, op)
		// test-backend-ops ends every run it finishes with "N/M backends passed".
		if r.Unfinished != "" || !bytes.Contains(out, []byte("backends passed")) {
			break
		}
		done = append(done, r)
	}
	return done, built
}

// clearLogs removes an earlier run's logs of op (whole or in chunks), so
// a later -reuse never merges a stale chunk into this run.
func clearLogs(dir, op string) {
	old, _ := filepath.Glob(filepath.Join(dir, op+".c*.*"))
	for _, f := range append(old, filepath.Join(dir, op+".out"), filepath.Join(dir, op+".err"), filepath.Join(dir, op+".note"), filepath.Join(dir, op+".built")) {
		_ = os.Remove(f)
	}
}

// runOp runs test-backend-ops for op (its cases matching filter, all when
// filter is empty) against srv under limit, and keeps the output under
// logDir as stem.out, stem.err (and the server's log).
// timedOut reports whether the limit cut the run off.
func runOp(ctx context.Context, peer *ggmlpeer.Peer, srv *ggmlpeer.Server, limit time.Duration, op, filter, logDir, stem string) (r *ggmlpeer.OpResult, note string, timedOut bool, err error) {
	octx, cancel := context.WithTimeout(ctx, limit)
	var extra []string
	if filter != "" {
		extra = []string{"-p", filter}
	}
	run, err := peer.BackendOps(octx, srv, "RPC0", op, extra...)
	timedOut = octx.Err() != nil
	cancel()
	if run != nil && logDir != "" {
		_ = os.WriteFile(filepath.Join(logDir, stem+".out"), run.Stdout, 0o644)
		_ = os.WriteFile(filepath.Join(logDir, stem+".err"), run.Stderr, 0o644)
		_ = os.WriteFile(filepath.Join(logDir, "server.log"), []byte(srv.Log()), 0o644)
	}
	r = &ggmlpeer.OpResult{Op: op}
	switch {
	case run != nil && run.Report != nil:
		if rr := run.Report.Ops[op]; rr != nil {
			r = rr
		}
		if run.Report.Truncated && r.Unfinished == "" {
			r.Unfinished = fmt.Sprintf("the case after the %d that finished", r.Total())
		}
	case err != nil && !errors.Is(err, ggmlpeer.ErrNoDevice):
		return nil, "", false, err
	}
	if timedOut {
		note = join(note, fmt.Sprintf("timed out after %v", limit))
	} else if run != nil && run.Err != nil && r.Unfinished != "" {
		note = join(note, "test-backend-ops died ("+firstLine(run.Err.Error())+")")
	}
	if !srv.Alive() {
		note = join(note, "gogml rpc-server exited: "+lastLines(srv.Log(), 3))
	}
	return r, note, timedOut, nil
}

// chunkNote says how an op's run was split.
func chunkNote(filters []string) string {
	return fmt.Sprintf("run in %d chunks of its cases, each under the time limit (-p %s)", len(filters), strings.Join(filters, " ; "))
}

// maxFailures is how many failed cases a merged result names, as many as
// ggmlpeer keeps for one run.
const maxFailures = 20

// mergeResults adds up the chunks' counts of one op; the first unfinished
// chunk names the op's unfinished case.
func mergeResults(op string, parts []*ggmlpeer.OpResult) *ggmlpeer.OpResult {
	if len(parts) == 1 {
		return parts[0]
	}
	m := &ggmlpeer.OpResult{Op: op}
	for _, p := range parts {
		m.Passed += p.Passed
		m.Failed += p.Failed
		m.NotSupported += p.NotSupported
		m.Skipped += p.Skipped
		m.RefNotSupported += p.RefNotSupported
		m.Failures = append(m.Failures, p.Failures...)
		if m.Unfinished == "" {
			m.Unfinished = p.Unfinished
		}
	}
	if len(m.Failures) > maxFailures {
		m.Failures = m.Failures[:maxFailures]
	}
	return m
}

// opResult parses one op's test-backend-ops output.
func opResult(out []byte, op string) *ggmlpeer.OpResult {
	r := &ggmlpeer.OpResult{Op: op}
	rep, err := ggmlpeer.ParseBackendOps(bytes.NewReader(out), "RPC0")
	if err != nil {
		return r
	}
	if rep.Ops[op] != nil {
		r = rep.Ops[op]
	}
	if rep.Truncated && r.Unfinished == "" {
		r.Unfinished = fmt.Sprintf("the case after the %d that finished", r.Total())
	}
	return r
}

// endpointRE matches an RPC device's description (its HOST:PORT).
var endpointRE = regexp.MustCompile(`^[0-9.]+:[0-9]+$`)

// reuseArchs parses a saved test-llama-archs log and keeps the RPC
// device's rows (the device described by an endpoint).
func reuseArchs(dir, arch string) ([]ggmlpeer.ArchRow, bool) {
	out, err := os.ReadFile(filepath.Join(dir, "archs-"+arch+".out"))
	if err != nil {
		return nil, false
	}
	rows, err := ggmlpeer.ParseLlamaArchs(bytes.NewReader(out))
	if err != nil {
		return nil, false
	}
	var keep []ggmlpeer.ArchRow
	for _, r := range rows {
		if endpointRE.MatchString(r.Device) {
			keep = append(keep, r)
		}
	}
	return keep, true
}

// readLogs reads a device check's OP.out files (CUDA column), or an
// op's chunks OP.c1.out, OP.c2.out, ... (runs with -p filters) merged.
func readLogs(dir, backend string, ops []string) (column, error) {
	col := column{backend: backend, results: map[string]*ggmlpeer.OpResult{}, notes: map[string]string{}}
	if _, err := os.Stat(dir); err != nil {
		return col, err
	}
	for _, op := range ops {
		if r, ok := readOpLogs(dir, op); ok {
			col.results[op] = r
		}
	}
	return col, nil
}

func join(a, b string) string {
	if a == "" {
		return b
	}
	if b == "" {
		return a
	}
	return a + "; " + b
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " / ")
}

// summaryOrNotRun is summary, or "not run" where r is nil.
func summaryOrNotRun(r *ggmlpeer.OpResult, note string) string {
	if r == nil {
		return "not run (" + note + ")"
	}
	return summary(r, note)
}

func summary(r *ggmlpeer.OpResult, note string) string {
	s := fmt.Sprintf("%d passed, %d failed, %d not supported, %d not supported by the reference", r.Passed, r.Failed, r.NotSupported, r.RefNotSupported)
	if r.Unfinished != "" {
		s += ", unfinished at (" + r.Unfinished + ")"
	}
	if note != "" {
		s += " [" + note + "]"
	}
	return s
}

func cell(r *ggmlpeer.OpResult, ok bool) string {
	if !ok {
		return "–"
	}
	s := fmt.Sprintf("%d / %d / %d", r.Passed, r.Failed, r.NotSupported)
	if r.RefNotSupported > 0 {
		s += fmt.Sprintf(" (+%d ref)", r.RefNotSupported)
	}
	if r.Unfinished != "" {
		s += " †"
	}
	if r.Passes() {
		s = "**" + s + "**"
	}
	return s
}

func appendNew(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

// describeSource names the checkout gogml is built from: directory,
// commit, and whether it has uncommitted changes.
func describeSource(dir string) string {
	return fmt.Sprintf("%s at commit %s", dir, gitDescribe(dir))
}

func gitDescribe(dir string) string {
	out, err := exec.Command("git", "-C", dir, "rev-parse", "--short=12", "HEAD").Output()
	if err != nil {
		return "unknown"
	}
	s := strings.TrimSpace(string(out))
	if st, err := exec.Command("git", "-C", dir, "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(bytes.TrimSpace(st)) > 0 {
		s += " (with uncommitted changes)"
	}
	return s
}

func render(peer *ggmlpeer.Peer, o *options, args, ops []string, cols []column) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# gogml against ggml's test-backend-ops\n\n")
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = a
		if a == "" || strings.ContainsAny(a, " \t'\"") {
			quoted[i] = fmt.Sprintf("%q", a)
		}
	}
	fmt.Fprintf(&b, "Written by `go run ./internal/ggmlpeer/conformance %s` (`make ggml-conformance` runs it with `-backends cpu,opengl`); do not edit by hand.\n\n", strings.Join(quoted, " "))
	fmt.Fprintf(&b, "- date: %s\n", time.Now().UTC().Format("2006-01-02 15:04 UTC"))
	fmt.Fprintf(&b, "- peer: %s (Debian, scripts/ggml-peer.sh), RPC protocol 8.0.0\n", peer.Version)
	for _, c := range cols {
		if len(c.built) > 0 {
			fmt.Fprintf(&b, "- gogml judged on %s: %s\n", c.backend, c.provenance())
		}
	}
	if len(splitList(o.backends)) > 0 {
		fmt.Fprintf(&b, "- method: for each op, `test-backend-ops test -b RPC0 -o OP` with RPC0 = `gogml rpc-server -backend B` (registered by the preload), every case compared with ggml's own CPU backend in the same process, under a time limit per op (%v in this invocation; a note names the limit an op hit)\n", o.timeout)
	}
	if o.cuda != "" && o.cudaEmulated {
		fmt.Fprintf(&b, "- cuda (emulated): `test-backend-ops test -b RPC0 -o OP` (the longest ops in chunks, each under its own time limit) against the CUDA backend served in process (backends/cuda TestGGMLJudgesEmulatedCUDA, `make ggml-cuda-emu`) over gogml's kernel emulator: the kernels' CUDA C built for the host with g++ and a stand-in driver. It judges the kernels' source, their launch arguments and the Go dispatch, not the committed PTX on a GPU (RATIONALE.md, \"ggml judges the CUDA kernels on the emulator\"); logs read from %s\n", o.cuda)
	} else if o.cuda != "" {
		fmt.Fprintf(&b, "- cuda: CUDA0 logs (OP.out) from the NVIDIA device check, read from %s\n", o.cuda)
	}
	b.WriteString("\n")
	fmt.Fprintf(&b, "Each cell: cases passed / failed / not supported by gogml; (+N ref): cases ggml's own CPU backend, the reference, does not support (they judge nothing). **Bold**: every case gogml runs passed (none failed, the run finished). † the run ended inside a case (crash or time limit; see the notes). –: not run.\n\n")
	fmt.Fprintf(&b, "Protocol 8.0.0 has no op-support query (ggml's RPC client claims every op). The preload asks the server instead, through gogml's protocol extension GOGML_SUPPORTS_OP (`gogml rpc-server -supports-op-query`, scripts/ggml-peer/preload.c): before each case test-backend-ops calls ggml_backend_supports_op on every tensor of the case, and the server answers with the checks GRAPH_COMPUTE makes before it runs a node (the backend's SupportsOp, sources with elements). A case gogml declines is therefore \"not supported\", as for ggml's local backends, and \"failed\" means computed wrong (or, should a declined node still reach GRAPH_COMPUTE, filled with NaN by the server).\n\n")
	for _, c := range cols {
		passes, clean, passed, failed, declined, total := 0, 0, 0, 0, 0, 0
		for _, op := range ops {
			r := c.results[op]
			if r == nil {
				continue
			}
			if r.Passes() {
				passes++
			}
			if r.Clean() {
				clean++
			}
			passed += r.Passed
			failed += r.Failed
			declined += r.NotSupported
			total += r.Passed + r.Failed + r.NotSupported
		}
		fmt.Fprintf(&b, "- %s: %d of %d ops pass every case gogml runs (%d of them every case: none declined); of %d cases, %d passed, %d failed and %d were declined\n", c.backend, passes, len(ops), clean, total, passed, failed, declined)
	}
	b.WriteString("\n| op |")
	for _, c := range cols {
		fmt.Fprintf(&b, " %s |", c.backend)
	}
	b.WriteString(" notes |\n|---|")
	for range cols {
		b.WriteString("---|")
	}
	b.WriteString("---|\n")
	for _, op := range ops {
		fmt.Fprintf(&b, "| %s |", op)
		var notes []string
		for _, c := range cols {
			r, ok := c.results[op]
			fmt.Fprintf(&b, " %s |", cell(r, ok))
			if n := c.notes[op]; n != "" {
				notes = append(notes, c.backend+": "+n)
			}
			if ok && r.Unfinished != "" {
				notes = append(notes, fmt.Sprintf("%s: unfinished at %s(%s)", c.backend, op, r.Unfinished))
			}
			if ok && len(r.Failures) > 0 {
				notes = append(notes, fmt.Sprintf("%s: first failure %s(%s)", c.backend, op, r.Failures[0]))
			}
		}
		fmt.Fprintf(&b, " %s |\n", escape(strings.Join(notes, "; ")))
	}
	if o.archs != "" {
		renderArchs(&b, o, cols)
	}
	return b.String()
}

// renderArchs writes the test-llama-archs section: each architecture
// (random weights, built in memory by llama.cpp) on the RPC device,
// compared with ggml's CPU.
func renderArchs(b *strings.Builder, o *options, cols []column) {
	fmt.Fprintf(b, "\n## test-llama-archs\n\n")
	fmt.Fprintf(b, "`test-llama-archs -a ARCH -s 1` with the RPC device registered by the preload: llama.cpp builds each architecture with random weights in memory, runs it on the RPC device (layers and KV cache in gogml's buffers) and compares the logits with ggml's CPU (NMSE ≤ 1e-4), then saves/reloads it (roundtrip). Rows for the RPC device only.\n\n")
	b.WriteString("| arch | config | backend | verdicts | details |\n|---|---|---|---|---|\n")
	for _, arch := range splitList(o.archs) {
		for _, c := range cols {
			if c.archRows == nil {
				continue
			}
			if n := c.archNotes[arch]; n != "" {
				fmt.Fprintf(b, "| %s | | %s | – | %s |\n", arch, c.backend, escape(n))
				continue
			}
			for _, r := range c.archRows[arch] {
				var v, d []string
				for i, st := range r.Status {
					v = append(v, r.Columns[i]+": "+st)
					if r.Detail[i] != "" {
						d = append(d, r.Columns[i]+" "+strings.Join(strings.Fields(r.Detail[i]), " "))
					}
				}
				verdict := strings.Join(v, ", ")
				if r.OK() {
					verdict = "**" + verdict + "**"
				} else if len(v) == 0 {
					verdict = "died inside the row"
				}
				fmt.Fprintf(b, "| %s | %s | %s | %s | %s |\n", r.Arch, r.Config, c.backend, escape(verdict), escape(strings.Join(d, "; ")))
			}
		}
	}
}

func escape(s string) string {
	s = strings.ReplaceAll(s, "|", "\\|")
	return strings.ReplaceAll(s, "\n", " ")
}

// checkClaims reports every claimed op among ops that did not pass every
// case, including one that was not run (-budget) or not found, and every
// claimed test-llama-archs row (ClaimedArchs) of an architecture among
// archs that is not OK or missing.
func checkClaims(cols []column, ops, archs []string) error {
	var bad []string
	for _, c := range cols {
		for _, op := range ggmlpeer.Claimed[c.backend] {
			if !slices.Contains(ops, op) {
				continue
			}
			r := c.results[op]
			if r == nil {
				bad = append(bad, fmt.Sprintf("%s %s: not run (%s)", c.backend, op, c.notes[op]))
				continue
			}
			if !r.Clean() {
				bad = append(bad, fmt.Sprintf("%s %s: %s", c.backend, op, summary(r, c.notes[op])))
			}
		}
		for _, op := range ggmlpeer.ClaimedDeclining[c.backend] {
			if !slices.Contains(ops, op) {
				continue
			}
			if r := c.results[op]; r == nil || !r.Passes() {
				bad = append(bad, fmt.Sprintf("%s %s (declining the cases it lacks): %s", c.backend, op, summaryOrNotRun(r, c.notes[op])))
			}
		}
	}
	for _, c := range cols {
	claims:
		for _, claim := range ggmlpeer.ClaimedArchs[c.backend] {
			arch, config, _ := strings.Cut(claim, "/")
			if !slices.Contains(archs, arch) {
				continue
			}
			for _, r := range c.archRows[arch] {
				if r.Config == config {
					if !r.OK() {
						bad = append(bad, fmt.Sprintf("%s test-llama-archs %s: %v %v", c.backend, claim, r.Status, r.Detail))
					}
					continue claims
				}
			}
			bad = append(bad, fmt.Sprintf("%s test-llama-archs %s: no row (%s)", c.backend, claim, c.archNotes[arch]))
		}
	}
	if len(bad) > 0 {
		slices.Sort(bad)
		return fmt.Errorf("claimed ops or test-llama-archs rows that are not clean:\n  %s", strings.Join(bad, "\n  "))
	}
	return nil
}

// withClaimedArchs adds to the comma-separated archs every architecture
// of a row ClaimedArchs claims for one of the backends, so that -check
// judges each claimed row.
func withClaimedArchs(archs string, backends []string) string {
	list := splitList(archs)
	for _, b := range backends {
		for _, claim := range ggmlpeer.ClaimedArchs[b] {
			arch, _, _ := strings.Cut(claim, "/")
			if !slices.Contains(list, arch) {
				list = append(list, arch)
			}
		}
	}
	return strings.Join(list, ",")
}
