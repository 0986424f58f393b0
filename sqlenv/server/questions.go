package server

import (
	"net/http"
	"sync"

	"github.com/gosqlenv/gosqlenv/sqlenv/dataset"
	"github.com/gosqlenv/gosqlenv/sqlenv/sqlitedb"
)

// GET /questions (an extension) lists the questions a server plays, each
// with its digest (dataset.QuestionRecord.Digest: the question, its gold
// and its database file), and the rules its environments play by
// (sqlenv.Rules: step budget, result sizes, rewards): what a trainer
// compares with its own before it plays against the server (CheckServer).

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
			l.body.Questions = append(l.body.Questions, questionJSON{QuestionID: q.QuestionID, DatabaseName: q.DatabaseName, Digest: digests[q.QuestionID]})
		}
	})
	if l.err != nil {
		s.writeError(w, r, errorf(CodeExecution, "question digests: %v", l.err))
		return
	}
	s.writeJSON(w, http.StatusOK, l.body)
}
