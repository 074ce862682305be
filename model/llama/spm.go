package llama

import (
	"container/heap"
	"errors"
	"fmt"
	"strings"

	"github.com/gogml/gogml/gguf"
)

// ErrTokenizer is wrapped when a file's vocabulary cannot be used.
var ErrTokenizer = errors.New("llama: tokenizer")

// Tokenizer is a GGUF file's tokenizer, with llama.cpp's algorithms. A
// SentencePiece-style ("llama") vocabulary: spaces become U+2581, a
// space is put in front of the text, adjacent pieces merge best score
// first, and text no token covers falls back to byte tokens <0xXX>. A
// byte-level BPE ("gpt2") vocabulary: see bpe.go. Both cut the special
// tokens (control, user-defined, unknown) written in the text out first,
// as llama-tokenize does.
type Tokenizer struct {
	bpe      *bpeVocab // set for a "gpt2" vocabulary
	tokens   []string
	scores   []float32
	ids      map[string]int32
	bytes    [256]int32 // token of each byte, -1 if none
	bos, eos int32
	unk      int32
	addBOS   bool
	addEOS   bool
	addSpace bool
	special  []int32 // see specialTokens
}

// TokenizerFromGGUF reads tokenizer.ggml.* from f: the "llama" (SPM) and
// "gpt2" (byte-level BPE) models are supported.
func TokenizerFromGGUF(f *gguf.File) (*Tokenizer, error) {
	model, err := f.String("tokenizer.ggml.model")
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrTokenizer, err)
	}
	if model == "gpt2" {
		v, err := bpeFromGGUF(f)
		if err != nil {
			return nil, err
		}
		return &Tokenizer{bpe: v, tokens: v.tokens, bos: v.bos, eos: v.eos, unk: -1}, nil
	}
	if model != "llama" {
		return nil, fmt.Errorf("%w: tokenizer model %q (gogml has the SentencePiece \"llama\" and byte-level BPE \"gpt2\" ones)", ErrTokenizer, model)
	}
	tokens, err := stringArray(f, "tokenizer.ggml.tokens", MaxVocabTokens)
	if err != nil {
		return nil, err
	}
	if len(tokens) == 0 {
		return nil, fmt.Errorf("%w: tokenizer.ggml.tokens is empty", ErrTokenizer)
	}
	attrs, err := tokenAttrs(f, tokens)
	if err != nil {
		return nil, err
	}
	t := &Tokenizer{tokens: tokens, ids: make(map[string]int32, len(tokens)), bos: 1, eos: 2, unk: 0, addBOS: true, addSpace: true,
		special: specialTokens(tokens, attrs)}
	t.scores = make([]float32, len(tokens))
	if sv, ok := f.Get("tokenizer.ggml.scores"); ok {
		s, ok := gguf.ArrayAs[float32](sv)
		if !ok || len(s) != len(tokens) {
			return nil, fmt.Errorf("%w: tokenizer.ggml.scores is not %d f32 values", ErrTokenizer, len(tokens))
		}
		copy(t.scores, s)
	}
	for i := len(tokens) - 1; i >= 0; i-- { // the first of duplicates wins
		t.ids[tokens[i]] = int32(i)
	}
	for b := range t.bytes {
		t.bytes[b] = -1
		if id, ok := t.ids[fmt.Sprintf("<0x%02X>", b)]; ok {
			t.bytes[b] = id
		} else if id, ok := t.ids[string(rune(b))]; ok && b < 0x80 {
			t.bytes[b] = id
		}
	}
	for _, k := range []struct {
		key string
		dst *int32
	}{{"tokenizer.ggml.bos_token_id", &t.bos}, {"tokenizer.ggml.eos_token_id", &t.eos}, {"tokenizer.ggml.unknown_token_id", &t.unk}} {
		if v, err := f.Int(k.key); err == nil {
			if v < 0 || v >= int64(len(tokens)) {
				return nil, fmt.Errorf("%w: %s = %d outside the %d tokens", ErrTokenizer, k.key, v, len(tokens))
			}
			*k.dst = int32(v)
		}
	}
	for _, k := range []struct {
		key string
		dst *bool
	}{{"tokenizer.ggml.add_bos_token", &t.addBOS}, {"tokenizer.ggml.add_eos_token", &t.addEOS}, {"tokenizer.ggml.add_space_prefix", &t.addSpace}} {
		if v, ok := f.Get(k.key); ok {
			if b, ok := gguf.As[bool](v); ok {
				*k.dst = b
			}
		}
	}
	return t, nil
}

// String describes the tokenizer: its model, pre-tokenizer and sizes.
func (t *Tokenizer) String() string {
	if t.bpe != nil {
		return fmt.Sprintf("byte-level BPE (\"gpt2\", pre-tokenizer %q), %d tokens, %d merges, %d special",
			t.bpe.preName, len(t.bpe.tokens), len(t.bpe.ranks), len(t.bpe.special))
	}
	return fmt.Sprintf("SentencePiece (\"llama\"), %d tokens, %d special", len(t.tokens), len(t.special))
}

// BOS is the beginning-of-sequence token, -1 if the vocabulary has none.
func (t *Tokenizer) BOS() int32 { return t.bos }

// EOS is the end-of-sequence token, -1 if the vocabulary has none.
func (t *Tokenizer) EOS() int32 { return t.eos }

// spmSymbol is a piece of the text in the merge list.
type spmSymbol struct {
	prev, next int
	start, n   int // bytes of the text; n == 0 once merged away
}

type spmBigram struct {
	left, right int
	score       float32
	size        int
}

// bigramQueue pops the best score first, then the leftmost.
type bigramQueue []spmBigram

func (q bigramQueue) Len() int { return len(q) }
func (q bigramQueue) Less(i, j int) bool {
	return q[i].score > q[j].score || (q[i].score == q[j].score && q[i].left < q[j].left)
}
func (q bigramQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *bigramQueue) Push(x any)   { *q = append(*q, x.(spmBigram)) }
func (q *bigramQueue) Pop() any {
	old := *q
	x := old[len(old)-1]
	*q = old[:len(old)-1]
	return x
}

// Encode tokenizes text, with the BOS token first and the EOS token last
// when the vocabulary asks for them and addSpecial is set. Special tokens
// written in the text are parsed (llama_tokenize with parse_special).
func (t *Tokenizer) Encode(text string, addSpecial bool) []int32 {
	if t.bpe != nil {
		return t.bpe.encode(text, addSpecial)
	}
	var out []int32
	if addSpecial && t.addBOS {
		out = append(out, t.bos)
	}
	prevSpecial := true // a text after a special token gets the space prefix
	if text != "" {
		for _, f := range partition(text, t.tokens, t.special) {
			if f.token >= 0 {
				out = append(out, f.token)
				prevSpecial = true
				continue
			}
			s := f.text
			if t.addSpace && prevSpecial {
				s = " " + s
			}
			out = t.encodeSPM(s, out)
			prevSpecial = false
		}
	}
	if addSpecial && t.addEOS {
		out = append(out, t.eos)
	}
	return out
}

// encodeSPM appends the tokens of a text without special tokens.
func (t *Tokenizer) encodeSPM(text string, out []int32) []int32 {
	text = strings.ReplaceAll(text, " ", "\u2581")
	var syms []spmSymbol
	for off := 0; off < len(text); {
		n := utf8SeqLen(text[off])
		n = min(n, len(text)-off)
		syms = append(syms, spmSymbol{prev: len(syms) - 1, next: len(syms) + 1, start: off, n: n})
		off += n
	}
	syms[len(syms)-1].next = -1
	revMerge := map[string][2]int{}
	q := &bigramQueue{}
	tryAdd := func(left, right int) {
		if left < 0 || right < 0 {
			return
		}
		piece := text[syms[left].start : syms[left].start+syms[left].n+syms[right].n]
		id, ok := t.ids[piece]
		if !ok {
			return
		}
		heap.Push(q, spmBigram{left: left, right: right, score: t.scores[id], size: len(piece)})
		revMerge[piece] = [2]int{left, right}
	}
	for i := 1; i < len(syms); i++ {
		tryAdd(i-1, i)
	}
	for q.Len() > 0 {
		b := heap.Pop(q).(spmBigram)
		l, r := &syms[b.left], &syms[b.right]
		if l.n == 0 || r.n == 0 || l.n+r.n != b.size {
			continue
		}
		l.n += r.n
		r.n = 0
		l.next = r.next
		if r.next >= 0 {
			syms[r.next].prev = b.left
		}
		tryAdd(l.prev, b.left)
		tryAdd(b.left, l.next)
	}
	var resegment func(s spmSymbol)
	resegment = func(s spmSymbol) {
		piece := text[s.start : s.start+s.n]
		if id, ok := t.ids[piece]; ok {
			out = append(out, id)
			return
		}
		if p, ok := revMerge[piece]; ok {
			resegment(syms[p[0]])
			resegment(syms[p[1]])
			return
		}
		for i := 0; i < len(piece); i++ {
			id := t.bytes[piece[i]]
			if id < 0 {
				id = t.unk
			}
			out = append(out, id)
		}
	}
	for i := 0; i != -1; i = syms[i].next {
		resegment(syms[i])
	}
	return out
}

// utf8SeqLen is the length of the UTF-8 sequence that starts with byte c
// (llama.cpp's unicode_len_utf8: 1 for a stray continuation byte).
func utf8SeqLen(c byte) int {
	switch {
	case c < 0xc0:
		return 1
	case c < 0xe0:
		return 2
	case c < 0xf0:
		return 3
	}
	return 4
}

// Decode turns ids back into text: byte tokens become their byte, U+2581
// a space, BOS and EOS nothing, invalid UTF-8 U+FFFD. Ids outside the vocabulary are
// skipped.
func (t *Tokenizer) Decode(ids []int32) string {
	if t.bpe != nil {
		return t.bpe.decode(ids)
	}
	var b []byte
	for _, id := range ids {
		if id < 0 || int(id) >= len(t.tokens) || id == t.bos || id == t.eos {
			continue
		}
		s := t.tokens[id]
		var v byte
		if len(s) == 6 && strings.HasPrefix(s, "<0x") && s[5] == '>' {
			if _, err := fmt.Sscanf(s, "<0x%02X>", &v); err == nil {
				b = append(b, v)
				continue
			}
		}
		b = append(b, s...)
	}
	// U+2581 may also come out of byte tokens, so it is replaced last.
	return strings.ReplaceAll(strings.ToValidUTF8(string(b), "\uFFFD"), "\u2581", " ")
}
