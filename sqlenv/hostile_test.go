package sqlenv

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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
	}
}

// TestHostileQueriesBounded runs each hostile query as a QUERY step in a
// fresh process and asserts: the step ends (with an error or a capped result)
// within the timeout + 0.5 s, the process's peak RSS grows by less than
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
	start := time.Now()
	obs := step(t, e, Query, query)
	took := time.Since(start)
	grown := peakRSS() - base
	outcome := "error: " + obs.Error
	if obs.Error == "" {
		lines := strings.Split(obs.Result, "\n")
		outcome = fmt.Sprintf("result of %d bytes, last line %q", len(obs.Result), lines[len(lines)-1])
	}
	if len(outcome) > 160 {
		outcome = outcome[:160] + "…"
	}
	t.Logf("hostile: %s: %v, peak RSS +%.1f MB, %s", name, took.Round(time.Millisecond), float64(grown)/1e6, outcome)
	if took > timeout+500*time.Millisecond {
		t.Errorf("%s took %v (timeout %v)", name, took, timeout)
	}
	if grown > 100e6 {
		t.Errorf("%s: peak RSS grew by %.0f MB", name, float64(grown)/1e6)
	}
	if len(obs.Result) > 64<<10 {
		t.Errorf("%s: the observation has %d bytes", name, len(obs.Result))
	}
}
