package main

import (
	"flag"
	"fmt"
	"io"
	"math/rand/v2"

	"github.com/gogml/gogml/model/llama"
	"github.com/gogml/gogml/model/sample"
)

// sampleFlags are gogml run's sampling flags, named as llama.cpp's.
type sampleFlags struct {
	p    sample.Params
	seed int64
}

// addSampleFlags registers --temp, --top-k, --top-p, --min-p and
// --seed/-s with llama.cpp's meanings and defaults, except --temp: 0
// (greedy), so that a run's tokens and checksum stay comparable.
func addSampleFlags(fs *flag.FlagSet, f *sampleFlags) {
	d := sample.DefaultParams()
	fs.Float64Var(&f.p.Temp, "temp", 0, "sampling temperature; 0 is greedy (llama.cpp's default is 0.8)")
	fs.IntVar(&f.p.TopK, "top-k", d.TopK, "keep the K most likely tokens (0: all)")
	fs.Float64Var(&f.p.TopP, "top-p", d.TopP, "keep the most likely tokens up to this total probability (1.0: all)")
	fs.Float64Var(&f.p.MinP, "min-p", d.MinP, "keep tokens at least this fraction as likely as the most likely one (0.0: all)")
	fs.Int64Var(&f.seed, "seed", -1, "sampling seed (-1: a random one, printed)")
	fs.Int64Var(&f.seed, "s", -1, "the same as -seed")
}

// sampler returns the sampler the flags ask for (nil: greedy) and prints
// its settings, with the seed picked for -seed -1, unless greedy.
func (f *sampleFlags) sampler(w io.Writer) (llama.Sampler, error) {
	if err := f.p.Validate(); err != nil {
		return nil, err
	}
	if f.p.Greedy() {
		return nil, nil
	}
	if f.seed < -1 {
		return nil, fmt.Errorf("-seed %d: want -1 (random) or a seed of 0 or more", f.seed)
	}
	f.p.Seed = uint64(f.seed)
	if f.seed == -1 {
		f.p.Seed = uint64(rand.Uint32()) // like llama.cpp, a 32-bit seed one can type back
	}
	s, err := sample.New(f.p)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(w, "sampling: %s\n", f.p)
	return s, nil
}
