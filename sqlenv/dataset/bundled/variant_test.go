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

// TestRenamedCopies: for every training database and both name sets, a
// renamed copy has the source's rows under other names, every question of
// every difficulty keeps its answer with its SQL rewritten, held-out
// copies rename every identifier with a held-out affix, and no held-out
// name is a name of any pre-training copy. Deterministic and reused.
func TestRenamedCopies(t *testing.T) {
	ctx := context.Background()
	p, err := Generate(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	pretrainNames := map[string]bool{}
	heldout := map[string][]string{}
	for _, db := range Databases(dataset.Train) {
		all, err := MoreQuestions(ctx, p.DBDir, db)
		if err != nil {
			t.Fatal(err)
		}
		var qs []dataset.QuestionRecord // every 4th: each template, quicker under -race
		for i := 0; i < len(all); i += 4 {
			qs = append(qs, all[i])
		}
		src, err := sqlitedb.Open(sqlitedb.Path(p.DBDir, db), sqlitedb.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		srcTables := src.Tables()
		src.Close()
		for _, set := range []NameSet{PretrainNames, HeldoutNames} {
			for n := 1; n <= 1; n++ {
				dst := RenamedName(db, set, n)
				m, err := WriteRenamedCopy(ctx, p.DBDir, db, dst, set)
				if err != nil {
					t.Fatal(err)
				}
				renamed, err := RenameQuestions(ctx, p.DBDir, dst, dst+"_q", m, qs)
				if err != nil {
					t.Fatal(err)
				}
				if len(renamed) != len(qs) {
					t.Fatalf("%s: %d of %d questions", dst, len(renamed), len(qs))
				}
				copyDB, err := sqlitedb.Open(sqlitedb.Path(p.DBDir, dst), sqlitedb.Limits{})
				if err != nil {
					t.Fatal(err)
				}
				tables := copyDB.Tables()
				copyDB.Close()
				if len(tables) != len(srcTables) {
					t.Fatalf("%s: %d tables, source %d", dst, len(tables), len(srcTables))
				}
				changed := 0
				for _, st := range srcTables {
					i := slices.IndexFunc(tables, func(tb sqlitedb.Table) bool { return tb.Name == m[strings.ToLower(st.Name)] })
					if i < 0 {
						t.Fatalf("%s: no table %s (renamed %s)", dst, m[strings.ToLower(st.Name)], st.Name)
					}
					tb := tables[i]
					if tb.RowCount != st.RowCount || len(tb.Columns) != len(st.Columns) || len(tb.ForeignKeys) != len(st.ForeignKeys) {
						t.Fatalf("%s: table %s (%d rows, %d columns) is not a copy of %s (%d, %d)", dst, tb.Name, tb.RowCount, len(tb.Columns), st.Name, st.RowCount, len(st.Columns))
					}
					names := []string{tb.Name}
					for _, c := range tb.Columns {
						names = append(names, c.Name)
					}
					for _, fk := range st.ForeignKeys {
						want := sqlitedb.ForeignKey{Column: m[strings.ToLower(fk.Column)], RefTable: m[strings.ToLower(fk.RefTable)], RefColumn: m[strings.ToLower(fk.RefColumn)]}
						if !slices.Contains(tb.ForeignKeys, want) {
							t.Fatalf("%s: foreign key %v of %s is not %v in %v", dst, fk, st.Name, want, tb.ForeignKeys)
						}
					}
					for _, name := range names {
						if slices.Contains(evalOnlyTables, strings.ToLower(name)) || sqlitedb.IsKeyword(strings.ToLower(name)) {
							t.Fatalf("%s: name %q is an evaluation table or a keyword", dst, name)
						}
						if set == PretrainNames {
							pretrainNames[strings.ToLower(name)] = true
						} else {
							heldout[dst] = append(heldout[dst], name)
						}
					}
					if !strings.EqualFold(tb.Name, st.Name) {
						changed++
					}
				}
				if set == HeldoutNames && changed != len(tables) {
					t.Fatalf("%s: %d of %d tables renamed", dst, changed, len(tables))
				}
				if set == PretrainNames && changed == 0 {
					t.Fatalf("%s: no table renamed", dst)
				}
				// Deterministic: drawn again, the same renaming; the file is reused.
				info, _ := os.Stat(sqlitedb.Path(p.DBDir, dst))
				again, err := WriteRenamedCopy(ctx, p.DBDir, db, dst, set)
				if err != nil {
					t.Fatal(err)
				}
				info2, _ := os.Stat(sqlitedb.Path(p.DBDir, dst))
				if !slices.Equal(again.Names(), m.Names()) || !info.ModTime().Equal(info2.ModTime()) {
					t.Fatalf("%s: not deterministic or not reused", dst)
				}
			}
		}
	}
	// A copy at the path written under other names (another version of
	// the draw) is refused by path, not reused with the wrong names.
	stale := RenamedName("library", PretrainNames, 2)
	if err := os.MkdirAll(filepath.Dir(sqlitedb.Path(p.DBDir, stale)), 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(sqlitedb.Path(p.DBDir, RenamedName("library", PretrainNames, 1)))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(sqlitedb.Path(p.DBDir, stale), b, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := WriteRenamedCopy(ctx, p.DBDir, "library", stale, PretrainNames); err == nil || !strings.Contains(err.Error(), sqlitedb.Path(p.DBDir, stale)) {
		t.Fatalf("a copy written with other names: %v, want an error naming its path", err)
	}
	for dst, names := range heldout {
		for _, name := range names {
			if pretrainNames[strings.ToLower(name)] {
				t.Errorf("%s: held-out name %q is a pre-training name", dst, name)
			}
			if !hasHeldoutAffix(name) {
				t.Errorf("%s: held-out name %q has no held-out affix", dst, name)
			}
		}
	}
	t.Logf("%d pre-training names; e.g. %v", len(pretrainNames), heldout[RenamedName("university", HeldoutNames, 1)])
}

// hasHeldoutAffix reports whether a name starts or ends with a held-out
// affix, in any case style.
func hasHeldoutAffix(name string) bool {
	l := strings.ToLower(name)
	pool := affixPools[HeldoutNames]
	for _, p := range slices.Concat(pool.tablePrefixes, pool.columnPrefixes) {
		if strings.HasPrefix(l, p) {
			return true
		}
	}
	for _, s := range slices.Concat(pool.tableSuffixes, pool.columnSuffixes) {
		if strings.HasSuffix(l, s) {
			return true
		}
	}
	return false
}

// TestRenamingSQL: identifiers are rewritten, whatever their case or
// quoting; string literals, comments and function names are not.
func TestRenamingSQL(t *testing.T) {
	m := Renaming{"student": "pupil_tbl", "name": "FullName", "home_city": "town", "count": "cnt"}
	for _, c := range [][2]string{
		{`SELECT name FROM student WHERE home_city = 'name student'`, `SELECT FullName FROM pupil_tbl WHERE town = 'name student'`},
		{`SELECT s.Name, count(*) FROM Student AS s`, `SELECT s.FullName, count(*) FROM pupil_tbl AS s`},
		{`SELECT "name", count (x) FROM "student" -- name`, `SELECT "FullName", count (x) FROM "pupil_tbl" -- name`},
		{`SELECT 'it''s name' /* student */, 1e5name FROM student`, `SELECT 'it''s name' /* student */, 1e5name FROM pupil_tbl`},
		{`SELECT count FROM student`, `SELECT cnt FROM pupil_tbl`},
	} {
		if got := m.SQL(c[0]); got != c[1] {
			t.Errorf("SQL(%q)\n= %q\nwant %q", c[0], got, c[1])
		}
	}
}

// TestReword: pre-training rewordings sometimes keep a question; held-out
// ones always change it, keep its constants, and use none of the
// pre-training pool's frames, starts or swaps.
func TestReword(t *testing.T) {
	ctx := context.Background()
	p, err := Generate(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	qs, err := MoreQuestions(ctx, p.DBDir, "university", dataset.Easy, dataset.Medium)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	kept := 0
	for _, q := range qs {
		if Reword(q.QuestionText, PretrainNames, r) == q.QuestionText {
			kept++
		}
		h := Reword(q.QuestionText, HeldoutNames, r)
		if h == q.QuestionText {
			t.Fatalf("held-out rewording kept %q", h)
		}
		for _, w := range letterRun.FindAllString(q.QuestionText, -1) {
			if strings.ToUpper(w[:1]) == w[:1] && !strings.HasPrefix(q.QuestionText, w) && !strings.Contains(h, w) {
				t.Fatalf("held-out rewording %q lost %q of %q", h, w, q.QuestionText)
			}
		}
		pre := rewordings[PretrainNames]
		for _, f := range slices.Concat(pre.frames, pre.askFrames, pre.orderFrames) {
			if lead, _, _ := strings.Cut(f, "%s"); lead != "" && strings.HasPrefix(h, lead) && !strings.HasPrefix(q.QuestionText, lead) {
				t.Fatalf("held-out rewording %q uses the pre-training frame %q", h, f)
			}
		}
	}
	if kept == 0 || kept == len(qs) {
		t.Fatalf("pre-training rewording kept %d of %d questions", kept, len(qs))
	}
	t.Logf("%d questions, pre-training kept %d; e.g. %q → %q", len(qs), kept, qs[0].QuestionText, Reword(qs[0].QuestionText, HeldoutNames, r))
}

// TestHeldoutAffixesAreNewWords: no word a pre-training name can be made
// of — an original word of a training database's names, its plural or
// abbreviation, a synonym's word, a pre-training affix — is a held-out
// affix, so a held-out name (which always carries one as a word of its
// own) is never a pre-training name.
func TestHeldoutAffixesAreNewWords(t *testing.T) {
	words := map[string]bool{}
	for _, w := range affixPools[PretrainNames].all() {
		words[w] = true
	}
	for _, d := range domains() {
		if d.split != dataset.Train {
			continue
		}
		for _, tb := range d.build(newGen(d.name)) {
			names := []string{tb.name}
			for _, line := range strings.Split(tb.ddl, "\n")[1:] {
				if f := strings.Fields(strings.TrimSpace(line)); len(f) > 1 && !sqlitedb.IsKeyword(strings.ToLower(f[0])) {
					names = append(names, f[0])
				}
			}
			for _, name := range names {
				for _, w := range strings.Split(name, "_") {
					words[w], words[plural(w)] = true, true
					if len(w) > 5 {
						words[w[:3]], words[w[:4]] = true, true
					}
					for _, syn := range synonyms[w] {
						for _, sw := range strings.Split(syn, "_") {
							words[sw] = true
						}
					}
				}
			}
		}
	}
	held := affixPools[HeldoutNames].all()
	for _, a := range held {
		if words[a] {
			t.Errorf("held-out affix %q is a word of pre-training names", a)
		}
	}
	// Pre-training's made-up affixes: many distinct ones, none held out.
	r := rand.New(rand.NewPCG(1, 2))
	madeUp := map[string]bool{}
	for range 20000 {
		a := madeUpAffix(r)
		madeUp[a] = true
		if slices.Contains(held, a) {
			t.Fatalf("made-up affix %q is a held-out affix", a)
		}
	}
	if len(madeUp) < 1000 {
		t.Errorf("%d distinct made-up affixes in 20,000 draws, want ≥ 1,000 (too few to be recalled rather than copied)", len(madeUp))
	}
}
