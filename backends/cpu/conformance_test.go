package cpu_test

import (
	"errors"
	"strconv"
	"testing"

	"github.com/gogml/gogml/backends/backendtest"
	"github.com/gogml/gogml/backends/cpu"
)

// TestBufferConformance runs the shared buffer suite on each flavour of
// host memory, copying across flavours.
func TestBufferConformance(t *testing.T) {
	plain := cpu.DefaultBufferType()
	types := []cpu.BufferTypeOptions{
		{},
		{Alignment: 1},
		{Alignment: 4096},
		{Alignment: 64, MaxSize: 1 << 20, Name: "CPU_Max1MiB"},
		{HugePages: true},
		{Locked: true},
	}
	for _, o := range types {
		bt, err := cpu.NewBufferType(o)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(bt.Name()+"/align"+strconv.FormatUint(bt.Alignment(), 10), func(t *testing.T) {
			if o.Locked {
				// Skip where the locked-memory limit forbids the sizes used.
				b, err := bt.AllocBuffer(48 << 20)
				if errors.Is(err, cpu.ErrMemlockLimit) {
					t.Skipf("locked memory: %v", err)
				}
				if err != nil {
					t.Fatal(err)
				}
				_ = b.Free()
			}
			backendtest.RunBuffers(t, bt, backendtest.WithOther(plain))
		})
	}
}
