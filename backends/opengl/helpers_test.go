//go:build opengl

package opengl

import (
	"errors"
	"os"
	"testing"
)

// open returns a backend for the test, skipping (or failing under
// GOGML_REQUIRE_GL=1) when no device can be opened.
func open(t testing.TB, cfg Config) *Backend {
	t.Helper()
	b, err := New(cfg)
	if err != nil {
		if os.Getenv(RequireEnv) == "1" {
			t.Fatalf("%s=1 but no OpenGL device: %v", RequireEnv, err)
		}
		if errors.Is(err, ErrNoDevice) {
			t.Skipf("no OpenGL device (set %s=1 to fail instead): %v", RequireEnv, err)
		}
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}
