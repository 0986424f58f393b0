package sqlitedb

import (
	"strings"
	"testing"
)

// TestTokens: the tokens cover the text exactly, and each kind is read
// whole — quoted identifiers unquoted, literals and comments untouched,
// unterminated ones to the end.
func TestTokens(t *testing.T) {
	for _, c := range []struct {
		sql  string
		want []string // kind:text of the non-space tokens
	}{
		{`SELECT "a""b", [c d], 'it''s', 1.5e3 FROM t -- x`, []string{"w:SELECT", `q:a"b`, "p:,", "q:c d", "p:,", "s:'it''s'", "p:,", "n:1.5e3", "w:FROM", "w:t", "c:-- x"}},
		{"count(*)/* c */x", []string{"w:count", "p:(", "p:*", "p:)", "c:/* c */", "w:x"}},
		{`SELECT 'open`, []string{"w:SELECT", "s:'open"}},
		{`"open`, []string{"q:open"}},
	} {
		toks := Tokens(c.sql)
		var b strings.Builder
		var got []string
		for _, tk := range toks {
			b.WriteString(c.sql[tk.Start:tk.End])
			if tk.Kind != Space {
				got = append(got, string("wqsncSp"[tk.Kind])+":"+tk.Text)
			}
		}
		if b.String() != c.sql {
			t.Errorf("%q: tokens cover %q", c.sql, b.String())
		}
		if strings.Join(got, " | ") != strings.Join(c.want, " | ") {
			t.Errorf("%q:\n got %q\nwant %q", c.sql, got, c.want)
		}
	}
}

// FuzzTokens: on any text, the tokens cover it exactly, in order, none empty.
func FuzzTokens(f *testing.F) {
	for _, s := range []string{`SELECT "a""b" FROM [t] WHERE x = 'y''z' -- c`, "/* x", "'", `"`, "[", "1.2.3e", "é_ü$1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		at := 0
		for _, tk := range Tokens(s) {
			if tk.Start != at || tk.End <= tk.Start || tk.End > len(s) {
				t.Fatalf("%q: token %+v after byte %d", s, tk, at)
			}
			at = tk.End
		}
		if at != len(s) {
			t.Fatalf("%q: tokens end at %d of %d bytes", s, at, len(s))
		}
	})
}
