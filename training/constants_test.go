package training

import (
	"slices"
	"testing"

	"github.com/gosqlenv/gosqlenv/sqlenv"
)

func TestQuestionConstants(t *testing.T) {
	for _, c := range []struct {
		question, sql string
		want          []string
	}{
		{"Among the students who enrolled in 2019 and come from Brussels, what is the average GPA?",
			"SELECT round(avg(gpa), 2) FROM student WHERE enrollment_year = 2019 AND home_city = 'Brussels'", []string{"2019", "Brussels"}},
		{"List the 3 courses with the most enrollments in Fall 2022.",
			"SELECT c.title FROM enrollment AS e JOIN course AS c ON e.course_id = c.course_id WHERE e.semester = 'Fall 2022' GROUP BY c.title ORDER BY count(*) DESC LIMIT 3", []string{"Fall 2022", "3"}},
		{"Which employees of O'Brien's team earn over 50000?", "SELECT name FROM employee WHERE team = 'O''Brien' AND salary > 50000", []string{"O'Brien", "50000"}},
		{"How many students are there?", "SELECT count(*) FROM student WHERE gpa > 2", nil},                    // 2 is the template's, not the question's
		{"Students of 2019 in 2019 cohorts", "SELECT 1 FROM s WHERE a = 2019 OR b = '2019'", []string{"2019"}}, // listed once
		{"Who teaches History?", "SELECT name FROM instructor WHERE dept = 'history'", []string{"history"}},    // case-insensitive
		{"Courses at level 20", "SELECT title FROM course WHERE level = 200", nil},                             // whole numbers only
	} {
		if got := QuestionConstants(c.question, c.sql); !slices.Equal(got, c.want) {
			t.Errorf("QuestionConstants(%q, %q) = %q, want %q", c.question, c.sql, got, c.want)
		}
	}
}

func TestConstantsCopied(t *testing.T) {
	gold := map[string]string{
		"q1": "SELECT count(*) FROM student WHERE enrollment_year = 2019 AND home_city = 'Brussels'",
		"q2": "SELECT name FROM instructor WHERE rank = 'Assistant Professor'",
	}
	query := func(sql string) sqlenv.Turn {
		return sqlenv.Turn{Action: sqlenv.Action{ActionType: sqlenv.Query, Argument: sql}}
	}
	episodes := []sqlenv.EpisodeReport{
		{QuestionID: "q1", Question: "How many students enrolled in 2019 and come from Brussels?", Turns: []sqlenv.Turn{
			{Action: sqlenv.Action{ActionType: sqlenv.Describe, Argument: "student"}},
			query("SELECT count(*) FROM student WHERE enrollment_year = 2018 AND home_city = 'Brussels'"), // 2019 → 2018: one of two
			{Action: sqlenv.Action{ActionType: sqlenv.Answer, Argument: "2019"}},                          // answers do not count
		}},
		{QuestionID: "q2", Question: "Name the instructors with the rank Assistant Professor.", Turns: []sqlenv.Turn{
			query("SELECT name FROM instructor WHERE rank = 'Assistant Professors'"), // not the whole word
			query("SELECT name FROM instructor WHERE rank = 'assistant professor'"),  // a later query that does
		}},
		{QuestionID: "unknown", Question: "Brussels 2019?", Turns: []sqlenv.Turn{query("SELECT 2019")}},
	}
	if copied, total := ConstantsCopied(episodes, gold); copied != 2 || total != 3 {
		t.Fatalf("ConstantsCopied = %d of %d, want 2 of 3", copied, total)
	}
}
