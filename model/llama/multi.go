package llama

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/gogml/gogml/gallocr"
	"github.com/gogml/gogml/runtime"
	"github.com/gogml/gogml/sched"
)

// newMulti places w over o.Backends (see Options.Backends).
func newMulti(w *Weights, o Options) (*Model, error) {
	m, err := multiModel(w.Config, o)
	if err != nil {
		return nil, err
	}
	if err := m.initWithSched(func() error { return m.loadWeights(w) }); err != nil {
		m.Close()
		return nil, err
	}
	return m, nil
}

// multiModel is a Model of shape cfg over o.Backends, nothing placed yet.
func multiModel(cfg Config, o Options) (*Model, error) {
	for i, b := range o.Backends {
		if b == nil || b.DefaultBufferType() == nil {
			return nil, fmt.Errorf("%w: backend %d is nil or has no buffer type", ErrConfig, i)
		}
	}
	layerDev := o.LayerBackend
	if layerDev == nil {
		var err error
		if layerDev, err = SpreadLayers(cfg.Layers, o.Split, len(o.Backends)); err != nil {
			return nil, err
		}
	}
	if len(layerDev) != cfg.Layers {
		return nil, fmt.Errorf("%w: %d layer backends for %d layers", ErrConfig, len(layerDev), cfg.Layers)
	}
	for l, d := range layerDev {
		if d < 0 || d >= len(o.Backends) {
			return nil, fmt.Errorf("%w: layer %d on backend %d of %d", ErrConfig, l, d, len(o.Backends))
		}
	}
	m := &Model{cfg: cfg, be: o.Backends[0], bt: o.Backends[0].DefaultBufferType(), strat: o.Strategy,
		multi: o.Backends, layerDev: append([]int(nil), layerDev...)}
	for _, b := range o.Backends {
		m.multiBT = append(m.multiBT, b.DefaultBufferType())
	}
	return m, nil
}

// initWithSched is initWith over several backends: the scheduler plans and
// runs the graphs.
func (m *Model) initWithSched(load func() error) error {
	if err := load(); err != nil {
		return err
	}
	if err := m.allocKVMulti(); err != nil {
		return err
	}
	var err error
	if m.sch, err = sched.New(m.multi, sched.WithStrategy(m.strat)); err != nil {
		return err
	}
	return m.Reserve(1)
}

// LayerBackends returns each layer's backend name (one backend: all the
// same).
func (m *Model) LayerBackends() []string {
	out := make([]string, m.cfg.Layers)
	for l := range out {
		if m.multi != nil {
			out[l] = m.multi[m.layerDev[l]].Name()
		} else {
			out[l] = m.be.Name()
		}
	}
	return out
}

// Splits returns, for the last graph run over several backends, each
// split's backend name and the bytes its input copies moved; nil on one
// backend.
func (m *Model) Splits() (backends []string, copyBytes []uint64) {
	if m.sch == nil {
		return nil, nil
	}
	for _, sp := range m.sch.Splits() {
		backends = append(backends, m.multi[sp.Backend].Name())
		copyBytes = append(copyBytes, sp.CopyBytes())
	}
	return backends, copyBytes
}

// deviceOf is the index of the backend that holds weight name: its
// layer's, the last layer's for the output, the last backend (the host)
// for the token embeddings; 0 on one backend.
func (m *Model) deviceOf(name string) int {
	if m.multi == nil {
		return 0
	}
	if rest, ok := strings.CutPrefix(name, "blk."); ok {
		if i := strings.IndexByte(rest, '.'); i > 0 {
			if l, err := strconv.Atoi(rest[:i]); err == nil && l >= 0 && l < len(m.layerDev) {
				return m.layerDev[l]
			}
		}
	}
	if strings.HasPrefix(name, "tok_emb") || strings.HasPrefix(name, "token_embd") {
		return len(m.multi) - 1
	}
	return m.layerDev[len(m.layerDev)-1]
}

// allocWeightsMulti places each device's weights in its memory.
func (m *Model) allocWeightsMulti(ctxs []*runtime.Context) error {
	for i, ctx := range ctxs {
		if len(ctx.Tensors()) == 0 {
			continue
		}
		buf, err := gallocr.AllocCtxTensors(ctx, m.multiBT[i])
		if err != nil {
			return fmt.Errorf("llama: weights on %s: %w", m.multi[i].Name(), err)
		}
		m.extra = append(m.extra, buf)
		m.stats.WeightsBytes += buf.Size()
		m.stats.WeightsBuffers++
	}
	return nil
}

// allocKVMulti places each layer's cache on its layer's device.
func (m *Model) allocKVMulti() error {
	cfg := m.cfg
	ctxs := make([]*runtime.Context, len(m.multi))
	for i := range ctxs {
		ctxs[i] = runtime.NewContext()
	}
	for l := range m.layers {
		ctx := ctxs[m.layerDev[l]]
		k := ctx.NewTensor2D(runtime.TypeF32, int64(cfg.KVDim()), int64(cfg.Ctx))
		v := ctx.NewTensor2D(runtime.TypeF32, int64(cfg.Ctx), int64(cfg.KVDim()))
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("llama: kv cache: %w", err)
		}
		k.Name, v.Name = fmt.Sprintf("cache_k_l%d", l), fmt.Sprintf("cache_v_l%d", l)
		m.layers[l].k, m.layers[l].v = k, v
	}
	for i, ctx := range ctxs {
		if len(ctx.Tensors()) == 0 {
			continue
		}
		buf, err := gallocr.AllocCtxTensors(ctx, m.multiBT[i])
		if err != nil {
			return fmt.Errorf("llama: kv cache on %s: %w", m.multi[i].Name(), err)
		}
		m.extra = append(m.extra, buf)
		buf.SetUsage(runtime.UsageCompute)
		if err := buf.Clear(0); err != nil {
			return fmt.Errorf("llama: kv cache on %s: %w", m.multi[i].Name(), err)
		}
		m.stats.KVBytes += buf.Size()
		m.stats.KVBuffers++
	}
	return nil
}

// reserveMulti sizes every backend's compute buffer for s.
func (m *Model) reserveMulti(s *step, maxBatch int) error {
	if err := m.sch.Reserve(s.g); err != nil {
		return fmt.Errorf("llama: reserve: %w", err)
	}
	m.sch.Reset()
	m.reserved = maxBatch
	pl := m.sch.Allocator().Plan()
	m.stats.ComputeBytes, m.stats.ComputeLowerBound = 0, 0
	for _, first := range pl.FirstOf {
		for _, c := range pl.Chunks[first] {
			m.stats.ComputeBytes += c
		}
	}
	for _, lb := range pl.LowerBound() {
		m.stats.ComputeLowerBound += lb
	}
	m.stats.Nodes, m.stats.Leafs = s.g.NumNodes(), s.g.NumLeafs()
	m.stats.ReservedBatch = maxBatch
	m.stats.Strategy = m.strat
	return nil
}

// BufferCompute is the compute memory one buffer type got from the last
// reserve, against the live-bytes lower bound of its part of the plan.
type BufferCompute struct {
	BufferType        string
	Bytes, LowerBound uint64
}

// ComputeByBufferType splits the compute memory of a model over several
// backends by buffer type (one entry per distinct type); nil on one
// backend, where Stats has it.
func (m *Model) ComputeByBufferType() []BufferCompute {
	if m.sch == nil || m.sch.Allocator().Plan() == nil {
		return nil
	}
	pl := m.sch.Allocator().Plan()
	lb := pl.LowerBound()
	var out []BufferCompute
	for d, first := range pl.FirstOf {
		var n uint64
		for _, c := range pl.Chunks[first] {
			n += c
		}
		out = append(out, BufferCompute{BufferType: m.multiBT[first].Name(), Bytes: n, LowerBound: lb[d]})
	}
	return out
}
