package server

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/gosqlenv/gosqlenv/sqlenv"
	"github.com/gosqlenv/gosqlenv/sqlenv/dataset"
	"github.com/gosqlenv/gosqlenv/sqlenv/sqlitedb"
)

// GET /questions (an extension) lists the questions a server plays, each
// with its digest (dataset.QuestionRecord.Digest: the question, its gold
// and its database file), and the rules its environments play by
// (sqlenv.Rules: step budget, result sizes, rewards): what a trainer
// compares with its own before it plays against the server (CheckServer).

// questionsJSON answers GET /questions.
type questionsJSON struct {
	Rules     sqlenv.Rules   `json:"rules"`
	Questions []questionJSON `json:"questions"`
}

type questionJSON struct {
	QuestionID   string `json:"question_id"`
	DatabaseName string `json:"database_name"`
	Digest       string `json:"digest"`
}

// questionList is computed once (database digests read whole files).
type questionList struct {
	once sync.Once
	body questionsJSON
	err  error
}

func (s *Server) handleQuestions(w http.ResponseWriter, r *http.Request) {
	l := &s.questions
	l.once.Do(func() {
		l.body = questionsJSON{Rules: s.cfg.Env.Rules(), Questions: []questionJSON{}}
		if len(s.cfg.Env.Questions) == 0 || s.cfg.Env.Databases == nil {
			return // an environment factory of its own: nothing to list
		}
		var cache dataset.DigestCache
		dir := s.cfg.Env.Databases.Dir()
		digests, err := cache.Digests(s.cfg.Env.Questions, func(db string) string { return sqlitedb.Path(dir, db) })
		if err != nil {
			l.err = err
			return
		}
		for _, q := range s.cfg.Env.Questions {
			l.body.Questions = append(l.body.Questions, questionJSON{q.QuestionID, q.DatabaseName, digests[q.QuestionID]})
		}
	})
	if l.err != nil {
		s.writeError(w, r, errorf(CodeExecution, "question digests: %v", l.err))
		return
	}
	s.writeJSON(w, http.StatusOK, l.body)
}

// MismatchError says how a server's episodes would differ from those of a
// local environment (CheckServer).
type MismatchError struct {
	// Server is the server's address (password hidden).
	Server string
	// Missing are the local questions the server does not play; Different
	// those it plays with another text, gold or database file (the first
	// few of each, and how many in all).
	Missing, Different           []string
	MissingCount, DifferentCount int
	// Rules and WantRules are the server's and the local rules.
	Rules, WantRules sqlenv.Rules
}

func (e *MismatchError) Error() string {
	var parts []string
	if e.MissingCount > 0 {
		parts = append(parts, fmt.Sprintf("%d questions it does not serve (%s)", e.MissingCount, strings.Join(e.Missing, ", ")))
	}
	if e.DifferentCount > 0 {
		parts = append(parts, fmt.Sprintf("%d questions it serves differently — other text, gold or database file (%s)", e.DifferentCount, strings.Join(e.Different, ", ")))
	}
	if e.Rules != e.WantRules {
		parts = append(parts, "other rules: "+strings.Join(rulesDiff(e.Rules, e.WantRules), ", "))
	}
	return fmt.Sprintf("environment server %s does not play this run's episodes: %s; start it with this run's questions, "+
		"databases and step budget (`train … questions` writes them and prints the sqlenv-server command)", e.Server, strings.Join(parts, "; "))
}

// CheckServer checks that the server at addr plays every question of the
// local environment configuration exactly as that environment would: same
// question text, gold and database file (local's Databases or DBDir holds
// the files whose digests are compared), and the same Rules (step budget,
// result sizes, rewards). It returns a *MismatchError when it does not.
func CheckServer(ctx context.Context, addr string, opts *ClientOptions, local sqlenv.Config) error {
	c, err := NewHTTPClient(addr, opts)
	if err != nil {
		return err
	}
	var got questionsJSON
	if _, err := c.do(ctx, http.MethodGet, "/questions", nil, &got); err != nil {
		return fmt.Errorf("environment server %s: list its questions: %w", c.base.Redacted(), err)
	}
	dir := local.DBDir
	if local.Databases != nil {
		dir = local.Databases.Dir()
	}
	var cache dataset.DigestCache
	digests, err := cache.Digests(local.Questions, func(db string) string { return sqlitedb.Path(dir, db) })
	if err != nil {
		return err
	}
	served := make(map[string]string, len(got.Questions))
	for _, q := range got.Questions {
		served[q.QuestionID] = q.Digest
	}
	e := &MismatchError{Server: c.base.Redacted(), Rules: got.Rules, WantRules: local.Rules()}
	for _, q := range local.Questions {
		d, ok := served[q.QuestionID]
		switch {
		case !ok:
			e.MissingCount++
			if len(e.Missing) < 3 {
				e.Missing = append(e.Missing, q.QuestionID)
			}
		case d != digests[q.QuestionID]:
			e.DifferentCount++
			if len(e.Different) < 3 {
				e.Different = append(e.Different, q.QuestionID)
			}
		}
	}
	if e.MissingCount > 0 || e.DifferentCount > 0 || e.Rules != e.WantRules {
		return e
	}
	return nil
}

// rulesDiff names the rules that differ: "step_budget 15, not 10".
func rulesDiff(got, want sqlenv.Rules) []string {
	flat := func(r sqlenv.Rules) map[string]any {
		b, _ := json.Marshal(r)
		var m map[string]any
		json.Unmarshal(b, &m)
		out := map[string]any{}
		for k, v := range m {
			if sub, ok := v.(map[string]any); ok {
				for k2, v2 := range sub {
					out[k+"."+k2] = v2
				}
			} else {
				out[k] = v
			}
		}
		return out
	}
	g, w := flat(got), flat(want)
	var diff []string
	for _, k := range slices.Sorted(maps.Keys(w)) {
		if g[k] != w[k] {
			diff = append(diff, fmt.Sprintf("%s %v, not %v", k, g[k], w[k]))
		}
	}
	return diff
}
