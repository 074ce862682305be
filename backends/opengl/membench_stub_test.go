//go:build !opengl

package opengl

import (
	"errors"
	"testing"

	"github.com/gogml/gogml/runtime"
)

func TestMembenchProviderStub(t *testing.T) {
	ts, closeFn, err := MembenchProvider().Open()
	if ts != nil || closeFn != nil || !errors.Is(err, runtime.ErrUnsupported) || !errors.Is(err, ErrNotCompiled) {
		t.Fatalf("Open = %v, %v, %v; want an error wrapping ErrUnsupported and ErrNotCompiled", ts, closeFn != nil, err)
	}
}
