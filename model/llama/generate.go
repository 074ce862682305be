package llama

import (
	"fmt"
	"time"
)

// Checksum summarises logits so runs on different backends, thread counts
// or planners can be compared: the sum and the sum of squares (in float64)
// over every value, and how many values there were.
type Checksum struct {
	Sum, SumSq float64
	Count      int
}

// Add folds v into the checksum.
func (c *Checksum) Add(v []float32) {
	for _, x := range v {
		c.Sum += float64(x)
		c.SumSq += float64(x) * float64(x)
	}
	c.Count += len(v)
}

// String prints the checksum with enough digits to compare runs.
func (c Checksum) String() string {
	return fmt.Sprintf("sum=%.9e sumsq=%.9e n=%d", c.Sum, c.SumSq, c.Count)
}

// Step describes one Eval of a generation.
type Step struct {
	// Index is 0 for the prompt, then 1, 2, ... for each generated token.
	Index int
	// Tokens is the number of tokens evaluated (the prompt length, then 1).
	Tokens int
	// Next is the token picked from the last logits row.
	Next int32
	// Time is the wall time of the Eval, Phases its parts.
	Time   time.Duration
	Phases Phases
}

// Result is the outcome of Generate.
type Result struct {
	// Generated holds the n picked tokens.
	Generated []int32
	// Logits is the checksum over every logits row produced: the
	// prompt's last position (Model.EvalLast), then one row per generated
	// token that was evaluated.
	Logits Checksum
	// PromptTime is the prompt's Eval; TokenTimes the single-token Evals.
	PromptTime time.Duration
	TokenTimes []time.Duration
	// TokenPhases sums the phases of the single-token Evals.
	TokenPhases Phases
}

// TokensPerSecond is the single-token generation rate (0 without any).
func (r Result) TokensPerSecond() float64 {
	var total time.Duration
	for _, d := range r.TokenTimes {
		total += d
	}
	if total <= 0 {
		return 0
	}
	return float64(len(r.TokenTimes)) / total.Seconds()
}

// CheckGenerate reports whether Generate(prompt, n) fits this shape: a
// non-empty prompt of ids inside the vocabulary, n >= 0, and room in the
// context for the prompt and n-1 more tokens.
func (c Config) CheckGenerate(prompt []int32, n int) error {
	if len(prompt) == 0 {
		return fmt.Errorf("llama: generate: empty prompt: %w", ErrToken)
	}
	for i, t := range prompt {
		if t < 0 || int(t) >= c.Vocab {
			return fmt.Errorf("llama: prompt token %d at position %d outside vocabulary 0..%d: %w", t, i, c.Vocab-1, ErrToken)
		}
	}
	if n < 0 {
		return fmt.Errorf("llama: generate: %d tokens: %w", n, ErrConfig)
	}
	// Compared without adding, so that n near MaxInt cannot wrap around.
	if len(prompt) > c.Ctx || max(n-1, 0) > c.Ctx-len(prompt) {
		return fmt.Errorf("llama: generate: a prompt of %d tokens and %d more need %d cache slots, the context has %d: %w",
			len(prompt), n, uint64(len(prompt))+uint64(max(n-1, 0)), c.Ctx, ErrContextFull)
	}
	return nil
}

// Sampler picks the next token from one row of logits (Vocab values).
// *sample.Sampler (package model/sample: temperature, top-k, top-p,
// min-p, a seed) is one.
// The logits row is the model's until Sample returns (Generate reuses its
// memory for the next token's): a sampler that keeps values copies them.
type Sampler interface {
	Sample(logits []float32) (int32, error)
}

// Generate evaluates prompt in one batch, then greedily picks n tokens,
// feeding each back one at a time (the last pick is not evaluated). It
// starts from an empty cache. onStep, if not nil, is called after every
// Eval.
func (m *Model) Generate(prompt []int32, n int, onStep func(Step)) (Result, error) {
	return m.GenerateWith(prompt, n, nil, onStep)
}

// GenerateWith is Generate with each token picked by s from the last
// logits row; a nil s picks greedily (Argmax).
func (m *Model) GenerateWith(prompt []int32, n int, s Sampler, onStep func(Step)) (Result, error) {
	var r Result
	if err := m.cfg.CheckGenerate(prompt, n); err != nil {
		return r, err
	}
	m.Reset()
	batch := prompt
	var one [1]int32 // each generated token's batch
	// logits: each step's, in the last step's memory (nothing keeps
	// them past the step).
	var logits []float32
	for i := 0; i < n || i == 0; i++ {
		t0 := time.Now()
		var err error
		logits, err = m.eval(logits, batch, true)
		dt := time.Since(t0)
		if err != nil {
			return r, err
		}
		r.Logits.Add(logits)
		if i == 0 {
			r.PromptTime = dt
		} else {
			r.TokenTimes = append(r.TokenTimes, dt)
			p := m.LastPhases()
			r.TokenPhases.Build += p.Build
			r.TokenPhases.Alloc += p.Alloc
			r.TokenPhases.Compute += p.Compute
			r.TokenPhases.Read += p.Read
		}
		V := m.cfg.Vocab
		row := logits[len(logits)-V:]
		next := int32(Argmax(row))
		if s != nil && n > 0 {
			if next, err = s.Sample(row); err != nil {
				return r, fmt.Errorf("llama: sample token %d: %w", i+1, err)
			}
			if next < 0 || int(next) >= V {
				return r, fmt.Errorf("llama: sampler picked %d outside vocabulary 0..%d: %w", next, V-1, ErrToken)
			}
		}
		if n > 0 {
			r.Generated = append(r.Generated, next)
		}
		if onStep != nil {
			onStep(Step{Index: i, Tokens: len(batch), Next: next, Time: dt, Phases: m.LastPhases()})
		}
		one[0] = next
		batch = one[:]
		if n == 0 {
			break
		}
	}
	return r, nil
}
