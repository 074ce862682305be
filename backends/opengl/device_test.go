//go:build opengl

package opengl

import (
	"errors"
	"testing"
)

func TestDeviceInfo(t *testing.T) {
	b := open(t, Config{})
	in := b.Info()
	t.Logf("device: %s", in)
	t.Logf("GL %d.%d, GLSL %s", in.Major, in.Minor, in.GLSLVersion)
	t.Logf("limits: SSBO block %d bytes, offset alignment %d, %d bindings, %d compute SSBOs, %d invocations, groups %v, local %v, shared %d bytes",
		in.MaxSSBOBlockSize, in.SSBOOffsetAlignment, in.MaxSSBOBindings, in.MaxComputeSSBOs, in.MaxWorkGroupInvocations, in.MaxWorkGroupCount, in.MaxWorkGroupSize, in.MaxSharedMemory)
	t.Logf("upload mode (auto): %s", b.UploadMode())
	t.Logf("memory: known=%v free=%d total=%d", in.MemoryKnown, in.FreeMemory, in.TotalMemory)
	if in.Renderer == "" || in.Version == "" {
		t.Errorf("empty renderer or version: %+v", in)
	}
	if in.Major < 4 || (in.Major == 4 && in.Minor < 3) {
		t.Errorf("context %d.%d, want at least 4.3", in.Major, in.Minor)
	}
	bt := b.DefaultBufferType()
	if bt.Name() != "GL0" || bt.Alignment() < 16 || bt.MaxSize() == 0 {
		t.Errorf("buffer type %s: alignment %d, max %d", bt.Name(), bt.Alignment(), bt.MaxSize())
	}
	d := b.Device()
	if d.Name != "GL0" || d.Description == "" {
		t.Errorf("Device() = %+v", d)
	}
}

// TestWrongThread checks that GL helpers refuse to run outside the GL
// thread instead of silently doing nothing.
func TestWrongThread(t *testing.T) {
	b := open(t, Config{})
	if err := b.dev.onThread(); !errors.Is(err, ErrWrongThread) {
		t.Fatalf("onThread from the test goroutine = %v, want ErrWrongThread", err)
	}
	if err := b.dev.finish(); !errors.Is(err, ErrWrongThread) {
		t.Fatalf("finish from the test goroutine = %v, want ErrWrongThread", err)
	}
	buf, err := b.DefaultBufferType().AllocBuffer(64)
	if err != nil {
		t.Fatal(err)
	}
	defer buf.Free()
	if err := buf.(*buffer).upload(0, make([]byte, 4)); !errors.Is(err, ErrWrongThread) {
		t.Fatalf("upload from the test goroutine = %v, want ErrWrongThread", err)
	}
	if err := b.dev.call(func() error { return b.dev.finish() }); err != nil {
		t.Fatalf("finish on the GL thread: %v", err)
	}
	// Re-entrant calls run directly on the GL thread.
	if err := b.dev.call(func() error { return b.dev.call(b.dev.onThread) }); err != nil {
		t.Fatalf("nested call: %v", err)
	}
}

func TestCloseTwice(t *testing.T) {
	b, err := New(Config{})
	if err != nil {
		open(t, Config{}) // skips or fails with the reason
		return
	}
	bt := b.DefaultBufferType()
	buf, err := bt.AllocBuffer(16)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); !errors.Is(err, ErrClosed) {
		t.Fatalf("second Close = %v, want ErrClosed", err)
	}
	if _, err := bt.AllocBuffer(16); !errors.Is(err, ErrClosed) {
		t.Fatalf("AllocBuffer after Close = %v, want ErrClosed", err)
	}
	if err := buf.Free(); err != nil {
		t.Fatalf("Free after Close = %v", err)
	}
}

func TestMultipleDevices(t *testing.T) {
	a := open(t, Config{})
	b := open(t, Config{})
	if a.dev.tid == b.dev.tid {
		t.Fatal("two backends share a GL thread")
	}
}
