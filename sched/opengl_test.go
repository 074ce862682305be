//go:build opengl

package sched_test

import (
	"errors"
	"math"
	"os"
	"testing"

	"github.com/gogml/gogml/backends/cpu"
	"github.com/gogml/gogml/backends/opengl"
	"github.com/gogml/gogml/runtime"
	"github.com/gogml/gogml/sched"
)

func openGL(t *testing.T) *opengl.Backend {
	t.Helper()
	b, err := opengl.New(opengl.Config{})
	if err != nil {
		if os.Getenv(opengl.RequireEnv) == "1" {
			t.Fatalf("%s=1 but no OpenGL device: %v", opengl.RequireEnv, err)
		}
		if errors.Is(err, opengl.ErrNoDevice) || errors.Is(err, opengl.ErrNotCompiled) {
			t.Skipf("no OpenGL device: %v", err)
		}
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// closeF32 compares two f32 results within NMSE 1e-6 (the GPU's
// kernels sum in another order than the CPU's).
func closeF32(t *testing.T, got, want []byte) {
	t.Helper()
	var num, den float64
	for i := 0; i+4 <= len(want); i += 4 {
		g := float64(math.Float32frombits(uint32(got[i]) | uint32(got[i+1])<<8 | uint32(got[i+2])<<16 | uint32(got[i+3])<<24))
		w := float64(math.Float32frombits(uint32(want[i]) | uint32(want[i+1])<<8 | uint32(want[i+2])<<16 | uint32(want[i+3])<<24))
		num += (g - w) * (g - w)
		den += w * w
	}
	if den > 0 && num/den > 1e-6 {
		t.Fatalf("NMSE %g against the CPU-only result", num/den)
	}
}

// TestOpenGLAndCPUPinnedEachWay: the model graph over OpenGL (llvmpipe in
// CI) and the CPU, with every node pinned in turn to each side, gives the
// CPU-only result, and the plan covers both devices' buffer types.
func TestOpenGLAndCPUPinnedEachWay(t *testing.T) {
	want := reference(t)
	gl := openGL(t)
	host := cpu.NewBackend(cpu.BackendOptions{Threads: 1})
	defer host.Close()
	m := newModel(t, gl.DefaultBufferType())
	g, _, _ := m.build(t)
	n := g.NumNodes()
	for k := -1; k < n; k++ {
		for b := 0; b < 2; b++ {
			if k < 0 && b > 0 {
				continue
			}
			s, err := sched.New([]runtime.Backend{gl, host})
			if err != nil {
				t.Fatal(err)
			}
			got := runSched(t, s, m, func(g *runtime.Graph) {
				if k >= 0 {
					if err := s.SetBackend(g.Nodes()[k], b); err != nil {
						t.Fatal(err)
					}
				}
			})
			if k < 0 {
				pl := s.Allocator().Plan()
				t.Logf("unpinned: %d splits; compute memory per buffer type %v, lower bound %v", len(s.Splits()), pl.Chunks, pl.LowerBound())
			}
			s.Free()
			closeF32(t, got, want)
		}
	}
}
