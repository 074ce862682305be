package sched_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gogml/gogml/backends/cpu"
	"github.com/gogml/gogml/gallocr"
	"github.com/gogml/gogml/runtime"
	"github.com/gogml/gogml/sched"
)

// strict is a CPU backend posing as a separate device: it computes only in
// buffers of its own type and refuses the ops in refuse, so the scheduler
// must split graphs around it and copy tensors in and out.
type strict struct {
	*cpu.Backend
	bt     *cpu.BufferType
	refuse map[runtime.Op]bool
	name   string
}

func newStrict(t *testing.T, name string, refuse ...runtime.Op) *strict {
	t.Helper()
	bt, err := cpu.NewBufferType(cpu.BufferTypeOptions{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	s := &strict{Backend: cpu.NewBackend(cpu.BackendOptions{Threads: 1, BufferType: bt}), bt: bt, refuse: map[runtime.Op]bool{}, name: name}
	for _, op := range refuse {
		s.refuse[op] = true
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func (s *strict) Name() string                          { return s.name }
func (s *strict) DefaultBufferType() runtime.BufferType { return s.bt }
func (s *strict) SupportsBufferType(bt runtime.BufferType) bool {
	return bt != nil && bt.Name() == s.bt.Name()
}
func (s *strict) SupportsOp(t *runtime.Tensor) bool {
	return !s.refuse[t.Op] && s.Backend.SupportsOp(t)
}

func f32Bytes(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

func randBytes(r *rand.Rand, n int) []byte {
	v := make([]float32, n)
	for i := range v {
		v[i] = r.Float32()*2 - 1
	}
	return f32Bytes(v)
}

// model is a small two-layer network whose weights live in one buffer type
// and whose graph is rebuilt for every run.
type model struct {
	w1, b1, w2, g *runtime.Tensor
	wbuf          runtime.Buffer
}

const (
	nIn, nHid, nBatch = 32, 48, 5
)

func newModel(t *testing.T, bt runtime.BufferType) *model {
	t.Helper()
	ctx := runtime.NewContext()
	m := &model{
		w1: ctx.NewTensor(runtime.TypeF32, nIn, nHid),
		b1: ctx.NewTensor(runtime.TypeF32, nHid),
		w2: ctx.NewTensor(runtime.TypeF32, nHid, nHid),
		g:  ctx.NewTensor(runtime.TypeF32, nHid),
	}
	m.w1.Name, m.b1.Name, m.w2.Name, m.g.Name = "w1", "b1", "w2", "g"
	buf, err := gallocr.AllocCtxTensors(ctx, bt)
	if err != nil {
		t.Fatal(err)
	}
	buf.SetUsage(runtime.UsageWeights)
	t.Cleanup(func() { buf.Free() })
	m.wbuf = buf
	r := rand.New(rand.NewPCG(1, 2))
	for _, w := range []*runtime.Tensor{m.w1, m.b1, m.w2, m.g} {
		if err := runtime.SetTensorData(w, randBytes(r, int(w.Nelements())), 0); err != nil {
			t.Fatal(err)
		}
	}
	return m
}

// build returns the graph, its input and its output, and every node.
func (m *model) build(t *testing.T) (*runtime.Graph, *runtime.Tensor, *runtime.Tensor) {
	t.Helper()
	ctx := runtime.NewContext()
	x := ctx.NewTensor(runtime.TypeF32, nIn, nBatch)
	x.Name = "x"
	x.SetInput()
	h := ctx.GELU(ctx.Add(ctx.MulMat(m.w1, x), m.b1))
	h = ctx.Mul(ctx.RMSNorm(h, 1e-5), m.g)
	y := ctx.SoftMax(ctx.Scale(ctx.MulMat(m.w2, h), 0.5))
	y = ctx.Add(y, ctx.Transpose(ctx.Transpose(h)))
	y.Name = "y"
	y.SetOutput()
	if err := ctx.Err(); err != nil {
		t.Fatal(err)
	}
	g := runtime.NewGraph()
	if err := g.BuildForwardExpand(y); err != nil {
		t.Fatal(err)
	}
	return g, x, y
}

var input = randBytes(rand.New(rand.NewPCG(3, 4)), nIn*nBatch)

func reference(t *testing.T) []byte {
	t.Helper()
	be := cpu.NewBackend(cpu.BackendOptions{Threads: 1})
	defer be.Close()
	m := newModel(t, be.DefaultBufferType())
	g, x, y := m.build(t)
	a, err := gallocr.New(be.DefaultBufferType())
	if err != nil {
		t.Fatal(err)
	}
	defer a.Free()
	if err := a.AllocGraph(g); err != nil {
		t.Fatal(err)
	}
	if err := runtime.SetTensorData(x, input, 0); err != nil {
		t.Fatal(err)
	}
	if err := be.Compute(g); err != nil {
		t.Fatal(err)
	}
	out := make([]byte, y.NBytes())
	if err := runtime.GetTensorData(y, out, 0); err != nil {
		t.Fatal(err)
	}
	return out
}

func runSched(t *testing.T, s *sched.Scheduler, m *model, pin func(g *runtime.Graph)) []byte {
	t.Helper()
	g, x, y := m.build(t)
	if pin != nil {
		pin(g)
	}
	if err := s.AllocGraph(g); err != nil {
		t.Fatal(err)
	}
	if err := runtime.SetTensorData(x, input, 0); err != nil {
		t.Fatal(err)
	}
	if err := s.Compute(g); err != nil {
		t.Fatal(err)
	}
	out := make([]byte, y.NBytes())
	if err := runtime.GetTensorData(y, out, 0); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestSplitMatchesSingleBackend(t *testing.T) {
	want := reference(t)
	for _, tc := range []struct {
		name      string
		weightsOn int // 0: the device, 1: the host
		refuse    []runtime.Op
		minSplits int
	}{
		{"weights on device, device refuses soft_max", 0, []runtime.Op{runtime.OpSoftMax}, 2},
		{"weights on host", 1, nil, 1},
		{"weights on device, device refuses rms_norm and add", 0, []runtime.Op{runtime.OpRmsNorm, runtime.OpAdd}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dev := newStrict(t, "DEV", tc.refuse...)
			host := newStrict(t, "HOST")
			s, err := sched.New([]runtime.Backend{dev, host})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Free()
			m := newModel(t, []runtime.BufferType{dev.bt, host.bt}[tc.weightsOn])
			got := runSched(t, s, m, nil)
			if !bytes.Equal(got, want) {
				t.Fatalf("scheduled result differs from the single-backend one")
			}
			if n := len(s.Splits()); n < tc.minSplits {
				t.Errorf("%d splits, want at least %d", n, tc.minSplits)
			}
			for _, sp := range s.Splits() {
				for _, n := range sp.Nodes {
					if tc.refuse != nil && sp.Backend == 0 && dev.refuse[n.Op] {
						t.Errorf("node %q (%s) ran on the device that refuses it", n.Name, n.Op)
					}
				}
			}
			// Twice more: the second schedule reuses the buffers.
			for i := 0; i < 2; i++ {
				if got := runSched(t, s, m, nil); !bytes.Equal(got, want) {
					t.Fatalf("run %d: result differs", i+2)
				}
			}
		})
	}
}

// TestEveryNodePinnedEachWay pins each compute node in turn to each
// backend; the result must not change.
func TestEveryNodePinnedEachWay(t *testing.T) {
	want := reference(t)
	dev := newStrict(t, "DEV")
	host := newStrict(t, "HOST")
	m := newModel(t, dev.bt)
	g, _, _ := m.build(t)
	n := g.NumNodes()
	for k := 0; k < n; k++ {
		for b := 0; b < 2; b++ {
			s, err := sched.New([]runtime.Backend{dev, host})
			if err != nil {
				t.Fatal(err)
			}
			got := runSched(t, s, m, func(g *runtime.Graph) {
				nd := g.Nodes()[k]
				if err := s.SetBackend(nd, b); err != nil {
					t.Fatal(err)
				}
			})
			s.Free()
			if !bytes.Equal(got, want) {
				t.Fatalf("node %d pinned to backend %d: result differs", k, b)
			}
		}
	}
}

func TestUnsupportedOpNamed(t *testing.T) {
	dev := newStrict(t, "DEV", runtime.OpSoftMax)
	s, err := sched.New([]runtime.Backend{dev})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Free()
	m := newModel(t, dev.bt)
	g, _, _ := m.build(t)
	err = s.AllocGraph(g)
	if !errors.Is(err, sched.ErrUnsupported) {
		t.Fatalf("err = %v, want ErrUnsupported", err)
	}
	if !bytes.Contains([]byte(err.Error()), []byte("SOFT_MAX")) {
		t.Errorf("error %q does not name the op", err)
	}
}

func TestResetRestoresSources(t *testing.T) {
	dev := newStrict(t, "DEV", runtime.OpSoftMax)
	host := newStrict(t, "HOST")
	s, err := sched.New([]runtime.Backend{dev, host})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Free()
	m := newModel(t, dev.bt)
	g, _, _ := m.build(t)
	var before [][runtime.MaxSrc]*runtime.Tensor
	for _, n := range g.Nodes() {
		before = append(before, n.Src)
	}
	if err := s.AllocGraph(g); err != nil {
		t.Fatal(err)
	}
	if len(s.Splits()) < 2 {
		t.Fatalf("want a split graph, got %d splits", len(s.Splits()))
	}
	s.Reset()
	for i, n := range g.Nodes() {
		if n.Src != before[i] {
			t.Fatalf("node %d %q: sources not restored", i, n.Name)
		}
	}
}

func TestBadPin(t *testing.T) {
	dev := newStrict(t, "DEV")
	s, err := sched.New([]runtime.Backend{dev})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetBackend(&runtime.Tensor{Name: "t"}, 3); !errors.Is(err, sched.ErrBackendIndex) {
		t.Fatalf("err = %v, want ErrBackendIndex", err)
	}
	if _, err := sched.New(nil); err == nil {
		t.Fatal("New(nil) succeeded")
	}
}

// TestInputOutlivesItsLastLocalUse: a is read on the device by b, then
// copied to the host for c after the device has computed d, which the
// allocator may place where a was once b is done. The schedule must keep a
// alive until its copy is made.
func TestInputOutlivesItsLastLocalUse(t *testing.T) {
	build := func() (*runtime.Graph, *runtime.Tensor, *runtime.Tensor) {
		ctx := runtime.NewContext()
		x := ctx.NewTensor(runtime.TypeF32, 64, 4)
		x.SetInput()
		a := ctx.Scale(x, 0.5)
		b := ctx.Add(a, a)
		d := ctx.Mul(b, b)
		c := ctx.SoftMax(a)
		y := ctx.Add(d, c)
		y.SetOutput()
		if err := ctx.Err(); err != nil {
			t.Fatal(err)
		}
		g := runtime.NewGraph()
		if err := g.BuildForwardExpand(y); err != nil {
			t.Fatal(err)
		}
		return g, x, y
	}
	in := randBytes(rand.New(rand.NewPCG(5, 6)), 64*4)
	run := func(backends []runtime.Backend) []byte {
		s, err := sched.New(backends)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Free()
		g, x, y := build()
		if err := s.AllocGraph(g); err != nil {
			t.Fatal(err)
		}
		if err := runtime.SetTensorData(x, in, 0); err != nil {
			t.Fatal(err)
		}
		if err := s.Compute(g); err != nil {
			t.Fatal(err)
		}
		out := make([]byte, y.NBytes())
		if err := runtime.GetTensorData(y, out, 0); err != nil {
			t.Fatal(err)
		}
		return out
	}
	want := run([]runtime.Backend{newStrict(t, "ONE")})
	got := run([]runtime.Backend{newStrict(t, "DEV", runtime.OpSoftMax), newStrict(t, "HOST")})
	if !bytes.Equal(got, want) {
		t.Fatal("split result differs: an input was overwritten before its copy")
	}
}
