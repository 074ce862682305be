package ggmlpeer

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/gogml/gogml/rpcserver"
)

// BuildGogml builds the gogml command from repoRoot into dir with the given
// build tags (empty for the default CGO_ENABLED=0 build) and returns its
// path.
func BuildGogml(ctx context.Context, repoRoot, dir, tags string) (string, error) {
	out := filepath.Join(dir, "gogml")
	args := []string{"build", "-o", out}
	if tags != "" {
		args = append(args, "-tags", tags)
	}
	args = append(args, "./cmd/gogml")
	cmd := exec.CommandContext(ctx, goCommand(), args...)
	cmd.Dir = repoRoot
	cmd.Env = os.Environ()
	if tags == "" {
		cmd.Env = append(cmd.Env, "CGO_ENABLED=0")
	}
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("ggmlpeer: go %v: %w\n%s", args, err, b)
	}
	return out, nil
}

// goCommand is $GO (as make passes it) or "go" from PATH.
func goCommand() string {
	if g := os.Getenv("GO"); g != "" {
		return g
	}
	return "go"
}

// StartGogmlServer starts "gogml rpc-server -p 0 -supports-op-query
// -backend backend" and waits for its endpoint. The server answers gogml's
// op-support query, so test-backend-ops run against it (BackendOps)
// reports the cases gogml declines as "not supported".
func StartGogmlServer(gogml, backend string, extra ...string) (*Server, error) {
	args := append([]string{"rpc-server", "-p", "0", "-supports-op-query", "-backend", backend}, extra...)
	s, err := StartServer(exec.Command(gogml, args...), 60*time.Second)
	if err != nil {
		return nil, err
	}
	s.SupportsOpQuery = true
	return s, nil
}

// StartGGMLServer starts the peer's own ggml-rpc-server on a free port
// (ggml's server has no port 0: the port is picked here) and waits for
// its endpoint.
func (p *Peer) StartGGMLServer(port int) (*Server, error) {
	cmd, err := p.Command(context.Background(), "", "ggml-rpc-server", "-p", fmt.Sprint(port))
	if err != nil {
		return nil, err
	}
	return StartServer(cmd, 60*time.Second)
}

// StartInProcessServer serves an rpcserver built from o in this process,
// on a free loopback port, and returns it as a Server for BackendOps and
// the other runs against an endpoint. It is for backends that exist only
// in this process (a test's emulated device): test-backend-ops reaches
// them over TCP exactly as it reaches a gogml rpc-server process. The
// backends stay the caller's; Close stops the listener and the
// connections. o.Log, when nil, collects into the Server's Log.
func StartInProcessServer(o rpcserver.Options) (*Server, error) {
	s := &Server{log: &lockedBuffer{}, done: make(chan error, 1), SupportsOpQuery: o.SupportsOpQuery}
	if o.Log == nil {
		o.Log = s.log
	}
	srv, err := rpcserver.New(o)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("ggmlpeer: in-process server: %w", err)
	}
	s.Endpoint = ln.Addr().String()
	s.stop = func() { _ = srv.Close() }
	go func() {
		err := srv.Serve(ln)
		if errors.Is(err, rpcserver.ErrClosed) {
			err = nil
		}
		s.done <- err
	}()
	return s, nil
}
