package main

import (
	"io"
	"testing"
)

func TestParseLlamaBench(t *testing.T) {
	js := `[{"n_prompt": 128, "n_gen": 0, "avg_ts": 109.85},{"n_prompt": 0, "n_gen": 64, "avg_ts": 4.9}]`
	pp, tg, err := parseLlamaBench([]byte(js))
	if err != nil || pp != 109.85 || tg != 4.9 {
		t.Fatalf("got %v %v %v", pp, tg, err)
	}
	for _, bad := range []string{"", "[]", `[{"n_prompt": 128, "n_gen": 0, "avg_ts": 1}]`, "{"} {
		if _, _, err := parseLlamaBench([]byte(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestParseGogmlRun(t *testing.T) {
	out := "load: 1 ms\nprompt: 128 tokens in 3090.834 ms (41.4 tokens/s); first pick 5473\n" +
		"per token: mean 71.468 ms, median 55.597 ms, min 48.715 ms, max 220.761 ms over 63 tokens: 14.0 tokens/s\n"
	pp, tg, err := parseGogmlRun([]byte(out))
	if err != nil || pp != 41.4 || tg != 14.0 {
		t.Fatalf("got %v %v %v", pp, tg, err)
	}
	if _, _, err := parseGogmlRun([]byte("prompt: 3 tokens\n")); err == nil {
		t.Error("no error on a truncated output")
	}
}

func TestFlags(t *testing.T) {
	for _, args := range [][]string{{"-types", ""}, {"-p", "0"}, {"-n", "70000"}, {"extra"}} {
		if _, err := parseFlags(args, io.Discard); err == nil {
			t.Errorf("%v: no error", args)
		}
	}
	o, err := parseFlags([]string{"-types", "f16, q4_K"}, io.Discard)
	if err != nil || len(o.types) != 2 || o.types[1] != "q4_K" {
		t.Fatalf("got %+v %v", o.types, err)
	}
}

func TestThreadList(t *testing.T) {
	o, err := parseFlags([]string{"-t", "1, 2", "-dim", "1024"}, io.Discard)
	if err != nil || len(o.threads) != 2 || o.threads[0] != 1 || o.maxThreads() != 2 {
		t.Fatalf("got %v %v", o.threads, err)
	}
	if want := "-types f16,q8_0,q4_0,q4_K -p 128 -n 64 -t 1,2 -r 2 -dim 1024"; o.args != want {
		t.Errorf("args %q, want %q", o.args, want)
	}
	for _, bad := range []string{"", "0", "1,x", "2000"} {
		if _, err := parseFlags([]string{"-t", bad}, io.Discard); err == nil {
			t.Errorf("-t %q: no error", bad)
		}
	}
}
