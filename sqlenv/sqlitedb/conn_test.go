package sqlitedb

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestValuesAsSQLiteHoldsThem: every storage class comes back as its Go
// type, NULL as nil, text and blobs copied out of SQLite's buffers (they
// stay intact after later queries reuse the connection), empty text and
// blobs distinct from NULL.
func TestValuesAsSQLiteHoldsThem(t *testing.T) {
	d, _ := openTest(t, Limits{})
	ctx := context.Background()
	res, err := d.Query(ctx, `SELECT 42, -1.5, 'héllo', x'00ff10', NULL, '', x'', 9223372036854775807, 'a'||char(0)||'b'`)
	if err != nil {
		t.Fatal(err)
	}
	want := []any{int64(42), -1.5, "héllo", []byte{0, 0xff, 0x10}, nil, "", []byte{}, int64(9223372036854775807), "a\x00b"}
	row := res.Rows[0]
	if len(row) != len(want) {
		t.Fatalf("row = %#v", row)
	}
	for i := range want {
		if fmt.Sprintf("%#v", row[i]) != fmt.Sprintf("%#v", want[i]) {
			t.Errorf("column %d (%s) = %#v, want %#v", i, res.Columns[i], row[i], want[i])
		}
	}
	for i := 0; i < 50; i++ { // reuse the connection: the values above must not change
		if _, err := d.Query(ctx, `SELECT printf('%.1000c', 'z'), randomblob(100)`); err != nil {
			t.Fatal(err)
		}
	}
	if row[2] != "héllo" || string(row[3].([]byte)) != "\x00\xff\x10" {
		t.Fatalf("values changed after the connection was reused: %#v", row)
	}
	if got := strings.Join(res.Columns, ","); got != "42,-1.5,'héllo',x'00ff10',NULL,'',x'',9223372036854775807,'a'||char(0)||'b'" {
		t.Errorf("columns = %s", got)
	}
}

// TestConcurrentQueriesTimeoutsAndClose runs queries from many goroutines,
// some timing out and some cancelled by their callers, and checks every
// result; closing the database while a query runs lets it end, and later
// queries fail with an error naming the database.
func TestConcurrentQueriesTimeoutsAndClose(t *testing.T) {
	d, path := openTest(t, Limits{Timeout: 100 * time.Millisecond})
	ctx := context.Background()
	endless := "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM n) SELECT max(x) FROM n"
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 40; i++ {
				switch (g + i) % 10 {
				case 0:
					if _, err := d.Query(ctx, endless); !errors.Is(err, ErrTimeout) {
						errs <- fmt.Errorf("goroutine %d: endless query: %v", g, err)
					}
				case 1:
					cctx, cancel := context.WithTimeout(ctx, 5*time.Millisecond)
					_, err := d.Query(cctx, endless)
					cancel()
					if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ErrTimeout) {
						errs <- fmt.Errorf("goroutine %d: cancelled query: %v", g, err)
					}
				default:
					res, err := d.Query(ctx, fmt.Sprintf("SELECT count(*), %d FROM customer WHERE id <= %d", i, i))
					if err != nil || res.Rows[0][0] != int64(min(i, 30)) || res.Rows[0][1] != int64(i) {
						errs <- fmt.Errorf("goroutine %d query %d: %v %v", g, i, res, err)
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}

	done := make(chan error)
	go func() {
		_, err := d.Query(ctx, endless)
		done <- err
	}()
	time.Sleep(20 * time.Millisecond)
	d.Close()
	if err := <-done; !errors.Is(err, ErrTimeout) {
		t.Fatalf("query running at Close: %v", err)
	}
	if _, err := d.Query(ctx, "SELECT 1"); err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("query after Close: %v, want an error naming %s", err, path)
	}
}

// TestPoolClosesIdleConnections: connections unused for maxIdleTime are
// closed when the pool is next used; at most maxIdle are kept.
func TestPoolClosesIdleConnections(t *testing.T) {
	d, _ := openTest(t, Limits{})
	p := d.conns
	var conns []*conn
	for i := 0; i < p.maxIdle+2; i++ {
		c, err := p.get()
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	for _, c := range conns {
		p.put(c)
	}
	if len(p.idle) != p.maxIdle {
		t.Fatalf("%d idle connections, want maxIdle = %d", len(p.idle), p.maxIdle)
	}
	p.maxIdleTime = time.Millisecond
	time.Sleep(5 * time.Millisecond)
	c, err := p.get()
	if err != nil {
		t.Fatal(err)
	}
	p.put(c)
	if len(p.idle) != 1 || p.idle[0] != c {
		t.Fatalf("%d idle connections after maxIdleTime, want only the one just used", len(p.idle))
	}
	if _, err := d.Query(context.Background(), "SELECT 1"); err != nil {
		t.Fatal(err)
	}
}

// An interrupt that arrives after a query is marked running but before
// SQLite starts its statement (a caller's context that ends at once, a
// timeout on a loaded machine) must still stop it: SQLite clears
// sqlite3_interrupt's flag when a statement starts, so the connection's own
// stop flag, read by the progress handler, carries it.
func TestInterruptBeforeTheStatementStarts(t *testing.T) {
	d, _ := openTest(t, Limits{})
	c, err := d.conns.get()
	if err != nil {
		t.Fatal(err)
	}
	defer d.conns.put(c)
	endless := "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM n) SELECT max(x) FROM n"
	for i := 0; i < 3; i++ {
		finish := c.start(context.Background(), 0)
		c.interrupt(errTimedOut)
		done := make(chan error, 1)
		go func() {
			_, err := c.query(endless)
			done <- err
		}()
		select {
		case err := <-done:
			if sqliteCode(err) != sqliteInterrupt {
				t.Fatalf("round %d: %v, want SQLITE_INTERRUPT", i, err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("round %d: the query ran on: the interrupt was lost", i)
		}
		if why := finish(); why != errTimedOut {
			t.Fatalf("round %d: finish() = %v", i, why)
		}
		// The next query on the connection is not stopped by the old flag.
		finish = c.start(context.Background(), 0)
		res, err := c.query("SELECT count(*) FROM customer")
		finish()
		if err != nil || res.Rows[0][0] != int64(30) {
			t.Fatalf("round %d: the next query: %v %v", i, res, err)
		}
	}
}

// starvedContext ends at a deadline (Err) but its Done channel never
// closes: a caller's context whose cancellation callback has not run yet,
// as on a machine too busy to schedule it before the query's own timeout.
type starvedContext struct {
	context.Context
	deadline time.Time
	never    chan struct{}
}

func (c *starvedContext) Done() <-chan struct{} { return c.never }

func (c *starvedContext) Err() error {
	if time.Now().Before(c.deadline) {
		return nil
	}
	return context.DeadlineExceeded
}

// TestCallersCancellationWinsOverTimeout: a query interrupted by its timeout
// after its caller's context has ended reports the caller's reason, not
// ErrTimeout, even when the context's callback came too late to stop it.
func TestCallersCancellationWinsOverTimeout(t *testing.T) {
	d, _ := openTest(t, Limits{Timeout: 50 * time.Millisecond})
	endless := "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM n) SELECT max(x) FROM n"
	ctx := &starvedContext{Context: context.Background(), deadline: time.Now().Add(5 * time.Millisecond), never: make(chan struct{})}
	if _, err := d.Query(ctx, endless); !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ErrTimeout) {
		t.Fatalf("error %v, want the caller's context.DeadlineExceeded", err)
	}
	if _, err := d.Query(context.Background(), endless); !errors.Is(err, ErrTimeout) {
		t.Fatalf("a caller without a deadline: %v, want ErrTimeout", err)
	}
}
