package main

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gogml/gogml/gguf"
	"github.com/gogml/gogml/model/llama"
	"github.com/gogml/gogml/runtime"
)

// TestRunTextBPE: run -model -text on a file with a byte-level BPE
// ("gpt2", llama3 pre-tokenizer) vocabulary tokenizes with merges and
// special tokens, and decodes the prompt back.
func TestRunTextBPE(t *testing.T) {
	cfg := llama.DefaultConfig()
	gw, err := llama.NewGGUFWriter(llama.GenerateWeights(cfg), runtime.TypeF32)
	if err != nil {
		t.Fatal(err)
	}
	// GPT-2's byte encoding: printable Latin-1 bytes stand for themselves,
	// the others for U+0100 onwards.
	var tokens []string
	n := 0
	for b := 0; b < 256; b++ {
		r := rune(b)
		if !((b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff)) {
			r = rune(0x100 + n)
			n++
		}
		if b < 0xf8 || b > 0xfd { // bytes UTF-8 never holds make room for the rest
			tokens = append(tokens, string(r))
		}
	}
	tokens = append(tokens, "Ġh", "hi", "Ġhi", "Ġw", "<|begin_of_text|>", "<|endoftext|>")
	if len(tokens) != cfg.Vocab {
		t.Fatalf("%d tokens for vocab %d", len(tokens), cfg.Vocab)
	}
	types := make([]int32, len(tokens))
	for i := range types {
		types[i] = 1
	}
	types[len(types)-1], types[len(types)-2] = 3, 3
	for _, kv := range []gguf.KV{{Key: "tokenizer.ggml.model", Value: gguf.Of("gpt2")},
		{Key: "tokenizer.ggml.pre", Value: gguf.Of("llama-bpe")},
		{Key: "tokenizer.ggml.tokens", Value: gguf.ArrayOf(tokens)},
		{Key: "tokenizer.ggml.token_type", Value: gguf.ArrayOf(types)},
		{Key: "tokenizer.ggml.merges", Value: gguf.ArrayOf([]string{"Ġ h", "h i", "Ġh i", "Ġ w"})},
		{Key: "tokenizer.ggml.bos_token_id", Value: gguf.Of(uint32(len(tokens) - 2))},
		{Key: "tokenizer.ggml.eos_token_id", Value: gguf.Of(uint32(len(tokens) - 1))},
	} {
		if err := gw.Set(kv.Key, kv.Value); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(t.TempDir(), "bpe.gguf")
	if err := gw.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	var info, errb bytes.Buffer
	if err := runGGUF([]string{"info", path}, &info, &errb); err != nil ||
		!strings.Contains(info.String(), `gogml run -text: tokenizer byte-level BPE ("gpt2", pre-tokenizer "llama-bpe"), 256 tokens, 4 merges, 2 special`) {
		t.Errorf("info: %v\n%s", err, info.String())
	}
	got := runOut(t, "-model", path, "-text", "hi hi<|endoftext|> w", "-n", "2", "-q")
	want := fmt.Sprintf("prompt ids: [%d %d %d %d %d]", len(tokens)-2, len(tokens)-5, len(tokens)-4, len(tokens)-1, len(tokens)-3)
	if !strings.Contains(got, want) || !strings.Contains(got, `text: "hi hi w" + `) {
		t.Errorf("run -text on a BPE vocabulary, want %q:\n%s", want, got)
	}
}
