package training

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gosqlenv/gosqlenv/training/internal/atomicfile"
	"github.com/gosqlenv/gosqlenv/training/qwen3"
	"github.com/gosqlenv/gosqlenv/training/tokenizer"
)

// TrainerState is saved with each checkpoint (trainer_state.json).
type TrainerState struct {
	GlobalStep int        `json:"global_step"`
	Stage      string     `json:"stage"`
	Config     GRPOConfig `json:"config"`
	// SamplesDigest fingerprints the samples a supervised stage (SFT,
	// pre-training) trains on (samplesDigest); empty for GRPO, which
	// draws its own, and in checkpoints written before it existed.
	SamplesDigest string `json:"samples_digest,omitempty"`
	// RolloutCalls is the roller's count of sampled rollout batches, which
	// seeds the next rollout's sampling (GRPO only): a run resumed from the
	// checkpoint samples what the uninterrupted run sampled. 0 in
	// checkpoints written before it existed.
	RolloutCalls int64 `json:"rollout_calls,omitempty"`
}

// checkpointDir is output_dir/checkpoint-<step>.
func checkpointDir(outputDir string, step int) string {
	return filepath.Join(outputDir, fmt.Sprintf("checkpoint-%d", step))
}

// latestCheckpoint returns the complete checkpoint-<step> directory of
// outputDir with the highest step, and its state; "" when there is none. A
// checkpoint is complete when its trainer_state.json, which a save writes
// last, reads: a save cut short (the process killed while writing) leaves a
// directory without one, or with one that does not parse, and is passed
// over for the checkpoint before it, which a run keeps until the next one is
// complete.
func latestCheckpoint(outputDir string) (string, TrainerState, error) {
	entries, err := os.ReadDir(outputDir)
	if err != nil && !os.IsNotExist(err) {
		return "", TrainerState{}, err
	}
	type candidate struct {
		dir  string
		step int
	}
	var cands []candidate
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), "checkpoint-")
		if n, err := strconv.Atoi(rest); e.IsDir() && ok && err == nil {
			cands = append(cands, candidate{filepath.Join(outputDir, e.Name()), n})
		}
	}
	slices.SortFunc(cands, func(a, b candidate) int { return cmp.Compare(b.step, a.step) })
	for _, c := range cands {
		data, err := os.ReadFile(filepath.Join(c.dir, "trainer_state.json"))
		if err != nil {
			continue
		}
		var st TrainerState
		if json.Unmarshal(data, &st) == nil {
			return c.dir, st, nil
		}
	}
	return "", TrainerState{}, nil
}

// SaveCheckpoint writes the model (Hugging Face safetensors + config.json,
// loadable by transformers and by qwen3.LoadWeights), the tokenizer files,
// the optimizer moments and trainer_state.json to
// output_dir/checkpoint-<step>, and returns that directory.
func (t *GRPOTrainer) SaveCheckpoint() (string, error) {
	return saveCheckpoint(t.Learner, t.Config, TrainerState{Stage: "grpo", RolloutCalls: t.Roller.calls}, t.TokenizerDir)
}

// saveCheckpoint writes the learner's checkpoint with st (its step and
// config filled in here) as trainer_state.json.
func saveCheckpoint(l *Learner, cfg GRPOConfig, st TrainerState, tokenizerDir string) (string, error) {
	dir := checkpointDir(cfg.OutputDir, l.Steps)
	if err := l.Save(dir, l.Model.DType, tokenizerDir); err != nil {
		return "", fmt.Errorf("checkpoint: %w", err)
	}
	st.GlobalStep, st.Config = l.Steps, cfg.Redacted()
	state, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return "", err
	}
	// Written last, and whole: its presence marks the checkpoint complete
	// (latestCheckpoint).
	if err := atomicfile.Write(filepath.Join(dir, "trainer_state.json"), state); err != nil {
		return "", fmt.Errorf("checkpoint: %w", err)
	}
	return dir, nil
}

// Save writes the learner's model to dir as Hugging Face safetensors +
// config.json in dtype (loadable by transformers and qwen3.LoadWeights), the
// AdamW moments in float32 under dir/optimizer/{exp_avg,exp_avg_sq}, a
// half-precision model's float32 master weights under dir/optimizer/master
// (so that resuming loses nothing), and,
// when tokenizerDir is not empty, copies of its tokenizer files. The step
// count is the caller's to record (see Load).
func (l *Learner) Save(dir string, dtype dtypes.DType, tokenizerDir string) error {
	if err := l.Model.HostWeights().Save(dir, dtype); err != nil {
		return err
	}
	state := map[string][]*tensors.Tensor{"exp_avg": l.m, "exp_avg_sq": l.v}
	if l.mixed() {
		master, err := l.masterWeights()
		if err != nil {
			return err
		}
		state["master"] = master
	}
	for name, moments := range state {
		w := &qwen3.Weights{Config: l.Model.Config, Tensors: map[string]*tensors.Tensor{}}
		for i, spec := range l.Model.Config.Weights() {
			w.Tensors[spec.Name] = moments[i]
		}
		if err := w.Save(filepath.Join(dir, "optimizer", name), dtypes.Float32); err != nil {
			return fmt.Errorf("optimizer state: %w", err)
		}
	}
	if tokenizerDir != "" {
		for _, f := range []string{tokenizer.TokenizerJSON, tokenizer.TokenizerConfig, tokenizer.VocabJSON, tokenizer.MergesTXT} {
			if err := copyIfExists(filepath.Join(tokenizerDir, f), filepath.Join(dir, f)); err != nil {
				return fmt.Errorf("tokenizer: %w", err)
			}
		}
	}
	return nil
}

// LoadCheckpoint restores the model weights, optimizer moments, step
// count and the roller's sampling counter saved by SaveCheckpoint (to
// resume training exactly where the run stopped).
func (t *GRPOTrainer) LoadCheckpoint(dir string) error {
	st, err := loadCheckpoint(t.Learner, dir)
	if err != nil {
		return err
	}
	t.Roller.calls = st.RolloutCalls
	return nil
}

func loadCheckpoint(l *Learner, dir string) (TrainerState, error) {
	data, err := os.ReadFile(filepath.Join(dir, "trainer_state.json"))
	if err != nil {
		return TrainerState{}, fmt.Errorf("resume: %s is not a checkpoint: %w", dir, err)
	}
	var st TrainerState
	if err := json.Unmarshal(data, &st); err != nil {
		return st, fmt.Errorf("resume: %s: %w", dir, err)
	}
	if err := l.Load(dir); err != nil {
		return st, fmt.Errorf("resume: %w", err)
	}
	l.Steps = st.GlobalStep
	return st, nil
}

// Load restores the model weights, AdamW moments and (for a half-precision
// model, when saved) float32 master weights written by Save, and drops
// accumulated gradients; it leaves Steps to the caller.
func (l *Learner) Load(dir string) error {
	w, err := qwen3.LoadWeights(dir, l.Model.DType)
	if err != nil {
		return err
	}
	ws := make([]*tensors.Tensor, 0, len(w.Tensors))
	for _, spec := range l.Model.Config.Weights() {
		ws = append(ws, w.Tensors[spec.Name])
	}
	if err := l.Model.SetWeights(ws); err != nil {
		return err
	}
	m, v := make([]*tensors.Tensor, 0, len(ws)), make([]*tensors.Tensor, 0, len(ws))
	for name, dst := range map[string]*[]*tensors.Tensor{"exp_avg": &m, "exp_avg_sq": &v} {
		mw, err := qwen3.LoadWeights(filepath.Join(dir, "optimizer", name), dtypes.Float32)
		if err != nil {
			return fmt.Errorf("optimizer state: %w", err)
		}
		for _, spec := range l.Model.Config.Weights() {
			*dst = append(*dst, mw.Tensors[spec.Name])
		}
	}
	replaced := slices.Concat(l.m, l.v, l.acc, l.master)
	l.m, l.v, l.acc = m, v, nil
	l.master, l.installed = nil, nil
	qwen3.Free(replaced)
	if !l.mixed() {
		return nil
	}
	masterDir := filepath.Join(dir, "optimizer", "master")
	if _, err := os.Stat(filepath.Join(masterDir, "config.json")); err != nil {
		return nil // an older or float32 checkpoint: master weights from the model
	}
	mw, err := qwen3.LoadWeights(masterDir, dtypes.Float32)
	if err != nil {
		return fmt.Errorf("master weights: %w", err)
	}
	master := make([]*tensors.Tensor, 0, len(ws))
	for _, spec := range l.Model.Config.Weights() {
		master = append(master, mw.Tensors[spec.Name])
	}
	l.master, l.installed = master, l.Model.Weights()
	return nil
}

func copyIfExists(src, dst string) error {
	in, err := os.Open(src)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
