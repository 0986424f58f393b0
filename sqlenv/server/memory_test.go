package server

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
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
	defer func() { stdin.Close(); srv.Wait() }()
	addr, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("the server process: %v", err)
	}
	url := "http://" + strings.TrimSpace(strings.TrimPrefix(addr, "listening on "))
	pid := srv.Process.Pid
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
			cl, err := client.Dial(ctx, url, testClientOptions(t))
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
