package bundled

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gosqlenv/gosqlenv/sqlenv/dataset"
	"github.com/gosqlenv/gosqlenv/sqlenv/sqlitedb"
)

// Renamed copies: a database whose tables and columns carry other names.
//
// A model pre-trained on one schema learns its names by heart and writes
// them whatever tables it is shown. A renamed copy has the rows of its
// source but other table and column names (names.go), and its questions
// the same texts and answers with the gold SQL rewritten to the new names:
// the only way to answer it is to copy the names from the table list and
// the DESCRIBE observations.

// Renaming maps the identifiers of a database — table and column names,
// lower case — to their new names. A table and a column of the same name
// get the same new name, so that SQL is rewritten without knowing which
// one an identifier means.
type Renaming map[string]string

// RenamedName is the database name of the renamed copy n of database under
// a name set: "<database>_v<n>" for pre-training (PretrainNames),
// "<database>_r<n>" for evaluation (HeldoutNames).
func RenamedName(database string, set NameSet, n int) string {
	if set == HeldoutNames {
		return fmt.Sprintf("%s_r%d", database, n)
	}
	return fmt.Sprintf("%s_v%d", database, n)
}

// WriteRenamedCopy writes dbDir/<dst>/<dst>.sqlite, a copy of the database
// src of dbDir whose tables and columns are renamed with names drawn from
// set (deterministically from dst), and returns the renaming. A copy
// already there is reused (it is written through a temporary file, so a
// file at the path is complete; the renaming is drawn again, identically).
func WriteRenamedCopy(ctx context.Context, dbDir, src, dst string, set NameSet) (Renaming, error) {
	if _, ok := affixPools[set]; !ok {
		return nil, fmt.Errorf("bundled: unknown name set %q (want %s or %s)", set, PretrainNames, HeldoutNames)
	}
	srcPath := sqlitedb.Path(dbDir, src)
	db, err := sqlitedb.Open(srcPath, sqlitedb.Limits{})
	if err != nil {
		return nil, fmt.Errorf("renamed copy of %s: %w", src, err)
	}
	tables := db.Tables()
	db.Close()
	m := drawRenaming(tables, set, dst)
	path := sqlitedb.Path(dbDir, dst)
	if _, err := os.Stat(path); err == nil {
		return m, checkRenamedCopy(path, tables, m)
	}
	if err := renameDatabase(ctx, srcPath, path, tables, m); err != nil {
		return nil, fmt.Errorf("renamed copy %s of %s: %w", dst, src, err)
	}
	return m, nil
}

// checkRenamedCopy checks that the copy already at path has the tables and
// columns m gives the source's: a copy written by another version of the
// names (another draw) would make every question's gold SQL name tables
// that are not there.
func checkRenamedCopy(path string, src []sqlitedb.Table, m Renaming) error {
	db, err := sqlitedb.Open(path, sqlitedb.Limits{})
	if err != nil {
		return fmt.Errorf("renamed copy %s: %w", path, err)
	}
	defer db.Close()
	have := map[string]bool{}
	for _, t := range db.Tables() {
		for _, c := range t.Columns {
			have[strings.ToLower(t.Name+"."+c.Name)] = true
		}
	}
	for _, t := range src {
		for _, c := range t.Columns {
			want := m[strings.ToLower(t.Name)] + "." + m[strings.ToLower(c.Name)]
			if !have[strings.ToLower(want)] {
				return fmt.Errorf("renamed copy %s has no column %s: it was written with other names (delete it to write it again)", path, want)
			}
		}
	}
	return nil
}

// drawRenaming draws the new names of the tables and their columns, from
// the random stream of the copy's name.
func drawRenaming(tables []sqlitedb.Table, set NameSet, name string) Renaming {
	r := newRand(name + "/rename")
	n := &namer{r: r, pool: affixPools[set], set: set, style: r.IntN(4), taken: map[string]bool{}}
	var idents []string
	for _, t := range tables {
		idents = append(idents, strings.ToLower(t.Name))
		for _, c := range t.Columns {
			idents = append(idents, strings.ToLower(c.Name))
		}
	}
	// Old names are taken too, so that no new name is another
	// identifier's old one (renaming in any order is then safe).
	for _, id := range idents {
		n.taken[id] = true
	}
	m := Renaming{}
	tableNames := map[string]bool{}
	for _, t := range tables {
		tableNames[strings.ToLower(t.Name)] = true
	}
	for _, id := range idents {
		if _, done := m[id]; done {
			continue
		}
		delete(n.taken, id) // a name may keep its own form
		if tableNames[id] {
			m[id] = n.tableName(id)
		} else {
			m[id] = n.columnName(id)
		}
		n.taken[strings.ToLower(m[id])] = true
	}
	return m
}

// renameDatabase copies src to dst and renames its tables and columns
// with ALTER TABLE (which also rewrites the foreign keys that name them).
func renameDatabase(ctx context.Context, src, dst string, tables []sqlitedb.Table, m Renaming) (err error) {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	tmp := dst + ".partial"
	if err := os.Remove(tmp); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	db, err := sql.Open("sqlite3", tmp)
	if err != nil {
		return err
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		db.Close()
		return err
	}
	// A name that changes only its case goes through a temporary name:
	// SQLite's names ignore case, so it would clash with itself.
	const tmpSuffix = "__renaming"
	var stmts []string
	for _, t := range tables {
		newTable := m[strings.ToLower(t.Name)]
		switch {
		case newTable == t.Name:
		case strings.EqualFold(newTable, t.Name):
			stmts = append(stmts, fmt.Sprintf("ALTER TABLE %s RENAME TO %s", quote(t.Name), quote(t.Name+tmpSuffix)),
				fmt.Sprintf("ALTER TABLE %s RENAME TO %s", quote(t.Name+tmpSuffix), quote(newTable)))
		default:
			stmts = append(stmts, fmt.Sprintf("ALTER TABLE %s RENAME TO %s", quote(t.Name), quote(newTable)))
		}
		for _, c := range t.Columns {
			nc := m[strings.ToLower(c.Name)]
			switch {
			case nc == c.Name:
			case strings.EqualFold(nc, c.Name):
				stmts = append(stmts, fmt.Sprintf("ALTER TABLE %s RENAME COLUMN %s TO %s", quote(newTable), quote(c.Name), quote(c.Name+tmpSuffix)),
					fmt.Sprintf("ALTER TABLE %s RENAME COLUMN %s TO %s", quote(newTable), quote(c.Name+tmpSuffix), quote(nc)))
			default:
				stmts = append(stmts, fmt.Sprintf("ALTER TABLE %s RENAME COLUMN %s TO %s", quote(newTable), quote(c.Name), quote(nc)))
			}
		}
	}
	for _, s := range append(stmts, "VACUUM") {
		if _, err = conn.ExecContext(ctx, s); err != nil {
			err = fmt.Errorf("%s: %w", s, err)
			break
		}
	}
	if cerr := conn.Close(); err == nil {
		err = cerr
	}
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return os.Rename(tmp, dst)
}

func quote(ident string) string { return `"` + strings.ReplaceAll(ident, `"`, `""`) + `"` }

// SQL rewrites the identifiers of a SQL text that the renaming maps: bare
// words and quoted identifiers (which keep their quotes), not string
// literals, comments or function names (a word followed by "(").
func (m Renaming) SQL(text string) string {
	toks := sqlitedb.Tokens(text)
	var b strings.Builder
	for i, t := range toks {
		nm, ok := m[strings.ToLower(t.Text)]
		switch {
		case ok && t.Kind == sqlitedb.QuotedWord:
			q := text[t.Start : t.Start+1]
			if q == "[" {
				b.WriteString("[" + nm + "]")
			} else {
				b.WriteString(q + strings.ReplaceAll(nm, q, q+q) + q)
			}
		case ok && t.Kind == sqlitedb.Word && !calledAt(toks, i):
			b.WriteString(nm)
		default:
			b.WriteString(text[t.Start:t.End])
		}
	}
	return b.String()
}

// calledAt reports whether the word at toks[i] names a function: the next
// token that is not white space or a comment is "(".
func calledAt(toks []sqlitedb.Token, i int) bool {
	for _, t := range toks[i+1:] {
		if t.Kind != sqlitedb.Space && t.Kind != sqlitedb.Comment {
			return t.Kind == sqlitedb.Punct && t.Text == "("
		}
	}
	return false
}

// Names returns the new names, sorted.
func (m Renaming) Names() []string {
	return slices.Sorted(maps.Values(m))
}

// RenameQuestions rewrites questions of a database for its renamed copy
// dst in dbDir: the gold SQL in the new names, the database name, the id
// (idPrefix + index, "%s_%04d"), and the tables involved — each
// recomputed on the copy (dataset.Enrich), with an error if a question's
// answer there is not its answer on the source.
func RenameQuestions(ctx context.Context, dbDir, dst, idPrefix string, m Renaming, qs []dataset.QuestionRecord) ([]dataset.QuestionRecord, error) {
	db, err := sqlitedb.Open(sqlitedb.Path(dbDir, dst), sqlitedb.Limits{})
	if err != nil {
		return nil, err
	}
	defer db.Close()
	out := make([]dataset.QuestionRecord, 0, len(qs))
	for i, q := range qs {
		raw := dataset.RawRecord{Question: q.QuestionText, DBID: dst, Query: m.SQL(q.GoldSQL)}
		rec, err := dataset.Enrich(ctx, db, raw, q.Split, i)
		if err != nil {
			return nil, fmt.Errorf("question %s on %s: %q: %w", q.QuestionID, dst, raw.Query, err)
		}
		if rec.GoldAnswer != q.GoldAnswer || rec.AnswerType != q.AnswerType || len(rec.TablesInvolved) != len(q.TablesInvolved) {
			return nil, fmt.Errorf("question %s on %s: %q answers %q (%s), its source %q answers %q (%s)",
				q.QuestionID, dst, raw.Query, rec.GoldAnswer, rec.AnswerType, q.GoldSQL, q.GoldAnswer, q.AnswerType)
		}
		rec.QuestionID = fmt.Sprintf("%s_%04d", idPrefix, i)
		out = append(out, rec)
	}
	return out, nil
}
