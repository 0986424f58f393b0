// Package protocol holds what the environment server (sqlenv/server) and
// its clients (sqlenv/client) share of OpenEnv's protocol: the JSON shapes
// of requests and answers, the error codes and the error object.
package protocol

import (
	"bytes"
	"encoding/json"

	"github.com/gosqlenv/gosqlenv/sqlenv"
)

// SessionHeader carries the id of a stateful HTTP session: set on /reset's
// response, and read by /step, /state and /reset (to reuse a session).
const SessionHeader = "X-Session-Id"

// Envelope is every WebSocket message of /ws: {"type": ..., "data": ...}.
type Envelope struct {
	Type string `json:"type"`
	Data any    `json:"data"`
}

// Questions answers GET /questions: the rules the server's environments
// play by and the questions it serves, each with its digest.
type Questions struct {
	Rules     sqlenv.Rules `json:"rules"`
	Questions []Question   `json:"questions"`
}

// Question is one served question of GET /questions.
type Question struct {
	QuestionID   string `json:"question_id"`
	DatabaseName string `json:"database_name"`
	Digest       string `json:"digest"`
}

// The JSON shapes of the protocol. Field names and nesting are OpenEnv's;
// the request fields question_id and session_id are extensions.

// ObservationJSON is OpenEnv's observation object: sqlenv.Observation
// without reward and done, which are the response's own fields.
type ObservationJSON struct {
	Question        string   `json:"question"`
	SchemaInfo      string   `json:"schema_info"`
	Result          string   `json:"result"`
	Error           string   `json:"error"`
	StepCount       int      `json:"step_count"`
	BudgetRemaining int      `json:"budget_remaining"`
	ActionHistory   []string `json:"action_history"`
	// Metadata is the observation's metadata (episode_id, question_id,
	// database_name; once done correct and episode_stats): inside the
	// observation, whose OpenEnv type has a metadata field, since OpenEnv's
	// ResetResponse and StepResponse forbid fields beside observation,
	// reward and done.
	Metadata map[string]any `json:"metadata,omitempty"`
}

// ResultJSON answers reset and step: exactly OpenEnv's {observation,
// reward, done}; the observation carries its metadata, and over HTTP the
// session id travels in the X-Session-Id header and the cookie.
type ResultJSON struct {
	Observation ObservationJSON `json:"observation"`
	// Reward is null after reset, as in OpenEnv.
	Reward *float64 `json:"reward"`
	Done   bool     `json:"done"`
}

// EncodeResult is the answer to a reset (reset set: reward null) or a
// step.
func EncodeResult(obs sqlenv.Observation, reset bool) ResultJSON {
	r := ResultJSON{
		Observation: ObservationJSON{
			Question:        obs.Question,
			SchemaInfo:      obs.SchemaInfo,
			Result:          obs.Result,
			Error:           obs.Error,
			StepCount:       obs.StepCount,
			BudgetRemaining: obs.BudgetRemaining,
			ActionHistory:   obs.ActionHistory,
			Metadata:        obs.Metadata,
		},
		Done: obs.Done,
	}
	if r.Observation.ActionHistory == nil {
		r.Observation.ActionHistory = []string{} // a list, never null, for Python clients
	}
	if !reset {
		reward := obs.Reward
		r.Reward = &reward
	}
	return r
}

// ResultWire is ResultJSON as a client reads it.
type ResultWire struct {
	Observation ObservationJSON `json:"observation"`
	Reward      *float64        `json:"reward"`
	Done        bool            `json:"done"`
}

// Decode restores the sqlenv.Observation the server's environment
// returned: reward and done back inside, a null reward as 0, an empty
// history as nil and episode_stats as a sqlenv.EpisodeStats, as in process.
func (r *ResultWire) Decode() (sqlenv.Observation, error) {
	o := r.Observation
	obs := sqlenv.Observation{
		Question:        o.Question,
		SchemaInfo:      o.SchemaInfo,
		Result:          o.Result,
		Error:           o.Error,
		StepCount:       o.StepCount,
		BudgetRemaining: o.BudgetRemaining,
		Done:            r.Done,
		Metadata:        o.Metadata,
	}
	if o.ActionHistory != nil {
		obs.ActionHistory = o.ActionHistory
	}
	if r.Reward != nil {
		obs.Reward = *r.Reward
	}
	if m, ok := o.Metadata[sqlenv.MetaStats].(map[string]any); ok {
		// Only at the end of an episode: a second pass is cheap enough.
		var st sqlenv.EpisodeStats
		if b, err := json.Marshal(m); err == nil && StrictUnmarshal(b, &st) == nil {
			obs.Metadata[sqlenv.MetaStats] = st
		}
	}
	return obs, nil
}

// StateJSON is OpenEnv's state ({episode_id, step_count}, episode_id null
// before the first reset) with sqlenv's question_id and done, and the
// running episode's reward components when the environment reports them
// (training reads them when it cuts an episode short).
type StateJSON struct {
	EpisodeID    *string              `json:"episode_id"`
	StepCount    int                  `json:"step_count"`
	QuestionID   string               `json:"question_id,omitempty"`
	Done         bool                 `json:"done"`
	EpisodeStats *sqlenv.EpisodeStats `json:"episode_stats,omitempty"`
	SessionID    string               `json:"session_id,omitempty"`
}

// statsEnv is an environment that reports its episode's reward components
// (sqlenv.Environment, and the clients).
type statsEnv interface{ Stats() sqlenv.EpisodeStats }

// EncodeState reads env's state (and stats); the caller holds the
// session's lock.
func EncodeState(env sqlenv.Env) StateJSON {
	st := env.State()
	s := StateJSON{StepCount: st.StepCount, QuestionID: st.QuestionID, Done: st.Done}
	if st.EpisodeID != "" {
		s.EpisodeID = &st.EpisodeID
		if se, ok := env.(statsEnv); ok {
			stats := se.Stats()
			s.EpisodeStats = &stats
		}
	}
	return s
}

// State is the sqlenv.State the state object stands for.
func (s StateJSON) State() sqlenv.State {
	st := sqlenv.State{StepCount: s.StepCount, QuestionID: s.QuestionID, Done: s.Done}
	if s.EpisodeID != nil {
		st.EpisodeID = *s.EpisodeID
	}
	return st
}

// StrictUnmarshal decodes raw into v, refusing unknown fields.
func StrictUnmarshal(raw []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.DisallowUnknownFields()
	return d.Decode(v)
}
