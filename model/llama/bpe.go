package llama

import (
	"container/heap"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/gogml/gogml/gguf"
)

// Limits on what a file's vocabulary may ask gogml to hold: the largest
// real vocabularies have about 260 000 tokens and merges, tokens of a few
// hundred bytes.
const (
	// MaxVocabTokens caps tokenizer.ggml.tokens.
	MaxVocabTokens = 1 << 21
	// MaxBPEMerges caps tokenizer.ggml.merges.
	MaxBPEMerges = 1 << 21
	// MaxTokenBytes caps the length of one token or merge.
	MaxTokenBytes = 1 << 12
)

// llama.cpp's token attributes (llama_token_attr), from token types.
const (
	attrUnknown     = 1 << 0
	attrUnused      = 1 << 1
	attrNormal      = 1 << 2
	attrControl     = 1 << 3
	attrUserDefined = 1 << 4
	attrByte        = 1 << 5
)

// bpePair is a merge's two sides.
type bpePair struct{ left, right string }

// bpeVocab is a byte-level BPE ("gpt2") vocabulary as llama.cpp reads
// it: tokens, their attributes, merge ranks, the pre-tokenizer, and the
// special tokens (control, user-defined, unknown) longest first, which
// are cut out of the text before it is split.
type bpeVocab struct {
	tokens  []string
	attrs   []uint8
	ids     map[string]int32
	ranks   map[bpePair]int32
	pre     preTokenizer
	preName string
	special []int32
	addBOS  bool
	addEOS  bool
	bos     int32 // -1: none
	eos     int32
}

// gguf token types (tokenizer.ggml.token_type) to attributes.
func tokenTypeAttr(tt int32) uint8 {
	switch tt {
	case 1:
		return attrNormal
	case 2:
		return attrUnknown
	case 3:
		return attrControl
	case 4:
		return attrUserDefined
	case 5:
		return attrUnused
	case 6:
		return attrByte
	}
	return 0 // LLAMA_TOKEN_ATTR_UNDEFINED
}

// controlLooking reports whether llama.cpp treats a token with text s as
// a control token whatever its type (its end-of-generation and
// fill-in-the-middle detection by text).
func controlLooking(s string) bool {
	switch s {
	case "<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<|flush|>", "<|calls|>", "<end_of_turn>",
		"<|endoftext|>", "</s>", "<|eom_id|>", "<EOT>", "_<EOT>", "[EOT]", "[EOS]", "<|end_of_text|>", "<end_of_utterance>",
		"<eos>", "<turn|>", "<|tool_response>", "<｜end▁of▁sentence｜>", "[e~[",
		"<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>", "<｜fim▁begin｜>", "<PRE>", "▁<PRE>", "<|code_prefix|>", "<|prefix|>",
		"<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>", "<｜fim▁hole｜>", "<SUF>", "▁<SUF>", "<|code_suffix|>", "<|suffix|>",
		"<|fim_middle|>", "<fim-middle>", "<fim_middle>", "<｜fim▁end｜>", "<MID>", "▁<MID>", "<|code_middle|>", "<|middle|>",
		"<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]",
		"<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>", "<|file_sep|>":
		return true
	}
	return false
}

// stringArray reads key as a list of strings of at most maxN elements,
// each at most MaxTokenBytes long.
func stringArray(f *gguf.File, key string, maxN int) ([]string, error) {
	v, ok := f.Get(key)
	if !ok {
		return nil, fmt.Errorf("%w: %s missing", ErrTokenizer, key)
	}
	xs, ok := gguf.ArrayAs[string](v)
	if !ok {
		return nil, fmt.Errorf("%w: %s is a %s, not a list of strings", ErrTokenizer, key, v.Type())
	}
	if len(xs) > maxN {
		return nil, fmt.Errorf("%w: %s has %d entries, more than gogml's limit of %d", ErrTokenizer, key, len(xs), maxN)
	}
	for i, s := range xs {
		if len(s) > MaxTokenBytes {
			return nil, fmt.Errorf("%w: %s[%d] is %d bytes, more than gogml's limit of %d", ErrTokenizer, key, i, len(s), MaxTokenBytes)
		}
	}
	return xs, nil
}

// bpeFromGGUF reads a "gpt2" vocabulary the way llama_vocab::impl::load
// does.
func bpeFromGGUF(f *gguf.File) (*bpeVocab, error) {
	preName := ""
	if v, ok := f.Get("tokenizer.ggml.pre"); ok {
		s, ok := gguf.As[string](v)
		if !ok {
			return nil, fmt.Errorf("%w: tokenizer.ggml.pre is a %s, not a string", ErrTokenizer, v.Type())
		}
		preName = s
	}
	pre, ok := preTokenizerFor(preName)
	if !ok {
		return nil, fmt.Errorf("%w: BPE pre-tokenizer tokenizer.ggml.pre = %q is not one gogml implements", ErrTokenizer, preName)
	}
	tokens, err := stringArray(f, "tokenizer.ggml.tokens", MaxVocabTokens)
	if err != nil {
		return nil, err
	}
	if len(tokens) == 0 {
		return nil, fmt.Errorf("%w: tokenizer.ggml.tokens is empty", ErrTokenizer)
	}
	merges, err := stringArray(f, "tokenizer.ggml.merges", MaxBPEMerges)
	if err != nil {
		return nil, err
	}
	v := &bpeVocab{tokens: make([]string, len(tokens)), ids: make(map[string]int32, len(tokens)),
		ranks: make(map[bpePair]int32, len(merges)), pre: pre, preName: preName, addBOS: pre.addBOS, bos: 11, eos: 11}
	for i, s := range tokens {
		if s == "" {
			s = fmt.Sprintf("[EMPTY_%d]", i) // llama.cpp's name for an empty token
		}
		if j, dup := v.ids[s]; dup {
			return nil, fmt.Errorf("%w: token %q is both %d and %d", ErrTokenizer, s, j, i)
		}
		v.ids[s] = int32(i)
		v.tokens[i] = s
	}
	if v.attrs, err = tokenAttrs(f, v.tokens); err != nil {
		return nil, err
	}
	for i, m := range merges {
		var p bpePair // llama.cpp splits at the first space after the first byte; none: two empty sides
		if len(m) > 1 {
			if sp := strings.IndexByte(m[1:], ' '); sp >= 0 {
				p = bpePair{m[:sp+1], m[sp+2:]}
			}
		}
		if _, ok := v.ranks[p]; !ok {
			v.ranks[p] = int32(i)
		}
	}
	if pre.noBOS {
		v.bos = -1
	}
	for _, k := range []struct {
		key string
		dst *int32
	}{{"tokenizer.ggml.bos_token_id", &v.bos}, {"tokenizer.ggml.eos_token_id", &v.eos}} {
		if int(*k.dst) >= len(tokens) {
			*k.dst = -1
		}
		if x, err := f.Int(k.key); err == nil && x >= 0 && x < int64(len(tokens)) {
			*k.dst = int32(x)
		}
	}
	for _, k := range []struct {
		key string
		dst *bool
	}{{"tokenizer.ggml.add_bos_token", &v.addBOS}, {"tokenizer.ggml.add_eos_token", &v.addEOS}} {
		if x, ok := f.Get(k.key); ok {
			if b, ok := gguf.As[bool](x); ok {
				*k.dst = b
			}
		}
	}
	if v.addBOS && v.bos < 0 {
		return nil, fmt.Errorf("%w: tokenizer.ggml.add_bos_token is true, but tokenizer.ggml.bos_token_id is not set", ErrTokenizer)
	}
	if v.addEOS && v.eos < 0 {
		return nil, fmt.Errorf("%w: tokenizer.ggml.add_eos_token is true, but tokenizer.ggml.eos_token_id is not set", ErrTokenizer)
	}
	v.special = specialTokens(v.tokens, v.attrs)
	return v, nil
}

// tokenAttrs are the attributes of tokens: from tokenizer.ggml.token_type
// (all normal without it), with llama.cpp's overrides by text.
func tokenAttrs(f *gguf.File, tokens []string) ([]uint8, error) {
	var types []int32
	if tv, ok := f.Get("tokenizer.ggml.token_type"); ok {
		types, ok = gguf.ArrayAs[int32](tv)
		if !ok || len(types) < len(tokens) {
			return nil, fmt.Errorf("%w: tokenizer.ggml.token_type is not %d int32 values", ErrTokenizer, len(tokens))
		}
	}
	attrs := make([]uint8, len(tokens))
	for i, s := range tokens {
		attrs[i] = attrNormal
		if types != nil {
			attrs[i] = tokenTypeAttr(types[i])
		}
		if controlLooking(s) {
			attrs[i] |= attrControl
		}
		switch s {
		case "<|channel|>", "<|message|>", "<|start|>", "<|constrain|>":
			attrs[i] = attrUserDefined // llama.cpp always renders these (gpt-oss)
		}
	}
	// llama.cpp's workarounds: <|end|> is no control token beside
	// <|return|> and <|call|> (or <|calls|> and <|flush|>), </s> is a
	// normal one beside <|tool_response>.
	at := map[string]int{}
	for i, s := range tokens {
		switch s {
		case "<|return|>", "<|call|>", "<|calls|>", "<|flush|>", "<|end|>", "<|tool_response>", "</s>":
			if _, ok := at[s]; !ok {
				at[s] = i
			}
		}
	}
	has := func(s string) bool { _, ok := at[s]; return ok }
	if has("<|end|>") && ((has("<|return|>") && has("<|call|>")) || (has("<|calls|>") && has("<|flush|>"))) {
		attrs[at["<|end|>"]] = attrUserDefined
	}
	if has("<|tool_response>") && has("</s>") {
		attrs[at["</s>"]] = attrNormal
	}
	return attrs, nil
}

// specialTokens are the control, user-defined and unknown tokens, longest
// first: the ones cut out of a text before it is tokenized.
func specialTokens(tokens []string, attrs []uint8) []int32 {
	var special []int32
	for id, a := range attrs {
		if a&(attrControl|attrUserDefined|attrUnknown) != 0 && tokens[id] != "" {
			special = append(special, int32(id))
		}
	}
	sort.SliceStable(special, func(i, j int) bool { return len(tokens[special[i]]) > len(tokens[special[j]]) })
	return special
}

// fragment is a piece of the text, or a special token cut out of it.
type fragment struct {
	text  string
	token int32 // -1 for text
}

// partition cuts the special tokens out of text, longest first, as
// llama.cpp's tokenizer_st_partition does with parse_special: every
// occurrence, left to right, in the text that is left.
func partition(text string, tokens []string, special []int32) []fragment {
	frags := []fragment{{text: text, token: -1}}
	for _, id := range special {
		sp := tokens[id]
		var next []fragment
		for _, f := range frags {
			if f.token >= 0 {
				next = append(next, f)
				continue
			}
			rest := f.text
			for {
				i := strings.Index(rest, sp)
				if i < 0 {
					break
				}
				if i > 0 {
					next = append(next, fragment{text: rest[:i], token: -1})
				}
				next = append(next, fragment{token: id})
				rest = rest[i+len(sp):]
			}
			if rest != "" {
				next = append(next, fragment{text: rest, token: -1})
			}
		}
		frags = next
	}
	return frags
}

// encode tokenizes text like llama_tokenize(add_special, parse_special =
// true) on a BPE vocabulary.
func (v *bpeVocab) encode(text string, addSpecial bool) []int32 {
	var out []int32
	if addSpecial && v.addBOS {
		out = append(out, v.bos)
	}
	if text != "" {
		for _, f := range partition(text, v.tokens, v.special) {
			if f.token >= 0 {
				out = append(out, f.token)
				continue
			}
			out = v.encodeText(f.text, out)
		}
	}
	if addSpecial && v.addEOS {
		out = append(out, v.eos)
	}
	return out
}

// encodeText appends the tokens of text without special tokens: the
// pre-tokenizer's words, each byte-encoded and merged by rank.
func (v *bpeVocab) encodeText(text string, out []int32) []int32 {
	cps := decodeUTF8Lenient(text)
	lo := 0
	var word []byte
	for _, hi := range preTokenize(v.pre.steps, cps) {
		word = word[:0]
		for _, r := range cps[lo:hi] {
			var buf [4]byte
			for _, b := range buf[:encodeRuneLenient(buf[:], r)] {
				word = utf8.AppendRune(word, byteToRune[b])
			}
		}
		lo = hi
		out = v.mergeWord(string(word), out)
	}
	return out
}

// bpeSymbol is a piece of a word in the merge list.
type bpeSymbol struct {
	prev, next int
	start, n   int // bytes of the word; n == 0 once merged away
}

type bpeBigram struct {
	left, right int
	rank        int32
	nl, nr      int // the sides' lengths when queued
}

// bigramHeap pops the lowest rank first, then the leftmost.
type bigramHeap []bpeBigram

func (q bigramHeap) Len() int { return len(q) }
func (q bigramHeap) Less(i, j int) bool {
	return q[i].rank < q[j].rank || (q[i].rank == q[j].rank && q[i].left < q[j].left)
}
func (q bigramHeap) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *bigramHeap) Push(x any)   { *q = append(*q, x.(bpeBigram)) }
func (q *bigramHeap) Pop() any {
	old := *q
	x := old[len(old)-1]
	*q = old[:len(old)-1]
	return x
}

// mergeWord appends the tokens of one byte-encoded word
// (llm_tokenizer_bpe_session::tokenize).
func (v *bpeVocab) mergeWord(word string, out []int32) []int32 {
	if word == "" {
		return out
	}
	if id, ok := v.ids[word]; ok && v.pre.ignoreMerges {
		return append(out, id)
	}
	var syms []bpeSymbol
	for off := 0; off < len(word); {
		n := min(utf8SeqLen(word[off]), len(word)-off)
		syms = append(syms, bpeSymbol{prev: len(syms) - 1, next: len(syms) + 1, start: off, n: n})
		off += n
	}
	syms[len(syms)-1].next = -1
	q := &bigramHeap{}
	add := func(l, r int) {
		if l < 0 || r < 0 {
			return
		}
		a, b := syms[l], syms[r]
		rank, ok := v.ranks[bpePair{word[a.start : a.start+a.n], word[b.start : b.start+b.n]}]
		if ok {
			heap.Push(q, bpeBigram{left: l, right: r, rank: rank, nl: a.n, nr: b.n})
		}
	}
	for i := 1; i < len(syms); i++ {
		add(i-1, i)
	}
	for q.Len() > 0 {
		bg := heap.Pop(q).(bpeBigram)
		l, r := &syms[bg.left], &syms[bg.right]
		if l.n == 0 || r.n == 0 || l.n != bg.nl || r.n != bg.nr {
			continue // outdated
		}
		l.n += r.n
		r.n = 0
		l.next = r.next
		if r.next >= 0 {
			syms[r.next].prev = bg.left
		}
		add(l.prev, bg.left)
		add(bg.left, l.next)
	}
	for i := 0; i != -1; i = syms[i].next {
		s := word[syms[i].start : syms[i].start+syms[i].n]
		if id, ok := v.ids[s]; ok {
			out = append(out, id)
			continue
		}
		// llama.cpp looks each byte of the encoded piece up as a token
		// and drops the ones that are not.
		for j := 0; j < len(s); j++ {
			if id, ok := v.ids[s[j:j+1]]; ok {
				out = append(out, id)
			}
		}
	}
	return out
}

// decode turns ids into text as llama_token_to_piece with special = false
// does: normal tokens are byte-decoded, user-defined ones are their text,
// byte tokens their byte, control and unknown tokens nothing. Ids outside
// the vocabulary are skipped; invalid UTF-8 becomes U+FFFD.
func (v *bpeVocab) decode(ids []int32) string {
	var b []byte
	for _, id := range ids {
		if id < 0 || int(id) >= len(v.tokens) {
			continue
		}
		s, a := v.tokens[id], v.attrs[id]
		switch {
		case a&(attrControl|attrUnknown) != 0:
		case a&attrUserDefined != 0:
			b = append(b, s...)
		case a&attrNormal != 0:
			for _, r := range s {
				if c, ok := runeToByte(r); ok {
					b = append(b, c)
				} else {
					b = utf8.AppendRune(b, r)
				}
			}
		case a&attrByte != 0:
			var x byte
			if _, err := fmt.Sscanf(s, "<0x%02X>", &x); err == nil {
				b = append(b, x)
			}
		}
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}

// byteToRune is GPT-2's bytes_to_unicode: printable Latin-1 bytes stand
// for themselves, the others for U+0100 onwards in byte order.
var byteToRune = func() (m [256]rune) {
	n := rune(0)
	for b := range m {
		if (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff) {
			m[b] = rune(b)
		} else {
			m[b] = 0x100 + n
			n++
		}
	}
	return m
}()

// runeToByte inverts byteToRune.
func runeToByte(r rune) (byte, bool) {
	if r < 0 || r >= rune(len(runeByte)) || runeByte[r] < 0 {
		return 0, false
	}
	return byte(runeByte[r]), true
}

// runeByte is byteToRune's inverse, -1 where a rune stands for no byte.
var runeByte = func() (m [0x100 + 68]int16) {
	for i := range m {
		m[i] = -1
	}
	for b, r := range byteToRune {
		m[r] = int16(b)
	}
	return m
}()

// decodeUTF8Lenient decodes text as llama.cpp 0.7.0's
// unicode_cpts_from_utf8: surrogates pass, and a byte that starts no
// valid sequence (a stray continuation, a truncated or overlong sequence,
// one above U+10FFFF) is U+FFFD on its own.
func decodeUTF8Lenient(s string) []rune {
	cps := make([]rune, 0, len(s))
	cont := func(i int) bool { return i < len(s) && s[i]&0xc0 == 0x80 }
	for i := 0; i < len(s); {
		c := s[i]
		r, n := rune(0xfffd), 1
		switch {
		case c < 0x80:
			r = rune(c)
		case c&0x40 == 0:
		case c&0x20 == 0:
			if cont(i+1) && c >= 0xc2 {
				r, n = rune(c&0x1f)<<6|rune(s[i+1]&0x3f), 2
			}
		case c&0x10 == 0:
			if cont(i+1) && cont(i+2) {
				x := rune(c&0x0f)<<12 | rune(s[i+1]&0x3f)<<6 | rune(s[i+2]&0x3f)
				if x >= 0x800 {
					r, n = x, 3
				}
			}
		case c&0x08 == 0:
			if cont(i+1) && cont(i+2) && cont(i+3) {
				x := rune(c&0x07)<<18 | rune(s[i+1]&0x3f)<<12 | rune(s[i+2]&0x3f)<<6 | rune(s[i+3]&0x3f)
				if x >= 0x10000 && x <= 0x10ffff {
					r, n = x, 4
				}
			}
		}
		cps = append(cps, r)
		i += n
	}
	return cps
}

// encodeRuneLenient writes r as UTF-8 the way llama.cpp's
// unicode_cpt_to_utf8 does (surrogates too) and returns the length.
func encodeRuneLenient(p []byte, r rune) int {
	switch {
	case r < 0x80:
		p[0] = byte(r)
		return 1
	case r < 0x800:
		p[0], p[1] = 0xc0|byte(r>>6), 0x80|byte(r)&0x3f
		return 2
	case r < 0x10000:
		p[0], p[1], p[2] = 0xe0|byte(r>>12), 0x80|byte(r>>6)&0x3f, 0x80|byte(r)&0x3f
		return 3
	}
	p[0], p[1], p[2], p[3] = 0xf0|byte(r>>18)&0x07, 0x80|byte(r>>12)&0x3f, 0x80|byte(r>>6)&0x3f, 0x80|byte(r)&0x3f
	return 4
}
