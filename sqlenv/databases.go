package sqlenv

import (
	"context"
	"fmt"
	"sync"

	"github.com/gosqlenv/gosqlenv/sqlenv/dataset"
	"github.com/gosqlenv/gosqlenv/sqlenv/sqlitedb"
)

// Databases is the read-only state that many environments share: the open
// databases of a directory and the gold results of the questions asked so
// far. It is safe for concurrent use; share one among all environments of a
// process (a trainer runs dozens).
type Databases struct {
	catalog *sqlitedb.Catalog
	gold    sync.Map // question id + "\x00" + gold SQL → *goldEntry
}

type goldEntry struct {
	once    sync.Once
	rows    [][]any
	columns []string
	profile *goldProfile
	err     error
}

// OpenDatabases returns the databases under dir (Spider layout:
// <dir>/<db_id>/<db_id>.sqlite) with the given query limits (zero fields
// take sqlitedb.DefaultLimits). Databases are opened on first use.
func OpenDatabases(dir string, limits sqlitedb.Limits) *Databases {
	return &Databases{catalog: sqlitedb.NewCatalog(dir, limits)}
}

// Dir is the database directory.
func (d *Databases) Dir() string { return d.catalog.Dir() }

// Get opens (once) and returns the database named name.
func (d *Databases) Get(name string) (*sqlitedb.DB, error) { return d.catalog.Get(name) }

// Close closes every open database.
func (d *Databases) Close() error { return d.catalog.Close() }

// goldFor runs (once per question) the gold SQL of q and keeps its rows. It
// runs without the wall-clock timeout (QueryUntimed): its outcome is kept
// for the process's life, so it must not depend on how busy the machine was
// at that moment; MaxSteps still bounds it.
func (d *Databases) goldFor(ctx context.Context, db *sqlitedb.DB, q *dataset.QuestionRecord) (*goldEntry, error) {
	v, _ := d.gold.LoadOrStore(q.QuestionID+"\x00"+q.GoldSQL, &goldEntry{})
	e := v.(*goldEntry)
	e.once.Do(func() {
		res, err := db.QueryUntimed(ctx, q.GoldSQL)
		if err != nil {
			e.err = fmt.Errorf("question %s: gold SQL fails on database %s: %w", q.QuestionID, q.DatabaseName, err)
			return
		}
		e.rows, e.columns, e.profile = res.Rows, res.Columns, profileOf(res.Rows)
	})
	if e.err != nil {
		// Do not cache failures caused by the caller's context.
		if ctx.Err() != nil {
			d.gold.Delete(q.QuestionID + "\x00" + q.GoldSQL)
		}
		return nil, e.err
	}
	return e, nil
}
