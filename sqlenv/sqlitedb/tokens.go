package sqlitedb

// Token is a piece of SQL text as Tokens splits it.
type Token struct {
	Kind TokenKind
	// Text is the token as written; for a quoted identifier, its name
	// without the quotes (doubled quotes undone).
	Text string
	// Start and End are the token's byte range in the SQL text, quotes
	// included.
	Start, End int
}

// TokenKind says what a Token is.
type TokenKind int

const (
	// Word is a bare identifier or keyword.
	Word TokenKind = iota
	// QuotedWord is an identifier quoted with "…", `…` or […].
	QuotedWord
	// String is a string literal '…'.
	String
	// Number is a numeric literal.
	Number
	// Comment is a -- or /* */ comment.
	Comment
	// Space is a run of white space.
	Space
	// Punct is any other single character.
	Punct
)

// Tokens splits SQL text into tokens that cover it entirely, in order:
// words and quoted identifiers, string and numeric literals, comments, white
// space and single other characters. It is a lexer for reading and
// rewriting names, not a parser: it never fails, and an unterminated
// literal or comment runs to the end of the text.
func Tokens(text string) []Token {
	var out []Token
	for i := 0; i < len(text); {
		c := text[i]
		start := i
		kind := Punct
		switch {
		case c == '\'':
			kind, i = String, quotedEnd(text, i, '\'')
		case c == '"' || c == '`' || c == '[':
			q := c
			if q == '[' {
				q = ']'
			}
			kind, i = QuotedWord, quotedEnd(text, i, q)
		case c == '-' && i+1 < len(text) && text[i+1] == '-':
			kind, i = Comment, len(text)
			for j := start; j < len(text); j++ {
				if text[j] == '\n' {
					i = j
					break
				}
			}
		case c == '/' && i+1 < len(text) && text[i+1] == '*':
			kind, i = Comment, len(text)
			for j := start + 2; j+1 < len(text); j++ {
				if text[j] == '*' && text[j+1] == '/' {
					i = j + 2
					break
				}
			}
		case isIdentStart(c):
			kind = Word
			for i < len(text) && isIdentPart(text[i]) {
				i++
			}
		case c >= '0' && c <= '9':
			kind = Number
			for i < len(text) && (isIdentPart(text[i]) || text[i] == '.') {
				i++
			}
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			kind = Space
			for i < len(text) && (text[i] == ' ' || text[i] == '\t' || text[i] == '\n' || text[i] == '\r') {
				i++
			}
		default:
			i++
		}
		t := Token{Kind: kind, Text: text[start:i], Start: start, End: i}
		if kind == QuotedWord {
			q := text[start]
			if q == '[' {
				q = ']'
			}
			inner := text[start+1 : max(start+1, i-1)]
			if i-start >= 2 && text[i-1] == q {
				t.Text = unquote(inner, q)
			} else {
				t.Text = text[start+1 : i] // unterminated
			}
		}
		out = append(out, t)
	}
	return out
}

// quotedEnd returns the index past the token quoted by q that starts at
// text[i] (a doubled q escapes it), or len(text).
func quotedEnd(text string, i int, q byte) int {
	for j := i + 1; j < len(text); j++ {
		if text[j] == q {
			if q != ']' && j+1 < len(text) && text[j+1] == q {
				j++
				continue
			}
			return j + 1
		}
	}
	return len(text)
}

// unquote undoes doubled quotes.
func unquote(s string, q byte) string {
	if q == ']' {
		return s
	}
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		out = append(out, s[i])
		if s[i] == q && i+1 < len(s) && s[i+1] == q {
			i++
		}
	}
	return string(out)
}

func isIdentStart(c byte) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c >= 0x80
}

func isIdentPart(c byte) bool { return isIdentStart(c) || (c >= '0' && c <= '9') || c == '$' }
