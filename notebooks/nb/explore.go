package nb

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/gosqlenv/gosqlenv/sqlenv"
	"github.com/gosqlenv/gosqlenv/training"
	"github.com/gosqlenv/gosqlenv/training/report"
)

// Session is an episode played by hand across notebook cells. Cells are
// separate programs, so the session lives in a file and every Step replays
// it (the environment is deterministic).
type Session struct {
	QuestionID string          `json:"question_id"`
	Actions    []sqlenv.Action `json:"actions"`
}

func sessionPath() string { return Dir("outputs", "explore_session.json") }

// Start begins a hand-played episode on a question of the run's data (""
// for the first evaluation question) and shows its first observation. An
// unknown question id is refused before anything is saved, so the session
// of an earlier Start stays as it was.
func Start(questionID string) (sqlenv.Observation, error) {
	p, err := openData()
	if err != nil {
		return sqlenv.Observation{}, err
	}
	defer p.Close()
	if questionID == "" {
		questionID = p.Eval[0].QuestionID
	}
	s := Session{QuestionID: questionID}
	obs, _, err := replay(p, s)
	if err != nil {
		return obs, fmt.Errorf("start question %q: %w", questionID, err)
	}
	if err := Save(sessionPath(), s); err != nil {
		return sqlenv.Observation{}, err
	}
	HTML(report.Observation(obs))
	return obs, nil
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
		return sqlenv.Observation{}, fmt.Errorf("no episode started (%s missing): run the cell with nb.Start first", sessionPath())
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return sqlenv.Observation{}, fmt.Errorf("%s: %w: run the cell with nb.Start again", sessionPath(), err)
	}
	switch {
	case n < 1:
		return sqlenv.Observation{}, fmt.Errorf("step %d: steps are numbered from 1 (the first action after nb.Start)", n)
	case n > len(s.Actions)+1:
		return sqlenv.Observation{}, fmt.Errorf("step %d comes after step %d, which has not been played (the episode has %d steps): run the cell of step %d first",
			n, n-1, len(s.Actions), len(s.Actions)+1)
	}
	s.Actions = append(s.Actions[:n-1:n-1], sqlenv.Action{ActionType: kind, Argument: argument})
	p, err := openData()
	if err != nil {
		return sqlenv.Observation{}, err
	}
	defer p.Close()
	obs, rows, err := replay(p, s)
	if err != nil {
		return obs, err
	}
	if err := Save(sessionPath(), s); err != nil {
		return obs, err
	}
	HTML(report.Observation(obs))
	HTML(report.Table([]string{"step", "action", "reward", "error"}, rows))
	return obs, nil
}

func openData() (*training.Pipeline, error) {
	cfg, _, err := RunConfig()
	if err != nil {
		return nil, err
	}
	// Every question of the dataset's files can be explored; generated
	// questions of every database would take most of a minute to make at
	// each step.
	cfg.DifficultyFilter, cfg.TrainDatabases, cfg.MaxTrainQuestions, cfg.MaxEvalQuestions = nil, nil, 0, 0
	cfg.TrainGenerated, cfg.HeldoutGenerated = 0, 0
	return training.OpenData(context.Background(), cfg)
}

// replay plays the session and returns the last observation, a table of
// step rewards and, when done, shows the reward components.
func replay(p *training.Pipeline, s Session) (sqlenv.Observation, [][]string, error) {
	ctx := context.Background()
	e, err := p.NewEnv()
	if err != nil {
		return sqlenv.Observation{}, nil, err
	}
	defer e.Close()
	obs, err := e.Reset(ctx, sqlenv.ResetOptions{QuestionID: s.QuestionID})
	if err != nil {
		return obs, nil, err
	}
	var rows [][]string
	for i, a := range s.Actions {
		if obs, err = e.Step(ctx, a); err != nil {
			return obs, nil, err
		}
		rows = append(rows, []string{fmt.Sprint(i + 1), string(a.ActionType) + " " + a.Argument, fmt.Sprintf("%+.3f", obs.Reward), obs.Error})
	}
	if env, ok := e.(*sqlenv.Environment); ok {
		st := env.Stats()
		rows = append(rows, []string{"episode", fmt.Sprintf("operational %.3f · progress %.2f · terminal %.1f · correct %v",
			st.Operational, st.Progress, st.Terminal, st.Correct), fmt.Sprintf("%+.3f", st.TotalReward), ""})
	}
	return obs, rows, nil
}
