package training

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/gosqlenv/gosqlenv/training/internal/atomicfile"
)

// Run states: what a training stage's output directory says of its latest
// attempt, so that a later step (a notebook's next cell, another process)
// knows whether the checkpoint it would start from is a finished run's —
// and says so — instead of taking whatever checkpoint has the highest
// number.

// RunStateFile, in a stage's output directory, holds its RunState.
const RunStateFile = "run.json"

// The statuses of a RunState.
const (
	RunRunning   = "running"   // started, not ended (or the process was killed)
	RunCompleted = "completed" // every step done
	RunStopped   = "stopped"   // ended early: interrupted, or an error
)

// RunState is how the latest attempt of a training stage went.
type RunState struct {
	Stage      string    `json:"stage"`
	Status     string    `json:"status"`
	Started    time.Time `json:"started"`
	Ended      time.Time `json:"ended,omitzero"`
	Step       int       `json:"step"` // steps done when it ended (or when it started)
	TotalSteps int       `json:"total_steps"`
	// Checkpoint is the checkpoint directory the attempt ended with.
	Checkpoint string `json:"checkpoint,omitempty"`
	// Error says why a stopped attempt stopped.
	Error string `json:"error,omitempty"`
	// From names the run whose model this attempt started from (GRPO: the
	// SFT warm-up's attempt, StageRunID), so that a later step can tell
	// whether it followed the latest one.
	From string `json:"from,omitempty"`
}

// StageRunID names the latest attempt of the stage whose outputs are in
// dir — its stage, start time and checkpoint — or "" when dir has no run
// state. GRPO records its SFT warm-up's in RunState.From.
func StageRunID(dir string) string {
	st, ok, err := ReadRunState(dir)
	if err != nil || !ok {
		return ""
	}
	return fmt.Sprintf("%s run started %s (%s)", st.Stage, st.Started.UTC().Format(time.RFC3339Nano), st.Checkpoint)
}

// ReadRunState reads dir's run state; ok is false when dir has none (a
// stage that never ran, or ran before run states existed).
func ReadRunState(dir string) (st RunState, ok bool, err error) {
	b, err := os.ReadFile(filepath.Join(dir, RunStateFile))
	if errors.Is(err, fs.ErrNotExist) {
		return st, false, nil
	}
	if err != nil {
		return st, false, err
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return st, false, fmt.Errorf("%s: %w", filepath.Join(dir, RunStateFile), err)
	}
	return st, true, nil
}

// String reads like "completed at 12:03:09 UTC after 174 of 174 steps
// (checkpoint-174)" or "stopped at 12:05:40 UTC after 31 of 174 steps:
// context canceled (checkpoint-31)".
func (s RunState) String() string {
	when := s.Ended
	if s.Status == RunRunning {
		when = s.Started
	}
	text := fmt.Sprintf("%s at %s after %d of %d steps", s.Status, when.UTC().Format("15:04:05 MST"), s.Step, s.TotalSteps)
	if s.Status == RunRunning {
		text = fmt.Sprintf("started at %s and never ended (still running, or its process was killed) at step %d of %d", when.UTC().Format("15:04:05 MST"), s.Step, s.TotalSteps)
	}
	if s.Error != "" {
		text += ": " + s.Error
	}
	if s.Checkpoint != "" {
		text += " (" + s.Checkpoint + ")"
	}
	return text
}

// trackRun records a stage's attempt in dir: a fresh attempt (from step 0)
// first removes what an earlier attempt of the stage wrote there — its
// metrics and checkpoints — so that its outputs are its own; the state says
// running until end records how it ended.
func trackRun(dir, stage string, from, total int, source string) (end func(steps int, err error), err error) {
	if from == 0 {
		if err := clearStage(dir); err != nil {
			return nil, err
		}
	}
	st := RunState{Stage: stage, Status: RunRunning, Started: time.Now().UTC(), Step: from, TotalSteps: total, From: source}
	if err := writeRunState(dir, st); err != nil {
		return nil, err
	}
	return func(steps int, runErr error) {
		st.Ended, st.Step, st.Status = time.Now().UTC(), steps, RunCompleted
		if runErr != nil || steps < total {
			st.Status = RunStopped
		}
		if runErr != nil {
			st.Error = runErr.Error()
		}
		if c := checkpointDir(dir, steps); steps > 0 {
			if _, err := os.Stat(filepath.Join(c, "trainer_state.json")); err == nil {
				st.Checkpoint = filepath.Base(c)
			}
		}
		if err := writeRunState(dir, st); err != nil {
			fmt.Fprintln(os.Stderr, "training: record how the run ended:", err)
		}
	}, nil
}

// clearStage removes a stage's metrics, checkpoints and run state from dir.
func clearStage(dir string) error {
	for _, name := range []string{MetricsFile, RunStateFile} {
		if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	old, err := filepath.Glob(filepath.Join(dir, "checkpoint-*"))
	if err != nil {
		return err
	}
	for _, c := range old {
		if err := os.RemoveAll(c); err != nil {
			return err
		}
	}
	return nil
}

func writeRunState(dir string, st RunState) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Write(filepath.Join(dir, RunStateFile), append(b, '\n'))
}
