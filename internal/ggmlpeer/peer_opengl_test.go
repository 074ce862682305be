//go:build opengl && egl

package ggmlpeer

import "testing"

// TestRPCServerOpenGL runs ggml's test-backend-ops against gogml
// rpc-server -backend opengl (built with -tags opengl,egl) for the chosen
// ops.
func TestRPCServerOpenGL(t *testing.T) {
	testRPCServer(t, "opengl", "opengl,egl")
}
