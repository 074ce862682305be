package cpu_test

import (
	"strconv"
	"testing"

	"github.com/gogml/gogml/backends/backendtest"
	"github.com/gogml/gogml/backends/cpu"
)

// TestBackendConformance runs the shared suite (buffers, then every op)
// on the CPU backend with more workers than cores, every node split across
// all of them (so row splitting, uneven parts and empty shares are
// exercised), and again single-threaded on a reduced table.
func TestBackendConformance(t *testing.T) {
	for _, threads := range []int{3, 1} {
		be := cpu.NewBackend(cpu.BackendOptions{Threads: threads})
		cpu.SplitEverything(be)
		t.Run("threads"+strconv.Itoa(threads), func(t *testing.T) {
			var opts []backendtest.OpOption
			if threads == 1 || raceEnabled {
				opts = append(opts, backendtest.Reduced())
			}
			backendtest.Run(t, be, opts...)
		})
		if err := be.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
