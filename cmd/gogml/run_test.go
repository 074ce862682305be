package main

import (
	"bytes"
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/gogml/gogml/model/llama"
)

var checksumRE = regexp.MustCompile(`logits checksum: (.*)`)

func runOut(t *testing.T, args ...string) string {
	t.Helper()
	var out, errb bytes.Buffer
	if err := runRun(args, &out, &errb); err != nil {
		t.Fatalf("gogml run %v: %v\n%s", args, err, errb.String())
	}
	return out.String()
}

// TestRunCommand runs the decoder front end and checks what it prints:
// the memory plan, times, generated ids and a checksum that does not
// depend on the thread count, the planner or split weights.
func TestRunCommand(t *testing.T) {
	base := runOut(t, "-prompt", "1,2,3", "-n", "6", "-threads", "1", "-q")
	for _, want := range []string{"memory plan (strategy ggml)", "weights ", "kv cache", "compute ", "lower bound",
		"prompt: 3 tokens", "token   5:", "generated: ", "tokens/s", "logits checksum: sum="} {
		if !strings.Contains(base, want) {
			t.Fatalf("output lacks %q:\n%s", want, base)
		}
	}
	sum := checksumRE.FindStringSubmatch(base)[1]
	gen := regexp.MustCompile(`generated: .*`).FindString(base)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"threads", []string{"-threads", "2"}, ""},
		{"optimized", []string{"-strategy", "optimized"}, "strategy optimized"},
		{"split", []string{"-max-buffer-size", "512k"}, "in 5 buffer(s)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := runOut(t, append([]string{"-prompt", "1,2,3", "-n", "6", "-q"}, tc.args...)...)
			if !strings.Contains(out, tc.want) {
				t.Fatalf("output lacks %q:\n%s", tc.want, out)
			}
			if g := regexp.MustCompile(`generated: .*`).FindString(out); g != gen {
				t.Fatalf("%s, want %s", g, gen)
			}
			// The CPU backend splits rows, never a dot product, so the
			// sums agree exactly; the model tests bound it at 1e-5.
			if s := checksumRE.FindStringSubmatch(out)[1]; s != sum {
				t.Fatalf("checksum %s, want %s", s, sum)
			}
		})
	}
}

func TestRunErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want error
	}{
		{"bad-token", []string{"-prompt", "1,x"}, llama.ErrToken},
		{"vocab", []string{"-prompt", "1,256"}, llama.ErrToken},
		{"context", []string{"-n", "100"}, llama.ErrContextFull},
		{"heads", []string{"-heads", "3"}, llama.ErrConfig},
		{"backend", []string{"-backend", "tpu"}, errBackendUnavailable},
		{"opengl", []string{"-backend", "opengl", "-device", "99"}, errBackendUnavailable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			err := runRun(append(tc.args, "-q"), &out, &errb)
			if !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
		})
	}
	var out, errb bytes.Buffer
	if err := runRun([]string{"-max-buffer-size", "12q"}, &out, &errb); err == nil {
		t.Fatal("bad size: no error")
	}
}
