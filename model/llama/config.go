// Package llama is a small llama-style decoder built with gogml's graph
// API: token embedding, RMS norm, multi-head attention with RoPE and a KV
// cache held in its own buffer (written through views each step), a SiLU
// gated feed-forward, residuals, an output norm and logits. Weights are
// deterministic pseudo-random numbers from a seed (f32 or q8_0), so runs
// on different backends and thread counts can be compared by their logits.
//
// A Model owns its weights, KV cache and graph allocator on one backend;
// Eval appends tokens to the cache and returns their logits, building and
// planning one graph per call.
package llama

import (
	"errors"
	"fmt"

	"github.com/gogml/gogml/runtime"
)

// ErrConfig is wrapped by every error about an invalid Config.
var ErrConfig = errors.New("invalid config")

// ErrContextFull is returned by Eval when the tokens do not fit in the
// remaining context.
var ErrContextFull = errors.New("context full")

// ErrToken is returned for a token id outside the vocabulary (by Eval)
// or a prompt that has no token ids.
var ErrToken = errors.New("invalid token")

// Config is the shape of the model and how its weights are made.
type Config struct {
	// Vocab is the number of token ids.
	Vocab int
	// Dim is the model width (d_model).
	Dim int
	// Heads is the number of attention heads; Dim must be a multiple of it
	// and the head size must be even (RoPE rotates pairs).
	Heads int
	// KVHeads is the number of key/value heads (grouped-query attention:
	// query head h attends with key/value head h/(Heads/KVHeads)); 0
	// means Heads. Heads must be a multiple of it.
	KVHeads int
	// Layers is the number of decoder blocks.
	Layers int
	// FFN is the hidden width of the feed-forward network.
	FFN int
	// Ctx is the KV cache length: the most tokens a sequence can hold.
	Ctx int
	// WeightType is the storage type of the matrices and the embedding:
	// runtime.TypeF32 or runtime.TypeQ8_0. With q8_0, a matrix whose rows
	// are not a multiple of 32 elements stays f32.
	WeightType runtime.Type
	// Seed selects the pseudo-random weights.
	Seed uint64
	// Eps is the RMS norm epsilon.
	Eps float32
	// RopeBase is RoPE's frequency base.
	RopeBase float32

	// The fields below describe the architectures of GGUF files beyond
	// llama (ConfigFromGGUF sets them); the built-in model leaves them
	// zero, and GenerateWeights makes no biases or q/k norms.

	// HeadSize is the size of each attention head; 0 means Dim/Heads.
	// The queries are Heads*HeadSize wide, which need not be Dim (qwen3).
	HeadSize int
	// RopeMode is ggml's RoPE mode: runtime.RopeNormal (adjacent pairs,
	// llama) or runtime.RopeNeoX (halves, qwen2/qwen3).
	RopeMode int32
	// NoRopeStep, if positive, leaves RoPE out of every NoRopeStep-th
	// layer (layers NoRopeStep-1, 2*NoRopeStep-1, ...: smollm3's 4).
	NoRopeStep int
	// QKVBias adds bias vectors after the q, k and v projections
	// (qwen2); OutBias after the attention output projection.
	QKVBias, OutBias bool
	// QKNorm RMS-normalizes each head of the queries and keys before
	// RoPE, with weights of HeadSize (qwen3).
	QKNorm bool
	// RopeFreqs divides each RoPE frequency by a factor from the file's
	// rope_freqs.weight (HeadDim/2 values: llama 3.1's long-context RoPE).
	RopeFreqs bool
	// FFNBias adds the feed-forward biases a file has (ffn_gate, ffn_up,
	// ffn_down .bias); OutputBias adds output.bias to the logits;
	// WeightScales multiplies projections by the per-tensor scales
	// (NAME.scale, one value) a file has.
	FFNBias, OutputBias, WeightScales bool
	// ffnScales: the architecture's graph applies the feed-forward
	// scales (ConfigFromGGUF sets it).
	ffnScales bool

	// Granite's multipliers (0: none): EmbedScale multiplies the token
	// embeddings, ResidualScale each block's attention and feed-forward
	// output before its residual add, AttnScale replaces 1/sqrt(HeadDim)
	// as the attention scale, and the logits are divided by LogitScale.
	EmbedScale, ResidualScale, AttnScale, LogitScale float32

	// RoPE scaling as llama.cpp derives it from rope.scaling.* (zero
	// values mean none). RopeFreqScale multiplies the positions
	// (1/rope.scaling.factor; 0 means 1); RopeExtFactor mixes in YaRN's
	// extrapolation (0: none; 1 for rope.scaling.type yarn);
	// RopeAttnFactor scales the sines and cosines (0 means 1);
	// RopeBetaFast and RopeBetaSlow bound YaRN's ramp (0 means 32 and 1);
	// RopeCtxOrig is the training context YaRN's ramp is computed from
	// (0 means Ctx).
	RopeFreqScale, RopeExtFactor, RopeAttnFactor float32
	RopeBetaFast, RopeBetaSlow                   float32
	RopeCtxOrig                                  int
}

// ropeParams are ggml's rope parameters of the config (see RopeFreqScale).
func (c Config) ropeParams() runtime.RopeParams {
	rp := runtime.DefaultRopeParams()
	rp.FreqBase = c.RopeBase
	rp.NCtxOrig = int32(c.Ctx)
	if c.RopeCtxOrig > 0 {
		rp.NCtxOrig = int32(c.RopeCtxOrig)
	}
	if c.RopeFreqScale != 0 {
		rp.FreqScale = c.RopeFreqScale
	}
	rp.ExtFactor = c.RopeExtFactor
	if c.RopeAttnFactor != 0 {
		rp.AttnFactor = c.RopeAttnFactor
	}
	if c.RopeBetaFast != 0 {
		rp.BetaFast = c.RopeBetaFast
	}
	if c.RopeBetaSlow != 0 {
		rp.BetaSlow = c.RopeBetaSlow
	}
	return rp
}

// DefaultConfig returns the small model gogml run uses by default: vocab
// 256, width 128, 4 heads, 2 layers, feed-forward 352, context 64, f32.
func DefaultConfig() Config {
	return Config{
		Vocab: 256, Dim: 128, Heads: 4, Layers: 2, FFN: 352, Ctx: 64,
		WeightType: runtime.TypeF32, Seed: 1, Eps: 1e-5, RopeBase: 10000,
	}
}

// MaxElements caps both the parameter count and the KV cache's element
// count of a Config: GenerateWeights holds every weight as float32 in Go
// memory, so each field's own limit (2^20) is not enough, their products
// could ask for terabytes. 2^30 elements is 4 GiB of f32.
const MaxElements = 1 << 30

// Params is the number of weights of the shape: embedding and output
// (Vocab×Dim each), per layer the q and output projections (Dim×QDim),
// k and v (Dim×KVDim), three Dim×FFN matrices, two norms and the biases
// and q/k norms the config has, the output norm and any RoPE factors. It is a float64 so
// that any fields give a finite, overflow-free count (with a HeadSize
// over 2^20 counted as such, so Validate rejects it).
func (c Config) Params() float64 {
	v, d, f, l := float64(c.Vocab), float64(c.Dim), float64(c.FFN), float64(c.Layers)
	hs := float64(c.HeadSize)
	if c.HeadSize == 0 && c.Heads > 0 {
		hs = d / float64(c.Heads)
	}
	q, kv := float64(c.Heads)*hs, float64(c.NKVHeads())*hs
	per := 2*d*q + 2*d*kv + 3*d*f + 2*d
	if c.QKVBias {
		per += q + 2*kv
	}
	if c.OutBias {
		per += d
	}
	if c.FFNBias {
		per += 2*f + d
	}
	if c.QKNorm {
		per += 2 * hs
	}
	out := d // the output norm, and the RoPE factors shared by all layers
	if c.RopeFreqs {
		out += hs / 2
	}
	return 2*v*d + l*per + out
}

// KVElements bounds the KV cache's element count: Layers × 2 × Ctx ×
// the larger of Dim and KVDim.
func (c Config) KVElements() float64 {
	w := float64(c.Dim)
	if c.Heads > 0 {
		w = max(w, float64(c.NKVHeads())*float64(c.HeadDim()))
	}
	return float64(c.Layers) * 2 * float64(c.Ctx) * w
}

// HeadDim is HeadSize, or Dim / Heads when it is 0.
func (c Config) HeadDim() int {
	if c.HeadSize > 0 {
		return c.HeadSize
	}
	return c.Dim / c.Heads
}

// QDim is the width of the queries and of the attention output:
// Heads * HeadDim (Dim unless HeadSize says otherwise).
func (c Config) QDim() int { return c.Heads * c.HeadDim() }

// ropeLayer reports whether layer l applies RoPE (see NoRopeStep).
func (c Config) ropeLayer(l int) bool { return c.NoRopeStep <= 0 || (l+1)%c.NoRopeStep != 0 }

// NKVHeads is KVHeads, or Heads when it is 0.
func (c Config) NKVHeads() int {
	if c.KVHeads == 0 {
		return c.Heads
	}
	return c.KVHeads
}

// KVDim is the width of the keys and values: NKVHeads * HeadDim.
func (c Config) KVDim() int { return c.NKVHeads() * c.HeadDim() }

// Validate checks that the shape is usable.
func (c Config) Validate() error {
	for _, f := range []struct {
		name string
		v    int
	}{{"vocab", c.Vocab}, {"dim", c.Dim}, {"heads", c.Heads}, {"layers", c.Layers}, {"ffn", c.FFN}, {"ctx", c.Ctx}} {
		if f.v < 1 {
			return fmt.Errorf("llama: %w: %s = %d must be positive", ErrConfig, f.name, f.v)
		}
		if f.v > 1<<20 {
			return fmt.Errorf("llama: %w: %s = %d is too large", ErrConfig, f.name, f.v)
		}
	}
	if p := c.Params(); p > MaxElements {
		return fmt.Errorf("llama: %w: %.3g weights (vocab %d, dim %d, ffn %d, layers %d) exceed the limit of %d", ErrConfig, p, c.Vocab, c.Dim, c.FFN, c.Layers, MaxElements)
	}
	if kv := c.KVElements(); kv > MaxElements {
		return fmt.Errorf("llama: %w: a KV cache of %.3g elements (layers %d x 2 x ctx %d x dim %d) exceeds the limit of %d", ErrConfig, kv, c.Layers, c.Ctx, c.Dim, MaxElements)
	}
	if c.HeadSize < 0 || c.HeadSize > 1<<20 || c.NoRopeStep < 0 || c.NoRopeStep > 1<<20 {
		return fmt.Errorf("llama: %w: head size %d, no-RoPE step %d", ErrConfig, c.HeadSize, c.NoRopeStep)
	}
	if c.HeadSize == 0 && c.Dim%c.Heads != 0 {
		return fmt.Errorf("llama: %w: dim %d is not a multiple of heads %d", ErrConfig, c.Dim, c.Heads)
	}
	if c.RopeMode != runtime.RopeNormal && c.RopeMode != runtime.RopeNeoX {
		return fmt.Errorf("llama: %w: RoPE mode %d (want %d, normal, or %d, NeoX)", ErrConfig, c.RopeMode, runtime.RopeNormal, runtime.RopeNeoX)
	}
	if c.KVHeads < 0 || c.Heads%c.NKVHeads() != 0 {
		return fmt.Errorf("%w: heads %d is not a multiple of kv heads %d", ErrConfig, c.Heads, c.KVHeads)
	}
	if c.HeadDim()%2 != 0 {
		return fmt.Errorf("llama: %w: head size %d must be even for RoPE", ErrConfig, c.HeadDim())
	}
	if c.WeightType != runtime.TypeF32 && c.WeightType != runtime.TypeQ8_0 {
		return fmt.Errorf("llama: %w: weight type %s (want f32 or q8_0)", ErrConfig, c.WeightType)
	}
	if !(c.Eps > 0) {
		return fmt.Errorf("llama: %w: eps %g must be positive", ErrConfig, c.Eps)
	}
	for _, f := range []struct {
		name string
		v    float32
	}{{"rope freq scale", c.RopeFreqScale}, {"rope ext factor", c.RopeExtFactor}, {"rope attn factor", c.RopeAttnFactor},
		{"rope beta fast", c.RopeBetaFast}, {"rope beta slow", c.RopeBetaSlow}, {"embedding scale", c.EmbedScale},
		{"residual scale", c.ResidualScale}, {"attention scale", c.AttnScale}, {"logit scale", c.LogitScale}} {
		if !(f.v >= 0 && f.v <= 1e6) {
			return fmt.Errorf("llama: %w: %s %g outside 0..1e6", ErrConfig, f.name, f.v)
		}
	}
	if c.RopeCtxOrig < 0 || c.RopeCtxOrig > 1<<30 {
		return fmt.Errorf("llama: %w: rope original context %d", ErrConfig, c.RopeCtxOrig)
	}
	if !(c.RopeBase > 1) {
		return fmt.Errorf("llama: %w: rope base %g must be above 1", ErrConfig, c.RopeBase)
	}
	return nil
}

// matType is the storage type of a matrix whose rows have n elements.
func (c Config) matType(n int) runtime.Type {
	if c.WeightType == runtime.TypeQ8_0 && int64(n)%runtime.TypeQ8_0.BlockSize() == 0 {
		return runtime.TypeQ8_0
	}
	return runtime.TypeF32
}
