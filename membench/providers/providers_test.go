package providers

import (
	"errors"
	"os/exec"
	"strings"
	"testing"

	"github.com/gogml/gogml/backends/cpu"
	"github.com/gogml/gogml/backends/opengl"
	"github.com/gogml/gogml/rpcserver/rpctest"
	"github.com/gogml/gogml/runtime"
)

// TestProvidersWithoutDevice: a provider whose device is absent (or, for
// OpenGL, not compiled in) fails with runtime.ErrUnsupported so that
// membench skips it; where the device is present it gives its targets.
func TestProvidersWithoutDevice(t *testing.T) {
	for _, tc := range []struct {
		name string
		want int
	}{{"cuda", 2}, {"opengl", 1}} {
		t.Run(tc.name, func(t *testing.T) {
			var p = CUDA()
			if tc.name == "opengl" {
				p = OpenGL()
			}
			ts, closeFn, err := p.Open()
			if err == nil {
				defer closeFn()
				if len(ts) != tc.want {
					t.Fatalf("%d targets, want %d", len(ts), tc.want)
				}
				t.Skipf("a %s device is present", tc.name)
			}
			if ts != nil || closeFn != nil || !errors.Is(err, runtime.ErrUnsupported) {
				t.Fatalf("Open = %v, %v, %v; want an error wrapping runtime.ErrUnsupported", ts, closeFn != nil, err)
			}
			if tc.name == "opengl" && !opengl.Compiled && !errors.Is(err, opengl.ErrNotCompiled) {
				t.Fatalf("Open = %v, want ErrNotCompiled in a build without the opengl tag", err)
			}
		})
	}
}

// TestBackendsDoNotImportExperiments: no backend imports membench, so no
// program that computes links the plotting library (it made binaries that
// import a GPU backend 2.5 times larger).
func TestBackendsDoNotImportExperiments(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	for _, tags := range []string{"", "opengl,egl"} {
		out, err := exec.Command(gobin, "list", "-tags", tags, "-deps", "github.com/gogml/gogml/backends/...").CombinedOutput()
		if err != nil {
			t.Fatalf("go list: %v\n%s", err, out)
		}
		for _, dep := range strings.Fields(string(out)) {
			if strings.Contains(dep, "gonum.org/") || dep == "github.com/gogml/gogml/membench" {
				t.Errorf("tags %q: the backends depend on %s", tags, dep)
			}
		}
	}
}

// TestRPCProvider: a reachable server gives one target per device; an
// unreachable one is skipped as an absent device is.
func TestRPCProvider(t *testing.T) {
	be := cpu.NewBackend(cpu.BackendOptions{Threads: 1})
	defer be.Close()
	srv := rpctest.NewServer(be)
	defer srv.Close()
	ts, closeFn, err := RPC(srv.Endpoint).Open()
	if err != nil {
		t.Fatal(err)
	}
	defer closeFn()
	if len(ts) != 1 || ts[0].Name() != "RPC0["+srv.Endpoint+"]" {
		t.Fatalf("targets %v", ts)
	}
	if _, _, err := RPC("127.0.0.1:1").Open(); !errors.Is(err, runtime.ErrUnsupported) {
		t.Fatalf("unreachable server: err = %v, want ErrUnsupported", err)
	}
}
