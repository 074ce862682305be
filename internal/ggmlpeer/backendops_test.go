package ggmlpeer

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestParseBackendOps(t *testing.T) {
	const esc = "\x1b[1;32m"
	tests := []struct {
		name      string
		in        string // inline output, or testdata file name ending in .out
		device    string
		wantErr   error
		op        string
		pass      int
		fail      int
		notSup    int
		skipped   int
		refNotSup int
		truncated bool
		unfinish  string
		summary   [2]int
	}{
		{name: "all pass", in: "add-ok.out", device: "RPC0", op: "ADD", pass: 6, summary: [2]int{6, 6}},
		{name: "failures with messages before the case", in: "acc-fail.out", device: "RPC0", op: "ACC", fail: 6, summary: [2]int{0, 6}},
		{name: "other device skipped", in: "add-ok.out", device: "CPU", wantErr: ErrNoDevice},
		{name: "device absent", in: "Testing 1 devices\n\nBackend 1/1: CPU\n  Skipping\n1/1 backends passed\n", device: "RPC0", wantErr: ErrNoDevice},
		{
			name:   "not supported and skipped",
			in:     "Backend 1/1: RPC0\n  MUL_MAT(type_a=q4_0,n=1): not supported [RPC0[127.0.0.1:5]] \n  MUL_MAT(type_a=q4_1,n=1): not supported [CPU] \n  MUL_MAT(type_a=f32,n=1): skipping large tensors for speed \n  MUL_MAT(type_a=f16,n=1): " + esc + "OK\x1b[0m\n  1/1 tests passed\n",
			device: "RPC0", op: "MUL_MAT", pass: 1, notSup: 1, skipped: 1, refNotSup: 1, summary: [2]int{1, 1},
		},
		{
			name:   "died after two cases",
			in:     "Backend 2/3: RPC0\n  Device description: x\n\n  SIN(type=f32): OK\n  SIN(type=f16): OK\n",
			device: "RPC0", op: "SIN", pass: 2, truncated: true, summary: [2]int{-1, -1},
		},
		{
			name:   "case line without outcome",
			in:     "Backend 1/1: RPC0\n  COS(type=f32): OK\n  COS(type=f16,ne=[4,1,1,1]): ",
			device: "RPC0", op: "COS", pass: 1, truncated: true, unfinish: "type=f16,ne=[4,1,1,1]", summary: [2]int{-1, -1},
		},
		{
			name:   "case line without outcome, then more cases",
			in:     "Backend 1/1: RPC0\n  MUL_MAT_ID(type_a=q4_0,m=2880): \n  MUL_MAT_ID(type_a=f16,m=512): " + esc + "OK\x1b[0m\n  1/2 tests passed\n\nFailing tests:\n  MUL_MAT_ID(type_a=q4_0,m=2880)\n",
			device: "RPC0", op: "MUL_MAT_ID", pass: 1, fail: 1, summary: [2]int{1, 2},
		},
		{
			name:   "cases failing without a line (buffer not allocated) are in the failing list",
			in:     "Backend 1/1: RPC0\n  MUL_MAT_ID(type_a=f16,m=512): " + esc + "OK\x1b[0m\n  MUL_MAT_ID(type_a=f32,m=8): \x1b[1;31mFAIL\x1b[0m\n  1/4 tests passed\n\nFailing tests:\n  MUL_MAT_ID(type_a=q4_0,m=2880)\n  MUL_MAT_ID(type_a=f32,m=8)\n  MUL_MAT_ID(type_a=q4_K,m=4096)\n  Backend RPC0[127.0.0.1:4]: \x1b[1;31mFAIL\x1b[0m\nBackend 2/2: CPU\n  Skipping\n",
			device: "RPC0", op: "MUL_MAT_ID", pass: 1, fail: 3, summary: [2]int{1, 4},
		},
		{
			name:   "NMSE message and nested parentheses",
			in:     "Backend 1/1: RPC0\n[SOFT_MAX] NMSE = 0.000000103 > 0.000000100   SOFT_MAX(type=f32,ne=[1024,16,1,1],mask=1,scale=1.000000): FAIL\n  0/1 tests passed\n",
			device: "RPC0", op: "SOFT_MAX", fail: 1, summary: [2]int{0, 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := tt.in
			if strings.HasSuffix(in, ".out") {
				b, err := os.ReadFile(filepath.Join("testdata", in))
				if err != nil {
					t.Fatal(err)
				}
				in = string(b)
			}
			rep, err := ParseBackendOps(strings.NewReader(in), tt.device)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Ops) != 1 {
				t.Fatalf("ops = %v, want only %s", rep.SortedOps(), tt.op)
			}
			r := rep.Ops[tt.op]
			if r == nil {
				t.Fatalf("no %s in %v", tt.op, rep.Ops)
			}
			if r.Passed != tt.pass || r.Failed != tt.fail || r.NotSupported != tt.notSup || r.Skipped != tt.skipped || r.RefNotSupported != tt.refNotSup {
				t.Errorf("%s: passed %d failed %d not supported %d skipped %d ref-not-supported %d, want %d %d %d %d %d",
					tt.op, r.Passed, r.Failed, r.NotSupported, r.Skipped, r.RefNotSupported, tt.pass, tt.fail, tt.notSup, tt.skipped, tt.refNotSup)
			}
			if rep.Truncated != tt.truncated || r.Unfinished != tt.unfinish {
				t.Errorf("truncated %v unfinished %q, want %v %q", rep.Truncated, r.Unfinished, tt.truncated, tt.unfinish)
			}
			if rep.SummaryPassed != tt.summary[0] || rep.SummaryTotal != tt.summary[1] {
				t.Errorf("summary %d/%d, want %d/%d", rep.SummaryPassed, rep.SummaryTotal, tt.summary[0], tt.summary[1])
			}
			if r.Failed > 0 && len(r.Failures) != min(r.Failed, maxFailures) {
				t.Errorf("%d failures listed for %d failed", len(r.Failures), r.Failed)
			}
			if want := tt.fail == 0 && tt.notSup == 0 && !tt.truncated && tt.unfinish == "" && tt.pass > 0; r.Clean() != want && !rep.Truncated {
				t.Errorf("Clean() = %v, want %v", r.Clean(), want)
			}
		})
	}
}

func TestParseListOps(t *testing.T) {
	got := parseListOps([]byte("GGML operations:\n  ABS\n  ADD\n\n  bad name\nTotal: 2\n"))
	if strings.Join(got, ",") != "ABS,ADD" {
		t.Fatalf("got %q", got)
	}
}

// FuzzParseBackendOps checks the parser never panics and that its counts
// never exceed the lines it read.
func FuzzParseBackendOps(f *testing.F) {
	for _, name := range []string{"add-ok.out", "acc-fail.out"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("Backend 1/1: RPC0\n  X(a): "))
	f.Fuzz(func(t *testing.T, b []byte) {
		rep, err := ParseBackendOps(strings.NewReader(string(b)), "RPC0")
		if err != nil {
			return
		}
		n := 0
		for _, o := range rep.Ops {
			n += o.Total()
		}
		if lines := strings.Count(string(b), "\n") + 1; n > lines {
			t.Fatalf("%d cases from %d lines", n, lines)
		}
	})
}

func TestPartition(t *testing.T) {
	got := partition("hsk", "64", "72|80")
	want := []string{"hsk=(64),", "hsk=(72|80),", "hsk=(?!(64|72|80),)"}
	if !slices.Equal(got, want) {
		t.Fatalf("partition = %q, want %q", got, want)
	}
	for _, op := range []string{"MUL_MAT", "MUL_MAT_ID", "FLASH_ATTN_EXT"} {
		c := Chunks(op)
		if len(c) < 2 || !strings.Contains(c[len(c)-1], "(?!") {
			t.Errorf("Chunks(%s) = %q: want groups and a last catch-all filter", op, c)
		}
	}
	if Chunks("ADD") != nil {
		t.Error("ADD runs whole")
	}
}
