package bundled

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/gosqlenv/gosqlenv/sqlenv/answer"
	"github.com/gosqlenv/gosqlenv/sqlenv/dataset"
	"github.com/gosqlenv/gosqlenv/sqlenv/sqlitedb"
)

// cycle is the order of difficulties in which questions are drawn: every
// five questions are 2 easy, 2 medium and 1 hard, the 40/40/20 mix.
var cycle = []dataset.Difficulty{easy, medium, easy, medium, hard}

// cyclesFor is the number of cycles drawn for a database of the split:
// 65 questions per training database, 55 per evaluation database.
func cyclesFor(split dataset.Split) int {
	if split == dataset.Eval {
		return 11
	}
	return 13
}

// domainStats records what question generation dropped, for tests and tuning.
type domainStats struct {
	// Rejected counts dropped instances by reason (tie, no rows, …).
	Rejected map[string]int
	// Mismatched lists instances whose gold SQL reads a number of tables
	// that does not fit the template's difficulty (a template bug).
	Mismatched []string
	// PerTemplate counts the questions made from each template.
	PerTemplate []int
}

// source draws the instances of one template: its parameter rows, shuffled
// once, are used in turn, and its phrasings rotate.
type source struct {
	t      *tmpl
	id     int
	cands  []params
	next   int
	phrase int
}

func newSource(ctx context.Context, db *sqlitedb.DB, t *tmpl, id int, r *rand.Rand) (*source, error) {
	s := &source{t: t, id: id, phrase: r.IntN(len(t.texts))}
	if t.pick == "" {
		s.cands = []params{{}}
		return s, nil
	}
	res, err := db.QueryUntimed(ctx, t.pick)
	if err != nil {
		return nil, fmt.Errorf("parameter query %q: %w", t.pick, err)
	}
	if res.Truncated {
		return nil, fmt.Errorf("parameter query %q returns too many rows", t.pick)
	}
	keys := make([]string, 0, len(res.Rows))
	byKey := map[string]params{}
rows:
	for _, row := range res.Rows {
		p := params{}
		var key strings.Builder
		for i, v := range row {
			if v == nil {
				continue rows
			}
			p[res.Columns[i]] = v
			key.WriteString(answer.FormatValue(v) + "\x00")
		}
		if _, dup := byKey[key.String()]; !dup {
			byKey[key.String()] = p
			keys = append(keys, key.String())
		}
	}
	slices.Sort(keys) // independent of the row order SQLite happens to use
	for _, k := range keys {
		s.cands = append(s.cands, byKey[k])
	}
	r.Shuffle(len(s.cands), func(i, j int) { s.cands[i], s.cands[j] = s.cands[j], s.cands[i] })
	return s, nil
}

// pool holds the sources of one difficulty and takes them in turn.
type pool struct {
	srcs []*source
	cur  int
}

// questioner makes the questions of one database.
type questioner struct {
	db    *sqlitedb.DB
	d     *domain
	seen  map[string]bool // question texts and gold SQL already used
	stats *domainStats
}

// makeQuestions draws the questions of a database in the cycle's order of
// difficulties, each from the next template of that difficulty, dropping
// instances that are ambiguous or that Enrich rejects. It is deterministic.
func makeQuestions(ctx context.Context, db *sqlitedb.DB, d *domain) ([]dataset.QuestionRecord, *domainStats, error) {
	r := newRand(d.name + "/questions")
	stats := &domainStats{Rejected: map[string]int{}, PerTemplate: make([]int, len(d.templates))}
	pools := map[dataset.Difficulty]*pool{easy: {}, medium: {}, hard: {}}
	for i := range d.templates {
		t := &d.templates[i]
		src, err := newSource(ctx, db, t, i, r)
		if err != nil {
			return nil, nil, fmt.Errorf("%s template %d: %w", d.name, i, err)
		}
		pools[t.want].srcs = append(pools[t.want].srcs, src)
	}
	q := &questioner{db: db, d: d, seen: map[string]bool{}, stats: stats}
	var out []dataset.QuestionRecord
	for range cyclesFor(d.split) {
		for _, want := range cycle {
			rec, err := q.take(ctx, pools[want], len(out))
			if err != nil {
				return nil, nil, fmt.Errorf("%s: %w", d.name, err)
			}
			out = append(out, rec)
		}
	}
	return out, stats, nil
}

// take makes the next question from the pool's templates, in turn; a
// template that has run out of parameters leaves the pool.
func (q *questioner) take(ctx context.Context, p *pool, index int) (dataset.QuestionRecord, error) {
	for len(p.srcs) > 0 {
		p.cur %= len(p.srcs)
		src := p.srcs[p.cur]
		rec, ok, err := q.draw(ctx, src, index)
		if err != nil {
			return rec, fmt.Errorf("template %d (%q): %w", src.id, src.t.texts[0], err)
		}
		if ok {
			q.stats.PerTemplate[src.id]++
			p.cur++
			return rec, nil
		}
		p.srcs = slices.Delete(p.srcs, p.cur, p.cur+1)
	}
	return dataset.QuestionRecord{}, fmt.Errorf("question %d: templates ran out of usable parameters", index)
}

// draw tries the source's remaining parameters until one gives a usable
// question; ok is false when none is left.
func (q *questioner) draw(ctx context.Context, s *source, index int) (dataset.QuestionRecord, bool, error) {
	for s.next < len(s.cands) {
		p := s.cands[s.next]
		s.next++
		text, err := fill(s.t.texts[s.phrase%len(s.t.texts)], p, textValue)
		if err != nil {
			return dataset.QuestionRecord{}, false, err
		}
		gold, err := fill(s.t.sql, p, sqlLiteral)
		if err != nil {
			return dataset.QuestionRecord{}, false, err
		}
		if q.seen[text] || q.seen[gold] {
			q.stats.Rejected["duplicate"]++
			continue
		}
		reason, err := q.check(ctx, s.t, gold, p)
		if err != nil {
			return dataset.QuestionRecord{}, false, err
		}
		if reason != "" {
			q.stats.Rejected[reason]++
			continue
		}
		raw := dataset.RawRecord{Question: text, DBID: q.d.name, Query: gold}
		rec, err := dataset.Enrich(ctx, q.db, raw, q.d.split, index)
		switch {
		case errors.Is(err, dataset.ErrEmptyAnswer), errors.Is(err, dataset.ErrTooManyRows):
			q.stats.Rejected["enrich: "+err.Error()]++
			continue
		case err != nil:
			return rec, false, err
		case rec.Difficulty != s.t.want:
			q.stats.Mismatched = append(q.stats.Mismatched, fmt.Sprintf("%s template %d: %s reads %v (%s, want %s)", q.d.name, s.id, gold, rec.TablesInvolved, rec.Difficulty, s.t.want))
			continue
		}
		q.seen[text], q.seen[gold] = true, true
		s.phrase++
		return rec, true, nil
	}
	return dataset.QuestionRecord{}, false, nil
}

// check runs the gold SQL and returns why its answer is unusable, or "".
// A gold SQL that fails is a template bug and an error.
func (q *questioner) check(ctx context.Context, t *tmpl, gold string, p params) (string, error) {
	res, err := q.db.QueryUntimed(ctx, gold)
	if err != nil {
		return "", fmt.Errorf("gold SQL %q: %w", gold, err)
	}
	rows := res.Rows
	switch {
	case res.Truncated || len(rows) > dataset.MaxAnswerRows:
		return "too many rows", nil
	case len(rows) == 0:
		return "no rows", nil
	case t.shape == single && len(rows) != 1:
		return "not a single row", nil
	case t.shape == several && len(rows) < 2:
		return "fewer than 2 rows", nil
	case t.k > 1 && len(rows) != t.k:
		return "fewer than k rows", nil // "the three most …" needs three
	}
	if reason := badValues(rows); reason != "" {
		return reason, nil
	}
	if t.tie == "" {
		return "", nil
	}
	tie, err := fill(t.tie, p, sqlLiteral)
	if err != nil {
		return "", err
	}
	keys, err := q.db.QueryUntimed(ctx, tie)
	if err != nil {
		return "", fmt.Errorf("tie SQL %q: %w", tie, err)
	}
	if k := t.k; len(keys.Rows) > k && keys.Rows[k-1][0] == keys.Rows[k][0] {
		return "tie", nil
	}
	return "", nil
}

// badValues says why result rows make a poor gold answer: a NULL, a zero or
// empty single value, or a list with repeated items.
func badValues(rows [][]any) string {
	for _, r := range rows {
		for _, v := range r {
			if v == nil {
				return "null value"
			}
		}
	}
	if len(rows) == 1 && len(rows[0]) == 1 {
		switch v := rows[0][0].(type) {
		case int64:
			if v == 0 {
				return "zero"
			}
		case float64:
			if v == 0 {
				return "zero"
			}
		case string:
			if strings.TrimSpace(v) == "" {
				return "empty"
			}
		}
	}
	if len(rows[0]) == 1 {
		seen := map[string]bool{}
		for _, r := range rows {
			s := answer.FormatValue(r[0])
			if seen[s] {
				return "repeated list item"
			}
			seen[s] = true
		}
	}
	return ""
}
