// Package sqlitedb gives safe, read-only access to a SQLite database for
// untrusted SQL written by an agent.
//
// Read-only mode alone is not a sandbox (VACUUM INTO, ATTACH, temp tables and
// huge allocations all succeed on a mode=ro connection), so every query passes
// several independent guards:
//
//  1. a textual check for a clear message: one statement, starting with SELECT or WITH;
//  2. only the first statement is ever prepared, and it must satisfy sqlite3_stmt_readonly;
//  3. an authorizer that allows only reads, SELECT, recursive CTEs and a whitelist of functions;
//  4. connection limits: no attached databases, bounded SQL length, value
//     length and result columns, a SQLite heap limit, temporary storage in
//     memory under it;
//  5. a deadline that interrupts SQLite (sqlite3_interrupt), and caps on the
//     rows and bytes read from the cursor.
//
// Databases are opened with mode=ro&immutable=1: SQLite takes no locks and
// writes no journal, so a database file is never touched.
package sqlitedb

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"
)

// Limits bound what one query may cost.
type Limits struct {
	// Timeout is the CPU time a query may use (default 5 s of one core),
	// counted on the query's own thread, so that a query gets the same
	// outcome alone and beside busy sessions (up to a 3-fold slowdown); a
	// query that takes 3 × Timeout of wall-clock time is interrupted anyway
	// (a starved machine).
	// QueryUntimed has neither.
	Timeout time.Duration
	// MaxSteps is the work one query may do, in instructions of SQLite's
	// virtual machine (default DefaultMaxSteps; -1: not limited). Unlike
	// Timeout it does not depend on the machine's speed either: a query over
	// it fails the same way everywhere. Neither sees work SQLite does within
	// one instruction (a sort of what one step holds); the wall-clock
	// backstop does.
	MaxSteps int64
	// MaxRows is the most rows read from a result (default 10,000); reading
	// stops there and the result is marked truncated.
	MaxRows int
	// MaxBytes is the most bytes of values read from a result (default 8 MiB).
	MaxBytes int
	// MaxValueLength caps the size of any string or blob a query may build
	// or read (SQLITE_LIMIT_LENGTH, default 64 KiB): randomblob(1e9) fails
	// instead of allocating a gigabyte.
	MaxValueLength int
	// MaxColumns caps the columns of a result (SQLITE_LIMIT_COLUMN, default
	// 256). With MaxValueLength it bounds one row before it is read: 256 ×
	// 64 KiB = 16 MiB, where 400 columns of zeroblob(1e6) once took 1.2 GB.
	MaxColumns int
	// MaxSQLLength caps the length of the SQL text (default 100,000 bytes).
	MaxSQLLength int
	// MaxPatternLength caps the pattern of LIKE and GLOB
	// (SQLITE_LIMIT_LIKE_PATTERN_LENGTH, default 1,000 bytes; SQLite's own
	// is 50,000). Matching costs up to text × pattern inside one step of
	// SQLite's virtual machine, which neither MaxSteps nor Timeout can stop:
	// a 65,000-byte text against a 49,000-byte pattern held a session for
	// 13 s of CPU (issue 56).
	MaxPatternLength int
	// HeapLimit is the memory one query may take in SQLite (default 48
	// MiB), beyond what its connection held when it started (page cache,
	// schema): past it the query fails with "out of memory" and a message
	// that says so, instead of growing the process. It is accounted per
	// connection (memory.go), so one session's heavy query cannot make
	// another's fail; a process-wide limit of 8 × the smallest HeapLimit
	// remains as a backstop, and a query it stops is told that the server's
	// memory, not its own need, was the cause. Temporary tables and sorts are
	// kept in memory, under this limit, never spilled to disk.
	HeapLimit int64
}

// DefaultMaxSteps is the default Limits.MaxSteps: 300 million instructions,
// 1–4.5 s of one core on the development machines (stepsPerSecond), within
// the 5 s of CPU time of the default Timeout. Each of the 870 bundled gold
// queries needs under a million.
const DefaultMaxSteps = 300_000_000

// stepsPerSecond is about how many virtual-machine instructions a core runs
// a second (100–300 million measured on a 2-core AMD EPYC); it only words
// the error message.
const stepsPerSecond = 150e6

// DefaultLimits returns the limits used when a field is zero.
func DefaultLimits() Limits {
	return Limits{
		Timeout:          5 * time.Second,
		MaxSteps:         DefaultMaxSteps,
		MaxRows:          10_000,
		MaxBytes:         8 << 20,
		MaxValueLength:   64 << 10,
		MaxColumns:       256,
		MaxSQLLength:     100_000,
		HeapLimit:        48 << 20,
		MaxPatternLength: 1000,
	}
}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	if l.Timeout <= 0 {
		l.Timeout = d.Timeout
	}
	if l.MaxSteps == 0 {
		l.MaxSteps = d.MaxSteps
	} else if l.MaxSteps < 0 {
		l.MaxSteps = 0 // not limited
	}
	if l.MaxRows <= 0 {
		l.MaxRows = d.MaxRows
	}
	if l.MaxBytes <= 0 {
		l.MaxBytes = d.MaxBytes
	}
	if l.MaxValueLength <= 0 {
		l.MaxValueLength = d.MaxValueLength
	}
	if l.MaxSQLLength <= 0 {
		l.MaxSQLLength = d.MaxSQLLength
	}
	if l.MaxColumns <= 0 {
		l.MaxColumns = d.MaxColumns
	}
	if l.MaxPatternLength <= 0 {
		l.MaxPatternLength = d.MaxPatternLength
	}
	if l.HeapLimit <= 0 {
		l.HeapLimit = d.HeapLimit
	}
	return l
}

// Column describes one column of a table.
type Column struct {
	Name       string
	Type       string // declared type, as written in CREATE TABLE (may be empty)
	PrimaryKey bool
	NotNull    bool
}

// ForeignKey is a reference from Column of a table to RefColumn of RefTable.
type ForeignKey struct {
	Column, RefTable, RefColumn string
}

// Table describes a table of the database. The database is immutable, so the
// description, row count included, is read once when it is opened.
type Table struct {
	Name        string
	Columns     []Column
	ForeignKeys []ForeignKey
	RowCount    int64
}

// Result is what a query returned: column names and rows of SQLite values
// (int64, float64, string, []byte or nil).
type Result struct {
	Columns []string
	Rows    [][]any
	// Truncated is set when reading stopped at Limits.MaxRows or
	// Limits.MaxBytes; the query may have had more rows than len(Rows).
	Truncated bool
}

// DB is a read-only SQLite database guarded for untrusted queries. It is safe
// for concurrent use; connections are pooled (conn.go talks to SQLite's C
// API directly: one call per row, the authorizer in C).
type DB struct {
	path   string
	limits Limits
	conns  *pool
	tables []Table // sorted by name
	// rootTables maps each b-tree's root page to its table (TablesRead).
	rootTables map[int64]string
}

var sqliteHeader = []byte("SQLite format 3\x00")

// Open opens the SQLite file at path read-only with the given limits (zero
// fields take DefaultLimits) and reads its schema.
func Open(path string, limits Limits) (*DB, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	if err := checkSQLiteFile(abs); err != nil {
		return nil, err
	}
	d := &DB{path: abs, limits: limits.withDefaults()}
	// Keep enough idle connections for every core's environments to find one.
	d.conns = &pool{path: abs, limits: d.limits, maxIdle: 2 * runtime.GOMAXPROCS(0), maxIdleTime: time.Minute}
	if err := d.loadSchema(); err != nil {
		d.Close()
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	return d, nil
}

func checkSQLiteFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("database file %s does not exist", path)
		}
		return fmt.Errorf("open database %s: %w", path, err)
	}
	defer f.Close()
	head := make([]byte, len(sqliteHeader))
	if _, err := io.ReadFull(f, head); err != nil || !bytes.Equal(head, sqliteHeader) {
		return fmt.Errorf("%s is not a SQLite database (bad header)", path)
	}
	return nil
}

// dsn builds a URI filename: read-only and immutable (no locks, no journal).
func dsn(path string) string {
	u := url.URL{Scheme: "file", Path: path, OmitHost: true}
	return u.String() + "?mode=ro&immutable=1"
}

// Close closes all connections.
func (d *DB) Close() error {
	d.conns.close()
	return nil
}

// Path is the absolute path of the database file.
func (d *DB) Path() string { return d.path }

// Limits returns the limits in force.
func (d *DB) Limits() Limits { return d.limits }

// Tables lists the tables (not views or SQLite's internal tables), sorted by name.
func (d *DB) Tables() []Table { return d.tables }

// TableNames lists the table names, sorted.
func (d *DB) TableNames() []string {
	names := make([]string, len(d.tables))
	for i, t := range d.tables {
		names[i] = t.Name
	}
	return names
}

// Table finds a table by name, ignoring case (as SQLite does).
func (d *DB) Table(name string) (Table, bool) {
	for _, t := range d.tables {
		if strings.EqualFold(t.Name, name) {
			return t, true
		}
	}
	return Table{}, false
}

// loadSchema reads tables, columns, foreign keys and row counts. It runs on
// trusted SQL and therefore uses a plain connection without the authorizer
// (PRAGMA table_info is refused to agents).
func (d *DB) loadSchema() error {
	plain, err := sql.Open("sqlite3", dsn(d.path))
	if err != nil {
		return err
	}
	defer plain.Close()
	d.rootTables = map[int64]string{}
	roots, err := plain.Query(`SELECT rootpage, tbl_name FROM sqlite_schema WHERE rootpage > 0`)
	if err != nil {
		return fmt.Errorf("read schema: %w", err)
	}
	for roots.Next() {
		var root int64
		var table string
		if err := roots.Scan(&root, &table); err != nil {
			roots.Close()
			return fmt.Errorf("read schema: %w", err)
		}
		d.rootTables[root] = table
	}
	roots.Close()
	if err := roots.Err(); err != nil {
		return fmt.Errorf("read schema: %w", err)
	}
	rows, err := plain.Query(`SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite\_%' ESCAPE '\' ORDER BY name`)
	if err != nil {
		return fmt.Errorf("read schema: %w", err)
	}
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return fmt.Errorf("read schema: %w", err)
		}
		names = append(names, n)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read schema: %w", err)
	}
	for _, n := range names {
		t, err := describe(plain, n)
		if err != nil {
			return fmt.Errorf("describe table %q: %w", n, err)
		}
		d.tables = append(d.tables, t)
	}
	sort.Slice(d.tables, func(i, j int) bool { return d.tables[i].Name < d.tables[j].Name })
	return nil
}

func describe(db *sql.DB, table string) (Table, error) {
	t := Table{Name: table}
	q := quoteIdent(table)
	rows, err := db.Query(`SELECT name, type, "notnull", pk FROM pragma_table_info(?) ORDER BY cid`, table)
	if err != nil {
		return t, err
	}
	for rows.Next() {
		var c Column
		var notNull, pk int
		if err := rows.Scan(&c.Name, &c.Type, &notNull, &pk); err != nil {
			rows.Close()
			return t, err
		}
		c.NotNull, c.PrimaryKey = notNull != 0, pk != 0
		t.Columns = append(t.Columns, c)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return t, err
	}
	rows, err = db.Query(`SELECT "from", "table", coalesce("to", '') FROM pragma_foreign_key_list(?) ORDER BY id, seq`, table)
	if err != nil {
		return t, err
	}
	for rows.Next() {
		var fk ForeignKey
		if err := rows.Scan(&fk.Column, &fk.RefTable, &fk.RefColumn); err != nil {
			rows.Close()
			return t, err
		}
		t.ForeignKeys = append(t.ForeignKeys, fk)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return t, err
	}
	err = db.QueryRow(`SELECT count(*) FROM ` + q).Scan(&t.RowCount)
	return t, err
}

// quoteIdent quotes a SQL identifier.
func quoteIdent(name string) string {
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}

// ErrTimeout is wrapped by the error of a query interrupted at Limits.Timeout.
var ErrTimeout = errors.New("query timed out")

// ErrTooMuchWork is wrapped by the error of a query stopped at
// Limits.MaxSteps: like ErrTimeout for the agent, but the same whatever the
// load on the machine.
var ErrTooMuchWork = errors.New("query stopped")

// Query runs one untrusted read-only statement under the guards and limits.
// A refused statement gives a *RejectedError, a query that ran past the
// timeout an error wrapping ErrTimeout, and SQLite's own errors (syntax, no
// such column, …) come back with SQLite's message.
func (d *DB) Query(ctx context.Context, sqlText string) (*Result, error) {
	return d.query(ctx, sqlText, d.limits.Timeout)
}

// QueryUntimed runs one read-only statement as Query does, under the same
// guards and limits except the wall-clock Timeout: only MaxSteps, which is
// the same on every machine, the memory and result limits, and ctx bound
// it. It is for SQL the caller trusts and whose outcome must not depend on
// how busy the machine is: a dataset's gold queries. Under Query, a gold
// query that a starved or paused process cannot finish in 5 s fails, and
// with it a dataset build or every later episode of that question.
func (d *DB) QueryUntimed(ctx context.Context, sqlText string) (*Result, error) {
	return d.query(ctx, sqlText, 0)
}

// query is Query with a wall-clock timeout (0: none).
func (d *DB) query(ctx context.Context, sqlText string, timeout time.Duration) (*Result, error) {
	if len(sqlText) > d.limits.MaxSQLLength {
		return nil, rejectf("query is too long (%d bytes; the limit is %d)", len(sqlText), d.limits.MaxSQLLength)
	}
	if err := checkStatementText(sqlText); err != nil {
		return nil, err
	}
	res, err := d.run(ctx, sqlText, timeout)
	switch {
	case err == nil:
		return res, nil
	case errors.Is(err, errCPUTime):
		return nil, fmt.Errorf("%w after %v of CPU time: simplify the query or add a LIMIT", ErrTimeout, timeout)
	case errors.Is(err, errTimedOut):
		return nil, fmt.Errorf("%w after %v (the machine is too busy to give it %v of CPU time): try again later, or simplify the query",
			ErrTimeout, wallBackstop*timeout, timeout)
	case errors.Is(err, errTooMuchWork):
		return nil, fmt.Errorf("%w: it needs more than %d million steps of SQLite's work (about %.0f s); filter, aggregate or add a LIMIT",
			ErrTooMuchWork, d.limits.MaxSteps/1_000_000, float64(d.limits.MaxSteps)/stepsPerSecond)
	}
	switch sqliteCode(err) {
	case sqliteMismatch: // in a read-only query: a LIMIT or OFFSET that is not an integer SQLite can hold
		return nil, fmt.Errorf("%w: LIMIT and OFFSET take whole numbers from -9223372036854775808 to 9223372036854775807", err)
	case sqliteTooBig:
		return nil, fmt.Errorf("%w: a value is larger than %d bytes; return smaller values (substr, length, LIMIT)", err, d.limits.MaxValueLength)
	case sqliteNomem:
		if errors.Is(err, errProcessMemory) {
			return nil, fmt.Errorf("%w: the server's SQLite memory (%d MiB for all sessions) is in use by other queries; run the query again", err, d.limits.HeapLimit*processHeapFactor>>20)
		}
		return nil, fmt.Errorf("%w: the query needs more than %d MiB of memory; filter, aggregate or add a LIMIT", err, d.limits.HeapLimit>>20)
	}
	return nil, err
}

// run prepares only the first statement of sqlText on a pooled connection,
// checks it and reads its rows within the limits; a timeout
// > 0 interrupts it then. An interrupted query's error is errTimedOut or
// the context's error.
func (d *DB) run(ctx context.Context, sqlText string, timeout time.Duration) (*Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	c, err := d.conns.get()
	if err != nil {
		return nil, err
	}
	defer d.conns.put(c)
	finish := c.start(ctx, timeout)
	res, err := c.query(sqlText)
	peak, refused := queryMemory(c.slot)
	if peak > trimAfter {
		releaseMemory()
	}
	overSteps, overCPU := c.guard.over_steps != 0, c.guard.over_cpu != 0
	if stopped := finish(); stopped != nil && err != nil && sqliteCode(err) == sqliteInterrupt {
		return nil, stopped
	}
	if (overSteps || overCPU) && err != nil && sqliteCode(err) == sqliteInterrupt {
		switch {
		case ctx.Err() != nil:
			// The caller's context ended too (its callback may not have run
			// yet on a busy machine): the caller's reason is the one it asked for.
			return nil, ctx.Err()
		case overSteps:
			return nil, errTooMuchWork
		default:
			return nil, errCPUTime
		}
	}
	if err != nil && sqliteCode(err) == sqliteNomem && !refused && c.slot > 0 {
		// Not this query's allowance: the process-wide limit.
		err = &sqliteError{code: sqliteNomem, msg: err.Error(), cause: errProcessMemory}
	}
	return res, err
}
