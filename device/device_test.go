package device_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/gogml/gogml/backends/cpu"
	"github.com/gogml/gogml/device"
	"github.com/gogml/gogml/rpcserver/rpctest"
)

func serveTwo(t *testing.T) string {
	t.Helper()
	a := cpu.NewBackend(cpu.BackendOptions{Threads: 1})
	b := cpu.NewBackend(cpu.BackendOptions{Threads: 1})
	srv := rpctest.NewServer(a, b)
	t.Cleanup(func() { srv.Close(); a.Close(); b.Close() })
	return srv.Endpoint
}

func TestOpen(t *testing.T) {
	ep := serveTwo(t)
	reg := device.Default(device.Options{Threads: 1})
	for _, tc := range []struct {
		spec  string
		names []string
		err   error
	}{
		{"cpu", []string{"CPU"}, nil},
		{"cpu:0", []string{"CPU"}, nil},
		{"rpc://" + ep, []string{"RPC0[" + ep + "]", "RPC1[" + ep + "]"}, nil},
		{"rpc://" + ep + "/1", []string{"RPC1[" + ep + "]"}, nil},
		{"cpu,rpc://" + ep + "/0", []string{"CPU", "RPC0[" + ep + "]"}, nil},
		{"tpu", nil, device.ErrUnknownDriver},
		{"cpu:1", nil, nil},
		{"cuda:x", nil, nil},
		{"rpc://" + ep + "/7", nil, nil},
		{"rpc://127.0.0.1:1", nil, device.ErrUnavailable},
		{"", nil, nil},
	} {
		t.Run(tc.spec, func(t *testing.T) {
			devs, err := reg.OpenList(tc.spec)
			if tc.names == nil {
				if err == nil {
					device.CloseAll(devs)
					t.Fatalf("opened %d devices, want an error", len(devs))
				}
				if tc.err != nil && !errors.Is(err, tc.err) {
					t.Fatalf("err = %v, want %v", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer device.CloseAll(devs)
			var names []string
			for _, d := range devs {
				names = append(names, d.Name())
				if d.Backend() == nil || d.BufferType() == nil {
					t.Errorf("%s: no backend or buffer type", d.Name())
				}
				if !d.Backend().SupportsBufferType(d.BufferType()) {
					t.Errorf("%s: backend does not compute in its own memory", d.Name())
				}
				if _, total := d.Memory(); total == 0 {
					t.Errorf("%s: total memory 0", d.Name())
				}
			}
			if strings.Join(names, ",") != strings.Join(tc.names, ",") {
				t.Fatalf("devices %v, want %v", names, tc.names)
			}
		})
	}
}

// TestGPUsUnavailableHere: without a GPU (or the GL build tags) the GPU
// drivers say so with ErrUnavailable instead of failing obscurely.
func TestGPUsUnavailableHere(t *testing.T) {
	reg := device.Default(device.Options{})
	for _, spec := range []string{"cuda", "opengl"} {
		devs, err := reg.Open(spec)
		if err == nil {
			device.CloseAll(devs)
			t.Logf("%s is available here", spec)
			continue
		}
		if !errors.Is(err, device.ErrUnavailable) {
			t.Errorf("%s: err = %v, want ErrUnavailable", spec, err)
		}
	}
}

func TestDuplicateDriver(t *testing.T) {
	if _, err := device.NewRegistry(device.CPU{}, device.CPU{}); err == nil {
		t.Fatal("two cpu drivers accepted")
	}
}
