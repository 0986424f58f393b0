package sqlenv

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gosqlenv/gosqlenv/sqlenv/internal/dirsnap"
	"github.com/gosqlenv/gosqlenv/sqlenv/sqlitedb"
)

// hostileQueries are QUERY arguments meant to exhaust memory, time or disk.
func hostileQueries() map[string]string {
	wide := func(expr string, n int) string {
		cols := make([]string, n)
		for i := range cols {
			cols[i] = fmt.Sprintf("%s AS c%d", expr, i)
		}
		return "SELECT " + strings.Join(cols, ", ")
	}
	cross := "SELECT * FROM orders a, orders b, orders c, orders d"
	return map[string]string{
		"150 zeroblob columns":    wide("zeroblob(1000000)", 150),
		"400 zeroblob columns":    wide("zeroblob(1000000)", 400),
		"150 randomblob columns":  wide("randomblob(1000000)", 150),
		"wide text columns":       wide("printf('%.*c', 1000000, 'x')", 120),
		"zeroblob rows":           "WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM r WHERE x < 100000) SELECT zeroblob(1000000) FROM r",
		"endless recursion":       "WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM r) SELECT x FROM r",
		"doubling string":         "WITH RECURSIVE r(s) AS (SELECT 'x' UNION ALL SELECT s || s FROM r) SELECT length(s) FROM r",
		"huge group_concat":       "WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM r WHERE x < 10000000) SELECT length(group_concat(hex(randomblob(64)))) FROM r",
		"cartesian join":          cross,
		"sorted cartesian join":   cross + " ORDER BY random()",
		"distinct cartesian join": "SELECT DISTINCT a.id, b.id, c.id, d.id, randomblob(100) FROM orders a, orders b, orders c, orders d",
		"10 MB of SQL":            "SELECT '" + strings.Repeat("x", 10<<20) + "'",
		"NUL bytes":               "SELECT 'a\x00b', x'00ff00'",
		"invalid UTF-8":           "SELECT '\xff\xfe\xfd', '\xc3' AS \"\xe2\x82\"",
		"many columns":            wide("1", 5000),
		"long GLOB pattern":       "SELECT printf('%.65000c','a') GLOB '*['||printf('%.49000c','b')||']'",
		"long LIKE pattern":       "SELECT printf('%.60000c','a') LIKE printf('%.30000c','%')||'b'",
		"big sort":                "WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM r WHERE x < 3000000) SELECT x FROM r ORDER BY (x*7919)%1000003 LIMIT 1",
	}
}

// TestHostileQueriesBounded runs each hostile query as a QUERY step in a
// fresh process and asserts: the step ends (with an error or a capped result)
// within the timeout's CPU time + 1 s and its wall-clock backstop (3 × the
// timeout) + 1 s, the process's peak RSS grows by less than
// 100 MB, and the database files stay byte-identical.
func TestHostileQueriesBounded(t *testing.T) {
	if name := os.Getenv("GOSQLENV_HOSTILE_QUERY"); name != "" {
		runHostileQuery(t, name)
		return
	}
	f := newFixture(t)
	dbDir := filepath.Dir(sqlitedb.Path(f.dir, "shop"))
	before, err := dirsnap.Take(dbDir)
	if err != nil {
		t.Fatal(err)
	}
	for name := range hostileQueries() {
		t.Run(strings.ReplaceAll(name, " ", "_"), func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestHostileQueriesBounded$", "-test.v", "-test.count=1")
			cmd.Env = append(os.Environ(), "GOSQLENV_HOSTILE_QUERY="+name, "GOSQLENV_HOSTILE_DIR="+f.dir)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			for _, line := range strings.Split(string(out), "\n") {
				if strings.Contains(line, "hostile:") {
					t.Log(strings.TrimSpace(line))
				}
			}
		})
	}
	after, err := dirsnap.Take(dbDir)
	if err != nil {
		t.Fatal(err)
	}
	if !before.Equal(after) {
		t.Errorf("the database directory changed:\nbefore %v\nafter  %v", before, after)
	}
}

// runHostileQuery is the child: one environment, one hostile QUERY step.
func runHostileQuery(t *testing.T, name string) {
	query := hostileQueries()[name]
	f := &fixture{dir: os.Getenv("GOSQLENV_HOSTILE_DIR")}
	full := newFixture(t) // questions (its own copy of the database is not used)
	f.questions = full.questions
	timeout := sqlitedb.DefaultLimits().Timeout
	e := f.env(t, Config{})
	reset(t, e, f.questions[0].QuestionID)
	base := peakRSS()
	cpuBefore := processCPU()
	start := time.Now()
	obs := step(t, e, Query, query)
	took := time.Since(start)
	cpu := processCPU() - cpuBefore
	grown := peakRSS() - base
	outcome := "error: " + obs.Error
	if obs.Error == "" {
		lines := strings.Split(obs.Result, "\n")
		outcome = fmt.Sprintf("result of %d bytes, last line %q", len(obs.Result), lines[len(lines)-1])
	}
	if len(outcome) > 160 {
		outcome = outcome[:160] + "…"
	}
	t.Logf("hostile: %s: %v (CPU %v), peak RSS +%.1f MB, %s", name, took.Round(time.Millisecond), cpu.Round(time.Millisecond), float64(grown)/1e6, outcome)
	// The timeout is CPU time, counted on the query's thread: the process
	// (this query and Go's runtime) may use it and a second more; its wall
	// time is bounded by the backstop, 3 × the timeout (a loaded machine).
	if cpu > timeout+time.Second {
		t.Errorf("%s used %v of CPU (timeout %v of CPU)", name, cpu, timeout)
	}
	if took > 3*timeout+time.Second {
		t.Errorf("%s took %v (the wall-clock backstop is %v)", name, took, 3*timeout)
	}
	if grown > 100e6 {
		t.Errorf("%s: peak RSS grew by %.0f MB", name, float64(grown)/1e6)
	}
	if len(obs.Result) > 64<<10 {
		t.Errorf("%s: the observation has %d bytes", name, len(obs.Result))
	}
}

// outcomeClass is what kind of end a QUERY step had: a result (and whether
// it was cut), or the first words of its error.
func outcomeClass(obs Observation) string {
	if obs.Error == "" {
		return fmt.Sprintf("result, truncated %v", strings.Contains(obs.Result, "too large to read in full"))
	}
	msg := obs.Error
	if rest, ok := strings.CutPrefix(msg, "SQL error: "); ok {
		msg = "SQL error, " + rest // SQLite's message says which
	}
	if i := strings.IndexAny(msg, ":("); i > 0 {
		return msg[:i]
	}
	return msg
}

// Each hostile query ends the same way alone and while two other sessions
// run memory- and work-heavy queries: limits are per query (memory) and in
// steps of work (not wall time).
func TestHostileOutcomesDoNotDependOnLoad(t *testing.T) {
	f := newFixture(t)
	limits := sqlitedb.Limits{MaxSteps: 30_000_000, HeapLimit: 16 << 20, Timeout: 60 * time.Second}
	dbs := OpenDatabases(f.dir, limits)
	defer dbs.Close()
	newEnv := func() *Environment { return f.env(t, Config{Databases: dbs, StepBudget: 1000}) }
	e := newEnv()
	reset(t, e, f.questions[0].QuestionID)
	queries := hostileQueries()
	alone := map[string]string{}
	for name, q := range queries {
		alone[name] = outcomeClass(step(t, e, Query, q))
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i := range 2 {
		wg.Go(func() {
			bg := newEnv()
			reset(t, bg, f.questions[0].QuestionID)
			heavy := []string{queries["sorted cartesian join"], queries["endless recursion"], queries["150 randomblob columns"]}
			for k := 0; ; k++ {
				select {
				case <-stop:
					return
				default:
				}
				bg.Step(ctx, Action{ActionType: Query, Argument: heavy[(i+k)%len(heavy)]})
			}
		})
	}
	for name, q := range queries {
		if got := outcomeClass(step(t, e, Query, q)); got != alone[name] {
			t.Errorf("%s: %q under load, %q alone", name, got, alone[name])
		}
	}
	close(stop)
	wg.Wait()
	t.Logf("outcomes: %v", alone)
}

// processCPU is the CPU time (user and system) the process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
