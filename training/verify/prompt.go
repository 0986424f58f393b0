package verify

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// PromptVerifier is a Verifier that can also take its test cases from the
// prompt the code was written for.
type PromptVerifier interface {
	Verifier
	VerifyWithPrompt(ctx context.Context, prompt, code string) Result
}

// VerifyWithPrompt verifies code against the test cases found in prompt by
// ExtractTestCases, or against v's own TestCases when the prompt has none.
// Metadata["test_source"] records which: "prompt" or "config". v is not
// modified (the prompt's tests go to a shallow copy), so one verifier can
// serve many prompts concurrently.
func (v *ExecutionVerifier) VerifyWithPrompt(ctx context.Context, prompt, code string) Result {
	tests := ExtractTestCases(prompt)
	vv, source := v, "config"
	if len(tests) > 0 {
		vv, source = v.WithTests(tests), "prompt"
	}
	r := vv.Verify(ctx, code)
	if r.Metadata == nil {
		r.Metadata = map[string]any{}
	}
	r.Metadata["test_source"] = source
	return r
}

// VerifyBatchWithPrompts verifies codes[i] for prompts[i] with at most
// maxWorkers concurrent calls (maxWorkers <= 0 means 1). When v is a
// PromptVerifier each sample is checked with VerifyWithPrompt, so against its
// own prompt's tests; otherwise prompts are ignored and Verify is used.
// Results are in the order of codes. It is an error when the two slices
// differ in length.
func VerifyBatchWithPrompts(ctx context.Context, v Verifier, prompts, codes []string, maxWorkers int) ([]Result, error) {
	if len(prompts) != len(codes) {
		return nil, fmt.Errorf("verify: %d prompts but %d codes", len(prompts), len(codes))
	}
	pv, ok := v.(PromptVerifier)
	return parallel(len(codes), maxWorkers, func(i int) Result {
		if ok {
			return pv.VerifyWithPrompt(ctx, prompts[i], codes[i])
		}
		return v.Verify(ctx, codes[i])
	}), nil
}

// ---- test extraction ----

type tokKind int

const (
	tokStop tokKind = iota
	tokInput
	tokOutput
)

type token struct {
	kind       tokKind
	start, end int  // the label's span; the value starts at end
	eq         bool // key=value form (input=5)
}

var (
	// A label: optional Markdown emphasis, an optional qualifier, the keyword,
	// an optional number, an optional closing quote (JSON keys) and ":" or "=".
	labelRe = regexp.MustCompile(`(?i)(?:^|[^\p{L}\p{N}_])((?:\*\*|__)?(?:(?:sample|example|expected|test)[ \t]+)?(input|output|stdin|stdout)(?:[ \t]*#?\d+)?(?:\*\*|__)?["']?[ \t]*([:：=])(?:\*\*|__)?)`)
	// Words that end a value: "Explanation:", "Note:", "Example 2:", ...
	stopRe = regexp.MustCompile(`(?i)(?:^|[^\p{L}\p{N}_])((?:\*\*|__)?(?:explanations?|notes?|constraints?|hints?|example[ \t]*#?\d*|sample[ \t]*#?\d*|test[ \t]*case[ \t]*#?\d*)(?:\*\*|__)?[ \t]*[:：])`)
	// Lines that end a value: Markdown headers and bare "Example 2" lines.
	stopLineRe = regexp.MustCompile(`(?im)^[ \t]*(?:#{1,6}[ \t].*|(?:\*\*|__)?(?:example|sample|test[ \t]*case)[ \t]*#?\d*(?:\*\*|__)?[ \t]*[:.]?[ \t]*(?:\*\*|__)?)$`)
	// Lines that only open or close a code fence.
	fenceLineRe = regexp.MustCompile("(?m)^[ \t]*(?:```|~~~)[\\w+#.-]*[ \t]*\n?")
	blankLineRe = regexp.MustCompile(`\n[ \t]*\n`)
	// A line of prose: four or more words, ending like a sentence.
	proseLineRe = regexp.MustCompile(`[A-Za-z]{2,}(?:[ \t]+[A-Za-z',]+){3,}.*[.:!?]$`)
	// Three words in a row: not a continuation of a one-line output.
	wordsRe = regexp.MustCompile(`[A-Za-z]{2,}(?:[ \t]+[A-Za-z]{2,}){2,}`)
	// A format description rather than data ("Input: two integers a and b").
	specRe = regexp.MustCompile(`(?i)\b(?:the (?:first|second|next|last) line|first line|each line|lines? contains?|consists? of|a single (?:integer|number|line|string|word)|an? (?:integer|number|string|array|list|positive|non-negative|sequence|line)|integers|separated by|followed by|denoting|representing|you should|should (?:print|output|return)|(?:print|output|return)s? (?:the|an?))\b`)
	// Trailing separators of a value that ends at a label on the same line.
	trailSepRe = regexp.MustCompile(`(?:[ \t]*(?:[,;]|->|=>|→))+$`)
	// Left-over Markdown at the start of the next label's line.
	markupTailRe = regexp.MustCompile(`^[\s\-*•>#|]*$`)
)

var emptyInputs = map[string]bool{"(none)": true, "(empty)": true, "<none>": true, "<empty>": true, "(no input)": true, "(nothing)": true}

// ExtractTestCases finds input/output examples in prompt text and returns
// them as test cases named "prompt_1", "prompt_2", … in order of appearance
// (duplicates dropped). Recognised forms, case-insensitive:
//
//	Input: 5 Output: 25                      (one line; also "Input: 5, Output: 25", "->")
//	Input:\n1 2\nOutput:\n3                  (values on the following lines)
//	Example 1:\nInput: 5\nExpected output: 25\nExplanation: …
//	Sample Input 1: / Sample Output 1:, **Input:** (Markdown), stdin: / stdout:
//	Example: input=5, output=25               (key=value on one line)
//	input="1 2", output='3'                  (quoted values; \n and \t are unescaped)
//
// Unquoted key=value values end at the next label or at ", ", "; " or ". "
// (quote values that contain them).
// A value ends at the next label, at "Explanation:", "Note:", "Constraints:",
// "Example N:" or a Markdown header, at a blank line, or at a line of prose.
// An output written on the label's line ("Output: 25") continues onto the
// next lines only while they look like data (no three words in a row).
// Code-fence lines are ignored, surrounding quotes and backticks removed,
// common indentation stripped, and stdin gets a final newline. "(none)" or
// "(empty)" as input means empty stdin. Pairs that read like a format
// description ("Input: two integers a and b", "Output: print the sum") and
// pairs with an empty expected output are dropped. The result is nil when
// the prompt has no examples.
func ExtractTestCases(prompt string) []TestCase {
	text := strings.ReplaceAll(prompt, "\r\n", "\n")
	text = strings.ReplaceAll(text, "\r", "\n")
	text = fenceLineRe.ReplaceAllString(text, "")

	var toks []token
	for _, m := range labelRe.FindAllStringSubmatchIndex(text, -1) {
		start, end := m[2], m[3]
		eq := text[m[6]:m[7]] == "="
		if eq && end < len(text) && text[end] == '=' { // "input == x" is code, not a label
			continue
		}
		kind := tokInput
		if k := strings.ToLower(text[m[4]:m[5]]); k == "output" || k == "stdout" {
			kind = tokOutput
		}
		toks = append(toks, token{kind: kind, start: start, end: end, eq: eq})
	}
	for _, m := range stopRe.FindAllStringSubmatchIndex(text, -1) {
		toks = append(toks, token{kind: tokStop, start: m[2], end: m[3]})
	}
	for _, m := range stopLineRe.FindAllStringIndex(text, -1) {
		toks = append(toks, token{kind: tokStop, start: m[0], end: m[1]})
	}
	sort.SliceStable(toks, func(i, j int) bool { return toks[i].start < toks[j].start })

	// valueEnd is where the value starting at p ends: the next token's start.
	valueEnd := func(p int) (int, bool) {
		i := sort.Search(len(toks), func(i int) bool { return toks[i].start >= p })
		if i == len(toks) {
			return len(text), false
		}
		return toks[i].start, true
	}

	var out []TestCase
	seen := map[string]bool{}
	var pending *token
	for i := range toks {
		t := toks[i]
		switch t.kind {
		case tokInput:
			pending = &toks[i]
		case tokOutput:
			if pending == nil || t.start < pending.end {
				continue
			}
			in := *pending
			pending = nil
			if in.eq && strings.Contains(text[in.end:t.start], "\n") {
				continue // key=value pairs are written on one line
			}
			inEnd, atLabel := valueEnd(in.end)
			input := cleanValue(text[in.end:inEnd], in.eq, atLabel, false)
			outEnd, atLabel := valueEnd(t.end)
			expected := cleanValue(text[t.end:outEnd], t.eq, atLabel, true)
			if expected == "" {
				continue
			}
			if emptyInputs[strings.ToLower(input)] {
				input = ""
			}
			if specRe.MatchString(input) || specRe.MatchString(expected) {
				continue
			}
			if input != "" && !strings.HasSuffix(input, "\n") {
				input += "\n"
			}
			key := input + "\x00" + expected
			if seen[key] {
				continue
			}
			seen[key] = true
			out = append(out, TestCase{Name: fmt.Sprintf("prompt_%d", len(out)+1), Input: input, Expected: expected})
		}
	}
	return out
}

// cleanValue turns the raw text after a label into a value. eq: key=value
// form; atLabel: the raw text ends where another label starts; output: the
// value is an expected output.
func cleanValue(raw string, eq, atLabel, output bool) string {
	// Drop the start of the next label's line ("\n- " before "- Output:").
	if i := strings.LastIndexByte(raw, '\n'); i >= 0 && markupTailRe.MatchString(raw[i+1:]) {
		raw = raw[:i]
	}
	sameLine := atLabel && !strings.Contains(raw, "\n")
	// The value starts on the label's line or, if that is empty, on the next
	// non-blank line.
	lines := strings.Split(raw, "\n")
	inline := strings.TrimSpace(lines[0]) != ""
	skipped := 0
	for len(lines) > 0 && strings.TrimSpace(lines[0]) == "" {
		lines = lines[1:]
		skipped++
	}
	if len(lines) == 0 {
		return ""
	}
	if skipped > 1 && proseLineRe.MatchString(strings.TrimSpace(lines[0])) {
		return "" // "Output:", a blank line, then prose: no value
	}
	if eq {
		if q, ok := unquotePrefix(strings.TrimSpace(lines[0])); ok {
			return q // input="1 2", … — whatever follows the quotes is not the value
		}
		lines = lines[:1]
		if output {
			if i := eqOutputEndRe.FindStringIndex(lines[0]); i != nil {
				lines[0] = lines[0][:i[0]]
			}
		}
	}
	kept := lines[:1]
	for _, l := range lines[1:] {
		tl := strings.TrimSpace(l)
		if tl == "" || proseLineRe.MatchString(tl) {
			break
		}
		if output && inline && wordsRe.MatchString(tl) {
			break
		}
		kept = append(kept, l)
	}
	v := strings.TrimSpace(dedent(kept))
	if sameLine || eq {
		v = strings.TrimSpace(trailSepRe.ReplaceAllString(v, ""))
	}
	if q, ok := unquote(v); ok {
		return q
	}
	if !strings.Contains(v, "\n") {
		if eq {
			v = strings.TrimRight(v, ".,;")
		} else if n := len(v); n >= 2 && v[n-1] == '.' && v[n-2] >= '0' && v[n-2] <= '9' {
			v = v[:n-1] // "Output: 25." — the period ends the sentence
		}
	}
	return strings.TrimSpace(v)
}

// dedent joins lines after removing the indentation common to all but the
// first (which starts on the label's line or is trimmed anyway).
func dedent(lines []string) string {
	prefix, first := "", true
	for _, l := range lines[1:] {
		if strings.TrimSpace(l) == "" {
			continue
		}
		ind := l[:len(l)-len(strings.TrimLeft(l, " \t"))]
		if first {
			prefix, first = ind, false
			continue
		}
		for !strings.HasPrefix(ind, prefix) {
			prefix = prefix[:len(prefix)-1]
		}
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		if i > 0 {
			l = strings.TrimPrefix(l, prefix)
		}
		out[i] = strings.TrimRight(l, " \t")
	}
	return strings.Join(out, "\n")
}

var (
	quoteTailRe = regexp.MustCompile(`^[\s,;.)\]}>→="'-]*$`)
	// An unquoted key=value output ends at ", ", "; " or ". ".
	eqOutputEndRe = regexp.MustCompile(`[,;.][ \t]`)
)

// unquote returns the contents of a value written in quotes or backticks
// (anything after the closing quote must be punctuation). Within "…" and '…',
// \n, \t, \\ and escaped quotes are unescaped.
func unquote(v string) (string, bool) {
	q, rest, ok := splitQuoted(v)
	if !ok || !quoteTailRe.MatchString(rest) {
		return "", false
	}
	return q, true
}

// unquotePrefix is unquote that ignores what follows the closing quote.
func unquotePrefix(v string) (string, bool) {
	q, _, ok := splitQuoted(v)
	return q, ok
}

// splitQuoted splits a value that starts with a quote into the unescaped
// quoted text and what follows the closing quote.
func splitQuoted(v string) (string, string, bool) {
	if strings.HasPrefix(v, "```") {
		rest := v[3:]
		if i := strings.Index(rest, "```"); i >= 0 {
			return strings.TrimSpace(rest[:i]), rest[i+3:], true
		}
		return "", "", false
	}
	if v == "" {
		return "", "", false
	}
	q := v[0]
	if q != '"' && q != '\'' && q != '`' {
		return "", "", false
	}
	var b strings.Builder
	for i := 1; i < len(v); i++ {
		c := v[i]
		switch {
		case c == '\\' && q != '`' && i+1 < len(v):
			i++
			switch v[i] {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case '\\', '"', '\'':
				b.WriteByte(v[i])
			default:
				b.WriteByte('\\')
				b.WriteByte(v[i])
			}
		case c == q:
			return b.String(), v[i+1:], true
		default:
			b.WriteByte(c)
		}
	}
	return "", "", false
}
