package main

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestGeneratedCurrent is the CI check that regenerating changes nothing:
// every committed .s in package vec is byte for byte what the generator
// prints (go test ./... runs it; make asm regenerates).
func TestGeneratedCurrent(t *testing.T) {
	if err := run("..", true); err != nil {
		t.Fatal(err)
	}
}

// TestCheckReportsStale: -check names a file that differs or is missing,
// and writing then checking agrees.
func TestCheckReportsStale(t *testing.T) {
	dir := t.TempDir()
	if err := run(dir, true); !errors.Is(err, errStale) {
		t.Fatalf("check of an empty dir: got %v, want errStale", err)
	}
	if err := run(dir, false); err != nil {
		t.Fatal(err)
	}
	if err := run(dir, true); err != nil {
		t.Fatalf("check after write: %v", err)
	}
	p := filepath.Join(dir, files[0].name)
	if err := os.WriteFile(p, []byte("// edited by hand\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := run(dir, true); !errors.Is(err, errStale) {
		t.Fatalf("check of an edited file: got %v, want errStale", err)
	}
}
