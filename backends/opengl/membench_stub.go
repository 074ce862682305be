//go:build !opengl

package opengl

import (
	"fmt"

	"github.com/gogml/gogml/membench"
	"github.com/gogml/gogml/runtime"
)

// MembenchProvider offers the OpenGL buffer type to `gogml membench`. In
// this build the backend is not compiled in, so Open fails with an error
// wrapping runtime.ErrUnsupported and ErrNotCompiled, and membench skips it.
func MembenchProvider() membench.Provider {
	return membench.Provider{Name: "opengl", Open: func() ([]membench.Target, func() error, error) {
		return nil, nil, fmt.Errorf("%w: %w", runtime.ErrUnsupported, ErrNotCompiled)
	}}
}
