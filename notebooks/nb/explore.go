package nb

import (
	"context"
	"fmt"

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
// for the first evaluation question) and shows its first observation.
func Start(questionID string) (sqlenv.Observation, error) {
	p, err := openData()
	if err != nil {
		return sqlenv.Observation{}, err
	}
	defer p.Close()
	if questionID == "" {
		questionID = p.Eval[0].QuestionID
	}
	if err := Save(sessionPath(), Session{QuestionID: questionID}); err != nil {
		return sqlenv.Observation{}, err
	}
	obs, _, err := replay(p, Session{QuestionID: questionID})
	if err == nil {
		HTML(report.Observation(obs))
	}
	return obs, err
}

// Step plays one more action of the session and shows the observation, the
// rewards of every step so far and the episode's reward components.
func Step(kind sqlenv.ActionType, argument string) (sqlenv.Observation, error) {
	var s Session
	if err := Load(sessionPath(), &s); err != nil {
		return sqlenv.Observation{}, err
	}
	s.Actions = append(s.Actions, sqlenv.Action{ActionType: kind, Argument: argument})
	if err := Save(sessionPath(), s); err != nil {
		return sqlenv.Observation{}, err
	}
	p, err := openData()
	if err != nil {
		return sqlenv.Observation{}, err
	}
	defer p.Close()
	obs, rows, err := replay(p, s)
	if err != nil {
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
	// Every question can be explored.
	cfg.DifficultyFilter, cfg.TrainDatabases, cfg.MaxTrainQuestions, cfg.MaxEvalQuestions = nil, nil, 0, 0
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
