package llama

import (
	"fmt"
	"testing"

	"github.com/gogml/gogml/backends/cpu"
	"github.com/gogml/gogml/backends/rpc"
	"github.com/gogml/gogml/rpcserver/rpctest"
	"github.com/gogml/gogml/runtime"
)

// hostDevice is a CPU backend posing as a separate device: it computes
// only in memory of its own buffer type, so a model spread over it and the
// CPU is split, with activations copied between the two.
type hostDevice struct {
	*cpu.Backend
	bt   *cpu.BufferType
	name string
}

func newHostDevice(t *testing.T, name string) *hostDevice {
	t.Helper()
	bt, err := cpu.NewBufferType(cpu.BufferTypeOptions{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	d := &hostDevice{Backend: cpu.NewBackend(cpu.BackendOptions{Threads: 1, BufferType: bt}), bt: bt, name: name}
	t.Cleanup(func() { d.Close() })
	return d
}

func (d *hostDevice) Name() string                          { return d.name }
func (d *hostDevice) DefaultBufferType() runtime.BufferType { return d.bt }
func (d *hostDevice) SupportsBufferType(bt runtime.BufferType) bool {
	return bt != nil && bt.Name() == d.bt.Name()
}

// TestSpreadOverBackends: the decoder spread over several devices gives
// the single-device result (the same kernels run; only where they run
// changes), with every layer assignment.
func TestSpreadOverBackends(t *testing.T) {
	cfg := testConfig()
	cfg.Layers = 3
	w := GenerateWeights(cfg)
	want := generate(t, newModel(t, w, 1, Options{Backend: newHostDevice(t, "ONE")}), 6)
	for _, layers := range [][]int{{0, 0, 0}, {0, 1, 1}, {1, 0, 1}, {2, 1, 0}} {
		t.Run(fmt.Sprint(layers), func(t *testing.T) {
			bes := []runtime.Backend{newHostDevice(t, "DEV0"), newHostDevice(t, "DEV1"), newHostDevice(t, "HOST")}
			m, err := New(w, Options{Backends: bes, LayerBackend: layers})
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			got := generate(t, m, 6)
			sameResult(t, want, got, 0)
			splits, bytes := m.Splits()
			if len(splits) < 2 {
				t.Fatalf("%d splits, want the graph cut", len(splits))
			}
			t.Logf("splits %v, copy bytes %v", splits, bytes)
		})
	}
}

// TestSpreadOverRPC: one layer on a gogml RPC server (over loopback), the
// rest on the CPU: the same tokens, logits within float rounding.
func TestSpreadOverRPC(t *testing.T) {
	cfg := testConfig()
	w := GenerateWeights(cfg)
	want := generate(t, newModel(t, w, 1, Options{}), 6)

	srvBE := cpu.NewBackend(cpu.BackendOptions{Threads: 1})
	defer srvBE.Close()
	srv := rpctest.NewServer(srvBE)
	defer srv.Close()
	c, err := rpc.Dial(srv.Endpoint, rpc.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	remote, err := c.Backend(0)
	if err != nil {
		t.Fatal(err)
	}
	host := cpu.NewBackend(cpu.BackendOptions{Threads: 1})
	defer host.Close()
	m, err := New(w, Options{Backends: []runtime.Backend{remote, host}, LayerBackend: []int{0, 1}})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	sameResult(t, want, generate(t, m, 6), 1e-6)
}

func TestSpreadLayers(t *testing.T) {
	for _, tc := range []struct {
		n     int
		split []float64
		want  string
	}{
		{4, nil, "[0 0 1 1]"},
		{5, []float64{3, 1}, "[0 0 0 0 1]"},
		{3, []float64{0, 1}, "[1 1 1]"},
		{6, []float64{1, 1, 1}, "[0 0 1 1 2 2]"},
	} {
		got, err := SpreadLayers(tc.n, tc.split, max(2, len(tc.split)))
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got) != tc.want {
			t.Errorf("SpreadLayers(%d, %v) = %v, want %s", tc.n, tc.split, got, tc.want)
		}
	}
	for _, bad := range [][]float64{{0, 0}, {-1, 2}, {1}} {
		if _, err := SpreadLayers(4, bad, 2); err == nil {
			t.Errorf("split %v accepted", bad)
		}
	}
}

// TestGGUFSpreadOverBackends: a GGUF file loaded over two devices and the
// host gives the tokens and logits of the same file on one backend.
func TestGGUFSpreadOverBackends(t *testing.T) {
	cfg := testConfig()
	cfg.Layers = 3
	path := writeDemo(t, GenerateWeights(cfg), runtime.TypeF32)
	one, err := LoadGGUF(path, LoadOptions{Options: Options{Backend: newHostDevice(t, "ONE")}})
	if err != nil {
		t.Fatal(err)
	}
	defer one.Close()
	want := generate(t, one, 6)
	bes := []runtime.Backend{newHostDevice(t, "DEV0"), newHostDevice(t, "DEV1"), newHostDevice(t, "HOST")}
	m, err := LoadGGUF(path, LoadOptions{Options: Options{Backends: bes, LayerBackend: []int{0, 1, 2}}})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	sameResult(t, want, generate(t, m, 6), 0)
	if got := m.LayerBackends(); got[0] != "DEV0" || got[1] != "DEV1" || got[2] != "HOST" {
		t.Fatalf("layers on %v", got)
	}
}
