package training

import (
	"slices"
	"testing"

	"github.com/gosqlenv/gosqlenv/sqlenv"
)

// TestSQLNames: tables and columns, not keywords, functions, aliases,
// literals or comments.
func TestSQLNames(t *testing.T) {
	for _, c := range []struct {
		sql  string
		want []string
	}{
		{`SELECT count(*) FROM student WHERE home_city = 'Porto'`, []string{"student", "home_city"}},
		{`SELECT d.name, count(*) AS n FROM student AS s JOIN department d ON s.major_department_id = d.department_id GROUP BY d.name ORDER BY n`,
			[]string{"name", "student", "department", "major_department_id", "department_id"}},
		{`SELECT student.name FROM student -- gpa
		  WHERE "home city" = 'x' /* salary */ AND round(gpa, 2) > 3.5e0`, []string{"name", "student", "home city", "gpa"}},
		{`SELECT Name FROM STUDENT WHERE name = 1`, []string{"Name", "STUDENT"}},
		{`SELECT title FROM course, department AS d WHERE d.budget > 10`, []string{"title", "course", "department", "budget"}},
	} {
		if got := SQLNames(c.sql); !slices.Equal(got, c.want) {
			t.Errorf("SQLNames(%q) = %q, want %q", c.sql, got, c.want)
		}
	}
}

// TestGroundedNames: a name counts as grounded when an observation before
// the query showed it (table list, DESCRIBE, error), not the question.
func TestGroundedNames(t *testing.T) {
	ep := sqlenv.EpisodeReport{
		Question: "How many pupils does the department_list have?",
		Initial:  sqlenv.Observation{Question: "How many pupils does the department_list have?", SchemaInfo: "Tables: pupil_tbl, dept_list"},
		Turns: []sqlenv.Turn{
			{Action: sqlenv.Action{ActionType: sqlenv.Query, Argument: "SELECT count(*) FROM pupil_tbl WHERE home_city = 'x'"},
				Observation: sqlenv.Observation{Error: "no such column: home_city"}},
			{Action: sqlenv.Action{ActionType: sqlenv.Describe, Argument: "pupil_tbl"},
				Observation: sqlenv.Observation{SchemaInfo: "pupil_tbl(pupil_key INTEGER, town TEXT)"}},
			{Action: sqlenv.Action{ActionType: sqlenv.Query, Argument: "SELECT count(*) FROM pupil_tbl AS p JOIN department_list AS d WHERE p.town = 'x'"}},
		},
	}
	// First query: pupil_tbl seen, home_city not yet (the error comes after).
	// Second: pupil_tbl, town seen; department_list only in the question.
	g, n := GroundedNames([]sqlenv.EpisodeReport{ep})
	if g != 3 || n != 5 {
		t.Fatalf("GroundedNames = %d of %d, want 3 of 5", g, n)
	}
}
