package sqlitedb

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// heavyQuery keeps 200,000 distinct 200-byte strings in memory: over a 16 MiB allowance.
const heavyQuery = "WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM r WHERE x < 200000) SELECT count(DISTINCT hex(randomblob(100)) || x) FROM r"

// One session's memory-heavy queries never make another session's cheap
// query fail: each query is held to its own allowance (HeapLimit), and a
// heavy query fails the same way alone and beside others.
func TestQueryMemoryIsPerQuery(t *testing.T) {
	d, _ := openTest(t, Limits{HeapLimit: 16 << 20})
	ctx := context.Background()
	_, alone := d.Query(ctx, heavyQuery)
	if alone == nil || !strings.Contains(alone.Error(), "needs more than 16 MiB") {
		t.Fatalf("heavy query alone: %v", alone)
	}
	cheap := []struct {
		sql  string
		want string
	}{
		{`SELECT name FROM customer ORDER BY city DESC, name LIMIT 1`, "[[Customer Z]]"},
		{`SELECT city, count(*), sum(total) FROM customer JOIN "order" ON customer.id = "order".customer_id GROUP BY city ORDER BY city`, ""},
		{`SELECT DISTINCT city FROM customer ORDER BY 1`, "[[Lima] [Oslo] [Pune]]"},
	}
	wantRows := make([]string, len(cheap))
	for i, q := range cheap {
		res, err := d.Query(ctx, q.sql)
		if err != nil {
			t.Fatal(err)
		}
		wantRows[i] = fmt.Sprint(res.Rows)
	}
	stop := make(chan struct{})
	var heavyRuns atomic.Int64
	var wg sync.WaitGroup
	heavyErrs := make(chan error, 16)
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				_, err := d.Query(ctx, heavyQuery)
				heavyRuns.Add(1)
				if err == nil || err.Error() != alone.Error() {
					select {
					case heavyErrs <- fmt.Errorf("heavy query under load: %v (alone: %v)", err, alone):
					default:
					}
				}
			}
		}()
	}
	failures, n := 0, 0
	// At least 10,000 cheap queries, and as many as run beside 10 heavy ones.
	for i := 0; i < 10000 || heavyRuns.Load() < 10; i++ {
		n++
		q := cheap[i%len(cheap)]
		res, err := d.Query(ctx, q.sql)
		if err != nil || fmt.Sprint(res.Rows) != wantRows[i%len(cheap)] {
			failures++
			if failures <= 3 {
				t.Errorf("cheap query %d beside heavy ones: %v", i, err)
			}
		}
	}
	close(stop)
	wg.Wait()
	close(heavyErrs)
	for err := range heavyErrs {
		t.Error(err)
	}
	t.Logf("%d cheap queries beside %d heavy ones: %d failed", n, heavyRuns.Load(), failures)
	if failures > 0 {
		t.Errorf("%d of %d cheap queries failed beside heavy ones", failures, n)
	}
}

// A query refused memory by the process-wide backstop, not its own
// allowance, is told so.
func TestProcessMemoryErrorNamesTheCause(t *testing.T) {
	err := &sqliteError{code: sqliteNomem, msg: "out of memory", cause: errProcessMemory}
	if !errors.Is(err, errProcessMemory) {
		t.Fatal("errors.Is")
	}
}
