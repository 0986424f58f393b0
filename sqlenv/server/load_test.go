package server

import (
	"fmt"
	"net/http/httptest"
	"os"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gosqlenv/gosqlenv/sqlenv"
	"github.com/gosqlenv/gosqlenv/sqlenv/client"
)

// raceEnabled is set by race_test.go under -race.
var raceEnabled bool

// TestLoad runs 200 concurrent WebSocket sessions (50 with -short or -race)
// spread over two servers by a Pool; each plays oracle episodes to the end,
// and every episode report must equal the in-process one exactly. After
// everything is closed no goroutine nor file descriptor is left behind.
func TestLoad(t *testing.T) {
	sessions, perSession := 200, 0 // 0: all 870 questions between them
	if testing.Short() || raceEnabled {
		sessions, perSession = 50, 3
	}
	qs, dbs := bundledData(t)
	oracle := sqlenv.NewOraclePolicy(qs)
	var plays []sqlenv.ResetOptions
	if perSession == 0 {
		for _, q := range qs {
			plays = append(plays, sqlenv.ResetOptions{QuestionID: q.QuestionID, EpisodeID: "load-" + q.QuestionID})
		}
	} else {
		for i := range sessions * perSession {
			q := qs[(i*7)%len(qs)]
			plays = append(plays, sqlenv.ResetOptions{QuestionID: q.QuestionID, EpisodeID: "load-" + q.QuestionID})
		}
	}
	// The expected reports, computed in process by as many goroutines as
	// there will be sessions.
	want := make([]sqlenv.EpisodeReport, len(plays))
	var ref sync.WaitGroup
	for i := range sessions {
		ref.Go(func() {
			env, err := sqlenv.New(sqlenv.Config{Questions: qs, Databases: dbs})
			if err != nil {
				panic(err)
			}
			defer env.Close()
			for j := i; j < len(plays); j += sessions {
				want[j] = sqlenv.PlayEpisode(ctx, env, oracle, plays[j])
			}
		})
	}
	ref.Wait()
	for _, w := range want {
		if w.Err != "" || !w.Correct {
			t.Fatalf("in process: %+v", w)
		}
	}

	goroutines, fds := countGoroutines(), openFDs(t)
	start := time.Now()
	var servers []*Server
	var https []*httptest.Server
	var addrs []string
	for range 2 {
		s, err := New(Config{Env: sqlenv.Config{Questions: qs, Databases: dbs}, MaxSessions: sessions, Logger: quietLogger()})
		if err != nil {
			t.Fatal(err)
		}
		hs := httptest.NewServer(s)
		servers, https, addrs = append(servers, s), append(https, hs), append(addrs, hs.URL)
	}
	opts := testClientOptions(t)
	pool, err := client.NewPool(addrs, opts)
	if err != nil {
		t.Fatal(err)
	}

	var opened, wg sync.WaitGroup
	opened.Add(sessions)
	errs := make(chan string, len(plays)+sessions)
	for i := range sessions {
		wg.Go(func() {
			env, err := pool.Open(ctx)
			opened.Done()
			if err != nil {
				errs <- err.Error()
				return
			}
			defer env.Close()
			opened.Wait() // all sessions are open at once
			for j := i; j < len(plays); j += sessions {
				got := sqlenv.PlayEpisode(ctx, env, oracle, plays[j])
				if !reflect.DeepEqual(got, want[j]) {
					errs <- fmt.Sprintf("session %d, %s:\n got %+v\nwant %+v", i, plays[j].QuestionID, got, want[j])
				}
			}
		})
	}
	opened.Wait()
	for i, s := range servers {
		if n := s.reg.counts()[transportWS]; n != sessions/2 {
			t.Errorf("server %d has %d sessions, want %d (round robin)", i, n, sessions/2)
		}
	}
	wg.Wait()
	close(errs)
	n := 0
	for e := range errs {
		if n++; n <= 3 {
			t.Error(e)
		}
	}
	if n > 3 {
		t.Errorf("... %d mismatches in all", n)
	}
	t.Logf("%d sessions played %d episodes in %v", sessions, len(plays), time.Since(start))

	for i := range servers {
		https[i].Close()
		servers[i].Close()
	}
	opts.HTTPClient.CloseIdleConnections()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		g, f := countGoroutines(), openFDs(t)
		if g <= goroutines && f <= fds {
			break
		}
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("leak: %d goroutines (before: %d), %d open files (before: %d)\n%s",
				g, goroutines, f, fds, buf[:runtime.Stack(buf, true)])
		}
	}
}

// countGoroutines counts the goroutines, leaving out database/sql's
// connection pools (shared by the tests; their size follows the load).
func countGoroutines() int {
	buf := make([]byte, 4<<20)
	n := 0
	for _, g := range strings.Split(string(buf[:runtime.Stack(buf, true)]), "\n\n") {
		if !strings.Contains(g, "database/sql.") {
			n++
		}
	}
	return n
}

// openFDs counts the process's open file descriptors, leaving out the
// SQLite files of the shared databases' pooled connections.
func openFDs(tb testing.TB) int {
	tb.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		tb.Skip("no /proc/self/fd:", err)
	}
	n := 0
	for _, e := range ents {
		if target, _ := os.Readlink("/proc/self/fd/" + e.Name()); !strings.HasSuffix(target, ".sqlite") {
			n++
		}
	}
	return n
}
