package llama

import "math"

// refModel is a straightforward forward pass in plain Go over the same
// Weights: no graphs, no views, float64 arithmetic, its own KV cache. The
// tests compare the graph-built Model against it.
type refModel struct {
	w      *Weights
	kc, vc [][][]float64 // per layer, per position: Dim values
}

func newRefModel(w *Weights) *refModel {
	r := &refModel{w: w}
	r.kc = make([][][]float64, w.Config.Layers)
	r.vc = make([][][]float64, w.Config.Layers)
	return r
}

func refRMSNorm(x []float64, w []float32, eps float32) []float64 {
	var ss float64
	for _, v := range x {
		ss += v * v
	}
	// ggml computes the mean in float and the scale as 1/sqrt(mean+eps).
	s := 1 / math.Sqrt(ss/float64(len(x))+float64(eps))
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = v * s * float64(w[i])
	}
	return out
}

// refMatVec is y[o] = Σ_i W[o*in+i]·x[i].
func refMatVec(W []float32, x []float64, out int) []float64 {
	in := len(x)
	y := make([]float64, out)
	for o := 0; o < out; o++ {
		var s float64
		row := W[o*in : (o+1)*in]
		for i, v := range x {
			s += float64(row[i]) * v
		}
		y[o] = s
	}
	return y
}

// refRope rotates adjacent pairs of each head by pos·base^(-2k/headDim).
func refRope(x []float64, heads, hd, pos int, base float32) {
	for h := 0; h < heads; h++ {
		for k := 0; k < hd/2; k++ {
			theta := float64(pos) * math.Pow(float64(base), -2*float64(k)/float64(hd))
			c, s := math.Cos(theta), math.Sin(theta)
			i := h*hd + 2*k
			x0, x1 := x[i], x[i+1]
			x[i] = x0*c - x1*s
			x[i+1] = x0*s + x1*c
		}
	}
}

// forward evaluates one token at the next position and returns its logits.
func (r *refModel) forward(tok int32) []float64 {
	cfg := r.w.Config
	d, H, hd := cfg.Dim, cfg.Heads, cfg.HeadDim()
	Hkv, group := cfg.NKVHeads(), cfg.Heads/cfg.NKVHeads()
	pos := len(r.kc[0])
	x := make([]float64, d)
	for i := range x {
		x[i] = float64(r.w.TokEmb[int(tok)*d+i])
	}
	for l, lw := range r.w.Layers {
		h := refRMSNorm(x, lw.AttnNorm, cfg.Eps)
		q := refMatVec(lw.Wq, h, d)
		k := refMatVec(lw.Wk, h, cfg.KVDim())
		v := refMatVec(lw.Wv, h, cfg.KVDim())
		refRope(q, H, hd, pos, cfg.RopeBase)
		refRope(k, Hkv, hd, pos, cfg.RopeBase)
		r.kc[l] = append(r.kc[l], k)
		r.vc[l] = append(r.vc[l], v)
		T := len(r.kc[l])
		att := make([]float64, d)
		scale := 1 / math.Sqrt(float64(hd))
		for hh := 0; hh < H; hh++ {
			kh := hh / group // the kv head this query head shares
			sc := make([]float64, T)
			mx := math.Inf(-1)
			for t := 0; t < T; t++ {
				var s float64
				for j := 0; j < hd; j++ {
					s += q[hh*hd+j] * r.kc[l][t][kh*hd+j]
				}
				sc[t] = s * scale
				mx = math.Max(mx, sc[t])
			}
			var sum float64
			for t := range sc {
				sc[t] = math.Exp(sc[t] - mx)
				sum += sc[t]
			}
			for t := 0; t < T; t++ {
				p := sc[t] / sum
				for j := 0; j < hd; j++ {
					att[hh*hd+j] += p * r.vc[l][t][kh*hd+j]
				}
			}
		}
		o := refMatVec(lw.Wo, att, d)
		for i := range x {
			x[i] += o[i]
		}
		h = refRMSNorm(x, lw.FFNNorm, cfg.Eps)
		g := refMatVec(lw.W1, h, cfg.FFN)
		u := refMatVec(lw.W3, h, cfg.FFN)
		for i := range g {
			g[i] = g[i] / (1 + math.Exp(-g[i])) * u[i]
		}
		dn := refMatVec(lw.W2, g, d)
		for i := range x {
			x[i] += dn[i]
		}
	}
	return refMatVec(r.w.Output, refRMSNorm(x, r.w.OutNorm, cfg.Eps), cfg.Vocab)
}
