package cpu

import (
	goruntime "runtime"
	"sync"
	"sync/atomic"
	"time"
)

// workerPool is a backend's set of persistent worker goroutines. The
// goroutine that calls run is worker 0; goroutines 1..size-1 are started
// on the first run that needs them and live until stop.
//
// Dispatch is lock-free: run publishes an immutable job through an atomic
// pointer and waits for a countdown to reach zero. Idle workers spin for a
// short while (a graph's next node usually follows within microseconds),
// yielding to the scheduler as they do, then park on a channel, so an idle
// backend burns no CPU. The sleeping flags make every wake-up token
// matched by exactly one receive: whoever wins the flag's compare-and-swap
// from true to false decides whether a token is sent.
//
// run and stop may be called from any goroutine (a mutex orders them);
// stop may be called more than once.
type workerPool struct {
	size int  // worker count including the caller
	spin bool // busy-poll before parking: every worker can have its own P

	mu sync.Mutex // held by run and stop: a stop never interleaves a run

	startOnce sync.Once
	workers   []*poolWorker
	exited    sync.WaitGroup

	cur     atomic.Pointer[poolJob] // the latest job
	pending atomic.Int32            // workers of the current job still running
	errs    []error                 // errs[i]: worker i's error for the current job

	waiting atomic.Bool   // the caller is parked on done
	done    chan struct{} // token for the parked caller

	stopped atomic.Bool
}

// poolJob is one dispatch: f(ith, nth) runs for ith in [0, nth). A job
// with stop set ends the workers.
type poolJob struct {
	f    func(ith, nth int) error
	nth  int
	stop bool
}

type poolWorker struct {
	sleeping atomic.Bool
	wake     chan struct{}
}

// spinFor is how long an idle worker (or the waiting caller) polls before
// parking: long enough to bridge the gap between the Computes of
// consecutive tokens of a small model (graph building, about 0.1 ms),
// short enough that an idle backend costs nothing measurable.
const spinFor = 200 * time.Microsecond

func newWorkerPool(size int) *workerPool {
	size = max(size, 1)
	return &workerPool{size: size, spin: size <= goruntime.GOMAXPROCS(0), done: make(chan struct{}, 1)}
}

func (p *workerPool) start() {
	p.startOnce.Do(func() {
		p.errs = make([]error, p.size)
		p.workers = make([]*poolWorker, p.size)
		first := &poolJob{}
		p.cur.Store(first)
		for i := 1; i < p.size; i++ {
			w := &poolWorker{wake: make(chan struct{}, 1)}
			p.workers[i] = w
			p.exited.Add(1)
			go p.loop(i, w, first)
		}
	})
}

// loop is worker i's life: wait for a job newer than seen, run its share.
func (p *workerPool) loop(i int, w *poolWorker, seen *poolJob) {
	defer p.exited.Done()
	for {
		j := p.next(w, seen)
		seen = j
		if j.stop {
			return
		}
		if i >= j.nth {
			continue
		}
		p.errs[i] = j.f(i, j.nth)
		if p.pending.Add(-1) == 0 && p.waiting.CompareAndSwap(true, false) {
			p.done <- struct{}{}
		}
	}
}

// next returns the first job after seen, spinning briefly then parking.
func (p *workerPool) next(w *poolWorker, seen *poolJob) *poolJob {
	if p.spin {
		var t0 time.Time
		for n := 0; ; n++ {
			if j := p.cur.Load(); j != seen {
				return j
			}
			if n&63 == 63 {
				if t0.IsZero() {
					t0 = time.Now()
				} else if time.Since(t0) > spinFor {
					break
				}
				goruntime.Gosched()
			}
		}
	}
	w.sleeping.Store(true)
	if j := p.cur.Load(); j != seen {
		if w.sleeping.CompareAndSwap(true, false) {
			return j
		}
		<-w.wake // run took the flag and is sending
		return p.cur.Load()
	}
	<-w.wake
	return p.cur.Load()
}

// wakeWorker hands worker i a wake-up token if it is parked.
func (p *workerPool) wakeWorker(i int) {
	if w := p.workers[i]; w.sleeping.CompareAndSwap(true, false) {
		w.wake <- struct{}{}
	}
}

// run runs f(ith, nth) for ith in [0, nth) (nth capped at the pool size),
// the caller taking ith 0, and returns the lowest-numbered worker's error.
func (p *workerPool) run(nth int, f func(ith, nth int) error) error {
	nth = min(nth, p.size)
	if nth <= 1 {
		return f(0, 1)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped.Load() {
		return f(0, 1)
	}
	p.start()
	p.pending.Store(int32(nth - 1))
	p.cur.Store(&poolJob{f: f, nth: nth})
	for i := 1; i < nth; i++ {
		p.wakeWorker(i)
	}
	err0 := f(0, nth)
	p.wait()
	if err0 != nil {
		return err0
	}
	for i := 1; i < nth; i++ {
		if err := p.errs[i]; err != nil {
			p.errs[i] = nil
			return err
		}
	}
	return nil
}

// wait returns once every worker of the current job is done.
func (p *workerPool) wait() {
	if p.pending.Load() == 0 {
		return
	}
	if p.spin {
		var t0 time.Time
		for n := 0; ; n++ {
			if p.pending.Load() == 0 {
				return
			}
			if n&63 == 63 {
				if t0.IsZero() {
					t0 = time.Now()
				} else if time.Since(t0) > spinFor {
					break
				}
				goruntime.Gosched()
			}
		}
	}
	p.waiting.Store(true)
	if p.pending.Load() == 0 && p.waiting.CompareAndSwap(true, false) {
		return
	}
	<-p.done
}

// stop ends the workers and waits for them to exit. Later runs execute on
// the caller alone.
func (p *workerPool) stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped.Swap(true) {
		return
	}
	started := false
	p.startOnce.Do(func() {}) // no workers will start after this
	if len(p.workers) > 0 {
		started = true
	}
	if !started {
		return
	}
	p.cur.Store(&poolJob{stop: true})
	for i := 1; i < p.size; i++ {
		p.wakeWorker(i)
	}
	p.exited.Wait()
}
