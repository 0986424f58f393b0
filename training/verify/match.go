package verify

import (
	"math"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/dlclark/regexp2"
)

// MatchMode selects how a program's stdout is compared with the expected text.
// Before any comparison both sides are normalised: CRLF becomes LF, trailing
// spaces and tabs are stripped from every line, and the whole text is trimmed
// of leading and trailing whitespace (halo-forge compares only after strip();
// the per-line normalisation is this project's, so that a trailing space or a
// Windows line end never fails a correct program).
type MatchMode string

const (
	// MatchExact: normalised texts are equal.
	MatchExact MatchMode = "exact"
	// MatchContains: expected occurs in actual as whole tokens ("42" in
	// "the answer is 42", not in "142"), and what surrounds it is short:
	// at most ContainsExtraTokens other tokens, none of them a number when
	// expected holds one — so that a spray of candidates ("0 1 2 … 99999")
	// does not contain the answer.
	MatchContains MatchMode = "contains"
	// MatchRegex: expected is a pattern that must match at the start of
	// actual, as Python's re.match does (halo-forge); the pattern syntax is
	// regexp2's (look-ahead, look-behind and back-references work, as in
	// Python's re). An invalid pattern is refused by Config.Build.
	MatchRegex MatchMode = "regex"
	// MatchNumeric: every number is extracted from both sides (signs, decimals
	// such as ".5", exponents); the counts must be equal; two integers
	// (written without a point or exponent) must be equal, other pairs agree
	// within max(absolute tolerance, relative tolerance × the larger
	// magnitude): by default 1e-6 and 1e-6 (halo-forge: absolute 1e-6 only).
	MatchNumeric MatchMode = "numeric"
)

// ContainsExtraTokens is how many tokens (runs of letters and digits, or
// single other characters that are not white space) MatchContains allows
// around the expected text.
const ContainsExtraTokens = 16

// Default numeric tolerances (Matcher.AbsTol, Matcher.RelTol).
const (
	DefaultNumericAbsTol = 1e-6
	DefaultNumericRelTol = 1e-6
)

// Matcher compares outputs under a mode with its numeric tolerances (zero
// tolerances take the defaults).
type Matcher struct {
	Mode           MatchMode
	AbsTol, RelTol float64
}

// Normalize applies the whitespace normalisation described on MatchMode.
func Normalize(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t\r")
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}

var numRe = regexp.MustCompile(`[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?`)

// Numbers extracts the numbers in s.
func Numbers(s string) []float64 {
	var out []float64
	for _, m := range numRe.FindAllString(s, -1) {
		if f, err := strconv.ParseFloat(m, 64); err == nil {
			out = append(out, f)
		}
	}
	return out
}

// Match compares actual with expected under mode (empty mode = exact) with
// the default numeric tolerances.
func Match(mode MatchMode, actual, expected string) bool {
	return Matcher{Mode: mode}.Match(actual, expected)
}

// Match compares actual with expected (see MatchMode).
func (m Matcher) Match(actual, expected string) bool {
	a, e := Normalize(actual), Normalize(expected)
	switch m.Mode {
	case MatchContains:
		return containsBounded(a, e)
	case MatchRegex:
		re, err := compilePattern(e)
		if err != nil {
			return false
		}
		ok, err := re.MatchString(a)
		return err == nil && ok
	case MatchNumeric:
		return m.numbersAgree(a, e)
	default:
		return a == e
	}
}

func (m Matcher) numbersAgree(a, e string) bool {
	abs, rel := m.AbsTol, m.RelTol
	if abs == 0 {
		abs = DefaultNumericAbsTol
	}
	if rel == 0 {
		rel = DefaultNumericRelTol
	}
	an, en := numRe.FindAllString(a, -1), numRe.FindAllString(e, -1)
	if len(an) != len(en) {
		return false
	}
	for i := range an {
		if isInteger(an[i]) && isInteger(en[i]) {
			x, okx := new(big.Int).SetString(strings.TrimPrefix(an[i], "+"), 10)
			y, oky := new(big.Int).SetString(strings.TrimPrefix(en[i], "+"), 10)
			if !okx || !oky || x.Cmp(y) != 0 {
				return false
			}
			continue
		}
		x, errx := strconv.ParseFloat(an[i], 64)
		y, erry := strconv.ParseFloat(en[i], 64)
		if errx != nil || erry != nil {
			return false
		}
		if d := math.Abs(x - y); !(d <= math.Max(abs, rel*math.Max(math.Abs(x), math.Abs(y)))) && x != y {
			return false
		}
	}
	return true
}

// containsBounded reports whether e occurs in a at token boundaries with
// few tokens around it (MatchContains).
func containsBounded(a, e string) bool {
	if e == "" {
		return false
	}
	numeric := strings.ContainsAny(e, "0123456789")
	for from := 0; ; {
		i := strings.Index(a[from:], e)
		if i < 0 {
			return false
		}
		i += from
		before, after := a[:i], a[i+len(e):]
		if boundary(before, e, true) && boundary(after, e, false) {
			rest := outsideTokens.FindAllString(before+" "+after, -1)
			if len(rest) <= ContainsExtraTokens && !(numeric && strings.ContainsAny(before+after, "0123456789")) {
				return true
			}
		}
		from = i + 1
	}
}

// outsideTokens are the tokens ContainsExtraTokens counts.
var outsideTokens = regexp.MustCompile(`[\pL\pN]+|[^\pL\pN\s]`)

// boundary reports whether e, next to side (before it, or after it), ends
// a token there: side is empty, or the characters that meet are not both
// letters or digits.
func boundary(side, e string, before bool) bool {
	if side == "" {
		return true
	}
	var x, y rune
	if before {
		x, _ = utf8.DecodeLastRuneInString(side)
		y, _ = utf8.DecodeRuneInString(e)
	} else {
		x, _ = utf8.DecodeLastRuneInString(e)
		y, _ = utf8.DecodeRuneInString(side)
	}
	word := func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }
	return !(word(x) && word(y))
}

func isInteger(tok string) bool { return !strings.ContainsAny(tok, ".eE") }

// patternTimeout bounds one regex match (backtracking can be exponential).
const patternTimeout = time.Second

var patterns sync.Map // expected text → *regexp2.Regexp

// compilePattern compiles an expected pattern anchored at the start (re.match).
func compilePattern(p string) (*regexp2.Regexp, error) {
	if re, ok := patterns.Load(p); ok {
		return re.(*regexp2.Regexp), nil
	}
	re, err := regexp2.Compile(`\A(?:`+p+`)`, regexp2.None)
	if err != nil {
		return nil, err
	}
	re.MatchTimeout = patternTimeout
	patterns.Store(p, re)
	return re, nil
}

// CheckPattern reports whether expected is a valid pattern for MatchRegex.
func CheckPattern(expected string) error {
	_, err := compilePattern(Normalize(expected))
	return err
}
