// Package explore plays an episode of the SQL environment by hand across
// notebook cells (explore_sqlenv.ipynb): Start picks a question, each Step
// plays one action and shows what a model would see. It depends on the
// environment only — not on the model or training code — so that its cells
// link and run in about a second.
package explore

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/gosqlenv/gosqlenv/notebooks/cell"
	"github.com/gosqlenv/gosqlenv/sqlenv"
	"github.com/gosqlenv/gosqlenv/sqlenv/dataset"
	"github.com/gosqlenv/gosqlenv/sqlenv/dataset/bundled"
	"github.com/gosqlenv/gosqlenv/sqlenv/render"
	"github.com/gosqlenv/gosqlenv/sqlenv/sqlitedb"
)

// DefaultStepBudget is the actions an explored episode allows unless
// GOSQLENV_STEP_BUDGET says otherwise: the tiny CPU preset's budget
// (training.TinyPreset), so that a hand-played episode has the budget the
// notebook's model gets.
const DefaultStepBudget = 5

// Session is an episode played by hand across notebook cells. Cells are
// separate programs, so the session lives in a file and every Step replays
// it (the environment is deterministic).
type Session struct {
	QuestionID string          `json:"question_id"`
	Actions    []sqlenv.Action `json:"actions"`
}

func sessionPath() string { return cell.Dir("outputs", "explore_session.json") }

// Start begins a hand-played episode on a question of the dataset (""
// for the first evaluation question) and shows its first observation. An
// unknown question id is refused before anything is saved, so the session
// of an earlier Start stays as it was.
func Start(questionID string) (sqlenv.Observation, error) {
	d, err := openData()
	if err != nil {
		return sqlenv.Observation{}, err
	}
	defer d.close()
	if questionID == "" {
		questionID = d.firstEval
	}
	if !slices.ContainsFunc(d.questions, func(q dataset.QuestionRecord) bool { return q.QuestionID == questionID }) {
		return sqlenv.Observation{}, fmt.Errorf("no question %q in the dataset (%d questions, e.g. %s): explore.Questions(\"\") lists them, explore.Questions(\"bank\") those of one database",
			questionID, len(d.questions), d.exampleIDs(3))
	}
	s := Session{QuestionID: questionID}
	obs, _, err := d.replay(s)
	if err != nil {
		return obs, fmt.Errorf("start question %q: %w", questionID, err)
	}
	if err := cell.Save(sessionPath(), s); err != nil {
		return sqlenv.Observation{}, err
	}
	cell.HTML(render.Observation(obs))
	return obs, nil
}

// Questions shows the dataset's questions — id, database, difficulty and
// text — of one database, or of all of them for "" (the first 200), and
// returns how many there are: the ids explore.Start takes.
func Questions(database string) (int, error) {
	d, err := openData()
	if err != nil {
		return 0, err
	}
	defer d.close()
	var rows [][]string
	n := 0
	for _, q := range d.questions {
		if database != "" && q.DatabaseName != database {
			continue
		}
		n++
		if len(rows) < maxListed {
			rows = append(rows, []string{q.QuestionID, q.DatabaseName, string(q.Difficulty), q.QuestionText})
		}
	}
	if n == 0 {
		return 0, fmt.Errorf("no questions of database %q (databases: %s)", database, strings.Join(d.databases(), ", "))
	}
	cell.HTML(render.Table([]string{"question id", "database", "difficulty", "question"}, rows))
	if n > len(rows) {
		cell.Markdown(fmt.Sprintf("… and %d more: name a database to see its questions.", n-len(rows)))
	}
	return n, nil
}

// maxListed is the most questions Questions shows.
const maxListed = 200

// exampleIDs returns up to n question ids, one per database, for error
// messages.
func (d *data) exampleIDs(n int) string {
	var out []string
	seen := map[string]bool{}
	for _, q := range d.questions {
		if !seen[q.DatabaseName] && len(out) < n {
			seen[q.DatabaseName] = true
			out = append(out, q.QuestionID)
		}
	}
	return strings.Join(out, ", ")
}

// databases lists the databases of the questions, in order.
func (d *data) databases() []string {
	var out []string
	for _, q := range d.questions {
		if !slices.Contains(out, q.DatabaseName) {
			out = append(out, q.DatabaseName)
		}
	}
	return out
}

// Step plays action number n of the session (1 is the first action after
// Start) and shows the observation, the rewards of every step so far and,
// when the episode ends, its reward components. It replays the session's
// first n−1 actions, plays this one and forgets any later ones, so that
// re-running a cell redoes its step instead of adding another; a step whose
// predecessors have not been played is refused, naming the step to run
// first.
func Step(n int, kind sqlenv.ActionType, argument string) (sqlenv.Observation, error) {
	var s Session
	b, err := os.ReadFile(sessionPath())
	if err != nil {
		return sqlenv.Observation{}, fmt.Errorf("no episode started (%s missing): run the cell with explore.Start first", sessionPath())
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return sqlenv.Observation{}, fmt.Errorf("%s: %w: run the cell with explore.Start again", sessionPath(), err)
	}
	switch {
	case n < 1:
		return sqlenv.Observation{}, fmt.Errorf("step %d: steps are numbered from 1 (the first action after explore.Start)", n)
	case n > len(s.Actions)+1:
		return sqlenv.Observation{}, fmt.Errorf("step %d comes after step %d, which has not been played (the episode has %d steps): run the cell of step %d first",
			n, n-1, len(s.Actions), len(s.Actions)+1)
	}
	s.Actions = append(s.Actions[:n-1:n-1], sqlenv.Action{ActionType: kind, Argument: argument})
	d, err := openData()
	if err != nil {
		return sqlenv.Observation{}, err
	}
	defer d.close()
	obs, rows, err := d.replay(s)
	if err != nil {
		return obs, err
	}
	if err := cell.Save(sessionPath(), s); err != nil {
		return obs, err
	}
	cell.HTML(render.Observation(obs))
	cell.HTML(render.Table([]string{"step", "action", "reward", "error"}, rows))
	return obs, nil
}

// data is every question of the dataset's files and their databases.
type data struct {
	questions []dataset.QuestionRecord
	dbs       *sqlenv.Databases
	budget    int
	firstEval string
}

// openData opens the bundled dataset, or the files that the training
// notebook's settings name (GOSQLENV_QUESTIONS_PATH, GOSQLENV_DB_DIR and
// GOSQLENV_EVAL_QUESTIONS_PATH), every question of every database and
// difficulty, with the step budget of GOSQLENV_STEP_BUDGET or
// DefaultStepBudget.
func openData() (*data, error) {
	ctx := context.Background()
	trainPath, evalPath, dbDir := os.Getenv("GOSQLENV_QUESTIONS_PATH"), os.Getenv("GOSQLENV_EVAL_QUESTIONS_PATH"), os.Getenv("GOSQLENV_DB_DIR")
	if trainPath == "" && dbDir == "" {
		paths, err := bundled.Ensure(ctx)
		if err != nil {
			return nil, err
		}
		trainPath, evalPath, dbDir = paths.TrainQuestions, paths.EvalQuestions, paths.DBDir
	} else if trainPath == "" || dbDir == "" {
		return nil, fmt.Errorf("explore: set both GOSQLENV_QUESTIONS_PATH and GOSQLENV_DB_DIR (got %q and %q), or neither for the bundled dataset", trainPath, dbDir)
	}
	d := &data{budget: DefaultStepBudget}
	if v := os.Getenv("GOSQLENV_STEP_BUDGET"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("explore: GOSQLENV_STEP_BUDGET=%q: want a positive number of actions", v)
		}
		d.budget = n
	}
	for _, f := range []struct {
		path  string
		split dataset.Split
	}{{trainPath, dataset.Train}, {evalPath, dataset.Eval}} {
		if f.path == "" {
			continue
		}
		qs, err := dataset.Load(ctx, f.path, dataset.LoadOptions{DBDir: dbDir, Split: f.split})
		if err != nil {
			return nil, err
		}
		if f.split == dataset.Eval && len(qs) > 0 {
			d.firstEval = qs[0].QuestionID
		}
		d.questions = append(d.questions, qs...)
	}
	if d.firstEval == "" && len(d.questions) > 0 {
		d.firstEval = d.questions[0].QuestionID
	}
	d.dbs = sqlenv.OpenDatabases(dbDir, sqlitedb.Limits{})
	return d, nil
}

func (d *data) close() { d.dbs.Close() }

// replay plays the session and returns the last observation and a table of
// the steps' rewards, ending with the episode's reward components when it
// is over.
func (d *data) replay(s Session) (sqlenv.Observation, [][]string, error) {
	ctx := context.Background()
	env, err := sqlenv.New(sqlenv.Config{Questions: d.questions, Databases: d.dbs, StepBudget: d.budget})
	if err != nil {
		return sqlenv.Observation{}, nil, err
	}
	defer env.Close()
	obs, err := env.Reset(ctx, sqlenv.ResetOptions{QuestionID: s.QuestionID})
	if err != nil {
		return obs, nil, err
	}
	var rows [][]string
	for i, a := range s.Actions {
		if obs, err = env.Step(ctx, a); err != nil {
			return obs, nil, err
		}
		rows = append(rows, []string{fmt.Sprint(i + 1), string(a.ActionType) + " " + a.Argument, fmt.Sprintf("%+.3f", obs.Reward), obs.Error})
	}
	st := env.Stats()
	rows = append(rows, []string{"episode", fmt.Sprintf("operational %.3f · progress %.2f · terminal %.1f · correct %v",
		st.Operational, st.Progress, st.Terminal, st.Correct), fmt.Sprintf("%+.3f", st.TotalReward), ""})
	return obs, rows, nil
}
