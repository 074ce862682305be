package backendtest

import (
	"errors"
	"testing"

	"github.com/gogml/gogml/backends/cpu"
	"github.com/gogml/gogml/runtime"
)

func TestFailingBufferType(t *testing.T) {
	tests := []struct {
		name  string
		opts  FailingOptions
		sizes []uint64
		fails []bool
	}{
		{"never", FailingOptions{FailAfter: Never}, []uint64{1, 2, 3}, []bool{false, false, false}},
		{"after 2", FailingOptions{FailAfter: 2}, []uint64{1, 2, 3, 4}, []bool{false, false, true, true}},
		{"after 0", FailingOptions{FailAfter: 0}, []uint64{1}, []bool{true}},
		{"above 100", FailingOptions{FailAfter: Never, FailAbove: 100}, []uint64{100, 101, 0, 5000}, []bool{false, true, false, true}},
		{"both", FailingOptions{FailAfter: 1, FailAbove: 10}, []uint64{11, 10, 1}, []bool{true, false, true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			inner := cpu.DefaultBufferType()
			f := NewFailing(inner, tc.opts)
			wantFail := 0
			for i, size := range tc.sizes {
				b, err := f.AllocBuffer(size)
				if tc.fails[i] {
					wantFail++
					if !errors.Is(err, ErrInjected) || !errors.Is(err, runtime.ErrOutOfMemory) {
						t.Fatalf("alloc %d (%d bytes): %v, want injected OOM", i, size, err)
					}
					continue
				}
				if err != nil {
					t.Fatalf("alloc %d (%d bytes): %v", i, size, err)
				}
				if b.Type() != runtime.BufferType(inner) || b.Size() != size {
					t.Fatalf("alloc %d: type %v size %d", i, b.Type(), b.Size())
				}
				if err := b.Free(); err != nil {
					t.Fatal(err)
				}
			}
			if f.Failures() != wantFail || f.Allocs() != len(tc.sizes)-wantFail {
				t.Fatalf("allocs %d failures %d", f.Allocs(), f.Failures())
			}
			if f.Name() != inner.Name() || f.Alignment() != inner.Alignment() || !f.IsHost() {
				t.Fatal("wrapper does not forward the type's properties")
			}
		})
	}
	f := NewFailing(cpu.DefaultBufferType(), FailingOptions{FailAfter: 0})
	f.SetOptions(FailingOptions{FailAfter: Never})
	b, err := f.AllocBuffer(8)
	if err != nil {
		t.Fatalf("after SetOptions: %v", err)
	}
	_ = b.Free()
}
