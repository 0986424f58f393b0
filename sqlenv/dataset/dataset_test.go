package dataset

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/gosqlenv/gosqlenv/sqlenv/answer"
	"github.com/gosqlenv/gosqlenv/sqlenv/sqlitedb"
	_ "github.com/mattn/go-sqlite3"
)

var ctx = context.Background()

// makeSpider writes a tiny Spider-layout directory with two databases.
func makeSpider(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	mk := func(id string, stmts ...string) {
		path := sqlitedb.Path(filepath.Join(dir, "database"), id)
		os.MkdirAll(filepath.Dir(path), 0o755)
		db, err := sql.Open("sqlite3", path)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		for _, s := range stmts {
			if _, err := db.Exec(s); err != nil {
				t.Fatal(err)
			}
		}
	}
	mk("pets",
		`CREATE TABLE owner (id INTEGER PRIMARY KEY, name TEXT)`,
		`CREATE TABLE pet (id INTEGER PRIMARY KEY, owner_id INTEGER REFERENCES owner(id), kind TEXT, age REAL)`,
		`INSERT INTO owner VALUES (1, 'Ana'), (2, 'Bo')`,
		`INSERT INTO pet VALUES (1, 1, 'cat', 3), (2, 1, 'dog', 5.5), (3, 2, 'cat', 1)`,
		`WITH RECURSIVE n(x) AS (SELECT 10 UNION ALL SELECT x+1 FROM n WHERE x < 40) INSERT INTO pet SELECT x, 2, 'fish', 0.5 FROM n`,
	)
	mk("music",
		`CREATE TABLE song (id INTEGER PRIMARY KEY, title TEXT, plays INTEGER)`,
		`INSERT INTO song VALUES (1, 'Blue', 10), (2, 'Red', 30)`,
	)
	write := func(name string, v any) {
		b, _ := json.Marshal(v)
		os.WriteFile(filepath.Join(dir, name), b, 0o644)
	}
	write("train_spider.json", []RawRecord{
		{"How many pets are there?", "pets", "SELECT count(*) FROM pet"},
		{"What kinds of pets does Ana own?", "pets", "SELECT kind FROM pet JOIN owner ON owner.id = owner_id WHERE name = 'Ana'"},
		{"Broken", "pets", "SELECT nosuch FROM pet"},
		{"Nothing", "pets", "SELECT kind FROM pet WHERE age > 100"},
		{"All fish", "pets", "SELECT id FROM pet WHERE kind = 'fish'"},
		{"Average age of birds", "pets", "SELECT avg(age) FROM pet WHERE kind = 'bird'"},
		{"How many songs?", "music", "SELECT count(*) FROM song"},
	})
	write("dev.json", []RawRecord{
		{"Most played song?", "music", "SELECT title FROM song ORDER BY plays DESC LIMIT 1"},
		{"Average pet age?", "pets", "SELECT avg(age) FROM pet WHERE kind != 'fish'"},
	})
	return dir
}

func TestImportSpider(t *testing.T) {
	spider := makeSpider(t)
	out := t.TempDir()
	rep, err := ImportSpider(ctx, ImportOptions{SpiderDir: spider, OutDir: out})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Train != 3 || rep.Eval != 2 || strings.Join(rep.Databases, ",") != "music,pets" {
		t.Fatalf("report %+v", rep)
	}
	wantDropped := map[string]int{ErrGoldFails.Error(): 1, ErrEmptyAnswer.Error(): 1, ErrTooManyRows.Error(): 1, ErrNullAnswer.Error(): 1}
	if !reflect.DeepEqual(rep.Dropped, wantDropped) {
		t.Fatalf("dropped %v, want %v", rep.Dropped, wantDropped)
	}
	train, err := Load(ctx, filepath.Join(out, "questions_train.json"), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := []QuestionRecord{
		{"pets_train_000", "How many pets are there?", "pets", "SELECT count(*) FROM pet", "34", answer.Integer, Easy, []string{"pet"}, Train},
		{"pets_train_001", "What kinds of pets does Ana own?", "pets", "SELECT kind FROM pet JOIN owner ON owner.id = owner_id WHERE name = 'Ana'", "cat, dog", answer.List, Medium, []string{"owner", "pet"}, Train},
		{"music_train_000", "How many songs?", "music", "SELECT count(*) FROM song", "2", answer.Integer, Easy, []string{"song"}, Train},
	}
	if !reflect.DeepEqual(train, want) {
		t.Fatalf("train records:\n%+v\nwant\n%+v", train, want)
	}
	eval, err := Load(ctx, filepath.Join(out, "questions_eval.json"), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(eval) != 2 || eval[0].QuestionID != "music_eval_000" || eval[0].GoldAnswer != "Red" || eval[1].GoldAnswer != "3.1666666666666665" || eval[1].AnswerType != answer.Float {
		t.Fatalf("eval records: %+v", eval)
	}
	if _, err := sqlitedb.Open(sqlitedb.Path(filepath.Join(out, "databases"), "pets"), sqlitedb.Limits{}); err != nil {
		t.Fatalf("copied database: %v", err)
	}

	// Selecting databases.
	out2 := t.TempDir()
	rep, err = ImportSpider(ctx, ImportOptions{SpiderDir: spider, OutDir: out2, DBIDs: []string{"music"}})
	if err != nil || rep.Train != 1 || rep.Eval != 1 {
		t.Fatalf("music only: %+v %v", rep, err)
	}
	if _, err := ImportSpider(ctx, ImportOptions{SpiderDir: spider, OutDir: out2, DBIDs: []string{"zoo"}}); err == nil || !strings.Contains(err.Error(), `database "zoo"`) {
		t.Fatalf("unknown db id: %v", err)
	}
	if _, err := ImportSpider(ctx, ImportOptions{SpiderDir: t.TempDir(), OutDir: out2}); err == nil || !strings.Contains(err.Error(), "is not a Spider directory") {
		t.Fatalf("not spider: %v", err)
	}
}

func TestLoadRawSpider(t *testing.T) {
	spider := makeSpider(t)
	raw := filepath.Join(t.TempDir(), "raw.json")
	b, _ := json.Marshal([]RawRecord{{"How many songs?", "music", "SELECT count(*) FROM song"}, {"Titles?", "music", "SELECT title FROM song"}})
	os.WriteFile(raw, b, 0o644)
	qs, err := Load(ctx, raw, LoadOptions{DBDir: filepath.Join(spider, "database"), Split: Eval})
	if err != nil {
		t.Fatal(err)
	}
	if len(qs) != 2 || qs[1].QuestionID != "music_eval_001" || qs[1].GoldAnswer != "Blue, Red" || qs[1].Split != Eval {
		t.Fatalf("records: %+v", qs)
	}
	if _, err := Load(ctx, raw, LoadOptions{}); err == nil || !strings.Contains(err.Error(), "need a database directory") {
		t.Fatalf("no db dir: %v", err)
	}
	bad := filepath.Join(t.TempDir(), "bad.json")
	b, _ = json.Marshal([]RawRecord{{"Broken", "music", "SELECT nope FROM song"}})
	os.WriteFile(bad, b, 0o644)
	_, err = Load(ctx, bad, LoadOptions{DBDir: filepath.Join(spider, "database")})
	if err == nil || !strings.Contains(err.Error(), bad) || !strings.Contains(err.Error(), "record 0") || !errors.Is(err, ErrGoldFails) {
		t.Fatalf("failing gold: %v", err)
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(content), 0o644)
		return p
	}
	good := `{"question_id":"a_train_000","question_text":"Q?","database_name":"a","gold_sql":"SELECT 1","gold_answer":"1","answer_type":"integer","difficulty":"Easy","tables_involved":[],"split":"train"}`
	cases := []struct{ path, want string }{
		{filepath.Join(dir, "missing.json"), "missing.json does not exist"},
		{write("empty.json", "  \n"), "empty.json is empty"},
		{write("none.json", "[]"), "none.json contains no questions"},
		{write("malformed.json", "[{"), "malformed.json: not a JSON array"},
		{write("object.json", `{"question_id": "x"}`), "object.json: not a JSON array"},
		{write("neither.json", `[{"foo": 1}]`), "neither an enriched record"},
		{write("noid.json", `[{"question_text":"Q","database_name":"a","gold_sql":"SELECT 1"}]`), "record 0: missing question_id"},
		{write("nosql.json", `[{"question_id":"x","question_text":"Q","database_name":"a"}]`), "record 0: question x: missing gold_sql"},
		{write("dup.json", "["+good+","+good+"]"), "record 1: question_id a_train_000 repeats record 0"},
		{write("diff.json", `[{"question_id":"x","question_text":"Q","database_name":"a","gold_sql":"S","difficulty":"extreme"}]`), `unknown difficulty "extreme"`},
		{write("type.json", `[{"question_id":"x","question_text":"Q","database_name":"a","gold_sql":"S","gold_answer":{"a":1}}]`), "record 0"},
	}
	for _, c := range cases {
		_, err := Load(ctx, c.path, LoadOptions{})
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), c.path) {
			t.Errorf("%s: error %v, want it to name the path and contain %q", filepath.Base(c.path), err, c.want)
		}
	}
	qs, err := Load(ctx, write("good.json", "["+good+"]"), LoadOptions{})
	if err != nil || qs[0].Difficulty != Easy {
		t.Fatalf("good: %+v %v", qs, err)
	}
}

func TestGoldAnswerJSONForms(t *testing.T) {
	cases := map[string]string{
		`"Oslo"`:                 "Oslo",
		`25`:                     "25",
		`2.50`:                   "2.50",
		`["a", "b", 3]`:          "a, b, 3",
		`[["a", 1], ["b", 2.5]]`: "a | 1\nb | 2.5",
		`null`:                   "",
		`true`:                   "1",
	}
	for in, want := range cases {
		var g GoldAnswer
		if err := json.Unmarshal([]byte(in), &g); err != nil || string(g) != want {
			t.Errorf("%s → %q (%v), want %q", in, g, err, want)
		}
	}
	var g GoldAnswer
	if err := json.Unmarshal([]byte(`[[["deep"]]]`), &g); err == nil {
		t.Error("nested lists must be refused")
	}
}

func TestSaveLoadRoundTrip(t *testing.T) {
	qs := []QuestionRecord{
		{"x_eval_000", "Q1?", "x", "SELECT 1", "1", answer.Integer, Easy, []string{"t"}, Eval},
		{"x_eval_001", "Q2 <&>?", "x", "SELECT a, b FROM t", "a | 1\nb | 2", answer.Table, Hard, []string{"t", "u", "v"}, Eval},
	}
	path := filepath.Join(t.TempDir(), "q.json")
	if err := Save(path, qs); err != nil {
		t.Fatal(err)
	}
	got, err := Load(ctx, path, LoadOptions{})
	if err != nil || !reflect.DeepEqual(got, qs) {
		t.Fatalf("round trip: %+v %v", got, err)
	}
	b, _ := os.ReadFile(path)
	if !strings.Contains(string(b), `"question_text": "Q2 <&>?"`) {
		t.Fatalf("JSON is not readable:\n%s", b)
	}
}

func TestFilter(t *testing.T) {
	qs := []QuestionRecord{
		{QuestionID: "1", Difficulty: Easy, Split: Train, DatabaseName: "a"},
		{QuestionID: "2", Difficulty: Medium, Split: Train, DatabaseName: "b"},
		{QuestionID: "3", Difficulty: Hard, Split: Eval, DatabaseName: "a"},
	}
	ids := func(qs []QuestionRecord) string {
		var s []string
		for _, q := range qs {
			s = append(s, q.QuestionID)
		}
		return strings.Join(s, ",")
	}
	cases := []struct {
		f    Filter
		want string
	}{
		{Filter{}, "1,2,3"},
		{Filter{Difficulties: []string{"EASY", "medium"}}, "1,2"},
		{Filter{Splits: []string{"dev"}}, "3"},
		{Filter{Databases: []string{"A"}}, "1,3"},
		{Filter{Difficulties: []string{"hard"}, Splits: []string{"train"}}, ""},
	}
	for _, c := range cases {
		got, err := c.f.Apply(qs)
		if err != nil || ids(got) != c.want {
			t.Errorf("%+v: %s %v, want %s", c.f, ids(got), err, c.want)
		}
	}
	if _, err := (Filter{Difficulties: []string{"impossible"}}).Apply(qs); err == nil || !strings.Contains(err.Error(), `unknown difficulty "impossible"`) {
		t.Fatalf("unknown difficulty: %v", err)
	}
	if _, err := (Filter{Splits: []string{"holdout"}}).Apply(qs); err == nil {
		t.Fatal("unknown split accepted")
	}
}

// TestAllNullResultsAreDropped: a gold result whose every value is NULL —
// one cell, a row of cells or a list — can only be answered "NULL" and is
// refused; a result with one value among NULLs is kept.
func TestAllNullResultsAreDropped(t *testing.T) {
	for _, c := range []struct {
		rows [][]any
		want bool
	}{
		{[][]any{{nil}}, true},
		{[][]any{{nil, nil}}, true},
		{[][]any{{nil}, {nil}, {nil}}, true},
		{[][]any{{nil, nil}, {nil, nil}}, true},
		{[][]any{{nil, int64(0)}}, false},
		{[][]any{{nil}, {"Oslo"}}, false},
	} {
		if got := allNull(c.rows); got != c.want {
			t.Errorf("allNull(%v) = %v, want %v", c.rows, got, c.want)
		}
	}
}

// TestImportSpiderDevOnly: Spider's dev files alone import (eval questions
// only); a question whose database is missing is skipped and reported, not
// fatal; every dropped question is written with its reason; two imports
// write identical files.
func TestImportSpiderDevOnly(t *testing.T) {
	spider := makeSpider(t)
	for _, f := range []string{"train_spider.json", "train_others.json"} {
		os.Remove(filepath.Join(spider, f))
	}
	dev, _ := json.Marshal([]RawRecord{
		{"How many songs?", "music", "SELECT count(*) FROM song"},
		{"How many animals?", "zoo", "SELECT count(*) FROM animal"},
		{"Most played?", "music", "SELECT title FROM song ORDER BY plays DESC LIMIT 1"},
		{"Nothing", "music", "SELECT title FROM song WHERE plays > 1000"},
	})
	if err := os.WriteFile(filepath.Join(spider, "dev.json"), dev, 0o644); err != nil {
		t.Fatal(err)
	}
	var outputs [][]byte
	for i := 0; i < 2; i++ {
		out := t.TempDir()
		rep, err := ImportSpider(ctx, ImportOptions{SpiderDir: spider, OutDir: out})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Train != 0 || rep.Eval != 2 || strings.Join(rep.MissingDatabases, ",") != "zoo" || strings.Join(rep.Databases, ",") != "music" {
			t.Fatalf("report %+v", rep)
		}
		if rep.Dropped[ErrMissingDatabase.Error()] != 1 || rep.Dropped[ErrEmptyAnswer.Error()] != 1 {
			t.Fatalf("dropped %v", rep.Dropped)
		}
		var dropped []DroppedQuestion
		data, err := os.ReadFile(rep.DroppedFile)
		if err != nil || json.Unmarshal(data, &dropped) != nil {
			t.Fatalf("dropped file: %v", err)
		}
		want := []DroppedQuestion{
			{Split: Eval, File: "dev.json", Index: 1, DBID: "zoo", Question: "How many animals?", Query: "SELECT count(*) FROM animal", Reason: "database file missing"},
			{Split: Eval, File: "dev.json", Index: 3, DBID: "music", Question: "Nothing", Query: "SELECT title FROM song WHERE plays > 1000", Reason: "gold SQL returns no rows"},
		}
		if !reflect.DeepEqual(dropped, want) {
			t.Fatalf("dropped.json:\n%+v\nwant\n%+v", dropped, want)
		}
		var all []byte
		for _, f := range []string{"questions_train.json", "questions_eval.json", "dropped.json"} {
			b, err := os.ReadFile(filepath.Join(out, f))
			if err != nil {
				t.Fatal(err)
			}
			all = append(all, b...)
		}
		outputs = append(outputs, all)
	}
	if !bytes.Equal(outputs[0], outputs[1]) {
		t.Error("two imports of the same files wrote different output")
	}
	// No question file at all is an error that says so.
	os.Remove(filepath.Join(spider, "dev.json"))
	if _, err := ImportSpider(ctx, ImportOptions{SpiderDir: spider, OutDir: t.TempDir()}); err == nil || !strings.Contains(err.Error(), "has no questions") {
		t.Fatalf("no question files: %v", err)
	}
}
