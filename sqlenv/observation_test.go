package sqlenv

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// queryResult runs sql as a QUERY step of a fresh episode and returns the
// observation's result (or its error).
func queryResult(t *testing.T, cfg Config, sql string) (string, string) {
	t.Helper()
	f := newFixture(t)
	e := f.env(t, cfg)
	reset(t, e, f.questions[0].QuestionID)
	obs := step(t, e, Query, sql)
	return obs.Result, obs.Error
}

// Values are shown unambiguously: NULL against the text 'NULL', blobs that
// are not text as hex, control characters escaped, a "|" in a value or a
// column name escaped so that columns always split on " | ".
func TestResultsAreUnambiguous(t *testing.T) {
	cases := []struct {
		sql, header, row string
	}{
		{`SELECT NULL AS a, 'NULL' AS b, 'null' AS c`, "a | b | c", "1. NULL | 'NULL' | 'null'"},
		{`SELECT zeroblob(3) AS z, x'00ff' AS h, CAST('text' AS BLOB) AS t`, "z | h | t", "1. x'000000' | x'00FF' | text"},
		{"SELECT 'a' || char(0) || 'b' AS nul, 'x' || char(10) || 'y' AS nl, 'p' || char(9) || 'q' AS tab", "nul | nl | tab", `1. a\x00b | x\ny | p\tq`},
		{`SELECT 1 AS "x | y", 2 AS "line` + "\n" + `break", 'a | b' AS v`, `x \| y | line\nbreak | v`, `1. 1 | 2 | a \| b`},
		// A text that spells an escape against the character; texts that read
		// as NULL or a blob, or start with a quote, quoted as SQL strings.
		{`SELECT 'a\nb' AS lit, 'a' || char(10) || 'b' AS nl, 'C:\x' AS path`, "lit | nl | path", `1. a\\nb | a\nb | C:\\x`},
		{`SELECT '''NULL''' AS q, x'41FF' AS blob, 'x''41FF''' AS txt`, "q | blob | txt", `1. '''NULL''' | x'41FF' | 'x''41FF'''`},
		{"SELECT 'a' || char(8232) || 'b' AS ls, char(8238) || 'abc' AS rlo, 'z' || char(8203) || char(65279) AS zw", "ls | rlo | zw", `1. a\u{2028}b | \u{202E}abc | z\u{200B}\u{FEFF}`},
		{"SELECT 'x' || char(133) || 'y' AS nel, 'p' || char(8233) AS ps, 'é' AS plain", "nel | ps | plain", `1. x\x85y | p\u{2029} | é`},
	}
	for _, c := range cases {
		res, errText := queryResult(t, Config{}, c.sql)
		if errText != "" {
			t.Fatalf("%s: %s", c.sql, errText)
		}
		lines := strings.Split(res, "\n")
		if lines[0] != c.header || lines[1] != c.row {
			t.Errorf("%s:\n got %q / %q\nwant %q / %q", c.sql, lines[0], lines[1], c.header, c.row)
		}
		cols, rows := ParseResult(res)
		if len(cols) != 3 || len(rows) != 1 || len(rows[0]) != 3 {
			t.Errorf("%s: ParseResult: %q %q", c.sql, cols, rows)
		}
	}
	_, rows := ParseResult(func() string { r, _ := queryResult(t, Config{}, `SELECT 'a | b' AS v, 1`); return r }())
	if rows[0][0] != "a | b" {
		t.Errorf("ParseResult does not undo the escape: %q", rows[0][0])
	}
	_, rows = ParseResult(func() string { r, _ := queryResult(t, Config{}, `SELECT 'a\|b' AS v, 1`); return r }())
	if rows[0][0] != `a\|b` {
		t.Errorf("ParseResult does not undo the escapes of a backslash and a bar: %q", rows[0][0])
	}
}

// TestCellsTellValuesApart: no two different values of a class that looked
// alike (texts with escapes, quotes, NULL, blob literals, separators,
// invisible characters; NULL; blobs that are not text) render as the same
// cell, and every
// cell is one line without raw invisible or line-breaking characters.
func TestCellsTellValuesApart(t *testing.T) {
	parts := []string{"", "a", "NULL", "null", "'", "''", "x'41'", "X'", `\`, `\n`, "\n", "|", `\|`, " ", "\u2028", "\u0085", "\u200b", "\ufeff", "\u202e", "\xff", "é"}
	seen := map[string]any{}
	add := func(v any) {
		c := cell(v, 0).text
		if strings.Contains(c, "\n") || strings.Contains(c, " | ") {
			t.Errorf("%q renders as %q: not one cell on one line", v, c)
		}
		for _, r := range c {
			if r == 0x85 || r == 0x2028 || r == 0x2029 || r == 0x200b || r == 0xfeff || r == 0x202e {
				t.Errorf("%q renders as %q: an invisible or line-breaking character shown raw", v, c)
			}
		}
		// A blob that is valid text without control characters is shown as
		// its text, on purpose: the same value to a reader.
		if b, ok := v.([]byte); ok && utf8.Valid(b) && !hasControl(string(b)) {
			v = string(b)
		}
		if prev, ok := seen[c]; ok && !reflect.DeepEqual(prev, v) {
			t.Errorf("%q and %q both render as %q", prev, v, c)
		}
		seen[c] = v
	}
	add(nil)
	for _, a := range parts {
		for _, b := range parts {
			add(a + b)
			add([]byte(a + b))
		}
	}
}

// A cut value says how long it is.
func TestCutValuesShowTheirLength(t *testing.T) {
	res, _ := queryResult(t, Config{}, `SELECT printf('%.*c', 5000, 'x') AS long, zeroblob(3000) AS blob`)
	lines := strings.Split(res, "\n")
	if !strings.HasPrefix(lines[1], "1. "+strings.Repeat("x", 99)+"… | x'") || !strings.Contains(res, "2 values cut at 100 characters (the longest has 5000)") {
		t.Errorf("%q", res)
	}
}

// Every observation stays within its budget, and says what was cut: a
// 255-column result of wide values, many rows, a narrow budget.
func TestObservationsStayWithinTheirBudget(t *testing.T) {
	cols := make([]string, 255)
	for i := range cols {
		cols[i] = fmt.Sprintf("printf('%%.*c', 200, 'v') AS column_number_%d", i)
	}
	wide := "SELECT " + strings.Join(cols, ", ") + " FROM customer"
	cases := []struct {
		name   string
		cfg    Config
		sql    string
		budget int
		notice string
	}{
		{"255 wide columns", Config{}, wide, DefaultObservationChars, "of 255 columns"},
		{"many rows, small budget", Config{ObservationChars: 600, ResultRows: 50}, `SELECT id, name, city FROM customer`, 600, "(showing"},
		{"one huge row", Config{ObservationChars: 500, CellWidth: 1000}, `SELECT printf('%.*c', 900, 'y') AS a, 2 AS b`, 500, "the observation is limited to 500 characters (about 250 tokens)"},
	}
	for _, c := range cases {
		res, errText := queryResult(t, c.cfg, c.sql)
		if errText != "" {
			t.Fatalf("%s: %s", c.name, errText)
		}
		if len(res) > c.budget || !strings.Contains(res, c.notice) {
			t.Errorf("%s: %d characters (budget %d), last line %q", c.name, len(res), c.budget, res[strings.LastIndex(res, "\n")+1:])
		}
		t.Logf("%s: %d characters; %s", c.name, len(res), res[strings.LastIndex(res, "\n")+1:])
	}
	// Within the budget nothing changes: the usual lines.
	res, _ := queryResult(t, Config{}, `SELECT id, city FROM customer WHERE id <= 2 ORDER BY id`)
	if res != "id | city\n1. 1 | Oslo\n2. 2 | Lima\n(2 rows)" {
		t.Errorf("%q", res)
	}
}

// orderedQuery finds an ORDER BY of the whole query only.
func TestOrderedQuery(t *testing.T) {
	for sql, want := range map[string]bool{
		"SELECT name FROM singer ORDER BY age":                               true,
		"select name from singer order\nby age desc limit 3":                 true,
		"SELECT name FROM (SELECT * FROM singer ORDER BY age) GROUP BY name": false,
		"SELECT 'order by' FROM t":                                           false,
		"SELECT border_by FROM t":                                            false,
		"SELECT count(*) FROM singer":                                        false,
	} {
		if got := orderedQuery(sql); got != want {
			t.Errorf("%q: %v, want %v", sql, got, want)
		}
	}
}

// An error never quotes a huge argument whole: DESCRIBE of a megabyte name,
// an unknown action type, SQLite quoting a long identifier.
func TestErrorsAreBounded(t *testing.T) {
	f := newFixture(t)
	e := f.env(t, Config{StepBudget: 10})
	reset(t, e, f.questions[0].QuestionID)
	huge := strings.Repeat("n", 1_000_000)
	for _, a := range []Action{
		{ActionType: Describe, Argument: huge},
		{ActionType: ActionType(huge), Argument: "x"},
		{ActionType: Query, Argument: "SELECT " + strings.Repeat("c", 90_000) + " FROM customer"},
		{ActionType: Sample, Argument: huge},
	} {
		obs, err := e.Step(ctx, a)
		if err != nil {
			t.Fatal(err)
		}
		if obs.Error == "" || len(obs.Error) > MaxErrorBytes {
			t.Errorf("%.20s…: error of %d bytes: %.120q", a.ActionType, len(obs.Error), obs.Error)
		}
	}
}

// History lines show an action on one line as written: line breaks become
// spaces, and nothing is escaped ("||" and 'NULL' stay as they are).
func TestHistoryLinesKeepTheSQL(t *testing.T) {
	f := newFixture(t)
	e := f.env(t, Config{})
	reset(t, e, f.questions[0].QuestionID)
	obs := step(t, e, Query, "SELECT name || 'NULL'\nFROM customer\tLIMIT 1")
	if got := obs.ActionHistory[0]; got != "QUERY SELECT name || 'NULL' FROM customer LIMIT 1 → ok" {
		t.Errorf("history line %q", got)
	}
}

// TestTruncatedResultsSayAtLeast: a result whose reading stopped at the size
// limit says how many rows it read as a lower bound ("at least"), not "more
// than" — a single row larger than the limit may be the only one.
func TestTruncatedResultsSayAtLeast(t *testing.T) {
	for _, c := range []struct {
		rows int
		want string
	}{{1, "(showing 1 of at least 1 row: the result is too large to read in full"}, {3, "(showing 3 of at least 3 rows: the result is too large to read in full"}} {
		rows := make([][]any, c.rows)
		for i := range rows {
			rows[i] = []any{int64(i)}
		}
		got := renderRows([]string{"x"}, rows, c.rows, true, 10, 100, 0)
		if !strings.Contains(got, c.want) {
			t.Errorf("%d rows read before the limit: %q, want %q", c.rows, got, c.want)
		}
	}
}
