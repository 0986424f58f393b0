package raft

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"

	"github.com/gosqlenv/gosqlenv/training"
	"github.com/gosqlenv/gosqlenv/training/optim"
	"github.com/gosqlenv/gosqlenv/training/qwen3"
)

// Files a run writes in Config.OutputDir.
const (
	// LogFile holds one CycleStats JSON object per completed cycle.
	LogFile = "raft_log.jsonl"
	// StateFile records the completed cycles (what Resume continues from).
	StateFile = "raft_state.json"
	// SamplesDir holds cycle-N.jsonl per cycle: every candidate with its
	// reward, verdict, verifier details and whether it was kept (SampleRecord).
	SamplesDir = "samples"
)

// SampleRecord is one line of a cycle's samples file.
type SampleRecord struct {
	PromptID string  `json:"prompt_id"`
	Text     string  `json:"text"`
	Reward   float64 `json:"reward"`
	Success  bool    `json:"success"`
	Kept     bool    `json:"kept"`
	Details  string  `json:"details,omitempty"`
}

// writeSamples records a cycle's candidates, in sampling order.
func writeSamples(path string, cands []Candidate, sel Selected) error {
	kept := make([]bool, len(cands))
	for _, i := range sel.KeptIndex {
		kept[i] = true
	}
	var buf []byte
	for i, c := range cands {
		r := c.Reward
		if math.IsNaN(r) || math.IsInf(r, 0) {
			r = 0 // JSON has no NaN; Details says why there was no score
		}
		line, err := json.Marshal(SampleRecord{PromptID: c.PromptID, Text: c.Text, Reward: r, Success: c.Success, Kept: kept[i], Details: c.Details})
		if err != nil {
			return err
		}
		buf = append(append(buf, line...), '\n')
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, buf, 0o644)
}

// CycleStats is what one cycle did; the log holds one per cycle.
type CycleStats struct {
	// Cycle counts from 1.
	Cycle        int     `json:"cycle"`
	Temperature  float64 `json:"temperature"`
	LearningRate float64 `json:"learning_rate"`
	Prompts      int     `json:"prompts"`
	// Total candidates sampled, Unique after deduplication, AboveThreshold of
	// those, and Kept for fine-tuning; KeptRate = Kept / Total.
	Total          int     `json:"total"`
	Unique         int     `json:"unique"`
	AboveThreshold int     `json:"above_threshold"`
	Kept           int     `json:"kept"`
	KeptRate       float64 `json:"kept_rate"`
	// MeanReward over all candidates, MeanKeptReward over the kept ones (NaN
	// rewards excluded; 0 when there are none).
	MeanReward     float64 `json:"mean_reward"`
	MeanKeptReward float64 `json:"mean_kept_reward"`
	// SuccessRate is the fraction of candidates the verifier accepted;
	// PromptSuccessRate the fraction of prompts with at least one (pass@n).
	SuccessRate       float64 `json:"success_rate"`
	PromptSuccessRate float64 `json:"prompt_success_rate"`
	// RewardHistogram counts rewards in HistogramBins bins over [0, 1].
	RewardHistogram []int `json:"reward_histogram"`
	// Fine-tuning: optimizer steps, trained sequences and tokens, and the
	// mean per-token NLL of the cycle's first and last step.
	TrainSteps     int     `json:"train_steps"`
	TrainSequences int     `json:"train_sequences"`
	TrainTokens    float64 `json:"train_tokens"`
	LossFirst      float64 `json:"loss_first"`
	LossLast       float64 `json:"loss_last"`
	// Seconds spent sampling + verifying, and fine-tuning.
	SampleSeconds float64 `json:"sample_seconds"`
	TrainSeconds  float64 `json:"train_seconds"`
	// Checkpoint is the cycle's checkpoint directory.
	Checkpoint string `json:"checkpoint"`
}

// state is raft_state.json.
type state struct {
	CompletedCycles int    `json:"completed_cycles"`
	OptimizerSteps  int    `json:"optimizer_steps"`
	Checkpoint      string `json:"checkpoint"`
	Config          Config `json:"config"`
}

// Trainer runs RAFT cycles: sample and score candidates from Source, Select,
// fine-tune the Learner's model on the kept samples, checkpoint.
type Trainer struct {
	Config  Config
	Source  Source
	Learner *training.Learner
	// TokenizerDir, when set, is copied into every checkpoint.
	TokenizerDir string
	// Progress, when set, receives a line per cycle.
	Progress io.Writer
	// OnCycle, when set, receives each cycle's statistics (notebook displays).
	OnCycle func(CycleStats)
	// History holds the statistics of every completed cycle, resumed ones included.
	History []CycleStats
}

// New checks cfg and prepares a trainer of model; the source must sample
// from the same model (its Generator) so that each cycle sees the last
// cycle's fine-tuning.
func New(cfg Config, model *qwen3.Model, src Source) (*Trainer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if model == nil || src == nil {
		return nil, errors.New("raft: New needs a model and a source")
	}
	return &Trainer{Config: cfg, Source: src,
		Learner: training.NewLearner(model, optim.AdamWConfig{WeightDecay: cfg.WeightDecay, MaxGradNorm: cfg.MaxGradNorm})}, nil
}

// Run runs the remaining cycles and returns the statistics of all of them.
// With Config.Resume it first restores the model, optimizer state and log of
// the last completed cycle found in OutputDir. Cancelling ctx stops between
// stages; completed cycles stay saved and resumable.
func (t *Trainer) Run(ctx context.Context) ([]CycleStats, error) {
	if err := t.Config.Validate(); err != nil {
		return nil, err
	}
	first, err := t.restore()
	if err != nil {
		return nil, err
	}
	for c := first; c < t.Config.NumCycles; c++ {
		st, err := t.cycle(ctx, c)
		if err != nil {
			return t.History, err
		}
		t.History = append(t.History, st)
		if t.OnCycle != nil {
			t.OnCycle(st)
		}
		if t.Progress != nil {
			fmt.Fprintf(t.Progress, "raft cycle %d/%d: %d sampled, %d above %.2f, %d kept (%.1f%%), mean reward %.3f, success %.1f%%, loss %.3f→%.3f, %.0fs+%.0fs\n",
				st.Cycle, t.Config.NumCycles, st.Total, st.AboveThreshold, t.Config.RewardThreshold, st.Kept, 100*st.KeptRate,
				st.MeanReward, 100*st.SuccessRate, st.LossFirst, st.LossLast, st.SampleSeconds, st.TrainSeconds)
		}
	}
	return t.History, nil
}

// restore returns the first cycle to run: 0 for a new run, or the cycle
// after the last completed one when resuming.
func (t *Trainer) restore() (int, error) {
	dir := t.Config.OutputDir
	data, err := os.ReadFile(filepath.Join(dir, StateFile))
	if errors.Is(err, os.ErrNotExist) {
		return 0, os.MkdirAll(dir, 0o755)
	}
	if err != nil {
		return 0, fmt.Errorf("raft: %w", err)
	}
	if !t.Config.Resume {
		return 0, fmt.Errorf("raft: output_dir %s already holds a RAFT run (%s): set resume to continue it, or choose another output_dir", dir, StateFile)
	}
	var st state
	if err := json.Unmarshal(data, &st); err != nil {
		return 0, fmt.Errorf("raft: resume from %s: %w", filepath.Join(dir, StateFile), err)
	}
	if st.Checkpoint != "" {
		if err := t.Learner.Load(filepath.Join(dir, st.Checkpoint)); err != nil {
			return 0, fmt.Errorf("raft: resume from %s: %w", filepath.Join(dir, st.Checkpoint), err)
		}
	}
	t.Learner.Steps = st.OptimizerSteps
	history, err := ReadLog(filepath.Join(dir, LogFile))
	if err != nil {
		return 0, fmt.Errorf("raft: resume: %w", err)
	}
	if len(history) > st.CompletedCycles {
		history = history[:st.CompletedCycles]
	}
	t.History = history
	return st.CompletedCycles, nil
}

// cycle runs cycle c (0-based): sample → select → fine-tune → checkpoint.
func (t *Trainer) cycle(ctx context.Context, c int) (CycleStats, error) {
	cfg := t.Config
	st := CycleStats{Cycle: c + 1, Temperature: cfg.TemperatureAt(c), LearningRate: cfg.LearningRateAt(c), Prompts: t.Source.NumPrompts()}
	start := time.Now()
	cands, err := t.Source.Candidates(ctx, Request{Cycle: c, SamplesPerPrompt: cfg.SamplesPerPrompt, Temperature: st.Temperature,
		TopP: cfg.TopP, TopK: cfg.TopK, MaxNewTokens: cfg.MaxNewTokens, MaxWorkers: cfg.MaxWorkers, Seed: cfg.Seed + int64(c)})
	if err != nil {
		return st, err
	}
	st.SampleSeconds = time.Since(start).Seconds()
	sel := Select(cands, cfg, uint64(cfg.Seed)+uint64(c))
	summarize(&st, cands, sel)
	if err := writeSamples(filepath.Join(cfg.OutputDir, SamplesDir, fmt.Sprintf("cycle-%d.jsonl", c+1)), cands, sel); err != nil {
		return st, fmt.Errorf("raft: %w", err)
	}

	start = time.Now()
	var samples []training.Sample
	for _, k := range sel.Kept {
		samples = append(samples, k.Samples...)
	}
	st.TrainSequences = len(samples)
	for epoch := 0; epoch < cfg.EpochsPerCycle && len(samples) > 0; epoch++ {
		order := rand.New(rand.NewPCG(uint64(cfg.Seed), uint64(c)<<16|uint64(epoch))).Perm(len(samples))
		for b := 0; b < len(order); b += cfg.BatchSize {
			if err := ctx.Err(); err != nil {
				return st, err
			}
			batch := make([]training.Sample, 0, cfg.BatchSize)
			for _, i := range order[b:min(b+cfg.BatchSize, len(order))] {
				batch = append(batch, samples[i])
			}
			res, err := t.Learner.NLLStep(batch, cfg.GradientAccumulationSteps, cfg.LengthBucket, st.LearningRate)
			if err != nil {
				return st, fmt.Errorf("raft: cycle %d fine-tuning: %w", c+1, err)
			}
			if st.TrainSteps == 0 {
				st.LossFirst = res.Loss
			}
			st.LossLast = res.Loss
			st.TrainSteps++
			st.TrainTokens += res.Tokens
		}
	}
	st.TrainSeconds = time.Since(start).Seconds()
	if st.Checkpoint, err = t.save(c, st); err != nil {
		return st, err
	}
	return st, nil
}

// summarize fills the cycle's counts and rates.
func summarize(st *CycleStats, cands []Candidate, sel Selected) {
	st.Total, st.Unique, st.AboveThreshold, st.Kept = len(cands), sel.Unique, sel.AboveThreshold, len(sel.Kept)
	rewards := make([]float64, len(cands))
	solved := map[int]bool{}
	successes := 0
	for i, c := range cands {
		rewards[i] = c.Reward
		if c.Success {
			successes++
			solved[c.Prompt] = true
		}
	}
	st.RewardHistogram = Histogram(rewards)
	st.MeanReward = mean(rewards)
	kept := make([]float64, len(sel.Kept))
	for i, k := range sel.Kept {
		kept[i] = k.Reward
	}
	st.MeanKeptReward = mean(kept)
	if st.Total > 0 {
		st.KeptRate = float64(st.Kept) / float64(st.Total)
		st.SuccessRate = float64(successes) / float64(st.Total)
	}
	if st.Prompts > 0 {
		st.PromptSuccessRate = float64(len(solved)) / float64(st.Prompts)
	}
}

func mean(xs []float64) float64 {
	sum, n := 0.0, 0
	for _, x := range xs {
		if !math.IsNaN(x) {
			sum += x
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return sum / float64(n)
}

// save writes cycle c's checkpoint, appends its statistics to the log and
// then records it as completed (in that order, so that a crash in between
// leaves a resumable state).
func (t *Trainer) save(c int, st CycleStats) (string, error) {
	name := fmt.Sprintf("cycle-%d", c+1)
	st.Checkpoint = name
	dir := t.Config.OutputDir
	if err := t.Learner.Save(filepath.Join(dir, name), t.Learner.Model.DType, t.TokenizerDir); err != nil {
		return "", fmt.Errorf("raft: checkpoint %s: %w", filepath.Join(dir, name), err)
	}
	line, err := json.Marshal(st)
	if err != nil {
		return "", err
	}
	if err := appendLine(filepath.Join(dir, LogFile), line, c); err != nil {
		return "", fmt.Errorf("raft: log: %w", err)
	}
	data, err := json.MarshalIndent(state{CompletedCycles: c + 1, OptimizerSteps: t.Learner.Steps, Checkpoint: name, Config: t.Config}, "", "  ")
	if err != nil {
		return "", err
	}
	tmp := filepath.Join(dir, StateFile+".tmp")
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return "", fmt.Errorf("raft: state: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, StateFile)); err != nil {
		return "", fmt.Errorf("raft: state: %w", err)
	}
	return name, nil
}

// appendLine writes line as record number index of a JSON-lines file,
// dropping records from an interrupted later cycle first.
func appendLine(path string, line []byte, index int) error {
	old, err := ReadLog(path)
	if err != nil {
		return err
	}
	var buf []byte
	for _, st := range old[:min(index, len(old))] {
		b, err := json.Marshal(st)
		if err != nil {
			return err
		}
		buf = append(append(buf, b...), '\n')
	}
	buf = append(append(buf, line...), '\n')
	return os.WriteFile(path, buf, 0o644)
}

// ReadLog reads a run's raft_log.jsonl (none yet: empty).
func ReadLog(path string) ([]CycleStats, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []CycleStats
	dec := json.NewDecoder(f)
	for {
		var st CycleStats
		if err := dec.Decode(&st); errors.Is(err, io.EOF) {
			return out, nil
		} else if err != nil {
			return nil, fmt.Errorf("%s: record %d: %w", path, len(out)+1, err)
		}
		out = append(out, st)
	}
}
