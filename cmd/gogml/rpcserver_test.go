package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/gogml/gogml/backends/cpu"
	"github.com/gogml/gogml/rpcserver"
	"github.com/gogml/gogml/runtime"
)

func TestRPCServerFlags(t *testing.T) {
	cases := []struct {
		args    []string
		wantErr string
	}{
		{[]string{"-H", "0.0.0.0"}, "not a loopback address"},
		{[]string{"-H", "192.168.1.2", "-p", "0"}, "-allow-remote"},
		{[]string{"-p", "70000"}, "not a port"},
		{[]string{"-backend", "tpu", "-p", "0"}, "unknown driver"},
		{[]string{"-backend", "cuda:x", "-p", "0"}, "device index"},
		{[]string{"extra"}, "unexpected argument"},
		{[]string{"-mem-limit", "lots"}, "-mem-limit"},
	}
	for _, tc := range cases {
		var out, errw bytes.Buffer
		err := runRPCServer(tc.args, &out, &errw)
		if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("%v: error %v, want %q", tc.args, err, tc.wantErr)
		}
	}
	for host, want := range map[string]bool{"127.0.0.1": true, "localhost": true, "::1": true, "127.1.2.3": true, "0.0.0.0": false, "10.0.0.1": false, "": false} {
		if isLoopback(host) != want {
			t.Errorf("isLoopback(%q) = %v", host, !want)
		}
	}
}

func TestRPCServerBanner(t *testing.T) {
	be := cpu.NewBackend(cpu.BackendOptions{Threads: 1})
	defer be.Close()
	srv, err := rpcserver.New(rpcserver.Options{Backends: []runtime.Backend{be}})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	printBanner(&out, srv, "127.0.0.1:1234", "")
	want := "Starting RPC server v8.0.0\n  endpoint       : 127.0.0.1:1234\n  local cache    : n/a\nDevices:\n  CPU: "
	if !strings.HasPrefix(out.String(), want) || !strings.HasSuffix(out.String(), " MiB free)\n  transport      : TCP\n") {
		t.Fatalf("banner:\n%s", out.String())
	}
}
