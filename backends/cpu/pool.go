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
// Each worker has a one-slot job channel: run hands the job to exactly the
// workers it needs, so every job is received once by each of them, and
// waits for the job's own countdown. Idle workers poll their channel for a
// short while (a graph's next node usually follows within microseconds),
// yielding to the scheduler as they do, then block on it, so an idle
// backend burns no CPU. The completion handshake lives in the job, so a
// worker finishing one job can never signal the caller of the next.
//
// run and stop may be called from any goroutine (a mutex orders them);
// stop may be called more than once.
type workerPool struct {
	size int  // worker count including the caller
	spin bool // poll before blocking: every worker can have its own P

	mu sync.Mutex // held by run and stop: a stop never interleaves a run

	startOnce sync.Once
	workers   []chan *poolJob // workers[i]: worker i's job slot (i >= 1)
	exited    sync.WaitGroup
	errs      []error // errs[i]: worker i's error for the current job

	stopped atomic.Bool
}

// poolJob is one dispatch: f(ith, nth) runs for ith in [0, nth). A job
// with stop set ends the workers.
type poolJob struct {
	f    func(ith, nth int) error
	nth  int
	stop bool

	pending atomic.Int32  // workers 1..nth-1 still running
	waiting atomic.Bool   // the caller is blocked on done
	done    chan struct{} // token for the blocked caller
}

// spinFor is how long an idle worker (or the waiting caller) polls before
// blocking: long enough to bridge the gap between the Computes of
// consecutive tokens of a small model (graph building, about 0.1 ms),
// short enough that an idle backend costs nothing measurable.
const spinFor = 200 * time.Microsecond

func newWorkerPool(size int) *workerPool {
	size = max(size, 1)
	return &workerPool{size: size, spin: size <= goruntime.GOMAXPROCS(0)}
}

func (p *workerPool) start() {
	p.startOnce.Do(func() {
		p.errs = make([]error, p.size)
		p.workers = make([]chan *poolJob, p.size)
		for i := 1; i < p.size; i++ {
			jobs := make(chan *poolJob, 1)
			p.workers[i] = jobs
			p.exited.Add(1)
			go p.loop(i, jobs)
		}
	})
}

// loop is worker i's life: receive a job, run its share, count down.
func (p *workerPool) loop(i int, jobs chan *poolJob) {
	defer p.exited.Done()
	for {
		j := p.receive(jobs)
		if j.stop {
			return
		}
		p.errs[i] = j.f(i, j.nth)
		if j.pending.Add(-1) == 0 && j.waiting.CompareAndSwap(true, false) {
			j.done <- struct{}{}
		}
	}
}

// poll calls ready until it reports true or spinFor has passed, yielding
// to the scheduler every 64 calls, and reports whether ready did.
func poll(ready func() bool) bool {
	var t0 time.Time
	for n := 0; ; n++ {
		if ready() {
			return true
		}
		if n&63 == 63 {
			if t0.IsZero() {
				t0 = time.Now()
			} else if time.Since(t0) > spinFor {
				return false
			}
			goruntime.Gosched()
		}
	}
}

// receive returns the worker's next job, polling briefly, then blocking.
func (p *workerPool) receive(jobs chan *poolJob) *poolJob {
	var j *poolJob
	if p.spin && poll(func() bool {
		select {
		case j = <-jobs:
			return true
		default:
			return false
		}
	}) {
		return j
	}
	return <-jobs
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
	job := &poolJob{f: f, nth: nth, done: make(chan struct{}, 1)}
	job.pending.Store(int32(nth - 1))
	for i := 1; i < nth; i++ {
		p.workers[i] <- job // the slot is empty: the last run waited for its workers
	}
	err0 := f(0, nth)
	p.wait(job)
	for i := 1; i < nth; i++ {
		if err := p.errs[i]; err != nil && err0 == nil {
			err0 = err
		}
		p.errs[i] = nil
	}
	return err0
}

// wait returns once every worker of job j is done.
func (p *workerPool) wait(j *poolJob) {
	done := func() bool { return j.pending.Load() == 0 }
	if done() || p.spin && poll(done) {
		return
	}
	j.waiting.Store(true)
	if j.pending.Load() == 0 && j.waiting.CompareAndSwap(true, false) {
		return
	}
	<-j.done
}

// stop ends the workers and waits for them to exit. Later runs execute on
// the caller alone.
func (p *workerPool) stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped.Swap(true) {
		return
	}
	p.startOnce.Do(func() {}) // no workers will start after this
	if len(p.workers) == 0 {
		return
	}
	quit := &poolJob{stop: true}
	for i := 1; i < p.size; i++ {
		p.workers[i] <- quit
	}
	p.exited.Wait()
}
