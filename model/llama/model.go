package llama

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"time"
	"unsafe"

	cpukernels "github.com/gogml/gogml/internal/kernels/cpukernels"

	"github.com/gogml/gogml/gallocr"
	"github.com/gogml/gogml/runtime"
	"github.com/gogml/gogml/sched"
)

// Options say where a Model lives and how its graphs are planned.
type Options struct {
	// Backend computes the graphs; required.
	Backend runtime.Backend
	// BufferType holds the weights and the KV cache; nil means the
	// backend's default. A finite MaxSize splits the weights across
	// several buffers.
	BufferType runtime.BufferType
	// Strategy is the graph allocator's placement strategy.
	Strategy gallocr.Strategy
	// Backends, with two or more entries, spreads the model over several
	// backends in the scheduler's priority order (put the CPU last: graph
	// inputs and the token embeddings live there, as in llama.cpp). Layer
	// l's weights and KV cache live in Backends[LayerBackend[l]]'s memory,
	// the output layer with the last layer; a scheduler (package sched)
	// splits each graph and copies activations between the devices.
	// Backend and BufferType are then ignored.
	Backends []runtime.Backend
	// LayerBackend gives each layer's backend index; nil spreads the
	// layers in proportion to Split.
	LayerBackend []int
	// Split is each backend's share of the layers (nil: equal shares).
	Split []float64
}

// SpreadLayers gives n layers to backends in proportion to split (nil:
// equal), in order: the first backends get the first layers.
func SpreadLayers(n int, split []float64, backends int) ([]int, error) {
	if backends < 1 {
		return nil, fmt.Errorf("%w: no backends", ErrConfig)
	}
	if split == nil {
		split = make([]float64, backends)
		for i := range split {
			split[i] = 1
		}
	}
	if len(split) != backends {
		return nil, fmt.Errorf("%w: %d split shares for %d backends", ErrConfig, len(split), backends)
	}
	var sum float64
	for i, f := range split {
		if f < 0 || math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("%w: split share %d is %v", ErrConfig, i, f)
		}
		sum += f
	}
	if sum == 0 {
		return nil, fmt.Errorf("%w: split shares add up to 0", ErrConfig)
	}
	out := make([]int, n)
	var acc float64
	b := 0
	for l := range out {
		// Layer l goes to the backend whose cumulative share covers the
		// middle of the layer.
		mid := (float64(l) + 0.5) / float64(n) * sum
		for b < backends-1 && acc+split[b] <= mid {
			acc += split[b]
			b++
		}
		out[l] = b
	}
	return out, nil
}

// bufferType is the buffer type for weights and the KV cache: o's, else
// the backend's default.
func (o Options) bufferType() (runtime.BufferType, error) {
	if o.Backend == nil {
		return nil, fmt.Errorf("%w: no backend", ErrConfig)
	}
	bt := o.BufferType
	if bt == nil {
		bt = o.Backend.DefaultBufferType()
	}
	if bt == nil {
		return nil, fmt.Errorf("llama: backend %s has no buffer type: %w", o.Backend.Name(), runtime.ErrUnsupported)
	}
	return bt, nil
}

// MemoryStats summarise where a Model's memory went.
type MemoryStats struct {
	// WeightsBytes is the size of the weight buffers, WeightsBuffers their
	// number (more than one when the buffer type's max size splits them).
	WeightsBytes   uint64
	WeightsBuffers int
	// KVBytes is the KV cache's size, KVBuffers its number of buffers.
	KVBytes   uint64
	KVBuffers int
	// ComputeBytes is the graph allocator's buffer size after the last
	// reserve; ComputeLowerBound is the live-bytes lower bound of that
	// plan (no placement with the same lifetimes needs fewer bytes).
	ComputeBytes      uint64
	ComputeLowerBound uint64
	// DecodeComputeBytes is the single-token graphs' own compute buffer
	// (one backend; 0 over several, where the scheduler plans them).
	DecodeComputeBytes uint64
	// Nodes and Leafs count the reserved graph.
	Nodes, Leafs int
	// ReservedBatch is the largest batch the compute buffer was sized for.
	ReservedBatch int
	Strategy      gallocr.Strategy
}

type layer struct {
	attnNorm, wq, wk, wv, wo *runtime.Tensor
	ffnNorm, w1, w2, w3      *runtime.Tensor
	k, v                     *runtime.Tensor // KV cache: k {KVDim, Ctx}, v {Ctx, KVDim} (transposed)
	// Optional (nil when the Config has none): q/k/v and output biases,
	// per-head q and k RMS norm weights.
	bq, bk, bv, bo *runtime.Tensor
	qNorm, kNorm   *runtime.Tensor
	// Optional, from GGUF files only (nil when absent): feed-forward
	// biases, and per-tensor scales ({1}) multiplying each projection's
	// product as llama.cpp's build_lora_mm/build_ffn do.
	bGate, bUp, bDown                 *runtime.Tensor
	sq, sk, sv, so, sGate, sUp, sDown *runtime.Tensor
}

// Model is a llama-style decoder on one backend. It is not safe for
// concurrent use.
type Model struct {
	cfg   Config
	be    runtime.Backend
	bt    runtime.BufferType
	strat gallocr.Strategy

	tokEmb, outNorm, output *runtime.Tensor
	outBias                 *runtime.Tensor // output.bias (qwen2 files), or nil
	ropeFreqs               *runtime.Tensor // RoPE frequency factors, or nil
	layers                  []layer
	wbuf, kvbuf             runtime.Buffer
	alloc                   *gallocr.Allocator

	// Over several backends: each one's buffer type, each layer's backend,
	// the weight and cache buffers beyond wbuf and kvbuf, the scheduler.
	multi    []runtime.Backend
	multiBT  []runtime.BufferType
	layerDev []int
	extra    []runtime.Buffer
	sch      *sched.Scheduler

	nPast    int
	inBuf    []byte // the token ids and positions of the last Eval, uploaded
	reserved int    // largest reserved batch, 0: none
	stats    MemoryStats
	last     Phases

	// Built graphs kept for reuse (single backend only), by shape; the
	// step last placed by the graph allocator.
	steps     map[stepKey]*step
	allocated *step
	// alloc1 places the single-token graphs in a compute buffer of their
	// own (single backend only), so that the first token after a prompt
	// does not place its graph again, nor the next prompt its own;
	// allocated1 is the step it last placed. See RATIONALE.md, "The
	// decode graph built and placed at load".
	alloc1     *gallocr.Allocator
	allocated1 *step
}

// stepKey is the shape of a reusable graph: n new tokens attending over
// the first t cache slots, the logits of every row or of the last only.
type stepKey struct {
	n, t int
	last bool
}

// maxSteps bounds the graphs a Model keeps (decode uses one, each
// prompt shape one more).
const maxSteps = 8

// attnPad is the attention window's granule at single-token steps: a
// token attends over the cache rounded up to a multiple of it (the slots
// past the current token masked to -inf). The decode graph is built over
// the whole context and narrowed to that window before each token
// (step.narrow), so one graph serves every position; the granule keeps
// the attention rows a whole number of the dot kernels' 32-float steps,
// so that the masked slots only add zeros (see RATIONALE.md, "One decode
// graph, narrowed to the attention window").
const attnPad = 32

// Phases split one Eval's wall time: building the graph (and checking the
// backend supports it), placing it with the graph allocator, uploading
// the inputs and computing, and reading the logits back.
type Phases struct {
	Build, Alloc, Compute, Read time.Duration
}

// LastPhases returns the phases of the last successful Eval.
func (m *Model) LastPhases() Phases { return m.last }

// New places the weights w (with w.Config's shape and weight type) and an
// empty KV cache on the backend, and reserves a compute buffer for a
// batch of one token. Nothing stays allocated on error.
func New(w *Weights, o Options) (*Model, error) {
	if w == nil {
		return nil, fmt.Errorf("%w: nil weights", ErrConfig)
	}
	cfg := w.Config
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if len(o.Backends) > 1 {
		return newMulti(w, o)
	}
	bt, err := o.bufferType()
	if err != nil {
		return nil, err
	}
	m := &Model{cfg: cfg, be: o.Backend, bt: bt, strat: o.Strategy}
	if err := m.init(w); err != nil {
		m.Close()
		return nil, err
	}
	return m, nil
}

func (m *Model) init(w *Weights) error {
	return m.initWith(func() error { return m.loadWeights(w) })
}

// initWith places the weights with load, then the KV cache and the graph
// allocator.
func (m *Model) initWith(load func() error) error {
	if err := load(); err != nil {
		return err
	}
	if err := m.allocKV(); err != nil {
		return err
	}
	cbt := m.be.DefaultBufferType()
	if cbt == nil {
		cbt = m.bt
	}
	var err error
	if m.alloc, err = gallocr.New(cbt, gallocr.WithStrategy(m.strat)); err != nil {
		return err
	}
	if m.alloc1, err = gallocr.New(cbt, gallocr.WithStrategy(m.strat)); err != nil {
		return err
	}
	if err := m.Reserve(1); err != nil {
		return err
	}
	return m.prepareDecode()
}

// prepareDecode sizes the single-token compute buffer for the last cache
// position (the largest attention window), touches it, and builds and
// places the graph of the first decode window, the one generations start
// with: otherwise the first generated token pays for building and placing
// its graph (0.5 ms on the small decoder, ten of its tokens).
func (m *Model) prepareDecode() error {
	s, err := m.build(1, m.cfg.Ctx-1, false)
	if err != nil {
		return fmt.Errorf("llama: reserve: %w", err)
	}
	if err := m.alloc1.Reserve(s.g); err != nil {
		return fmt.Errorf("llama: reserve: %w", err)
	}
	if err := clearHost(m.alloc1); err != nil {
		return err
	}
	if m.stats.DecodeComputeBytes, err = m.alloc1.BufferSize(0); err != nil {
		return err
	}
	if s, err = m.step(1, 0, true); err != nil {
		return fmt.Errorf("llama: reserve: %w", err)
	}
	if err := m.place(m.alloc1, s); err != nil {
		return fmt.Errorf("llama: reserve: %w", err)
	}
	m.allocated1 = s
	return nil
}

// clearHost zeroes a's host compute buffers, touching their memory at
// load rather than in the first graph that uses it (see Reserve).
func clearHost(a *gallocr.Allocator) error {
	for _, b := range a.Buffers(0) {
		if b.Type().IsHost() {
			if err := b.Clear(0); err != nil {
				return fmt.Errorf("llama: reserve: %w", err)
			}
		}
	}
	return nil
}

// Config returns the model's shape.
func (m *Model) Config() Config { return m.cfg }

// NPast is the number of tokens in the KV cache.
func (m *Model) NPast() int { return m.nPast }

// Stats returns the memory summary.
func (m *Model) Stats() MemoryStats { return m.stats }

// Reset empties the KV cache (the memory is kept; it is overwritten).
func (m *Model) Reset() { m.nPast = 0 }

// Close frees every buffer of the model.
func (m *Model) Close() error {
	var errs []error
	m.steps, m.allocated, m.allocated1 = nil, nil, nil
	for _, a := range []**gallocr.Allocator{&m.alloc, &m.alloc1} {
		if *a != nil {
			(*a).Free()
			*a = nil
		}
	}
	if m.sch != nil {
		m.sch.Free()
		m.sch = nil
	}
	for _, b := range m.extra {
		errs = append(errs, b.Free())
	}
	m.extra = nil
	for _, b := range []*runtime.Buffer{&m.wbuf, &m.kvbuf} {
		if *b != nil {
			errs = append(errs, (*b).Free())
			*b = nil
		}
	}
	return errors.Join(errs...)
}

func (m *Model) loadWeights(w *Weights) error {
	cfg := m.cfg
	d, f, dkv, dq := int64(cfg.Dim), int64(cfg.FFN), int64(cfg.KVDim()), int64(cfg.QDim())
	if len(w.Layers) != cfg.Layers {
		return fmt.Errorf("%w: %d layer weights for %d layers", ErrConfig, len(w.Layers), cfg.Layers)
	}
	if cfg.QKVBias || cfg.OutBias || cfg.QKNorm || cfg.RopeFreqs {
		return fmt.Errorf("%w: Weights have no biases, q/k norms or RoPE factors (those come from GGUF files)", ErrConfig)
	}
	// One context per device holding weights (one in all on one backend).
	ctxs := make([]*runtime.Context, max(1, len(m.multi)))
	for i := range ctxs {
		ctxs[i] = runtime.NewContext()
	}
	ctx := ctxs[0]
	type upload struct {
		t *runtime.Tensor
		v []float32
	}
	var ups []upload
	mat := func(name string, in, out int64, v []float32) *runtime.Tensor {
		ctx := ctxs[m.deviceOf(name)]
		t := ctx.NewTensor2D(cfg.matType(int(in)), in, out)
		if t != nil {
			t.Name = name
			ups = append(ups, upload{t, v})
		}
		return t
	}
	vec := func(name string, v []float32) *runtime.Tensor {
		ctx := ctxs[m.deviceOf(name)]
		t := ctx.NewTensor1D(runtime.TypeF32, d)
		if t != nil {
			t.Name = name
			ups = append(ups, upload{t, v})
		}
		return t
	}
	m.tokEmb = mat("tok_embeddings", d, int64(cfg.Vocab), w.TokEmb)
	for l, lw := range w.Layers {
		p := fmt.Sprintf("blk.%d.", l)
		m.layers = append(m.layers, layer{
			attnNorm: vec(p+"attn_norm", lw.AttnNorm),
			wq:       mat(p+"attn_q", d, dq, lw.Wq),
			wk:       mat(p+"attn_k", d, dkv, lw.Wk),
			wv:       mat(p+"attn_v", d, dkv, lw.Wv),
			wo:       mat(p+"attn_output", dq, d, lw.Wo),
			ffnNorm:  vec(p+"ffn_norm", lw.FFNNorm),
			w1:       mat(p+"ffn_gate", d, f, lw.W1),
			w2:       mat(p+"ffn_down", f, d, lw.W2),
			w3:       mat(p+"ffn_up", d, f, lw.W3),
		})
	}
	m.outNorm = vec("output_norm", w.OutNorm)
	m.output = mat("output", d, int64(cfg.Vocab), w.Output)
	for _, ctx := range ctxs {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("llama: weights: %w", err)
		}
	}
	for _, u := range ups {
		if int64(len(u.v)) != u.t.Nelements() {
			return fmt.Errorf("%w: weight %q has %d values, want %d", ErrConfig, u.t.Name, len(u.v), u.t.Nelements())
		}
	}
	if m.multi != nil {
		if err := m.allocWeightsMulti(ctxs); err != nil {
			return err
		}
	} else if err := m.allocWeights(ctx); err != nil {
		return err
	}
	for _, u := range ups {
		b := make([]byte, u.t.NBytes())
		if err := cpukernels.FromFloat(u.t.Type, u.v, b); err != nil {
			return fmt.Errorf("llama: weight %q: %w", u.t.Name, err)
		}
		if err := runtime.SetTensorData(u.t, b, 0); err != nil {
			return fmt.Errorf("llama: upload weight %q: %w", u.t.Name, err)
		}
	}
	return nil
}

// allocWeights places ctx's tensors in new buffers of m.bt (split by its
// max size) and records them as the weights.
func (m *Model) allocWeights(ctx *runtime.Context) error {
	buf, err := gallocr.AllocCtxTensors(ctx, m.bt)
	if err != nil {
		return fmt.Errorf("llama: weights: %w", err)
	}
	m.wbuf = buf
	m.stats.WeightsBytes = buf.Size()
	m.stats.WeightsBuffers = 1
	if mb, ok := buf.(*runtime.MultiBuffer); ok {
		m.stats.WeightsBuffers = len(mb.Parts())
	}
	return nil
}

func (m *Model) allocKV() error {
	cfg := m.cfg
	ctx := runtime.NewContext()
	for l := range m.layers {
		k := ctx.NewTensor2D(runtime.TypeF32, int64(cfg.KVDim()), int64(cfg.Ctx))
		v := ctx.NewTensor2D(runtime.TypeF32, int64(cfg.Ctx), int64(cfg.KVDim()))
		if k == nil || v == nil {
			break
		}
		k.Name, v.Name = fmt.Sprintf("cache_k_l%d", l), fmt.Sprintf("cache_v_l%d", l)
		m.layers[l].k, m.layers[l].v = k, v
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("llama: kv cache: %w", err)
	}
	// The cache gets buffers of its own (several if the buffer type's max
	// size is small), apart from the weights and the compute buffer.
	buf, err := gallocr.AllocCtxTensors(ctx, m.bt)
	if err != nil {
		return fmt.Errorf("llama: kv cache: %w", err)
	}
	m.kvbuf = buf
	buf.SetUsage(runtime.UsageCompute)
	m.stats.KVBuffers = 1
	if mb, ok := buf.(*runtime.MultiBuffer); ok {
		m.stats.KVBuffers = len(mb.Parts())
	}
	if err := buf.Clear(0); err != nil {
		return fmt.Errorf("llama: kv cache: %w", err)
	}
	m.stats.KVBytes = buf.Size()
	return nil
}

// step is one built graph and its input and output tensors. The tensors
// that depend on where the new tokens go in the cache (the slot views
// their keys and values are copied into, the copies themselves, the
// causal masks) are listed so that bind can move them to another position
// without building the graph again.
type step struct {
	key         stepKey
	g           *runtime.Graph
	tokens, pos *runtime.Tensor
	logits      *runtime.Tensor
	// kSlots/vSlots: per layer, the views of the cache slots and the CPY
	// nodes writing them (both views of the cache); masks: the
	// DIAG_MASK_INF nodes. bound is the position they point at.
	kSlots, vSlots []*runtime.Tensor
	masks          []*runtime.Tensor
	bound          int
	// Per layer, the tensors whose shape is the attention window: the
	// key and value views of the cache (kWin, vWin) and the scores before
	// and after the mask and soft_max (scores: kq, masked, soft, layer
	// after layer). attn is the window they have now, at most key.t.
	kWin, vWin []*runtime.Tensor
	scores     []*runtime.Tensor
	attn       int
}

// window is the number of cache slots a batch of n tokens after nPast
// attends over: exactly nPast+n for a batch, rounded up to attnPad (at
// most the context) for one token.
func (m *Model) window(n, nPast int) int {
	t := nPast + n
	if n == 1 {
		t = min(m.cfg.Ctx, (t+attnPad-1)/attnPad*attnPad)
	}
	return t
}

// graphWindow is the attention window a kept graph for n tokens after
// nPast is built with: the whole context for one token (step.narrow
// narrows it to m.window before each token), m.window for a batch.
func (m *Model) graphWindow(n, nPast int) int {
	if n == 1 && m.sch == nil {
		return m.cfg.Ctx
	}
	return m.window(n, nPast)
}

// build makes the graph that evaluates n tokens at positions nPast..:
// it writes their keys and values into the cache (views of the slots, Cpy
// into them) and attends over the first T cached slots, T =
// m.graphWindow(n, nPast) (the causal mask hides the slots after each
// token).
// With last set, only the last token's logits are computed: after the
// last layer's attention the batch narrows to its last row, as llama.cpp
// computes only the outputs it is asked for.
func (m *Model) build(n, nPast int, last bool) (*step, error) {
	cfg := m.cfg
	ctx := runtime.NewContext()
	g := runtime.NewGraph()
	tw := m.graphWindow(n, nPast)
	N, T := int64(n), int64(tw)
	H, hd := int64(cfg.Heads), int64(cfg.HeadDim())
	Hkv, dkv := int64(cfg.NKVHeads()), int64(cfg.KVDim())
	const f32 = 4

	s := &step{key: stepKey{n, tw, last}, g: g, bound: nPast, attn: tw}
	s.tokens = ctx.NewTensor1D(runtime.TypeI32, N)
	s.pos = ctx.NewTensor1D(runtime.TypeI32, N)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	s.tokens.Name, s.pos.Name = "tokens", "positions"
	s.tokens.SetInput()
	s.pos.SetInput()

	named := func(t *runtime.Tensor, name string, l int) *runtime.Tensor {
		if t != nil {
			t.Name = fmt.Sprintf("%s-%d", name, l)
		}
		return t
	}
	rp := cfg.ropeParams()
	scale := float32(1 / math.Sqrt(float64(hd)))
	if cfg.AttnScale != 0 {
		scale = cfg.AttnScale
	}
	// residual scales a block's output before its residual add (granite).
	residual := func(t *runtime.Tensor) *runtime.Tensor {
		if cfg.ResidualScale != 0 {
			t = ctx.Scale(t, cfg.ResidualScale)
		}
		return t
	}
	dq := int64(cfg.QDim())
	// proj is w·h, times the scale sc and plus the bias b where there
	// are (llama.cpp's order for q, k, v and the attention output).
	proj := func(w, sc, b, h *runtime.Tensor) *runtime.Tensor {
		y := ctx.MulMat(w, h)
		if sc != nil {
			y = ctx.Mul(y, sc)
		}
		if b != nil {
			y = ctx.Add(y, b)
		}
		return y
	}
	// ffnProj is w·h plus the bias b, times the scale sc (build_ffn's
	// order: the bias first).
	ffnProj := func(w, b, sc, h *runtime.Tensor) *runtime.Tensor {
		y := ctx.MulMat(w, h)
		if b != nil {
			y = ctx.Add(y, b)
		}
		if sc != nil {
			y = ctx.Mul(y, sc)
		}
		return y
	}
	// heads reshapes a projection to {hd, heads, N}, normalizes each head
	// with norm when there is one, and rotates it unless layer l has no
	// RoPE.
	heads := func(t, norm *runtime.Tensor, nh int64, l int) *runtime.Tensor {
		t = ctx.Reshape(t, hd, nh, N)
		if norm != nil {
			t = ctx.Mul(ctx.RMSNorm(t, cfg.Eps), norm)
		}
		if cfg.ropeLayer(l) {
			t = ctx.RopeExt(t, s.pos, m.ropeFreqs, int(hd), cfg.RopeMode, rp)
		}
		return t
	}
	// lastRow narrows {w, N} to its last row {w, 1}.
	lastRow := func(t *runtime.Tensor) *runtime.Tensor {
		if t == nil {
			return nil
		}
		return ctx.View2D(t, t.Ne[0], 1, t.Nb[1], uint64(N-1)*t.Nb[1])
	}

	x := ctx.GetRows(m.tokEmb, s.tokens) // {d, N}
	if cfg.EmbedScale != 0 {
		x = ctx.Scale(x, cfg.EmbedScale)
	}
	for l, ly := range m.layers {
		h := ctx.Mul(ctx.RMSNorm(x, cfg.Eps), ly.attnNorm)
		q := named(heads(proj(ly.wq, ly.sq, ly.bq, h), ly.qNorm, H, l), "q", l)
		k := named(heads(proj(ly.wk, ly.sk, ly.bk, h), ly.kNorm, Hkv, l), "k", l)
		v := named(proj(ly.wv, ly.sv, ly.bv, h), "v", l) // {dkv, N}

		// Write this step's keys and values into their cache slots.
		kSlot := ctx.View1D(ly.k, N*dkv, uint64(nPast)*uint64(dkv)*f32)
		vSlot := ctx.View2D(ly.v, N, dkv, uint64(cfg.Ctx)*f32, uint64(nPast)*f32)
		cpyK := ctx.Cpy(k, kSlot)
		cpyV := ctx.Cpy(ctx.Transpose(v), vSlot)
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		s.kSlots = append(s.kSlots, kSlot, cpyK)
		s.vSlots = append(s.vSlots, vSlot, cpyV)
		if err := g.BuildForwardExpand(cpyK); err != nil {
			return nil, err
		}
		if err := g.BuildForwardExpand(cpyV); err != nil {
			return nil, err
		}

		// Attend over the first T cached slots; with fewer kv heads
		// MulMat broadcasts each over Heads/KVHeads query heads.
		Q := ctx.Permute(q, 0, 2, 1, 3)                                                           // {hd, N, H}
		K := ctx.View3D(ly.k, hd, T, Hkv, uint64(dkv)*f32, uint64(hd)*f32, 0)                     // {hd, T, Hkv}
		V := ctx.View3D(ly.v, T, hd, Hkv, uint64(cfg.Ctx)*f32, uint64(cfg.Ctx)*uint64(hd)*f32, 0) // {T, hd, Hkv}
		kq := named(ctx.MulMat(K, Q), "kq", l)                                                    // {T, N, H}
		masked := ctx.DiagMaskInf(kq, nPast)
		s.masks = append(s.masks, masked)
		soft := named(ctx.SoftMaxExt(masked, nil, scale, 0), "kq_soft_max", l)
		s.kWin, s.vWin = append(s.kWin, K), append(s.vWin, V)
		s.scores = append(s.scores, kq, masked, soft)
		kq = soft
		kqv := ctx.MulMat(V, kq)                                   // {hd, N, H}
		o := ctx.Cont4D(ctx.Permute(kqv, 0, 2, 1, 3), dq, N, 1, 1) // {dq, N}
		if last && N > 1 && l == len(m.layers)-1 {
			o, x = lastRow(o), lastRow(x)
		}
		o = proj(ly.wo, ly.so, ly.bo, o)
		x = named(ctx.Add(x, residual(o)), "attn_out", l)

		h = ctx.Mul(ctx.RMSNorm(x, cfg.Eps), ly.ffnNorm)
		gate := ctx.SILU(ffnProj(ly.w1, ly.bGate, ly.sGate, h))
		up := ffnProj(ly.w3, ly.bUp, ly.sUp, h)
		down := ffnProj(ly.w2, ly.bDown, ly.sDown, ctx.Mul(gate, up))
		x = named(ctx.Add(x, residual(down)), "ffn_out", l)
	}
	x = ctx.Mul(ctx.RMSNorm(x, cfg.Eps), m.outNorm)
	s.logits = ctx.MulMat(m.output, x) // {vocab, N} or {vocab, 1}
	if m.outBias != nil {
		s.logits = ctx.Add(s.logits, m.outBias)
	}
	if cfg.LogitScale != 0 {
		s.logits = ctx.Scale(s.logits, 1/cfg.LogitScale)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.logits.Name = "logits"
	s.logits.SetOutput()
	if err := g.BuildForwardExpand(s.logits); err != nil {
		return nil, err
	}
	for _, nd := range g.Nodes() {
		if m.sch == nil && !m.be.SupportsOp(nd) {
			return nil, fmt.Errorf("llama: backend %s cannot compute node %q (%s %s %v): %w",
				m.be.Name(), nd.Name, nd.Op, nd.Type, nd.Ne, runtime.ErrUnsupported)
		}
	}
	return s, nil
}

// bind points a built step at cache position nPast: its slot views and
// copies move to the slots of positions nPast.., its causal masks start
// at nPast. The graph keeps its shape, so its allocation stays valid.
func (s *step) bind(m *Model, nPast int) error {
	n, _ := s.key.n, s.key.t
	if nPast < 0 || nPast+n > s.key.t {
		return fmt.Errorf("llama: a graph for %d tokens over %d slots cannot start at %d: %w", n, s.key.t, nPast, ErrContextFull)
	}
	if err := s.narrow(m.window(n, nPast)); err != nil {
		return err
	}
	if nPast == s.bound {
		return nil
	}
	const f32 = 4
	kOff := uint64(nPast) * uint64(m.cfg.KVDim()) * f32
	vOff := uint64(nPast) * f32
	for _, t := range s.kSlots {
		if err := moveView(t, kOff); err != nil {
			return err
		}
	}
	for _, t := range s.vSlots {
		if err := moveView(t, vOff); err != nil {
			return err
		}
	}
	for _, t := range s.masks {
		t.SetOpParamI32(0, int32(nPast))
	}
	s.bound = nPast
	return nil
}

// narrow sets the attention window of s to the first t cache slots
// (at most key.t, the window it was built and placed with): the key and
// value views and the scores take t slots, the scores' rows t values.
// Every tensor only shrinks from its placed size, so the graph's
// allocation stays valid; the graph allocator places s at key.t
// (Model.place).
func (s *step) narrow(t int) error {
	if t == s.attn {
		return nil
	}
	if t < 1 || t > s.key.t {
		return fmt.Errorf("llama: attention window %d outside the graph's 1..%d: %w", t, s.key.t, ErrContextFull)
	}
	T := int64(t)
	for _, k := range s.kWin {
		k.Ne[1] = T // {hd, T, Hkv}
	}
	for _, v := range s.vWin {
		v.Ne[0] = T // {T, hd, Hkv}
	}
	for _, sc := range s.scores {
		sc.Ne[0] = T // {T, N, H}, dense
		sc.Nb = runtime.ContiguousStrides(sc.Type, sc.Ne)
	}
	s.attn = t
	return nil
}

// place has al place s's graph at the window s was built with (its
// largest), then narrows it back to the window it had.
func (m *Model) place(al *gallocr.Allocator, s *step) error {
	t := s.attn
	if err := s.narrow(s.key.t); err != nil {
		return err
	}
	err := al.AllocGraph(s.g)
	if nerr := s.narrow(t); err == nil {
		err = nerr
	}
	return err
}

// moveView moves view t to offs bytes into its base (ViewOffs, the VIEW
// op's offset parameters, and its place when it is allocated), checking
// that it stays inside the base.
func moveView(t *runtime.Tensor, offs uint64) error {
	base := t.ViewSrc
	if base == nil {
		return fmt.Errorf("llama: tensor %q is not a view: %w", t.Name, runtime.ErrView)
	}
	if n, bn := t.NBytes(), base.NBytes(); offs > bn || n > bn-offs {
		return fmt.Errorf("llama: view %q: %d bytes at offset %d outside %q of %d bytes: %w", t.Name, n, offs, base.Name, bn, runtime.ErrView)
	}
	t.ViewOffs = offs
	if t.Op == runtime.OpView {
		t.OpParams[0] = int32(uint32(offs))
		t.OpParams[1] = int32(uint32(offs >> 32))
	}
	if t.Buffer != nil && base.Buffer != nil {
		t.Buffer, t.Offset = base.Buffer, base.Offset+offs
		if err := t.Buffer.InitTensor(t); err != nil {
			t.Buffer, t.Offset = nil, 0
			return fmt.Errorf("llama: view %q: %w", t.Name, err)
		}
	}
	return nil
}

// Reserve sizes the compute buffer for batches of up to maxBatch tokens
// anywhere in the context: it plans the largest such graph (maxBatch new
// tokens ending at the last cache position), so every later Eval with at
// most maxBatch tokens reuses the buffer without reallocating.
func (m *Model) Reserve(maxBatch int) error {
	if maxBatch < 1 || maxBatch > m.cfg.Ctx {
		return fmt.Errorf("llama: reserve batch %d outside 1..%d: %w", maxBatch, m.cfg.Ctx, ErrContextFull)
	}
	s, err := m.build(maxBatch, m.cfg.Ctx-maxBatch, false)
	if err != nil {
		return fmt.Errorf("llama: reserve: %w", err)
	}
	// The reserve may replace the compute buffer: the kept graphs are
	// placed again before their next run.
	m.allocated = nil
	if m.sch != nil {
		return m.reserveMulti(s, maxBatch)
	}
	if err := m.alloc.Reserve(s.g); err != nil {
		return fmt.Errorf("llama: reserve: %w", err)
	}
	m.reserved = maxBatch
	// Touch the host compute memory now, at load, rather than in the first
	// graph (a page fault per 4 KiB, or a huge page zeroed, in the middle
	// of the prompt): every graph overwrites what it reads. See
	// RATIONALE.md, "Weights and compute memory touched at load".
	if err := clearHost(m.alloc); err != nil {
		return err
	}
	size, err := m.alloc.BufferSize(0)
	if err != nil {
		return err
	}
	m.stats.ComputeBytes = size
	m.stats.ComputeLowerBound = 0
	if lb := m.alloc.Plan().LowerBound(); len(lb) > 0 {
		m.stats.ComputeLowerBound = lb[0]
	}
	m.stats.Nodes, m.stats.Leafs = s.g.NumNodes(), s.g.NumLeafs()
	m.stats.ReservedBatch = maxBatch
	m.stats.Strategy = m.strat
	return nil
}

// Eval runs tokens (appended after the cached ones) through the model and
// returns their logits: len(tokens) rows of Vocab values. A batch larger
// than the reserved one reserves again first.
func (m *Model) Eval(tokens []int32) ([]float32, error) { return m.eval(nil, tokens, false) }

// EvalLast is Eval returning the last token's logits only (Vocab values),
// computed for that token alone after the last layer's attention: what a
// generation needs, at a fraction of a long prompt's cost. The values
// equal the last row of Eval's up to the order of float sums.
func (m *Model) EvalLast(tokens []int32) ([]float32, error) { return m.eval(nil, tokens, true) }

// step returns the graph for n tokens after nPast, bound to nPast: a kept
// one of that shape, or a new one (kept on one backend; over several the
// scheduler splits each graph, so it is built each time).
func (m *Model) step(n, nPast int, last bool) (*step, error) {
	if m.sch != nil {
		return m.build(n, nPast, last)
	}
	key := stepKey{n, m.graphWindow(n, nPast), last}
	if s, ok := m.steps[key]; ok {
		return s, s.bind(m, nPast)
	}
	s, err := m.build(n, nPast, last)
	if err != nil {
		return nil, err
	}
	if err := s.narrow(m.window(n, nPast)); err != nil {
		return nil, err
	}
	if m.steps == nil || len(m.steps) >= maxSteps {
		m.steps = make(map[stepKey]*step)
	}
	m.steps[key] = s
	return s, nil
}

// eval evaluates tokens and returns their logits (every row, or the last
// with last set) in dst's memory when it has room, else in a new slice:
// Generate passes the previous token's logits, so that a token allocates
// nothing.
func (m *Model) eval(dst []float32, tokens []int32, last bool) ([]float32, error) {
	n := len(tokens)
	if n == 0 {
		return nil, fmt.Errorf("llama: eval: no tokens: %w", runtime.ErrShape)
	}
	if m.nPast+n > m.cfg.Ctx {
		return nil, fmt.Errorf("llama: eval %d tokens after %d: context %d: %w", n, m.nPast, m.cfg.Ctx, ErrContextFull)
	}
	for i, t := range tokens {
		if t < 0 || int(t) >= m.cfg.Vocab {
			return nil, fmt.Errorf("llama: token %d at position %d outside vocabulary 0..%d: %w", t, i, m.cfg.Vocab-1, ErrToken)
		}
	}
	if n > m.reserved {
		if err := m.Reserve(n); err != nil {
			return nil, err
		}
	}
	var ph Phases
	t0 := time.Now()
	s, err := m.step(n, m.nPast, last)
	if err != nil {
		return nil, fmt.Errorf("llama: eval: %w", err)
	}
	t1 := time.Now()
	ph.Build = t1.Sub(t0)
	switch {
	case m.sch != nil:
		err = m.sch.AllocGraph(s.g)
	default:
		// A graph keeps its places while no other graph is placed in
		// between by its allocator (the allocator's buffers stay, and so
		// does the plan's layout for this graph's nodes); single tokens
		// have an allocator of their own.
		al, placed := m.alloc, &m.allocated
		if n == 1 {
			al, placed = m.alloc1, &m.allocated1
		}
		if s != *placed {
			*placed = nil
			if err = m.place(al, s); err == nil {
				*placed = s
			}
		}
	}
	if err != nil {
		return nil, fmt.Errorf("llama: eval: %w", err)
	}
	t2 := time.Now()
	ph.Alloc = t2.Sub(t1)
	if cap(m.inBuf) < 8*n {
		m.inBuf = make([]byte, 8*n)
	}
	tb := m.inBuf[:8*n]
	pb := tb[4*n:]
	for i, t := range tokens {
		binary.LittleEndian.PutUint32(tb[4*i:], uint32(t))
		binary.LittleEndian.PutUint32(pb[4*i:], uint32(m.nPast+i))
	}
	if err := runtime.SetTensorData(s.tokens, tb[:4*n], 0); err != nil {
		return nil, fmt.Errorf("llama: eval: %w", err)
	}
	if err := runtime.SetTensorData(s.pos, pb, 0); err != nil {
		return nil, fmt.Errorf("llama: eval: %w", err)
	}
	if m.sch != nil {
		err = m.sch.Compute(s.g)
	} else {
		err = m.be.Compute(s.g)
	}
	if err != nil {
		return nil, fmt.Errorf("llama: eval on %s: %w", m.be.Name(), err)
	}
	if as, ok := m.be.(runtime.AsyncBackend); ok {
		if err := as.Synchronize(); err != nil {
			return nil, fmt.Errorf("llama: eval on %s: %w", m.be.Name(), err)
		}
	}
	t3 := time.Now()
	ph.Compute = t3.Sub(t2)
	// The logits' little-endian bytes are read straight into the result
	// (its own Go memory), then put in host order where that differs.
	out := dst[:0]
	if k := int(s.logits.NBytes() / 4); cap(out) >= k {
		out = out[:k]
	} else {
		out = make([]float32, k)
	}
	if err := runtime.GetTensorData(s.logits, float32Bytes(out), 0); err != nil {
		return nil, fmt.Errorf("llama: read logits: %w", err)
	}
	if !littleEndian {
		for i, v := range out {
			out[i] = math.Float32frombits(bits.ReverseBytes32(math.Float32bits(v)))
		}
	}
	ph.Read = time.Since(t3)
	m.last = ph
	m.nPast += n
	return out, nil
}

// Argmax returns the index of the largest value (the first on ties); -1
// for an empty slice.
func Argmax(v []float32) int {
	best := -1
	for i, x := range v {
		if best < 0 || x > v[best] {
			best = i
		}
	}
	return best
}

// littleEndian reports whether this machine stores a uint32's low byte
// first, as tensor bytes are laid out (set at start, never written).
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// float32Bytes views v's memory (Go memory, not a device's) as bytes.
func float32Bytes(v []float32) []byte {
	if len(v) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), 4*len(v))
}
