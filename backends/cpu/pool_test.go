package cpu

import (
	"errors"
	goruntime "runtime"
	"sync/atomic"
	"testing"
	"time"
)

// waitGoroutines polls until the process has at most n goroutines.
func waitGoroutines(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for goruntime.NumGoroutine() > n {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			t.Fatalf("%d goroutines, want at most %d:\n%s", goruntime.NumGoroutine(), n, buf[:goruntime.Stack(buf, true)])
		}
		goruntime.GC()
		time.Sleep(time.Millisecond)
	}
}

func TestWorkerPoolRun(t *testing.T) {
	errA, errB := errors.New("a"), errors.New("b")
	for _, size := range []int{1, 2, 3, 8} {
		p := newWorkerPool(size)
		for round := 0; round < 200; round++ {
			nth := 1 + round%(size+1)
			var hits [16]atomic.Int32
			err := p.run(nth, func(ith, n int) error {
				if n != min(nth, size) {
					t.Errorf("nth %d, want %d", n, min(nth, size))
				}
				hits[ith].Add(1)
				if round%7 == 0 && ith == n-1 && n > 1 {
					return errB
				}
				if round%11 == 0 && ith == 0 {
					return errA
				}
				return nil
			})
			for i := range hits {
				want := int32(0)
				if i < min(nth, size) {
					want = 1
				}
				if got := hits[i].Load(); got != want {
					t.Fatalf("size %d round %d: worker %d ran %d times, want %d", size, round, i, got, want)
				}
			}
			switch {
			case round%11 == 0:
				if err != errA {
					t.Fatalf("round %d: err %v, want %v", round, err, errA)
				}
			case round%7 == 0 && min(nth, size) > 1:
				if err != errB {
					t.Fatalf("round %d: err %v, want %v", round, err, errB)
				}
			case err != nil:
				t.Fatalf("round %d: %v", round, err)
			}
			if round%50 == 0 {
				time.Sleep(2 * spinFor) // let the workers park
			}
		}
		p.stop()
		p.stop()
		if err := p.run(size, func(ith, n int) error {
			if n != 1 {
				t.Errorf("stopped pool ran with %d workers", n)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestBackendNoGoroutineLeak: Close, SetThreads and dropping a Backend
// without Close all end its workers.
func TestBackendNoGoroutineLeak(t *testing.T) {
	base := goruntime.NumGoroutine()
	busy := func(b *Backend) {
		sp := b.scratch // as the kernels' jobs do
		sp.prepare(b.Threads())
		if err := b.pool.run(b.Threads(), func(ith, _ int) error { sp.get(ith, 1); return nil }); err != nil {
			t.Fatal(err)
		}
	}
	b := NewBackend(BackendOptions{Threads: 4})
	busy(b)
	if goruntime.NumGoroutine() < base+3 {
		t.Fatalf("%d goroutines after a run on 4 workers, started with %d", goruntime.NumGoroutine(), base)
	}
	b.SetThreads(3)
	busy(b)
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	waitGoroutines(t, base)

	for i := 0; i < 3; i++ {
		d := NewBackend(BackendOptions{Threads: 3})
		busy(d)
	}
	waitGoroutines(t, base)
}

// TestWorkerPoolStopDuringRuns: a stop from another goroutine while runs
// go on ends the workers without losing a run's work.
func TestWorkerPoolStopDuringRuns(t *testing.T) {
	base := goruntime.NumGoroutine()
	for rep := 0; rep < 20; rep++ {
		p := newWorkerPool(3)
		done := make(chan struct{})
		go func() {
			defer close(done)
			for i := 0; i < 200; i++ {
				var hits atomic.Int32
				if err := p.run(3, func(int, int) error { hits.Add(1); return nil }); err != nil {
					t.Error(err)
				}
				if got := hits.Load(); got != 3 && got != 1 {
					t.Errorf("run %d: %d workers ran", i, got)
				}
			}
		}()
		time.Sleep(time.Duration(rep) * 20 * time.Microsecond)
		p.stop()
		<-done
	}
	waitGoroutines(t, base)
}
