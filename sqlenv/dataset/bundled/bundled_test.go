package bundled

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gosqlenv/gosqlenv/sqlenv/answer"
	"github.com/gosqlenv/gosqlenv/sqlenv/dataset"
	"github.com/gosqlenv/gosqlenv/sqlenv/sqlitedb"
)

// shared is one generated dataset that the read-only tests share.
var shared struct {
	once  sync.Once
	dir   string
	paths Paths
	built []built
	err   error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if shared.dir != "" {
		os.RemoveAll(shared.dir)
	}
	os.Exit(code)
}

func sharedDataset(t *testing.T) (Paths, []built) {
	t.Helper()
	shared.once.Do(func() {
		shared.dir, shared.err = os.MkdirTemp("", "bundled-test-")
		if shared.err == nil {
			shared.paths, shared.built, shared.err = generate(context.Background(), filepath.Join(shared.dir, "data"))
		}
	})
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	return shared.paths, shared.built
}

func TestGenerateIsByteReproducible(t *testing.T) {
	first, _ := sharedDataset(t)
	second, err := Generate(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	a, b := readTree(t, first.Root), readTree(t, second.Root)
	if len(a) < 14+4 {
		t.Fatalf("only %d files generated", len(a))
	}
	for name, data := range a {
		other, ok := b[name]
		switch {
		case !ok:
			t.Errorf("%s: missing from the second generation", name)
		case !bytes.Equal(data, other):
			t.Errorf("%s: differs between two generations", name)
		}
	}
	for name := range b {
		if _, ok := a[name]; !ok {
			t.Errorf("%s: only in the second generation", name)
		}
	}
}

// readTree returns every file under root by its relative path.
func readTree(t *testing.T, root string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		files[rel], err = os.ReadFile(path)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func TestDatabases(t *testing.T) {
	p, out := sharedDataset(t)
	splits := map[dataset.Split][]string{}
	for _, b := range out {
		splits[b.d.split] = append(splits[b.d.split], b.d.name)
	}
	if n := len(out); n < 14 {
		t.Errorf("%d databases, want at least 14", n)
	}
	if len(splits[dataset.Train]) < 10 || len(splits[dataset.Eval]) < 4 {
		t.Errorf("splits: %v, want at least 10 train and 4 eval databases", splits)
	}
	cat := sqlitedb.NewCatalog(p.DBDir, sqlitedb.Limits{})
	defer cat.Close()
	names, err := cat.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(names) != len(out) {
		t.Errorf("database directory lists %v, want %d databases", names, len(out))
	}
	for _, b := range out {
		t.Run(b.d.name, func(t *testing.T) { checkDatabase(t, sqlitedb.Path(p.DBDir, b.d.name)) })
	}
}

// checkDatabase checks a generated database's schema and values.
func checkDatabase(t *testing.T, path string) {
	db, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tables := queryStrings(t, db, `SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite%' ORDER BY name`)
	if len(tables) < 3 || len(tables) > 8 {
		t.Errorf("%d tables %v, want 3 to 8", len(tables), tables)
	}
	if v := queryStrings(t, db, `PRAGMA foreign_key_check`); len(v) > 0 {
		t.Errorf("foreign key violations: %v", v)
	}
	if v := queryStrings(t, db, `PRAGMA integrity_check`); len(v) != 1 || v[0] != "ok" {
		t.Errorf("integrity check: %v", v)
	}
	if v := queryStrings(t, db, `PRAGMA page_size`); v[0] != "4096" {
		t.Errorf("page size %s, want 4096", v[0])
	}
	fks := 0
	for _, tbl := range tables {
		pk := queryStrings(t, db, `SELECT name FROM pragma_table_info(?) WHERE pk > 0`, tbl)
		if len(pk) == 0 {
			t.Errorf("table %s has no primary key", tbl)
		}
		fks += len(queryStrings(t, db, `SELECT "from" FROM pragma_foreign_key_list(?)`, tbl))
		checkValues(t, db, tbl)
	}
	if fks < len(tables)-1 {
		t.Errorf("%d foreign keys for %d tables: the tables are not related", fks, len(tables))
	}
}

// checkValues checks a table's row count and text values, and that only a
// few columns have NULLs.
func checkValues(t *testing.T, db *sql.DB, tbl string) {
	cols := queryStrings(t, db, `SELECT name FROM pragma_table_info(?) ORDER BY cid`, tbl)
	var rows int
	if err := db.QueryRow(`SELECT count(*) FROM ` + tbl).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if rows < 5 || rows > 10000 {
		t.Errorf("table %s has %d rows", tbl, rows)
	}
	for _, c := range cols {
		var bad, nulls int
		q := fmt.Sprintf(`SELECT count(*) FILTER (WHERE typeof(%[1]s) = 'text' AND (instr(%[1]s, '|') > 0 OR instr(%[1]s, ',') > 0 OR length(%[1]s) >= %[2]d OR %[1]s = '')), count(*) FILTER (WHERE %[1]s IS NULL) FROM %[3]s`, c, maxTextLen, tbl)
		if err := db.QueryRow(q).Scan(&bad, &nulls); err != nil {
			t.Fatal(err)
		}
		if bad > 0 {
			t.Errorf("%s.%s: %d text values are empty, too long or contain | or ,", tbl, c, bad)
		}
		if nulls > 0 && !(tbl == "loan" && c == "return_date" || tbl == "employee" && c == "manager_id") {
			t.Errorf("%s.%s: %d NULL values", tbl, c, nulls)
		}
	}
}

func queryStrings(t *testing.T, db *sql.DB, q string, args ...any) []string {
	t.Helper()
	rows, err := db.Query(q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out []string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprint(vals...))
	}
	return out
}

func TestQuestionFiles(t *testing.T) {
	p, out := sharedDataset(t)
	splitOf := map[string]dataset.Split{}
	for _, b := range out {
		splitOf[b.d.name] = b.d.split
	}
	for split, path := range map[dataset.Split]string{dataset.Train: p.TrainQuestions, dataset.Eval: p.EvalQuestions} {
		qs, err := dataset.Load(context.Background(), path, dataset.LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		minimum := map[dataset.Split]int{dataset.Train: 600, dataset.Eval: 200}[split]
		if len(qs) < minimum {
			t.Errorf("%s: %d questions, want at least %d", split, len(qs), minimum)
		}
		checkMix(t, split, qs)
		checkIdentity(t, split, qs, splitOf)
		checkAnswers(t, qs)
	}
}

// checkMix checks the difficulty mix (40/40/20 within 5 points) and that
// every answer type occurs.
func checkMix(t *testing.T, split dataset.Split, qs []dataset.QuestionRecord) {
	diff, types := map[dataset.Difficulty]int{}, map[answer.Type]int{}
	for _, q := range qs {
		diff[q.Difficulty]++
		types[q.AnswerType]++
	}
	for d, want := range map[dataset.Difficulty]float64{dataset.Easy: 40, dataset.Medium: 40, dataset.Hard: 20} {
		if got := 100 * float64(diff[d]) / float64(len(qs)); math.Abs(got-want) > 5 {
			t.Errorf("%s: %.1f %% %s questions, want %.0f ± 5", split, got, d, want)
		}
	}
	for _, typ := range []answer.Type{answer.Integer, answer.Float, answer.String, answer.List, answer.Table} {
		if types[typ] == 0 {
			t.Errorf("%s: no %s answers", split, typ)
		}
	}
	t.Logf("%s: %d questions, difficulties %v, answer types %v", split, len(qs), diff, types)
}

// checkIdentity checks ids ({db}_{split}_{index:03d}, numbered per database
// in file order), splits and the uniqueness of question texts per database.
func checkIdentity(t *testing.T, split dataset.Split, qs []dataset.QuestionRecord, splitOf map[string]dataset.Split) {
	next := map[string]int{}
	texts := map[string]bool{}
	for _, q := range qs {
		if want := fmt.Sprintf("%s_%s_%03d", q.DatabaseName, split, next[q.DatabaseName]); q.QuestionID != want {
			t.Errorf("question id %s, want %s", q.QuestionID, want)
		}
		next[q.DatabaseName]++
		if q.Split != split || splitOf[q.DatabaseName] != split {
			t.Errorf("%s: split %s in the %s file (database split %s)", q.QuestionID, q.Split, split, splitOf[q.DatabaseName])
		}
		key := q.DatabaseName + "\x00" + q.QuestionText
		if texts[key] {
			t.Errorf("%s: question text repeats within %s: %q", q.QuestionID, q.DatabaseName, q.QuestionText)
		}
		texts[key] = true
	}
}

// checkAnswers re-runs every gold SQL through dataset.Enrich: the stored
// record must come back exactly.
func checkAnswers(t *testing.T, qs []dataset.QuestionRecord) {
	p, _ := sharedDataset(t)
	cat := sqlitedb.NewCatalog(p.DBDir, sqlitedb.Limits{})
	defer cat.Close()
	index := map[string]int{}
	for _, q := range qs {
		db, err := cat.Get(q.DatabaseName)
		if err != nil {
			t.Fatal(err)
		}
		raw := dataset.RawRecord{Question: q.QuestionText, DBID: q.DatabaseName, Query: q.GoldSQL}
		got, err := dataset.Enrich(context.Background(), db, raw, q.Split, index[q.DatabaseName])
		index[q.DatabaseName]++
		if err != nil {
			t.Errorf("%s: %v", q.QuestionID, err)
			continue
		}
		if !reflect.DeepEqual(got, q) {
			t.Errorf("%s: re-enriched record differs:\n got %+v\nwant %+v", q.QuestionID, got, q)
		}
		if q.GoldAnswer == "" || strings.Contains(string(q.GoldAnswer), "NULL") {
			t.Errorf("%s: gold answer %q", q.QuestionID, q.GoldAnswer)
		}
	}
}

func TestTemplates(t *testing.T) {
	_, out := sharedDataset(t)
	for _, b := range out {
		for _, m := range b.stats.Mismatched {
			t.Errorf("difficulty mismatch: %s", m)
		}
		for i, n := range b.stats.PerTemplate {
			if n == 0 {
				t.Errorf("%s template %d (%q) made no question", b.d.name, i, b.d.templates[i].texts[0])
			}
		}
		t.Logf("%s: %d questions from %d templates; dropped %v", b.d.name, len(b.questions), len(b.d.templates), b.stats.Rejected)
	}
}

func TestManifest(t *testing.T) {
	p, out := sharedDataset(t)
	data, err := os.ReadFile(filepath.Join(p.Root, manifestFile))
	if err != nil {
		t.Fatal(err)
	}
	var m manifest
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	if m.Version != Version || len(m.Databases) != len(out) {
		t.Fatalf("manifest: version %q, %d databases", m.Version, len(m.Databases))
	}
	total := 0
	for i, db := range m.Databases {
		if db.Name != out[i].d.name || db.Split != out[i].d.split || db.Questions != len(out[i].questions) || len(db.Tables) < 3 {
			t.Errorf("manifest database %d: %+v", i, db)
		}
		total += db.Questions
	}
	if got := m.Questions["train"].Total + m.Questions["eval"].Total; got != total {
		t.Errorf("manifest counts %d questions by split, %d by database", got, total)
	}
}

func TestGenerateNeedsEmptyRoot(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "x"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Generate(context.Background(), root); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Fatalf("Generate into a non-empty directory: %v", err)
	}
}

func TestEnsureGeneratesOnceAndReuses(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "data")
	t.Setenv(DataDirEnv, dir)
	// Two concurrent callers: both must get the complete copy.
	var wg sync.WaitGroup
	paths := make([]Paths, 2)
	errs := make([]error, 2)
	for i := range paths {
		wg.Add(1)
		go func() {
			defer wg.Done()
			paths[i], errs[i] = Ensure(context.Background())
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("caller %d: %v", i, err)
		}
	}
	if paths[0] != paths[1] || paths[0] != PathsIn(dir) {
		t.Fatalf("paths %+v and %+v, want %+v", paths[0], paths[1], PathsIn(dir))
	}
	marker := filepath.Join(dir, markerFile)
	before, err := os.Stat(marker)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(10 * time.Millisecond)
	again, err := Ensure(context.Background())
	if err != nil || again != paths[0] {
		t.Fatalf("second Ensure: %+v, %v", again, err)
	}
	after, err := os.Stat(marker)
	if err != nil || !after.ModTime().Equal(before.ModTime()) {
		t.Fatalf("the complete copy was regenerated (marker %v then %v, %v)", before.ModTime(), after.ModTime(), err)
	}
	entries, _ := os.ReadDir(parent)
	if len(entries) != 1 {
		t.Errorf("temporary directories left behind: %v", entries)
	}
	if _, err := dataset.Load(context.Background(), again.EvalQuestions, dataset.LoadOptions{}); err != nil {
		t.Fatal(err)
	}
}

func TestEnsureFillsEmptyDirectory(t *testing.T) {
	dir := t.TempDir() // exists and is empty, as a user may have created it
	t.Setenv(DataDirEnv, dir)
	p, err := Ensure(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if p != PathsIn(dir) || !complete(dir) {
		t.Fatalf("Ensure into an empty directory: %+v", p)
	}
}

func TestEnsureRefusesForeignDirectory(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv(DataDirEnv, dir)
	if _, err := Ensure(context.Background()); err == nil || !strings.Contains(err.Error(), "not a complete") {
		t.Fatalf("Ensure into a foreign directory: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "notes.txt")); string(b) != "mine" {
		t.Fatal("Ensure touched a foreign directory")
	}
}

func TestTemplateHelpers(t *testing.T) {
	p := params{"name": "O'Brien", "n": int64(3), "x": 2.5}
	got, err := fill("SELECT * FROM t WHERE a = {name} AND b > {n} AND c < {x}", p, sqlLiteral)
	if want := "SELECT * FROM t WHERE a = 'O''Brien' AND b > 3 AND c < 2.5"; err != nil || got != want {
		t.Errorf("fill SQL = %q, %v; want %q", got, err, want)
	}
	if got, _ := fill("Who is {name}, {x}?", p, textValue); got != "Who is O'Brien, 2.5?" {
		t.Errorf("fill text = %q", got)
	}
	if _, err := fill("{missing}", p, textValue); err == nil {
		t.Error("fill accepted a missing placeholder")
	}
	for in, want := range map[string]string{"River": "Rivers", "City": "Cities", "Compass": "Compasses", "Day": "Days"} {
		if got := plural(in); got != want {
			t.Errorf("plural(%q) = %q, want %q", in, got, want)
		}
	}
	tp := top(easy, 1, "name", "FROM t WHERE a = {a}", "score DESC", "")
	if tp.sql != "SELECT name FROM t WHERE a = {a} ORDER BY score DESC LIMIT 1" || tp.tie != "SELECT score FROM t WHERE a = {a} ORDER BY score DESC LIMIT 2" {
		t.Errorf("top: sql %q, tie %q", tp.sql, tp.tie)
	}
}

func BenchmarkGenerate(b *testing.B) {
	for b.Loop() {
		if _, err := Generate(context.Background(), b.TempDir()); err != nil {
			b.Fatal(err)
		}
	}
}

// TestMoreQuestions: many more questions than the bundled file's, every
// gold answer recomputed by the guard, the bundled questions among them,
// and the same result on a second call.
func TestMoreQuestions(t *testing.T) {
	ctx := context.Background()
	p, err := Generate(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	more, err := MoreQuestions(ctx, p.DBDir, "university", dataset.Easy, dataset.Medium)
	if err != nil {
		t.Fatal(err)
	}
	bundledQs, err := dataset.Load(ctx, p.TrainQuestions, dataset.LoadOptions{DBDir: p.DBDir})
	if err != nil {
		t.Fatal(err)
	}
	gold := map[string]bool{}
	ids := map[string]bool{}
	for _, q := range more {
		if q.Difficulty == dataset.Hard || q.DatabaseName != "university" || ids[q.QuestionID] {
			t.Fatalf("unexpected question %+v", q)
		}
		ids[q.QuestionID] = true
		gold[q.GoldSQL] = true
	}
	var inBundle, bundledEM int
	for _, q := range bundledQs {
		if q.DatabaseName == "university" && q.Difficulty != dataset.Hard {
			bundledEM++
			if gold[q.GoldSQL] {
				inBundle++
			}
		}
	}
	if len(more) < 4*bundledEM || inBundle != bundledEM {
		t.Fatalf("%d more questions (bundled easy+medium: %d, of which %d found among them)", len(more), bundledEM, inBundle)
	}
	again, err := MoreQuestions(ctx, p.DBDir, "university", dataset.Easy, dataset.Medium)
	if err != nil || len(again) != len(more) || again[7].QuestionText != more[7].QuestionText {
		t.Fatalf("not deterministic: %d vs %d questions, %v", len(again), len(more), err)
	}
	if _, err := MoreQuestions(ctx, p.DBDir, "nowhere"); err == nil || !strings.Contains(err.Error(), `"nowhere"`) {
		t.Fatalf("unknown database: %v", err)
	}
}

func TestDatabasesBySplit(t *testing.T) {
	train, eval := Databases(dataset.Train), Databases(dataset.Eval)
	if len(train) != 10 || len(eval) != 4 || train[0] != "university" {
		t.Fatalf("train %v, eval %v", train, eval)
	}
	for _, d := range eval {
		if slices.Contains(train, d) {
			t.Fatalf("%s in both splits", d)
		}
	}
}
