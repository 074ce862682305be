package ggmlpeer

import (
	"errors"
	"math"
	"net"
	"runtime"
	"testing"
	"time"

	"github.com/gogml/gogml/backends/cpu"
	"github.com/gogml/gogml/backends/rpc"
	"github.com/gogml/gogml/model/llama"
	gr "github.com/gogml/gogml/runtime"
)

// decoderConfig is a small model with a layer for each of two remote
// devices and the host.
func decoderConfig() llama.Config {
	c := llama.DefaultConfig()
	c.Layers = 3
	return c
}

// freePort returns a loopback port that was free a moment ago (ggml's
// rpc-server takes no port 0).
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

func relDiff(a, b float64) float64 {
	return math.Abs(a-b) / math.Max(math.Abs(a), math.Max(math.Abs(b), 1e-30))
}

// TestDecoderOverGGMLServers spreads gogml's decoder over two real ggml
// 0.27.0 rpc-server processes and the local CPU (one layer each, through
// the scheduler and the RPC client): the same tokens as on the CPU alone,
// logits within float rounding (ggml's kernels add in another order). Then
// one server is killed mid-generation: the next token fails with a
// connection error within 5 seconds, and no goroutine is left behind.
func TestDecoderOverGGMLServers(t *testing.T) {
	p, _ := peerForTest(t)
	cfg := decoderConfig()
	w := llama.GenerateWeights(cfg)
	prompt := []int32{3, 1, 4, 1, 5}

	host := cpu.NewBackend(cpu.BackendOptions{Threads: 1})
	defer host.Close()
	want := cpuAlone(t, w, prompt, host)

	goroutines := runtime.NumGoroutine()
	var srvs []*Server
	var eps []string
	for range 2 {
		srv, err := p.StartGGMLServer(freePort(t))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { srv.Close() })
		srvs = append(srvs, srv)
		eps = append(eps, srv.Endpoint)
	}
	m, clients := spreadDecoder(t, w, eps, host)
	got, err := m.Generate(prompt, 8, nil)
	if err != nil {
		t.Fatal(err)
	}
	sameTokens(t, got, want)
	names, bytes := m.Splits()
	t.Logf("same tokens %v; checksum %v vs %v; splits %v moving %v bytes", got.Generated, got.Logits, want.Logits, names, bytes)

	// Kill the second server between two tokens.
	m.Reset()
	if _, err := m.Eval(prompt); err != nil {
		t.Fatal(err)
	}
	if err := srvs[1].cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = m.Eval([]int32{7})
	if err == nil {
		t.Fatal("no error after a server was killed")
	}
	if !errors.Is(err, rpc.ErrConnection) {
		t.Errorf("error %v does not wrap rpc.ErrConnection", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("error after %v", d)
	}
	t.Logf("after the kill: %v (%v)", err, time.Since(start))
	if err := m.Close(); err == nil {
		t.Log("model closed")
	}
	for _, c := range clients {
		c.Close()
	}
	for _, srv := range srvs {
		srv.Close()
	}
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > goroutines+2 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > goroutines+2 {
		t.Errorf("%d goroutines after closing, %d before", n, goroutines)
	}
}

// dialRetry connects to a server that may print its endpoint before it
// listens (ggml's does).
func dialRetry(t *testing.T, ep string) *rpc.Client {
	t.Helper()
	var c *rpc.Client
	var err error
	for start := time.Now(); ; time.Sleep(50 * time.Millisecond) {
		if c, err = rpc.Dial(ep, rpc.Options{IOTimeout: 30 * time.Second}); err == nil || time.Since(start) > 10*time.Second {
			break
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// spreadDecoder places w's layers one per remote device (device 0 of each
// endpoint) and the last on host.
func spreadDecoder(t *testing.T, w *llama.Weights, eps []string, host gr.Backend) (*llama.Model, []*rpc.Client) {
	t.Helper()
	var bes []gr.Backend
	var clients []*rpc.Client
	for _, ep := range eps {
		c := dialRetry(t, ep)
		t.Cleanup(func() { c.Close() })
		clients = append(clients, c)
		be, err := c.Backend(0)
		if err != nil {
			t.Fatal(err)
		}
		bes = append(bes, be)
	}
	bes = append(bes, host)
	layers := make([]int, w.Config.Layers)
	for l := range layers {
		layers[l] = min(l, len(bes)-1)
	}
	m, err := llama.New(w, llama.Options{Backends: bes, LayerBackend: layers})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m, clients
}

// sameTokens requires got to generate want's tokens, with logits within
// float rounding.
func sameTokens(t *testing.T, got, want llama.Result) {
	t.Helper()
	if len(got.Generated) != len(want.Generated) {
		t.Fatalf("generated %v, CPU alone %v", got.Generated, want.Generated)
	}
	for i := range got.Generated {
		if got.Generated[i] != want.Generated[i] {
			t.Fatalf("generated %v, CPU alone %v", got.Generated, want.Generated)
		}
	}
	if d := relDiff(got.Logits.Sum, want.Logits.Sum); d > 1e-5 {
		t.Fatalf("logits checksum %v vs CPU alone %v (relative %g)", got.Logits, want.Logits, d)
	}
}

// cpuAlone generates 8 tokens after prompt with w on host alone.
func cpuAlone(t *testing.T, w *llama.Weights, prompt []int32, host gr.Backend) llama.Result {
	t.Helper()
	m, err := llama.New(w, llama.Options{Backend: host})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	r, err := m.Generate(prompt, 8, nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
