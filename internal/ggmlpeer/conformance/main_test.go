package main

import (
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
	if err := checkClaims([]column{clean}, ops); err != nil {
		t.Fatalf("clean claimed op reported: %v", err)
	}
	bad := column{backend: "cpu", results: map[string]*ggmlpeer.OpResult{op: {Op: op, Passed: 1, Failed: 1}}, notes: map[string]string{}}
	if err := checkClaims([]column{bad}, ops); err == nil || !strings.Contains(err.Error(), op) {
		t.Fatalf("failing claimed op not reported: %v", err)
	}
	notRun := column{backend: "cpu", results: map[string]*ggmlpeer.OpResult{}, notes: map[string]string{op: "not run: -budget 1m0s spent"}}
	if err := checkClaims([]column{notRun}, ops); err == nil || !strings.Contains(err.Error(), "not run") {
		t.Fatalf("claimed op not run not reported: %v", err)
	}
	if err := checkClaims([]column{notRun}, nil); err != nil {
		t.Fatalf("claimed op outside -ops reported: %v", err)
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
