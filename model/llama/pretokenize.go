package llama

import (
	"unicode"
)

// The BPE pre-tokenizers: llama.cpp (llama-vocab.cpp) cuts text into words
// with a list of regexes per tokenizer.ggml.pre, each splitting the pieces
// the previous one left (a regex's matches and the text between them both
// become pieces). Go's regexp has no lookahead (\s+(?!\S)), so every
// regex used here is a hand-written splitter over code points with the
// semantics llama.cpp gives it: its own hand-coded GPT-2 and Llama 3
// splitters (unicode.cpp), and ECMAScript leftmost-alternative matching
// for the rest, which llama.cpp runs through std::regex on text whose
// non-ASCII code points are collapsed to one byte per Unicode category.

// cutFunc splits cps[lo:hi] (a piece) into consecutive pieces, calling
// cut with the end of each; the last end is hi.
type cutFunc func(cps []rune, lo, hi int, cut func(end int))

// preTokenizer is one tokenizer.ggml.pre: its splitters in order, and the
// vocabulary flags llama.cpp sets with it.
type preTokenizer struct {
	steps        []cutFunc
	ignoreMerges bool // a word that is a whole token is not merged
	addBOS       bool // default of tokenizer.ggml.add_bos_token
	noBOS        bool // no default BOS token (tokenizer.ggml.bos_token_id may set one)
}

// preTokenizers maps tokenizer.ggml.pre names to llama.cpp's pre-tokenizer
// types (llama_vocab::impl::load) that gogml implements.
func preTokenizerFor(name string) (preTokenizer, bool) {
	switch name {
	case "", "default":
		// [\p{P}\$\+<=>\^~\|]+, GPT-2, \p{N}+, [0-9][0-9][0-9]
		return preTokenizer{steps: []cutFunc{cutRuns(isDefaultPunct), cutGPT2, cutRuns(isNumber), cutASCIIDigits3}}, true
	case "llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0", "lfm2", "jina-v5-nano":
		return preTokenizer{steps: []cutFunc{cutLlama3(3)}, ignoreMerges: true, addBOS: true}, true
	case "dbrx", "smaug-bpe":
		return preTokenizer{steps: []cutFunc{cutLlama3(3)}}, true
	case "gpt-2", "phi-2", "jina-es", "jina-de", "gigachat", "jina-v2-es", "jina-v2-de", "a.x-4.0", "mellum", "modern-bert",
		"mpt", "olmo", "jais", "trillion", "granite-docling", "exaone4":
		return preTokenizer{steps: []cutFunc{cutGPT2}}, true
	case "qwen2", "deepseek-r1-qwen", "kormo", "f2llmv2", "megrez", "stablelm2", "hunyuan", "solar-open", "grok-2":
		return preTokenizer{steps: []cutFunc{cutLlama3(1)}}, true
	case "smollm", "starcoder", "refact", "command-r", "codeshell", "exaone", "minerva-7b", "mellum2":
		// \p{N}, then GPT-2
		return preTokenizer{steps: []cutFunc{cutEach(isNumber), cutGPT2}}, true
	case "deepseek-llm":
		return preTokenizer{steps: []cutFunc{cutEach(func(r rune) bool { return r == '\r' || r == '\n' }),
			cutLeadThenRun(wideSpace, inRanges(deepseekLetters)), cutLeadThenRun(wideSpace, inRanges(deepseekPunct)), cutTrailingSpace,
			cutRuns(func(r rune) bool { return inRanges(deepseekCJK)(wide(r)) }), cutRuns(isNumber)}}, true
	case "deepseek-coder":
		return preTokenizer{steps: []cutFunc{cutEach(func(r rune) bool { return r == '\r' || r == '\n' }),
			cutLeadThenRun(wideSpace, isLetter), cutLeadThenRun(wideSpace, unicode.IsPunct),
			cutRuns(func(r rune) bool { return inRanges(deepseekCJK)(wide(r)) }), cutEach(isNumber)}}, true
	case "chatglm-bpe", "glm4":
		return preTokenizer{steps: []cutFunc{cutLlama3(3)}, noBOS: true}, true
	case "poro-chat", "bloom", "gpt3-finnish":
		return preTokenizer{steps: []cutFunc{cutLeadThenRun(isPlainSpace, isPoroWord)}}, true
	case "viking":
		return preTokenizer{steps: []cutFunc{cutLeadThenRun(isPlainSpace, isPoroWord), cutEach(isNumber)}}, true
	case "falcon":
		return preTokenizer{steps: []cutFunc{cutRuns(isFalconPunct), cutGPT2, cutASCIIDigits3}}, true
	}
	return preTokenizer{}, false
}

// preTokenize splits cps with the steps and returns the end of each piece.
func preTokenize(steps []cutFunc, cps []rune) []int {
	ends := []int{len(cps)}
	for _, step := range steps {
		next := make([]int, 0, len(ends)+len(ends)/2)
		lo := 0
		for _, hi := range ends {
			step(cps, lo, hi, func(end int) {
				if end > lo && (len(next) == 0 || next[len(next)-1] != end) {
					next = append(next, end)
				}
			})
			if len(next) == 0 || next[len(next)-1] != hi {
				next = append(next, hi) // a splitter always covers its piece
			}
			lo = hi
		}
		ends = next
	}
	return ends
}

// Code point classes with llama.cpp's flags (unicode_cpt_flags): \p{L},
// \p{N}, \p{P} and White_Space (its \s). Go's tables are Unicode 15.0.
func isLetter(r rune) bool { return unicode.IsLetter(r) }
func isNumber(r rune) bool { return unicode.IsNumber(r) }
func isSpace(r rune) bool  { return unicode.Is(unicode.White_Space, r) }

// isDefaultPunct is [\p{P}\$\+<=>\^~\|].
func isDefaultPunct(r rune) bool {
	switch r {
	case '$', '+', '<', '=', '>', '^', '~', '|':
		return true
	}
	return unicode.IsPunct(r)
}

// isFalconPunct is [\p{P}\$\+<=>\^~\|`].
func isFalconPunct(r rune) bool { return r == '`' || isDefaultPunct(r) }

// cutRuns is the regex [class]+: runs of the class and the text between
// them are pieces.
func cutRuns(class func(rune) bool) cutFunc {
	return func(cps []rune, lo, hi int, cut func(int)) {
		for i := lo; i < hi; {
			in := class(cps[i])
			for i < hi && class(cps[i]) == in {
				i++
			}
			cut(i)
		}
	}
}

// cutEach is the regex [class]: each code point of the class is a piece,
// the text between them too.
func cutEach(class func(rune) bool) cutFunc {
	return func(cps []rune, lo, hi int, cut func(int)) {
		for i := lo; i < hi; {
			if class(cps[i]) {
				i++
			} else {
				for i < hi && !class(cps[i]) {
					i++
				}
			}
			cut(i)
		}
	}
}

// cutASCIIDigits3 is the regex [0-9][0-9][0-9], matched left to right.
func cutASCIIDigits3(cps []rune, lo, hi int, cut func(int)) {
	d := func(i int) bool { return i < hi && cps[i] >= '0' && cps[i] <= '9' }
	for i := lo; i < hi; {
		if d(i) && d(i+1) && d(i+2) {
			cut(i)
			i += 3
			cut(i)
			continue
		}
		i++
	}
	cut(hi)
}

// cutter holds one piece being split by a hand-written regex: at(i) and
// the class tests are false outside [lo, hi), as llama.cpp's
// OUT_OF_RANGE code point is.
type cutter struct {
	cps    []rune
	lo, hi int
}

func (c cutter) in(i int) bool { return i >= c.lo && i < c.hi }
func (c cutter) at(i int) rune {
	if c.in(i) {
		return c.cps[i]
	}
	return -1
}
func (c cutter) letter(i int) bool { return c.in(i) && isLetter(c.cps[i]) }
func (c cutter) number(i int) bool { return c.in(i) && isNumber(c.cps[i]) }
func (c cutter) space(i int) bool  { return c.in(i) && isSpace(c.cps[i]) }

// other is [^\s\p{L}\p{N}] at i.
func (c cutter) other(i int) bool {
	return c.in(i) && !isSpace(c.cps[i]) && !isLetter(c.cps[i]) && !isNumber(c.cps[i])
}

// contraction is the length of 's|'t|'re|'ve|'m|'ll|'d at i (0 if none),
// case-insensitive when fold is set.
func (c cutter) contraction(i int, fold bool) int {
	if c.at(i) != '\'' || !c.in(i+1) {
		return 0
	}
	low := func(r rune) rune {
		if fold {
			return unicode.ToLower(r)
		}
		return r
	}
	switch n := low(c.at(i + 1)); n {
	case 's', 't', 'm', 'd':
		return 2
	case 'r', 'v', 'l':
		if !c.in(i + 2) {
			return 0
		}
		nn := low(c.at(i + 2))
		if (n == 'r' && nn == 'e') || (n == 'v' && nn == 'e') || (n == 'l' && nn == 'l') {
			return 3
		}
	}
	return 0
}

// spaceRun is the whitespace run at i (\s*) and the end of its last
// \r or \n (0 if it has none).
func (c cutter) spaceRun(i int) (n, lastNL int) {
	for c.space(i + n) {
		if r := c.at(i + n); r == '\r' || r == '\n' {
			lastNL = i + n + 1
		}
		n++
	}
	return n, lastNL
}

// cutGPT2 is GPT-2's regex
// 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
// as llama.cpp's unicode_regex_split_custom_gpt2 runs it.
func cutGPT2(cps []rune, lo, hi int, cut func(int)) {
	c := cutter{cps, lo, hi}
	for pos := lo; pos < hi; {
		if n := c.contraction(pos, false); n > 0 {
			pos += n
			cut(pos)
			continue
		}
		q := pos
		if c.at(pos) == ' ' {
			q++ // the optional leading space
		}
		var class func(int) bool
		switch {
		case c.letter(q):
			class = c.letter
		case c.number(q):
			class = c.number
		case c.other(q):
			class = c.other
		}
		if class != nil {
			for pos = q; class(pos); pos++ {
			}
			cut(pos)
			continue
		}
		n, _ := c.spaceRun(pos)
		switch {
		case n > 1 && c.in(pos+n): // \s+(?!\S): leave the last space to the next word
			pos += n - 1
		case n > 0:
			pos += n
		default:
			pos++
		}
		cut(pos)
	}
}

// cutLlama3 is Llama 3's regex
// (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,digits}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
// as llama.cpp's unicode_regex_split_custom_llama3 runs it (digits 3);
// with digits 1 it is Qwen2's, which llama.cpp runs through std::regex
// with the same result.
func cutLlama3(digits int) cutFunc {
	return func(cps []rune, lo, hi int, cut func(int)) {
		c := cutter{cps, lo, hi}
		for pos := lo; pos < hi; {
			r := c.at(pos)
			if n := c.contraction(pos, true); n > 0 {
				pos += n
				cut(pos)
				continue
			}
			// [^\r\n\p{L}\p{N}]?\p{L}+
			if r != '\r' && r != '\n' && !c.number(pos) && (c.letter(pos) || c.letter(pos+1)) {
				for pos++; c.letter(pos); pos++ {
				}
				cut(pos)
				continue
			}
			// \p{N}{1,digits}
			if c.number(pos) {
				for n := 0; c.number(pos); {
					pos++
					if n++; n == digits {
						cut(pos)
						n = 0
					}
				}
				cut(pos)
				continue
			}
			// ' '?[^\s\p{L}\p{N}]+[\r\n]*
			q := pos
			if r == ' ' {
				q++
			}
			if c.other(q) || (r == ' ' && !c.in(q)) {
				for pos = q; c.other(pos); pos++ {
				}
				for c.at(pos) == '\r' || c.at(pos) == '\n' {
					pos++
				}
				cut(pos)
				continue
			}
			n, lastNL := c.spaceRun(pos)
			switch {
			case lastNL > 0: // \s*[\r\n]+
				pos = lastNL
			case n > 1 && c.in(pos+n): // \s+(?!\S)
				pos += n - 1
			case n > 0:
				pos += n
			default:
				pos++
			}
			cut(pos)
		}
	}
}

// deepseekLetters is the letter class of deepseek-llm's second regex
// (\s?[A-Za-zµÀ-ÖØ-ö...]+): the cased letters of an older Unicode, as
// inclusive ranges.
var deepseekLetters = [][2]rune{
	{0x41, 0x5A}, {0x61, 0x7A}, {0xB5, 0xB5}, {0xC0, 0xD6}, {0xD8, 0xF6}, {0xF8, 0x1BA}, {0x1BC, 0x1BF}, {0x1C4, 0x293},
	{0x295, 0x2AF}, {0x370, 0x373}, {0x376, 0x377}, {0x37B, 0x37D}, {0x37F, 0x37F}, {0x386, 0x386}, {0x388, 0x38A},
	{0x38C, 0x38C}, {0x38E, 0x3A1}, {0x3A3, 0x3F5}, {0x3F7, 0x481}, {0x48A, 0x52F}, {0x531, 0x556}, {0x10A0, 0x10C5},
	{0x13A0, 0x13F5}, {0x13F8, 0x13FD}, {0x1C90, 0x1CBA}, {0x1CBD, 0x1CBF}, {0x1D00, 0x1D2B}, {0x1D6B, 0x1D77},
	{0x1D79, 0x1D9A}, {0x1E00, 0x1F15}, {0x1F18, 0x1F1D}, {0x1F20, 0x1F45}, {0x1F48, 0x1F4D}, {0x1F50, 0x1F57},
	{0x1F59, 0x1F59}, {0x1F5B, 0x1F5B}, {0x1F5D, 0x1F5D}, {0x1F5F, 0x1F7D}, {0x1F80, 0x1FB4}, {0x1FB6, 0x1FBC},
	{0x1FBE, 0x1FBE}, {0x1FC2, 0x1FC4}, {0x1FC6, 0x1FCC}, {0x1FD0, 0x1FD3}, {0x1FD6, 0x1FDB}, {0x1FE0, 0x1FEC},
	{0x1FF2, 0x1FF4}, {0x1FF6, 0x1FFC}, {0x2102, 0x2102}, {0x2107, 0x2107}, {0x210A, 0x2113}, {0x2115, 0x2115},
	{0x2119, 0x211D}, {0x2124, 0x2124}, {0x2126, 0x2126}, {0x2128, 0x2128}, {0x212A, 0x212D}, {0x212F, 0x2134},
	{0x2139, 0x2139}, {0x213C, 0x213F}, {0x2145, 0x2149}, {0x214E, 0x214E}, {0x2183, 0x2184}, {0x2C00, 0x2C7B},
	{0x2C7E, 0x2CE4}, {0x2CEB, 0x2CEE}, {0x2CF2, 0x2CF3}, {0xA640, 0xA66D}, {0xA680, 0xA69B}, {0xA722, 0xA76F},
	{0xA771, 0xA787}, {0xA78B, 0xA78E}, {0xAB70, 0xABBF}, {0xFB00, 0xFB06}, {0xFB13, 0xFB17}, {0xFF21, 0xFF3A},
	{0xFF41, 0xFF5A}, {0x10400, 0x1044F}, {0x104B0, 0x104D3}, {0x104D8, 0x104FB}, {0x10C80, 0x10CB2}, {0x10CC0, 0x10CF2},
	{0x118A0, 0x118DF}, {0x1E900, 0x1E943},
}

// deepseekPunct is the class of its third regex (\s?[!-/:-~！-／：-～‘-‟　-。]+).
var deepseekPunct = [][2]rune{{0x21, 0x2F}, {0x3A, 0x7E}, {0xFF01, 0xFF0F}, {0xFF1A, 0xFF5E}, {0x2018, 0x201F}, {0x3000, 0x3002}}

// deepseekCJK is the class of its fifth regex ([一-龥ࠀ-一가-퟿]+).
var deepseekCJK = [][2]rune{{0x4E00, 0x9FA5}, {0x0800, 0x4E00}, {0xAC00, 0xD7FF}}

func inRanges(rs [][2]rune) func(rune) bool {
	return func(r rune) bool {
		for _, x := range rs {
			if r >= x[0] && r <= x[1] {
				return true
			}
		}
		return false
	}
}

// wideSpace is std::wregex's \s on llama.cpp's text, where non-ASCII
// whitespace has been replaced by a vertical tab: ASCII whitespace and
// Unicode White_Space.
func wideSpace(r rune) bool { return r == ' ' || (r >= '\t' && r <= '\r') || (r > 0x7f && isSpace(r)) }

// wide maps r as llama.cpp does before std::wregex: non-ASCII whitespace
// becomes a vertical tab, so no class written with literal characters
// matches it.
func wide(r rune) rune {
	if r > 0x7f && isSpace(r) {
		return '\v'
	}
	return r
}

// isPoroWord is the class [^(\s|.,!?…。，、।۔،)] of the Poro, Bloom and
// Viking regex  ?[^(\s|.,!?…。，、।۔،)]+.
func isPoroWord(r rune) bool {
	switch r {
	case '(', ')', '|', '.', ',', '!', '?', 0x2026, 0x3002, 0xFF0C, 0x3001, 0x0964, 0x06D4, 0x060C:
		return false
	}
	return !wideSpace(r)
}

// isPlainSpace is the regex's literal space.
func isPlainSpace(r rune) bool { return r == ' ' }

// cutLeadThenRun is the regex lead?[class]+ (lead is \s or a space) run
// by std::wregex (leftmost match; the text between matches is a piece
// too).
func cutLeadThenRun(lead, class func(rune) bool) cutFunc {
	return func(cps []rune, lo, hi int, cut func(int)) {
		in := func(i int) bool { return i < hi && class(wide(cps[i])) }
		for i := lo; i < hi; {
			switch {
			case lead(cps[i]) && in(i+1):
				cut(i)
				for i += 2; in(i); i++ {
				}
				cut(i)
			case in(i):
				cut(i)
				for i++; in(i); i++ {
				}
				cut(i)
			default:
				i++
			}
		}
		cut(hi)
	}
}

// cutTrailingSpace is the regex \s+$: the whitespace that ends a piece.
func cutTrailingSpace(cps []rune, lo, hi int, cut func(int)) {
	i := hi
	for i > lo && wideSpace(cps[i-1]) {
		i--
	}
	cut(i)
	cut(hi)
}
