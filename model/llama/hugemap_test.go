package llama

import (
	"os"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/gogml/gogml/runtime"
)

// TestSmallPagedF16: an f16 weight matrix moves off the mapping when any
// of its bytes before the limit lies in a range without huge pages, or
// when that is not known; other tensors never do by this rule.
func TestSmallPagedF16(t *testing.T) {
	ctx := runtime.NewContext()
	f16 := ctx.NewTensor(runtime.TypeF16, 256, 8) // 4096 bytes
	small := [][2]uint64{{0, 100}, {8192, 9000}, {20000, 30000}}
	for _, tc := range []struct {
		name  string
		t     *runtime.Tensor
		off   uint64
		known bool
		want  bool
	}{
		{"in a small range", f16, 20000, true, true},
		{"overlapping one's end", f16, 5000, true, true}, // 5000..9096 meets 8192..9000
		{"overlapping one's start", f16, 16000, true, true},
		{"between ranges", f16, 100, true, false},
		{"ending where one starts", f16, 4096, true, false},
		{"past the last", f16, 30000, true, false},
		{"nothing known", f16, 100, false, true},
		{"small past the limit only", f16, 17000, true, false}, // 20000.. lies past limit 20000

		{"q8_0", ctx.NewTensor(runtime.TypeQ8_0, 256, 8), 20000, true, false},
		{"f32", ctx.NewTensor(runtime.TypeF32, 256, 8), 20000, true, false},
		{"three rows", ctx.NewTensor(runtime.TypeF16, 256, 3), 20000, true, false},
		{"3-D", ctx.NewTensor(runtime.TypeF16, 256, 4, 2), 20000, true, false},
		{"view", ctx.View2D(f16, 256, 4, f16.Nb[1], 0), 20000, true, false},
	} {
		limit := uint64(1 << 30)
		if tc.name == "small past the limit only" {
			limit = 20000
		}
		if got := smallPagedF16(tc.t, tc.off, small, tc.known, limit); got != tc.want {
			t.Errorf("%s: smallPagedF16 = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestSmallPages: memory mapped 4 KiB at a time is one small range;
// populated anonymous memory with transparent huge pages has none where
// the kernel gave it huge pages.
func TestSmallPages(t *testing.T) {
	const size = 8 << 20
	for _, huge := range []bool{false, true} {
		mem, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
		if err != nil {
			t.Fatal(err)
		}
		defer unix.Munmap(mem)
		advice := unix.MADV_NOHUGEPAGE
		if huge {
			advice = unix.MADV_HUGEPAGE
		}
		if err := unix.Madvise(mem, advice); err != nil {
			t.Skip(err)
		}
		for i := 0; i < size; i += os.Getpagesize() {
			mem[i] = 1
		}
		b := mem[100 : size-100]
		small, ok := smallPages(b)
		if !ok {
			t.Skip("the kernel does not say how memory is mapped (PAGEMAP_SCAN, Linux 6.7)")
		}
		var n uint64
		for _, r := range small {
			if r[0] >= r[1] || r[1] > uint64(len(b)) {
				t.Fatalf("huge %v: range %v outside %d bytes", huge, r, len(b))
			}
			n += r[1] - r[0]
		}
		switch {
		case !huge && (len(small) != 1 || n != uint64(len(b))):
			t.Errorf("4 KiB pages: small ranges %v, want all %d bytes", small, len(b))
		case huge && n == uint64(len(b)):
			t.Logf("no huge pages given (%v): nothing to check", small)
		case huge && n > 4<<20:
			t.Errorf("huge pages: %d of %d bytes small", n, len(b))
		}
	}
}
