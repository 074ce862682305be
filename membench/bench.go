package membench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"os"
	goruntime "runtime"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/gogml/gogml/backends/cpu"
	"github.com/gogml/gogml/runtime"
)

// The operations membench measures. Every figure counts the buffer's size
// as the bytes moved (a copy of n bytes moves n bytes), like the host copy
// reference.
const (
	// OpAllocFree is one AllocBuffer plus Free; a latency, not a bandwidth.
	OpAllocFree = "alloc_free"
	// OpFirstTouch is the first Clear of a freshly allocated buffer: for
	// host memory, the page faults that map it in.
	OpFirstTouch = "first_touch"
	// OpClear is Clear of a buffer that was written before.
	OpClear = "clear"
	// OpSet is SetTensor from pageable Go memory (host to buffer).
	OpSet = "set"
	// OpGet is GetTensor into pageable Go memory (buffer to host).
	OpGet = "get"
	// OpSetPinned is SetTensor from the target's pinned host memory.
	OpSetPinned = "set_pinned"
	// OpGetPinned is GetTensor into the target's pinned host memory.
	OpGetPinned = "get_pinned"
	// OpCopy is runtime.CopyTensorData between two buffers of the target.
	OpCopy = "copy"
	// OpHostCopy is Go's copy between two touched Go slices: the
	// reference line, measured under the pseudo-target HostTarget.
	OpHostCopy = "host_copy"
)

// aliasGap offsets the host copy's destination from page alignment.
const aliasGap = 2048 + 64

// HostTarget names the results of the host copy reference.
const HostTarget = "host"

// CopyToOp names a copy from the target into a buffer of peer.
func CopyToOp(peer string) string { return "copy_to:" + peer }

// CopyFromOp names a copy from a buffer of peer into the target.
func CopyFromOp(peer string) string { return "copy_from:" + peer }

// IsBandwidth reports whether op's figures are bandwidths (all but
// OpAllocFree).
func IsBandwidth(op string) bool { return op != OpAllocFree }

// Defaults of Config.
const (
	DefaultMinSize     uint64 = 4 << 10
	DefaultMaxSize     uint64 = 64 << 20
	DefaultReps               = 5
	DefaultWarmup             = 1
	DefaultSampleBytes uint64 = 4 << 20
	DefaultMaxIters           = 64
)

// Config says what Run measures.
type Config struct {
	// MinSize and MaxSize bound the sizes, which are the powers of two in
	// between (MinSize rounded up to one). Zero means DefaultMinSize, and
	// min(DefaultMaxSize, the smallest MaxSize of the targets).
	MinSize, MaxSize uint64
	// Reps is the number of timed samples per figure (default 5); Warmup
	// the untimed runs before them (default 1; negative means none).
	Reps, Warmup int
	// SampleBytes makes one sample repeat a small operation until it has
	// moved this many bytes, at most MaxIters times (defaults 4 MiB, 64).
	SampleBytes uint64
	MaxIters    int
	// Ops restricts the operations measured (names as the Op constants;
	// "copy_to" and "copy_from" select every peer). Empty means all.
	// The host copy reference is always measured.
	Ops []string
	// Progress receives a one-line progress display, rewritten in place
	// with carriage returns; nil for none.
	Progress io.Writer
	// ProgressLines makes Progress get one ordinary line per size measured
	// instead (for logs and pipes, where carriage returns pile up).
	ProgressLines bool
	// HostBudget is the most host memory the largest size may take: the
	// Go slices of the host copy reference and of set/get, and a host
	// target's two working buffers, are 2 × MaxSize each. A MaxSize above
	// it fails Run before anything is allocated. Zero means half the
	// machine's RAM.
	HostBudget uint64
}

// Run measures every target at every size and returns the report. A failed
// operation (say, out of memory at a large size) is recorded in its Result
// and the run goes on; Run fails only on a bad configuration or when ctx
// ends.
func Run(ctx context.Context, targets []Target, cfg Config) (*Report, error) {
	if len(targets) == 0 {
		return nil, errors.New("membench: no targets")
	}
	names := map[string]bool{HostTarget: true}
	for _, t := range targets {
		if names[t.Name()] {
			return nil, fmt.Errorf("membench: target name %q used twice (or reserved)", t.Name())
		}
		names[t.Name()] = true
	}
	if err := cfg.fill(targets); err != nil {
		return nil, err
	}
	r := &runner{ctx: ctx, cfg: cfg, targets: targets, byName: map[string]Target{}}
	for _, t := range targets {
		r.byName[t.Name()] = t
	}
	for _, t := range targets {
		for _, p := range r.peers(t) {
			if _, ok := r.byName[p]; !ok {
				return nil, fmt.Errorf("membench: target %q names unknown copy peer %q", t.Name(), p)
			}
		}
	}
	rep := &Report{
		Start:  time.Now().UTC(),
		Host:   hostInfo(),
		Config: ReportConfig{MinSize: cfg.MinSize, MaxSize: cfg.MaxSize, Reps: cfg.Reps, Warmup: cfg.Warmup, SampleBytes: cfg.SampleBytes, MaxIters: cfg.MaxIters},
		Sizes:  sizesBetween(cfg.MinSize, cfg.MaxSize),
	}
	for _, t := range targets {
		rep.Targets = append(rep.Targets, TargetInfo{Name: t.Name(), BufferType: t.BufferType().Name(), IsHost: t.BufferType().IsHost(), Ops: r.ops(t)})
	}
	r.rep = rep
	for _, t := range targets {
		if m := t.BufferType().MaxSize(); m < cfg.MaxSize {
			rep.Notes = append(rep.Notes, fmt.Sprintf("%s: sizes above its max buffer size %s not measured", t.Name(), FormatSize(m)))
		}
	}
	for _, n := range rep.Sizes {
		figs := 1
		for _, t := range targets {
			if n <= t.BufferType().MaxSize() {
				figs += len(r.ops(t))
			}
		}
		r.total += figs * (cfg.Warmup + cfg.Reps)
	}
	start := time.Now()
	err := r.run()
	rep.Seconds = time.Since(start).Seconds()
	if cfg.Progress != nil && !cfg.ProgressLines {
		fmt.Fprintf(cfg.Progress, "\r%-79s\r", "")
	}
	if err != nil {
		return nil, err
	}
	return rep, nil
}

func (c *Config) fill(targets []Target) error {
	if c.MinSize == 0 {
		c.MinSize = DefaultMinSize
	}
	if c.MaxSize == 0 {
		c.MaxSize = DefaultMaxSize
		for _, t := range targets {
			if m := t.BufferType().MaxSize(); m < c.MaxSize {
				c.MaxSize = m
			}
		}
	}
	if c.MinSize > 1<<62 || c.MaxSize > 1<<62 {
		return fmt.Errorf("membench: sizes above 4 EiB: %w", ErrSize)
	}
	if c.MinSize&(c.MinSize-1) != 0 {
		c.MinSize = 1 << (64 - bits.LeadingZeros64(c.MinSize))
	}
	if c.MaxSize < c.MinSize {
		return fmt.Errorf("membench: max size %s below min size %s: %w", FormatSize(c.MaxSize), FormatSize(c.MinSize), ErrSize)
	}
	if c.Reps == 0 {
		c.Reps = DefaultReps
	}
	if c.Reps < 0 {
		return fmt.Errorf("membench: %d repetitions", c.Reps)
	}
	if c.Warmup == 0 {
		c.Warmup = DefaultWarmup
	} else if c.Warmup < 0 {
		c.Warmup = 0
	}
	if c.SampleBytes == 0 {
		c.SampleBytes = DefaultSampleBytes
	}
	if c.MaxIters <= 0 {
		c.MaxIters = DefaultMaxIters
	}
	if c.HostBudget == 0 {
		c.HostBudget = hostRAM() / 2
	}
	if c.MaxSize > (c.HostBudget-min(c.HostBudget, aliasGap))/2 {
		return fmt.Errorf("membench: max size %s needs twice that in host memory (the host copy reference and set/get use two Go buffers of each size), above the budget of %s (half the RAM): lower the max size: %w",
			FormatSize(c.MaxSize), runtime.FormatBytes(c.HostBudget), ErrSize)
	}
	for _, op := range c.Ops {
		switch op {
		case OpAllocFree, OpFirstTouch, OpClear, OpSet, OpGet, OpSetPinned, OpGetPinned, OpCopy, OpHostCopy, "copy_to", "copy_from":
		default:
			if !strings.HasPrefix(op, "copy_to:") && !strings.HasPrefix(op, "copy_from:") {
				return fmt.Errorf("membench: unknown operation %q", op)
			}
		}
	}
	return nil
}

// sizesBetween lists the powers of two from lo to hi (lo a power of two).
func sizesBetween(lo, hi uint64) []uint64 {
	var out []uint64
	for n := lo; n <= hi && n != 0; n *= 2 {
		out = append(out, n)
		if n > hi/2 {
			break
		}
	}
	return out
}

type runner struct {
	ctx     context.Context
	cfg     Config
	targets []Target
	byName  map[string]Target
	rep     *Report
	step    int
	total   int
}

// peers returns the targets t copies with: the reference (first) target
// unless t is it, then t's own CopyPeers.
func (r *runner) peers(t Target) []string {
	var ps []string
	if ref := r.targets[0].Name(); t.Name() != ref {
		ps = append(ps, ref)
	}
	if cp, ok := t.(CopyPeers); ok {
		for _, p := range cp.Peers() {
			if p != t.Name() && !slices.Contains(ps, p) {
				ps = append(ps, p)
			}
		}
	}
	return ps
}

func (r *runner) want(op string) bool {
	if len(r.cfg.Ops) == 0 {
		return true
	}
	for _, o := range r.cfg.Ops {
		if o == op || strings.HasPrefix(op, o+":") {
			return true
		}
	}
	return false
}

// ops lists the operations measured on t, in order.
func (r *runner) ops(t Target) []string {
	all := []string{OpAllocFree, OpFirstTouch, OpClear, OpSet, OpGet}
	if _, ok := t.(PinnedAllocator); ok {
		all = append(all, OpSetPinned, OpGetPinned)
	}
	all = append(all, OpCopy)
	for _, p := range r.peers(t) {
		all = append(all, CopyToOp(p), CopyFromOp(p))
	}
	var out []string
	for _, op := range all {
		if r.want(op) {
			out = append(out, op)
		}
	}
	return out
}

func (r *runner) progress(res Result, round, rounds int) {
	r.step++
	if r.cfg.Progress == nil || r.cfg.ProgressLines {
		return
	}
	phase := "warm-up"
	if round >= r.cfg.Warmup {
		phase = fmt.Sprintf("rep %d/%d", round-r.cfg.Warmup+1, rounds-r.cfg.Warmup)
	}
	line := fmt.Sprintf("membench [%d/%d] %s %s: %s %s", r.step, r.total, FormatSize(res.Size), phase, res.Target, res.Op)
	fmt.Fprintf(r.cfg.Progress, "\r%-79s", line)
}

// iters is the number of operations per sample for size n.
func (r *runner) iters(n uint64) int {
	k := r.cfg.SampleBytes / n
	if k < 1 {
		return 1
	}
	if k > uint64(r.cfg.MaxIters) {
		return r.cfg.MaxIters
	}
	return int(k)
}

func (r *runner) run() error {
	// Pageable Go memory, touched once, for set/get and the reference
	// (Config.fill checked it against the host-memory budget). The
	// destination starts 2 KiB + 64 B past a page boundary: with source
	// and destination at the same offsets modulo a large power of two,
	// loads falsely wait on stores (4K aliasing) and small copies run at a
	// third of their speed, which would understate the reference.
	maxN := r.rep.Sizes[len(r.rep.Sizes)-1]
	if maxN > math.MaxInt/2 {
		return fmt.Errorf("membench: size %d does not fit in memory: %w", maxN, ErrSize)
	}
	src := make([]byte, maxN)
	dst := make([]byte, maxN+aliasGap)[aliasGap:][:maxN:maxN]
	cpu.Fill(src, 0x3c)
	cpu.Fill(dst, 0xc3)
	start := time.Now()
	for i, n := range r.rep.Sizes {
		if err := r.ctx.Err(); err != nil {
			return err
		}
		if err := r.size(n, src[:n:n], dst[:n:n]); err != nil {
			return err
		}
		if r.cfg.Progress != nil && r.cfg.ProgressLines {
			fmt.Fprintf(r.cfg.Progress, "membench: %s done (%d/%d sizes, %.1f s)\n", FormatSize(n), i+1, len(r.rep.Sizes), time.Since(start).Seconds())
		}
	}
	return nil
}

// figure is one quantity measured at one size: its result so far and how
// to take one sample (iters operations, returning the seconds they took).
type figure struct {
	res    Result
	sample func(iters int) (float64, error)
}

// work holds a target's buffers for one size: a for clear/set/get and as a
// copy source, b as the copy destination, and pinned host memory.
type work struct {
	a, b   *placedBuffer
	pinned []byte
	free   []func() error
}

func (w *work) release() {
	for i := len(w.free) - 1; i >= 0; i-- {
		_ = w.free[i]()
	}
}

// setup allocates t's working buffers for size n.
func (r *runner) setup(t Target, n uint64, ops []string) (*work, error) {
	w := &work{}
	var err error
	if w.a, err = newPlaced(t.BufferType(), n, "a"); err != nil {
		return nil, err
	}
	w.free = append(w.free, w.a.free)
	if w.b, err = newPlaced(t.BufferType(), n, "b"); err != nil {
		w.release()
		return nil, err
	}
	w.free = append(w.free, w.b.free)
	if pa, ok := t.(PinnedAllocator); ok && (slices.Contains(ops, OpSetPinned) || slices.Contains(ops, OpGetPinned)) {
		mem, free, err := pa.AllocPinned(n)
		if err != nil {
			w.release()
			return nil, fmt.Errorf("pinned host memory: %w", err)
		}
		w.free = append(w.free, free)
		w.pinned = mem[:n:n]
		cpu.Fill(w.pinned, 0x3c)
	}
	return w, nil
}

// size measures every figure at size n. The repetitions are interleaved,
// one sample of each figure in turn, so that slow phases of a busy machine
// spread over all figures instead of skewing one.
func (r *runner) size(n uint64, src, dst []byte) error {
	iters := r.iters(n)
	if n >= 64<<20 {
		debug.FreeOSMemory()
	}
	figs := []*figure{{
		res: Result{Target: HostTarget, Op: OpHostCopy, Size: n, Iters: iters, Timing: "host"},
		sample: func(iters int) (float64, error) {
			start := time.Now()
			for range iters {
				copy(dst, src)
			}
			return time.Since(start).Seconds(), nil
		},
	}}

	works := map[string]*work{}
	failed := map[string]error{}
	defer func() {
		for _, w := range works {
			w.release()
		}
	}()
	for _, t := range r.targets {
		if n > t.BufferType().MaxSize() {
			continue
		}
		w, err := r.setup(t, n, r.ops(t))
		if err != nil {
			failed[t.Name()] = err
			continue
		}
		works[t.Name()] = w
	}

	for _, t := range r.targets {
		if n > t.BufferType().MaxSize() {
			continue
		}
		for _, op := range r.ops(t) {
			f := &figure{res: Result{Target: t.Name(), Op: op, Size: n, Iters: iters, Timing: timing(t)}}
			figs = append(figs, f)
			if err := r.prepare(f, t, n, works, failed, src, dst); err != nil {
				f.res.Error = err.Error()
			}
		}
	}

	rounds := r.cfg.Warmup + r.cfg.Reps
	for i := 0; i < rounds; i++ {
		for _, f := range figs {
			if err := r.ctx.Err(); err != nil {
				return err
			}
			r.progress(f.res, i, rounds)
			if f.res.Error != "" {
				continue
			}
			s, err := f.sample(iters)
			if err != nil {
				f.res.Error, f.res.Samples = err.Error(), nil
				continue
			}
			if i >= r.cfg.Warmup {
				f.res.Samples = append(f.res.Samples, s/float64(iters))
			}
		}
	}
	for _, f := range figs {
		f.res.summarize()
		r.rep.Results = append(r.rep.Results, f.res)
	}
	return nil
}

// prepare sets f.sample for op on t at size n.
func (r *runner) prepare(f *figure, t Target, n uint64, works map[string]*work, failed map[string]error, src, dst []byte) error {
	bt := t.BufferType()
	op := f.res.Op
	switch op {
	case OpAllocFree:
		f.sample = func(iters int) (float64, error) {
			start := time.Now()
			for range iters {
				b, err := bt.AllocBuffer(n)
				if err != nil {
					return 0, err
				}
				if err := b.Free(); err != nil {
					return 0, err
				}
			}
			return time.Since(start).Seconds(), nil
		}
		return nil
	case OpFirstTouch:
		f.sample = func(iters int) (float64, error) {
			var total float64
			for range iters {
				b, err := bt.AllocBuffer(n)
				if err != nil {
					return 0, err
				}
				s, err := timed(t, 1, func() error { return b.Clear(0x5a) })
				if ferr := b.Free(); err == nil {
					err = ferr
				}
				if err != nil {
					return 0, err
				}
				total += s
			}
			return total, nil
		}
		return nil
	}

	w := works[t.Name()]
	if w == nil {
		return fmt.Errorf("buffers: %w", failed[t.Name()])
	}
	var run func() error
	timer := t
	switch {
	case op == OpClear:
		run = func() error { return w.a.buf.Clear(0x5a) }
	case op == OpSet:
		run = func() error { return w.a.buf.SetTensor(w.a.t, src, 0) }
	case op == OpGet:
		run = func() error { return w.a.buf.GetTensor(w.a.t, dst, 0) }
	case op == OpSetPinned:
		run = func() error { return w.a.buf.SetTensor(w.a.t, w.pinned, 0) }
	case op == OpGetPinned:
		run = func() error { return w.a.buf.GetTensor(w.a.t, w.pinned, 0) }
	case op == OpCopy:
		run = func() error { return runtime.CopyTensorData(w.a.t, w.b.t) }
	case strings.HasPrefix(op, "copy_to:"), strings.HasPrefix(op, "copy_from:"):
		name := op[strings.IndexByte(op, ':')+1:]
		peer := r.byName[name]
		if n > peer.BufferType().MaxSize() {
			return fmt.Errorf("%s is above %s's max size", FormatSize(n), name)
		}
		pw := works[name]
		if pw == nil {
			return fmt.Errorf("peer %s buffers: %w", name, failed[name])
		}
		from, to := w.a.t, pw.b.t
		if strings.HasPrefix(op, "copy_from:") {
			from, to = pw.b.t, w.a.t
		}
		run = func() error { return runtime.CopyTensorData(from, to) }
		// Time with the device side of the copy when either has a timer.
		if _, ok := t.(DeviceTimer); !ok {
			if _, ok := peer.(DeviceTimer); ok {
				timer = peer
				f.res.Timing = timing(peer)
			}
		}
	default:
		return fmt.Errorf("unknown operation %q", op)
	}
	f.sample = func(iters int) (float64, error) { return timed(timer, iters, run) }
	return nil
}

// placedBuffer is a buffer with one i8 tensor spanning n bytes of it.
type placedBuffer struct {
	buf runtime.Buffer
	t   *runtime.Tensor
}

func newPlaced(bt runtime.BufferType, n uint64, name string) (*placedBuffer, error) {
	buf, err := bt.AllocBuffer(n)
	if err != nil {
		return nil, err
	}
	x := runtime.NewContext().NewTensor1D(runtime.TypeI8, int64(n))
	x.Name = name
	if err := runtime.TensorAlloc(buf, x, 0); err != nil {
		_ = buf.Free()
		return nil, err
	}
	if err := buf.Clear(0x11); err != nil {
		_ = buf.Free()
		return nil, err
	}
	return &placedBuffer{buf: buf, t: x}, nil
}

func (p *placedBuffer) free() error { return p.buf.Free() }

// timed runs op iters times and returns the seconds taken, with the device's
// timer when t has one.
func timed(t Target, iters int, op func() error) (float64, error) {
	loop := func() error {
		for range iters {
			if err := op(); err != nil {
				return err
			}
		}
		return nil
	}
	if dt, ok := t.(DeviceTimer); ok {
		d, err := dt.TimeDevice(loop)
		return d.Seconds(), err
	}
	start := time.Now()
	if err := loop(); err != nil {
		return 0, err
	}
	if s, ok := t.(Synchronizer); ok {
		if err := s.Synchronize(); err != nil {
			return 0, err
		}
	}
	return time.Since(start).Seconds(), nil
}

func timing(t Target) string {
	if _, ok := t.(DeviceTimer); ok {
		return "device"
	}
	return "host"
}

// hostInfo describes the machine.
func hostInfo() HostInfo {
	h := HostInfo{GOOS: goruntime.GOOS, GOARCH: goruntime.GOARCH, NumCPU: goruntime.NumCPU(), GoVersion: goruntime.Version(), PageSize: os.Getpagesize()}
	if b, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled"); err == nil {
		h.TransparentHugePages = strings.TrimSpace(string(b))
	}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				h.CPU = strings.TrimSpace(v)
				break
			}
		}
	}
	return h
}
