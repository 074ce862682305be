package llama

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/gogml/gogml/gguf"
)

// FuzzBPEEncode tokenizes any text with the test vocabularies of several
// pre-tokenizers: ids are in the vocabulary, and valid UTF-8 without
// special tokens or the deliberately broken " z" merge decodes back to
// itself.
func FuzzBPEEncode(f *testing.F) {
	pres := []string{"gpt-2", "llama-bpe", "qwen2", "smollm", "default", "falcon", "deepseek-llm", "deepseek-coder", "bloom", "viking"}
	toks := make([]*Tokenizer, len(pres))
	for i, pre := range pres {
		toks[i] = loadTokenizer(f, bpeVocabFile(f, newBPETestVocab(f, pre, 200), pre))
	}
	for _, s := range bpeTexts {
		f.Add(uint8(len(s)), s)
	}
	f.Fuzz(func(t *testing.T, which uint8, text string) {
		tok := toks[int(which)%len(toks)]
		ids := tok.Encode(text, true)
		for _, id := range ids {
			if id < 0 || int(id) >= len(tok.bpe.tokens) {
				t.Fatalf("%q: id %d outside the %d tokens", text, id, len(tok.bpe.tokens))
			}
		}
		got := tok.Decode(ids)
		if utf8.ValidString(text) && !strings.Contains(text, " z") && !strings.Contains(text, "<") &&
			!strings.Contains(text, "hello world") && got != text {
			t.Fatalf("Decode(Encode(%q)) = %q (ids %v)", text, got, ids)
		}
	})
}

// FuzzBPEVocab builds a "gpt2" (or, with spm, a "llama") vocabulary from
// arbitrary tokens, merges and pre-tokenizer name (newline-separated
// lists) and tokenizes a text with it: TokenizerFromGGUF returns an error
// or a tokenizer whose ids are in the vocabulary, never panics.
func FuzzBPEVocab(f *testing.F) {
	f.Add("a\nb\nab\n<|x|>", "a b\n b\nab", "gpt-2", "abab <|x|> ab", false)
	f.Add("Ġ\nh\nĠh", "Ġ h", "llama-bpe", " h h", false)
	f.Add("", "", "default", "x", false)
	f.Add("1\n2\n12", "1 2", "qwen2", "1212 12", false)
	f.Add("<unk>\n<s>\n</s>\n<0x41>\n▁a\na", "", "", "a A </s>a", true)
	f.Fuzz(func(t *testing.T, tokens, merges, pre, text string, spm bool) {
		w := gguf.NewWriter()
		tl := strings.Split(tokens, "\n")
		types := make([]int32, len(tl))
		for i := range types {
			types[i] = int32(i % 8)
		}
		model := "gpt2"
		if spm {
			model = "llama"
		}
		for _, kv := range []gguf.KV{{Key: "tokenizer.ggml.model", Value: gguf.Of(model)},
			{Key: "tokenizer.ggml.pre", Value: gguf.Of(pre)},
			{Key: "tokenizer.ggml.tokens", Value: gguf.ArrayOf(tl)},
			{Key: "tokenizer.ggml.token_type", Value: gguf.ArrayOf(types)},
			{Key: "tokenizer.ggml.merges", Value: gguf.ArrayOf(strings.Split(merges, "\n"))},
			{Key: "tokenizer.ggml.add_bos_token", Value: gguf.Of(len(text)%2 == 0)},
			{Key: "tokenizer.ggml.bos_token_id", Value: gguf.Of(uint32(len(merges)))},
		} {
			if err := w.Set(kv.Key, kv.Value); err != nil {
				t.Fatal(err)
			}
		}
		var buf bytes.Buffer
		if _, err := w.WriteTo(&buf); err != nil {
			return // a token the writer rejects
		}
		file, err := gguf.Parse(buf.Bytes())
		if err != nil {
			return
		}
		tok, err := TokenizerFromGGUF(file)
		if err != nil {
			return
		}
		for _, id := range tok.Encode(text, true) {
			if id < 0 || int(id) >= len(tl) {
				t.Fatalf("id %d outside the %d tokens", id, len(tl))
			}
		}
		_ = tok.Decode([]int32{-1, 0, int32(len(tl)), int32(len(tl) - 1)})
	})
}
