package tokenizer

import (
	"fmt"
	"unicode"
	"unicode/utf8"

	"github.com/dlclark/regexp2"
)

// QwenPattern is the pre-tokenizer pattern of Qwen2, Qwen2.5 and Qwen3
// (the same as GPT-4's cl100k, except digits are split one by one).
const QwenPattern = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`

// splitter cuts normalized text into pre-tokens (byte ranges).
type splitter interface {
	split(s string, emit func(start, end int))
	// pattern is the regular expression it splits with (saved in
	// tokenizer.json).
	pattern() string
}

// newSplitter returns the fast scanner for QwenPattern and a regexp2 (a
// backtracking engine with look-ahead, like Hugging Face's Oniguruma) for
// any other pattern.
func newSplitter(pattern string) (splitter, error) {
	if pattern == QwenPattern {
		return qwenScanner{}, nil
	}
	re, err := regexp2.Compile(pattern, regexp2.Unicode)
	if err != nil {
		return nil, fmt.Errorf("pre-tokenizer pattern %q: %w", pattern, err)
	}
	return regexSplitter{re}, nil
}

// regexSplitter isolates every match of a regular expression; the text
// between matches becomes pre-tokens too (Hugging Face's "Isolated" split).
type regexSplitter struct{ re *regexp2.Regexp }

func (r regexSplitter) pattern() string { return r.re.String() }

func (r regexSplitter) split(s string, emit func(start, end int)) {
	// regexp2 works on runes; map rune offsets back to bytes.
	runes := []rune(s)
	offsets := make([]int, len(runes)+1)
	pos := 0
	for i, c := range runes {
		offsets[i] = pos
		pos += utf8.RuneLen(c)
		if c == utf8.RuneError && !validRuneAt(s, offsets[i]) {
			pos = offsets[i] + 1
		}
	}
	offsets[len(runes)] = len(s)
	prev := 0
	m, _ := r.re.FindRunesMatch(runes)
	for m != nil {
		start, end := offsets[m.Index], offsets[m.Index+m.Length]
		if start > prev {
			emit(prev, start)
		}
		if end > start {
			emit(start, end)
		}
		prev = end
		m, _ = r.re.FindNextMatch(m)
	}
	if prev < len(s) {
		emit(prev, len(s))
	}
}

func validRuneAt(s string, i int) bool {
	r, size := utf8.DecodeRuneInString(s[i:])
	return r != utf8.RuneError || size > 1
}

// qwenScanner matches QwenPattern by hand, alternative by alternative, with
// the backtracking engine's leftmost-first semantics; it is several times
// faster than the regex. A byte that is not valid UTF-8 counts as a symbol
// (neither letter, number nor space), so any byte string is tokenized
// losslessly.
type qwenScanner struct{}

// char is one decoded character of the input.
type char struct {
	r    rune
	size int
}

func decodeAt(s string, i int) char {
	if i >= len(s) {
		return char{r: -1}
	}
	if c := s[i]; c < utf8.RuneSelf {
		return char{r: rune(c), size: 1}
	}
	r, size := utf8.DecodeRuneInString(s[i:])
	if r == utf8.RuneError && size <= 1 {
		return char{r: -2, size: 1} // invalid byte: a symbol
	}
	return char{r: r, size: size}
}

func isLetter(r rune) bool {
	if r < utf8.RuneSelf {
		return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
	}
	return r >= 0 && unicode.IsLetter(r)
}

func isNumber(r rune) bool {
	if r < utf8.RuneSelf {
		return r >= '0' && r <= '9'
	}
	return r >= 0 && unicode.IsNumber(r)
}

// isSpace is \s of Oniguruma and .NET: Unicode White_Space.
func isSpace(r rune) bool {
	if r < 0 {
		return false
	}
	return unicode.IsSpace(r)
}

func isNewline(r rune) bool { return r == '\r' || r == '\n' }

// pattern is QwenPattern, which the scanner implements.
func (qwenScanner) pattern() string { return QwenPattern }

func (qwenScanner) split(s string, emit func(start, end int)) {
	for i := 0; i < len(s); {
		end := matchQwen(s, i)
		emit(i, end)
		i = end
	}
}

// matchQwen returns the end of the pre-token starting at i (always > i).
func matchQwen(s string, i int) int {
	c := decodeAt(s, i)
	// (?i:'s|'t|'re|'ve|'m|'ll|'d)
	if c.r == '\'' {
		if n := contraction(s, i+1); n > 0 {
			return i + 1 + n
		}
	}
	// [^\r\n\p{L}\p{N}]?\p{L}+
	j := i
	if !isNewline(c.r) && !isLetter(c.r) && !isNumber(c.r) {
		j += c.size
	}
	// Without the optional char the letters would have to start at i, which
	// is the same match: a letter is never in the optional class.
	if k := skipLetters(s, j); k > j {
		return k
	}
	// \p{N}
	if isNumber(c.r) {
		return i + c.size
	}
	// ' ?[^\s\p{L}\p{N}]+[\r\n]*'
	j = i
	if c.r == ' ' {
		j++
	}
	k := j
	for {
		d := decodeAt(s, k)
		if d.size == 0 || isSpace(d.r) || isLetter(d.r) || isNumber(d.r) {
			break
		}
		k += d.size
	}
	if k > j {
		for k < len(s) && isNewline(rune(s[k])) {
			k++
		}
		return k
	}
	if !isSpace(c.r) {
		// Only reachable for a character no alternative takes; the regex
		// engine would emit it between matches, as its own pre-token.
		return i + c.size
	}
	// Whitespace run starting at i.
	runEnd, lastNewlineEnd := i, -1
	for {
		d := decodeAt(s, runEnd)
		if d.size == 0 || !isSpace(d.r) {
			break
		}
		runEnd += d.size
		if isNewline(d.r) {
			lastNewlineEnd = runEnd
		}
	}
	// \s*[\r\n]+ : up to the last newline of the run.
	if lastNewlineEnd > 0 {
		return lastNewlineEnd
	}
	// \s+(?!\S) : the run, less its last character when a non-space follows.
	if runEnd == len(s) {
		return runEnd
	}
	_, lastSize := utf8.DecodeLastRuneInString(s[i:runEnd])
	if runEnd-lastSize > i {
		return runEnd - lastSize
	}
	// \s+
	return runEnd
}

// contraction matches s|t|re|ve|m|ll|d (any case) at i and returns its length.
func contraction(s string, i int) int {
	lower := func(k int) byte {
		if k >= len(s) {
			return 0
		}
		c := s[k]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		return c
	}
	switch lower(i) {
	case 's', 't', 'm', 'd':
		return 1
	case 'r', 'v':
		if lower(i+1) == 'e' {
			return 2
		}
	case 'l':
		if lower(i+1) == 'l' {
			return 2
		}
	}
	return 0
}

func skipLetters(s string, i int) int {
	for {
		d := decodeAt(s, i)
		if d.size == 0 || !isLetter(d.r) {
			return i
		}
		i += d.size
	}
}
