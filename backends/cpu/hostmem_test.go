package cpu_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/gogml/gogml/backends/cpu"
	"github.com/gogml/gogml/runtime"
)

// TestBufferFromHostMemory computes over a read-only file mapping: the
// weights are read in place, every write to them is an error (not a
// fault), and Free releases the mapping once.
func TestBufferFromHostMemory(t *testing.T) {
	path := filepath.Join(t.TempDir(), "w.bin")
	// 64 bytes: a 2x2 f32 matrix at offset 32.
	file := make([]byte, 64)
	copy(file[32:], []byte{0, 0, 0x80, 0x3f, 0, 0, 0, 0x40, 0, 0, 0x40, 0x40, 0, 0, 0x80, 0x40}) // 1 2 3 4
	if err := os.WriteFile(path, file, 0o644); err != nil {
		t.Fatal(err)
	}
	fd, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	mem, err := unix.Mmap(int(fd.Fd()), 0, 64, unix.PROT_READ, unix.MAP_SHARED)
	fd.Close()
	if err != nil {
		t.Fatal(err)
	}
	released := 0
	buf, err := cpu.BufferFromHostMemory(mem, 0, true, func() error { released++; return unix.Munmap(mem) })
	if err != nil {
		t.Fatal(err)
	}
	if buf.Type().Name() != "CPU_Mapped" || !buf.Type().IsHost() || buf.Size() != 64 {
		t.Errorf("type %s size %d", buf.Type().Name(), buf.Size())
	}
	if _, err := buf.Type().AllocBuffer(16); !errors.Is(err, runtime.ErrUnsupported) {
		t.Errorf("AllocBuffer: %v", err)
	}
	ctx := runtime.NewContext()
	w := ctx.NewTensor2D(runtime.TypeF32, 2, 2)
	if err := runtime.TensorAlloc(buf, w, 32); err != nil {
		t.Fatal(err)
	}
	if err := runtime.TensorAlloc(buf, ctx.NewTensor2D(runtime.TypeF32, 8, 2), 32); !errors.Is(err, runtime.ErrOutOfBounds) {
		t.Errorf("tensor past the end: %v", err)
	}
	// x = [1, 1]; y = w x = [1+2, 3+4].
	x := ctx.NewTensor1D(runtime.TypeF32, 2)
	y := ctx.MulMat(w, x)
	if err := ctx.Err(); err != nil {
		t.Fatal(err)
	}
	work, err := cpu.DefaultBufferType().Alloc(64)
	if err != nil {
		t.Fatal(err)
	}
	defer work.Free()
	if err := runtime.TensorAlloc(work, x, 0); err != nil {
		t.Fatal(err)
	}
	if err := runtime.TensorAlloc(work, y, 32); err != nil {
		t.Fatal(err)
	}
	if err := runtime.SetTensorData(x, []byte{0, 0, 0x80, 0x3f, 0, 0, 0x80, 0x3f}, 0); err != nil {
		t.Fatal(err)
	}
	g := runtime.NewGraph()
	if err := g.BuildForwardExpand(y); err != nil {
		t.Fatal(err)
	}
	be := cpu.NewBackend(cpu.BackendOptions{Threads: 1})
	defer be.Close()
	if !be.SupportsBufferType(buf.Type()) {
		t.Fatal("cpu backend refuses the mapped buffer type")
	}
	if err := be.Compute(g); err != nil {
		t.Fatal(err)
	}
	out := make([]byte, 8)
	if err := runtime.GetTensorData(y, out, 0); err != nil {
		t.Fatal(err)
	}
	if want := []byte{0, 0, 0x40, 0x40, 0, 0, 0xe0, 0x40}; string(out) != string(want) { // 3, 7
		t.Errorf("y = % x, want % x", out, want)
	}
	// Writes are errors, not faults.
	for name, err := range map[string]error{
		"set":    runtime.SetTensorData(w, make([]byte, 4), 0),
		"memset": buf.MemsetTensor(w, 0, 0, 4),
		"clear":  buf.Clear(0),
	} {
		if !errors.Is(err, runtime.ErrUnsupported) {
			t.Errorf("%s on read-only memory: %v", name, err)
		}
	}
	if ok, err := buf.CopyTensor(x, w); ok || !errors.Is(err, runtime.ErrUnsupported) {
		t.Errorf("copy into read-only memory: %v %v", ok, err)
	}
	if ok, err := work.CopyTensor(x, w); ok || !errors.Is(err, runtime.ErrUnsupported) {
		t.Errorf("copy from a CPU buffer into read-only memory: %v %v", ok, err)
	}
	// A graph writing its result into the mapping is refused.
	g2 := runtime.NewGraph()
	cp := ctx.Cpy(x, ctx.View1D(w, 2, 0))
	if err := g2.BuildForwardExpand(cp); err != nil {
		t.Fatal(err)
	}
	for _, n := range append(g2.Leafs(), g2.Nodes()...) {
		if n.ViewSrc != nil && n.Buffer == nil {
			if err := runtime.ViewInit(n); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := be.Compute(g2); !errors.Is(err, runtime.ErrUnsupported) || !strings.Contains(err.Error(), "read-only") {
		t.Errorf("compute into read-only memory: %v", err)
	}
	if err := buf.Free(); err != nil || released != 1 {
		t.Fatalf("free: %v, released %d times", err, released)
	}
	if err := buf.Free(); !errors.Is(err, runtime.ErrFreed) || released != 1 {
		t.Errorf("second free: %v, released %d times", err, released)
	}
	if _, err := cpu.BufferFromHostMemory(nil, 3, false, nil); !errors.Is(err, runtime.ErrAlignment) {
		t.Errorf("alignment 3: %v", err)
	}
}
