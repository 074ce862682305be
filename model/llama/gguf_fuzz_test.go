package llama

import (
	"bytes"
	"testing"

	"github.com/gogml/gogml/gguf"
	"github.com/gogml/gogml/runtime"
)

// FuzzCheckGGUF runs the hyperparameter and tensor checks on any file
// the gguf reader accepts: they must return an error or a valid Config,
// never panic.
func FuzzCheckGGUF(f *testing.F) {
	cfg := DefaultConfig()
	cfg.Vocab, cfg.Dim, cfg.FFN, cfg.Layers = 16, 32, 64, 1
	gw, err := NewGGUFWriter(GenerateWeights(cfg), runtime.TypeQ8_0)
	if err != nil {
		f.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := gw.WriteTo(&buf); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := gguf.Parse(data)
		if err != nil {
			return
		}
		c, err := CheckGGUF(file)
		if err != nil {
			return
		}
		v := c
		v.WeightType = runtime.TypeF32
		if err := v.Validate(); err != nil {
			t.Fatalf("CheckGGUF accepted an invalid config %+v: %v", c, err)
		}
	})
}
