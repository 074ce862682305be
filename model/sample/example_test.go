package sample_test

import (
	"fmt"

	"github.com/gogml/gogml/model/sample"
)

// Sampling three tokens from one row of logits: greedy with a
// temperature of 0, and with top-k 1 at any temperature.
func Example() {
	logits := []float32{0.1, 2.5, -1, 2.4}
	greedy, _ := sample.New(sample.Params{})
	p := sample.DefaultParams()
	p.TopK, p.Seed = 1, 42
	top1, _ := sample.New(p)
	g, _ := greedy.Sample(logits)
	k, _ := top1.Sample(logits)
	fmt.Println(g, k, greedy.Params(), "|", p)
	// Output: 1 1 greedy (temp 0) | temp 0.8, top-k 1, top-p 0.95, min-p 0.05, seed 42
}
