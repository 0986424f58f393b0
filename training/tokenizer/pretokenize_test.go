package tokenizer

import (
	"reflect"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/dlclark/regexp2"
)

func pieces(sp splitter, s string) []string {
	var out []string
	sp.split(s, func(start, end int) { out = append(out, s[start:end]) })
	return out
}

var reference = func() splitter {
	re := regexp2.MustCompile(QwenPattern, regexp2.Unicode)
	return regexSplitter{re}
}()

var pretokenizeCases = []struct {
	in   string
	want []string
}{
	{"", nil},
	{"Hello world", []string{"Hello", " world"}},
	{"it's They'RE we'd I'M you'Ll", []string{"it", "'s", " They", "'RE", " we", "'d", " I", "'M", " you", "'Ll"}},
	{"'sup 'x", []string{"'s", "up", " '", "x"}},
	{"12345 and 3.14", []string{"1", "2", "3", "4", "5", " and", " ", "3", ".", "1", "4"}},
	{"a  b   c", []string{"a", " ", " b", "  ", " c"}},
	{"a \n\n  b", []string{"a", " \n\n", " ", " b"}},
	{"end   ", []string{"end", "   "}},
	{"x\r\n\r\ny", []string{"x", "\r\n\r\n", "y"}},
	{"\t\tword", []string{"\t", "\tword"}},
	{"!!! ?? ...\n\nnext", []string{"!!!", " ??", " ...\n\n", "next"}},
	{"(hello) [x]", []string{"(hello", ")", " [", "x", "]"}},
	{"SELECT count(*) FROM t;\n", []string{"SELECT", " count", "(*)", " FROM", " t", ";\n"}},
	{"世界，你好！", []string{"世界", "，你好", "！"}},
	{"Привет мир", []string{"Привет", " мир"}},
	{"🤗 Transformers 😀😀", []string{"🤗", " Transformers", " 😀😀"}},
	{"a\u00a0b\u3000c", []string{"a", "\u00a0b", "\u3000c"}},
	{"x\xffy\xfe\xfd", []string{"x", "\xffy", "\xfe\xfd"}},
	{"\n", []string{"\n"}},
	{" ", []string{" "}},
	{"٣٤ ½", []string{"٣", "٤", " ", "½"}},
}

func TestQwenScannerCases(t *testing.T) {
	for _, c := range pretokenizeCases {
		if got := pieces(qwenScanner{}, c.in); !reflect.DeepEqual(got, c.want) {
			t.Errorf("scanner(%q) = %q, want %q", c.in, got, c.want)
		}
		// The expectations hold for the regex engine too (with invalid bytes
		// it sees U+FFFD, which classifies the same).
		if got := pieces(reference, c.in); !reflect.DeepEqual(got, c.want) {
			t.Errorf("regexp2(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// FuzzQwenScanner checks the hand-written scanner against the regex engine
// on arbitrary text: both must cut it into the same pre-tokens.
func FuzzQwenScanner(f *testing.F) {
	for _, c := range pretokenizeCases {
		f.Add(c.in)
	}
	f.Add("  \t \n x \u2028 \u0085y 'S 'VE '\u017f")
	f.Fuzz(func(t *testing.T, s string) {
		got := pieces(qwenScanner{}, s)
		if strings.Join(got, "") != s {
			t.Fatalf("pieces of %q do not cover it: %q", s, got)
		}
		if !utf8.ValidString(s) {
			return // regexp2 sees U+FFFD in place of invalid bytes; lengths differ
		}
		if want := pieces(reference, s); !reflect.DeepEqual(got, want) {
			t.Fatalf("scanner(%q) = %q, regexp2 = %q", s, got, want)
		}
	})
}

// TestUnicode16LetterJoinsWord pins the documented difference from Hugging
// Face (package doc, "Unicode versions"): U+10D50, a Garay letter new in
// Unicode 16, is a letter in Go's tables, so it joins the letters around it
// in one pre-token; with Hugging Face's Unicode 15 tables it is unassigned
// and would be cut out as punctuation-like text.
func TestUnicode16LetterJoinsWord(t *testing.T) {
	s := "ab\U00010D50cd"
	var parts []string
	qwenScanner{}.split(s, func(start, end int) { parts = append(parts, s[start:end]) })
	if len(parts) != 1 || parts[0] != s {
		t.Errorf("pre-tokens %q, want the whole word (Go's Unicode %s tables)", parts, unicode.Version)
	}
}
