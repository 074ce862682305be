// Package backendtest is the conformance suite every gogml backend runs in
// its tests: buffer checks (RunBuffers) and helpers such as a buffer type
// that fails allocations on demand.
package backendtest

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/gogml/gogml/backends/cpu"
	"github.com/gogml/gogml/runtime"
)

// BufferOption configures RunBuffers.
type BufferOption func(*bufferConfig)

type bufferConfig struct {
	others   []runtime.BufferType
	large    uint64
	tooLarge uint64
	skipHuge bool
}

// WithOther adds a second buffer type for copies across types, both ways.
// Without it the suite copies to and from the default CPU buffer type.
func WithOther(bt runtime.BufferType) BufferOption {
	return func(c *bufferConfig) { c.others = append(c.others, bt) }
}

// WithLargeSize sets the size of the "large" buffer check (default 48 MiB).
func WithLargeSize(n uint64) BufferOption {
	return func(c *bufferConfig) { c.large = n }
}

// WithTooLarge sets the size that must fail to allocate because it is far
// beyond the device's memory (default 1<<62 bytes).
func WithTooLarge(n uint64) BufferOption {
	return func(c *bufferConfig) { c.tooLarge = n }
}

// WithoutTooLarge skips the allocation-beyond-memory check, for devices
// whose driver misbehaves on absurd sizes.
func WithoutTooLarge() BufferOption {
	return func(c *bufferConfig) { c.skipHuge = true }
}

// RunBuffers checks that bt keeps the buffer contract of
// shared/spec/backend-interface.md: a power-of-two alignment, AllocSize at
// least NBytes, buffers of size 0, 1 and large, set/get round trips at every
// offset and size edge with out-of-bounds errors, memset, clear, copies
// within bt and across other buffer types both ways, views, reset, double
// free, and an allocation beyond the device's memory that fails and leaves
// bt usable. Each check is a subtest.
func RunBuffers(t *testing.T, bt runtime.BufferType, opts ...BufferOption) {
	t.Helper()
	c := bufferConfig{large: 48 << 20, tooLarge: 1 << 62}
	for _, o := range opts {
		o(&c)
	}
	if len(c.others) == 0 {
		c.others = []runtime.BufferType{cpu.DefaultBufferType()}
	}
	if max := bt.MaxSize(); c.large > max {
		c.large = max
	}
	s := &suite{bt: bt, cfg: c}
	t.Run("Alignment", s.alignment)
	t.Run("AllocSize", s.allocSize)
	t.Run("Sizes", s.sizes)
	t.Run("Large", s.largeBuffer)
	t.Run("SetGetEdges", s.setGetEdges)
	t.Run("OutOfBounds", s.outOfBounds)
	t.Run("Memset", s.memset)
	t.Run("Clear", s.clear)
	t.Run("CopySameType", s.copySame)
	for _, o := range c.others {
		t.Run("CopyWith"+o.Name(), func(t *testing.T) { s.copyAcross(t, o) })
	}
	t.Run("Views", s.views)
	t.Run("Reset", s.reset)
	t.Run("Free", s.free)
	t.Run("MaxSize", s.maxSize)
	if !c.skipHuge {
		t.Run("TooLarge", s.tooLarge)
	}
}

type suite struct {
	bt  runtime.BufferType
	cfg bufferConfig
}

// alloc allocates n bytes of bt (or another type) and frees it at cleanup
// unless the test frees it itself.
func alloc(t *testing.T, bt runtime.BufferType, n uint64) runtime.Buffer {
	t.Helper()
	b, err := bt.AllocBuffer(n)
	if err != nil {
		t.Fatalf("%s: AllocBuffer(%d): %v", bt.Name(), n, err)
	}
	if b == nil {
		t.Fatalf("%s: AllocBuffer(%d) returned a nil buffer", bt.Name(), n)
	}
	t.Cleanup(func() { _ = b.Free() })
	return b
}

// newI8 returns an unplaced i8 tensor of n bytes.
func newI8(name string, n int64) *runtime.Tensor {
	x := runtime.NewContext().NewTensor1D(runtime.TypeI8, n)
	x.Name = name
	return x
}

// place allocates t in b at offset.
func place(t *testing.T, b runtime.Buffer, x *runtime.Tensor, offset uint64) *runtime.Tensor {
	t.Helper()
	if err := runtime.TensorAlloc(b, x, offset); err != nil {
		t.Fatalf("TensorAlloc(%s, %q, %d): %v", b.Type().Name(), x.Name, offset, err)
	}
	return x
}

// pattern returns n deterministic pseudo-random bytes.
func pattern(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	p := make([]byte, n+8)
	for i := 0; i < n; i += 8 {
		binary.LittleEndian.PutUint64(p[i:], r.Uint64())
	}
	return p[:n:n]
}

// get reads all of x's bytes.
func get(t *testing.T, x *runtime.Tensor) []byte {
	t.Helper()
	p := make([]byte, x.NBytes())
	if err := runtime.GetTensorData(x, p, 0); err != nil {
		t.Fatalf("get %q: %v", x.Name, err)
	}
	return p
}

// set writes all of x's bytes.
func set(t *testing.T, x *runtime.Tensor, p []byte) {
	t.Helper()
	if err := runtime.SetTensorData(x, p, 0); err != nil {
		t.Fatalf("set %q: %v", x.Name, err)
	}
}

func (s *suite) alignment(t *testing.T) {
	if a := s.bt.Alignment(); !runtime.IsPow2(a) {
		t.Fatalf("Alignment() = %d, not a power of two", a)
	}
	if s.bt.MaxSize() == 0 {
		t.Fatal("MaxSize() = 0")
	}
	if s.bt.Name() == "" {
		t.Fatal("empty Name()")
	}
}

func (s *suite) allocSize(t *testing.T) {
	shapes := [][]int64{{1}, {3}, {7, 5}, {2, 3, 2, 7}, {13, 1, 1, 1}, {1, 1, 1, 9}}
	for _, typ := range runtime.Types() {
		blk := typ.BlockSize()
		for _, sh := range shapes {
			ne := append([]int64(nil), sh...)
			ne[0] *= blk
			ctx := runtime.NewContext()
			x := ctx.NewTensor(typ, ne...)
			xs := []*runtime.Tensor{x}
			if x != nil && len(ne) > 1 && ne[1] > 1 && !typ.IsQuantized() {
				xs = append(xs, ctx.Transpose(x))
			}
			if x != nil && ne[0] > blk {
				xs = append(xs, ctx.View1D(x, blk, typ.Size()))
			}
			if err := ctx.Err(); err != nil {
				t.Fatalf("%s %v: %v", typ, ne, err)
			}
			for _, y := range xs {
				if got, min := s.bt.AllocSize(y), y.NBytes(); got < min {
					t.Errorf("AllocSize(%s %v nb %v) = %d < NBytes %d", typ, y.Ne, y.Nb, got, min)
				}
			}
		}
	}
}

func (s *suite) sizes(t *testing.T) {
	align := s.bt.Alignment()
	for _, n := range []uint64{0, 1, 2, align - 1, align, align + 1, 4096, 65537} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			b := alloc(t, s.bt, n)
			if b.Size() < n {
				t.Fatalf("Size() = %d < %d", b.Size(), n)
			}
			if b.Base() == 0 {
				t.Fatal("Base() = 0")
			}
			if b.Type() == nil || b.Type().Name() != s.bt.Name() {
				t.Fatalf("Type() = %v, want %s", b.Type(), s.bt.Name())
			}
			if err := b.Clear(0x3c); err != nil {
				t.Fatalf("Clear: %v", err)
			}
			b.SetUsage(runtime.UsageCompute)
			if b.Usage() != runtime.UsageCompute {
				t.Fatalf("Usage() = %v after SetUsage(compute)", b.Usage())
			}
			if n == 0 {
				return
			}
			if b.Base()%align != 0 {
				t.Fatalf("Base() = %#x not aligned to %d", b.Base(), align)
			}
			x := place(t, b, newI8("whole", int64(n)), 0)
			if got := get(t, x); !bytes.Equal(got, bytes.Repeat([]byte{0x3c}, int(n))) {
				t.Fatal("Clear(0x3c) not read back")
			}
			want := pattern(n, int(n))
			set(t, x, want)
			if got := get(t, x); !bytes.Equal(got, want) {
				t.Fatal("set/get round trip differs")
			}
			if err := b.Free(); err != nil {
				t.Fatalf("Free: %v", err)
			}
		})
	}
}

func (s *suite) largeBuffer(t *testing.T) {
	n := s.cfg.large
	b := alloc(t, s.bt, n)
	if b.Size() < n {
		t.Fatalf("Size() = %d < %d", b.Size(), n)
	}
	x := place(t, b, newI8("large", int64(n)), 0)
	if err := b.Clear(0xab); err != nil {
		t.Fatal(err)
	}
	win := uint64(4096)
	if win > n {
		win = n
	}
	for _, off := range []uint64{0, n / 3, n - win} {
		p := make([]byte, win)
		if err := b.GetTensor(x, p, off); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(p, bytes.Repeat([]byte{0xab}, int(win))) {
			t.Fatalf("cleared bytes at %d differ", off)
		}
		want := pattern(off, int(win))
		if err := b.SetTensor(x, want, off); err != nil {
			t.Fatal(err)
		}
		if err := b.GetTensor(x, p, off); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(p, want) {
			t.Fatalf("round trip at %d differs", off)
		}
	}
	all := pattern(7, int(n))
	set(t, x, all)
	if !bytes.Equal(get(t, x), all) {
		t.Fatal("whole-buffer round trip differs")
	}
}

// guarded places a tensor of n bytes between two guard tensors, so writes
// past its edges show up.
func (s *suite) guarded(t *testing.T, n uint64) (b runtime.Buffer, before, x, after *runtime.Tensor) {
	t.Helper()
	align := s.bt.Alignment()
	g := runtime.AlignUp(64, align)
	xOff := g
	aOff := runtime.AlignUp(xOff+n, align)
	total := aOff + g
	b = alloc(t, s.bt, total)
	before = place(t, b, newI8("before", int64(g)), 0)
	x = place(t, b, newI8("x", int64(n)), xOff)
	after = place(t, b, newI8("after", int64(g)), aOff)
	set(t, before, bytes.Repeat([]byte{0xee}, int(g)))
	set(t, after, bytes.Repeat([]byte{0xee}, int(g)))
	return b, before, x, after
}

func checkGuards(t *testing.T, before, after *runtime.Tensor) {
	t.Helper()
	for _, g := range []*runtime.Tensor{before, after} {
		if !bytes.Equal(get(t, g), bytes.Repeat([]byte{0xee}, int(g.NBytes()))) {
			t.Fatalf("bytes of guard %q changed", g.Name)
		}
	}
}

// edges returns offsets or sizes around the interesting points of n bytes.
func edges(n, align uint64) []uint64 {
	cands := []uint64{0, 1, 2, 3, align - 1, align, align + 1, n/2 - 1, n / 2, n/2 + 1, n - align, n - 2, n - 1, n}
	seen := map[uint64]bool{}
	var out []uint64
	for _, c := range cands {
		if c <= n && !seen[c] {
			seen[c] = true
			out = append(out, c)
		}
	}
	return out
}

func (s *suite) setGetEdges(t *testing.T) {
	const n = 4096 + 37
	_, before, x, after := s.guarded(t, n)
	ref := pattern(1, n)
	set(t, x, ref)
	for _, off := range edges(n, s.bt.Alignment()) {
		for _, size := range edges(n-off, s.bt.Alignment()) {
			p := pattern(off*n+size, int(size))
			if err := runtime.SetTensorData(x, p, off); err != nil {
				t.Fatalf("set %d bytes at %d: %v", size, off, err)
			}
			copy(ref[off:], p)
			q := make([]byte, size)
			if err := runtime.GetTensorData(x, q, off); err != nil {
				t.Fatalf("get %d bytes at %d: %v", size, off, err)
			}
			if !bytes.Equal(p, q) {
				t.Fatalf("%d bytes at %d: read back differs", size, off)
			}
		}
	}
	if !bytes.Equal(get(t, x), ref) {
		t.Fatal("tensor differs from the writes made")
	}
	checkGuards(t, before, after)
}

func (s *suite) outOfBounds(t *testing.T) {
	const n = 1000
	b, before, x, after := s.guarded(t, n)
	stranger := newI8("stranger", 8)
	type call struct {
		name string
		op   func() error
		want error
	}
	calls := []call{
		{"set past end", func() error { return b.SetTensor(x, make([]byte, 2), n-1) }, runtime.ErrOutOfBounds},
		{"set one too many", func() error { return b.SetTensor(x, make([]byte, n+1), 0) }, runtime.ErrOutOfBounds},
		{"set offset past end", func() error { return b.SetTensor(x, nil, n+1) }, runtime.ErrOutOfBounds},
		{"set offset overflow", func() error { return b.SetTensor(x, make([]byte, 1), 1<<64-1) }, runtime.ErrOutOfBounds},
		{"get past end", func() error { return b.GetTensor(x, make([]byte, 1), n) }, runtime.ErrOutOfBounds},
		{"get one too many", func() error { return b.GetTensor(x, make([]byte, n+1), 0) }, runtime.ErrOutOfBounds},
		{"get offset overflow", func() error { return b.GetTensor(x, make([]byte, 2), 1<<64-1) }, runtime.ErrOutOfBounds},
		{"memset past end", func() error { return b.MemsetTensor(x, 1, n-10, 11) }, runtime.ErrOutOfBounds},
		{"memset size overflow", func() error { return b.MemsetTensor(x, 1, 2, 1<<64-1) }, runtime.ErrOutOfBounds},
		{"set stranger", func() error { return b.SetTensor(stranger, make([]byte, 1), 0) }, runtime.ErrNotAllocated},
		{"get stranger", func() error { return b.GetTensor(stranger, make([]byte, 1), 0) }, runtime.ErrNotAllocated},
		{"tensor past buffer", func() error {
			return runtime.TensorAlloc(b, newI8("big", int64(b.Size())+1), 0)
		}, runtime.ErrOutOfBounds},
	}
	for _, c := range calls {
		if err := c.op(); !errors.Is(err, c.want) {
			t.Errorf("%s: err = %v, want %v", c.name, err, c.want)
		}
	}
	for _, ok := range []call{
		{"set empty at end", func() error { return b.SetTensor(x, nil, n) }, nil},
		{"get empty at end", func() error { return b.GetTensor(x, nil, n) }, nil},
		{"memset empty at end", func() error { return b.MemsetTensor(x, 1, n, 0) }, nil},
	} {
		if err := ok.op(); err != nil {
			t.Errorf("%s: %v", ok.name, err)
		}
	}
	checkGuards(t, before, after)
}

func (s *suite) memset(t *testing.T) {
	const n = 3000
	b, before, x, after := s.guarded(t, n)
	ref := pattern(2, n)
	set(t, x, ref)
	for i, r := range [][2]uint64{{0, 0}, {0, 1}, {0, n}, {1, 2}, {n - 1, 1}, {17, 1234}, {n / 2, n / 2}} {
		v := byte(0x10 + i)
		if err := b.MemsetTensor(x, v, r[0], r[1]); err != nil {
			t.Fatalf("memset [%d,+%d): %v", r[0], r[1], err)
		}
		for j := r[0]; j < r[0]+r[1]; j++ {
			ref[j] = v
		}
		if !bytes.Equal(get(t, x), ref) {
			t.Fatalf("after memset [%d,+%d) = %#x: bytes differ", r[0], r[1], v)
		}
	}
	checkGuards(t, before, after)
}

func (s *suite) clear(t *testing.T) {
	b, before, x, after := s.guarded(t, 5000)
	for _, v := range []byte{0, 0xff, 0x5a} {
		if err := b.Clear(v); err != nil {
			t.Fatal(err)
		}
		for _, y := range []*runtime.Tensor{before, x, after} {
			if !bytes.Equal(get(t, y), bytes.Repeat([]byte{v}, int(y.NBytes()))) {
				t.Fatalf("Clear(%#x): %q not filled", v, y.Name)
			}
		}
	}
}

// copyBetween copies a tensor of n bytes from a buffer of src to one of dst
// through runtime.CopyTensorData and both buffers' CopyTensor, checking the
// bytes and that nothing else changed.
func copyBetween(t *testing.T, srcT, dstT runtime.BufferType) {
	t.Helper()
	const n = 12345
	for _, via := range []string{"CopyTensorData", "dst.CopyTensor", "src.CopyTensor"} {
		t.Run(via, func(t *testing.T) {
			sb := alloc(t, srcT, runtime.AlignUp(n, srcT.Alignment())+srcT.Alignment())
			db := alloc(t, dstT, 2*runtime.AlignUp(n, dstT.Alignment())+dstT.Alignment())
			src := place(t, sb, newI8("src", n), srcT.Alignment())
			dst := place(t, db, newI8("dst", n), runtime.AlignUp(n, dstT.Alignment()))
			if err := db.Clear(0x77); err != nil {
				t.Fatal(err)
			}
			want := pattern(uint64(len(via)), n)
			set(t, src, want)
			switch via {
			case "CopyTensorData":
				if err := runtime.CopyTensorData(src, dst); err != nil {
					t.Fatal(err)
				}
			case "dst.CopyTensor", "src.CopyTensor":
				buf := db
				if via == "src.CopyTensor" {
					buf = sb
				}
				ok, err := buf.CopyTensor(src, dst)
				if err != nil {
					t.Fatalf("%s: %v", via, err)
				}
				if !ok {
					t.Skipf("%s not handled by %s (host fallback is covered by CopyTensorData)", via, buf.Type().Name())
				}
			}
			if !bytes.Equal(get(t, dst), want) {
				t.Fatal("copied bytes differ")
			}
			if !bytes.Equal(get(t, src), want) {
				t.Fatal("source changed")
			}
			front := newI8("front", int64(dst.Offset))
			place(t, db, front, 0)
			if !bytes.Equal(get(t, front), bytes.Repeat([]byte{0x77}, int(dst.Offset))) {
				t.Fatal("bytes before the destination changed")
			}
		})
	}
	t.Run("SizeMismatch", func(t *testing.T) {
		sb := alloc(t, srcT, 256)
		db := alloc(t, dstT, 256)
		src := place(t, sb, newI8("src", 100), 0)
		dst := place(t, db, newI8("dst", 99), 0)
		if err := runtime.CopyTensorData(src, dst); !errors.Is(err, runtime.ErrShape) {
			t.Fatalf("copy of 100 into 99 bytes: %v, want ErrShape", err)
		}
	})
}

func (s *suite) copySame(t *testing.T) { copyBetween(t, s.bt, s.bt) }

func (s *suite) copyAcross(t *testing.T, other runtime.BufferType) {
	t.Run("To", func(t *testing.T) { copyBetween(t, s.bt, other) })
	t.Run("From", func(t *testing.T) { copyBetween(t, other, s.bt) })
}

func (s *suite) views(t *testing.T) {
	b := alloc(t, s.bt, runtime.AlignUp(100, s.bt.Alignment())+512)
	ctx := runtime.NewContext()
	m := ctx.NewTensor2D(runtime.TypeF32, 16, 8) // 512 bytes, row stride 64
	m.Name = "m"
	row3 := ctx.View1D(m, 16, 3*64)
	col := ctx.View2D(m, 1, 8, 64, 5*4) // column 5
	tr := ctx.Transpose(m)
	whole := ctx.ViewTensor(m)
	if err := ctx.Err(); err != nil {
		t.Fatal(err)
	}
	place(t, b, m, runtime.AlignUp(100, s.bt.Alignment()))
	for _, v := range []*runtime.Tensor{row3, col, tr, whole} {
		if err := runtime.ViewInit(v); err != nil {
			t.Fatalf("ViewInit(%q): %v", v.Name, err)
		}
		if v.Buffer != b || v.Offset != m.Offset+v.ViewOffs {
			t.Fatalf("view %q at (%v, %d), want (%v, %d)", v.Name, v.Buffer, v.Offset, b, m.Offset+v.ViewOffs)
		}
	}
	base := pattern(3, 512)
	set(t, m, base)
	// Reading a view reads the base's bytes from its offset.
	if got := get(t, row3); !bytes.Equal(got, base[3*64:4*64]) {
		t.Fatal("row view reads wrong bytes")
	}
	if got := get(t, whole); !bytes.Equal(got, base) {
		t.Fatal("whole view reads wrong bytes")
	}
	// The column view spans from its first to its last element.
	if got := get(t, col); !bytes.Equal(got, base[20:20+col.NBytes()]) {
		t.Fatal("column view reads wrong bytes")
	}
	// Writing through a view changes the base.
	p := pattern(4, 64)
	set(t, row3, p)
	copy(base[3*64:], p)
	if !bytes.Equal(get(t, m), base) {
		t.Fatal("write through row view not seen in base")
	}
	if err := b.MemsetTensor(col, 0, 0, 4); err != nil {
		t.Fatal(err)
	}
	clear(base[20:24])
	if !bytes.Equal(get(t, m), base) {
		t.Fatal("memset through column view not seen in base")
	}
	// A view of an unplaced base cannot be bound.
	ctx2 := runtime.NewContext()
	u := ctx2.NewTensor1D(runtime.TypeF32, 8)
	uv := ctx2.View1D(u, 4, 0)
	if err := runtime.ViewInit(uv); !errors.Is(err, runtime.ErrNotAllocated) {
		t.Fatalf("view of unplaced base: %v", err)
	}
}

func (s *suite) reset(t *testing.T) {
	b := alloc(t, s.bt, runtime.AlignUp(400, s.bt.Alignment())+300)
	x := place(t, b, newI8("x", 300), 0)
	want := pattern(5, 300)
	set(t, x, want)
	b.Reset()
	// Tensors are placed again after a reset, as allocators do.
	x.Buffer, x.Offset, x.Extra = nil, 0, nil
	place(t, b, x, 0)
	y := place(t, b, newI8("y", 300), runtime.AlignUp(400, s.bt.Alignment()))
	set(t, y, want)
	if !bytes.Equal(get(t, y), want) {
		t.Fatal("round trip after Reset differs")
	}
	if err := b.Clear(1); err != nil {
		t.Fatalf("Clear after Reset: %v", err)
	}
}

func (s *suite) free(t *testing.T) {
	for _, n := range []uint64{0, 1, 4096} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			b, err := s.bt.AllocBuffer(n)
			if err != nil {
				t.Fatal(err)
			}
			var x *runtime.Tensor
			if n > 0 {
				x = place(t, b, newI8("x", int64(n)), 0)
			}
			if err := b.Free(); err != nil {
				t.Fatalf("first Free: %v", err)
			}
			if err := b.Free(); !errors.Is(err, runtime.ErrFreed) {
				t.Fatalf("second Free: %v, want ErrFreed", err)
			}
			if err := b.Clear(0); !errors.Is(err, runtime.ErrFreed) {
				t.Errorf("Clear after Free: %v, want ErrFreed", err)
			}
			if x == nil {
				return
			}
			if err := b.SetTensor(x, []byte{1}, 0); !errors.Is(err, runtime.ErrFreed) {
				t.Errorf("SetTensor after Free: %v, want ErrFreed", err)
			}
			if err := b.GetTensor(x, []byte{1}, 0); !errors.Is(err, runtime.ErrFreed) {
				t.Errorf("GetTensor after Free: %v, want ErrFreed", err)
			}
			if err := b.MemsetTensor(x, 1, 0, 1); !errors.Is(err, runtime.ErrFreed) {
				t.Errorf("MemsetTensor after Free: %v, want ErrFreed", err)
			}
		})
	}
}

func (s *suite) maxSize(t *testing.T) {
	max := s.bt.MaxSize()
	if max == runtime.NoMaxSize || max > 1<<40 {
		t.Skip("no small max size")
	}
	b, err := s.bt.AllocBuffer(max + 1)
	if err == nil {
		_ = b.Free()
		t.Fatalf("AllocBuffer(MaxSize+1 = %d) succeeded", max+1)
	}
}

func (s *suite) tooLarge(t *testing.T) {
	n := s.cfg.tooLarge
	b, err := s.bt.AllocBuffer(n)
	if err == nil {
		_ = b.Free()
		t.Fatalf("AllocBuffer(%d) succeeded", n)
	}
	if !errors.Is(err, runtime.ErrOutOfMemory) {
		t.Errorf("AllocBuffer(%d): %v, want an error wrapping ErrOutOfMemory", n, err)
	}
	// The type is still usable.
	small := alloc(t, s.bt, 4096)
	x := place(t, small, newI8("after", 4096), 0)
	want := pattern(6, 4096)
	set(t, x, want)
	if !bytes.Equal(get(t, x), want) {
		t.Fatal("round trip after a failed allocation differs")
	}
}
