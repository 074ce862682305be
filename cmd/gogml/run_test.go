package main

import (
	"bytes"
	"errors"
	"fmt"
	"math"
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
			if s := checksumRE.FindStringSubmatch(out)[1]; !closeChecksums(t, s, sum, 1e-5) {
				t.Fatalf("checksum %s, want %s within relative 1e-5", s, sum)
			}
		})
	}
}

// closeChecksums compares two printed checksums field by field.
func closeChecksums(t *testing.T, a, b string, tol float64) bool {
	t.Helper()
	var s1, q1, s2, q2 float64
	var n1, n2 int
	if _, err := fmt.Sscanf(a, "sum=%g sumsq=%g n=%d", &s1, &q1, &n1); err != nil {
		t.Fatalf("checksum %q: %v", a, err)
	}
	if _, err := fmt.Sscanf(b, "sum=%g sumsq=%g n=%d", &s2, &q2, &n2); err != nil {
		t.Fatalf("checksum %q: %v", b, err)
	}
	rel := func(x, y float64) float64 { return math.Abs(x-y) / math.Max(math.Max(math.Abs(x), math.Abs(y)), 1e-30) }
	return n1 == n2 && rel(s1, s2) <= tol && rel(q1, q2) <= tol
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

// FuzzParseTokens: any prompt string gives ids or an error, never a panic,
// and accepted ids print back to an equivalent list.
func FuzzParseTokens(f *testing.F) {
	for _, s := range []string{"1,2,3", "", ",", " 7 , 8", "-1", "99999999999", "1,,2", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ids, err := parseTokens(s)
		if err != nil {
			return
		}
		if len(ids) == 0 {
			t.Fatalf("%q: no ids and no error", s)
		}
		parts := make([]string, len(ids))
		for i, id := range ids {
			parts[i] = fmt.Sprint(id)
		}
		again, err := parseTokens(strings.Join(parts, ","))
		if err != nil || fmt.Sprint(again) != fmt.Sprint(ids) {
			t.Fatalf("%q: %v re-parsed as %v, %v", s, ids, again, err)
		}
	})
}

// FuzzParseSize: sizes parse or fail cleanly; accepted ones are positive.
func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"", "1", "64k", "3M", "1g", "0", "-5", "18446744073709551615", "17179869184g", "k"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := parseSize(s)
		if err == nil && v == 0 && strings.TrimSpace(s) != "" {
			t.Fatalf("%q: size 0 without error", s)
		}
	})
}

// TestRunSampling: -temp samples, reproducibly for a -seed; -temp 0 and
// -top-k 1 give the greedy tokens; bad settings are errors.
func TestRunSampling(t *testing.T) {
	gen := func(args ...string) string {
		out := runOut(t, append([]string{"-prompt", "1,2,3", "-n", "12", "-q", "-per-token=false"}, args...)...)
		return regexp.MustCompile(`generated: .*`).FindString(out)
	}
	greedy := gen()
	if g := gen("-temp", "0", "-seed", "9"); g != greedy {
		t.Errorf("-temp 0: %s, want the greedy %s", g, greedy)
	}
	if g := gen("--temp", "1.5", "--top-k", "1", "-s", "4"); g != greedy {
		t.Errorf("-top-k 1: %s, want the greedy %s", g, greedy)
	}
	a, b := gen("--temp", "1.5", "--seed", "5", "--top-k", "0", "--top-p", "1", "--min-p", "0"), gen("-temp", "1.5", "-seed", "5", "-top-k", "0", "-top-p", "1", "-min-p", "0")
	if a != b {
		t.Errorf("seed 5 twice: %s and %s", a, b)
	}
	if a == greedy {
		t.Errorf("-temp 1.5 over all tokens drew the greedy tokens %s", a)
	}
	out := runOut(t, "-prompt", "1,2", "-n", "2", "-q", "-temp", "0.7")
	if !regexp.MustCompile(`sampling: temp 0.7, top-k 40, top-p 0.95, min-p 0.05, seed \d+`).MatchString(out) {
		t.Errorf("no sampling line:\n%s", out)
	}
	var o, e bytes.Buffer
	for _, args := range [][]string{{"-temp", "NaN"}, {"-temp", "1", "-top-p", "-1"}, {"-temp", "1", "-seed", "-2"}} {
		if err := runRun(append([]string{"-q", "-n", "2"}, args...), &o, &e); err == nil {
			t.Errorf("run %v succeeded", args)
		}
	}
}
