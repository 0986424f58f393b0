package bundled

import (
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// pinnedContent is the SHA-256 of what Version "1" generates: every
// table's CREATE statement and rows, and both question files. Generation
// code may be rewritten freely as long as this holds; when the data is
// meant to change, bump Version and pin the new value.
const pinnedContent = "79e3ecd1b2e0f01ee9668a65f527c18928658e7780f9202ff4eccada432ede27"

// TestGeneratedContentIsPinned guards Version's promise (the same version,
// the same data) across changes to the generator's code. SQLite's own file
// bytes are left out (its header records the library's version); what the
// files hold is compared instead.
func TestGeneratedContentIsPinned(t *testing.T) {
	p, built := sharedDataset(t)
	h := sha256.New()
	for _, b := range built {
		db, err := sql.Open("sqlite3", "file:"+filepath.Join(p.DBDir, b.d.name, b.d.name+".sqlite")+"?mode=ro")
		if err != nil {
			t.Fatal(err)
		}
		hashDatabase(t, h, db, b.d.name)
		db.Close()
	}
	for _, f := range []string{p.TrainQuestions, p.EvalQuestions} {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		h.Write(data)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != pinnedContent {
		t.Errorf("the bundled dataset's content changed (sha256 %s, pinned %s): if that is meant, bump Version and update pinnedContent", got, pinnedContent)
	}
}

// hashDatabase writes the database's tables, in creation order, with their
// rows in rowid order to h.
func hashDatabase(t *testing.T, h interface{ Write([]byte) (int, error) }, db *sql.DB, name string) {
	t.Helper()
	rows, err := db.Query("SELECT name, sql FROM sqlite_schema WHERE type = 'table' ORDER BY rowid")
	if err != nil {
		t.Fatal(err)
	}
	var tables, ddls []string
	for rows.Next() {
		var n, ddl string
		if err := rows.Scan(&n, &ddl); err != nil {
			t.Fatal(err)
		}
		tables, ddls = append(tables, n), append(ddls, ddl)
	}
	rows.Close()
	for i, tbl := range tables {
		fmt.Fprintf(h, "%s\x00%s\x00%s\x00", name, tbl, ddls[i])
		rs, err := db.Query(`SELECT * FROM "` + tbl + `" ORDER BY rowid`)
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rs.Columns()
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for j := range vals {
			ptrs[j] = &vals[j]
		}
		for rs.Next() {
			if err := rs.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			for _, v := range vals {
				fmt.Fprintf(h, "%T:%v\x1f", v, v)
			}
			h.Write([]byte{'\n'})
		}
		if err := rs.Err(); err != nil {
			t.Fatal(err)
		}
		rs.Close()
	}
}

func TestTableSpec(t *testing.T) {
	g := newGen("spec-test")
	parent := g.table(tableSpec{name: "parent", rows: 3, columns: []column{
		{"parent_id INTEGER PRIMARY KEY", rowID},
		{"name TEXT NOT NULL", each([]string{"a", "b", "c"})},
	}})
	child := g.table(tableSpec{name: "child", rows: 5, columns: []column{
		{"child_id INTEGER PRIMARY KEY", rowID},
		{"parent_id INTEGER NOT NULL", refEachThenSkewed(parent)},
		{"label TEXT NOT NULL", func(r *row) any { return fmt.Sprintf("%s-%d", parent.rows[r.int("parent_id")-1][1], r.i) }},
		{"flag INTEGER NOT NULL", flag(0.5)},
	}, constraints: []string{"FOREIGN KEY (parent_id) REFERENCES parent (parent_id)"}})

	wantDDL := "CREATE TABLE child (\nchild_id INTEGER PRIMARY KEY,\nparent_id INTEGER NOT NULL,\nlabel TEXT NOT NULL,\nflag INTEGER NOT NULL,\n" +
		"FOREIGN KEY (parent_id) REFERENCES parent (parent_id)\n)"
	if child.ddl != wantDDL {
		t.Errorf("ddl:\n%s\nwant:\n%s", child.ddl, wantDDL)
	}
	if want := [][]any{{1, "a"}, {2, "b"}, {3, "c"}}; !reflect.DeepEqual(parent.rows, want) {
		t.Errorf("parent rows %v, want %v", parent.rows, want)
	}
	if child.len() != 5 {
		t.Fatalf("%d child rows, want 5", child.len())
	}
	for i, r := range child.rows {
		p := r[1].(int)
		switch {
		case r[0] != i+1:
			t.Errorf("row %d: id %v", i, r[0])
		case i < 3 && p != i+1:
			t.Errorf("row %d: parent %d, want %d (each parent once first)", i, p, i+1)
		case p < 1 || p > 3:
			t.Errorf("row %d: parent %d out of range", i, p)
		case r[2] != fmt.Sprintf("%s-%d", parent.rows[p-1][1], i):
			t.Errorf("row %d: label %v does not follow its parent %d", i, r[2], p)
		case r[3] != 0 && r[3] != 1:
			t.Errorf("row %d: flag %v", i, r[3])
		}
	}

	// The same stream draws the same rows: rules draw row by row, column by column.
	manual := newGen("spec-test")
	for i := range 5 {
		ref := 1 + manual.skewed(3)
		if i < 3 {
			ref = i + 1
		}
		if ref != child.rows[i][1] {
			t.Fatalf("row %d: parent %v, drawn by hand %d", i, child.rows[i][1], ref)
		}
		if f := manual.chance(0.5); (child.rows[i][3] == 1) != f {
			t.Fatalf("row %d: flag %v, drawn by hand %v", i, child.rows[i][3], f)
		}
	}
}

func TestTableSpecReadingALaterColumnPanics(t *testing.T) {
	defer func() {
		msg := fmt.Sprint(recover())
		if !strings.Contains(msg, `table t: column "b" is not drawn before it is read`) {
			t.Errorf("panic %q", msg)
		}
	}()
	newGen("x").table(tableSpec{name: "t", rows: 1, columns: []column{
		{"a INTEGER", func(r *row) any { return r.int("b") }},
		{"b INTEGER", rowID},
	}})
}
