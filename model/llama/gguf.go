package llama

import (
	"errors"
	"fmt"
	"math"
	"os"
	goruntime "runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/gogml/gogml/backends/cpu"
	"github.com/gogml/gogml/gallocr"
	"github.com/gogml/gogml/gguf"
	cpukernels "github.com/gogml/gogml/internal/kernels/cpukernels"
	"github.com/gogml/gogml/runtime"
)

// ErrUnsupportedModel is wrapped when a GGUF file holds a model this
// decoder cannot run (another architecture, a weight type without
// kernels, a feature such as RoPE scaling or feed-forward biases).
var ErrUnsupportedModel = errors.New("llama: unsupported model")

// Arch is the general.architecture NewGGUFWriter writes.
const Arch = "llama"

// archInfo is what an architecture changes in the llama decoder, as
// llama.cpp 0.7.0 builds it (src/models/ARCH.cpp, llama_model_rope_type).
type archInfo struct {
	ropeMode   int32 // llama.cpp's rope type for the architecture
	noRopeStep int   // hard-coded in llama.cpp, no GGUF key
	qkNorm     bool  // attn_q_norm/attn_k_norm required
	qkvBias    bool  // attn_q/k/v.bias required (optional elsewhere)
	ropeFreqs  bool  // the graph applies rope_freqs.weight when present
	// ffnBias: the graph adds ffn_{gate,up,down}.bias when present (the
	// others' loaders refuse them); ffnScales: it applies the
	// ffn_{gate,up,down}.scale the loader reads for every architecture
	// (qwen2's and smollm3's graphs pass none to build_ffn and leave them
	// unused). The q/k/v and attention output scales are applied by all.
	ffnBias, ffnScales bool
	// granite: the embedding, residual, attention and logit multipliers
	// of granite's graph, and RoPE only when rope.scaling.finetuned
	// (default true) says so.
	granite bool
}

// archs are the general.architecture values gogml runs.
func archs() map[string]archInfo {
	return map[string]archInfo{
		"llama":    {ropeMode: runtime.RopeNormal, ropeFreqs: true, ffnBias: true, ffnScales: true},
		"mistral3": {ropeMode: runtime.RopeNormal, ropeFreqs: true, ffnBias: true, ffnScales: true},
		"smollm3":  {ropeMode: runtime.RopeNormal, noRopeStep: 4},
		"qwen2":    {ropeMode: runtime.RopeNeoX, qkvBias: true},
		"qwen3":    {ropeMode: runtime.RopeNeoX, qkNorm: true, ffnScales: true},
		// llama-shaped relatives, each checked against llama.cpp's logits
		// on test-llama-archs' own file (the RoPE mode and whether the
		// feed-forward scales apply are what tell them apart there).
		"exaone":    {ropeMode: runtime.RopeNeoX, ropeFreqs: true},
		"nanbeige":  {ropeMode: runtime.RopeNormal, ropeFreqs: true, ffnScales: true},
		"internlm2": {ropeMode: runtime.RopeNormal},
		"xverse":    {ropeMode: runtime.RopeNormal},
		"granite":   {ropeMode: runtime.RopeNormal, ropeFreqs: true, ffnBias: true, granite: true},
	}
}

// Archs lists the general.architecture values LoadGGUF runs, sorted.
func Archs() []string {
	var out []string
	for a := range archs() {
		out = append(out, a)
	}
	sort.Strings(out)
	return out
}

// llama.cpp's token types (tokenizer.ggml.token_type).
const (
	tokenNormal  = 1
	tokenUnknown = 2
	tokenControl = 3
	tokenByte    = 6
)

// SupportedWeightType reports whether matrices of type t can be run: the
// types the CPU kernels convert and multiply (f32, f16, bf16, q4_0, q4_1,
// q5_0, q5_1, q8_0, q2_K..q6_K, and the activation types q8_1 and q8_K).
func SupportedWeightType(t runtime.Type) bool { return cpukernels.IsRowType(t) }

// fileTypes pairs each type NewGGUFWriter writes with llama.cpp's
// general.file_type (enum llama_ftype) for a model whose matrices are of
// it, in that enum's order. A k-quant maps to its "_S" variant
// (MOSTLY_Q3_K_S, Q4_K_S, Q5_K_S), the one closest to a file of one type;
// llama.cpp only prints the value.
func fileTypes() []struct {
	t  runtime.Type
	ft uint32
} {
	return []struct {
		t  runtime.Type
		ft uint32
	}{
		{runtime.TypeF32, 0}, {runtime.TypeF16, 1}, {runtime.TypeQ4_0, 2}, {runtime.TypeQ4_1, 3},
		{runtime.TypeQ8_0, 7}, {runtime.TypeQ5_0, 8}, {runtime.TypeQ5_1, 9}, {runtime.TypeQ2_K, 10},
		{runtime.TypeQ3_K, 11}, {runtime.TypeQ4_K, 14}, {runtime.TypeQ5_K, 16}, {runtime.TypeQ6_K, 18},
		{runtime.TypeBF16, 32},
	}
}

// fileType is general.file_type for matrices of type t (see fileTypes).
func fileType(t runtime.Type) (uint32, bool) {
	for _, p := range fileTypes() {
		if p.t == t {
			return p.ft, true
		}
	}
	return 0, false
}

// WritableTypes lists the matrix types NewGGUFWriter writes, in
// llama.cpp's file-type order.
func WritableTypes() []runtime.Type {
	var ts []runtime.Type
	for _, p := range fileTypes() {
		ts = append(ts, p.t)
	}
	return ts
}

// DemoVocab is the small SentencePiece-style vocabulary NewGGUFWriter
// writes for n tokens: <unk>, <s>, </s>, then the byte tokens <0x00>,
// <0x01>, ... (llama.cpp needs at least <0x0A>, so n >= 14), then tok<i>.
func DemoVocab(n int) (tokens []string, scores []float32, types []int32) {
	for i := 0; i < n; i++ {
		var s string
		tt := int32(tokenNormal)
		switch {
		case i == 0:
			s, tt = "<unk>", tokenUnknown
		case i == 1:
			s, tt = "<s>", tokenControl
		case i == 2:
			s, tt = "</s>", tokenControl
		case i-3 < 256:
			s, tt = fmt.Sprintf("<0x%02X>", i-3), tokenByte
		default:
			s = fmt.Sprintf("tok%d", i)
		}
		tokens = append(tokens, s)
		scores = append(scores, float32(-i))
		types = append(types, tt)
	}
	return tokens, scores, types
}

// NewGGUFWriter returns a writer holding w as a llama-architecture GGUF
// file that llama.cpp loads: the hyperparameters under llama.*, the
// DemoVocab vocabulary, and llama.cpp's tensor names. Matrices and the
// embedding are stored as typ, norm weights as f32. cfg.Dim must be a
// multiple of typ's block size (256 for the k-quants), since every matrix
// but ffn_down has rows of Dim; ffn_down stays f32 when FFN is not (as
// llama.cpp's quantizer falls back for such rows).
func NewGGUFWriter(w *Weights, typ runtime.Type) (*gguf.Writer, error) {
	cfg := w.Config
	vcfg := cfg
	vcfg.WeightType = runtime.TypeF32
	if err := vcfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.RopeMode != runtime.RopeNormal || cfg.NoRopeStep != 0 || cfg.QKVBias || cfg.OutBias || cfg.QKNorm || cfg.RopeFreqs {
		return nil, fmt.Errorf("%w: a llama file has normal RoPE in every layer and Weights no biases, q/k norms or RoPE factors", ErrConfig)
	}
	ft, ok := fileType(typ)
	if !ok {
		return nil, fmt.Errorf("%w: weight type %s (want one of %v)", ErrConfig, typ, WritableTypes())
	}
	if bs := typ.BlockSize(); int64(cfg.Dim)%bs != 0 {
		return nil, fmt.Errorf("%w: dim %d is not a multiple of %s's block of %d elements, so no matrix could be %s", ErrConfig, cfg.Dim, typ, bs, typ)
	}
	if cfg.Vocab < 14 {
		return nil, fmt.Errorf("%w: vocab %d: llama.cpp needs the byte token <0x0A>, so at least 14 tokens", ErrConfig, cfg.Vocab)
	}
	gw := gguf.NewWriter()
	tokens, scores, types := DemoVocab(cfg.Vocab)
	p := Arch + "."
	for _, kv := range []gguf.KV{
		{Key: "general.architecture", Value: gguf.Of(Arch)},
		{Key: "general.name", Value: gguf.Of("gogml demo decoder")},
		{Key: "general.file_type", Value: gguf.Of(ft)},
		{Key: p + "vocab_size", Value: gguf.Of(uint32(cfg.Vocab))},
		{Key: p + "context_length", Value: gguf.Of(uint32(cfg.Ctx))},
		{Key: p + "embedding_length", Value: gguf.Of(uint32(cfg.Dim))},
		{Key: p + "block_count", Value: gguf.Of(uint32(cfg.Layers))},
		{Key: p + "feed_forward_length", Value: gguf.Of(uint32(cfg.FFN))},
		{Key: p + "attention.head_count", Value: gguf.Of(uint32(cfg.Heads))},
		{Key: p + "attention.head_count_kv", Value: gguf.Of(uint32(cfg.NKVHeads()))},
		{Key: p + "rope.dimension_count", Value: gguf.Of(uint32(cfg.HeadDim()))},
		{Key: p + "attention.key_length", Value: gguf.Of(uint32(cfg.HeadDim()))},
		{Key: p + "attention.value_length", Value: gguf.Of(uint32(cfg.HeadDim()))},
		{Key: p + "rope.freq_base", Value: gguf.Of(cfg.RopeBase)},
		{Key: p + "attention.layer_norm_rms_epsilon", Value: gguf.Of(cfg.Eps)},
		{Key: "tokenizer.ggml.model", Value: gguf.Of("llama")},
		{Key: "tokenizer.ggml.tokens", Value: gguf.ArrayOf(tokens)},
		{Key: "tokenizer.ggml.scores", Value: gguf.ArrayOf(scores)},
		{Key: "tokenizer.ggml.token_type", Value: gguf.ArrayOf(types)},
		{Key: "tokenizer.ggml.unknown_token_id", Value: gguf.Of(uint32(0))},
		{Key: "tokenizer.ggml.bos_token_id", Value: gguf.Of(uint32(1))},
		{Key: "tokenizer.ggml.eos_token_id", Value: gguf.Of(uint32(2))},
	} {
		if err := gw.Set(kv.Key, kv.Value); err != nil {
			return nil, err
		}
	}
	d, f, dkv, dq := int64(cfg.Dim), int64(cfg.FFN), int64(cfg.KVDim()), int64(cfg.QDim())
	add := func(name string, t runtime.Type, v []float32, ne ...int64) error {
		if t.IsQuantized() && ne[0]%t.BlockSize() != 0 {
			t = runtime.TypeF32
		}
		n := int64(1)
		for _, x := range ne {
			n *= x
		}
		if int64(len(v)) != n {
			return fmt.Errorf("%w: weight %q has %d values, want %d", ErrConfig, name, len(v), n)
		}
		b := make([]byte, t.RowSize(ne[0])*uint64(n/ne[0]))
		if err := cpukernels.FromFloat(t, v, b); err != nil {
			return fmt.Errorf("llama: weight %q: %w", name, err)
		}
		return gw.AddTensor(name, t, ne, b)
	}
	if len(w.Layers) != cfg.Layers {
		return nil, fmt.Errorf("%w: %d layer weights for %d layers", ErrConfig, len(w.Layers), cfg.Layers)
	}
	errs := []error{add("token_embd.weight", typ, w.TokEmb, d, int64(cfg.Vocab))}
	for l, lw := range w.Layers {
		b := fmt.Sprintf("blk.%d.", l)
		errs = append(errs,
			add(b+"attn_norm.weight", runtime.TypeF32, lw.AttnNorm, d),
			add(b+"attn_q.weight", typ, lw.Wq, d, dq),
			add(b+"attn_k.weight", typ, lw.Wk, d, dkv),
			add(b+"attn_v.weight", typ, lw.Wv, d, dkv),
			add(b+"attn_output.weight", typ, lw.Wo, dq, d),
			add(b+"ffn_norm.weight", runtime.TypeF32, lw.FFNNorm, d),
			add(b+"ffn_gate.weight", typ, lw.W1, d, f),
			add(b+"ffn_up.weight", typ, lw.W3, d, f),
			add(b+"ffn_down.weight", typ, lw.W2, f, d))
	}
	errs = append(errs,
		add("output_norm.weight", runtime.TypeF32, w.OutNorm, d),
		add("output.weight", typ, w.Output, d, int64(cfg.Vocab)))
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return gw, nil
}

// ConfigFromGGUF reads a supported file's hyperparameters (an
// architecture of Archs). Ctx is the file's context length; WeightType is
// the type of the first layer's attn_q (or the embedding's), for display.
// The architecture sets RopeMode and NoRopeStep as llama.cpp does; the
// tensors present set QKVBias, OutBias and QKNorm.
func ConfigFromGGUF(f *gguf.File) (Config, error) {
	var cfg Config
	arch, err := f.String("general.architecture")
	if err != nil {
		return cfg, err
	}
	ai, ok := archs()[arch]
	if !ok {
		return cfg, fmt.Errorf("%w: architecture %q (gogml runs %v)", ErrUnsupportedModel, arch, Archs())
	}
	cfg.RopeMode, cfg.NoRopeStep = ai.ropeMode, ai.noRopeStep
	p := arch + "."
	ints := []struct {
		key string
		dst *int
		opt bool
	}{
		{"context_length", &cfg.Ctx, false}, {"embedding_length", &cfg.Dim, false}, {"block_count", &cfg.Layers, false},
		{"feed_forward_length", &cfg.FFN, false}, {"attention.head_count", &cfg.Heads, false},
		{"attention.head_count_kv", &cfg.KVHeads, true}, {"attention.key_length", &cfg.HeadSize, true},
	}
	for _, k := range ints {
		v, err := f.Int(p + k.key)
		if k.opt && errors.Is(err, gguf.ErrNotFound) {
			continue
		}
		if err != nil {
			return cfg, err
		}
		if v < 1 || v > 1<<30 {
			return cfg, fmt.Errorf("%w: %s%s = %d", ErrConfig, p, k.key, v)
		}
		*k.dst = int(v)
	}
	if cfg.Heads > 0 && cfg.HeadSize*cfg.Heads == cfg.Dim {
		cfg.HeadSize = 0 // the usual Dim/Heads
	}
	cfg.Eps, cfg.RopeBase = 1e-5, 10000
	for _, k := range []struct {
		key string
		dst *float32
	}{{"attention.layer_norm_rms_epsilon", &cfg.Eps}, {"rope.freq_base", &cfg.RopeBase}} {
		v, err := f.Float(p + k.key)
		if errors.Is(err, gguf.ErrNotFound) {
			continue
		}
		if err != nil {
			return cfg, err
		}
		*k.dst = float32(v)
	}
	if cfg.Heads > 0 && (cfg.HeadSize > 0 || cfg.Dim%cfg.Heads == 0) {
		hd := int64(cfg.HeadDim())
		for _, k := range []string{"rope.dimension_count", "attention.value_length"} {
			if v, err := f.Int(p + k); err == nil && v != hd {
				return cfg, fmt.Errorf("%w: %s%s = %d, gogml needs the head size %d", ErrUnsupportedModel, p, k, v, hd)
			}
		}
	}
	if err := ropeScalingFromGGUF(f, p, &cfg); err != nil {
		return cfg, err
	}
	// Settings llama.cpp's graphs for these architectures honour and the
	// decoder does not: a non-zero value is an error, not ignored.
	for _, k := range []string{"attention.scale", "attention.temperature_scale"} {
		if v, err := f.Float(p + k); err == nil && v != 0 && (arch == "mistral3" || arch == "smollm3") {
			return cfg, fmt.Errorf("%w: %s%s = %g", ErrUnsupportedModel, p, k, v)
		}
	}
	if ai.granite {
		if err := graniteFromGGUF(f, p, &cfg); err != nil {
			return cfg, err
		}
	}
	emb, ok := f.Tensor("token_embd.weight")
	if !ok {
		return cfg, fmt.Errorf("llama: tensor token_embd.weight: %w", gguf.ErrNotFound)
	}
	if emb.NDims != 2 || emb.Ne[1] < 1 || emb.Ne[1] > math.MaxInt32 {
		return cfg, fmt.Errorf("%w: token_embd.weight has shape %v", ErrConfig, emb.Shape())
	}
	cfg.Vocab = int(emb.Ne[1])
	cfg.WeightType = emb.Type
	if q, ok := f.Tensor("blk.0.attn_q.weight"); ok {
		cfg.WeightType = q.Type
	}
	_, bq := f.Tensor("blk.0.attn_q.bias")
	_, bo := f.Tensor("blk.0.attn_output.bias")
	cfg.QKVBias, cfg.OutBias = ai.qkvBias || bq, bo
	cfg.QKNorm = ai.qkNorm
	_, rf := f.Tensor("rope_freqs.weight")
	cfg.RopeFreqs = ai.ropeFreqs && rf
	for _, ti := range f.Tensors {
		if strings.HasPrefix(ti.Name, "blk.") && (strings.HasSuffix(ti.Name, ".ffn_gate.bias") ||
			strings.HasSuffix(ti.Name, ".ffn_up.bias") || strings.HasSuffix(ti.Name, ".ffn_down.bias")) && ai.ffnBias {
			cfg.FFNBias = true
			break
		}
	}
	cfg.ffnScales = ai.ffnScales
	_, cfg.OutputBias = f.Tensor("output.bias")
	for _, ti := range f.Tensors {
		if _, ok := scaleOf(ti.Name); ok {
			cfg.WeightScales = true
			break
		}
	}
	cfg.Seed = 0
	vcfg := cfg
	vcfg.WeightType = runtime.TypeF32
	return cfg, vcfg.Validate()
}

// LoadOptions configure LoadGGUF.
type LoadOptions struct {
	Options
	// Ctx is the KV cache length; 0 means the file's context length
	// capped at 4096.
	Ctx int
	// Copy places the weights in buffers of the buffer type even on the
	// CPU, instead of using the file's mapping in place.
	Copy bool
	// Progress, if not nil, is called as weights are uploaded (not when
	// the mapping is used in place) with the bytes done and in all.
	Progress func(done, total uint64)
	// NoRepack keeps every weight in the file's mapping on the CPU. By
	// default the q4_0, q4_K and q8_0 matrices that only MUL_MAT reads
	// are copied into the CPU's repacking buffer type
	// (cpu.RepackBufferType, cpu.Belongs), where the decode dots read them
	// faster, as llama.cpp repacks its CPU weights (its --no-repack), and
	// so are the f16 matrices of which the mapping serves some bytes with
	// 4 KiB pages instead of huge ones.
	NoRepack bool
	// smallPages stands in for smallPages in tests (nil: the kernel's
	// answer).
	smallPages func(b []byte) ([][2]uint64, bool)
}

// uploadChunk is the most bytes one SetTensorData call uploads.
const uploadChunk = 16 << 20

// LoadGGUF maps a llama-family GGUF file and places its weights on
// o.Backend. On the CPU (a host buffer type without a size limit, and
// unless o.Copy), the weights are a read-only host buffer over the
// mapping itself: nothing is copied and pages are read on first use, so a
// file larger than RAM loads; the model then owns the mapping until Close.
// Elsewhere the tensors are placed with gallocr.AllocCtxTensors (split by
// the buffer type's max size) and uploaded from the mapping in file
// order, and the mapping is closed before LoadGGUF returns.
func LoadGGUF(path string, o LoadOptions) (*Model, error) {
	mf, err := gguf.Open(path)
	if err != nil {
		return nil, err
	}
	m, err := newFromMapped(mf, o)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// newFromMapped places mf's model; it owns mf from the call on.
func newFromMapped(mf *gguf.Mapped, o LoadOptions) (*Model, error) {
	owned := true // mf is still ours to close
	defer func() {
		if owned {
			mf.Close()
		}
	}()
	cfg, err := ConfigFromGGUF(mf.File)
	if err != nil {
		return nil, err
	}
	if o.Ctx > 0 {
		cfg.Ctx = o.Ctx
	} else {
		cfg.Ctx = min(cfg.Ctx, 4096)
	}
	var m *Model
	init := (*Model).initWith
	if len(o.Backends) > 1 {
		if m, err = multiModel(cfg, o.Options); err != nil {
			return nil, err
		}
		init = (*Model).initWithSched
	} else {
		bt, err := o.bufferType()
		if err != nil {
			return nil, err
		}
		m = &Model{cfg: cfg, be: o.Backend, bt: bt, strat: o.Strategy}
	}
	bt := m.bt
	err = init(m, func() error {
		ctxs, infos, err := m.ggufTensors(mf.File)
		if err != nil {
			return err
		}
		if m.multi != nil {
			return m.uploadGGUF(ctxs, infos, mf, o.Progress)
		}
		ctx := ctxs[0]
		// In place needs the file's tensors aligned as the CPU buffers'
		// are (GGUF's default 32); a smaller general.alignment is copied.
		inPlace := !o.Copy && bt.IsHost() && bt.MaxSize() == runtime.NoMaxSize && mf.Alignment >= cpu.DefaultAlignment
		if inPlace {
			buf, err := cpu.BufferFromHostMemory(mf.Bytes(), cpu.DefaultAlignment, true, mf.Close)
			if err != nil {
				return err
			}
			if o.Backend.SupportsBufferType(buf.Type()) {
				owned = false // the buffer closes the mapping when freed
				populated := prefaultMapping(mf, o.Backend.Device().TotalMemory)
				m.wbuf = buf
				buf.SetUsage(runtime.UsageWeights)
				rbt, repack := cpu.NewRepackBufferType()
				repack = repack && !o.NoRepack && o.Backend.SupportsBufferType(rbt)
				var small [][2]uint64 // the mapping's ranges without huge pages
				known := false
				// Past the last whole huge page of the file no page can be
				// huge: that tail does not count.
				fileHuge := uint64(len(mf.Bytes())) &^ (hugePage - 1)
				if scan := o.smallPages; repack && populated {
					if scan == nil {
						scan = smallPages
					}
					small, known = scan(mf.Bytes())
				}
				var rep []int // the tensors left for the repacking buffer
				for i, t := range ctx.Tensors() {
					m.stats.WeightsBytes += t.NBytes()
					off := mf.DataOffset + infos[0][i].Offset
					if repack && t != m.tokEmb && (cpu.Belongs(t) || populated && smallPagedF16(t, off, small, known, fileHuge)) {
						rep = append(rep, i)
						continue
					}
					if err := runtime.TensorAlloc(buf, t, off); err != nil {
						return fmt.Errorf("llama: place weight %q in the mapping: %w", t.Name, err)
					}
				}
				m.stats.WeightsBuffers = 1
				if len(rep) > 0 {
					return m.repackWeights(ctx, rbt, rep, infos[0], mf)
				}
				return nil
			}
		}
		return m.uploadGGUF(ctxs, infos, mf, o.Progress)
	})
	if err != nil {
		m.Close()
		return nil, err
	}
	return m, nil
}

// repackWeights places the tensors rep of ctx (those not in the mapping)
// in a buffer of the repacking type rbt, planned by gallocr, and sets
// each from the mapping (infos: ctx's file infos), which repacks it.
func (m *Model) repackWeights(ctx *runtime.Context, rbt runtime.BufferType, rep []int, infos []gguf.TensorInfo, mf *gguf.Mapped) error {
	rbuf, err := gallocr.AllocCtxTensors(ctx, rbt)
	if err != nil {
		return fmt.Errorf("llama: repacked weights: %w", err)
	}
	m.extra = append(m.extra, rbuf)
	m.stats.WeightsBuffers++
	// The tensors are repacked on every core (distinct bytes of one
	// buffer: SetTensor may run concurrently on them).
	ts := ctx.Tensors()
	errs := make([]error, len(rep))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(goruntime.GOMAXPROCS(0), len(rep)) {
		wg.Go(func() {
			for j := int(next.Add(1) - 1); j < len(rep); j = int(next.Add(1) - 1) {
				t := ts[rep[j]]
				data, err := mf.TensorData(infos[rep[j]])
				if err == nil {
					err = runtime.SetTensorData(t, data, 0)
				}
				if err == nil {
					dropPages(data)
				}
				if err != nil {
					errs[j] = fmt.Errorf("llama: repack weight %q: %w", t.Name, err)
				}
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// dropPages releases the whole pages of the mapped bytes b from the
// process (MADV_DONTNEED: the file's pages stay in the page cache and
// would fault back in if read): a repacked tensor's file bytes are not
// read again, and would otherwise count twice in the resident set. Errors
// only lose the saving.
func dropPages(b []byte) {
	page := uintptr(os.Getpagesize())
	if len(b) == 0 {
		return
	}
	start := uintptr(unsafe.Pointer(&b[0]))
	lo := (start + page - 1) &^ (page - 1)
	hi := (start + uintptr(len(b))) &^ (page - 1)
	if hi <= lo {
		return
	}
	_ = unix.Madvise(b[lo-start:hi-start], unix.MADV_DONTNEED)
}

// hugePage is the size of a transparent huge page (a PMD's reach on
// x86-64, and on arm64 with 4 KiB pages).
const hugePage = 2 << 20

// smallPagedF16 reports whether t, an f16 weight matrix at byte off of
// the file's mapping, should move to the repacking buffer's memory: where
// part of its bytes before byte limit (the end of the file's last whole
// huge page: the rest can never be mapped huge) lies in small, the
// mapping's ranges without huge-page entries, or where that is not
// known. This project's virtual machines read weights mapped 4 KiB at a
// time at a fraction of the speed of huge-page-mapped ones, and the
// buffer asks for transparent huge pages; bytes the mapping already
// serves with huge pages are read as fast in place and need no copy. See
// RATIONALE.md, "f16 weights moved off 4 KiB pages".
func smallPagedF16(t *runtime.Tensor, off uint64, small [][2]uint64, known bool, limit uint64) bool {
	if t.Type != runtime.TypeF16 || t.Ne[1] < 4 || t.Ne[2] != 1 || t.Ne[3] != 1 || !t.IsContiguous() || t.ViewSrc != nil {
		return false
	}
	if !known {
		return true
	}
	end := min(off+t.NBytes(), limit)
	i := sort.Search(len(small), func(i int) bool { return small[i][1] > off })
	return i < len(small) && small[i][0] < end
}

// prefaultMapping maps the file's pages into the process before the
// first graph reads them (madvise MADV_POPULATE_READ, or MADV_WILLNEED's
// read-ahead where the kernel lacks it), as llama.cpp's loader does with
// MAP_POPULATE, then reads one byte of every page: otherwise the prompt,
// the first graph, pays a page fault per 4 KiB of weights it reads, and
// on this project's virtual machines the first read of each populated
// page costs about as much again. The mapping asks for transparent huge
// pages first, so that pages not yet cached are read in 2 MiB folios,
// each then mapped by one huge-page entry, where the file system caches
// large folios (ext4 on Linux 6.18 here). A file larger than half of RAM
// (ram, 0: unknown) is left to fault in as it is read, so that one larger
// than RAM still loads quickly; the result reports whether the mapping
// was populated. Errors only lose the speed-up. See RATIONALE.md,
// "Weights and compute memory touched at load".
func prefaultMapping(mf *gguf.Mapped, ram uint64) bool {
	if ram == 0 || uint64(len(mf.Bytes())) > ram/2 {
		return false
	}
	populate(mf)
	_ = touchPages(mf.Bytes(), os.Getpagesize())
	return true
}

// touchPages reads the first byte of every page of b (page bytes each)
// and returns their sum, so the reads are not optimized away.
//
//go:noinline
func touchPages(b []byte, page int) byte {
	var x byte
	for i := 0; i < len(b); i += page {
		x += b[i]
	}
	return x
}

// uploadGGUF places each context's tensors in buffers of its device (of
// m.bt on one backend) and copies each from the mapping, in file order
// within a device, in chunks of at most uploadChunk bytes.
func (m *Model) uploadGGUF(ctxs []*runtime.Context, infos [][]gguf.TensorInfo, mf *gguf.Mapped, progress func(done, total uint64)) error {
	if m.multi != nil {
		if err := m.allocWeightsMulti(ctxs); err != nil {
			return err
		}
	} else if err := m.allocWeights(ctxs[0]); err != nil {
		return err
	}
	_ = mf.Advise(unix.MADV_SEQUENTIAL) // a hint; the upload works without it
	var total, done uint64
	for _, ctx := range ctxs {
		for _, t := range ctx.Tensors() {
			total += t.NBytes()
		}
	}
	for c, ctx := range ctxs {
		for i, t := range ctx.Tensors() {
			data, err := mf.TensorData(infos[c][i])
			if err != nil {
				return err
			}
			for off := uint64(0); off < uint64(len(data)); off += uploadChunk {
				end := min(off+uploadChunk, uint64(len(data)))
				if err := runtime.SetTensorData(t, data[off:end], off); err != nil {
					return fmt.Errorf("llama: upload weight %q: %w", t.Name, err)
				}
				done += end - off
				if progress != nil {
					progress(done, total)
				}
			}
		}
	}
	return nil
}

// ggufTensors makes the model's weight tensors, with the file's types, in
// a new context and binds them to m's layers; infos[i] is the file's info
// of ctx.Tensors()[i]. Every tensor's shape is checked, every weight type
// must be one SupportedWeightType knows (norms f32), and a tensor the
// decoder would not use is an error (it means a feature gogml lacks).
func (m *Model) ggufTensors(f *gguf.File) ([]*runtime.Context, [][]gguf.TensorInfo, error) {
	cfg := m.cfg
	d, ff, dkv, V := int64(cfg.Dim), int64(cfg.FFN), int64(cfg.KVDim()), int64(cfg.Vocab)
	dq, hd := int64(cfg.QDim()), int64(cfg.HeadDim())
	// One context per device (one on one backend); infos[d][i] is the
	// file's info of ctxs[d].Tensors()[i].
	ctxs := make([]*runtime.Context, max(1, len(m.multi)))
	for i := range ctxs {
		ctxs[i] = runtime.NewContext()
	}
	infos := make([][]gguf.TensorInfo, len(ctxs))
	used := map[string]bool{}
	var errs []error
	get := func(name string, norm bool, ne ...int64) *runtime.Tensor {
		ti, ok := f.Tensor(name)
		if !ok {
			errs = append(errs, fmt.Errorf("llama: tensor %s: %w", name, gguf.ErrNotFound))
			return nil
		}
		used[name] = true
		want := [gguf.MaxDims]int64{1, 1, 1, 1}
		copy(want[:], ne)
		if ti.Ne != want {
			errs = append(errs, fmt.Errorf("%w: tensor %s has shape %v, want %v", ErrConfig, name, ti.Shape(), ne))
			return nil
		}
		if (norm && ti.Type != runtime.TypeF32) || !SupportedWeightType(ti.Type) {
			errs = append(errs, fmt.Errorf("%w: tensor %s is %s (gogml runs f32 norms and biases and f32, f16, bf16, q4_0, q4_1, q5_0, q5_1, q8_0, q2_K..q6_K matrices)", ErrUnsupportedModel, name, ti.Type))
			return nil
		}
		dev := m.deviceOf(name)
		t := ctxs[dev].NewTensor(ti.Type, ne...)
		if t != nil {
			t.Name = name
			infos[dev] = append(infos[dev], ti)
		}
		return t
	}
	m.tokEmb = get("token_embd.weight", false, d, V)
	// opt gets the tensor when the config has the feature, else nil.
	opt := func(has bool, name string, ne ...int64) *runtime.Tensor {
		if !has {
			return nil
		}
		return get(name, true, ne...)
	}
	m.layers = m.layers[:0]
	for l := 0; l < cfg.Layers; l++ {
		b := fmt.Sprintf("blk.%d.", l)
		// Optional tensors a file may have for any of the architectures
		// (llama.cpp creates them TENSOR_NOT_REQUIRED and its graphs use
		// them when present).
		maybe := func(name string, ne ...int64) *runtime.Tensor {
			if _, ok := f.Tensor(name); !ok {
				return nil
			}

			return get(name, true, ne...)
		}
		// ffnScale is maybe, for an architecture whose graph applies the
		// feed-forward scales; else the scale is read and left unused,
		// as llama.cpp does.
		ffnScale := func(name string) *runtime.Tensor {
			if !cfg.ffnScales {
				if _, ok := f.Tensor(name); ok {
					used[name] = true
				}
				return nil
			}
			return maybe(name, 1)
		}
		// ffnBias is maybe where the architecture takes feed-forward
		// biases (each one optional, as in llama.cpp's loader); elsewhere
		// a bias stays unused and is reported below.
		ffnBias := func(name string, n int64) *runtime.Tensor {
			if !cfg.FFNBias {
				return nil
			}
			return maybe(name, n)
		}
		m.layers = append(m.layers, layer{
			bGate:    ffnBias(b+"ffn_gate.bias", ff),
			bUp:      ffnBias(b+"ffn_up.bias", ff),
			bDown:    ffnBias(b+"ffn_down.bias", d),
			sq:       maybe(b+"attn_q.scale", 1),
			sk:       maybe(b+"attn_k.scale", 1),
			sv:       maybe(b+"attn_v.scale", 1),
			so:       maybe(b+"attn_output.scale", 1),
			sGate:    ffnScale(b + "ffn_gate.scale"),
			sUp:      ffnScale(b + "ffn_up.scale"),
			sDown:    ffnScale(b + "ffn_down.scale"),
			attnNorm: get(b+"attn_norm.weight", true, d),
			wq:       get(b+"attn_q.weight", false, d, dq),
			wk:       get(b+"attn_k.weight", false, d, dkv),
			wv:       get(b+"attn_v.weight", false, d, dkv),
			wo:       get(b+"attn_output.weight", false, dq, d),
			bq:       opt(cfg.QKVBias, b+"attn_q.bias", dq),
			bk:       opt(cfg.QKVBias, b+"attn_k.bias", dkv),
			bv:       opt(cfg.QKVBias, b+"attn_v.bias", dkv),
			bo:       opt(cfg.OutBias, b+"attn_output.bias", d),
			qNorm:    opt(cfg.QKNorm, b+"attn_q_norm.weight", hd),
			kNorm:    opt(cfg.QKNorm, b+"attn_k_norm.weight", hd),
			ffnNorm:  get(b+"ffn_norm.weight", true, d),
			w1:       get(b+"ffn_gate.weight", false, d, ff),
			w3:       get(b+"ffn_up.weight", false, d, ff),
			w2:       get(b+"ffn_down.weight", false, ff, d),
		})
	}
	m.outNorm = get("output_norm.weight", true, d)
	m.ropeFreqs = opt(cfg.RopeFreqs, "rope_freqs.weight", hd/2)
	if _, ok := f.Tensor("output.weight"); ok {
		m.output = get("output.weight", false, d, V)
	} else {
		m.output = m.tokEmb // tied embeddings
	}
	if _, ok := f.Tensor("output.bias"); ok {
		m.outBias = get("output.bias", true, V)
	}
	for _, ti := range f.Tensors {
		if !used[ti.Name] && !ignoredTensor(ti.Name) {
			errs = append(errs, fmt.Errorf("%w: tensor %s is not used by gogml's llama decoder (a feature it lacks)", ErrUnsupportedModel, ti.Name))
			break
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, nil, err
	}
	for _, ctx := range ctxs {
		if err := ctx.Err(); err != nil {
			return nil, nil, fmt.Errorf("llama: weights: %w", err)
		}
	}
	return ctxs, infos, nil
}

// CheckGGUF reports whether this decoder can run the file, without placing
// anything: the hyperparameters (ConfigFromGGUF) and every tensor's
// presence, shape and type.
func CheckGGUF(f *gguf.File) (Config, error) {
	cfg, err := ConfigFromGGUF(f)
	if err != nil {
		return cfg, err
	}
	m := &Model{cfg: cfg}
	_, _, err = m.ggufTensors(f)
	return cfg, err
}

// scaleOf reports whether name is a per-tensor scale ("X.scale") and
// returns X.
func scaleOf(name string) (string, bool) {
	return strings.CutSuffix(name, ".scale")
}

// ignoredTensor reports whether llama.cpp's text-generation graphs of
// these architectures leave a tensor of that name unused: the input
// scales of NVFP4-style quantization (NAME.input_scale: only some other
// architectures' graphs apply them) and a reranker's classification head
// (cls.*: used only with rank pooling, never for logits).
func ignoredTensor(name string) bool {
	return strings.HasSuffix(name, ".input_scale") || strings.HasPrefix(name, "cls.")
}

// ropeScalingFromGGUF sets cfg's RoPE scaling from the prefix p's
// rope.scaling.* keys the way llama.cpp 0.7.0 derives its context
// parameters: freq_scale = 1/factor (a factor of 0 means 1; type "none"
// means no scaling), ext_factor the file's yarn_ext_factor or, when that
// is negative (unset), 1 for "yarn" and 0 otherwise; with ext_factor
// set, the attention factor is YaRN's magnitude correction divided by
// the one ggml's rope applies itself (so 1), times
// rope.scaling.attn_factor. rope.scaling.yarn_log_multiplier is read by
// llama.cpp for deepseek2-style architectures only; these leave it
// unused (checked against llama.cpp's logits).
func ropeScalingFromGGUF(f *gguf.File, p string, cfg *Config) error {
	float := func(key string, def float64) (float64, error) {
		v, err := f.Float(p + key)
		if errors.Is(err, gguf.ErrNotFound) {
			return def, nil
		}
		if err == nil && (math.IsNaN(v) || math.IsInf(v, 0)) {
			err = fmt.Errorf("%w: %s%s = %g", ErrConfig, p, key, v)
		}
		return v, err
	}
	typ := "linear"
	if s, err := f.String(p + "rope.scaling.type"); err == nil {
		typ = s
	} else if !errors.Is(err, gguf.ErrNotFound) {
		return err
	}
	switch typ {
	case "none", "linear", "yarn":
	default:
		return fmt.Errorf("%w: RoPE scaling %q (gogml runs none, linear and yarn)", ErrUnsupportedModel, typ)
	}
	factor, err := float("rope.scaling.factor", 0)
	if err != nil {
		return err
	}
	if factor == 0 {
		if factor, err = float("rope.scale_linear", 0); err != nil {
			return err
		}
	}
	if factor < 0 || factor > 1e6 {
		return fmt.Errorf("%w: %srope.scaling.factor = %g", ErrConfig, p, factor)
	}
	scale := 1.0
	if factor != 0 && typ != "none" {
		scale = 1 / factor
	}
	ext, err := float("rope.scaling.yarn_ext_factor", -1)
	if err != nil {
		return err
	}
	if ext < 0 {
		ext = 0
		if typ == "yarn" {
			ext = 1
		}
	}
	attn, err := float("rope.scaling.yarn_attn_factor", 1)
	if err != nil {
		return err
	}
	if ext != 0 {
		mscale := func(s, m float64) float64 {
			if s <= 1 {
				return 1
			}
			return 0.1*m*math.Log(s) + 1
		}
		fac := 1 / scale
		attn = mscale(fac, 1) / (1 + 0.1*math.Log(fac))
	}
	ropeAttn, err := float("rope.scaling.attn_factor", 1)
	if err != nil {
		return err
	}
	attn *= ropeAttn
	fast, err := float("rope.scaling.yarn_beta_fast", 32)
	if err != nil {
		return err
	}
	slow, err := float("rope.scaling.yarn_beta_slow", 1)
	if err != nil {
		return err
	}
	orig, err := f.Int(p + "rope.scaling.original_context_length")
	if errors.Is(err, gguf.ErrNotFound) || (err == nil && orig == 0) {
		orig, err = int64(cfg.Ctx), nil
	}
	if err != nil {
		return err
	}
	if orig < 1 || orig > 1<<30 {
		return fmt.Errorf("%w: %srope.scaling.original_context_length = %d", ErrConfig, p, orig)
	}
	for _, v := range []float64{scale, ext, attn, fast, slow} {
		if !(v >= 0 && v <= 1e6) {
			return fmt.Errorf("%w: RoPE scaling parameters %g %g %g %g %g of %s", ErrConfig, scale, ext, attn, fast, slow, p)
		}
	}
	cfg.RopeFreqScale, cfg.RopeExtFactor, cfg.RopeAttnFactor = float32(scale), float32(ext), float32(attn)
	cfg.RopeBetaFast, cfg.RopeBetaSlow, cfg.RopeCtxOrig = float32(fast), float32(slow), int(orig)
	return nil
}

// graniteFromGGUF reads granite's multipliers: logit_scale (required, as
// llama.cpp requires it), residual_scale, embedding_scale and
// attention.scale (0 or absent: none), and rope.scaling.finetuned, which
// granite's graph uses as the switch for RoPE (absent: on).
func graniteFromGGUF(f *gguf.File, p string, cfg *Config) error {
	logit, err := f.Float(p + "logit_scale")
	if err != nil {
		return err
	}
	if logit == 0 || math.IsNaN(logit) || math.IsInf(logit, 0) {
		return fmt.Errorf("%w: %slogit_scale = %g", ErrConfig, p, logit)
	}
	cfg.LogitScale = float32(logit)
	for _, k := range []struct {
		key string
		dst *float32
	}{{"residual_scale", &cfg.ResidualScale}, {"embedding_scale", &cfg.EmbedScale}, {"attention.scale", &cfg.AttnScale}} {
		v, err := f.Float(p + k.key)
		if errors.Is(err, gguf.ErrNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		*k.dst = float32(v)
	}
	if v, ok := f.Get(p + "rope.scaling.finetuned"); ok {
		if on, ok := gguf.As[bool](v); ok && !on {
			cfg.NoRopeStep = 1 // every layer without RoPE
		}
	}
	return nil
}
