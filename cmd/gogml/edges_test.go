package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gogml/gogml/model/llama"
)

// TestCommandLineEdges runs gogml on the command lines a hostile or new
// user tried: each must end with a clear message and the right
// exit status (2 for a command line that cannot be parsed, 1 for a
// refused request), never a fatal out-of-memory or a misleading message.
func TestCommandLineEdges(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		stderr []string // substrings of stderr
		not    []string // must not appear on stderr
	}{
		{"run bad flag", []string{"run", "-bogus"}, 2, []string{"flag provided but not defined: -bogus"}, nil},
		{"membench bad flag", []string{"membench", "-bogus"}, 2, []string{"-bogus"}, nil},
		{"plan bad flag", []string{"plan", "-bogus"}, 2, []string{"-bogus"}, nil},
		{"plan no file", []string{"plan"}, 2, []string{"missing the graph file"}, nil},
		{"plan /dev/zero", []string{"plan", "/dev/zero"}, 1, []string{"larger than"}, nil},
		{"vocab x dim", []string{"run", "-vocab", "1048576", "-dim", "1048576"}, 1, []string{"llama: invalid config", "exceed the limit"}, []string{"llama: llama:"}},
		{"threads", []string{"run", "-threads", "1000000"}, 1, []string{"-threads 1000000: want 0 (all cores) to 1024"}, nil},
		{"n near 2^63", []string{"run", "-n", "9223372036854775807"}, 1, []string{"context full", "-ctx"}, nil},
		{"prompt not a number", []string{"run", "-prompt", "a"}, 1, []string{`"a" is not a token id`}, []string{"out of range"}},
		{"membench plot", []string{"membench", "-plot", filepath.Join(dir, "x.txt"), "-q"}, 1, []string{"-plot", "want a .png or .svg"}, nil},
		{"membench 1T", []string{"membench", "-max", "1T", "-ops", "alloc_free", "-types", "CPU", "-q"}, 1, []string{"lower the max size"}, []string{"membench: membench:"}},
		{"membench prefix", []string{"membench", "-types", "NOPE", "-max", "4K", "-q"}, 1, []string{"gogml membench: no buffer type"}, []string{"membench: membench:"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := realMain(tc.args, &out, &errb)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.code, out.String(), errb.String())
			}
			for _, s := range tc.stderr {
				if !strings.Contains(errb.String(), s) {
					t.Errorf("stderr lacks %q:\n%s", s, errb.String())
				}
			}
			for _, s := range tc.not {
				if strings.Contains(errb.String(), s) {
					t.Errorf("stderr has %q:\n%s", s, errb.String())
				}
			}
		})
	}
}

// TestRunErrorPrefixes: package errors are not prefixed twice.
func TestRunErrorPrefixes(t *testing.T) {
	var out, errb bytes.Buffer
	realMain([]string{"run", "-prompt", "1,256", "-q"}, &out, &errb)
	if msg := errb.String(); strings.Count(msg, "llama:") != 1 {
		t.Fatalf("stderr %q: want exactly one llama: prefix", msg)
	}
}

// TestRunPromptOnly: -n 0 evaluates the prompt and says nothing was
// generated, instead of printing a first pick and an empty list.
func TestRunPromptOnly(t *testing.T) {
	out := runOut(t, "-prompt", "1,2,3", "-n", "0", "-threads", "1", "-q")
	if strings.Contains(out, "first pick") || !strings.Contains(out, "generated: nothing (-n 0") {
		t.Fatalf("output:\n%s", out)
	}
	var o, e bytes.Buffer
	if err := runRun([]string{"-n", "-1", "-q"}, &o, &e); err == nil {
		t.Fatal("-n -1 accepted")
	}
	if err := runRun([]string{"-vocab", "1048576", "-dim", "1048576", "-q"}, &o, &e); !errors.Is(err, llama.ErrConfig) {
		t.Fatalf("vocab x dim: %v, want ErrConfig", err)
	}
}

// TestPlanStatsWritesFile: plan -stats -o FILE prints the stats and still
// writes the plan to FILE.
func TestPlanStatsWritesFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "plan.json")
	var out, errb bytes.Buffer
	if code := realMain([]string{"plan", "../../examples/graphs/example.graph.json", "-stats", "-o", path}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if !strings.Contains(out.String(), "lower bound") {
		t.Fatalf("no stats:\n%s", out.String())
	}
	data, err := os.ReadFile(path)
	if err != nil || !bytes.Contains(data, []byte(`"format"`)) {
		t.Fatalf("plan file: %v, %q", err, data)
	}
}

// TestRunMaxBufferSizeOpenGL: -max-buffer-size splits the weights on GL as
// on the CPU (it used to lower only MaxSize, not what AllocBuffer allows).
func TestRunMaxBufferSizeOpenGL(t *testing.T) {
	var out, errb bytes.Buffer
	err := runRun([]string{"-backend", "opengl", "-prompt", "1,2,3", "-n", "2", "-max-buffer-size", "512k", "-q"}, &out, &errb)
	if errors.Is(err, errBackendUnavailable) {
		t.Skipf("no OpenGL: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "in 5 buffer(s)") || !strings.Contains(out.String(), "max buffer size 512.0 KiB") {
		t.Fatalf("output:\n%s", out.String())
	}
}
