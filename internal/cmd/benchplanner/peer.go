package main

import (
	"bufio"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

//go:embed cside/gallocr_bench.c
var cSource []byte

// findSysroot returns the Debian ggml 0.27.0 sysroot: the -sysroot flag,
// else scripts/ggml-peer.sh path (fetching it when missing), else
// $GOGML_GGML_SYSROOT.
func findSysroot(flagValue string) (string, error) {
	root := flagValue
	if root == "" {
		const script = "scripts/ggml-peer.sh"
		if _, err := os.Stat(script); err == nil {
			out, err := exec.Command("bash", script, "path").Output()
			if err != nil {
				return "", fmt.Errorf("%s path: %w", script, err)
			}
			root = strings.TrimSpace(string(out))
		} else {
			root = os.Getenv("GOGML_GGML_SYSROOT")
		}
	}
	if root == "" {
		return "", errors.New("no ggml sysroot: give -sysroot, run from the repository root (scripts/ggml-peer.sh) or set GOGML_GGML_SYSROOT")
	}
	for _, p := range []string{"usr/include/ggml-alloc.h", "usr/lib/x86_64-linux-gnu/libggml-base.so", "usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2"} {
		if _, err := os.Stat(filepath.Join(root, p)); err != nil {
			return "", fmt.Errorf("ggml sysroot %s: %w", root, err)
		}
	}
	return root, nil
}

// ggmlSide is the running C program: ggml's allocator behind a line
// protocol on its stdin and stdout.
type ggmlSide struct {
	cmd     *exec.Cmd
	in      io.WriteCloser
	out     *bufio.Reader
	outFile io.Closer // the pipe under out
}

// buildGGMLSide compiles cside/gallocr_bench.c against the sysroot with
// the system gcc into dir and starts it under the sysroot's loader.
func buildGGMLSide(ctx context.Context, root, dir string) (*ggmlSide, error) {
	src := filepath.Join(dir, "gallocr_bench.c")
	bin := filepath.Join(dir, "gallocr_bench")
	if err := os.WriteFile(src, cSource, 0o644); err != nil {
		return nil, err
	}
	libs := filepath.Join(root, "usr/lib/x86_64-linux-gnu")
	gcc := exec.CommandContext(ctx, "gcc", "-O2", "-o", bin, src, "-I"+filepath.Join(root, "usr/include"),
		"-L"+libs, "-lggml-base", "-Wl,--allow-shlib-undefined")
	if out, err := gcc.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("gcc: %w\n%s", err, out)
	}
	cmd := exec.CommandContext(ctx, filepath.Join(libs, "ld-linux-x86-64.so.2"), "--library-path", libs, bin)
	cmd.Stderr = os.Stderr
	cmd.WaitDelay = 5 * time.Second
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	// The C side's answers come through a pipe read with blocking system
	// calls, not through the runtime's network poller: while the Go side
	// waits, its P stays in the system call instead of going idle, so
	// sysmon keeps the period it had rather than falling asleep and
	// restarting at 20 µs polling when the answer comes (RATIONALE.md,
	// "benchplanner waits for the C side in a system call").
	out, w, err := blockingPipe()
	if err != nil {
		return nil, fmt.Errorf("pipe: %w", err)
	}
	cmd.Stdout = w
	err = cmd.Start()
	w.Close() // the child has its copy
	if err != nil {
		out.Close()
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	s := &ggmlSide{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<16), outFile: out}
	line, err := s.readLine()
	if err != nil {
		s.close()
		return nil, err
	}
	if line != "ready" {
		s.close()
		return nil, fmt.Errorf("ggml side: %s", line)
	}
	return s, nil
}

func (s *ggmlSide) close() {
	fmt.Fprintln(s.in, "quit")
	s.in.Close()
	if err := s.cmd.Wait(); err != nil {
		fmt.Fprintf(os.Stderr, "benchplanner: ggml side: %v\n", err)
	}
	s.outFile.Close()
}

// readLine reads one answer; "error ..." becomes an error.
func (s *ggmlSide) readLine() (string, error) {
	line, err := s.out.ReadString('\n')
	if err != nil {
		return "", fmt.Errorf("ggml side: %w", err)
	}
	line = strings.TrimRight(line, "\n")
	if msg, ok := strings.CutPrefix(line, "error "); ok {
		return "", fmt.Errorf("ggml side: %s", msg)
	}
	return line, nil
}

// ask sends one command and returns the fields of the answer, which must
// start with want.
func (s *ggmlSide) ask(want, format string, args ...any) ([]string, error) {
	if _, err := fmt.Fprintf(s.in, format+"\n", args...); err != nil {
		return nil, fmt.Errorf("ggml side: %w", err)
	}
	line, err := s.readLine()
	if err != nil {
		return nil, err
	}
	f := strings.Fields(line)
	if len(f) == 0 || f[0] != want {
		return nil, fmt.Errorf("ggml side: want %q, got %.80q", want, line)
	}
	return f[1:], nil
}

// load gives the C side a graph in text form; it returns the graph's id.
func (s *ggmlSide) load(path string) (int, error) {
	f, err := s.ask("ok", "load %s", path)
	if err != nil {
		return 0, err
	}
	if len(f) != 2 {
		return 0, fmt.Errorf("ggml side: load answer %q", f)
	}
	return strconv.Atoi(f[0])
}

func parseUints(f []string) ([]uint64, error) {
	out := make([]uint64, len(f))
	for i, x := range f {
		v, err := strconv.ParseUint(x, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("ggml side: %w", err)
		}
		out[i] = v
	}
	return out, nil
}

// place is where a tensor landed: the buffer type's index in the graph
// file, the chunk and the offset; typ -1 for no place from the allocator.
type place struct {
	typ, chunk int
	offset     uint64
}

// plan reserves and allocates graph id on a fresh ggml allocator and
// returns its buffer sizes per buffer-list entry and every tensor's place.
func (s *ggmlSide) plan(id, nTensors int) ([]uint64, []place, error) {
	f, err := s.ask("sizes", "plan %d", id)
	if err != nil {
		return nil, nil, err
	}
	sizes, err := parseUints(f)
	if err != nil {
		return nil, nil, err
	}
	line, err := s.readLine()
	if err != nil {
		return nil, nil, err
	}
	pf := strings.Fields(line)
	if len(pf) != 1+3*nTensors || pf[0] != "places" {
		return nil, nil, fmt.Errorf("ggml side: places line with %d fields for %d tensors", len(pf), nTensors)
	}
	places := make([]place, nTensors)
	for i := range places {
		var v [3]int64
		for k := range v {
			if v[k], err = strconv.ParseInt(pf[1+3*i+k], 10, 64); err != nil {
				return nil, nil, fmt.Errorf("ggml side: %w", err)
			}
		}
		places[i] = place{int(v[0]), int(v[1]), uint64(v[2])}
		if v[0] < 0 {
			places[i] = place{-1, -1, 0}
		}
	}
	return sizes, places, nil
}

// times runs REPS repetitions of mode (fresh or warm) on graph id and
// returns each one's time.
func (s *ggmlSide) times(mode string, id, reps int) ([]sample, error) {
	f, err := s.ask("times", "%s %d %d", mode, id, reps)
	if err != nil {
		return nil, err
	}
	return parseTimes(f, reps)
}

// empty times reps empty intervals: the clock reads alone.
func (s *ggmlSide) empty(reps int) ([]sample, error) {
	f, err := s.ask("times", "empty %d", reps)
	if err != nil {
		return nil, err
	}
	return parseTimes(f, reps)
}

// parseTimes reads the fields of a "times" answer, WALL/CPU each.
func parseTimes(f []string, reps int) ([]sample, error) {
	if len(f) != reps {
		return nil, fmt.Errorf("ggml side: %d times for %d repetitions", len(f), reps)
	}
	out := make([]sample, reps)
	for i, x := range f {
		w, c, ok := strings.Cut(x, "/")
		if !ok {
			return nil, fmt.Errorf("ggml side: time %q is not WALL/CPU", x)
		}
		var err error
		if out[i].wall, err = strconv.ParseFloat(w, 64); err == nil {
			out[i].cpu, err = strconv.ParseFloat(c, 64)
		}
		if err != nil {
			return nil, fmt.Errorf("ggml side: %w", err)
		}
	}
	return out, nil
}
