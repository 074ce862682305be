package cuda

import (
	"testing"

	"github.com/gogml/gogml/membench"
)

// TestEmulatedMembenchTarget checks the CUDA0 membench target on the
// emulated device: it names CUDA0, asks for copies with the CUDA_Host
// target by that target's own name, and hands out pinned memory of the
// size asked.
func TestEmulatedMembenchTarget(t *testing.T) {
	b := newEmuBackend(t)
	dev := &deviceTarget{b: b}
	host := membench.NewTarget("", b.HostBufferType())
	if got := dev.Name(); got != "CUDA0" {
		t.Fatalf("Name = %q, want CUDA0", got)
	}
	if got := dev.Peers(); len(got) != 1 || got[0] != host.Name() {
		t.Fatalf("Peers = %q, want [%q]", got, host.Name())
	}
	mem, free, err := dev.AllocPinned(4096)
	if err != nil {
		t.Fatal(err)
	}
	if len(mem) != 4096 {
		t.Errorf("AllocPinned(4096) gave %d bytes", len(mem))
	}
	if err := free(); err != nil {
		t.Fatal(err)
	}
}
