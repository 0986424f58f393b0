package sqlenv

import (
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/gosqlenv/gosqlenv/sqlenv/dataset"
	"github.com/gosqlenv/gosqlenv/sqlenv/dataset/bundled"
	"github.com/gosqlenv/gosqlenv/sqlenv/sqlitedb"
)

// bundledQuestions loads the bundled training questions (generated on first use).
func bundledQuestions(b *testing.B) ([]dataset.QuestionRecord, string) {
	b.Helper()
	paths, err := bundled.Ensure(ctx)
	if err != nil {
		b.Fatal(err)
	}
	qs, err := dataset.Load(ctx, paths.TrainQuestions, dataset.LoadOptions{})
	if err != nil {
		b.Fatal(err)
	}
	return qs, paths.DBDir
}

// reportLatencies adds the median and 99th percentile of the samples.
func reportLatencies(b *testing.B, samples []time.Duration, unit string) {
	if len(samples) == 0 {
		return
	}
	slices.Sort(samples)
	b.ReportMetric(float64(samples[len(samples)/2].Nanoseconds()), "p50-ns/"+unit)
	b.ReportMetric(float64(samples[len(samples)*99/100].Nanoseconds()), "p99-ns/"+unit)
}

// BenchmarkEpisode plays oracle-style DESCRIBE…/QUERY/ANSWER episodes over
// the bundled training questions and reports the cost per step.
func BenchmarkEpisode(b *testing.B) {
	qs, dbDir := bundledQuestions(b)
	dbs := OpenDatabases(dbDir, sqlitedb.Limits{})
	defer dbs.Close()
	env, err := New(Config{Questions: qs, Databases: dbs})
	if err != nil {
		b.Fatal(err)
	}
	oracle := NewOraclePolicy(qs)
	for _, q := range qs { // warm the gold cache and open every database
		PlayEpisode(ctx, env, oracle, ResetOptions{QuestionID: q.QuestionID})
	}
	var samples []time.Duration
	steps := 0
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		q := qs[i%len(qs)]
		obs, err := env.Reset(ctx, ResetOptions{QuestionID: q.QuestionID})
		if err != nil {
			b.Fatal(err)
		}
		for !obs.Done {
			a, _ := oracle.Act(ctx, obs)
			start := time.Now()
			obs, err = env.Step(ctx, a)
			samples = append(samples, time.Since(start))
			if err != nil {
				b.Fatal(err)
			}
			steps++
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(steps), "ns/step")
	b.ReportMetric(float64(steps)/b.Elapsed().Seconds(), "steps/s")
	reportLatencies(b, samples, "step")
}

// BenchmarkQueryOverhead runs the gold SQL of every bundled training
// question twice per iteration, in alternating order: through Environment.Step (guards,
// rendering, progress reward, observation) and directly through database/sql
// on the same file, reading every row. It reports both medians and the
// environment's overhead: total env time / total raw time − 1, and the median
// of the per-query ratios.
func BenchmarkQueryOverhead(b *testing.B) {
	qs, dbDir := bundledQuestions(b)
	queryOverhead(b, qs, dbDir)
}

// BenchmarkQueryOverheadCheap is BenchmarkQueryOverhead on Spider-like cheap
// queries: a small concert database (4 tables, 5–40 rows) and 24 gold
// queries of Spider's easy and medium kinds (counts, filters, one join,
// GROUP BY, ORDER BY … LIMIT 1), where SQLite's own time is a few tens of
// microseconds and the environment's fixed cost per step shows.
func BenchmarkQueryOverheadCheap(b *testing.B) {
	qs, dbDir := cheapQuestions(b)
	queryOverhead(b, qs, dbDir)
}

// cheapQuestions builds the concert database of BenchmarkQueryOverheadCheap
// and its questions.
func cheapQuestions(b *testing.B) ([]dataset.QuestionRecord, string) {
	b.Helper()
	dir := b.TempDir()
	path := sqlitedb.Path(dir, "concert")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		b.Fatal(err)
	}
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		b.Fatal(err)
	}
	stmts := []string{
		`CREATE TABLE stadium (stadium_id INTEGER PRIMARY KEY, name TEXT, location TEXT, capacity INTEGER)`,
		`CREATE TABLE singer (singer_id INTEGER PRIMARY KEY, name TEXT, country TEXT, age INTEGER, is_male TEXT)`,
		`CREATE TABLE concert (concert_id INTEGER PRIMARY KEY, concert_name TEXT, theme TEXT, stadium_id INTEGER REFERENCES stadium(stadium_id), year INTEGER)`,
		`CREATE TABLE singer_in_concert (concert_id INTEGER REFERENCES concert(concert_id), singer_id INTEGER REFERENCES singer(singer_id), PRIMARY KEY (concert_id, singer_id))`,
	}
	countries := []string{"France", "Netherlands", "United States", "Japan"}
	for i := 1; i <= 5; i++ {
		stmts = append(stmts, fmt.Sprintf(`INSERT INTO stadium VALUES (%d, 'Stadium %d', 'City %d', %d)`, i, i, i%3, 2000+i*1500))
	}
	for i := 1; i <= 20; i++ {
		stmts = append(stmts, fmt.Sprintf(`INSERT INTO singer VALUES (%d, 'Singer %02d', '%s', %d, '%s')`, i, i, countries[i%4], 20+i*2, map[bool]string{true: "T", false: "F"}[i%2 == 0]))
	}
	for i := 1; i <= 10; i++ {
		stmts = append(stmts, fmt.Sprintf(`INSERT INTO concert VALUES (%d, 'Concert %d', 'Theme %d', %d, %d)`, i, i, i%4, i%5+1, 2014+i%3))
	}
	for i := 0; i < 40; i++ {
		stmts = append(stmts, fmt.Sprintf(`INSERT OR IGNORE INTO singer_in_concert VALUES (%d, %d)`, i%7+1, (i*7)%20+1))
	}
	for _, st := range stmts {
		if _, err := db.Exec(st); err != nil {
			b.Fatal(err)
		}
	}
	db.Close()
	g, err := sqlitedb.Open(path, sqlitedb.Limits{})
	if err != nil {
		b.Fatal(err)
	}
	defer g.Close()
	var qs []dataset.QuestionRecord
	for i, query := range []string{
		"SELECT count(*) FROM singer",
		"SELECT name, country, age FROM singer ORDER BY age DESC LIMIT 5",
		"SELECT avg(age), min(age), max(age) FROM singer WHERE country = 'France'",
		"SELECT name FROM singer WHERE age > 50 ORDER BY name",
		"SELECT DISTINCT country FROM singer WHERE age > 40",
		"SELECT country, count(*) FROM singer GROUP BY country",
		"SELECT name, capacity FROM stadium ORDER BY capacity DESC LIMIT 1",
		"SELECT count(*) FROM concert WHERE year = 2015 OR year = 2016",
		"SELECT T2.name, count(*) FROM concert AS T1 JOIN stadium AS T2 ON T1.stadium_id = T2.stadium_id GROUP BY T1.stadium_id",
		"SELECT name FROM stadium WHERE stadium_id NOT IN (SELECT stadium_id FROM concert WHERE year = 2014)",
		"SELECT T2.concert_name, count(*) FROM singer_in_concert AS T1 JOIN concert AS T2 ON T1.concert_id = T2.concert_id GROUP BY T1.concert_id",
		"SELECT T2.name FROM singer_in_concert AS T1 JOIN singer AS T2 ON T1.singer_id = T2.singer_id JOIN concert AS T3 ON T1.concert_id = T3.concert_id WHERE T3.year = 2014",
		"SELECT name, location FROM stadium WHERE capacity BETWEEN 4000 AND 8000",
		"SELECT max(capacity), avg(capacity) FROM stadium",
		"SELECT year FROM concert GROUP BY year ORDER BY count(*) DESC LIMIT 1",
		"SELECT name FROM singer WHERE country = 'Japan' AND is_male = 'F'",
		"SELECT count(DISTINCT theme) FROM concert",
		"SELECT concert_name, theme FROM concert WHERE year = 2014",
		"SELECT name FROM stadium WHERE capacity > (SELECT avg(capacity) FROM stadium)",
		"SELECT T1.name FROM singer AS T1 JOIN singer_in_concert AS T2 ON T1.singer_id = T2.singer_id GROUP BY T1.singer_id HAVING count(*) >= 2",
		"SELECT country FROM singer WHERE age > 40 INTERSECT SELECT country FROM singer WHERE age < 30",
		"SELECT name FROM singer WHERE name LIKE '%1%'",
		"SELECT count(*) FROM singer_in_concert",
		"SELECT location, count(*) FROM stadium GROUP BY location",
	} {
		q, err := dataset.Enrich(ctx, g, dataset.RawRecord{Question: fmt.Sprintf("q%d", i), DBID: "concert", Query: query}, dataset.Train, i)
		if err != nil {
			b.Fatalf("%s: %v", query, err)
		}
		qs = append(qs, q)
	}
	return qs, dir
}

// queryOverhead compares QUERY steps with raw database/sql (see
// BenchmarkQueryOverhead).
func queryOverhead(b *testing.B, qs []dataset.QuestionRecord, dbDir string) {
	dbs := OpenDatabases(dbDir, sqlitedb.Limits{})
	defer dbs.Close()
	env, err := New(Config{Questions: qs, Databases: dbs, StepBudget: 1 << 30})
	if err != nil {
		b.Fatal(err)
	}
	raw := map[string]*sql.DB{}
	for _, q := range qs {
		if raw[q.DatabaseName] == nil {
			u := url.URL{Scheme: "file", Path: sqlitedb.Path(dbDir, q.DatabaseName), OmitHost: true}
			db, err := sql.Open("sqlite3", u.String()+"?mode=ro&immutable=1")
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			raw[q.DatabaseName] = db
		}
	}
	runRaw := func(q dataset.QuestionRecord) {
		rows, err := raw[q.DatabaseName].QueryContext(ctx, q.GoldSQL)
		if err != nil {
			b.Fatal(err)
		}
		cols, _ := rows.Columns()
		vals, ptrs := make([]any, len(cols)), make([]any, len(cols))
		for j := range vals {
			ptrs[j] = &vals[j]
		}
		for rows.Next() {
			if err := rows.Scan(ptrs...); err != nil {
				b.Fatal(err)
			}
		}
		rows.Close()
	}
	var envT, rawT, ratios []time.Duration
	var envSum, rawSum time.Duration
	for i := 0; b.Loop(); i++ {
		q := qs[i%len(qs)]
		if i%8 == 0 || q.DatabaseName != qs[(i+len(qs)-1)%len(qs)].DatabaseName {
			if _, err := env.Reset(ctx, ResetOptions{QuestionID: q.QuestionID}); err != nil {
				b.Fatal(err)
			}
		}
		// Whichever runs second finds the pages in the CPU caches: alternate
		// the order so neither side gets that advantage.
		var e, r time.Duration
		for k := 0; k < 2; k++ {
			start := time.Now()
			if (i+k)%2 == 0 {
				obs, err := env.Step(ctx, Action{ActionType: Query, Argument: q.GoldSQL})
				if err != nil || obs.Error != "" {
					b.Fatal(err, obs.Error)
				}
				e = time.Since(start)
			} else {
				runRaw(q)
				r = time.Since(start)
			}
		}
		envT, rawT = append(envT, e), append(rawT, r)
		envSum, rawSum = envSum+e, rawSum+r
		ratios = append(ratios, time.Duration(1000*float64(e)/float64(r))) // per mille
	}
	slices.Sort(envT)
	slices.Sort(rawT)
	slices.Sort(ratios)
	b.ReportMetric(float64(envT[len(envT)/2].Nanoseconds()), "env-p50-ns")
	b.ReportMetric(float64(rawT[len(rawT)/2].Nanoseconds()), "raw-p50-ns")
	b.ReportMetric(100*(float64(envSum)/float64(rawSum)-1), "overhead-%")
	b.ReportMetric(float64(ratios[len(ratios)/2])/10-100, "median-overhead-%")
}
