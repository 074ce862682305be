package llama_test

import (
	"fmt"

	"github.com/gogml/gogml/backends/cpu"
	"github.com/gogml/gogml/model/llama"
	"github.com/gogml/gogml/model/sample"
)

// Generating eight tokens from the built-in random model with llama.cpp's
// default sampling settings and a fixed seed: the same seed gives the same
// tokens.
func ExampleModel_GenerateWith() {
	be := cpu.NewBackend(cpu.BackendOptions{Threads: 1})
	defer be.Close()
	m, err := llama.New(llama.GenerateWeights(llama.DefaultConfig()), llama.Options{Backend: be})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer m.Close()
	var runs [2][]int32
	for i := range runs {
		p := sample.DefaultParams()
		p.Seed = 42
		s, err := sample.New(p)
		if err != nil {
			fmt.Println(err)
			return
		}
		r, err := m.GenerateWith([]int32{1, 2, 3}, 8, s, nil)
		if err != nil {
			fmt.Println(err)
			return
		}
		runs[i] = r.Generated
	}
	fmt.Println(len(runs[0]), fmt.Sprint(runs[0]) == fmt.Sprint(runs[1]))
	// Output: 8 true
}
