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
	DefaultMaxSize     uint64 = 1 << 30
	DefaultReps               = 5
	DefaultWarmup             = 1
	DefaultSampleBytes uint64 = 16 << 20
	DefaultMaxIters           = 256
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
	// moved this many bytes, at most MaxIters times (defaults 16 MiB, 256).
	SampleBytes uint64
	MaxIters    int
	// Ops restricts the operations measured (names as the Op constants;
	// "copy_to" and "copy_from" select every peer). Empty means all.
	// The host copy reference is always measured.
	Ops []string
	// Progress receives a one-line progress display, rewritten in place
	// with carriage returns; nil for none.
	Progress io.Writer
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
	for _, n := range rep.Sizes {
		r.total++
		for _, t := range targets {
			if n <= t.BufferType().MaxSize() {
				r.total += len(r.ops(t))
			}
		}
	}
	start := time.Now()
	err := r.run()
	rep.Seconds = time.Since(start).Seconds()
	if cfg.Progress != nil {
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

func (r *runner) progress(target, op string, n uint64) {
	r.step++
	if r.cfg.Progress == nil {
		return
	}
	line := fmt.Sprintf("membench [%d/%d] %s %s %s", r.step, r.total, target, op, FormatSize(n))
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
	for _, n := range r.rep.Sizes {
		if err := r.ctx.Err(); err != nil {
			return err
		}
		if n >= 64<<20 {
			debug.FreeOSMemory()
		}
		if n > math.MaxInt {
			return fmt.Errorf("membench: size %d does not fit in memory: %w", n, ErrSize)
		}
		// Pageable Go memory, touched, for set/get and the reference.
		src, dst := make([]byte, n), make([]byte, n)
		cpu.Fill(src, 0x3c)
		cpu.Fill(dst, 0xc3)
		r.progress(HostTarget, OpHostCopy, n)
		res := r.measure(nil, OpHostCopy, n, r.iters(n), func(iters int) (float64, error) {
			start := time.Now()
			for range iters {
				copy(dst, src)
			}
			return time.Since(start).Seconds(), nil
		})
		res.Target = HostTarget
		r.rep.Results = append(r.rep.Results, res)
		for _, t := range r.targets {
			if n > t.BufferType().MaxSize() {
				continue
			}
			if err := r.target(t, n, src, dst); err != nil {
				return err
			}
		}
	}
	return nil
}

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

// measure runs the warm-up and the repetitions of one figure. sample runs
// the operation iters times and returns the seconds taken.
func (r *runner) measure(t Target, op string, n uint64, iters int, sample func(iters int) (float64, error)) Result {
	res := Result{Op: op, Size: n, Iters: iters, Timing: "host"}
	if t != nil {
		res.Target, res.Timing = t.Name(), timing(t)
	}
	for i := 0; i < r.cfg.Warmup+r.cfg.Reps; i++ {
		s, err := sample(iters)
		if err != nil {
			res.Error = err.Error()
			res.Samples = nil
			return res
		}
		if i >= r.cfg.Warmup {
			res.Samples = append(res.Samples, s/float64(iters))
		}
	}
	res.summarize()
	return res
}

// fail records err as the result of every remaining op of t at size n.
func (r *runner) fail(t Target, ops []string, n uint64, err error) {
	for _, op := range ops {
		r.progress(t.Name(), op, n)
		r.rep.Results = append(r.rep.Results, Result{Target: t.Name(), Op: op, Size: n, Timing: timing(t), Error: err.Error()})
	}
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

func (p *placedBuffer) free() error {
	if p == nil {
		return nil
	}
	return p.buf.Free()
}

// target measures every op of t at size n.
func (r *runner) target(t Target, n uint64, src, dst []byte) error {
	if err := r.ctx.Err(); err != nil {
		return err
	}
	bt := t.BufferType()
	ops := r.ops(t)
	iters := r.iters(n)
	add := func(res Result) { r.rep.Results = append(r.rep.Results, res) }

	// Operations on fresh buffers come first, before this size's working
	// buffers take memory.
	rest := ops
	for len(rest) > 0 && (rest[0] == OpAllocFree || rest[0] == OpFirstTouch) {
		op := rest[0]
		rest = rest[1:]
		r.progress(t.Name(), op, n)
		switch op {
		case OpAllocFree:
			add(r.measure(t, op, n, iters, func(iters int) (float64, error) {
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
			}))
		case OpFirstTouch:
			add(r.measure(t, op, n, iters, func(iters int) (float64, error) {
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
			}))
		}
	}
	if len(rest) == 0 {
		return nil
	}

	a, err := newPlaced(bt, n, "a")
	if err != nil {
		r.fail(t, rest, n, err)
		return nil
	}
	defer a.free()
	var b *placedBuffer
	if slices.Contains(rest, OpCopy) {
		if b, err = newPlaced(bt, n, "b"); err != nil {
			r.fail(t, rest, n, err)
			return nil
		}
		defer b.free()
	}
	var pinned []byte
	if pa, ok := t.(PinnedAllocator); ok && (slices.Contains(rest, OpSetPinned) || slices.Contains(rest, OpGetPinned)) {
		mem, free, err := pa.AllocPinned(n)
		if err != nil {
			r.fail(t, rest, n, fmt.Errorf("pinned host memory: %w", err))
			return nil
		}
		defer free()
		pinned = mem[:n]
		cpu.Fill(pinned, 0x3c)
	}

	for _, op := range rest {
		if err := r.ctx.Err(); err != nil {
			return err
		}
		r.progress(t.Name(), op, n)
		var run func() error
		switch {
		case op == OpClear:
			run = func() error { return a.buf.Clear(0x5a) }
		case op == OpSet:
			run = func() error { return a.buf.SetTensor(a.t, src, 0) }
		case op == OpGet:
			run = func() error { return a.buf.GetTensor(a.t, dst, 0) }
		case op == OpSetPinned:
			run = func() error { return a.buf.SetTensor(a.t, pinned, 0) }
		case op == OpGetPinned:
			run = func() error { return a.buf.GetTensor(a.t, pinned, 0) }
		case op == OpCopy:
			run = func() error { return runtime.CopyTensorData(a.t, b.t) }
		case strings.HasPrefix(op, "copy_to:"), strings.HasPrefix(op, "copy_from:"):
			add(r.peerCopy(t, op, n, iters, a))
			continue
		default:
			continue
		}
		add(r.measure(t, op, n, iters, func(iters int) (float64, error) { return timed(t, iters, run) }))
	}
	return nil
}

// peerCopy measures a copy between a (of t) and a fresh buffer of the peer
// named in op.
func (r *runner) peerCopy(t Target, op string, n uint64, iters int, a *placedBuffer) Result {
	to := strings.HasPrefix(op, "copy_to:")
	name := op[strings.IndexByte(op, ':')+1:]
	peer := r.byName[name]
	if n > peer.BufferType().MaxSize() {
		return Result{Target: t.Name(), Op: op, Size: n, Timing: timing(t), Error: fmt.Sprintf("%s above %s's max size", FormatSize(n), name)}
	}
	p, err := newPlaced(peer.BufferType(), n, "peer")
	if err != nil {
		return Result{Target: t.Name(), Op: op, Size: n, Timing: timing(t), Error: err.Error()}
	}
	defer p.free()
	src, dst := a.t, p.t
	if !to {
		src, dst = p.t, a.t
	}
	// Time with the device side of the copy when one of the two has a timer.
	timer := t
	if _, ok := t.(DeviceTimer); !ok {
		timer = peer
	}
	res := r.measure(timer, op, n, iters, func(iters int) (float64, error) {
		return timed(timer, iters, func() error { return runtime.CopyTensorData(src, dst) })
	})
	res.Target = t.Name()
	return res
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
