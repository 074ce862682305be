// Package ggmlpeer runs real ggml (Debian's ggml 0.27.0 and llama.cpp
// 0.7.0, unpacked by scripts/ggml-peer.sh into a private sysroot) against
// gogml: it locates or fetches the sysroot, starts RPC servers, runs ggml's
// test programs through the sysroot's loader and the preload library that
// registers an RPC server, and parses test-backend-ops' output into per-op
// counts.
package ggmlpeer

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// ErrUnavailable means the pinned peer cannot be downloaded any more (the
// script exited with its distinct code); tests skip with the wrapped
// message and never pass silently.
var ErrUnavailable = errors.New("ggml peer unavailable")

// unavailableExit is scripts/ggml-peer.sh's exit code for a pinned version
// the configured suites no longer have.
const unavailableExit = 3

// Peer is a fetched sysroot and the script that manages it.
type Peer struct {
	// Script is the path of scripts/ggml-peer.sh.
	Script string
	// Root is the sysroot directory.
	Root string
	// Preload is the built preload library.
	Preload string
	// Version is the script's "ggml X llama.cpp Y" line.
	Version string
}

// RepoRoot returns the repository root above dir (the first directory
// holding go.mod and scripts/ggml-peer.sh).
func RepoRoot(dir string) (string, error) {
	d, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for {
		if fileExists(filepath.Join(d, "go.mod")) && fileExists(filepath.Join(d, "scripts", "ggml-peer.sh")) {
			return d, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", fmt.Errorf("ggmlpeer: no repository root with scripts/ggml-peer.sh above %s", dir)
		}
		d = parent
	}
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// Locate runs the repository's scripts/ggml-peer.sh to fetch the sysroot
// (instant when cached) and build the preload library. When the pinned
// version is gone the error wraps ErrUnavailable with the script's message.
func Locate(ctx context.Context, repoRoot string) (*Peer, error) {
	p := &Peer{Script: filepath.Join(repoRoot, "scripts", "ggml-peer.sh")}
	var err error
	if p.Root, err = p.script(ctx, "path"); err != nil {
		return nil, err
	}
	if p.Preload, err = p.script(ctx, "preload"); err != nil {
		return nil, err
	}
	if p.Version, err = p.script(ctx, "version"); err != nil {
		return nil, err
	}
	return p, nil
}

// script runs one script subcommand and returns its trimmed stdout.
func (p *Peer) script(ctx context.Context, sub string) (string, error) {
	cmd := exec.CommandContext(ctx, "bash", p.Script, sub)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ExitCode() == unavailableExit {
			return "", fmt.Errorf("%w: %s", ErrUnavailable, msg)
		}
		return "", fmt.Errorf("ggmlpeer: %s %s: %w\n%s", p.Script, sub, err, msg)
	}
	return strings.TrimSpace(stdout.String()), nil
}

const triplet = "x86_64-linux-gnu"

// Bin returns the path of a sysroot binary by name (test-backend-ops,
// test-llama-archs, ggml-rpc-server, llama-bench, ...).
func (p *Peer) Bin(name string) (string, error) {
	for _, d := range []string{"usr/bin", "usr/libexec/" + triplet + "/llama.cpp-tests", "usr/libexec/" + triplet + "/llama/bin"} {
		f := filepath.Join(p.Root, d, name)
		if fileExists(f) {
			return f, nil
		}
	}
	return "", fmt.Errorf("ggmlpeer: no binary %q in %s", name, p.Root)
}

// Command returns a command running the sysroot binary name through the
// sysroot's loader with the preload library; rpc, when not empty, is the
// HOST:PORT list of RPC servers the preload registers (devices RPC0, ...).
func (p *Peer) Command(ctx context.Context, rpc, name string, args ...string) (*exec.Cmd, error) {
	bin, err := p.Bin(name)
	if err != nil {
		return nil, err
	}
	lib := filepath.Join(p.Root, "usr/lib", triplet)
	argv := append([]string{"--library-path", lib + ":" + filepath.Join(lib, "llama"), "--preload", p.Preload, bin}, args...)
	cmd := exec.CommandContext(ctx, filepath.Join(lib, "ld-linux-x86-64.so.2"), argv...)
	cmd.Env = append(os.Environ(),
		"GGML_PEER_BACKEND_DIR="+filepath.Join(lib, "ggml", "backends0"),
		"GGML_PEER_RPC="+rpc)
	cmd.WaitDelay = 5 * time.Second
	return cmd, nil
}

// Server is a running RPC server process (gogml's or ggml's).
type Server struct {
	// Endpoint is the HOST:PORT the server printed.
	Endpoint string
	// SupportsOpQuery says the server answers gogml's op-support query
	// (rpcwire.CmdGogmlSupportsOp): programs run against it with BackendOps
	// ask it through the preload (GGML_PEER_SUPPORTS_OP=1).
	SupportsOpQuery bool
	cmd             *exec.Cmd
	// stop ends an in-process server (StartInProcessServer); nil for a
	// process.
	stop func()
	log  *lockedBuffer
	done chan error
}

// lockedBuffer collects a process's output safely across goroutines.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// StartServer starts cmd (not yet started), an RPC server that prints
// ggml rpc-server's banner line "  endpoint       : HOST:PORT" (gogml's
// on stdout, ggml's on stderr), and waits up to timeout for that line.
func StartServer(cmd *exec.Cmd, timeout time.Duration) (*Server, error) {
	s := &Server{cmd: cmd, log: &lockedBuffer{}, done: make(chan error, 1)}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("ggmlpeer: start %s: %w", cmd.Path, err)
	}
	found := make(chan string, 2)
	var wg sync.WaitGroup
	for _, r := range []io.Reader{stdout, stderr} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sc := bufio.NewScanner(r)
			for sc.Scan() {
				line := sc.Text()
				fmt.Fprintln(s.log, line)
				if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "endpoint" {
					select {
					case found <- strings.TrimSpace(v):
					default:
					}
				}
			}
			_, _ = io.Copy(io.Discard, r)
		}()
	}
	exited := make(chan struct{})
	go func() {
		wg.Wait()
		s.done <- cmd.Wait()
		close(exited)
	}()
	select {
	case ep := <-found:
		s.Endpoint = ep
		return s, nil
	case <-exited:
		err := <-s.done
		return nil, fmt.Errorf("ggmlpeer: %s exited before printing its endpoint (%v):\n%s", cmd.Path, err, s.log.String())
	case <-time.After(timeout):
		_ = cmd.Process.Kill()
		<-exited
		return nil, fmt.Errorf("ggmlpeer: %s printed no endpoint within %v:\n%s", cmd.Path, timeout, s.log.String())
	}
}

// Alive reports whether the server process is still running.
func (s *Server) Alive() bool {
	select {
	case err := <-s.done:
		s.done <- err
		return false
	default:
		return true
	}
}

// Log returns what the server printed so far.
func (s *Server) Log() string { return s.log.String() }

// Close stops the server (a process: interrupt, then kill after 5 s; an
// in-process server: rpcserver's Close) and returns nil when it stopped
// that way.
func (s *Server) Close() error {
	if !s.Alive() {
		err := <-s.done
		s.done <- err
		return fmt.Errorf("ggmlpeer: server had exited: %v", err)
	}
	if s.stop != nil {
		s.stop()
		err := <-s.done
		s.done <- err
		return nil
	}
	_ = s.cmd.Process.Signal(os.Interrupt)
	select {
	case err := <-s.done:
		s.done <- err
	case <-time.After(5 * time.Second):
		_ = s.cmd.Process.Kill()
		err := <-s.done
		s.done <- err
	}
	return nil
}
