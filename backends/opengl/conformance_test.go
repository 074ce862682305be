//go:build opengl

package opengl

import (
	"testing"

	"github.com/gogml/gogml/backends/backendtest"
)

// TestConformance runs the shared suite (buffers and every claimed op
// against the CPU reference) on the GL backend.
func TestConformance(t *testing.T) {
	b := open(t, Config{})
	other := open(t, Config{})
	var opts []backendtest.OpOption
	if raceEnabled {
		opts = append(opts, backendtest.Reduced())
	}
	opts = append(opts, backendtest.WithBufferOptions(backendtest.WithOther(other.DefaultBufferType())))
	backendtest.Run(t, b, opts...)
}
