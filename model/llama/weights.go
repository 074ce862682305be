package llama

import "math"

// Weights are the model's parameters as plain float32 slices in host
// memory, before any quantization. A matrix that MulMat applies to a
// vector x of length In has Out rows of In elements, row-major:
// y[o] = Σ_i W[o*In+i] · x[i] (ggml's layout with ne = {In, Out}).
type Weights struct {
	Config Config
	// TokEmb has Vocab rows of Dim elements: row t embeds token t.
	TokEmb []float32
	Layers []LayerWeights
	// OutNorm is the final RMS norm's weight (Dim).
	OutNorm []float32
	// Output has Vocab rows of Dim elements (the logits projection).
	Output []float32
}

// LayerWeights are one decoder block's parameters.
type LayerWeights struct {
	// AttnNorm and FFNNorm are RMS norm weights (Dim).
	AttnNorm, FFNNorm []float32
	// Wq has QDim rows of Dim, Wo Dim rows of QDim (both Dim×Dim unless
	// Config.HeadSize says otherwise); Wk and Wv have KVDim rows of Dim.
	Wq, Wk, Wv, Wo []float32
	// W1 (gate) and W3 (up) have FFN rows of Dim; W2 (down) has Dim rows
	// of FFN.
	W1, W2, W3 []float32
}

// rng is splitmix64: tiny, fast and the same on every platform.
type rng struct{ s uint64 }

func (r *rng) next() uint64 {
	r.s += 0x9e3779b97f4a7c15
	z := r.s
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// uniform returns a float32 in [-1, 1).
func (r *rng) uniform() float32 {
	return float32(r.next()>>40)/float32(1<<23) - 1
}

// fill returns n values uniform in [-scale, scale) plus offset.
func (r *rng) fill(n int, scale, offset float32) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = offset + scale*r.uniform()
	}
	return out
}

// GenerateWeights makes the deterministic pseudo-random weights of cfg:
// the same Config (shape and Seed) always gives the same values. Matrices
// are uniform with variance 1/In (activations keep their scale), norm
// weights are 1 ± 0.1, the embedding uniform in [-1, 1). cfg must be valid.
func GenerateWeights(cfg Config) *Weights {
	r := &rng{s: cfg.Seed}
	mat := func(in, out int) []float32 {
		return r.fill(in*out, float32(math.Sqrt(3/float64(in))), 0)
	}
	d, f := cfg.Dim, cfg.FFN
	w := &Weights{Config: cfg}
	w.TokEmb = r.fill(cfg.Vocab*d, 1, 0)
	for l := 0; l < cfg.Layers; l++ {
		var lw LayerWeights
		lw.AttnNorm = r.fill(d, 0.1, 1)
		lw.Wq = mat(d, cfg.QDim())
		lw.Wk = mat(d, cfg.KVDim())
		lw.Wv = mat(d, cfg.KVDim())
		lw.Wo = mat(cfg.QDim(), d)
		lw.FFNNorm = r.fill(d, 0.1, 1)
		lw.W1 = mat(d, f)
		lw.W2 = mat(f, d)
		lw.W3 = mat(d, f)
		w.Layers = append(w.Layers, lw)
	}
	w.OutNorm = r.fill(d, 0.1, 1)
	w.Output = mat(d, cfg.Vocab)
	return w
}
