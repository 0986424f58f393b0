package server

import (
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gosqlenv/gosqlenv/sqlenv"
)

// memoryHostileQueries are QUERY arguments that try to hold as much memory
// as the limits allow (each fails, or is cut, within a few seconds).
func memoryHostileQueries() []string {
	wide := func(expr string, n int) string {
		cols := make([]string, n)
		for i := range cols {
			cols[i] = fmt.Sprintf("%s AS c%d", expr, i)
		}
		return "SELECT " + strings.Join(cols, ", ")
	}
	rows := func(n int) string {
		return "WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM r WHERE x < " + strconv.Itoa(n) + ") "
	}
	return []string{
		wide("zeroblob(60000)", 250),
		wide("randomblob(60000)", 250),
		wide("printf('%.*c', 60000, 'x')", 250),
		rows(200000) + "SELECT count(DISTINCT hex(randomblob(100)) || x) FROM r",
		rows(200000) + "SELECT max(b) FROM (SELECT randomblob(200) AS b FROM r ORDER BY random() LIMIT 150000)",
		rows(100000) + "SELECT zeroblob(60000) FROM r",
		rows(200000) + "SELECT length(group_concat(hex(randomblob(64)))) FROM r",
		"WITH RECURSIVE r(s) AS (SELECT 'x' UNION ALL SELECT s || s FROM r) SELECT length(s) FROM r",
		rows(300000) + "SELECT x % 1000, count(DISTINCT x || randomblob(50)) FROM r GROUP BY 1",
	}
}

// vmRSS is the process's resident set size now, in bytes.
func vmRSS(tb testing.TB) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		tb.Skip("no /proc/self/status")
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	tb.Skip("no VmRSS")
	return 0
}

// A server's memory comes back after hostile load: 4 clients send
// memory-hostile queries (GOSQLENV_HOSTILE_LOAD of them in all, default
// 36; BENCHMARKS.md reports 1,000), and the process's resident memory once
// they are done — the server, its sessions and this test together — stays
// under 150 MB.
func TestServerMemoryAfterHostileLoad(t *testing.T) {
	total := 36
	if v, err := strconv.Atoi(os.Getenv("GOSQLENV_HOSTILE_LOAD")); err == nil && v > 0 {
		total = v
	}
	_, hs := testServer(t, Config{Env: sqlenv.Config{StepBudget: 1 << 20}})
	qs, _ := bundledData(t)
	hostile := memoryHostileQueries()
	const clients = 4
	settle := func() int64 {
		runtime.GC()
		debug.FreeOSMemory()
		time.Sleep(200 * time.Millisecond)
		return vmRSS(t)
	}
	before := settle()
	start := time.Now()
	var wg sync.WaitGroup
	var mu sync.Mutex
	outcomes := map[string]int{}
	errs := make(chan error, clients)
	for c := range clients {
		wg.Go(func() {
			cl, err := Dial(ctx, hs.URL, testClientOptions(t))
			if err != nil {
				errs <- err
				return
			}
			defer cl.Close()
			if _, err := cl.Reset(ctx, sqlenv.ResetOptions{QuestionID: qs[c].QuestionID}); err != nil {
				errs <- err
				return
			}
			for i := c; i < total; i += clients {
				qstart := time.Now()
				obs, err := cl.Step(ctx, sqlenv.Action{ActionType: sqlenv.Query, Argument: hostile[i%len(hostile)]})
				if testing.Verbose() && i < len(hostile) {
					t.Logf("query %d: %v %.80s", i, time.Since(qstart).Round(time.Millisecond), obs.Error)
				}
				if err != nil {
					errs <- fmt.Errorf("client %d query %d: %w", c, i, err)
					return
				}
				outcome := "result"
				if obs.Error != "" {
					outcome = obs.Error
					if j := strings.IndexAny(outcome, ":("); j > 0 {
						outcome = outcome[:j]
					}
				}
				mu.Lock()
				outcomes[outcome]++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	took := time.Since(start)
	after := settle()
	t.Logf("%d hostile queries from %d clients in %v; resident memory %.0f MB before, %.0f MB after; outcomes %v",
		total, clients, took.Round(time.Millisecond), float64(before)/1e6, float64(after)/1e6, outcomes)
	if after > 150e6 {
		t.Errorf("resident memory after the load: %.0f MB (limit 150 MB)", float64(after)/1e6)
	}
}
