package dataset

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/gosqlenv/gosqlenv/sqlenv/sqlitedb"
)

// LoadOptions configures Load.
type LoadOptions struct {
	// DBDir is the database directory (Spider layout). Only raw Spider records
	// need it: their gold answers are computed by running the gold SQL.
	DBDir string
	// Split is assigned to raw Spider records (default Train).
	Split Split
	// AllowEmpty accepts a file holding an empty array (one split of a data
	// directory may have no questions); otherwise it is an error.
	AllowEmpty bool
}

// RawRecord is a question in Spider's own format.
type RawRecord struct {
	Question string `json:"question"`
	DBID     string `json:"db_id"`
	Query    string `json:"query"`
}

// Load reads a JSON array of question records from path: either enriched
// records (this package's QuestionRecord format) or raw Spider records
// ({question, db_id, query}), whose gold answers, answer types, tables and
// difficulties are computed against the databases in opts.DBDir. A missing,
// empty or malformed file, an invalid record, or a raw record whose gold SQL
// cannot be answered is an error that names the path (and the record).
func Load(ctx context.Context, path string, opts LoadOptions) ([]QuestionRecord, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("questions file %s does not exist", path)
		}
		return nil, fmt.Errorf("read questions file %s: %w", path, err)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, fmt.Errorf("questions file %s is empty", path)
	}
	var items []json.RawMessage
	if err := json.Unmarshal(data, &items); err != nil {
		return nil, fmt.Errorf("questions file %s: not a JSON array of question records: %w", path, err)
	}
	if len(items) == 0 {
		if opts.AllowEmpty {
			return nil, nil
		}
		return nil, fmt.Errorf("questions file %s contains no questions", path)
	}
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(items[0], &probe); err != nil {
		return nil, fmt.Errorf("questions file %s: record 0 is not a JSON object: %w", path, err)
	}
	_, enriched := probe["question_text"]
	_, raw := probe["query"]
	switch {
	case enriched:
		qs, err := decodeEnriched(items)
		if err != nil {
			return nil, fmt.Errorf("questions file %s: %w", path, err)
		}
		return qs, nil
	case raw:
		qs, err := enrichRaw(ctx, items, opts)
		if err != nil {
			return nil, fmt.Errorf("questions file %s: %w", path, err)
		}
		return qs, nil
	}
	return nil, fmt.Errorf("questions file %s: record 0 is neither an enriched record (question_text, …) nor a Spider record (question, db_id, query)", path)
}

func decodeEnriched(items []json.RawMessage) ([]QuestionRecord, error) {
	qs := make([]QuestionRecord, len(items))
	seen := make(map[string]int, len(items))
	for i, it := range items {
		dec := json.NewDecoder(bytes.NewReader(it))
		if err := dec.Decode(&qs[i]); err != nil {
			return nil, fmt.Errorf("record %d: %w", i, err)
		}
		if err := qs[i].validate(); err != nil {
			return nil, fmt.Errorf("record %d: %w", i, err)
		}
		if j, dup := seen[qs[i].QuestionID]; dup {
			return nil, fmt.Errorf("record %d: question_id %s repeats record %d", i, qs[i].QuestionID, j)
		}
		seen[qs[i].QuestionID] = i
	}
	return qs, nil
}

func enrichRaw(ctx context.Context, items []json.RawMessage, opts LoadOptions) ([]QuestionRecord, error) {
	if opts.DBDir == "" {
		return nil, fmt.Errorf("raw Spider records need a database directory to compute gold answers (LoadOptions.DBDir)")
	}
	split := opts.Split
	if split == "" {
		split = Train
	}
	cat := sqlitedb.NewCatalog(opts.DBDir, sqlitedb.Limits{})
	defer cat.Close()
	counters := map[string]int{}
	qs := make([]QuestionRecord, 0, len(items))
	for i, it := range items {
		var r RawRecord
		if err := json.Unmarshal(it, &r); err != nil {
			return nil, fmt.Errorf("record %d: %w", i, err)
		}
		if r.Question == "" || r.DBID == "" || r.Query == "" {
			return nil, fmt.Errorf("record %d: a Spider record needs question, db_id and query", i)
		}
		db, err := cat.Get(r.DBID)
		if err != nil {
			return nil, fmt.Errorf("record %d: %w", i, err)
		}
		q, err := Enrich(ctx, db, r, split, counters[r.DBID])
		if err != nil {
			return nil, fmt.Errorf("record %d: %w (use `sqlenv import` to keep only answerable questions)", i, err)
		}
		counters[r.DBID]++
		qs = append(qs, q)
	}
	return qs, nil
}

// Save writes records as an indented JSON array (stable, diff-friendly).
func Save(path string, qs []QuestionRecord) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(qs); err != nil {
		return fmt.Errorf("encode questions for %s: %w", path, err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("write questions file: %w", err)
	}
	return nil
}

// Filter selects questions by difficulty and split. Empty lists select all;
// names are matched without regard to case, and unknown names are errors.
type Filter struct {
	Difficulties []string
	Splits       []string
	Databases    []string
}

// Apply returns the questions that pass the filter, in their original order.
func (f Filter) Apply(qs []QuestionRecord) ([]QuestionRecord, error) {
	var diffs []Difficulty
	for _, s := range f.Difficulties {
		d, err := ParseDifficulty(s)
		if err != nil {
			return nil, err
		}
		diffs = append(diffs, d)
	}
	var splits []Split
	for _, s := range f.Splits {
		sp, err := ParseSplit(s)
		if err != nil {
			return nil, err
		}
		splits = append(splits, sp)
	}
	var out []QuestionRecord
	for _, q := range qs {
		if len(diffs) > 0 && !slices.Contains(diffs, q.Difficulty) {
			continue
		}
		if len(splits) > 0 && !slices.Contains(splits, q.Split) {
			continue
		}
		if len(f.Databases) > 0 && !slices.ContainsFunc(f.Databases, func(d string) bool { return strings.EqualFold(d, q.DatabaseName) }) {
			continue
		}
		out = append(out, q)
	}
	return out, nil
}
