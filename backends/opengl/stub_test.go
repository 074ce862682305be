//go:build !opengl

package opengl

import (
	"errors"
	"testing"
)

func TestStubNotCompiled(t *testing.T) {
	b, err := New(Config{})
	if b != nil || !errors.Is(err, ErrNotCompiled) {
		t.Fatalf("New = %v, %v; want nil, ErrNotCompiled", b, err)
	}
	if Compiled {
		t.Fatal("Compiled is true in a build without the opengl tag")
	}
}
