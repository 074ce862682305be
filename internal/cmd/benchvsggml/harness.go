package main

import (
	"encoding/binary"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/gogml/gogml/backends/cpu"
	"github.com/gogml/gogml/gallocr"
	cpukernels "github.com/gogml/gogml/internal/kernels/cpukernels"
	"github.com/gogml/gogml/runtime"
)

// harness runs the cases on gogml's CPU backend: one backend per thread
// count, each case's graph built and filled once.
type harness struct {
	backends map[int]*cpu.Backend
	graphs   map[string]*runtime.Graph
	bufs     []runtime.Buffer
}

func newHarness() *harness {
	return &harness{backends: map[int]*cpu.Backend{}, graphs: map[string]*runtime.Graph{}}
}

func (h *harness) close() {
	for _, b := range h.backends {
		b.Close()
	}
	for _, b := range h.bufs {
		b.Free()
	}
}

// time returns the mean µs per Compute of c's graph on nt workers: one
// warm-up run, then runs until budget has passed (at least two).
func (h *harness) time(c benchCase, nt int, budget time.Duration) (float64, error) {
	g, err := h.graph(c)
	if err != nil {
		return 0, err
	}
	be := h.backends[nt]
	if be == nil {
		be = cpu.NewBackend(cpu.BackendOptions{Threads: nt})
		h.backends[nt] = be
	}
	if err := be.Compute(g); err != nil {
		return 0, err
	}
	runs := 0
	start := time.Now()
	for runs < 2 || time.Since(start) < budget {
		if err := be.Compute(g); err != nil {
			return 0, err
		}
		runs++
	}
	return float64(time.Since(start).Microseconds()) / float64(runs), nil
}

// graph builds c's graph in host memory and fills its leaves: f32 and f16
// with a smooth signal in [-0.5, 0.5], quantized types with that signal
// quantized row by row, i32 with valid row indices and positions.
func (h *harness) graph(c benchCase) (*runtime.Graph, error) {
	if g := h.graphs[c.name]; g != nil {
		return g, nil
	}
	ctx := runtime.NewContext()
	out := c.build(ctx)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	buf, err := gallocr.AllocCtxTensors(ctx, cpu.DefaultBufferType())
	if err != nil {
		return nil, err
	}
	h.bufs = append(h.bufs, buf)
	for _, t := range ctx.Tensors() {
		if t.Op != runtime.OpNone || t.ViewSrc != nil {
			continue
		}
		data, err := fill(t)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", t.Name, err)
		}
		if err := runtime.SetTensorData(t, data, 0); err != nil {
			return nil, err
		}
	}
	g := runtime.NewGraph()
	if err := g.BuildForwardExpand(out); err != nil {
		return nil, err
	}
	h.graphs[c.name] = g
	return g, nil
}

func fill(t *runtime.Tensor) ([]byte, error) {
	data := make([]byte, t.NBytes())
	if t.Type == runtime.TypeI32 {
		for i := range len(data) / 4 {
			binary.LittleEndian.PutUint32(data[4*i:], uint32(i%4096))
		}
		return data, nil
	}
	ne0 := t.Ne[0]
	row := make([]float32, ne0)
	rowBytes := t.Type.RowSize(ne0)
	for r := range t.Nrows() {
		for i := range row {
			row[i] = float32(math.Sin(float64(r*ne0+int64(i))*0.731)) * 0.5
		}
		if err := cpukernels.FromFloatCPU(t.Type, row, data[uint64(r)*rowBytes:uint64(r+1)*rowBytes]); err != nil {
			return nil, err
		}
	}
	return data, nil
}

// copyBandwidth measures a 64 MiB copy split across nt goroutines, best
// of a few, in GB/s counting bytes read plus bytes written.
func copyBandwidth(nt int) float64 {
	const n = 64 << 20
	src, dst := make([]byte, n), make([]byte, n)
	for i := range src {
		src[i] = byte(i)
	}
	best := math.Inf(1)
	for range 8 {
		t := time.Now()
		var wg sync.WaitGroup
		for w := range nt {
			lo, hi := n*w/nt, n*(w+1)/nt
			wg.Go(func() { copy(dst[lo:hi], src[lo:hi]) })
		}
		wg.Wait()
		best = min(best, time.Since(t).Seconds())
	}
	return 2 * n / best / 1e9
}
