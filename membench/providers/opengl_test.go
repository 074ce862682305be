//go:build opengl

package providers

import (
	"bytes"
	"context"
	"errors"
	"os"
	"testing"

	"github.com/gogml/gogml/backends/cpu"
	"github.com/gogml/gogml/backends/opengl"
	"github.com/gogml/gogml/membench"
	"github.com/gogml/gogml/runtime"
)

// openMembench opens the OpenGL provider, skipping (or failing under
// GOGML_REQUIRE_GL=1) when no device can be opened.
func openMembench(t *testing.T) membench.Target {
	t.Helper()
	ts, closeFn, err := OpenGL().Open()
	if err != nil {
		if os.Getenv(opengl.RequireEnv) == "1" {
			t.Fatalf("%s=1 but no OpenGL device: %v", opengl.RequireEnv, err)
		}
		if errors.Is(err, runtime.ErrUnsupported) {
			t.Skipf("no OpenGL device (set %s=1 to fail instead): %v", opengl.RequireEnv, err)
		}
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := closeFn(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	if len(ts) != 1 {
		t.Fatalf("%d targets, want 1 (GL0)", len(ts))
	}
	return ts[0]
}

// TestMembenchGL runs membench on GL0, as the OpenGL provider opens it and
// with glBufferSubData uploads (where Synchronize waits on a fence), with
// the plain CPU buffer type as the reference it copies with, over 4-16 KiB,
// and checks that every operation and size has positive samples with the
// median within min and max.
func TestMembenchGL(t *testing.T) {
	for _, tc := range []struct {
		name string
		open func(t *testing.T) membench.Target
	}{
		{"provider", openMembench},
		{"subdata", func(t *testing.T) membench.Target {
			b, err := opengl.New(opengl.Config{Upload: opengl.UploadSubData})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = b.Close() })
			return GLTarget(b)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) { checkMembenchGL(t, tc.open(t)) })
	}
}

func checkMembenchGL(t *testing.T, gl membench.Target) {
	if gl.Name() != "GL0" {
		t.Fatalf("target %q, want GL0", gl.Name())
	}
	s, ok := gl.(membench.Synchronizer)
	if !ok {
		t.Fatal("GL0 target is not a Synchronizer")
	}
	if err := s.Synchronize(); err != nil {
		t.Fatalf("Synchronize: %v", err)
	}
	host, err := cpu.NewBufferType(cpu.BufferTypeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := membench.Config{MinSize: 4 << 10, MaxSize: 16 << 10, Reps: 2, Warmup: 1, SampleBytes: 64 << 10, MaxIters: 4}
	rep, err := membench.Run(context.Background(), []membench.Target{membench.NewTarget("", host), gl}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var js bytes.Buffer
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	back, err := membench.ReadJSON(&js)
	if err != nil {
		t.Fatal(err)
	}
	sizes := []uint64{4 << 10, 8 << 10, 16 << 10}
	if len(back.Sizes) != len(sizes) {
		t.Fatalf("sizes %v, want %v", back.Sizes, sizes)
	}
	ops := []string{membench.OpAllocFree, membench.OpFirstTouch, membench.OpClear, membench.OpSet, membench.OpGet,
		membench.OpCopy, membench.CopyToOp("CPU"), membench.CopyFromOp("CPU")}
	for _, op := range ops {
		for _, n := range sizes {
			t.Run(op+"/"+membench.FormatSize(n), func(t *testing.T) {
				r, ok := back.Find("GL0", op, n)
				if !ok {
					t.Fatal("missing")
				}
				if r.Error != "" {
					t.Fatal(r.Error)
				}
				if r.Timing != "host" {
					t.Errorf("timing %q, want host", r.Timing)
				}
				if len(r.Samples) != cfg.Reps {
					t.Errorf("%d samples, want %d", len(r.Samples), cfg.Reps)
				}
				for _, s := range r.Samples {
					if !(s > 0) {
						t.Errorf("sample %g not positive", s)
					}
				}
				if !(r.MinS > 0 && r.MinS <= r.MedianS && r.MedianS <= r.MaxS) {
					t.Errorf("median %g s not within [%g, %g]", r.MedianS, r.MinS, r.MaxS)
				}
				if membench.IsBandwidth(op) && !(r.MinGBps > 0 && r.MinGBps <= r.MedianGBps && r.MedianGBps <= r.MaxGBps) {
					t.Errorf("median %g GB/s not within [%g, %g]", r.MedianGBps, r.MinGBps, r.MaxGBps)
				}
			})
		}
	}
	if _, ok := back.Find(membench.HostTarget, membench.OpHostCopy, 4<<10); !ok {
		t.Error("host copy reference missing")
	}
}
