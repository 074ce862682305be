package cpu

import (
	"bytes"
	"errors"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/gogml/gogml/runtime"
)

// mustType builds a buffer type or fails the test.
func mustType(t *testing.T, o BufferTypeOptions) *BufferType {
	t.Helper()
	bt, err := NewBufferType(o)
	if err != nil {
		t.Fatalf("NewBufferType(%+v): %v", o, err)
	}
	return bt
}

// allocOrSkip allocates, skipping the test when a locked type hits the
// locked-memory limit.
func allocOrSkip(t *testing.T, bt *BufferType, size uint64) *Buffer {
	t.Helper()
	b, err := bt.Alloc(size)
	if errors.Is(err, ErrMemlockLimit) {
		t.Skipf("locked memory not available: %v", err)
	}
	if err != nil {
		t.Fatalf("%s: Alloc(%d): %v", bt.Name(), size, err)
	}
	return b
}

// placed makes an i8 tensor of n bytes at offset in b.
func placed(t *testing.T, b runtime.Buffer, n int64, offset uint64) *runtime.Tensor {
	t.Helper()
	x := runtime.NewContext().NewTensor1D(runtime.TypeI8, n)
	x.Name = "x"
	if err := runtime.TensorAlloc(b, x, offset); err != nil {
		t.Fatalf("TensorAlloc: %v", err)
	}
	return x
}

func TestNewBufferType(t *testing.T) {
	tests := []struct {
		name      string
		opts      BufferTypeOptions
		wantName  string
		wantAlign uint64
		wantMax   uint64
		wantErr   error
	}{
		{"default", BufferTypeOptions{}, "CPU", 32, runtime.NoMaxSize, nil},
		{"align 1", BufferTypeOptions{Alignment: 1}, "CPU", 1, runtime.NoMaxSize, nil},
		{"align 64", BufferTypeOptions{Alignment: 64}, "CPU", 64, runtime.NoMaxSize, nil},
		{"align 2MiB", BufferTypeOptions{Alignment: 2 << 20}, "CPU", 2 << 20, runtime.NoMaxSize, nil},
		{"align 3", BufferTypeOptions{Alignment: 3}, "", 0, 0, runtime.ErrAlignment},
		{"align 48", BufferTypeOptions{Alignment: 48}, "", 0, 0, runtime.ErrAlignment},
		{"align 2GiB", BufferTypeOptions{Alignment: 2 << 30}, "", 0, 0, runtime.ErrAlignment},
		{"max size", BufferTypeOptions{MaxSize: 1000}, "CPU", 32, 1000, nil},
		{"huge", BufferTypeOptions{HugePages: true}, "CPU_Huge", 32, runtime.NoMaxSize, nil},
		{"locked", BufferTypeOptions{Locked: true}, "CPU_Locked", 32, runtime.NoMaxSize, nil},
		{"huge locked", BufferTypeOptions{HugePages: true, Locked: true}, "CPU_Huge_Locked", 32, runtime.NoMaxSize, nil},
		{"named", BufferTypeOptions{Name: "Host", HugePages: true}, "Host", 32, runtime.NoMaxSize, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			bt, err := NewBufferType(tc.opts)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("err = %v, want %v", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if bt.Name() != tc.wantName || bt.Alignment() != tc.wantAlign || bt.MaxSize() != tc.wantMax || !bt.IsHost() {
				t.Errorf("got name %q align %d max %d host %v", bt.Name(), bt.Alignment(), bt.MaxSize(), bt.IsHost())
			}
			if bt.HugePages() != tc.opts.HugePages || bt.Locked() != tc.opts.Locked {
				t.Errorf("huge %v locked %v, want %v %v", bt.HugePages(), bt.Locked(), tc.opts.HugePages, tc.opts.Locked)
			}
		})
	}
	d := DefaultBufferType()
	if d.Name() != "CPU" || d.Alignment() != DefaultAlignment || d.MaxSize() != runtime.NoMaxSize {
		t.Errorf("DefaultBufferType: %q %d %d", d.Name(), d.Alignment(), d.MaxSize())
	}
}

func TestAlloc(t *testing.T) {
	types := []BufferTypeOptions{
		{},
		{Alignment: 1},
		{Alignment: 2 << 20},
		{HugePages: true},
		{Locked: true},
		{HugePages: true, Locked: true},
	}
	sizes := []uint64{0, 1, 31, 4095, 4096, 4097, 3 << 20}
	for _, o := range types {
		bt := mustType(t, o)
		for _, size := range sizes {
			t.Run(bt.Name()+"/"+sizeName(size)+"/align"+sizeName(bt.Alignment()), func(t *testing.T) {
				b := allocOrSkip(t, bt, size)
				if b.Size() != size || uint64(len(b.Bytes())) != size {
					t.Fatalf("size %d, len %d, want %d", b.Size(), len(b.Bytes()), size)
				}
				if b.Base() == 0 || b.Base()%bt.Alignment() != 0 {
					t.Fatalf("base %#x not non-zero and aligned to %d", b.Base(), bt.Alignment())
				}
				if o.HugePages && size >= hugePageSize && b.Base()%hugePageSize != 0 {
					t.Errorf("huge-page buffer at %#x not on a huge-page boundary", b.Base())
				}
				if b.Type() != runtime.BufferType(bt) {
					t.Error("Type() is not the allocating type")
				}
				mem := b.Bytes()
				if !bytes.Equal(mem, make([]byte, size)) {
					t.Error("fresh buffer not zeroed")
				}
				if err := b.Clear(0x5a); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(mem, bytes.Repeat([]byte{0x5a}, int(size))) {
					t.Error("Clear(0x5a) did not fill the buffer")
				}
				b.SetUsage(runtime.UsageWeights)
				if b.Usage() != runtime.UsageWeights {
					t.Error("usage not kept")
				}
				if err := b.Free(); err != nil {
					t.Fatal(err)
				}
				if b.Bytes() != nil {
					t.Error("Bytes() not nil after Free")
				}
			})
		}
	}
}

func sizeName(n uint64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.FormatUint(n>>20, 10) + "MiB"
	case n >= 1<<10 && n%(1<<10) == 0:
		return strconv.FormatUint(n>>10, 10) + "KiB"
	}
	return strconv.FormatUint(n, 10) + "B"
}

func TestAllocFailures(t *testing.T) {
	limited := mustType(t, BufferTypeOptions{MaxSize: 4096})
	tests := []struct {
		name string
		bt   *BufferType
		size uint64
	}{
		{"above max size", limited, 4097},
		{"beyond address space", DefaultBufferType(), 1 << 62},
		{"max uint64", DefaultBufferType(), 1<<64 - 1},
		{"huge pages beyond address space", mustType(t, BufferTypeOptions{HugePages: true}), 1 << 62},
		{"aligned beyond address space", mustType(t, BufferTypeOptions{Alignment: 1 << 30}), 1<<64 - 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, err := tc.bt.AllocBuffer(tc.size)
			if !errors.Is(err, runtime.ErrOutOfMemory) {
				t.Fatalf("AllocBuffer(%d) = %v, %v; want ErrOutOfMemory", tc.size, b, err)
			}
			// The type stays usable.
			small, err := tc.bt.AllocBuffer(64)
			if err != nil {
				t.Fatal(err)
			}
			if err := small.Free(); err != nil {
				t.Fatal(err)
			}
		})
	}
	if b, err := limited.AllocBuffer(4096); err != nil {
		t.Fatalf("exactly max size: %v", err)
	} else if err := b.Free(); err != nil {
		t.Fatal(err)
	}
}

func TestMlockError(t *testing.T) {
	bt := mustType(t, BufferTypeOptions{Locked: true})
	for _, cause := range []error{unix.ENOMEM, unix.EPERM, unix.EAGAIN} {
		err := bt.mlockError(1<<20, cause)
		if !errors.Is(err, ErrMemlockLimit) || !errors.Is(err, runtime.ErrOutOfMemory) {
			t.Errorf("%v: %v does not wrap ErrMemlockLimit and ErrOutOfMemory", cause, err)
		}
		if !strings.Contains(err.Error(), "RLIMIT_MEMLOCK is") {
			t.Errorf("%v: message %q does not name the limit", cause, err)
		}
	}
	if err := bt.mlockError(1, unix.EINVAL); errors.Is(err, ErrMemlockLimit) || !errors.Is(err, runtime.ErrOutOfMemory) {
		t.Errorf("EINVAL: %v", err)
	}
}

func TestBounds(t *testing.T) {
	bt := DefaultBufferType()
	b := allocOrSkip(t, bt, 256)
	defer b.Free()
	x := placed(t, b, 100, 64)
	other := runtime.NewContext().NewTensor1D(runtime.TypeI8, 8)
	other.Name = "other"
	// A tensor claiming a place past the buffer's end.
	outside := runtime.NewContext().NewTensor1D(runtime.TypeI8, 100)
	outside.Name = "outside"
	outside.Buffer, outside.Offset = b, 200

	tests := []struct {
		name string
		op   func() error
		want error
	}{
		{"set past end", func() error { return b.SetTensor(x, make([]byte, 2), 99) }, runtime.ErrOutOfBounds},
		{"set too long", func() error { return b.SetTensor(x, make([]byte, 101), 0) }, runtime.ErrOutOfBounds},
		{"set offset overflow", func() error { return b.SetTensor(x, make([]byte, 1), 1<<64-1) }, runtime.ErrOutOfBounds},
		{"get past end", func() error { return b.GetTensor(x, make([]byte, 1), 100) }, runtime.ErrOutOfBounds},
		{"memset past end", func() error { return b.MemsetTensor(x, 1, 50, 51) }, runtime.ErrOutOfBounds},
		{"memset size overflow", func() error { return b.MemsetTensor(x, 1, 1, 1<<64-1) }, runtime.ErrOutOfBounds},
		{"not placed", func() error { return b.SetTensor(other, make([]byte, 1), 0) }, runtime.ErrNotAllocated},
		{"outside buffer", func() error { return b.SetTensor(outside, make([]byte, 100), 0) }, runtime.ErrOutOfBounds},
		{"init outside buffer", func() error { return b.InitTensor(outside) }, runtime.ErrOutOfBounds},
		{"init not placed", func() error { return b.InitTensor(other) }, runtime.ErrNotAllocated},
		{"alloc past end", func() error {
			y := runtime.NewContext().NewTensor1D(runtime.TypeI8, 100)
			return runtime.TensorAlloc(b, y, 160)
		}, runtime.ErrOutOfBounds},
		{"set at end, empty", func() error { return b.SetTensor(x, nil, 100) }, nil},
		{"get whole", func() error { return b.GetTensor(x, make([]byte, 100), 0) }, nil},
		{"memset whole", func() error { return b.MemsetTensor(x, 7, 0, 100) }, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.op()
			if tc.want == nil && err != nil || tc.want != nil && !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
		})
	}
	// Nothing outside x was touched by the failed calls or the memset.
	mem := b.Bytes()
	if !bytes.Equal(mem[:64], make([]byte, 64)) || !bytes.Equal(mem[164:], make([]byte, 256-164)) {
		t.Error("bytes outside the tensor changed")
	}
	if !bytes.Equal(mem[64:164], bytes.Repeat([]byte{7}, 100)) {
		t.Error("memset did not fill the tensor")
	}
}

// fakeBuffer is a non-host buffer for CopyTensor's fallback.
type fakeBuffer struct{ runtime.Buffer }

func TestCopyTensor(t *testing.T) {
	bt := DefaultBufferType()
	a := allocOrSkip(t, bt, 4096)
	defer a.Free()
	b := allocOrSkip(t, mustType(t, BufferTypeOptions{HugePages: true}), 4096)
	defer b.Free()
	src := placed(t, a, 1000, 0)
	dst := placed(t, b, 1000, 32)
	small := placed(t, b, 10, 2048)
	want := make([]byte, 1000)
	for i := range want {
		want[i] = byte(i*7 + 3)
	}
	if err := a.SetTensor(src, want, 0); err != nil {
		t.Fatal(err)
	}

	// Into this buffer from another host buffer.
	if ok, err := b.CopyTensor(src, dst); !ok || err != nil {
		t.Fatalf("CopyTensor into b = %v, %v", ok, err)
	}
	if !bytes.Equal(b.Bytes()[32:1032], want) {
		t.Fatal("copied bytes differ")
	}
	// Called on the source's buffer, as runtime.CopyTensorData does.
	Fill(b.Bytes(), 0)
	if ok, err := a.CopyTensor(src, dst); !ok || err != nil {
		t.Fatalf("CopyTensor on source buffer = %v, %v", ok, err)
	}
	if !bytes.Equal(b.Bytes()[32:1032], want) {
		t.Fatal("copied bytes differ")
	}
	// Size mismatch.
	if _, err := b.CopyTensor(src, small); !errors.Is(err, runtime.ErrShape) {
		t.Fatalf("mismatched sizes: %v", err)
	}
	// A non-host source: not handled, no error.
	foreign := runtime.NewContext().NewTensor1D(runtime.TypeI8, 1000)
	foreign.Buffer = fakeBuffer{}
	if ok, err := b.CopyTensor(foreign, dst); ok || err != nil {
		t.Fatalf("non-host source = %v, %v; want false, nil", ok, err)
	}
	// Neither tensor in this buffer.
	if ok, err := a.CopyTensor(dst, dst); ok || err != nil {
		t.Fatalf("unrelated tensors = %v, %v; want false, nil", ok, err)
	}
	// A freed source buffer.
	c := allocOrSkip(t, bt, 1000)
	csrc := placed(t, c, 1000, 0)
	if err := c.Free(); err != nil {
		t.Fatal(err)
	}
	if _, err := b.CopyTensor(csrc, dst); !errors.Is(err, runtime.ErrFreed) {
		t.Fatalf("freed source: %v", err)
	}
}

func TestFree(t *testing.T) {
	for _, size := range []uint64{0, 4096} {
		t.Run(sizeName(size), func(t *testing.T) {
			b := allocOrSkip(t, DefaultBufferType(), size)
			var x *runtime.Tensor
			if size > 0 {
				x = placed(t, b, 16, 0)
			} else {
				x = runtime.NewContext().NewTensor1D(runtime.TypeI8, 16)
				x.Buffer = b
			}
			if err := b.Free(); err != nil {
				t.Fatal(err)
			}
			ops := []struct {
				name string
				op   func() error
			}{
				{"free", b.Free},
				{"clear", func() error { return b.Clear(0) }},
				{"set", func() error { return b.SetTensor(x, []byte{1}, 0) }},
				{"get", func() error { return b.GetTensor(x, []byte{1}, 0) }},
				{"memset", func() error { return b.MemsetTensor(x, 1, 0, 1) }},
				{"init", func() error { return b.InitTensor(x) }},
				{"copy", func() error { _, err := b.CopyTensor(x, x); return err }},
			}
			for _, o := range ops {
				if err := o.op(); !errors.Is(err, runtime.ErrFreed) {
					t.Errorf("%s after Free: %v, want ErrFreed", o.name, err)
				}
			}
			b.Reset() // harmless
		})
	}
}

func TestFill(t *testing.T) {
	for _, n := range []int{0, 1, 2, 3, 1000, 16 << 10, 16<<10 + 1, 100003} {
		for _, v := range []byte{0, 0xff, 0x42} {
			p := make([]byte, n)
			for i := range p {
				p[i] = 0x11
			}
			Fill(p, v)
			if !bytes.Equal(p, bytes.Repeat([]byte{v}, n)) {
				t.Fatalf("Fill(%d bytes, %#x) wrong", n, v)
			}
		}
	}
}
