package server

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gosqlenv/gosqlenv/sqlenv"
	"github.com/gosqlenv/gosqlenv/sqlenv/client"
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

// rssOf is the resident set size of process pid now, in bytes.
func rssOf(tb testing.TB, pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		tb.Skipf("no /proc/%d/status", pid)
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

// A server's memory comes back after hostile load. The server runs in a
// process of its own (this test binary, as GOSQLENV_MEMORY_SERVER), as
// sqlenv-server would: nothing forces a garbage collection there. 4 clients
// send memory-hostile queries (GOSQLENV_HOSTILE_LOAD of them in all,
// default 36; BENCHMARKS.md reports 1,000); the server's resident memory 10
// s after the load stays under 150 MB.
func TestServerMemoryAfterHostileLoad(t *testing.T) {
	if os.Getenv("GOSQLENV_MEMORY_SERVER") != "" {
		serveUntilStdinCloses(t)
		return
	}
	if raceEnabled {
		t.Skip("the race detector multiplies a process's memory")
	}
	total := 36
	if v, err := strconv.Atoi(os.Getenv("GOSQLENV_HOSTILE_LOAD")); err == nil && v > 0 {
		total = v
	}
	qs, _ := bundledData(t)
	url, pid := startMemoryServer(t)
	hostile := memoryHostileQueries()
	const clients = 4
	before := rssOf(t, pid)
	start := time.Now()
	var wg sync.WaitGroup
	var mu sync.Mutex
	outcomes := map[string]int{}
	var peak atomic.Int64
	errs := make(chan error, clients)
	for c := range clients {
		wg.Go(func() {
			cl, err := dialEpisode(t, url, qs[c].QuestionID)
			if err != nil {
				errs <- err
				return
			}
			defer cl.Close()
			for i := c; i < total; i += clients {
				obs, err := cl.Step(ctx, sqlenv.Action{ActionType: sqlenv.Query, Argument: hostile[i%len(hostile)]})
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
				if r := rssOf(t, pid); r > peak.Load() {
					peak.Store(r)
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
	atEnd := rssOf(t, pid)
	time.Sleep(10 * time.Second)
	after := rssOf(t, pid)
	t.Logf("%d hostile queries from %d clients in %v; server resident memory %.0f MB before, peak %.0f MB, %.0f MB at the end, %.0f MB 10 s later; outcomes %v",
		total, clients, took.Round(time.Millisecond), float64(before)/1e6, float64(peak.Load())/1e6, float64(atEnd)/1e6, float64(after)/1e6, outcomes)
	if after > 150e6 {
		t.Errorf("the server's resident memory 10 s after the load: %.0f MB (limit 150 MB)", float64(after)/1e6)
	}
}

// startMemoryServer starts this test binary as a server process of its own
// (GOSQLENV_MEMORY_SERVER: serveUntilStdinCloses) and returns its URL and
// process id; the process ends with the test.
func startMemoryServer(t *testing.T) (url string, pid int) {
	srv := exec.Command(os.Args[0], "-test.run=^TestServerMemoryAfterHostileLoad$", "-test.count=1")
	srv.Env = append(os.Environ(), "GOSQLENV_MEMORY_SERVER=1")
	stdin, err := srv.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := srv.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	srv.Stderr = os.Stderr
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); srv.Wait() })
	addr, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("the server process: %v", err)
	}
	return "http://" + strings.TrimSpace(strings.TrimPrefix(addr, "listening on ")), srv.Process.Pid
}

// TestServerMemoryManyLargeResults: 48 sessions at once, each reading a
// result of 8 MiB (the most a query reads), do not make the server hold 48
// results: QUERY steps run MaxRunningQueries at a time (2 × GOMAXPROCS, at
// least 4), so the server's resident memory peaks under 64 MB + 24 MB per
// running query (measured on 2 cores: 29 MB idle, 109-116 MB peak with 4
// running, ~22 MB each; 245-316 MB with the cap lifted, and 1,058 MB in the
// issue's check); and every session gets its result.
func TestServerMemoryManyLargeResults(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector multiplies a process's memory")
	}
	if testing.Short() {
		t.Skip("48 results of 8 MiB: -short skips it")
	}
	qs, _ := bundledData(t)
	url, pid := startMemoryServer(t)
	const sessions = 48
	// 20,000 rows of 900 characters: reading stops at the 8 MiB limit (about
	// 9,300 rows), before the 10,000-row one.
	wide := "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x < 20000) SELECT printf('%.900c', 'x') FROM c"
	var peak atomic.Int64
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-done:
				return
			case <-time.After(5 * time.Millisecond):
				if r := rssOf(t, pid); r > peak.Load() {
					peak.Store(r)
				}
			}
		}
	}()
	before := rssOf(t, pid)
	start := time.Now()
	var wg sync.WaitGroup
	var results atomic.Int32
	errs := make(chan error, sessions)
	for i := range sessions {
		wg.Go(func() {
			cl, err := dialEpisode(t, url, qs[i%len(qs)].QuestionID)
			if err != nil {
				errs <- err
				return
			}
			defer cl.Close()
			obs, err := cl.Step(ctx, sqlenv.Action{ActionType: sqlenv.Query, Argument: wide})
			if err != nil {
				errs <- fmt.Errorf("session %d: %w", i, err)
				return
			}
			if obs.Error == "" && strings.Contains(obs.Result, "too large to read in full") {
				results.Add(1)
			} else {
				errs <- fmt.Errorf("session %d: %q %q", i, obs.Error, obs.Result[:min(len(obs.Result), 200)])
			}
		})
	}
	wg.Wait()
	close(done)
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	t.Logf("%d sessions read an 8 MiB result each in %v; server resident memory %.0f MB before, peak %.0f MB (GOMAXPROCS %d)",
		results.Load(), time.Since(start).Round(time.Millisecond), float64(before)/1e6, float64(peak.Load())/1e6, runtime.GOMAXPROCS(0))
	running := max(4, 2*runtime.GOMAXPROCS(0)) // the server's MaxRunningQueries
	if limit := int64(64e6 + 24e6*running); peak.Load() > limit {
		t.Errorf("the server's resident memory peaked at %.0f MB (limit %.0f MB for %d running queries)", float64(peak.Load())/1e6, float64(limit)/1e6, running)
	}
}

// dialEpisode opens a WebSocket session on the server at url and starts an
// episode of the question; the caller closes the session.
func dialEpisode(t *testing.T, url, questionID string) (*client.Session, error) {
	cl, err := client.Dial(ctx, url, testClientOptions(t))
	if err != nil {
		return nil, err
	}
	if _, err := cl.Reset(ctx, sqlenv.ResetOptions{QuestionID: questionID}); err != nil {
		cl.Close()
		return nil, err
	}
	return cl, nil
}

// serveUntilStdinCloses is the server process of
// TestServerMemoryAfterHostileLoad, set up as sqlenv-server sets itself up
// (LimitMemory): it prints its address, serves, and exits when its standard
// input closes.
func serveUntilStdinCloses(t *testing.T) {
	LimitMemory() // as sqlenv-server does
	qs, dbs := bundledData(t)
	s, err := New(Config{Env: sqlenv.Config{Questions: qs, Databases: dbs, StepBudget: 1 << 20}, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: s}
	go hs.Serve(l)
	defer hs.Close()
	fmt.Printf("listening on %s\n", l.Addr())
	io.Copy(io.Discard, os.Stdin)
}
