package answer

import (
	"math"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestFormatValue(t *testing.T) {
	cases := []struct {
		v    any
		want string
	}{
		{int64(25), "25"}, {int64(-3), "-3"}, {3.0, "3.0"}, {2.5, "2.5"}, {0.1, "0.1"},
		{1.0 / 3, "0.3333333333333333"}, {1e20, "1e+20"}, {1.5e-5, "1.5e-05"}, {123456.0, "123456.0"},
		{1e16, "1e+16"}, {1e15, "1000000000000000.0"}, {0.0001, "0.0001"}, {math.Copysign(0, -1), "-0.0"},
		{nil, "NULL"}, {"Oslo", "Oslo"}, {[]byte("text"), "text"}, {[]byte{0xff, 0x01}, "x'FF01'"},
	}
	for _, c := range cases {
		if got := FormatValue(c.v); got != c.want {
			t.Errorf("FormatValue(%#v) = %q, want %q", c.v, got, c.want)
		}
	}
}

func TestInfer(t *testing.T) {
	cases := []struct {
		rows [][]any
		gold string
		typ  Type
	}{
		{[][]any{{int64(25)}}, "25", Integer},
		{[][]any{{63.0}}, "63.0", Float},
		{[][]any{{2.75}}, "2.75", Float},
		{[][]any{{"Oslo"}}, "Oslo", String},
		{[][]any{{nil}}, "NULL", String},
		{[][]any{{"a"}, {"b"}, {int64(3)}}, "a, b, 3", List},
		{[][]any{{"a", int64(1)}, {"b", 2.5}}, "a | 1\nb | 2.5", Table},
		{[][]any{{"a", int64(1)}}, "a | 1", Table},
		{nil, "", String},
	}
	for _, c := range cases {
		gold, typ := Infer(c.rows)
		if gold != c.gold || typ != c.typ {
			t.Errorf("Infer(%v) = %q, %s; want %q, %s", c.rows, gold, typ, c.gold, c.typ)
		}
	}
}

func TestNormalize(t *testing.T) {
	cases := map[string]string{
		"  42 ":                    "42",
		"Answer: 42":               "42",
		"answer:42":                "42",
		"ANSWER is: Oslo":          "Oslo",
		"Final answer: \"Oslo\"":   "Oslo",
		"'Oslo'":                   "Oslo",
		"“Oslo”":                   "Oslo",
		"```\n42\n```":             "42",
		"```text\nOslo\n```":       "Oslo",
		"```42```":                 "42",
		"Here:\n```sql\nLima\n```": "Lima",
		"`Answer: 'x'`":            "x",
		"\"\"":                     "",
		"It's":                     "It's",
		"O'Brien":                  "O'Brien",
	}
	for in, want := range cases {
		if got := Normalize(in); got != want {
			t.Errorf("Normalize(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCheck(t *testing.T) {
	rowsList := [][]any{{"Smith, John"}, {"Doe, Jane"}}
	rowsTable := [][]any{{"Oslo", int64(14)}, {"Lima", int64(7)}, {"Pune", 3.5}}
	cases := []struct {
		name string
		pred string
		gold string
		typ  Type
		rows [][]any
		want bool
	}{
		{"int exact", "25", "25", Integer, nil, true},
		{"int as float", "25.0", "25", Integer, nil, true},
		{"int thousands", "1,234", "1234", Integer, nil, true},
		{"int prefix", "Answer: 25", "25", Integer, nil, true},
		{"int trailing period", "25.", "25", Integer, nil, true},
		{"int wrong", "26", "25", Integer, nil, false},
		{"int fractional is wrong", "25.5", "25", Integer, nil, false},
		{"int words", "25 employees", "25", Integer, nil, false},
		{"int empty", "", "25", Integer, nil, false},
		{"int quoted", `"25"`, "25", Integer, nil, true},
		{"int fenced", "```\n25\n```", "25", Integer, nil, true},
		{"int negative", "-3", "-3", Integer, nil, true},
		{"int hex is not a number", "0x19", "25", Integer, nil, false},
		{"float within 1%", "63.5", "63.2", Float, nil, true},
		{"float outside 1%", "64", "63.2", Float, nil, false},
		// A gold float that is a whole number (a year stored as REAL, an AVG
		// that came out whole) is matched exactly: 1959 is not 1944.
		{"whole float is exact", "63.5", "63.0", Float, nil, false},
		{"year stored as REAL", "1959", "1944.0", Float, nil, false},
		{"whole float written whole", "1944", "1944.0", Float, nil, true},
		{"whole float written as a float", "1,944.00", "1944.0", Float, nil, true},
		{"year in a table", "Casablanca | 1959", "Casablanca | 1944.0", Table, [][]any{{"Casablanca", 1944.0}}, false},
		{"float rounding", "3.33", "3.3333333333333335", Float, nil, true},
		{"float exponent", "6.3e1", "63.0", Float, nil, true},
		{"float zero", "0", "0.0", Float, nil, true},
		{"float zero wrong", "0.001", "0.0", Float, nil, false},
		{"float nan", "nan", "1.0", Float, nil, false},
		{"string case", "oslo", "Oslo", String, nil, true},
		{"string spaces", "  New   York ", "New York", String, nil, true},
		{"string period", "Oslo.", "Oslo", String, nil, true},
		{"string wrong", "Lima", "Oslo", String, nil, false},
		{"unknown type as string", "OSLO", "Oslo", Type("weird"), nil, true},
		{"string empty", "  ", "Oslo", String, nil, false},
		{"string empty gold", "", "", String, nil, false},
		{"list any order", "b, a", "a, b", List, nil, true},
		{"list pipes", "b | a", "a, b", List, nil, true},
		{"list lines", "1. b\n2. a", "a, b", List, nil, true},
		{"list bullets", "- b\n- a", "a, b", List, nil, true},
		{"list brackets", "[b, a]", "a, b", List, nil, true},
		{"list missing item", "a", "a, b", List, nil, false},
		{"list extra item", "a, b, c", "a, b", List, nil, false},
		{"list duplicates ignored", "a, a, b", "a, b", List, nil, true},
		{"list case", "A, B", "a, b", List, nil, true},
		{"list numbers", "2.0, 1", "1, 2", List, [][]any{{int64(1)}, {int64(2)}}, true},
		{"list uses gold rows", "Doe, Jane\nSmith, John", "Smith, John, Doe, Jane", List, rowsList, true},
		{"list rows wrong", "Doe, Jane", "Smith, John, Doe, Jane", List, rowsList, false},
		{"table any order", "Lima | 7\nPune | 3.5\nOslo | 14", "", Table, rowsTable, true},
		{"table header", "city | n\nOslo | 14\nLima | 7\nPune | 3.5", "", Table, rowsTable, true},
		{"table markdown", "| city | n |\n|---|---|\n| Oslo | 14 |\n| Lima | 7 |\n| Pune | 3.5 |", "", Table, rowsTable, true},
		{"table numbered", "1. Oslo | 14\n2. Lima | 7\n3. Pune | 3.5", "", Table, rowsTable, true},
		{"table float tolerance", "Oslo | 14\nLima | 7\nPune | 3.51", "", Table, rowsTable, true},
		{"table int exact", "Oslo | 15\nLima | 7\nPune | 3.5", "", Table, rowsTable, false},
		{"table missing row", "Oslo | 14\nLima | 7", "", Table, rowsTable, false},
		{"table multiset", "a | 1\na | 1", "a | 1\na | 1", Table, nil, true},
		{"table multiset count", "a | 1", "a | 1\na | 1", Table, nil, false},
		{"table from gold text", "b | 2\na | 1", "a | 1\nb | 2", Table, nil, true},
		{"table single row commas", "Oslo, 14", "Oslo | 14", Table, nil, true},
		{"table wrong width", "Oslo | 14 | x", "Oslo | 14", Table, nil, false},
	}
	for _, c := range cases {
		if got := Check(c.pred, c.gold, c.typ, c.rows); got != c.want {
			t.Errorf("%s: Check(%q, %q, %s) = %v, want %v", c.name, c.pred, c.gold, c.typ, got, c.want)
		}
	}
}

// FuzzCheck checks that answer parsing never panics, that a gold answer
// always matches itself, and that decorating a correct answer keeps it correct.
func FuzzCheck(f *testing.F) {
	for _, s := range []string{"25", "3.5", "Oslo", "a, b", "a | 1\nb | 2", "```\nx\n```", "Answer: 'y'", "", "\xff", "[1, 2]"} {
		f.Add(s, "integer")
		f.Add(s, "table")
	}
	f.Fuzz(func(t *testing.T, s string, typ string) {
		Check(s, s, Type(typ), nil)
		Normalize(s)
		if !utf8.ValidString(s) || strings.ContainsAny(s, "`'\"“”‘’:") {
			return
		}
		gold := strings.TrimSpace(s)
		if gold == "" || strings.Contains(gold, "\n") {
			return
		}
		if !Check(gold, gold, String, nil) {
			t.Fatalf("string %q does not match itself", gold)
		}
		if !Check("Answer: \""+gold+"\"", gold, String, nil) {
			t.Fatalf("decorated %q does not match", gold)
		}
	})
}
