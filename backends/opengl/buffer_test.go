//go:build opengl

package opengl

import (
	"testing"

	"github.com/gogml/gogml/backends/backendtest"
)

func TestBufferConformance(t *testing.T) {
	for _, mode := range []UploadMode{UploadSubData, UploadMapped} {
		t.Run(mode.String(), func(t *testing.T) {
			b := open(t, Config{Upload: mode})
			other := open(t, Config{})
			backendtest.RunBuffers(t, b.DefaultBufferType(), backendtest.WithOther(other.DefaultBufferType()))
		})
	}
}
