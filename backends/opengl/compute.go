//go:build opengl

package opengl

import (
	"fmt"

	"github.com/gogml/gogml/runtime"
)

// SupportsOp reports whether Compute has a kernel for t.
func (b *Backend) SupportsOp(t *runtime.Tensor) bool { return false }

// Compute runs g's nodes in order.
func (b *Backend) Compute(g *runtime.Graph) error {
	return fmt.Errorf("opengl: %w", runtime.ErrUnsupported)
}
