package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strconv"
	"syscall"

	"github.com/gogml/gogml/device"
	"github.com/gogml/gogml/internal/rpcwire"
	"github.com/gogml/gogml/membench"
	"github.com/gogml/gogml/rpcserver"
	"github.com/gogml/gogml/runtime"
)

// rpcServerOptions are gogml rpc-server's flags.
type rpcServerOptions struct {
	host        string
	port        int
	backends    string
	threads     int
	cacheDir    string
	allowRemote bool
	debug       bool
	memLimit    uint64
	cpuProf     string
	supportsOp  bool
}

func parseRPCServerFlags(args []string, stderr io.Writer) (*rpcServerOptions, error) {
	o := &rpcServerOptions{}
	fs := flag.NewFlagSet("rpc-server", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: gogml rpc-server [flags]\n\nServes gogml backends over ggml's RPC protocol 8.0.0 (ggml 0.27.0), one device\nper listed backend, to llama.cpp --rpc, test-backend-ops and other ggml clients.\nThe protocol has no authentication: bind beyond loopback only on trusted networks.\n\nflags:")
		fs.PrintDefaults()
	}
	fs.StringVar(&o.host, "H", "127.0.0.1", "host to bind to")
	fs.IntVar(&o.port, "p", 50052, "port to bind to (0: pick a free one)")
	fs.StringVar(&o.backends, "backend", "cpu", "comma-separated devices, one served device each: cpu, opengl[:N], cuda[:N] (see package device)")
	fs.IntVar(&o.threads, "threads", 0, "CPU worker goroutines (0: all cores)")
	fs.StringVar(&o.cacheDir, "c", "", "local cache directory for tensor data (enables SET_TENSOR_HASH)")
	fs.BoolVar(&o.allowRemote, "allow-remote", false, "allow binding to a non-loopback address")
	memLimit := fs.String("mem-limit", "", "most bytes of buffers one connection may hold (k, m, g suffixes; empty: no limit)")
	fs.StringVar(&o.cpuProf, "cpuprofile", "", "write a Go CPU profile of the server's whole run to this file (go tool pprof; written when the server stops on SIGINT/SIGTERM)")
	fs.BoolVar(&o.supportsOp, "supports-op-query", false, "answer gogml's protocol extension asking whether a device runs an op (ggml's clients never send it; scripts/ggml-peer's preload does, for test-backend-ops)")
	fs.BoolVar(&o.debug, "debug", os.Getenv("GGML_RPC_DEBUG") != "", "log every command (default on when GGML_RPC_DEBUG is set)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if *memLimit != "" {
		v, err := membench.ParseSize(*memLimit)
		if err != nil {
			return nil, fmt.Errorf("-mem-limit: %w", err)
		}
		o.memLimit = v
	}
	if o.port < 0 || o.port > 65535 {
		return nil, fmt.Errorf("-p %d: not a port", o.port)
	}
	return o, nil
}

// isLoopback reports whether host names only the local machine.
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// openRPCBackends opens each listed device ("cpu", "opengl:1", "cuda",
// even "rpc://host:port" to relay another server) through the device
// registry, one served device each.
func openRPCBackends(list string, threads int) ([]runtime.Backend, func(), error) {
	devs, err := device.Default(device.Options{Threads: threads}).OpenList(list)
	if err != nil {
		return nil, nil, fmt.Errorf("-backend: %w", err)
	}
	return device.Backends(devs), func() { device.CloseAll(devs) }, nil
}

func runRPCServer(args []string, stdout, stderr io.Writer) error {
	o, err := parseRPCServerFlags(args, stderr)
	if err != nil {
		return err
	}
	if !isLoopback(o.host) {
		if !o.allowRemote {
			return fmt.Errorf("-H %s is not a loopback address: the RPC protocol has no authentication, pass -allow-remote to bind there anyway", o.host)
		}
		fmt.Fprintf(stderr, "WARNING: serving on %s: anyone who can reach this port can read and write the server's memory buffers and run graphs; use only on a trusted network\n", o.host)
	}
	if o.cacheDir != "" {
		if err := os.MkdirAll(o.cacheDir, 0o755); err != nil {
			return fmt.Errorf("-c: %w", err)
		}
	}
	if o.cpuProf != "" {
		stop, err := startCPUProfile(o.cpuProf)
		if err != nil {
			return err
		}
		defer stop()
	}
	backends, closeAll, err := openRPCBackends(o.backends, o.threads)
	if err != nil {
		return err
	}
	defer closeAll()
	srv, err := rpcserver.New(rpcserver.Options{Backends: backends, CacheDir: o.cacheDir, MaxConnBytes: o.memLimit, Log: stderr, Debug: o.debug, SupportsOpQuery: o.supportsOp})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp4", net.JoinHostPort(o.host, strconv.Itoa(o.port)))
	if err != nil {
		return err
	}
	printBanner(stdout, srv, ln.Addr().String(), o.cacheDir)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sig)
	go func() {
		if _, ok := <-sig; ok {
			srv.Close()
		}
	}()
	err = srv.Serve(ln)
	if errors.Is(err, rpcserver.ErrClosed) {
		return nil
	}
	return err
}

// printBanner prints the start lines in ggml rpc-server's format, so
// scripts can read the endpoint (with the real port for -p 0) the same way
// from both servers.
func printBanner(w io.Writer, srv *rpcserver.Server, endpoint, cacheDir string) {
	if cacheDir == "" {
		cacheDir = "n/a"
	}
	fmt.Fprintf(w, "Starting RPC server v%d.%d.%d\n", rpcwire.ProtoMajor, rpcwire.ProtoMinor, rpcwire.ProtoPatch)
	fmt.Fprintf(w, "  endpoint       : %s\n", endpoint)
	fmt.Fprintf(w, "  local cache    : %s\n", cacheDir)
	fmt.Fprintf(w, "Devices:\n")
	for i := range srv.Devices() {
		fmt.Fprintf(w, "  %s\n", srv.DeviceLine(i))
	}
	fmt.Fprintf(w, "  transport      : TCP\n")
}
