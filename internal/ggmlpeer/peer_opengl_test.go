//go:build opengl && egl

package ggmlpeer

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/gogml/gogml/backends/cpu"
	"github.com/gogml/gogml/model/llama"
)

// TestRPCServerOpenGL runs ggml's test-backend-ops against gogml
// rpc-server -backend opengl (built with -tags opengl,egl) for the chosen
// ops.
func TestRPCServerOpenGL(t *testing.T) {
	testRPCServer(t, "opengl", "opengl,egl")
}

// TestDecoderOverGogmlGLAndGGML spreads gogml's decoder over gogml
// rpc-server -backend opengl (llvmpipe in CI), one of ggml 0.27.0's own
// rpc-servers and the local CPU: the same tokens as the CPU alone.
func TestDecoderOverGogmlGLAndGGML(t *testing.T) {
	p, src := peerForTest(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	bin, err := BuildGogml(ctx, src, t.TempDir(), "opengl,egl")
	if err != nil {
		t.Fatal(err)
	}
	gl, err := StartGogmlServer(bin, "opengl")
	if err != nil {
		if os.Getenv("GOGML_REQUIRE_GL") != "1" {
			t.Skipf("no OpenGL server (GOGML_REQUIRE_GL=1 makes this a failure): %v", err)
		}
		t.Fatal(err)
	}
	t.Cleanup(func() { gl.Close() })
	gg, err := p.StartGGMLServer(freePort(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gg.Close() })

	cfg := decoderConfig()
	w := llama.GenerateWeights(cfg)
	prompt := []int32{3, 1, 4, 1, 5}
	host := cpu.NewBackend(cpu.BackendOptions{Threads: 1})
	defer host.Close()
	want := cpuAlone(t, w, prompt, host)
	m, _ := spreadDecoder(t, w, []string{gl.Endpoint, gg.Endpoint}, host)
	got, err := m.Generate(prompt, 8, nil)
	if err != nil {
		t.Fatal(err)
	}
	sameTokens(t, got, want)
	names, bytes := m.Splits()
	t.Logf("same tokens %v; splits %v moving %v bytes", got.Generated, names, bytes)
}
