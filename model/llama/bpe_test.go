package llama

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/gogml/gogml/gguf"
	"github.com/gogml/gogml/runtime"
)

// bpeCorpus trains the test vocabularies' merges: English, code, digits,
// accents, CJK, emoji and whitespace runs.
const bpeCorpus = `The quick brown fox jumps over the lazy dog. The dog didn't care; they're all friends and we'll see.
func main() { fmt.Println("hello, world") } // comment
	if x := 12345; x > 678 { return x * 90 }
Numbers: 1 22 333 4444 55555 2024-12-01 3.14159 $100 +200 = 300 <tag> ^caret~ |pipe|
café naïve über straße déjà vu résumé Ünïcödé
日本語のテキストと中文文本 한국어
emoji 🙂 👍 🎉 hearts ❤️
    indented   spaced    out
the the the and and and ing ing ing tion tion hello hello world world
`

// bpeTestVocab is a byte-level BPE vocabulary for pre-tokenizer pre: the
// 256 byte tokens, merges learnt from bpeCorpus, a merge whose result is
// not a token (" z": llama.cpp then keeps only the bytes that are
// tokens), a whole word no merges make (" xyzzy", for ignore_merges), and
// control and user-defined special tokens.
type bpeTestVocab struct {
	tokens []string
	types  []int32
	merges []string
}

func newBPETestVocab(t testing.TB, pre string, nMerges int) bpeTestVocab {
	t.Helper()
	if _, ok := preTokenizerFor(pre); !ok {
		t.Fatalf("pre-tokenizer %q", pre)
	}
	var v bpeTestVocab
	have := map[string]bool{}
	add := func(s string, tt int32) {
		if !have[s] {
			have[s] = true
			v.tokens = append(v.tokens, s)
			v.types = append(v.types, tt)
		}
	}
	for b := 0; b < 256; b++ {
		add(string(byteToRune[b]), tokenNormal)
	}
	// Merges are learnt over whole lines, not over the pre-tokenizer's
	// words, so they cross word boundaries ("e Ġ", "! Ġ", "3 4"): a
	// pre-tokenizer that cut words elsewhere than llama.cpp's would give
	// other ids.
	counts := map[string]int{}
	texts := strings.Join(bpeTexts, "\n")
	for _, line := range strings.SplitAfter(bpeCorpus+texts+texts, "\n") {
		var w []byte
		for _, c := range []byte(line) {
			w = utf8.AppendRune(w, byteToRune[c])
		}
		counts[string(w)]++
	}
	type word struct {
		syms []string
		n    int
	}
	var words []word
	for w, n := range counts {
		var syms []string
		for _, r := range w {
			syms = append(syms, string(r))
		}
		words = append(words, word{syms, n})
	}
	sort.Slice(words, func(i, j int) bool { return strings.Join(words[i].syms, "") < strings.Join(words[j].syms, "") })
	v.merges = append(v.merges, "Ġ z")
	for len(v.merges) < nMerges {
		pairs := map[[2]string]int{}
		for _, w := range words {
			for i := 1; i < len(w.syms); i++ {
				pairs[[2]string{w.syms[i-1], w.syms[i]}] += w.n
			}
		}
		best, bestN := [2]string{}, 1
		for pr, n := range pairs {
			if pr == [2]string{"Ġ", "z"} || utf8.RuneCountInString(pr[0]+pr[1]) > 4 {
				continue // short merges stay local, so they cross word boundaries often
			}
			if n > bestN || (n == bestN && pr[0]+" "+pr[1] < best[0]+" "+best[1]) {
				best, bestN = pr, n
			}
		}
		if bestN < 2 {
			break
		}
		v.merges = append(v.merges, best[0]+" "+best[1])
		add(best[0]+best[1], tokenNormal)
		for k, w := range words {
			var syms []string
			for i := 0; i < len(w.syms); i++ {
				if i+1 < len(w.syms) && w.syms[i] == best[0] && w.syms[i+1] == best[1] {
					syms = append(syms, best[0]+best[1])
					i++
					continue
				}
				syms = append(syms, w.syms[i])
			}
			words[k].syms = syms
		}
	}
	// Then every pair of adjacent bytes of the texts, so that a boundary
	// put elsewhere shows even where the learnt merges do not reach.
	seen := map[string]bool{}
	for _, m := range v.merges {
		seen[m] = true
	}
	for _, text := range bpeTexts {
		var prev string
		for _, c := range []byte(text) {
			cur := string(byteToRune[c])
			if m := prev + " " + cur; prev != "" && !seen[m] && m != "Ġ z" {
				seen[m] = true
				v.merges = append(v.merges, m)
				add(prev+cur, tokenNormal)
			}
			prev = cur
		}
	}
	add("Ġxyzzy", tokenNormal)
	add("<|begin_of_text|>", tokenControl)
	add("<|endoftext|>", tokenControl)
	add("<|im_start|>", 4) // user-defined
	add("<|im_end|>", tokenNormal)
	add("<think>", 4)
	add("<thi", 4)
	add("hello world", 4)                // a user-defined token with a space
	add("</s>", tokenControl)            // a normal token beside <|tool_response>, in llama.cpp
	add("<|tool_response>", tokenNormal) // a control token by its text
	add("<|end|>", tokenNormal)
	return v
}

// bpeVocabFile writes a llama model whose vocabulary is v with
// pre-tokenizer pre and the extra keys.
func bpeVocabFile(t testing.TB, v bpeTestVocab, pre string, extra ...gguf.KV) string {
	t.Helper()
	cfg := testConfig()
	cfg.Vocab = len(v.tokens)
	gw, err := NewGGUFWriter(GenerateWeights(cfg), runtime.TypeF32)
	if err != nil {
		t.Fatal(err)
	}
	kvs := []gguf.KV{{Key: "tokenizer.ggml.model", Value: gguf.Of("gpt2")},
		{Key: "tokenizer.ggml.pre", Value: gguf.Of(pre)},
		{Key: "tokenizer.ggml.tokens", Value: gguf.ArrayOf(v.tokens)},
		{Key: "tokenizer.ggml.token_type", Value: gguf.ArrayOf(v.types)},
		{Key: "tokenizer.ggml.merges", Value: gguf.ArrayOf(v.merges)},
		{Key: "tokenizer.ggml.bos_token_id", Value: gguf.Of(uint32(indexOf(v.tokens, "<|begin_of_text|>")))},
		{Key: "tokenizer.ggml.eos_token_id", Value: gguf.Of(uint32(indexOf(v.tokens, "<|endoftext|>")))},
	}
	for _, kv := range append(kvs, extra...) {
		if err := gw.Set(kv.Key, kv.Value); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(t.TempDir(), "bpe-"+pre+".gguf")
	if err := gw.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	return path
}

func indexOf(xs []string, s string) int {
	for i, x := range xs {
		if x == s {
			return i
		}
	}
	return -1
}

func loadTokenizer(t testing.TB, path string) *Tokenizer {
	t.Helper()
	m, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	tok, err := TokenizerFromGGUF(m.File)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// bpeTexts: Unicode, whitespace runs, newlines, digits, contractions,
// emoji, special tokens, invalid UTF-8 and a NUL.
var bpeTexts = []string{
	"Hello world", "The quick brown fox didn't jump.", "  two  spaces", "   leading", "trailing   ", " ",
	"tabs\t\tand\nnewlines\n\n\nend", "a\r\nb\r\n", "  \n  x", "digits 1234567 and 12 3 45678901 0",
	"don't I'LL we've they'Re it'S 'x", "café naïve über straße Ünïcödé", "日本語のテキストと中文 한국어",
	"emoji 🙂👍🏽 ok 🎉❤️", "mixed123abc!!!???...", "$100+200=<300> ^~|` @#%&*()[]{}",
	"<|endoftext|>special<|im_start|> user<|im_end|>", "a<|endoftext|><|endoftext|>b", "<think>x<thin<thi",
	"say hello world twice: hello world", "\xff\xfe bad utf8 \xc3 \xe2\x82 end\xf0\x9f", "\xc0\x80 overlong \xed\xa0\x80 surrogate",
	"pizzazz zap z", "xyzzy xyzzy  xyzzy", "¹²³ ½ Ⅻ ٣٤٥ numbers", "\u00a0nbsp\u2003em\u3000ideo\u0085nel",
	"\x00nul\x01ctl", "...and, punctuation; (yes) -- “quotes” «guillemets»", "func main() {\n\tfmt.Println(\"hi\")\n}\n",
	"\u2126mega \u212Aelvin \u1F7D \u1FD3 \ufb01 Ａｂｃ！？ 「」 、。 ‘q’", "中文\u3000文本 가나다 \u0800 end\u3000 ", "a \u2003 b\t\n",
	"a\u1F7Db \u2126x", "smile 🙂  ", "a ~b ~c `d `e", "it'Sx we'LLy they'REx", "🙂🙂  ", "x</s>y<|tool_response>z<|end|>",
	"a \x1cb \x1f c\u200b d\u180e e\ufeff f \u1680g  \u2028h \u00adi", "a…b。c，d、e।f۔g،h(i)j|k  l\u3000m",
	"", "x",
}

func TestBPETokenizer(t *testing.T) {
	v := newBPETestVocab(t, "gpt-2", 300)
	tok := loadTokenizer(t, bpeVocabFile(t, v, "gpt-2"))
	id := func(s string) int32 { return tok.bpe.ids[s] }
	for _, tc := range []struct {
		text string
		want []int32
	}{
		{"", nil},
		{"<|endoftext|>", []int32{id("<|endoftext|>")}},
		{" z", []int32{id("z")}}, // "Ġz" is no token: its non-token bytes are dropped
		{"<think>", []int32{id("<think>")}},
	} {
		if got := tok.Encode(tc.text, true); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Encode(%q) = %v, want %v", tc.text, got, tc.want)
		}
	}
	for _, s := range bpeTexts {
		if !utf8.ValidString(s) || strings.Contains(s, "<|") || strings.Contains(s, " z") || strings.ContainsRune(s, 0x85) {
			continue
		}
		if got := tok.Decode(tok.Encode(s, true)); got != s {
			t.Errorf("Decode(Encode(%q)) = %q", s, got)
		}
	}
	if tok.BOS() != id("<|begin_of_text|>") || tok.EOS() != id("<|endoftext|>") {
		t.Errorf("BOS, EOS = %d, %d", tok.BOS(), tok.EOS())
	}
}

// TestPreTokenizers checks each splitter on texts whose words are known.
func TestPreTokenizers(t *testing.T) {
	for _, tc := range []struct {
		pre, text string
		want      []string
	}{
		{"gpt-2", "Hello world's  end 123abc!!", []string{"Hello", " world", "'s", " ", " end", " 123", "abc", "!!"}},
		{"gpt-2", "a  \n b", []string{"a", "  \n", " b"}},
		{"llama-bpe", "Hello WORLD'S 1234567 x\n\n  y", []string{"Hello", " WORLD", "'S", " ", "123", "456", "7", " x", "\n\n", " ", " y"}},
		{"llama-bpe", "!!\n\nok ", []string{"!!\n\n", "ok", " "}},
		{"qwen2", "ab 123", []string{"ab", " ", "1", "2", "3"}},
		{"smollm", "x 12ab", []string{"x", " ", "1", "2", "ab"}},
		{"default", "12345 a.b", []string{"123", "45", " a", ".", "b"}},
	} {
		p, _ := preTokenizerFor(tc.pre)
		cps := []rune(tc.text)
		var got []string
		lo := 0
		for _, hi := range preTokenize(p.steps, cps) {
			got = append(got, string(cps[lo:hi]))
			lo = hi
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s %q: %q, want %q", tc.pre, tc.text, got, tc.want)
		}
	}
}

func TestBPEErrors(t *testing.T) {
	v := newBPETestVocab(t, "gpt-2", 40)
	long := strings.Repeat("x", MaxTokenBytes+1)
	for _, tc := range []struct {
		name  string
		extra []gguf.KV
		want  string
	}{
		{"unknown pre", []gguf.KV{{Key: "tokenizer.ggml.pre", Value: gguf.Of("no-such-pre")}}, "no-such-pre"},
		{"merges not strings", []gguf.KV{{Key: "tokenizer.ggml.merges", Value: gguf.ArrayOf([]int32{1})}}, "tokenizer.ggml.merges"},
		{"long merge", []gguf.KV{{Key: "tokenizer.ggml.merges", Value: gguf.ArrayOf([]string{long})}}, "limit"},
		{"duplicate", []gguf.KV{{Key: "tokenizer.ggml.tokens", Value: gguf.ArrayOf(append(append([]string{}, v.tokens[:len(v.tokens)-1]...), "a"))}}, "both"},
		{"types short", []gguf.KV{{Key: "tokenizer.ggml.token_type", Value: gguf.ArrayOf([]int32{1})}}, "token_type"},
		{"add_bos without bos", []gguf.KV{{Key: "tokenizer.ggml.bos_token_id", Value: gguf.Of(uint32(1 << 30))},
			{Key: "tokenizer.ggml.add_bos_token", Value: gguf.Of(true)}, {Key: "tokenizer.ggml.tokens", Value: gguf.ArrayOf(v.tokens[:11])},
			{Key: "tokenizer.ggml.token_type", Value: gguf.ArrayOf(v.types[:11])}}, "add_bos_token"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := bpeVocabFile(t, v, "gpt-2", tc.extra...)
			m, err := gguf.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			_, err = TokenizerFromGGUF(m.File)
			if !errors.Is(err, ErrTokenizer) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want ErrTokenizer naming %q", err, tc.want)
			}
		})
	}
}

// llamaTokenize runs the peer's llama-tokenize on path and text, or skips.
func llamaTokenizePeer(t *testing.T) func(path, text string) []int32 {
	t.Helper()
	root := os.Getenv("GOGML_PEER_ROOT")
	if root == "" {
		t.Skip("SKIP: GOGML_PEER_ROOT (the ggml peer sysroot, `bash scripts/ggml-peer.sh path`; make test sets it) not set")
	}
	libs := filepath.Join(root, "usr/lib/x86_64-linux-gnu")
	loader := filepath.Join(libs, "ld-linux-x86-64.so.2")
	bin := filepath.Join(root, "usr/bin/llama-tokenize")
	if _, err := os.Stat(bin); err != nil {
		t.Skipf("SKIP: %s not found (set GOGML_PEER_ROOT): tokenizer comparison not run", bin)
	}
	dir := t.TempDir()
	return func(path, text string) []int32 {
		// The text goes through a file: it may hold NUL and bytes argv cannot.
		tf := filepath.Join(dir, "text")
		if err := os.WriteFile(tf, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(loader, "--library-path", libs+":"+filepath.Join(libs, "llama"), bin,
			"-m", path, "-f", tf, "--ids", "--log-disable").Output()
		if err != nil {
			t.Fatalf("llama-tokenize %q: %v", text, err)
		}
		var ids []int32
		line := strings.TrimSpace(string(out))
		if i := strings.LastIndex(line, "\n"); i >= 0 {
			line = line[i+1:]
		}
		if err := json.Unmarshal([]byte(line), &ids); err != nil {
			t.Fatalf("llama-tokenize %q printed %q: %v", text, out, err)
		}
		return ids
	}
}

// TestBPETokenizerMatchesLlamaCpp: llama-tokenize (llama.cpp 0.7.0) gives
// the same ids as gogml on the same files and texts, for each
// pre-tokenizer gogml implements (a vocabulary trained with it each). The
// texts go in one prompt, separated by a control token: llama.cpp cuts
// special tokens out before it splits the text, so each text is
// tokenized on its own, and one run of llama-tokenize covers them all.
func TestBPETokenizerMatchesLlamaCpp(t *testing.T) {
	peer := llamaTokenizePeer(t)
	const sep = "<|sep|>"
	for _, tc := range []struct {
		pre   string
		extra []gguf.KV
	}{
		{pre: "gpt-2"}, {pre: "llama-bpe"}, {pre: "qwen2"}, {pre: "smollm"}, {pre: "default"}, {pre: "falcon"}, {pre: "deepseek-llm"},
		{pre: "deepseek-coder"}, {pre: "chatglm-bpe"}, {pre: "bloom"}, {pre: "viking"},
		{pre: "llama3", extra: []gguf.KV{{Key: "tokenizer.ggml.add_eos_token", Value: gguf.Of(true)}}},
		{pre: "gpt-2", extra: []gguf.KV{{Key: "tokenizer.ggml.add_bos_token", Value: gguf.Of(true)}}},
	} {
		t.Run(tc.pre, func(t *testing.T) {
			v := newBPETestVocab(t, tc.pre, 5000)
			v.tokens = append(v.tokens, sep)
			v.types = append(v.types, tokenControl)
			path := bpeVocabFile(t, v, tc.pre, tc.extra...)
			comparePeer(t, peer, path, sep)
		})
	}
}

// comparePeer tokenizes bpeTexts joined by sep with gogml and llama.cpp on
// the file at path and reports the texts whose ids differ.
func comparePeer(t *testing.T, peer func(path, text string) []int32, path, sep string) {
	t.Helper()
	tok := loadTokenizer(t, path)
	joined := strings.Join(bpeTexts, sep)
	want := peer(path, joined)
	got := tok.Encode(joined, tok.bpe.addBOS)
	if reflect.DeepEqual(got, want) {
		return
	}
	sepID := tok.bpe.ids[sep]
	g, w := splitIDs(got, sepID), splitIDs(want, sepID)
	for i, s := range bpeTexts {
		if i < len(g) && i < len(w) && !reflect.DeepEqual(g[i], w[i]) {
			t.Errorf("%q:\n gogml     %v\n llama.cpp %v", s, g[i], w[i])
		}
	}
	if len(g) != len(w) {
		t.Errorf("%d texts from gogml, %d from llama.cpp", len(g), len(w))
	}
}

// pyBPEVocab writes a vocabulary-only llama file (hyperparameters, no
// tensors: llama-tokenize loads the vocabulary only) with gguf-py's
// GGUFWriter from a JSON description. argv: PATH JSON.
const pyBPEVocab = `
import sys, json
from gguf import GGUFWriter
path, vocab = sys.argv[1], json.load(open(sys.argv[2]))
w = GGUFWriter(path, 'llama')
w.add_context_length(128); w.add_embedding_length(64); w.add_block_count(1); w.add_feed_forward_length(128)
w.add_head_count(4); w.add_head_count_kv(4); w.add_layer_norm_rms_eps(1e-5)
w.add_tokenizer_model('gpt2'); w.add_tokenizer_pre(vocab['pre'])
w.add_token_list(vocab['tokens']); w.add_token_types(vocab['types']); w.add_token_merges(vocab['merges'])
w.add_bos_token_id(vocab['bos']); w.add_eos_token_id(vocab['eos'])
w.write_header_to_file(); w.write_kv_data_to_file(); w.write_tensors_to_file(); w.close()
`

// TestBPEPeerWrittenVocab: vocabularies written by Debian's python3-gguf
// (gguf-py's own tokenizer keys, no tensors) tokenize in gogml as in
// llama.cpp. Needs both peers.
func TestBPEPeerWrittenVocab(t *testing.T) {
	peer := llamaTokenizePeer(t)
	dir := os.Getenv("GOGML_GGUF_PEER")
	if dir == "" {
		dir = "/tmp/gogml-gguf-peer/root/usr/lib/python3/dist-packages"
	}
	if _, err := os.Stat(filepath.Join(dir, "gguf", "gguf_writer.py")); err != nil {
		t.Skipf("SKIP: python3-gguf not found in %s (run scripts/gguf-peer.sh, or set GOGML_GGUF_PEER): not run", dir)
	}
	const sep = "<|sep|>"
	for _, pre := range []string{"llama-bpe", "qwen2", "gpt-2"} {
		t.Run(pre, func(t *testing.T) {
			v := newBPETestVocab(t, pre, 5000)
			v.tokens = append(v.tokens, sep)
			v.types = append(v.types, tokenControl)
			js, err := json.Marshal(map[string]any{"pre": pre, "tokens": v.tokens, "types": v.types, "merges": v.merges,
				"bos": indexOf(v.tokens, "<|begin_of_text|>"), "eos": indexOf(v.tokens, "<|endoftext|>")})
			if err != nil {
				t.Fatal(err)
			}
			jp, path := filepath.Join(t.TempDir(), "vocab.json"), filepath.Join(t.TempDir(), "py-bpe.gguf")
			if err := os.WriteFile(jp, js, 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command("/usr/bin/python3", "-c", pyBPEVocab, path, jp)
			cmd.Env = append(os.Environ(), "PYTHONPATH="+dir)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Skipf("SKIP: python3-gguf could not write the file (%v): %s", err, out)
			}
			comparePeer(t, peer, path, sep)
		})
	}
}

// splitIDs cuts ids at each sep.
func splitIDs(ids []int32, sep int32) [][]int32 {
	out := [][]int32{nil}
	for _, id := range ids {
		if id == sep {
			out = append(out, nil)
			continue
		}
		out[len(out)-1] = append(out[len(out)-1], id)
	}
	return out
}
