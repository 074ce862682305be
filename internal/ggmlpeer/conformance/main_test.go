package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gogml/gogml/internal/ggmlpeer"
)

func TestCell(t *testing.T) {
	tests := []struct {
		r    *ggmlpeer.OpResult
		ok   bool
		want string
	}{
		{nil, false, "–"},
		{&ggmlpeer.OpResult{Passed: 12}, true, "**12 / 0 / 0**"},
		{&ggmlpeer.OpResult{Passed: 3, Failed: 2, NotSupported: 1}, true, "3 / 2 / 1"},
		{&ggmlpeer.OpResult{Failed: 5, RefNotSupported: 7}, true, "0 / 5 / 0 (+7 ref)"},
		{&ggmlpeer.OpResult{Passed: 90, Unfinished: "x"}, true, "90 / 0 / 0 †"},
		{&ggmlpeer.OpResult{}, true, "0 / 0 / 0"},
	}
	for _, tt := range tests {
		if got := cell(tt.r, tt.ok); got != tt.want {
			t.Errorf("cell(%+v) = %q, want %q", tt.r, got, tt.want)
		}
	}
}

func TestSplitList(t *testing.T) {
	for in, want := range map[string]string{"": "", "a": "a", " a, b ,,c ": "a|b|c"} {
		if got := strings.Join(splitList(in), "|"); got != want {
			t.Errorf("splitList(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCheckClaims(t *testing.T) {
	op := ggmlpeer.Claimed["cpu"][0]
	clean := column{backend: "cpu", results: map[string]*ggmlpeer.OpResult{op: {Op: op, Passed: 1}}}
	ops := []string{op}
	if err := checkClaims([]column{clean}, ops, nil); err != nil {
		t.Fatalf("clean claimed op reported: %v", err)
	}
	bad := column{backend: "cpu", results: map[string]*ggmlpeer.OpResult{op: {Op: op, Passed: 1, Failed: 1}}, notes: map[string]string{}}
	if err := checkClaims([]column{bad}, ops, nil); err == nil || !strings.Contains(err.Error(), op) {
		t.Fatalf("failing claimed op not reported: %v", err)
	}
	notRun := column{backend: "cpu", results: map[string]*ggmlpeer.OpResult{}, notes: map[string]string{op: "not run: -budget 1m0s spent"}}
	if err := checkClaims([]column{notRun}, ops, nil); err == nil || !strings.Contains(err.Error(), "not run") {
		t.Fatalf("claimed op not run not reported: %v", err)
	}
	if err := checkClaims([]column{notRun}, nil, nil); err != nil {
		t.Fatalf("claimed op outside -ops reported: %v", err)
	}
}

// TestCheckClaimedArchs: a claimed test-llama-archs row of a run
// architecture must be there and OK.
func TestCheckClaimedArchs(t *testing.T) {
	claim := ggmlpeer.ClaimedArchs["cpu"][0]
	arch, config, _ := strings.Cut(claim, "/")
	row := func(status string) column {
		return column{backend: "cpu", results: map[string]*ggmlpeer.OpResult{}, notes: map[string]string{}, archNotes: map[string]string{},
			archRows: map[string][]ggmlpeer.ArchRow{arch: {{Arch: arch, Config: config, Status: []string{status, "OK"}}}}}
	}
	if err := checkClaims([]column{row("OK")}, nil, []string{arch}); err != nil {
		t.Fatalf("OK claimed row reported: %v", err)
	}
	if err := checkClaims([]column{row("FAIL")}, nil, []string{arch}); err == nil || !strings.Contains(err.Error(), claim) {
		t.Fatalf("failing claimed row not reported: %v", err)
	}
	missing := column{backend: "cpu", archRows: map[string][]ggmlpeer.ArchRow{}, archNotes: map[string]string{arch: "timed out"}}
	if err := checkClaims([]column{missing}, nil, []string{arch}); err == nil || !strings.Contains(err.Error(), "no row") {
		t.Fatalf("missing claimed row not reported: %v", err)
	}
	if err := checkClaims([]column{missing}, nil, nil); err != nil {
		t.Fatalf("claimed row of an architecture not run reported: %v", err)
	}
	if got := withClaimedArchs("llama", []string{"cpu"}); !strings.HasPrefix(got, "llama,") || !strings.Contains(got, ","+arch) && arch != "llama" {
		t.Fatalf("withClaimedArchs = %q", got)
	}
}

// TestCIArchsAreClaimed keeps CI from asserting a test-llama-archs row no
// full run has seen pass.
func TestCIArchsAreClaimed(t *testing.T) {
	for backend, rows := range ggmlpeer.CIArchs {
		for _, r := range rows {
			if !slices.Contains(ggmlpeer.ClaimedArchs[backend], r) {
				t.Errorf("%s: CI row %s is not claimed", backend, r)
			}
		}
	}
}

// TestCISubsetIsClaimed keeps CI from asserting an op no full run has
// seen pass.
func TestCISubsetIsClaimed(t *testing.T) {
	for backend, ops := range ggmlpeer.CISubset {
		for _, op := range ops {
			if !slices.Contains(ggmlpeer.Claimed[backend], op) {
				t.Errorf("%s: CI subset op %s is not claimed", backend, op)
			}
		}
	}
}

func TestMergeResults(t *testing.T) {
	a := &ggmlpeer.OpResult{Op: "MUL_MAT", Passed: 3, RefNotSupported: 1}
	b := &ggmlpeer.OpResult{Op: "MUL_MAT", Passed: 2, Failed: 1, Failures: []string{"x"}, Unfinished: "y"}
	m := mergeResults("MUL_MAT", []*ggmlpeer.OpResult{a, b})
	if m.Passed != 5 || m.Failed != 1 || m.RefNotSupported != 1 || m.Unfinished != "y" || !slices.Equal(m.Failures, []string{"x"}) {
		t.Errorf("merged %+v", m)
	}
	if got := mergeResults("ADD", []*ggmlpeer.OpResult{a}); got != a {
		t.Error("one part is returned as is")
	}
}

func TestReuseLogChunks(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	section := func(cases ...string) string {
		return "Backend 1/1: RPC0\n" + strings.Join(cases, "\n") + "\n  1/1 tests passed\n"
	}
	write("ROPE.note", "in two runs")
	write("ROPE.c1.out", section("  ROPE(a=1): OK", "  ROPE(a=2): OK"))
	write("ROPE.c2.out", section("  ROPE(a=3): FAIL"))
	r, note, ok := reuseLog(dir, "ROPE")
	if !ok || note != "in two runs" || r.Passed != 2 || r.Failed != 1 {
		t.Fatalf("reuseLog = %+v %q %v", r, note, ok)
	}
	clearLogs(dir, "ROPE")
	if _, _, ok := reuseLog(dir, "ROPE"); ok {
		t.Error("clearLogs left a log behind")
	}
}

func TestFinishedChunks(t *testing.T) {
	const src = "/src at commit 0123456789ab"
	for _, tc := range []struct {
		name, built string
		logs        map[string]string
		want        int
	}{
		{"two of four logged to the end, the third cut", src + ", built X", map[string]string{"c1": "done", "c2": "done", "c3": "cut"}, 2},
		{"another commit's logs", "/src at commit ba9876543210, built X", map[string]string{"c1": "done"}, 0},
		{"a finished run", src + ", built X", map[string]string{"c1": "done", "note": ""}, 0},
		{"every chunk logged (finished, just no note)", src + ", built X", map[string]string{"c1": "done", "c2": "done", "c3": "done", "c4": "done"}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			write := func(name, s string) {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			write("FLASH_ATTN_EXT.built", tc.built+"\n")
			for k, v := range tc.logs {
				switch v {
				case "done":
					write("FLASH_ATTN_EXT."+k+".out", "Backend 1/1: RPC0\n  FLASH_ATTN_EXT(a=1): OK\n  1/1 tests passed\n1/1 backends passed\nOK\n")
				case "cut":
					write("FLASH_ATTN_EXT."+k+".out", "Backend 1/1: RPC0\n  FLASH_ATTN_EXT(a=1): OK\n")
				default:
					write("FLASH_ATTN_EXT.note", v)
				}
			}
			done, built := finishedChunks(dir, "FLASH_ATTN_EXT", 4, src)
			if len(done) != tc.want {
				t.Fatalf("%d chunks taken, want %d", len(done), tc.want)
			}
			if tc.want > 0 && built != tc.built {
				t.Errorf("built = %q, want %q", built, tc.built)
			}
		})
	}
}

func TestProvenance(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string]string{".built": "old build", "FLASH_ATTN_EXT.built": "new build\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	col := column{builtOps: map[string][]string{}}
	for _, op := range []string{"ABS", "ADD", "FLASH_ATTN_EXT", "SUB"} {
		col.judgedBy(builtOf(dir, op), op)
	}
	want := "FLASH_ATTN_EXT: new build (from logs); the other 3 ops: old build (from logs)"
	if got := col.provenance(); got != want {
		t.Errorf("provenance = %q, want %q", got, want)
	}
	one := column{builtOps: map[string][]string{}}
	one.judgedBy("b", "ABS")
	one.judgedBy("b", "ADD")
	if got := one.provenance(); got != "b" {
		t.Errorf("one build: provenance = %q, want %q", got, "b")
	}
	if got := builtOf(t.TempDir(), "ABS"); !strings.Contains(got, "unknown") {
		t.Errorf("no .built: %q", got)
	}
}
