package ggmlpeer

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// OpResult counts one op's test-backend-ops cases on one device.
type OpResult struct {
	// Op is ggml's name of the op (ggml_op_desc: ADD, SILU, SWIGLU, ...).
	Op string
	// Passed, Failed and NotSupported count the cases by outcome
	// (NotSupported: the device under test declined the case); Skipped
	// counts "skipping large tensors" cases, RefNotSupported the cases
	// the reference (ggml's CPU backend) cannot run, which judge nothing.
	Passed, Failed, NotSupported, Skipped, RefNotSupported int
	// Failures lists the failed cases' parameter strings (at most
	// maxFailures are kept).
	Failures []string
	// Unfinished is the case that was running when the output ended
	// without its outcome (the program or its server died, or timed
	// out); empty when every case finished.
	Unfinished string
}

// Total is the number of cases that ran to an outcome.
func (r *OpResult) Total() int {
	return r.Passed + r.Failed + r.NotSupported + r.Skipped + r.RefNotSupported
}

// Clean reports whether every case ran and passed.
func (r *OpResult) Clean() bool {
	return r.Passes() && r.NotSupported == 0
}

// Passes reports whether every case the backend runs passed: none failed,
// the run finished, and at least one ran (cases it declines, reported "not
// supported", aside).
func (r *OpResult) Passes() bool {
	return r.Failed == 0 && r.Unfinished == "" && r.Passed > 0
}

// Report is test-backend-ops' outcome for one device.
type Report struct {
	// Device is the device name the cases were counted for (RPC0).
	Device string
	// Tested reports whether a section for Device was found and not
	// skipped.
	Tested bool
	// Ops maps op name to its counts.
	Ops map[string]*OpResult
	// SummaryPassed and SummaryTotal are the device's "N/M tests passed"
	// line (-1 when absent, as when the run was cut short).
	SummaryPassed, SummaryTotal int
	// Truncated reports that the device's section has no summary line:
	// the program died or was stopped inside it (test mode prints a case
	// only after it finished, so the case that was running is not
	// named).
	Truncated bool
}

// SortedOps returns the ops in name order.
func (r *Report) SortedOps() []*OpResult {
	out := make([]*OpResult, 0, len(r.Ops))
	for _, o := range r.Ops {
		out = append(out, o)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Op < out[j].Op })
	return out
}

const (
	maxFailures = 20
	// maxLine bounds one output line (op parameter strings are short;
	// a longer line is cut, not an error).
	maxLine = 1 << 20
)

var (
	ansiRE    = regexp.MustCompile("\x1b\\[[0-9;]*m")
	backendRE = regexp.MustCompile(`^Backend \d+/\d+: (\S+)\s*$`)
	// A case's line is "  OP(params): OUTCOME"; messages the comparison
	// printed ("[OP] NMSE = ... > ... ") may precede it on the same line.
	caseRE    = regexp.MustCompile(`^(?:|.*?\s)([A-Z][A-Z0-9_]*)\((.*)\): (.*)$`)
	summaryRE = regexp.MustCompile(`^  (\d+)/(\d+) tests passed\s*$`)
	// failingRE matches an entry of the "Failing tests:" list.
	failingRE = regexp.MustCompile(`^  ([A-Z][A-Z0-9_]*)\((.*)\)\s*$`)
)

// ErrNoDevice means the output has no tested section for the device: the
// device was not registered (no server) or was skipped, so nothing was
// judged.
var ErrNoDevice = errors.New("device not tested")

// ParseBackendOps reads test-backend-ops' console output (test mode,
// stdout only) and counts the cases of device's section by op. A case
// line without its outcome at the end of the output is recorded as
// Unfinished. It returns ErrNoDevice (with the partial report) when the
// device has no tested section.
func ParseBackendOps(r io.Reader, device string) (*Report, error) {
	rep := &Report{Device: device, Ops: map[string]*OpResult{}, SummaryPassed: -1, SummaryTotal: -1}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), maxLine)
	in := false
	var pending *OpResult
	var pendingParams string
	// failPending counts a case whose line got no outcome while the
	// program went on as failed: test-backend-ops reports some failures
	// (a buffer the device could not allocate) on stderr, lists the case
	// under "Failing tests" and moves to the next one.
	failed := map[string]bool{} // op + "(" + params + ")" of each failed case
	fail := func(op *OpResult, params string) {
		failed[op.Op+"("+params+")"] = true
		op.Failed++
		if len(op.Failures) < maxFailures {
			op.Failures = append(op.Failures, params)
		}
	}
	failPending := func() {
		if pending != nil {
			fail(pending, pendingParams)
			pending = nil
		}
	}
	for sc.Scan() {
		line := ansiRE.ReplaceAllString(sc.Text(), "")
		if m := backendRE.FindStringSubmatch(line); m != nil {
			failPending()
			in = m[1] == device
			continue
		}
		if !in {
			continue
		}
		if line == "  Skipping" || strings.HasPrefix(line, "  Skipping") {
			in = false
			continue
		}
		// The list after the summary also names cases that failed
		// without a line of their own (a buffer the device could not
		// allocate is reported on stderr only).
		if m := failingRE.FindStringSubmatch(line); m != nil && rep.SummaryTotal >= 0 {
			if !failed[m[1]+"("+m[2]+")"] {
				fail(rep.op(m[1]), m[2])
			}
			continue
		}
		if m := summaryRE.FindStringSubmatch(line); m != nil {
			failPending()
			rep.SummaryPassed, _ = strconv.Atoi(m[1])
			rep.SummaryTotal, _ = strconv.Atoi(m[2])
			continue
		}
		m := caseRE.FindStringSubmatch(line)
		if m == nil {
			// A case line printed without its outcome ("  OP(params): "
			// then the program died) has nothing after ": ".
			if m2 := caseRE.FindStringSubmatch(line + " "); m2 != nil && strings.TrimSpace(m2[3]) == "" {
				failPending()
				pending, pendingParams = rep.op(m2[1]), m2[2]
			}
			continue
		}
		rep.Tested = true
		failPending()
		op, params, status := rep.op(m[1]), m[2], strings.TrimSpace(m[3])
		switch {
		case strings.HasPrefix(status, "not supported"):
			// "not supported [NAME]" names the backend that declined.
			who := strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(strings.TrimPrefix(status, "not supported")), "["), "]")
			if who == "" || strings.HasPrefix(who, device) {
				op.NotSupported++
			} else {
				op.RefNotSupported++
			}
		case strings.HasPrefix(status, "skipping large tensors"):
			op.Skipped++
		case strings.HasSuffix(status, "OK"):
			op.Passed++
		case strings.HasSuffix(status, "FAIL"):
			fail(op, params)
		case status == "":
			pending, pendingParams = op, params
		default:
			// Anything else after the case (a message the program
			// printed before dying) leaves it unfinished.
			pending, pendingParams = op, params
		}
	}
	if err := sc.Err(); err != nil && !errors.Is(err, bufio.ErrTooLong) {
		return rep, fmt.Errorf("ggmlpeer: reading test-backend-ops output: %w", err)
	}
	if pending != nil {
		rep.Tested = true
		pending.Unfinished = pendingParams
	}
	if in && rep.SummaryTotal < 0 {
		rep.Tested = true
		rep.Truncated = true
	}
	if !rep.Tested {
		return rep, fmt.Errorf("ggmlpeer: %s: %w", device, ErrNoDevice)
	}
	return rep, nil
}

func (r *Report) op(name string) *OpResult {
	o := r.Ops[name]
	if o == nil {
		o = &OpResult{Op: name}
		r.Ops[name] = o
	}
	return o
}

// BackendOpsRun is one test-backend-ops run's outcome and output.
type BackendOpsRun struct {
	// Report holds the parsed counts (nil when the output had no device
	// section).
	Report *Report
	// Stdout and Stderr are the program's output.
	Stdout, Stderr []byte
	// Err is the program's exit error (nil on exit 0), including a
	// context deadline.
	Err error
}

// BackendOps runs "test-backend-ops test -b device -o ops" with the
// preload registering the RPC server srv, and parses its output. Where srv
// answers gogml's op-support query (a gogml server), test-backend-ops asks
// it before each case, so the cases gogml declines are "not supported"
// rather than failed. extra is appended to the arguments (e.g. "-p",
// regex). The returned error is for a run that could not start or judged
// nothing; a run with failing cases returns them in the report with a nil
// error and a non-nil run.Err.
func (p *Peer) BackendOps(ctx context.Context, srv *Server, device, ops string, extra ...string) (*BackendOpsRun, error) {
	args := append([]string{"test", "-b", device, "-o", ops}, extra...)
	// Unbuffered: a run stopped by its deadline or a crash still shows
	// every case up to the one that was running.
	env := []string{"GGML_PEER_STDOUT_UNBUFFERED=1"}
	if srv.SupportsOpQuery {
		// "test": a case ggml's CPU, the reference, declines too stays
		// the reference's (see preload.c).
		env = append(env, "GGML_PEER_SUPPORTS_OP=test")
	}
	stdout, stderr, exitErr, err := p.runCaptured(ctx, srv.Endpoint, env, "test-backend-ops", args...)
	run := &BackendOpsRun{Stdout: stdout, Stderr: stderr, Err: exitErr}
	if err != nil {
		return run, err
	}
	run.Report, err = ParseBackendOps(bytes.NewReader(run.Stdout), device)
	if err != nil {
		return run, fmt.Errorf("%w (exit: %v)\nstderr:\n%s", err, run.Err, tail(run.Stderr, 4000))
	}
	return run, nil
}

// runCaptured runs a sysroot program (see Command) and returns its output
// and exit error; err is non-nil only when it could not run at all (not
// for a non-zero exit or a context deadline).
func (p *Peer) runCaptured(ctx context.Context, endpoint string, env []string, name string, args ...string) (stdout, stderr []byte, exitErr, err error) {
	cmd, err := p.Command(ctx, endpoint, name, args...)
	if err != nil {
		return nil, nil, nil, err
	}
	cmd.Env = append(cmd.Env, env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	exitErr = cmd.Run()
	var ee *exec.ExitError
	if exitErr != nil && !errors.As(exitErr, &ee) && ctx.Err() == nil {
		return out.Bytes(), errOut.Bytes(), exitErr, fmt.Errorf("ggmlpeer: %s: %w", name, exitErr)
	}
	return out.Bytes(), errOut.Bytes(), exitErr, nil
}

// tail returns the last n bytes of b as a string.
func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

// ListOps returns the op names test-backend-ops --list-ops prints.
func (p *Peer) ListOps(ctx context.Context) ([]string, error) {
	cmd, err := p.Command(ctx, "", "test-backend-ops", "--list-ops")
	if err != nil {
		return nil, err
	}
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("ggmlpeer: test-backend-ops --list-ops: %w", err)
	}
	return parseListOps(out), nil
}

// parseListOps reads --list-ops output: a header, then one indented op
// name a line.
func parseListOps(out []byte) []string {
	var ops []string
	for _, l := range strings.Split(string(out), "\n") {
		if !strings.HasPrefix(l, "  ") {
			continue
		}
		name := strings.TrimSpace(l)
		if name != "" && !strings.ContainsAny(name, " :()") {
			ops = append(ops, name)
		}
	}
	return ops
}

// Verdict judges op's cases in the run: nil when every case ran to an
// outcome and passed, or, with declines, every case the backend ran (the
// rest "not supported", declined through gogml's op-support query), and
// the program agrees. The error says what fell short.
func (run *BackendOpsRun) Verdict(op string, declines bool) error {
	r := run.Report.Ops[op]
	switch {
	case r == nil:
		return fmt.Errorf("no %s cases in the output (exit %v)", op, run.Err)
	case run.Report.Truncated || r.Unfinished != "":
		return fmt.Errorf("%s: run cut short after %d cases (exit %v)\nstderr:\n%s", op, r.Total(), run.Err, tail(run.Stderr, 2000))
	case declines && !r.Passes(), !declines && !r.Clean():
		return fmt.Errorf("%s: %d passed, %d failed (first: %v), %d not supported", op, r.Passed, r.Failed, r.Failures, r.NotSupported)
	case run.Report.SummaryPassed != r.Passed:
		return fmt.Errorf("%s: counted %d passed, test-backend-ops says %d/%d", op, r.Passed, run.Report.SummaryPassed, run.Report.SummaryTotal)
	case run.Err != nil:
		return fmt.Errorf("%s: every case passed but test-backend-ops exited: %v", op, run.Err)
	}
	return nil
}

// Chunks splits the cases of the ops whose full run takes longer than
// one time limit on a small machine (conformance, the emulated CUDA judge) (MUL_MAT alone ran past 70 minutes)
// into test-backend-ops -p filters, one run each: by weight type, or by
// head size for flash attention. The last filter of each list matches
// every case the others do not, so together they cover the whole op
// whatever cases a later test-backend-ops adds. Nil: the op runs whole.
func Chunks(op string) []string {
	switch op {
	case "MUL_MAT":
		return partition("type_a", "f32|f16|bf16", "q4_0|q4_1|q5_0|q5_1|q8_0", "q2_K|q3_K|q4_K|q5_K|q6_K")
	case "MUL_MAT_ID":
		return partition("type_a", "f32|f16|bf16")
	case "FLASH_ATTN_EXT":
		// One head size a chunk: on llvmpipe a chunk of two took longer
		// than the limit.
		return partition("hsk", "64", "72", "80", "96", "40", "128", "192", "256", "320", "512", "576")
	}
	return nil
}

// partition returns one filter per group of values of the case parameter
// key ("key=(a|b),"), then one for every other value (a negative
// lookahead over all the groups; test-backend-ops' -p is an ECMAScript
// std::regex search).
func partition(key string, groups ...string) []string {
	out := make([]string, 0, len(groups)+1)
	for _, g := range groups {
		out = append(out, key+"=("+g+"),")
	}
	return append(out, key+"=(?!("+strings.Join(groups, "|")+"),)")
}
