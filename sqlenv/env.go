package sqlenv

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/gosqlenv/gosqlenv/sqlenv/answer"
	"github.com/gosqlenv/gosqlenv/sqlenv/dataset"
	"github.com/gosqlenv/gosqlenv/sqlenv/sqlitedb"
)

// Config configures an Environment. Only Questions and one of Databases or
// DBDir are required.
type Config struct {
	// Questions the environment draws episodes from.
	Questions []dataset.QuestionRecord
	// Databases shared with other environments. When nil, the environment
	// opens DBDir itself (with Limits) and closes it on Close.
	Databases *Databases
	DBDir     string
	Limits    sqlitedb.Limits
	// StepBudget is the number of steps an episode may take (default 15).
	StepBudget int
	// Reward holds the reward constants (nil: DefaultRewardConfig).
	Reward *RewardConfig
	// Seed seeds the random choice of questions and episode ids (default 0).
	Seed uint64
	// ResultRows is the number of rows a QUERY result shows (default 20).
	ResultRows int
	// SampleRows is the number of rows SAMPLE shows (default 5).
	SampleRows int
	// CellWidth caps the characters shown of one value (default 100).
	CellWidth int
	// ObservationChars caps the characters of a QUERY or SAMPLE result
	// (default 4,000: about 2,000 Qwen tokens, EstimateTokens; a small part
	// of a 1.7B model's context; the tiny preset's training shows the model
	// at most its max_result_chars, 1,200); rows, columns and then cell
	// widths give way and the result's last line says what was cut. At least
	// MinObservationChars; -1: no limit.
	ObservationChars int
	// OrderedAnswers makes the order of a list answer's items and a table
	// answer's rows matter when the gold query ends with ORDER BY. Off (the
	// default, as in the reference environment) lists are sets and tables
	// multisets of rows.
	OrderedAnswers bool
}

// Rules are the settings that decide how an episode plays out — which
// observations and rewards the same actions get — with the defaults
// resolved. Two environments with equal Rules over the same question and
// database file play alike (a remote server is checked for this before
// training trusts it).
type Rules struct {
	StepBudget       int          `json:"step_budget"`
	ResultRows       int          `json:"result_rows"`
	SampleRows       int          `json:"sample_rows"`
	CellWidth        int          `json:"cell_width"`
	ObservationChars int          `json:"observation_chars"` // 0: no limit
	OrderedAnswers   bool         `json:"ordered_answers"`
	Reward           RewardConfig `json:"reward"`
}

// Rules returns the configuration's Rules, defaults filled in.
func (c Config) Rules() Rules {
	r := Rules{StepBudget: c.StepBudget, ResultRows: c.ResultRows, SampleRows: c.SampleRows, CellWidth: c.CellWidth,
		ObservationChars: c.ObservationChars, OrderedAnswers: c.OrderedAnswers, Reward: DefaultRewardConfig()}
	setDefault(&r.StepBudget, DefaultStepBudget)
	setDefault(&r.ResultRows, DefaultResultRows)
	setDefault(&r.SampleRows, DefaultSampleRows)
	setDefault(&r.CellWidth, DefaultCellWidth)
	setDefault(&r.ObservationChars, DefaultObservationChars)
	if r.ObservationChars < 0 {
		r.ObservationChars = 0 // no limit
	}
	if c.Reward != nil {
		r.Reward = *c.Reward
	}
	return r
}

// Default configuration values.
const (
	DefaultStepBudget = 15
	DefaultResultRows = 20
	DefaultSampleRows = 5
	DefaultCellWidth  = 100
	// DefaultObservationChars is Config.ObservationChars's default, and
	// MinObservationChars the least it can be set to.
	DefaultObservationChars = 4000
	MinObservationChars     = 500
)

// Environment is the SQL exploration environment: one episode at a time over
// one question. Its methods are safe to call from several goroutines, but an
// episode is sequential by nature; run many Environments (sharing one
// Databases) for parallel episodes.
type Environment struct {
	cfg     Config
	reward  RewardConfig
	dbs     *Databases
	ownsDBs bool
	byID    map[string]int

	mu     sync.Mutex
	rng    *rand.Rand
	ep     *episode
	closed bool
}

// episode is the state of the running episode.
type episode struct {
	id        string
	q         *dataset.QuestionRecord
	db        *sqlitedb.DB
	gold      *goldEntry
	steps     int
	described []string
	schema    string // renderSchema of db and described ("" until first needed)
	history   []string
	done      bool
	rewards   *rewardTracker
}

// New validates cfg and returns an environment.
func New(cfg Config) (*Environment, error) {
	if len(cfg.Questions) == 0 {
		return nil, errors.New("sqlenv: no questions: Config.Questions is empty")
	}
	if cfg.StepBudget < 0 {
		return nil, fmt.Errorf("sqlenv: step budget %d must be positive", cfg.StepBudget)
	}
	rules := cfg.Rules()
	cfg.StepBudget, cfg.ResultRows, cfg.SampleRows, cfg.CellWidth, cfg.ObservationChars =
		rules.StepBudget, rules.ResultRows, rules.SampleRows, rules.CellWidth, rules.ObservationChars
	e := &Environment{cfg: cfg, reward: rules.Reward, dbs: cfg.Databases, byID: map[string]int{}}
	if e.dbs == nil {
		if cfg.DBDir == "" {
			return nil, errors.New("sqlenv: no databases: set Config.Databases or Config.DBDir")
		}
		e.dbs, e.ownsDBs = OpenDatabases(cfg.DBDir, cfg.Limits), true
	}
	for i, q := range cfg.Questions {
		if _, dup := e.byID[q.QuestionID]; dup {
			return nil, fmt.Errorf("sqlenv: question id %s appears twice", q.QuestionID)
		}
		e.byID[q.QuestionID] = i
	}
	e.rng = rand.New(rand.NewPCG(cfg.Seed, 0x5eed))
	return e, nil
}

func setDefault(v *int, def int) {
	if *v == 0 {
		*v = def
	}
}

// Questions returns the environment's questions (do not modify them).
func (e *Environment) Questions() []dataset.QuestionRecord { return e.cfg.Questions }

// StepBudget is the number of steps an episode may take.
func (e *Environment) StepBudget() int { return e.cfg.StepBudget }

// Reset starts a new episode and returns its first observation: the question
// and the table names.
func (e *Environment) Reset(ctx context.Context, opts ResetOptions) (Observation, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return Observation{}, ErrClosed
	}
	if opts.Seed != nil {
		e.rng = rand.New(rand.NewPCG(uint64(*opts.Seed), 0x5eed))
	}
	var qi int
	if opts.QuestionID != "" {
		i, ok := e.byID[opts.QuestionID]
		if !ok {
			return Observation{}, fmt.Errorf("sqlenv: unknown question id %q", opts.QuestionID)
		}
		qi = i
	} else {
		qi = e.rng.IntN(len(e.cfg.Questions))
	}
	id := opts.EpisodeID
	if id == "" {
		id = fmt.Sprintf("%016x", e.rng.Uint64())
	}
	q := &e.cfg.Questions[qi]
	db, err := e.dbs.Get(q.DatabaseName)
	if err != nil {
		return Observation{}, fmt.Errorf("sqlenv: question %s: %w", q.QuestionID, err)
	}
	gold, err := e.dbs.goldFor(ctx, db, q)
	if err != nil {
		return Observation{}, fmt.Errorf("sqlenv: %w", err)
	}
	e.ep = &episode{id: id, q: q, db: db, gold: gold, rewards: newRewardTracker(e.reward)}
	return e.observe("", "", 0), nil
}

// Step applies one action to the running episode.
func (e *Environment) Step(ctx context.Context, a Action) (Observation, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	switch {
	case e.closed:
		return Observation{}, ErrClosed
	case e.ep == nil:
		return Observation{}, ErrNoEpisode
	case e.ep.done:
		// No side effects: the step count, history and rewards stay as they were.
		return e.observe("", "the episode is over: call reset to start a new one", 0), nil
	case ctx.Err() != nil:
		return Observation{}, ctx.Err()
	}
	ep := e.ep
	ep.steps++
	kind := ActionType(strings.ToUpper(strings.TrimSpace(string(a.ActionType))))
	arg := strings.TrimSpace(a.Argument)
	var result, errText string
	var reward float64
	switch {
	case !validAction(kind):
		errText = fmt.Sprintf("unknown action type %s: use DESCRIBE, SAMPLE, QUERY or ANSWER", quoteValue(string(a.ActionType)))
		reward = ep.rewards.invalid()
	case arg == "":
		errText = fmt.Sprintf("%s needs an argument: %s", kind, argumentHint[kind])
		reward = ep.rewards.invalid()
	case kind == Answer:
		correct := answer.Expected{Text: string(ep.q.GoldAnswer), Type: ep.q.AnswerType,
			Rows: ep.gold.rows, Columns: ep.gold.columns, Question: ep.q.QuestionText,
			Ordered: e.cfg.OrderedAnswers && orderedQuery(ep.q.GoldSQL)}.Check(arg)
		ep.done = true
		ep.rewards.stats.Answered = true
		reward = ep.rewards.terminal(correct)
		if correct {
			result = "Answer submitted: correct."
		} else {
			result = "Answer submitted: incorrect."
		}
	default:
		var err error
		result, errText, reward, err = e.explore(ctx, ep, kind, arg)
		if err != nil {
			ep.steps-- // the caller gave up: the step did not happen
			return Observation{}, err
		}
	}
	ep.history = append(ep.history, summarize(kind, a.ActionType, arg, errText))
	if !ep.done && ep.steps >= e.cfg.StepBudget {
		ep.done = true
		ep.rewards.stats.BudgetExhausted = true
		ep.rewards.stats.Terminal = e.reward.Wrong
		reward += e.reward.Wrong
		ep.rewards.stats.TotalReward += e.reward.Wrong
		result = strings.TrimSpace(result + "\n\nStep budget exhausted: the episode is over without an answer.")
	}
	return e.observe(result, capError(errText), reward), nil
}

var argumentHint = map[ActionType]string{
	Describe: "the name of a table",
	Sample:   "the name of a table",
	Query:    "one SELECT statement",
	Answer:   "the answer to the question",
}

func validAction(t ActionType) bool {
	switch t {
	case Describe, Sample, Query, Answer:
		return true
	}
	return false
}

// explore runs DESCRIBE, SAMPLE or QUERY and scores it. It returns an error,
// and changes nothing, only when ctx ends (the caller's cancellation, not the
// query time limit, which is the agent's error).
func (e *Environment) explore(ctx context.Context, ep *episode, kind ActionType, arg string) (result, errText string, reward float64, err error) {
	progress := -1.0
	// Novelty is judged on the text with case and spacing normalised.
	key := noveltyKey(kind, arg)
	switch kind {
	case Describe, Sample:
		t, ok := ep.db.Table(strings.Trim(arg, "\"`[]';"))
		if !ok {
			errText = fmt.Sprintf("table %s not found; available tables: %s", quoteValue(arg), strings.Join(ep.db.TableNames(), ", "))
			break
		}
		key = string(kind) + "\x00" + strings.ToLower(t.Name)
		if kind == Describe {
			result = renderDescribe(t)
			if !containsFold(ep.described, t.Name) {
				ep.described = append(ep.described, t.Name)
				ep.schema = ""
			}
			break
		}
		res, qerr := ep.db.Query(ctx, fmt.Sprintf("SELECT * FROM %s LIMIT %d", quoteIdent(t.Name), e.cfg.SampleRows))
		if ctx.Err() != nil {
			return "", "", 0, ctx.Err()
		}
		if qerr != nil {
			errText = qerr.Error()
			break
		}
		result = renderRows(res.Columns, res.Rows, int(t.RowCount), false, e.cfg.SampleRows, e.cfg.CellWidth, e.cfg.ObservationChars)
	case Query:
		res, qerr := ep.db.Query(ctx, arg)
		if ctx.Err() != nil {
			return "", "", 0, ctx.Err()
		}
		if qerr != nil {
			errText = queryError(qerr)
			break
		}
		result = renderRows(res.Columns, res.Rows, len(res.Rows), res.Truncated, e.cfg.ResultRows, e.cfg.CellWidth, e.cfg.ObservationChars)
		progress = ep.gold.profile.progress(res.Rows, e.reward)
	}
	return result, errText, ep.rewards.explore(key, errText == "", progress), nil
}

// noveltyKey is kind, a NUL and arg lower-cased with its runs of white
// space collapsed to one space and trimmed, built in one pass.
func noveltyKey(kind ActionType, arg string) string {
	var b strings.Builder
	b.Grow(len(kind) + 1 + len(arg))
	b.WriteString(string(kind))
	b.WriteByte(0)
	space := false
	for _, r := range arg {
		if unicode.IsSpace(r) {
			space = b.Len() > len(kind)+1
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		if r < utf8.RuneSelf {
			if 'A' <= r && r <= 'Z' {
				r += 'a' - 'A'
			}
			b.WriteByte(byte(r))
		} else {
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}

// queryError words a query error for the agent.
func queryError(err error) string {
	var rej *sqlitedb.RejectedError
	switch {
	case errors.As(err, &rej):
		return "query refused: " + rej.Reason
	case errors.Is(err, sqlitedb.ErrTimeout), errors.Is(err, sqlitedb.ErrTooMuchWork):
		return err.Error()
	}
	return "SQL error: " + err.Error()
}

func quoteIdent(name string) string {
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}

// summarize writes the one-line history entry of a step.
func summarize(kind, raw ActionType, arg, errText string) string {
	name := string(kind)
	if !validAction(kind) {
		name = string(raw)
	}
	s := strings.TrimSpace(name + " " + oneLine(arg, 80))
	if errText != "" {
		return s + " → error"
	}
	return s + " → ok"
}

// observe builds the observation of the current episode state.
func (e *Environment) observe(result, errText string, reward float64) Observation {
	ep := e.ep
	meta := map[string]any{
		MetaEpisodeID:    ep.id,
		MetaQuestionID:   ep.q.QuestionID,
		MetaDatabaseName: ep.q.DatabaseName,
	}
	if ep.done {
		meta[MetaCorrect] = ep.rewards.stats.Correct
		meta[MetaStats] = ep.rewards.stats
	}
	return Observation{
		Question:        ep.q.QuestionText,
		SchemaInfo:      ep.schemaInfo(),
		Result:          result,
		Error:           errText,
		StepCount:       ep.steps,
		BudgetRemaining: e.cfg.StepBudget - ep.steps,
		ActionHistory:   append([]string{}, ep.history...), // [] rather than null in JSON
		Done:            ep.done,
		Reward:          reward,
		Metadata:        meta,
	}
}

// schemaInfo is the schema text of the observation, rendered again only
// after a DESCRIBE added a table.
func (ep *episode) schemaInfo() string {
	if ep.schema == "" {
		ep.schema = renderSchema(ep.db, ep.described)
	}
	return ep.schema
}

// State returns the running episode's identity and step count.
func (e *Environment) State() State {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.ep == nil {
		return State{}
	}
	return State{EpisodeID: e.ep.id, StepCount: e.ep.steps, QuestionID: e.ep.q.QuestionID, Done: e.ep.done}
}

// Stats returns the reward components of the running (or last) episode.
func (e *Environment) Stats() EpisodeStats {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.ep == nil {
		return EpisodeStats{}
	}
	return e.ep.rewards.stats
}

// Question returns the record of the running (or last) episode's question.
func (e *Environment) Question() (dataset.QuestionRecord, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.ep == nil {
		return dataset.QuestionRecord{}, false
	}
	return *e.ep.q, true
}

// Close ends the environment; it closes the databases only if it opened them.
func (e *Environment) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil
	}
	e.closed = true
	if e.ownsDBs {
		return e.dbs.Close()
	}
	return nil
}

// orderedQuery reports whether sql orders its result: an ORDER BY outside
// every parenthesis and string.
func orderedQuery(sql string) bool {
	depth := 0
	var quote byte
	lower := strings.ToLower(sql)
	for i := 0; i < len(lower); i++ {
		c := lower[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"' || c == '`':
			quote = c
		case c == '(':
			depth++
		case c == ')':
			depth--
		case depth == 0 && strings.HasPrefix(lower[i:], "order") && (i == 0 || !isWordByte(lower[i-1])):
			rest := strings.TrimLeft(lower[i+5:], " \t\r\n")
			if strings.HasPrefix(rest, "by") && len(rest) > 2 && !isWordByte(rest[2]) {
				return true
			}
		}
	}
	return false
}

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z'
}

// MaxErrorBytes bounds an observation's error text: an argument, or SQLite's
// message quoting one, cannot make every step's observation as large as
// itself.
const MaxErrorBytes = 500

// quoteValue quotes an offending value for an error message, at most 120
// bytes of it and then its length.
func quoteValue(s string) string {
	const keep = 120
	if len(s) <= keep {
		return strconv.Quote(s)
	}
	return strconv.Quote(prefixUTF8(s, keep)) + fmt.Sprintf("… (%d bytes)", len(s))
}

// capError cuts an error text to MaxErrorBytes, saying so.
func capError(s string) string {
	if len(s) <= MaxErrorBytes {
		return s
	}
	note := fmt.Sprintf("… (error cut: %d bytes)", len(s))
	return prefixUTF8(s, MaxErrorBytes-len(note)) + note
}
