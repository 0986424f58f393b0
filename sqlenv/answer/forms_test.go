package answer

import (
	"fmt"
	"strings"
	"testing"
)

// formGold is a gold answer of the forms table: the gold query's rows and
// column names, and its stored text and type as Infer renders them.
type formGold struct {
	name    string
	rows    [][]any
	columns []string
}

func (g formGold) expected() Expected {
	text, typ := Infer(g.rows)
	return Expected{Text: text, Type: typ, Rows: g.rows, Columns: g.columns}
}

// scalarForms are natural ways to write one value x.
func scalarForms(x string) []string {
	return []string{x, "Answer: " + x, "ANSWER: " + x, "answer = " + x, "The answer is " + x, "The answer is: " + x,
		"Final answer: " + x, "**" + x + "**", "*" + x + "*", "`" + x + "`", `"` + x + `"`, "'" + x + "'",
		"```\n" + x + "\n```", "  " + x + " \n", "Answer: **" + x + "**"}
}

// listForms are natural ways to write the items (in gold order).
func listForms(items []string) []string {
	rev := make([]string, len(items))
	for i, it := range items {
		rev[len(items)-1-i] = it
	}
	quoted := func(q string, xs []string) string {
		out := make([]string, len(xs))
		for i, x := range xs {
			out[i] = q + x + q
		}
		return strings.Join(out, ", ")
	}
	bullets, numbered := "", ""
	for i, it := range items {
		bullets += "- " + it + "\n"
		numbered += fmt.Sprintf("%d. %s\n", i+1, it)
	}
	return []string{strings.Join(items, "\n"), strings.Join(rev, "\n"), strings.Join(items, "; "),
		strings.Join(items, " | "), bullets, numbered, quoted(`"`, items), quoted(`'`, rev),
		"Answer:\n" + strings.Join(items, "\n"), "```\n" + strings.Join(items, "\n") + "\n```", "[" + quoted(`"`, items) + "]"}
}

// tableForms are natural ways to write rows of cells with column names.
func tableForms(rows [][]string, columns []string) []string {
	line := func(cells []string, sep string) string { return strings.Join(cells, sep) }
	var plain, rev, tabs, quoted, piped []string
	for i, r := range rows {
		plain = append(plain, line(r, " | "))
		rev = append(rev, line(rows[len(rows)-1-i], " | "))
		tabs = append(tabs, line(r, "\t"))
		q := make([]string, len(r))
		for j, c := range r {
			q[j] = `"` + c + `"`
		}
		quoted = append(quoted, line(q, " | "))
		piped = append(piped, "| "+line(r, " | ")+" |")
	}
	header := line(columns, " | ")
	rule := "|" + strings.Repeat("---|", len(columns))
	return []string{strings.Join(plain, "\n"), strings.Join(rev, "\n"), strings.Join(tabs, "\n"),
		strings.Join(quoted, "\n"), header + "\n" + strings.Join(plain, "\n"),
		"| " + header + " |\n" + rule + "\n" + strings.Join(piped, "\n"), strings.Join(piped, "\n"),
		"Answer:\n" + strings.Join(plain, "\n"), "```\n" + strings.Join(plain, "\n") + "\n```"}
}

// TestAnswerForms checks a table of natural correct answers and wrong ones
// over integers, floats, strings, lists and multi-column tables: at least
// 95 % of the correct forms are accepted and no wrong form is.
func TestAnswerForms(t *testing.T) {
	type form struct {
		gold    formGold
		text    string
		correct bool
	}
	var forms []form
	add := func(g formGold, correct bool, texts ...string) {
		for _, s := range texts {
			forms = append(forms, form{g, s, correct})
		}
	}

	count := formGold{"count", [][]any{{int64(6)}}, []string{"count(*)"}}
	add(count, true, scalarForms("6")...)
	add(count, true, "6.0", "6.")
	add(count, false, "7", "60", "0.6", "-6", "There are 6 singers", "6 or 7", "5", "6.5", "NULL", "")
	big := formGold{"big", [][]any{{int64(1234)}}, []string{"total"}}
	add(big, true, scalarForms("1234")...)
	add(big, true, "1,234", "1234.0")
	add(big, false, "1,235", "123", "12340", "1.234", "1 234 5")
	avg := formGold{"avg", [][]any{{3.3333333333333335}}, []string{"avg(age)"}}
	add(avg, true, scalarForms("3.33")...)
	add(avg, true, "3.3333333333333335", "3.333", "3.33333")
	add(avg, false, "3", "3.5", "33.3", "The average is 3.33 years", "4.33")
	pct := formGold{"pct", [][]any{{58.5}}, []string{"percent"}}
	add(pct, true, "58.5", "58.5%", "Answer: 58.5%", "**58.5**", "58.50")
	add(pct, false, "0.585", "59.5", "5.85")
	city := formGold{"city", [][]any{{"Oslo"}}, []string{"city"}}
	add(city, true, scalarForms("Oslo")...)
	add(city, true, "oslo", "OSLO", "Oslo.")
	add(city, false, "Osl", "Oslo, Lima", "Lima", "The city is Oslo", "Oslo Norway", "NULL")
	comma := formGold{"comma string", [][]any{{"Virgin Islands, U.S."}}, []string{"name"}}
	add(comma, true, scalarForms("Virgin Islands, U.S.")...)
	add(comma, false, "Virgin Islands", "U.S.", "Virgin Islands, UK")

	names := formGold{"names", [][]any{{"Linda"}, {"Tracy"}}, []string{"name"}}
	add(names, true, scalarForms("Linda, Tracy")...)
	add(names, true, listForms([]string{"Linda", "Tracy"})...)
	add(names, true, "Tracy, Linda", "linda, tracy")
	add(names, false, "Linda", "Linda, Tracy, Ann", "Linda, Trace", `"Linda"`, "Linda Tracy Ann", "Linda; Ann")
	places := formGold{"places", [][]any{{"Virgin Islands, U.S."}, {"France"}}, []string{"country"}}
	add(places, true, "Virgin Islands, U.S., France", "Virgin Islands, U.S.\nFrance", "France\nVirgin Islands, U.S.",
		"Virgin Islands, U.S.; France", `"Virgin Islands, U.S.", "France"`, "- Virgin Islands, U.S.\n- France")
	add(places, false, "Virgin Islands, France", "France", "Virgin Islands, U.S.\nFrance\nSpain")
	ids := formGold{"ids", [][]any{{int64(1)}, {int64(2)}, {int64(3)}}, []string{"id"}}
	add(ids, true, listForms([]string{"1", "2", "3"})...)
	add(ids, true, "1, 2, 3", "3, 2, 1", "[1, 2, 3]", "1.0, 2.0, 3.0")
	add(ids, false, "1, 2", "1, 2, 3, 4", "1, 2, 4", "123", "1, 2, 3.5")

	song := formGold{"song", [][]any{{"Love", int64(2016)}}, []string{"title", "year"}}
	add(song, true, tableForms([][]string{{"Love", "2016"}}, []string{"title", "year"})...)
	add(song, true, "Love | 2016", "love | 2016", "Title | Year\nLove | 2016", `"Love" | "2016"`, "Love, 2016")
	add(song, true, "2016 | Love", "year | title\n2016 | Love") // columns in another order
	add(song, false, "Justin | 1999\nLove | 2016", "Love | 2017", "Love", "Love | 2016\nJustin | 1999",
		"Hate | 2016", "title | year", "Love | 2016 | 1")
	cities := formGold{"cities", [][]any{{"Oslo", int64(14)}, {"Lima", int64(7)}}, []string{"T1.city", "count(*)"}}
	add(cities, true, tableForms([][]string{{"Oslo", "14"}, {"Lima", "7"}}, []string{"city", "count"})...)
	add(cities, true, tableForms([][]string{{"Oslo", "14"}, {"Lima", "7"}}, []string{"City", "Count(*)"})...)
	add(cities, true, "Lima | 7\nOslo | 14", "Oslo | 14.0\nLima | 7.0")
	add(cities, false, "Oslo | 14", "Oslo | 14\nLima | 8", "Oslo | 14\nLima | 7\nPune | 3", "Bergen | 2\nOslo | 14\nLima | 7",
		"Oslo | 7\nLima | 14", "Oslo, 14, Lima, 7", "7 | Oslo\n14 | Lima")
	add(cities, true, "14 | Oslo\n7 | Lima")
	people := formGold{"people", [][]any{{"Justin", "Bieber"}, {"Ada", "Diaz"}}, []string{"first_name", "last_name"}}
	add(people, true, tableForms([][]string{{"Justin", "Bieber"}, {"Ada", "Diaz"}}, []string{"first name", "last name"})...)
	add(people, true, "first_name | last_name\nJustin | Bieber\nAda | Diaz", "Ada | Diaz\nJustin | Bieber")
	add(people, false, "Bob | Marley\nJustin | Bieber\nAda | Diaz", "Justin | Bieber", "Justin | Bieber\nAda | Dias",
		"Justin | Bieber\nAda | Diaz\nBob | Marley", "Bieber | Ada\nDiaz | Justin")
	add(people, true, "Bieber | Justin\nDiaz | Ada", "last_name | first_name\nBieber | Justin\nDiaz | Ada")
	nulls := formGold{"nullable", [][]any{{"Oslo", nil}}, []string{"city", "mayor"}}
	add(nulls, true, "Oslo | NULL", "oslo | null", "city | mayor\nOslo | NULL", "Oslo | None", "Oslo | N/A")
	add(nulls, false, "Oslo", "Oslo | 0", "Oslo | Lima")

	var correct, accepted, wrong, wrongAccepted int
	for _, f := range forms {
		got := f.gold.expected().Check(f.text)
		if f.correct {
			correct++
			if got {
				accepted++
			} else {
				t.Logf("rejected a correct answer: %s: %q", f.gold.name, f.text)
			}
		} else {
			wrong++
			if got {
				wrongAccepted++
				t.Errorf("accepted a wrong answer: %s: %q", f.gold.name, f.text)
			}
		}
	}
	t.Logf("%d forms: %d correct, %d accepted (%.1f %%); %d wrong, %d accepted", len(forms), correct, accepted,
		100*float64(accepted)/float64(correct), wrong, wrongAccepted)
	if len(forms) < 200 {
		t.Errorf("only %d forms", len(forms))
	}
	if float64(accepted) < 0.95*float64(correct) {
		t.Errorf("accepted %d of %d correct forms (%.1f %%), want at least 95 %%", accepted, correct, 100*float64(accepted)/float64(correct))
	}
	// The stored gold text is always accepted, as written.
	for _, g := range []formGold{count, big, avg, pct, city, comma, names, places, ids, song, cities, people, nulls} {
		if e := g.expected(); !e.Check(e.Text) {
			t.Errorf("%s: the stored gold %q is rejected", g.name, e.Text)
		}
	}
}

// TestCheckNeverSkipsADataRow: without the gold columns (Check), an extra
// first line is skipped only when it cannot be data; a wrong data row in
// front of the right rows is a wrong answer, the reward hack.
func TestCheckNeverSkipsADataRow(t *testing.T) {
	rows := [][]any{{"Love", int64(2016)}}
	for pred, want := range map[string]bool{
		"Justin | 1999\nLove | 2016":   false,
		"Justin | 1999.5\nLove | 2016": false,
		"title | year\nLove | 2016":    true,
		"Love | 2016":                  true,
	} {
		if got := Check(pred, "Love | 2016", Table, rows); got != want {
			t.Errorf("Check(%q) = %v, want %v", pred, got, want)
		}
	}
	text := [][]any{{"Justin", "Bieber"}}
	if Check("Ada | Diaz\nJustin | Bieber", "Justin | Bieber", Table, text) {
		t.Error("an extra text row was skipped as a header without column names to show it is one")
	}
}
