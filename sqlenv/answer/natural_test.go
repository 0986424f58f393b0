package answer

import (
	"testing"
)

// naturalCase is a question of a real kind, its gold query's rows and
// columns, and answers people write: right ones and wrong ones.
type naturalCase struct {
	name     string
	question string
	rows     [][]any
	columns  []string
	right    []string
	wrong    []string
}

// naturalCases are the issue-28 forms: number words, units and sentences,
// currency and magnitudes, dates, NULL, TEXT numbers, "and" lists, JSON,
// columns in another order.
var naturalCases = []naturalCase{
	{"count", "How many singers are there?", [][]any{{int64(6)}}, []string{"count(*)"},
		[]string{"six", "Six", "6 singers", "six singers", "There are 6 singers.", "There are six singers", "[6]", `{"answer": 6}`,
			`{"count": 6}`, `{"answer": "6"}`, "6 singers in total", "A total of 6 singers.", "6.0", "**six**", "Answer: six"},
		[]string{"seven", "7 singers", "There are 7 singers", "6 or 7 singers", "[7]", `{"answer": 7}`, "sixty", "6 albums",
			"There are 6 singers and 2 bands", "sixteen", "6 singers, maybe 7", "[6, 7]", "not 6"}},
	{"count zero", "How many orders were cancelled?", [][]any{{int64(0)}}, []string{"count(*)"},
		[]string{"0", "zero", "none", "None", "no orders", "No orders were cancelled.", "0 orders", "There were no orders cancelled", "[0]", "Zero."},
		[]string{"1", "one", "a few", "10", "no idea", "some orders"}},
	{"salary", "What is the total salary of all employees?", [][]any{{int64(19500)}}, []string{"sum(salary)"},
		[]string{"$19,500", "19,500 USD", "19.5k", "$19.5k", "19 500", "USD 19500", "19500 dollars", "The total salary is $19,500.",
			"$19500", "19500.00", "19,500.00", "19.5 thousand", "Total salary: 19500", "€19,500"},
		[]string{"$19,501", "19.4k", "$195", "19.5", "$19,500,000", "19.5M", "1950", "$19,600", "19,5"}},
	{"budget", "What is the budget of the film in dollars?", [][]any{{1200000.0}}, []string{"budget"},
		[]string{"1.2 million", "$1.2M", "1.2m", "1,200,000", "$1,200,000.00", "1200000 dollars", "1.2 million dollars", "The budget is $1.2 million.", "1 200 000", "$1.2 mn"},
		[]string{"1.3 million", "12 million", "$120,000", "1.2 billion", "1.2k", "$1.5M"}},
	{"average", "What is the average age of the singers?", [][]any{{33.333333333333336}}, []string{"avg(age)"},
		[]string{"33.3", "33.33", "The average age is 33.3.", "~33.3", "about 33.3", "33.33 average age", "approximately 33.33"},
		[]string{"34", "30", "33.3 or 34", "The average age is 34", "3.33", "333"}},
	{"iso date", "When was the album Love released?", [][]any{{"2007-09-24"}}, []string{"release_date"},
		[]string{"September 24, 2007", "Sep 24, 2007", "24 September 2007", "9/24/2007", "09/24/2007", "2007/09/24", "2007-09-24T00:00:00",
			"September 24th, 2007", "24/09/2007", "Monday, September 24, 2007", "24 Sep 2007", "2007-09-24."},
		[]string{"2007-09-25", "September 25, 2007", "2008-09-24", "9/25/2007", "2007", "September 2007", "24/09/2008", "2007-24-09"}},
	{"written date", "When was the concert held?", [][]any{{"March 4, 2019"}}, []string{"date"},
		[]string{"2019-03-04", "3/4/2019", "4 March 2019", "Mar 4, 2019", "March 4th, 2019", "2019/03/04"},
		[]string{"2019-04-03", "March 5, 2019", "2019-03-14", "2018-03-04"}},
	{"datetime", "When did the flight depart?", [][]any{{"2021-06-01 14:30:00"}}, []string{"departure"},
		[]string{"2021-06-01T14:30:00", "2021-06-01 14:30", "2021-06-01T14:30:00Z"},
		[]string{"2021-06-01", "2021-06-01 15:30:00", "2021-06-02T14:30:00"}},
	{"null", "Who is the manager of the Lima branch?", [][]any{{nil}}, []string{"manager"},
		[]string{"None", "N/A", "null", "NULL", "nil", "none", "n/a", "(null)"},
		[]string{"0", "Lima", "", "nobody knows", "Ada"}},
	{"text number", "What is the room number of the lab?", [][]any{{"9"}}, []string{"room"},
		[]string{"9", "9.0", "09", "room 9"},
		[]string{"9.5", "90", "19", "room 19"}},
	{"airline", "Which airline has the most flights?", [][]any{{"United Airlines"}}, []string{"airline"},
		[]string{"The airline is United Airlines.", "United Airlines.", "The airline with the most flights is United Airlines",
			"United Airlines has the most flights.", `{"airline": "United Airlines"}`, `["United Airlines"]`, "Airline: United Airlines"},
		[]string{"The airline is Delta Airlines.", "United", "United Airlines and Delta", "Not United Airlines",
			"I think it is United Airlines or Delta", "Delta has the most flights"}},
	{"cities", "Which cities have customers?", [][]any{{"Oslo"}, {"Lima"}, {"Pune"}}, []string{"city"},
		[]string{"Oslo, Lima and Pune", "Oslo, Lima, and Pune", "Oslo, Lima & Pune", "Oslo and Lima and Pune", "Pune, Oslo and Lima",
			`["Oslo", "Lima", "Pune"]`, `{"cities": ["Oslo", "Lima", "Pune"]}`, `[{"city": "Oslo"}, {"city": "Lima"}, {"city": "Pune"}]`,
			"Lima, Oslo, Pune", "Oslo\nLima\nPune", "Oslo; Lima; Pune", `["Pune","Oslo","Lima"]`,
			"The cities are Oslo, Lima and Pune.", "Cities with customers: Oslo, Lima, Pune", "The cities that have customers are Oslo, Lima, and Pune"},
		[]string{"Oslo and Lima", "Oslo, Lima and Bergen", "Oslo, Lima, Pune and Bergen", `["Oslo", "Lima"]`, "Oslo, Lima or Pune",
			`{"cities": ["Oslo"]}`, "Oslo Lima Pune Bergen", "The cities are Oslo and Lima.", "Not Oslo: Lima and Pune",
			"The towns are Oslo, Lima and Pune, Bergen"}},
	{"countries", "Which countries do the teams come from?", [][]any{{"Trinidad and Tobago"}, {"France"}}, []string{"country"},
		[]string{"Trinidad and Tobago, France", "Trinidad and Tobago and France", "France, Trinidad and Tobago", `["Trinidad and Tobago", "France"]`},
		[]string{"Trinidad, Tobago, France", "Trinidad and France", "Tobago and France"}},
	{"counts by city", "How many customers live in each city?", [][]any{{"Oslo", int64(14)}, {"Lima", int64(7)}}, []string{"city", "count(*)"},
		[]string{`[["Oslo", 14], ["Lima", 7]]`, `[{"city": "Oslo", "count": 14}, {"city": "Lima", "count": 7}]`,
			`{"rows": [["Oslo", 14], ["Lima", 7]]}`, "14 | Oslo\n7 | Lima", "count | city\n14 | Oslo\n7 | Lima",
			`[{"count": 14, "city": "Oslo"}, {"count": 7, "city": "Lima"}]`, `[[14, "Oslo"], [7, "Lima"]]`, "Lima | 7\nOslo | 14"},
		[]string{`[["Oslo", 7], ["Lima", 14]]`, `[["Oslo", 14]]`, `[["Oslo", 14], ["Lima", 7], ["Pune", 3]]`, "7 | Oslo\n14 | Lima",
			`[{"city": "Oslo", "count": 15}, {"city": "Lima", "count": 7}]`}},
	{"names", "What are the first and last names of the members?", [][]any{{"Justin", "Bieber"}, {"Ada", "Diaz"}}, []string{"first_name", "last_name"},
		[]string{`[["Justin", "Bieber"], ["Ada", "Diaz"]]`, `[{"first_name": "Justin", "last_name": "Bieber"}, {"first_name": "Ada", "last_name": "Diaz"}]`,
			"Bieber | Justin\nDiaz | Ada", "last name | first name\nBieber | Justin\nDiaz | Ada"},
		[]string{`[["Justin", "Diaz"], ["Ada", "Bieber"]]`, "Bieber | Ada\nDiaz | Justin", `[["Justin", "Bieber"]]`}},
	{"nullable row", "What is the city and mayor of the branch?", [][]any{{"Oslo", nil}}, []string{"city", "mayor"},
		[]string{"Oslo | None", "Oslo | N/A", "Oslo | null", `[["Oslo", null]]`, `{"city": "Oslo", "mayor": null}`, "None | Oslo"},
		[]string{"Oslo | 0", "Oslo | Lima", `[["Oslo", 0]]`, "Oslo"}},
}

// TestNaturalAnswerForms checks the natural forms of naturalCases and of
// TestAnswerForms together: at least 95 % of the right ones accepted, no
// wrong one.
func TestNaturalAnswerForms(t *testing.T) {
	right, accepted, wrong, wrongAccepted := checkCases(t, naturalCases)
	t.Logf("%d forms: %d right, %d accepted (%.1f %%); %d wrong, %d accepted", right+wrong, right, accepted,
		100*float64(accepted)/float64(right), wrong, wrongAccepted)
	if right+wrong < 200 { // with TestAnswerForms's, over 450

		t.Errorf("only %d forms", right+wrong)
	}
	if float64(accepted) < 0.95*float64(right) {
		t.Errorf("accepted %d of %d right forms (%.1f %%), want at least 95 %%", accepted, right, 100*float64(accepted)/float64(right))
	}
}

// checkCases checks every form of cases: it fails on a stored gold that
// is rejected and on each wrong form accepted, logs each right form
// rejected, and counts them.
func checkCases(t *testing.T, cases []naturalCase) (right, accepted, wrong, wrongAccepted int) {
	t.Helper()
	for _, c := range cases {
		text, typ := Infer(c.rows)
		e := Expected{Text: text, Type: typ, Rows: c.rows, Columns: c.columns, Question: c.question}
		if !e.Check(text) {
			t.Errorf("%s: the stored gold %q is rejected", c.name, text)
		}
		for _, f := range c.right {
			right++
			if e.Check(f) {
				accepted++
			} else {
				t.Logf("rejected a right answer: %s: %q", c.name, f)
			}
		}
		for _, f := range c.wrong {
			wrong++
			if e.Check(f) {
				wrongAccepted++
				t.Errorf("accepted a wrong answer: %s: %q", c.name, f)
			}
		}
	}
	return right, accepted, wrong, wrongAccepted
}

// Without the question, no word may surround an answer: the unit rule needs
// the question's words.
func TestUnitsNeedTheQuestion(t *testing.T) {
	e := Expected{Text: "6", Type: Integer, Rows: [][]any{{int64(6)}}}
	for _, f := range []string{"6 singers", "There are 6 singers."} {
		if e.Check(f) {
			t.Errorf("%q accepted without a question", f)
		}
	}
	e.Question = "How many singers are there?"
	for _, f := range []string{"6 singers", "There are 6 singers."} {
		if !e.Check(f) {
			t.Errorf("%q rejected with the question", f)
		}
	}
}

// Ordered answers: the order of a list's items and of a table's rows
// matters; by default it does not.
func TestOrderedAnswers(t *testing.T) {
	list := [][]any{{"Ada"}, {"Ben"}, {"Cleo"}}
	table := [][]any{{"Ada", int64(3)}, {"Ben", int64(2)}}
	for _, c := range []struct {
		rows    [][]any
		pred    string
		ordered bool
		want    bool
	}{
		{list, "Ada, Ben, Cleo", true, true},
		{list, "Cleo, Ben, Ada", true, false},
		{list, "Cleo, Ben, Ada", false, true},
		{list, "Ada, Ben and Cleo", true, true},
		{list, "Ben and Ada and Cleo", true, false},
		{table, "Ada | 3\nBen | 2", true, true},
		{table, "Ben | 2\nAda | 3", true, false},
		{table, "Ben | 2\nAda | 3", false, true},
		{table, "name | n\nAda | 3\nBen | 2", true, true},
		{table, "3 | Ada\n2 | Ben", true, true},
		{table, "2 | Ben\n3 | Ada", true, false},
	} {
		text, typ := Infer(c.rows)
		e := Expected{Text: text, Type: typ, Rows: c.rows, Columns: []string{"name", "n"}[:len(c.rows[0])], Ordered: c.ordered}
		if got := e.Check(c.pred); got != c.want {
			t.Errorf("ordered %v: %q: %v, want %v", c.ordered, c.pred, got, c.want)
		}
	}
}
