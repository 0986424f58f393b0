package dataset

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"

	"github.com/gosqlenv/gosqlenv/sqlenv/sqlitedb"
)

// ImportOptions configures ImportSpider.
type ImportOptions struct {
	// SpiderDir is an unpacked Spider download: database/<db>/<db>.sqlite
	// and train_spider.json, train_others.json and dev.json, of which any
	// may be missing (the dev set alone is enough).
	SpiderDir string
	// DBIDs selects databases; empty selects every database the question
	// files mention.
	DBIDs []string
	// OutDir receives databases/<db>/<db>.sqlite (copies),
	// questions_train.json (from Spider's train split) and
	// questions_eval.json (from its dev split). It is created if needed.
	OutDir string
}

// ImportReport says what ImportSpider kept and dropped.
type ImportReport struct {
	Train, Eval int
	Databases   []string
	// Dropped counts dropped questions by reason (ErrGoldFails,
	// ErrEmptyAnswer, ErrTooManyRows, ErrNullAnswer, ErrMissingDatabase).
	Dropped map[string]int
	// MissingDatabases are the databases the questions name that are not
	// under database/ (their questions are dropped), sorted.
	MissingDatabases []string
	// DroppedFile lists every dropped question with its reason
	// (OutDir/dropped.json; see DroppedQuestion).
	DroppedFile string
}

// DroppedQuestion is one entry of an import's dropped.json.
type DroppedQuestion struct {
	Split    Split  `json:"split"`
	File     string `json:"file"`
	Index    int    `json:"index"` // position in File
	DBID     string `json:"db_id"`
	Question string `json:"question"`
	Query    string `json:"query"`
	Reason   string `json:"reason"`
}

// ErrMissingDatabase: the question's database is not in the Spider
// directory's database/ folder.
var ErrMissingDatabase = errors.New("database file missing")

// ImportSpider curates Spider questions into the enriched format: it runs
// every gold query (read-only, under the environment's limits), drops the
// questions whose gold SQL fails, returns nothing or only NULL, or returns
// more rows than an agent can see (MaxAnswerRows), and those whose database
// file is missing (with a warning in the report), and writes the rest with
// their gold answers, types, tables and difficulties, and the dropped ones
// with their reasons to dropped.json. Either split may be absent (Spider's
// dev set alone imports as eval questions only); output order follows the
// input files.
func ImportSpider(ctx context.Context, opts ImportOptions) (ImportReport, error) {
	rep := ImportReport{Dropped: map[string]int{}}
	if opts.OutDir == "" {
		return rep, errors.New("import spider: no output directory")
	}
	dbDir := filepath.Join(opts.SpiderDir, "database")
	if st, err := os.Stat(dbDir); err != nil || !st.IsDir() {
		return rep, fmt.Errorf("import spider: %s is not a Spider directory (no database/ folder)", opts.SpiderDir)
	}
	train, err := readSpiderFiles(opts.SpiderDir, []string{"train_spider.json", "train_others.json"})
	if err != nil {
		return rep, err
	}
	eval, err := readSpiderFiles(opts.SpiderDir, []string{"dev.json"})
	if err != nil {
		return rep, err
	}
	if len(train) == 0 && len(eval) == 0 {
		return rep, fmt.Errorf("import spider: %s has no questions (train_spider.json, train_others.json or dev.json)", opts.SpiderDir)
	}
	c := &spiderCurator{
		ctx: ctx, dbDir: dbDir, cat: sqlitedb.NewCatalog(dbDir, sqlitedb.Limits{}), rep: &rep,
		want: map[string]bool{}, used: map[string]bool{}, missing: map[string]bool{},
	}
	defer c.cat.Close()
	for _, id := range opts.DBIDs {
		c.want[id] = true
	}
	trainQs := c.curate(train, Train)
	evalQs := c.curate(eval, Eval)
	if ctx.Err() != nil {
		return rep, ctx.Err()
	}
	for id := range c.missing {
		rep.MissingDatabases = append(rep.MissingDatabases, id)
	}
	sort.Strings(rep.MissingDatabases)
	for id := range c.want {
		if !c.used[id] {
			return rep, fmt.Errorf("import spider: database %q has no usable question in %s", id, opts.SpiderDir)
		}
	}
	if len(trainQs)+len(evalQs) == 0 {
		return rep, fmt.Errorf("import spider: no usable question in %s (%d dropped)", opts.SpiderDir, len(c.dropped))
	}
	for id := range c.used {
		rep.Databases = append(rep.Databases, id)
	}
	sort.Strings(rep.Databases)
	if err := writeImport(opts.OutDir, dbDir, &rep, trainQs, evalQs, c.dropped); err != nil {
		return rep, err
	}
	rep.Train, rep.Eval = len(trainQs), len(evalQs)
	return rep, nil
}

// spiderCurator enriches Spider's records with their gold results, keeps
// those the environment can use and records why it drops the others.
type spiderCurator struct {
	ctx           context.Context
	dbDir         string
	cat           *sqlitedb.Catalog
	rep           *ImportReport
	want          map[string]bool // the databases asked for; empty: all
	used, missing map[string]bool // databases with a kept question; databases not found
	dropped       []DroppedQuestion
}

// curate returns the usable questions of raws, numbered per database.
func (c *spiderCurator) curate(raws []spiderRecord, split Split) []QuestionRecord {
	var out []QuestionRecord
	counters := map[string]int{}
	for _, r := range raws {
		if (len(c.want) > 0 && !c.want[r.DBID]) || c.ctx.Err() != nil {
			continue
		}
		if _, err := os.Stat(sqlitedb.Path(c.dbDir, r.DBID)); err != nil {
			c.missing[r.DBID] = true
			c.drop(r, split, ErrMissingDatabase.Error(), ErrMissingDatabase.Error())
			continue
		}
		db, err := c.cat.Get(r.DBID)
		if err != nil {
			reason := fmt.Sprintf("%s: %v", ErrGoldFails, err)
			c.drop(r, split, reason, reason)
			continue
		}
		q, err := Enrich(c.ctx, db, r.RawRecord, split, counters[r.DBID])
		if err != nil {
			counted := err.Error()
			for _, known := range []error{ErrGoldFails, ErrEmptyAnswer, ErrTooManyRows, ErrNullAnswer} {
				if errors.Is(err, known) {
					counted = known.Error()
				}
			}
			c.drop(r, split, counted, err.Error())
			continue
		}
		counters[r.DBID]++
		c.used[r.DBID] = true
		out = append(out, q)
	}
	return out
}

// drop records a dropped question: counted under counted in the report,
// with the full reason in dropped.json.
func (c *spiderCurator) drop(r spiderRecord, split Split, counted, reason string) {
	c.rep.Dropped[counted]++
	c.dropped = append(c.dropped, DroppedQuestion{Split: split, File: r.file, Index: r.index, DBID: r.DBID,
		Question: r.Question, Query: r.Query, Reason: reason})
}

// writeImport writes an import to outDir: the used databases, the two
// question files and dropped.json (its path goes into rep).
func writeImport(outDir, dbDir string, rep *ImportReport, trainQs, evalQs []QuestionRecord, dropped []DroppedQuestion) error {
	for _, id := range rep.Databases {
		if err := copyFile(sqlitedb.Path(dbDir, id), sqlitedb.Path(filepath.Join(outDir, "databases"), id)); err != nil {
			return fmt.Errorf("import spider: %w", err)
		}
	}
	if err := Save(filepath.Join(outDir, "questions_train.json"), nonNil(trainQs)); err != nil {
		return err
	}
	if err := Save(filepath.Join(outDir, "questions_eval.json"), nonNil(evalQs)); err != nil {
		return err
	}
	rep.DroppedFile = filepath.Join(outDir, "dropped.json")
	data, err := json.MarshalIndent(nonNilDropped(dropped), "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(rep.DroppedFile, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("import spider: %w", err)
	}
	return nil
}

func nonNilDropped(d []DroppedQuestion) []DroppedQuestion {
	if d == nil {
		return []DroppedQuestion{}
	}
	return d
}

// spiderRecord is a raw record with where it was read.
type spiderRecord struct {
	RawRecord
	file  string
	index int
}

func nonNil(qs []QuestionRecord) []QuestionRecord {
	if qs == nil {
		return []QuestionRecord{}
	}
	return qs
}

// readSpiderFiles reads raw records from those of the named files of dir
// that exist.
func readSpiderFiles(dir string, names []string) ([]spiderRecord, error) {
	var all []spiderRecord
	for _, name := range names {
		path := filepath.Join(dir, name)
		data, err := os.ReadFile(path)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				continue
			}
			return nil, fmt.Errorf("import spider: read %s: %w", path, err)
		}
		var raws []RawRecord
		if err := json.Unmarshal(data, &raws); err != nil {
			return nil, fmt.Errorf("import spider: %s is not a JSON array of Spider records: %w", path, err)
		}
		if slices.ContainsFunc(raws, func(r RawRecord) bool { return r.DBID == "" || r.Query == "" || r.Question == "" }) {
			return nil, fmt.Errorf("import spider: %s has records without question, db_id or query", path)
		}
		for i, r := range raws {
			all = append(all, spiderRecord{RawRecord: r, file: name, index: i})
		}
	}
	return all, nil
}

// copyFile copies the file src to dst, creating dst's directory.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
