package ggmlpeer

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeRepo makes a repository root whose scripts/ggml-peer.sh is script.
func fakeRepo(t *testing.T, script string) string {
	t.Helper()
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "scripts"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "go.mod"), []byte("module x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "scripts", "ggml-peer.sh"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return root
}

func TestLocate(t *testing.T) {
	tests := []struct {
		name    string
		script  string
		wantErr error  // nil: success
		wantMsg string // in the error
	}{
		{
			name:    "pinned version gone",
			script:  "echo 'ggml-peer: UNAVAILABLE: libggml0 0.27.0-1 is not in the suites' >&2; exit 3\n",
			wantErr: ErrUnavailable, wantMsg: "UNAVAILABLE: libggml0",
		},
		{
			name:    "other failure",
			script:  "echo 'ggml-peer: apt-get update failed (network?)' >&2; exit 1\n",
			wantErr: errors.New("any"), wantMsg: "apt-get update failed",
		},
		{
			name:   "fetched",
			script: "case $1 in path) echo /sysroot;; preload) echo /sysroot/p.so;; version) echo ggml 0.27.0-1;; esac\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := fakeRepo(t, tt.script)
			sub := filepath.Join(root, "scripts")
			found, err := RepoRoot(sub)
			if err != nil || found != root {
				t.Fatalf("RepoRoot(%s) = %q, %v", sub, found, err)
			}
			p, err := Locate(context.Background(), root)
			switch {
			case tt.wantErr == nil && err != nil:
				t.Fatal(err)
			case tt.wantErr == nil:
				if p.Root != "/sysroot" || p.Preload != "/sysroot/p.so" || p.Version != "ggml 0.27.0-1" {
					t.Fatalf("peer %+v", p)
				}
			case err == nil:
				t.Fatal("no error")
			case errors.Is(tt.wantErr, ErrUnavailable) != errors.Is(err, ErrUnavailable):
				t.Fatalf("err %v: ErrUnavailable is %v, want %v", err, errors.Is(err, ErrUnavailable), errors.Is(tt.wantErr, ErrUnavailable))
			case !strings.Contains(err.Error(), tt.wantMsg):
				t.Fatalf("err %v does not carry %q", err, tt.wantMsg)
			}
		})
	}
	if _, err := RepoRoot(t.TempDir()); err == nil {
		t.Error("RepoRoot found a root in an empty directory")
	}
}
