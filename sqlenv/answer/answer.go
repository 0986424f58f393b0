// Package answer defines the answer types of SQL questions, renders gold
// answers from query results, and decides whether an agent's answer is correct.
//
// The rules follow the reference SQLEnv verifier and fix its known gaps:
//
//   - integer: numerically equal to the gold integer ("25.0" == "25", "1,234" == "1234");
//   - float: within 1 % relative tolerance of the gold value; equal to it when
//     it is a whole number (a year stored as REAL);
//   - string: equal after trimming, collapsing inner whitespace and case folding;
//   - list: the same set of items in any order ("a, b" == "b, a"); items may be
//     separated by commas, pipes, semicolons or new lines;
//   - table: the same multiset of rows in any order, one row per line with cells
//     separated by "|" (Markdown table rules are tolerated, and a header line
//     when it names the gold query's columns);
//   - any other type is compared as a string.
//
// Beyond these rules, natural forms whose meaning is not in doubt are
// accepted (natural.go): JSON, currency, magnitudes and number words, dates
// compared as dates, NULL as None or N/A, "and" lists, table columns in
// another order, and units and short sentences made of the question's words;
// and, with the question, answers that state the gold's values in prose,
// labelled lines or JSON objects (prose.go).
//
// Before comparing, the prediction is cleaned: surrounding code fences, lead-ins
// ("Answer:", "The answer is"), Markdown emphasis and matching quotes (around
// the whole answer, or each item and cell) are removed. The stored gold text
// itself is always correct; an empty answer is always wrong.
package answer

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode"
)

// Type is the kind of a gold answer; it selects the comparison rule.
type Type string

// The answer types of the reference data format.
const (
	Integer Type = "integer"
	Float   Type = "float"
	String  Type = "string"
	List    Type = "list"
	Table   Type = "table"
)

// Valid reports whether t is one of the known answer types.
func (t Type) Valid() bool {
	switch t {
	case Integer, Float, String, List, Table:
		return true
	}
	return false
}

// ListSeparator joins the items of a list-typed gold answer.
const ListSeparator = ", "

// CellSeparator joins the cells of one row of a table-typed gold answer; rows
// are joined with new lines.
const CellSeparator = " | "

// Infer renders the gold answer of a query result and infers its type:
// one value → integer, float or string by the value's SQLite type; one column
// of several rows → list (items joined with ListSeparator); several columns →
// table (one line per row, cells joined with CellSeparator). An empty result
// gives an empty string answer, which no prediction can match.
func Infer(rows [][]any) (string, Type) {
	switch {
	case len(rows) == 0:
		return "", String
	case len(rows) == 1 && len(rows[0]) == 1:
		v := rows[0][0]
		switch v.(type) {
		case int64, int:
			return FormatValue(v), Integer
		case float64:
			// Integral floats (SUM/AVG over integers) stay floats: the 1 %
			// tolerance accepts "12" and "12.0" alike.
			return FormatValue(v), Float
		}
		return FormatValue(v), String
	case len(rows[0]) == 1:
		items := make([]string, len(rows))
		for i, r := range rows {
			items[i] = FormatValue(r[0])
		}
		return strings.Join(items, ListSeparator), List
	default:
		lines := make([]string, len(rows))
		for i, r := range rows {
			cells := make([]string, len(r))
			for j, v := range r {
				cells[j] = FormatValue(v)
			}
			lines[i] = strings.Join(cells, CellSeparator)
		}
		return strings.Join(lines, "\n"), Table
	}
}

var (
	// answerPrefix is a lead-in: "Answer:", "Final answer =", "The answer
	// is 6", "The final answer is: 6".
	answerPrefix = regexp.MustCompile(`(?i)^(the\s+)?(final\s+)?answer\s*(is\s*[:：=]?|[:：=])\s*`)
	fencedBlock  = regexp.MustCompile("(?s)```([^\\n`]*)\\n?(.*?)```")
)

// Normalize cleans a predicted answer: it keeps the contents of the first
// fenced code block when there is one, removes lead-ins ("Answer:", "The
// answer is"), Markdown emphasis around the whole answer (**6**, _6_) and
// surrounding matching quotes (not those of quoted items: "a", "b" stays),
// and trims white space.
func Normalize(s string) string {
	forms := cleanings(s)
	return forms[len(forms)-1]
}

// cleanings returns the successive forms of s as Normalize cleans it: the
// trimmed text, then the content of its code fence, then each removal of a
// lead-in, quotes or emphasis; the last is Normalize(s). Check accepts a
// prediction when any form is the stored gold text, so that a gold value
// that itself looks like decoration ("*0*", "'a'") is not cleaned away.
func cleanings(s string) []string {
	s = strings.TrimSpace(s)
	forms := []string{s}
	if m := fencedBlock.FindStringSubmatch(s); m != nil {
		body := m[2]
		if strings.TrimSpace(body) == "" {
			// "```42```": the text after the fence is the content, not a language.
			body = m[1]
		}
		s = strings.TrimSpace(body)
		forms = append(forms, s)
	}
	for {
		t := strings.TrimSpace(answerPrefix.ReplaceAllString(s, ""))
		if t != s {
			forms = append(forms, t)
		}
		q := trimQuotes(t)
		if q != t {
			forms = append(forms, q)
		}
		e := trimEmphasis(q)
		if e != q {
			forms = append(forms, e)
		}
		if e == s {
			return forms
		}
		s = e
	}
}

var quotePairs = [][2]string{{`"`, `"`}, {`'`, `'`}, {"`", "`"}, {"“", "”"}, {"‘", "’"}, {"«", "»"}, {"‹", "›"},
	{"„", "“"}, {"„", "”"}, {"「", "」"}}

// trimQuotes removes one pair of matching quotes around s, unless the
// quotes are those of several quoted items ("a", "b" or "x" | "y"): the
// inside then holds the same quote characters.
func trimQuotes(s string) string {
	for _, q := range quotePairs {
		if len(s) >= len(q[0])+len(q[1]) && strings.HasPrefix(s, q[0]) && strings.HasSuffix(s, q[1]) {
			inner := s[len(q[0]) : len(s)-len(q[1])]
			if strings.Contains(inner, q[0]) || strings.Contains(inner, q[1]) {
				return s
			}
			return strings.TrimSpace(inner)
		}
	}
	return s
}

var emphasis = []string{"**", "__", "*", "_"}

// trimEmphasis removes Markdown emphasis around the whole of s (**6**).
func trimEmphasis(s string) string {
	for _, m := range emphasis {
		if len(s) > 2*len(m) && strings.HasPrefix(s, m) && strings.HasSuffix(s, m) {
			return strings.TrimSpace(s[len(m) : len(s)-len(m)])
		}
	}
	return s
}

// Check reports whether predicted answers a question whose gold answer is
// gold of type typ. goldRows, when not nil, are the rows of the gold query;
// list and table comparisons use them instead of re-parsing gold, which keeps
// items that themselves contain separators intact. It is Expected{Text:
// gold, Type: typ, Rows: goldRows}.Check(predicted): without the gold
// query's column names, a table answer may not start with a header line.
func Check(predicted, gold string, typ Type, goldRows [][]any) bool {
	return Expected{Text: gold, Type: typ, Rows: goldRows}.Check(predicted)
}

// Expected is the gold answer of a question, as the checker uses it.
type Expected struct {
	// Text is the stored gold answer; a prediction equal to it (up to
	// white space and case) is always correct.
	Text string
	Type Type
	// Rows are the gold query's rows (nil: Text is parsed instead).
	Rows [][]any
	// Columns are the gold query's column names. A table answer may start
	// with a header line only when its cells name these columns ("name |
	// year" for name, year; "count" for count(*)): an extra first line of
	// data is never skipped.
	Columns []string
	// Question is the question asked. Words of it may surround an answer
	// ("6 singers" for "How many singers…?"); without it they may not.
	Question string
	// Ordered makes the order of a list's items and of a table's rows
	// matter (set it when the gold query has ORDER BY and the question asks
	// for an order). Off, lists are sets and tables multisets of rows, as in
	// the reference verifier.
	Ordered bool
}

// Check reports whether predicted is a correct answer (see the package
// documentation for the rules).
func (e Expected) Check(predicted string) bool {
	gold, typ, goldRows := e.Text, e.Type, e.Rows
	// The stored gold text itself is always correct, at any stage of the
	// cleaning (a gold value may look like decoration: "*0*", "'a'").
	forms := cleanings(predicted)
	if strings.TrimSpace(gold) != "" {
		for _, f := range forms {
			if foldText(f) == foldText(gold) {
				return true
			}
		}
	}
	p := forms[len(forms)-1]
	if p == "" || e.otherCurrency(p) {
		return false
	}
	switch typ {
	case Integer:
		g, gok := parseNumber(gold)
		v, ok := parseNumber(p)
		if !gok {
			return equalText(p, gold)
		}
		if ok {
			return v == math.Round(v) && math.Round(v) == math.Round(g)
		}
	case Float:
		g, gok := parseNumber(gold)
		v, ok := parseNumber(p)
		if !gok {
			return equalText(p, gold)
		}
		if ok {
			return closeTo(v, g)
		}
	case List:
		items, want := splitItems(p), goldItems(gold, goldRows)
		if sameItems(items, want) && e.inOrder(items, want) {
			return true
		}
	case Table:
		rows, want := parseTable(p), goldTable(gold, goldRows)
		if sameRows(rows, want, e.Columns) && e.rowsInOrder(rows, want) {
			return true
		}
	default:
		if equalText(p, gold) {
			return true
		}
	}
	return e.natural(p)
}

// FloatTolerance is the relative tolerance of float answers (1 %). It does
// not apply to a gold float that is a whole number (a year stored as REAL, a
// sum of whole amounts): 1959 is not 1944.
const FloatTolerance = 0.01

// closeTo reports whether v answers the float gold value g: exactly when g
// is a whole number, within FloatTolerance otherwise.
func closeTo(v, g float64) bool {
	if g == math.Trunc(g) && math.Abs(g) < 1<<53 {
		return v == g
	}
	return withinRelative(v, g, FloatTolerance)
}

func withinRelative(v, g, tol float64) bool {
	if g == 0 {
		return math.Abs(v) <= 1e-9
	}
	return math.Abs(v-g) <= tol*math.Abs(g)
}

var thousands = regexp.MustCompile(`^[+-]?\d{1,3}(,\d{3})+(\.\d+)?$`)

// parseNumber reads a number written plainly ("25", "-2.5e3", "+.5"), with
// thousands separators ("1,234.5"), or with a trailing period or percent
// sign ("25%" reads as 25).
func parseNumber(s string) (float64, bool) {
	s = strings.TrimSpace(s)
	s = strings.TrimSuffix(s, ".")
	s = strings.TrimSpace(strings.TrimSuffix(s, "%"))
	if thousands.MatchString(s) {
		s = strings.ReplaceAll(s, ",", "")
	}
	if s == "" || strings.ContainsAny(s, "_xXpP") { // reject Go-only forms: 1_000, 0x10
		return 0, false
	}
	lower := strings.ToLower(s)
	if strings.Contains(lower, "inf") || strings.Contains(lower, "nan") {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, false
	}
	return f, true
}

func equalText(p, g string) bool {
	p, g = foldText(p), foldText(g)
	return p == g || (strings.TrimSuffix(p, ".") == g && !strings.HasSuffix(g, "."))
}

// foldText trims, collapses runs of white space to one space and folds case.
func foldText(s string) string {
	return strings.ToLower(strings.Join(strings.FieldsFunc(s, unicode.IsSpace), " "))
}
