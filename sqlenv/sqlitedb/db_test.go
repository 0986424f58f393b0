package sqlitedb

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// makeDB writes a small database with two related tables and returns its path.
func makeDB(t testing.TB) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "shop.sqlite")
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	stmts := []string{
		`CREATE TABLE customer (id INTEGER PRIMARY KEY, name TEXT NOT NULL, city TEXT)`,
		`CREATE TABLE "order" (id INTEGER PRIMARY KEY, customer_id INTEGER REFERENCES customer(id), total REAL, note BLOB)`,
		`CREATE INDEX order_customer ON "order"(customer_id)`,
		`CREATE VIEW big_orders AS SELECT * FROM "order" WHERE total > 100`,
	}
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	for i := 1; i <= 30; i++ {
		if _, err := db.Exec(`INSERT INTO customer VALUES (?, ?, ?)`, i, "Customer "+string(rune('A'+i%26)), []string{"Oslo", "Lima", "Pune"}[i%3]); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(`INSERT INTO "order" VALUES (?, ?, ?, ?)`, i, i%7+1, float64(i)*12.5, []byte{0xff, byte(i)}); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

func openTest(t testing.TB, limits Limits) (*DB, string) {
	t.Helper()
	path := makeDB(t)
	d, err := Open(path, limits)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d, path
}

func TestSchema(t *testing.T) {
	d, _ := openTest(t, Limits{})
	if got := strings.Join(d.TableNames(), ","); got != "customer,order" {
		t.Fatalf("tables = %s, want customer,order (views excluded)", got)
	}
	o, ok := d.Table("ORDER")
	if !ok {
		t.Fatal("table lookup is not case-insensitive")
	}
	if o.RowCount != 30 || len(o.Columns) != 4 || !o.Columns[0].PrimaryKey || o.Columns[2].Type != "REAL" {
		t.Fatalf("order table = %+v", o)
	}
	if len(o.ForeignKeys) != 1 || o.ForeignKeys[0] != (ForeignKey{"customer_id", "customer", "id"}) {
		t.Fatalf("foreign keys = %+v", o.ForeignKeys)
	}
}

func TestQueryAllowed(t *testing.T) {
	d, _ := openTest(t, Limits{})
	ctx := context.Background()
	for _, q := range []string{
		"SELECT 1",
		"  select count(*) from customer ;  ",
		"SELECT 1; -- trailing comment",
		"WITH c AS (SELECT city FROM customer) SELECT city, count(*) FROM c GROUP BY city",
		"WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM n WHERE x < 10) SELECT sum(x) FROM n",
		"SELECT * FROM big_orders",
		"SELECT upper(name), round(avg(total), 2) FROM customer JOIN \"order\" ON customer.id = customer_id GROUP BY 1",
		"SELECT ';' AS semi, 'it''s' AS q /* ; */",
		"SELECT json_extract('{\"a\": 3}', '$.a'), date('2024-01-31', '+1 day')",
		"SELECT row_number() OVER (ORDER BY id) FROM customer LIMIT 2",
	} {
		if _, err := d.Query(ctx, q); err != nil {
			t.Errorf("%q: %v", q, err)
		}
	}
	res, err := d.Query(ctx, "SELECT id, total, note, NULL FROM \"order\" WHERE id <= 2 ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 2 || res.Rows[0][0] != int64(1) || res.Rows[1][1] != 25.0 || !bytes.Equal(res.Rows[0][2].([]byte), []byte{0xff, 1}) || res.Rows[0][3] != nil {
		t.Fatalf("rows = %#v", res.Rows)
	}
	if strings.Join(res.Columns, ",") != "id,total,note,NULL" {
		t.Fatalf("columns = %v", res.Columns)
	}
}

func TestQueryRefused(t *testing.T) {
	d, path := openTest(t, Limits{})
	ctx := context.Background()
	outside := filepath.Join(t.TempDir(), "copy.sqlite")
	cases := []struct{ sql, want string }{
		{"", "empty query"},
		{"  -- only a comment", "empty query"},
		{"DELETE FROM customer", "only SELECT queries are allowed (got DELETE)"},
		{"INSERT INTO customer VALUES (99, 'x', 'y')", "got INSERT"},
		{"UPDATE customer SET name = 'x'", "got UPDATE"},
		{"DROP TABLE customer", "got DROP"},
		{"VACUUM INTO '" + outside + "'", "got VACUUM"},
		{"ATTACH DATABASE '" + outside + "' AS x", "got ATTACH"},
		{"PRAGMA table_info(customer)", "got PRAGMA"},
		{"CREATE TEMP TABLE t(x)", "got CREATE"},
		{"BEGIN", "got BEGIN"},
		{"EXPLAIN SELECT 1", "got EXPLAIN"},
		{"SELECT 1; SELECT 2", "only one statement is allowed per query (found 2)"},
		{"SELECT 1; DROP TABLE customer", "only one statement"},
		{"WITH x AS (SELECT 1) DELETE FROM customer", "DELETE is not allowed"},
		{"WITH x AS (SELECT 1) INSERT INTO customer SELECT 100, 'a', 'b' FROM x", "INSERT is not allowed"},
		{"SELECT load_extension('/tmp/evil.so')", "function load_extension() is not allowed"},
		{"SELECT fts3_tokenizer('simple')", "function fts3_tokenizer() is not allowed"},
		{"SELECT * FROM pragma_table_info('customer')", "PRAGMA table_info is not allowed"},
		// The schema is discovered with DESCRIBE, never read wholesale.
		{"SELECT * FROM sqlite_master", "reading sqlite_master is not allowed: the schema is discovered with DESCRIBE"},
		{"SELECT sql FROM main.sqlite_schema", "the schema is discovered with DESCRIBE"},
		{"SELECT name FROM SQLITE_TEMP_MASTER", "the schema is discovered with DESCRIBE"},
		{"SELECT * FROM sqlite_temp_schema", "the schema is discovered with DESCRIBE"},
		{"WITH s AS (SELECT sql FROM sqlite_schema) SELECT * FROM s", "the schema is discovered with DESCRIBE"},
		{"SELECT (SELECT group_concat(name) FROM sqlite_master) AS t", "the schema is discovered with DESCRIBE"},
		{"SELECT 1 WHERE EXISTS (SELECT 1 FROM sqlite_master WHERE name = 'customer')", "the schema is discovered with DESCRIBE"},
		{"SELECT name FROM pragma_table_list", "PRAGMA table_list is not allowed"},
		{"SELECT * FROM pragma_index_list('customer')", "PRAGMA index_list is not allowed"},
		{"SELECT * FROM pragma_foreign_key_list('order')", "schema is discovered with DESCRIBE"},
		{"SELECT length(randomblob(900000000))", "string or blob too big"},
		// One matching of a long text against a long pattern is one VM step
		// that neither the step budget nor the timeout stops: refused.
		{"SELECT printf('%.65000c','a') GLOB '*['||printf('%.49000c','b')||']'", "LIKE or GLOB pattern too complex"},
		{"SELECT 'x' LIKE printf('%.1001c','%')", "LIKE or GLOB pattern too complex"},
		{"SELECT * FROM nosuch", "no such table: nosuch"},
		{"SELEC 1", "SELEC is not a SQL statement: did you mean SELECT? Write one SELECT query"},
		{"selct name FROM customer", "SELCT is not a SQL statement: did you mean SELECT?"},
		{"WTIH x AS (SELECT 1) SELECT * FROM x", "WTIH is not a SQL statement: did you mean WITH?"},
		{"SHOW TABLES", "SHOW is not a SQL statement: write one SELECT query"},
		{"SELECT FROM", "syntax error"},
		{"(SELECT 1)", "only SELECT queries are allowed"},
	}
	for _, c := range cases {
		_, err := d.Query(ctx, c.sql)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want it to contain %q", c.sql, err, c.want)
		}
	}
	if _, err := os.Stat(outside); !os.IsNotExist(err) {
		t.Fatalf("a refused statement created %s", outside)
	}
	// The database still has its rows.
	res, err := d.Query(ctx, "SELECT count(*) FROM customer")
	if err != nil || res.Rows[0][0] != int64(30) {
		t.Fatalf("count after refusals: %v %v", res, err)
	}
	_ = path
}

func TestQueryTimeoutInterruptsSQLite(t *testing.T) {
	d, _ := openTest(t, Limits{Timeout: 200 * time.Millisecond})
	// An endless recursive CTE: only sqlite3_interrupt stops it (no rows are
	// produced, so the row cap never triggers).
	_, err := d.Query(context.Background(), "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM n) SELECT count(*) FROM n")
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("err = %v, want ErrTimeout", err)
	}
	if !strings.Contains(err.Error(), "query timed out after 200ms") {
		t.Fatalf("message = %q", err)
	}
	// The connection is usable afterwards.
	if _, err := d.Query(context.Background(), "SELECT 1"); err != nil {
		t.Fatal(err)
	}
}

// TestQueryUntimed: QueryUntimed runs a query that Query stops at the
// wall-clock Timeout, while the limits that do not depend on the machine's
// load (MaxSteps) and the caller's context still stop it.
func TestQueryUntimed(t *testing.T) {
	// About 0.1 s of one core and 3 million steps: 100 times the timeout.
	const slow = "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM n WHERE x < 300000) SELECT count(*) FROM n"
	const endless = "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM n) SELECT count(*) FROM n"
	ctx := context.Background()
	d, _ := openTest(t, Limits{Timeout: time.Millisecond, MaxSteps: 10_000_000})
	if _, err := d.Query(ctx, slow); !errors.Is(err, ErrTimeout) {
		t.Fatalf("Query: err = %v, want ErrTimeout", err)
	}
	res, err := d.QueryUntimed(ctx, slow)
	if err != nil || len(res.Rows) != 1 || res.Rows[0][0] != int64(300000) {
		t.Fatalf("QueryUntimed: %v, %v; want one row of 300000", res, err)
	}
	if _, err := d.QueryUntimed(ctx, endless); !errors.Is(err, ErrTooMuchWork) {
		t.Fatalf("QueryUntimed of an endless query: err = %v, want ErrTooMuchWork", err)
	}
	unbounded, _ := openTest(t, Limits{Timeout: time.Millisecond, MaxSteps: -1})
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := unbounded.QueryUntimed(short, endless); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("QueryUntimed past the context's deadline: err = %v, want context.DeadlineExceeded", err)
	}
	// Refusals are the same as Query's.
	if _, err := d.QueryUntimed(ctx, "DELETE FROM customer"); err == nil || !strings.Contains(err.Error(), "only SELECT") {
		t.Fatalf("QueryUntimed of a DELETE: err = %v, want a refusal", err)
	}
}

func TestQueryCancelled(t *testing.T) {
	d, _ := openTest(t, Limits{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := d.Query(ctx, "SELECT 1"); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

func TestQueryCaps(t *testing.T) {
	d, _ := openTest(t, Limits{MaxRows: 100, MaxBytes: 1 << 20})
	// 30^4 = 810,000 rows: reading stops at MaxRows.
	res, err := d.Query(context.Background(), "SELECT a.id FROM customer a, customer b, customer c, customer d")
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 100 || !res.Truncated {
		t.Fatalf("rows = %d truncated = %v, want 100 true", len(res.Rows), res.Truncated)
	}
	d2, _ := openTest(t, Limits{MaxBytes: 1000})
	res, err = d2.Query(context.Background(), "SELECT printf('%.100c', 'x') FROM customer")
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 10 || !res.Truncated {
		t.Fatalf("rows = %d truncated = %v, want 10 true", len(res.Rows), res.Truncated)
	}
}

func TestTablesRead(t *testing.T) {
	d, _ := openTest(t, Limits{})
	cases := map[string]string{
		"SELECT count(*) FROM customer": "customer",
		`SELECT c.name FROM customer c JOIN "order" o ON o.customer_id = c.id WHERE o.total > 5`: "customer,order",
		`SELECT name FROM customer WHERE id IN (SELECT customer_id FROM "order")`:                "customer,order",
		`SELECT count(*) FROM big_orders`:                                                        "order",
		`SELECT 1`:                                                                               "",
	}
	for q, want := range cases {
		got, err := d.TablesRead(context.Background(), q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		if strings.Join(got, ",") != want {
			t.Errorf("%s: tables %v, want %s", q, got, want)
		}
	}
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := Open(filepath.Join(dir, "missing.sqlite"), Limits{}); err == nil || !strings.Contains(err.Error(), "missing.sqlite does not exist") {
		t.Fatalf("missing file: %v", err)
	}
	bad := filepath.Join(dir, "bad.sqlite")
	os.WriteFile(bad, []byte("not a database at all, just text"), 0o644)
	if _, err := Open(bad, Limits{}); err == nil || !strings.Contains(err.Error(), "bad.sqlite is not a SQLite database") {
		t.Fatalf("bad file: %v", err)
	}
}

func TestScanStatements(t *testing.T) {
	cases := map[string][]string{
		"SELECT 1":                {"SELECT"},
		"select 1; select 2;":     {"SELECT", "SELECT"},
		"SELECT ';'":              {"SELECT"},
		`SELECT "a;b" FROM [x;y]`: {"SELECT"},
		"SELECT 1 -- ; drop\n":    {"SELECT"},
		"/* ; */ WITH x AS (SELECT 1) SELECT * FROM x": {"WITH"},
		";;;":                      nil,
		"'unterminated; DROP":      {""},
		"SELECT 'it''s;' ; DELETE": {"SELECT", "DELETE"},
		"SELECT `a;`; VACUUM":      {"SELECT", "VACUUM"},
	}
	for in, want := range cases {
		got := scanStatements(in)
		var kws []string
		for _, s := range got {
			kws = append(kws, s.keyword)
		}
		if strings.Join(kws, ",") != strings.Join(want, ",") || len(kws) != len(want) {
			t.Errorf("%q: %v, want %v", in, kws, want)
		}
	}
}

func TestDeclaredDateAndBooleanColumnsKeepSQLiteValues(t *testing.T) {
	path := filepath.Join(t.TempDir(), "dates.sqlite")
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{
		`CREATE TABLE ev (id INTEGER PRIMARY KEY, day DATE, at DATETIME, ts TIMESTAMP, ok BOOLEAN, note TEXT)`,
		`INSERT INTO ev VALUES (1, '2021-03-04', '2021-03-04 10:11:12', 1614852672, 1, 'a'), (2, 'not a date', '2020-01-01T00:00:00Z', 'x', 0, 'b')`,
	} {
		if _, err := db.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	d, err := Open(path, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	res, err := d.Query(context.Background(), "WITH x AS (SELECT 1) SELECT day, at, ts, ok, note FROM ev ORDER BY id DESC; -- comment")
	if err != nil {
		t.Fatal(err)
	}
	want := [][]any{
		{"not a date", "2020-01-01T00:00:00Z", "x", int64(0), "b"},
		{"2021-03-04", "2021-03-04 10:11:12", int64(1614852672), int64(1), "a"},
	}
	if strings.Join(res.Columns, ",") != "day,at,ts,ok,note" {
		t.Fatalf("columns %v", res.Columns)
	}
	for i := range want {
		for j := range want[i] {
			if res.Rows[i][j] != want[i][j] {
				t.Fatalf("row %d col %d = %#v, want %#v", i, j, res.Rows[i][j], want[i][j])
			}
		}
	}
}

// TestTimeoutThenReuse: a query past the timeout is interrupted with
// ErrTimeout; the connections stay usable (the next queries, fast ones, are
// not hit by a stale timer); a query cancelled by its caller reports the
// caller's cancellation, not a timeout.
func TestTimeoutThenReuse(t *testing.T) {
	d, _ := openTest(t, Limits{Timeout: 50 * time.Millisecond})
	ctx := context.Background()
	endless := "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM n) SELECT max(x) FROM n"
	for i := 0; i < 3; i++ {
		start := time.Now()
		if _, err := d.Query(ctx, endless); !errors.Is(err, ErrTimeout) {
			t.Fatalf("round %d: endless query: %v", i, err)
		}
		if took := time.Since(start); took > time.Second {
			t.Fatalf("round %d: the timeout took %v", i, took)
		}
		for j := 0; j < 20; j++ {
			res, err := d.Query(ctx, "SELECT count(*) FROM customer")
			if err != nil || res.Rows[0][0] != int64(30) {
				t.Fatalf("round %d: query after a timeout: %v %v", i, res, err)
			}
		}
		time.Sleep(60 * time.Millisecond) // past a stale timer, if one were left armed
		if _, err := d.Query(ctx, "SELECT 1"); err != nil {
			t.Fatalf("round %d: query after the timeout's period: %v", i, err)
		}
	}
	cctx, cancel := context.WithCancel(ctx)
	time.AfterFunc(10*time.Millisecond, cancel)
	d2, _ := openTest(t, Limits{Timeout: 5 * time.Second})
	if _, err := d2.Query(cctx, endless); !errors.Is(err, context.Canceled) || errors.Is(err, ErrTimeout) {
		t.Fatalf("cancelled by the caller: %v", err)
	}
}

// Parameters are refused (nothing would bind them: they ran as NULL), and a
// LIMIT or OFFSET SQLite cannot hold says what it takes.
func TestParametersAndLimitsExplained(t *testing.T) {
	d, _ := openTest(t, Limits{})
	ctx := context.Background()
	for q, want := range map[string]string{
		"SELECT ?": "parameter (?)",
		"SELECT name FROM customer WHERE id = :id": "parameter (:id)",
		"SELECT @y, $z":                               "parameter (@y)",
		"SELECT ?7":                                   "parameter (?7)",
		"SELECT 1 LIMIT 9223372036854775808":          "LIMIT and OFFSET take whole numbers",
		"SELECT 1 LIMIT 1 OFFSET 9223372036854775808": "LIMIT and OFFSET take whole numbers",
		"SELECT 1 LIMIT 1.5":                          "LIMIT and OFFSET take whole numbers",
	} {
		_, err := d.Query(ctx, q)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", q, err, want)
		}
	}
	if res, err := d.Query(ctx, "SELECT '?', ':x', 'a@b' LIMIT 9223372036854775807"); err != nil || len(res.Rows) != 1 {
		t.Errorf("question marks in strings and the largest LIMIT: %v %v", res, err)
	}
}

// A query over its step budget fails with ErrTooMuchWork, the same way alone
// and while other goroutines keep every core busy; a query within it runs.
func TestStepBudgetIsTheSameUnderLoad(t *testing.T) {
	d, _ := openTest(t, Limits{MaxSteps: 20_000_000, Timeout: 30 * time.Second})
	ctx := context.Background()
	heavy := "WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM r WHERE x < 5000000) SELECT max(x) FROM r"
	light := "WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM r WHERE x < 100000) SELECT max(x) FROM r"
	check := func(when string) {
		if _, err := d.Query(ctx, heavy); !errors.Is(err, ErrTooMuchWork) || !strings.Contains(err.Error(), "20 million steps") {
			t.Errorf("%s: heavy query: %v", when, err)
		}
		if res, err := d.Query(ctx, light); err != nil || res.Rows[0][0] != int64(100000) {
			t.Errorf("%s: light query: %v %v", when, res, err)
		}
	}
	check("alone")
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 2 * runtime.NumCPU() {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
					d.Query(ctx, "WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM r WHERE x < 200000) SELECT sum(x) FROM r")
				}
			}
		})
	}
	for range 3 {
		check("under load")
	}
	close(stop)
	wg.Wait()
}

// TestTimeoutIsCPUTime: Limits.Timeout counts the query's own CPU time, so a
// query gets the same outcome alone and on a machine busy with other work
// (here 4 busy-looping processes beside 2 test cores): one that needs a
// sixth of its budget succeeds both times, though under load its wall time
// may pass the budget; one that needs several times the budget fails both times —
// alone saying it ran out of CPU time, loaded possibly stopped by the
// wall-clock backstop first.
func TestTimeoutIsCPUTime(t *testing.T) {
	if testing.Short() {
		t.Skip("loads the machine for a few seconds")
	}
	// 1 s of CPU: the query that fits needs ~0.15 s, so it succeeds as long
	// as the machine gives it 5 % of a core before the 3 s backstop — CI
	// runs this beside the race-detector tests of other packages, and here
	// beside 4 busy loops as well.
	const budget = time.Second
	// About 0.1 s of one core per 300,000 rows (TestQueryUntimed).
	const fits = "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM n WHERE x < 500000) SELECT count(*) FROM n"
	// Several seconds of CPU on any machine (6,000,000 rows fit in 1 s on a fast one).
	const over = "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM n WHERE x < 40000000) SELECT count(*) FROM n"
	d, _ := openTest(t, Limits{Timeout: budget, MaxSteps: -1})
	ctx := context.Background()
	run := func(label string, loaded bool) {
		start := time.Now()
		res, err := d.Query(ctx, fits)
		wall := time.Since(start)
		if err != nil || res.Rows[0][0] != int64(500000) {
			t.Errorf("%s: the query within its CPU budget: %v, %v (wall %v)", label, res, err, wall)
		}
		_, err = d.Query(ctx, over)
		// Loaded, the query over budget may be starved past the wall-clock
		// backstop before it has used its second: a timeout either way.
		if !errors.Is(err, ErrTimeout) || !loaded && !strings.Contains(err.Error(), "of CPU time") {
			t.Errorf("%s: the query over its CPU budget: %v, want ErrTimeout for CPU time", label, err)
		}
		t.Logf("%s: the query within budget took %v of wall time (budget %v of CPU)", label, wall.Round(time.Millisecond), budget)
	}
	run("alone", false)
	var busy []*exec.Cmd
	for range 4 {
		cmd := exec.Command("sh", "-c", "while :; do :; done")
		if err := cmd.Start(); err != nil {
			t.Skipf("no shell to load the machine: %v", err)
		}
		busy = append(busy, cmd)
	}
	defer func() {
		for _, cmd := range busy {
			cmd.Process.Kill()
			cmd.Wait()
		}
	}()
	time.Sleep(100 * time.Millisecond)
	run("beside 4 busy processes", true)
}
