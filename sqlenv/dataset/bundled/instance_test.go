package bundled

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gosqlenv/gosqlenv/sqlenv/dataset"
	"github.com/gosqlenv/gosqlenv/sqlenv/sqlitedb"
)

// TestGenerateInstance: an instance keeps its database's schema and
// question templates, changes its rows and most of its question constants,
// is deterministic and reuses a complete file; evaluation databases and
// instance 0 are refused.
func TestGenerateInstance(t *testing.T) {
	ctx := context.Background()
	p, err := Generate(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	qs, err := GenerateInstance(ctx, dir, "university", 3, dataset.Easy, dataset.Medium)
	if err != nil {
		t.Fatal(err)
	}
	name := InstanceName("university", 3)
	if name != "university_i3" {
		t.Fatalf("InstanceName = %q", name)
	}
	orig, err := sqlitedb.Open(sqlitedb.Path(p.DBDir, "university"), sqlitedb.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	defer orig.Close()
	inst, err := sqlitedb.Open(sqlitedb.Path(dir, name), sqlitedb.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Close()
	if a, b := tableDDL(t, orig), tableDDL(t, inst); !slices.Equal(a, b) {
		t.Fatalf("schema differs:\n%v\n%v", a, b)
	}
	// Rows are redrawn: the students' names mostly differ.
	origNames, instNames := strColumn(t, orig, "SELECT name FROM student ORDER BY student_id"), strColumn(t, inst, "SELECT name FROM student ORDER BY student_id")
	if len(origNames) != len(instNames) {
		t.Fatalf("%d vs %d students", len(origNames), len(instNames))
	}
	same := 0
	for i := range origNames {
		if origNames[i] == instNames[i] {
			same++
		}
	}
	if same > len(origNames)/10 {
		t.Fatalf("%d of %d student names unchanged", same, len(origNames))
	}
	// Questions: many, all of the instance, easy or medium, answered on it.
	more, err := MoreQuestions(ctx, p.DBDir, "university", dataset.Easy, dataset.Medium)
	if err != nil {
		t.Fatal(err)
	}
	if len(qs) < len(more)/2 {
		t.Fatalf("%d instance questions, %d on the bundled database", len(qs), len(more))
	}
	bundledText := map[string]bool{}
	for _, q := range more {
		bundledText[q.QuestionText] = true
	}
	shared := 0
	for _, q := range qs {
		if q.DatabaseName != name || q.Difficulty == dataset.Hard || !strings.HasPrefix(q.QuestionID, name+"_more_") {
			t.Fatalf("unexpected question %+v", q)
		}
		if bundledText[q.QuestionText] {
			shared++
		}
	}
	// Only questions without a redrawn or renamed constant (a rank, a
	// level) may repeat the bundled database's text.
	if shared > len(qs)/4 {
		t.Fatalf("%d of %d instance questions have the text of a bundled question", shared, len(qs))
	}
	// Deterministic, and a complete file is reused.
	st, err := os.Stat(sqlitedb.Path(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	again, err := GenerateInstance(ctx, dir, "university", 3, dataset.Easy, dataset.Medium)
	if err != nil || len(again) != len(qs) || again[11].GoldSQL != qs[11].GoldSQL || again[11].GoldAnswer != qs[11].GoldAnswer {
		t.Fatalf("not deterministic: %d vs %d questions, %v", len(again), len(qs), err)
	}
	if st2, err := os.Stat(sqlitedb.Path(dir, name)); err != nil || !st2.ModTime().Equal(st.ModTime()) {
		t.Fatalf("existing instance rewritten (%v)", err)
	}
	fresh := t.TempDir()
	other, err := GenerateInstance(ctx, fresh, "university", 3, dataset.Easy, dataset.Medium)
	if err != nil || len(other) != len(qs) || other[20].QuestionText != qs[20].QuestionText {
		t.Fatalf("a fresh directory gives other questions: %v", err)
	}
	if _, err := os.Stat(sqlitedb.Path(fresh, name) + ".partial"); !os.IsNotExist(err) {
		t.Fatalf("temporary file left: %v", err)
	}
	four, err := GenerateInstance(ctx, dir, "university", 4, dataset.Easy)
	if err != nil || len(four) == 0 || four[0].QuestionText == qs[0].QuestionText && four[1].QuestionText == qs[1].QuestionText {
		t.Fatalf("instance 4 = instance 3? %v", err)
	}
	for _, bad := range []struct {
		db   string
		n    int
		want string
	}{{"cinema", 1, "evaluation database"}, {"university", 0, "numbered from 1"}, {"nowhere", 1, `"nowhere"`}} {
		if _, err := GenerateInstance(ctx, dir, bad.db, bad.n); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("GenerateInstance(%s, %d) = %v, want an error with %q", bad.db, bad.n, err, bad.want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, InstanceName("cinema", 1))); !os.IsNotExist(err) {
		t.Fatalf("refused instance written: %v", err)
	}
}

// TestInstancesOfEveryTrainingDatabase: every training database makes
// instances whose templates still find questions of each difficulty asked
// (protected literals kept), so pre-training covers all of them.
func TestInstancesOfEveryTrainingDatabase(t *testing.T) {
	if testing.Short() {
		t.Skip("generates ten databases")
	}
	ctx := context.Background()
	dir := t.TempDir()
	for _, db := range Databases(dataset.Train) {
		qs, err := GenerateInstance(ctx, dir, db, 1, dataset.Easy, dataset.Medium)
		if err != nil {
			t.Fatal(err)
		}
		by := map[dataset.Difficulty]int{}
		for _, q := range qs {
			by[q.Difficulty]++
		}
		if by[dataset.Easy] < 20 || by[dataset.Medium] < 20 {
			t.Errorf("%s instance 1: %v questions by difficulty", db, by)
		}
	}
}

// TestRenameWords: the renaming is one-to-one per word and case folded,
// keeps the case pattern, short and protected words, and is the same for a
// word wherever it appears.
func TestRenameWords(t *testing.T) {
	tb := newTable("t", "a TEXT, b TEXT, n INTEGER")
	words := []string{"Oslo", "Bergen", "Tromso", "Stavanger", "Drammen", "Molde", "Bodo", "Alta", "Narvik", "Hamar"}
	for i, w := range words {
		tb.add(w+" Central", strings.ToLower(w)+".x@mail.no", i)
	}
	tb.add("Active", "AB", 99)
	tb.add("OSLO", "Oslo", 100)
	renameWords([]*table{tb}, map[string]bool{"active": true}, rand.New(rand.NewPCG(1, 2)))
	renamed := 0
	seen := map[string]string{}
	for i, w := range words {
		a, b := tb.rows[i][0].(string), tb.rows[i][1].(string)
		first := strings.Fields(a)[0]
		if first != w {
			renamed++
			if strings.ToUpper(first[:1]) != first[:1] || strings.ToLower(first[1:]) != first[1:] {
				t.Errorf("%q → %q: case pattern lost", w, first)
			}
		}
		if !strings.HasPrefix(b, strings.ToLower(first)+".") {
			t.Errorf("row %d: %q and %q renamed differently", i, a, b)
		}
		if prev, dup := seen[first]; dup {
			t.Errorf("%s and %s both became %s", prev, w, first)
		}
		seen[first] = w
		if tb.rows[i][2] != i {
			t.Errorf("a number changed: %v", tb.rows[i][2])
		}
	}
	if renamed == 0 || renamed == len(words) {
		t.Errorf("%d of %d words renamed, want about half", renamed, len(words))
	}
	if tb.rows[len(words)][0] != "Active" || tb.rows[len(words)][1] != "AB" {
		t.Errorf("protected or short words changed: %v", tb.rows[len(words)])
	}
	osloUpper, oslo := tb.rows[len(words)+1][0].(string), tb.rows[len(words)+1][1].(string)
	if osloUpper != strings.ToUpper(oslo) || oslo != strings.Fields(tb.rows[0][0].(string))[0] {
		t.Errorf("OSLO → %q, Oslo → %q, Oslo Central → %q", osloUpper, oslo, tb.rows[0][0])
	}
}

func tableDDL(t *testing.T, db *sqlitedb.DB) []string {
	t.Helper()
	var out []string
	for _, tb := range db.Tables() {
		var cols []string
		for _, c := range tb.Columns {
			cols = append(cols, c.Name+" "+c.Type)
		}
		out = append(out, tb.Name+"("+strings.Join(cols, ", ")+")")
	}
	return out
}

func strColumn(t *testing.T, db *sqlitedb.DB, query string) []string {
	t.Helper()
	res, err := db.Query(context.Background(), query)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range res.Rows {
		out = append(out, r[0].(string))
	}
	return out
}
