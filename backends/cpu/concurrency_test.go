package cpu_test

import (
	"errors"
	"sync"
	"testing"

	"github.com/gogml/gogml/backends/cpu"
	"github.com/gogml/gogml/gallocr"
	"github.com/gogml/gogml/runtime"
)

// chainGraph builds a chain of n ADDs of 64k-element f32 tensors, with
// every tensor placed in one buffer of bt.
func chainGraph(t *testing.T, bt runtime.BufferType, n int) (*runtime.Graph, runtime.Buffer) {
	t.Helper()
	c := runtime.NewContext()
	x := c.NewTensor1D(runtime.TypeF32, 1<<16)
	y := x
	for range n {
		y = c.Add(y, x)
	}
	g := runtime.NewGraph()
	if err := g.BuildForwardExpand(y); err != nil {
		t.Fatal(err)
	}
	buf, err := gallocr.AllocCtxTensors(c, bt)
	if err != nil {
		t.Fatal(err)
	}
	return g, buf
}

// TestConcurrentCloseComputeFree runs Computes on several goroutines while
// others close the backend and free its buffer: every call returns nil,
// ErrClosed or runtime.ErrFreed, nothing faults, and (under -race) nothing
// races. Close used to write the fields a running Compute reads, and Free
// used to unmap memory a running node read.
func TestConcurrentCloseComputeFree(t *testing.T) {
	for _, order := range []string{"close-first", "free-first"} {
		t.Run(order, func(t *testing.T) {
			for round := 0; round < 8; round++ {
				be := cpu.NewBackend(cpu.BackendOptions{Threads: 4})
				g, buf := chainGraph(t, be.DefaultBufferType(), 64)
				var wg sync.WaitGroup
				errs := make(chan error, 16)
				start := make(chan struct{})
				for range 3 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						<-start
						for {
							err := be.Compute(g)
							if err == nil {
								continue
							}
							if !errors.Is(err, cpu.ErrClosed) && !errors.Is(err, runtime.ErrFreed) {
								errs <- err
							}
							return
						}
					}()
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					be.SetThreads(2)
					_ = be.Threads()
					_ = be.Device()
				}()
				close(start)
				steps := []func() error{be.Close, buf.Free}
				if order == "free-first" {
					steps[0], steps[1] = steps[1], steps[0]
				}
				for _, f := range steps {
					if err := f(); err != nil {
						t.Fatal(err)
					}
				}
				wg.Wait()
				close(errs)
				for err := range errs {
					t.Errorf("Compute: %v, want nil, ErrClosed or ErrFreed", err)
				}
				if err := be.Compute(g); !errors.Is(err, cpu.ErrClosed) {
					t.Fatalf("Compute after Close = %v, want ErrClosed", err)
				}
			}
		})
	}
}

// TestThreadsCapped: a huge thread count is lowered to MaxThreads instead
// of starting a goroutine per requested thread.
func TestThreadsCapped(t *testing.T) {
	be := cpu.NewBackend(cpu.BackendOptions{Threads: 1_000_000})
	defer be.Close()
	if got := be.Threads(); got != cpu.MaxThreads {
		t.Fatalf("Threads() = %d, want %d", got, cpu.MaxThreads)
	}
}
