// Package sample picks the next token from a row of logits the way
// llama.cpp's default sampler chain does: top-k, then top-p (nucleus),
// then min-p, then temperature, then a draw from the softmax. A
// temperature of 0 (or less) is greedy decoding: the largest logit, the
// lowest id on ties. Draws come from a PCG generator seeded by
// Params.Seed, so the same seed and logits give the same tokens on every
// platform.
//
// The parameters mean what llama.cpp's --temp, --top-k, --top-p, --min-p
// and --seed mean; the random numbers themselves are not llama.cpp's
// (C++'s mt19937), so the same seed does not pick the same tokens as
// llama.cpp.
package sample

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
)

// ErrParams is wrapped by New for parameters outside their range.
var ErrParams = errors.New("sample: invalid parameters")

// ErrLogits is wrapped by Sample for an empty row or a NaN logit.
var ErrLogits = errors.New("sample: invalid logits")

// Params are the sampler's settings, with llama.cpp's meanings.
type Params struct {
	// Temp divides the logits before the draw; 0 or less is greedy.
	Temp float64
	// TopK keeps the K largest logits; 0 or less keeps all.
	TopK int
	// TopP keeps the smallest set of the most likely tokens whose
	// probabilities add up to at least TopP; 1 or more keeps all.
	TopP float64
	// MinP keeps the tokens at least MinP times as likely as the most
	// likely one; 0 or less keeps all.
	MinP float64
	// Seed seeds the draws.
	Seed uint64
}

// DefaultParams are llama.cpp's defaults: temperature 0.8, top-k 40,
// top-p 0.95, min-p 0.05 (Seed 0).
func DefaultParams() Params {
	return Params{Temp: 0.8, TopK: 40, TopP: 0.95, MinP: 0.05}
}

// Greedy reports whether p always picks the largest logit.
func (p Params) Greedy() bool { return p.Temp <= 0 }

// Validate checks that no parameter is NaN or infinite and that TopP and
// MinP are not negative.
func (p Params) Validate() error {
	for _, f := range []struct {
		name string
		v    float64
	}{{"temp", p.Temp}, {"top-p", p.TopP}, {"min-p", p.MinP}} {
		if math.IsNaN(f.v) || math.IsInf(f.v, 0) {
			return fmt.Errorf("%w: %s is %v", ErrParams, f.name, f.v)
		}
	}
	if p.TopP < 0 || p.MinP < 0 {
		return fmt.Errorf("%w: top-p %g and min-p %g must not be negative", ErrParams, p.TopP, p.MinP)
	}
	return nil
}

// String prints the settings as llama.cpp's flags.
func (p Params) String() string {
	if p.Greedy() {
		return "greedy (temp 0)"
	}
	return fmt.Sprintf("temp %g, top-k %d, top-p %g, min-p %g, seed %d", p.Temp, p.TopK, p.TopP, p.MinP, p.Seed)
}

// candidate is one token still in the running.
type candidate struct {
	id    int32
	logit float64
	p     float64
}

// Sampler draws tokens with fixed Params. It keeps its random state and
// scratch space between calls and is not safe for concurrent use.
type Sampler struct {
	p     Params
	rng   *rand.Rand
	cands []candidate
}

// New returns a Sampler for p, its generator seeded with p.Seed.
func New(p Params) (*Sampler, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return &Sampler{p: p, rng: rand.New(rand.NewPCG(p.Seed, 0x9e3779b97f4a7c15))}, nil
}

// Params returns the sampler's settings.
func (s *Sampler) Params() Params { return s.p }

// Sample picks a token id from one row of logits (one value per id).
func (s *Sampler) Sample(logits []float32) (int32, error) {
	if len(logits) == 0 {
		return 0, fmt.Errorf("%w: empty row", ErrLogits)
	}
	if len(logits) > math.MaxInt32 {
		return 0, fmt.Errorf("%w: %d logits do not fit token ids", ErrLogits, len(logits))
	}
	best := 0
	for i, v := range logits {
		if v != v {
			return 0, fmt.Errorf("%w: logit %d is NaN", ErrLogits, i)
		}
		if v > logits[best] {
			best = i
		}
	}
	if s.p.Greedy() {
		return int32(best), nil
	}
	if l := logits[best]; math.IsInf(float64(l), 0) {
		return int32(best), nil // an infinite logit leaves no distribution
	}
	s.cands = topK(s.cands[:0], logits, s.p.TopK)
	c := s.cands
	if s.p.TopP < 1 {
		softmax(c, 1)
		var cum float64
		for i := range c {
			cum += c[i].p
			if cum >= s.p.TopP {
				c = c[:i+1]
				break
			}
		}
	}
	if s.p.MinP > 0 {
		// p_i >= MinP * p_max, as logits: l_i >= l_max + ln(MinP).
		lim := c[0].logit + math.Log(s.p.MinP)
		n := 1
		for n < len(c) && c[n].logit >= lim {
			n++
		}
		c = c[:n]
	}
	softmax(c, s.p.Temp)
	u := s.rng.Float64()
	var cum float64
	for _, x := range c {
		cum += x.p
		if u < cum {
			return x.id, nil
		}
	}
	return c[len(c)-1].id, nil // rounding left u above the last sum
}

// before reports whether a ranks above b: the larger logit, then the
// lower id (so a seed gives the same tokens whatever the sort does).
func before(a, b candidate) bool {
	if a.logit != b.logit {
		return a.logit > b.logit
	}
	return a.id < b.id
}

// topK appends to c the k highest-ranked logits (all when k <= 0 or k >=
// len(logits)), sorted best first. With a k below the vocabulary it
// keeps a heap of k, so a large vocabulary is not sorted in full.
func topK(c []candidate, logits []float32, k int) []candidate {
	if k <= 0 || k >= len(logits) {
		for i, v := range logits {
			c = append(c, candidate{id: int32(i), logit: float64(v)})
		}
	} else {
		// c is a heap whose root, c[0], ranks lowest.
		down := func(i int) {
			for {
				l := 2*i + 1
				if l >= len(c) {
					return
				}
				if r := l + 1; r < len(c) && before(c[l], c[r]) {
					l = r
				}
				if !before(c[i], c[l]) {
					return
				}
				c[i], c[l] = c[l], c[i]
				i = l
			}
		}
		for i, v := range logits {
			x := candidate{id: int32(i), logit: float64(v)}
			if len(c) < k {
				c = append(c, x)
				for j := len(c) - 1; j > 0; {
					p := (j - 1) / 2
					if !before(c[p], c[j]) {
						break
					}
					c[p], c[j] = c[j], c[p]
					j = p
				}
			} else if before(x, c[0]) {
				c[0] = x
				down(0)
			}
		}
	}
	sort.Slice(c, func(i, j int) bool { return before(c[i], c[j]) })
	return c
}

// softmax sets c's probabilities from logit/temp; c is sorted largest
// first and not empty.
func softmax(c []candidate, temp float64) {
	var sum float64
	for i := range c {
		c[i].p = math.Exp((c[i].logit - c[0].logit) / temp)
		sum += c[i].p
	}
	for i := range c {
		c[i].p /= sum
	}
}
