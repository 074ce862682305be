package gguf_test

import (
	"bytes"
	"fmt"
	"log"

	"github.com/gogml/gogml/gguf"
	"github.com/gogml/gogml/runtime"
)

// Write a small file with metadata and one f32 tensor, then parse it.
func Example() {
	w := gguf.NewWriter()
	must(w.Set("general.architecture", gguf.Of("llama")))
	must(w.Set("llama.block_count", gguf.Of(uint32(2))))
	must(w.Set("tokenizer.ggml.tokens", gguf.ArrayOf([]string{"<unk>", "<s>", "</s>"})))
	data := make([]byte, 4*6) // 2 rows of 3 f32 zeros
	must(w.AddTensor("output.weight", runtime.TypeF32, []int64{3, 2}, data))
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		log.Fatal(err)
	}

	f, err := gguf.Parse(buf.Bytes())
	if err != nil {
		log.Fatal(err)
	}
	arch, _ := f.String("general.architecture")
	layers, _ := f.Int("llama.block_count")
	toks, _ := f.Get("tokenizer.ggml.tokens")
	fmt.Println(f.Version, arch, layers, toks)
	for _, t := range f.Tensors {
		fmt.Println(t.Name, t.Type, t.Shape(), t.NBytes(), "bytes at", f.DataOffset+t.Offset)
	}
	// Output:
	// 3 llama 2 ["<unk>", "<s>", "</s>"]
	// output.weight f32 [3 2] 24 bytes at 256
}

// Values carry their GGUF type; As and ArrayAs get them back.
func ExampleValue() {
	v := gguf.ArrayOf([]float32{0.5, -1})
	xs, ok := gguf.ArrayAs[float32](v)
	fmt.Println(v.Type(), v.ElemType(), v.Len(), xs, ok)
	n, ok := gguf.Of(uint16(7)).Int()
	fmt.Println(n, ok)
	// Output:
	// arr f32 2 [0.5 -1] true
	// 7 true
}

func must(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
