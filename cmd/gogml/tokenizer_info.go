package main

import (
	"fmt"
	"io"

	"github.com/gogml/gogml/gguf"
	"github.com/gogml/gogml/model/llama"
)

// printTokenizerInfo says whether gogml run -text can tokenize with the
// file's vocabulary.
func printTokenizerInfo(w io.Writer, f *gguf.File) {
	if _, ok := f.Get("tokenizer.ggml.model"); !ok {
		return
	}
	tok, err := llama.TokenizerFromGGUF(f)
	if err != nil {
		fmt.Fprintf(w, "gogml run -text: cannot tokenize (use -prompt-ids): %v\n", err)
		return
	}
	fmt.Fprintf(w, "gogml run -text: tokenizer %s\n", tok)
}
