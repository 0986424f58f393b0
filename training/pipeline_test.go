package training

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/gosqlenv/gosqlenv/sqlenv"
	"github.com/gosqlenv/gosqlenv/training/qwen3"
	"github.com/gosqlenv/gosqlenv/training/tokenizer"
)

// tinyPipelineConfig is a CPU-quick configuration of the tiny preset.
func tinyPipelineConfig(out string) GRPOConfig {
	cfg := DefaultGRPOConfig()
	cfg.ModelName, cfg.Precision, cfg.OutputDir = TinyModelName, "float32", out
	cfg.NumGenerations, cfg.PerDeviceTrainBatchSize, cfg.GradientAccumulationSteps = 2, 2, 1
	cfg.MaxSteps, cfg.LoggingSteps, cfg.LearningRate = 2, 1, 1e-3
	cfg.StepBudget, cfg.MaxNewTokens, cfg.MaxCompletionLength, cfg.MaxResultChars = 3, 16, 48, 200
	cfg.MaxTrainQuestions, cfg.MaxEvalQuestions = 8, 2
	cfg.SFTMaxQuestions, cfg.SFTEpochs, cfg.SFTLearningRate = 4, 1, 1e-3
	cfg.LengthBucket = 128
	return cfg
}

// TestPipelineSFTThenGRPO runs the whole pipeline of the tiny preset on the
// bundled data: SFT warm-up, GRPO steps, checkpoint reload, evaluation.
func TestPipelineSFTThenGRPO(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end training run")
	}
	out := t.TempDir()
	cfg := tinyPipelineConfig(out)
	ctx := context.Background()
	p, err := NewPipeline(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	unseen, _ := p.EvalQuestions(SplitUnseen)
	if p.Model.Config.VocabSize > TinyVocabSize || len(p.Train) != 8 || len(unseen) != 2 {
		t.Fatalf("pipeline: vocab %d, %d train, %d unseen-database questions evaluated", p.Model.Config.VocabSize, len(p.Train), len(unseen))
	}
	sftLog, _ := NewRunLog(filepath.Join(out, "sft"), 1, nil)
	if err := p.RunSFT(ctx, sftLog); err != nil {
		t.Fatal(err)
	}
	log, _ := NewRunLog(out, 1, nil)
	tr, err := p.NewGRPO(log)
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Train(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("SFT loss %v; GRPO reward %v, time/generation %v, time/loss_backward %v, time/environment %v",
		Series(sftLog.History, "loss"), Series(log.History, "reward"), Series(log.History, "time/generation"),
		Series(log.History, "time/loss_backward"), Series(log.History, "time/environment"))
	ckpt := filepath.Join(out, "checkpoint-2")
	tk, err := tokenizer.Load(ckpt)
	if err != nil || tk.VocabSize() != p.Model.Config.VocabSize {
		t.Fatalf("checkpoint tokenizer: %v", err)
	}
	m, _, err := qwen3.LoadModel(ctx, p.Backend, ckpt, qwen3.LoadOptions{DType: dtypes.Float32})
	if err != nil {
		t.Fatal(err)
	}
	a, _ := m.Logits([][]int32{{1, 2, 3}})
	b, _ := p.Model.Logits([][]int32{{1, 2, 3}})
	for i := range a[0][2] {
		if a[0][2][i] != b[0][2][i] {
			t.Fatal("the checkpoint's model computes different logits")
		}
	}
	for _, policy := range []string{PolicyRandom, PolicyGRPO} {
		var events []EvalProgress
		p.OnEvaluate = func(e EvalProgress) { events = append(events, e) }
		if _, err := p.EvaluateAndRecord(ctx, policy); err != nil {
			t.Fatal(err)
		}
		checkEvalProgress(t, p, policy, events)
	}
	checkEvalSummary(t, out, p, []string{PolicyRandom, PolicyGRPO})
}

// checkEvalProgress checks what OnEvaluate was told during one policy's
// evaluation: every split in order, each from 0 to all its episodes without
// going back, and for a model also after its turns.
func checkEvalProgress(t *testing.T, p *Pipeline, policy string, events []EvalProgress) {
	t.Helper()
	perSplit := map[int][]EvalProgress{}
	for _, e := range events {
		if e.Policy != policy || e.Splits != len(Splits) || e.Split != Splits[e.SplitNumber-1] {
			t.Fatalf("%s: progress %+v", policy, e)
		}
		perSplit[e.SplitNumber] = append(perSplit[e.SplitNumber], e)
	}
	for n := 1; n <= len(Splits); n++ {
		es := perSplit[n]
		qs, _ := p.EvalQuestions(Splits[n-1])
		want := len(qs) * (1 + p.Config.EvalSamples)
		minEvents := 2
		if policy != PolicyRandom {
			minEvents = 3 // the start, at least one turn, the end
		}
		if len(es) < minEvents || es[0].Done != 0 || es[len(es)-1].Done != want {
			t.Fatalf("%s split %d: %d progress reports from %+v to %+v, want ≥ %d from 0 to %d episodes", policy, n, len(es), es[0], es[len(es)-1], minEvents, want)
		}
		for i := 1; i < len(es); i++ {
			if es[i].Done < es[i-1].Done || es[i].Episodes != want || es[i].Elapsed < es[i-1].Elapsed {
				t.Fatalf("%s split %d: progress goes back: %+v then %+v", policy, n, es[i-1], es[i])
			}
		}
	}
}

// checkEvalSummary checks the eval_summary.json of a run: every split with
// every policy, question counts as evaluated, rates in [0, 1], and the
// transcripts beside it on the same questions for every policy.
func checkEvalSummary(t *testing.T, dir string, p *Pipeline, policies []string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, EvalSummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		Greedy     *float64           `json:"greedy_success"`
		Sampled    *float64           `json:"sampled_success"`
		SE         *float64           `json:"sampled_success_se"`
		Questions  int                `json:"questions"`
		ByQuestion map[string]float64 `json:"sampled_by_question"`
	}
	var raw map[string]map[string]result
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatalf("eval_summary.json: %v\n%s", err, b)
	}
	for _, split := range Splits {
		qs, _ := p.EvalQuestions(split)
		var first []string
		for _, policy := range policies {
			r, ok := raw[split][policy]
			if !ok {
				t.Fatalf("eval_summary.json has no %s/%s:\n%s", split, policy, b)
			}
			for k, v := range map[string]*float64{"greedy_success": r.Greedy, "sampled_success": r.Sampled, "sampled_success_se": r.SE} {
				if v == nil || *v < 0 || *v > 1 {
					t.Errorf("%s/%s/%s missing or out of [0, 1]:\n%s", split, policy, k, b)
				}
			}
			if r.Questions != len(qs) {
				t.Errorf("%s/%s: %v questions, want %d", split, policy, r.Questions, len(qs))
			}
			if len(r.ByQuestion) != len(qs) {
				t.Errorf("%s/%s: sampled_by_question has %d questions, want %d", split, policy, len(r.ByQuestion), len(qs))
			}
			for _, q := range qs {
				if v, ok := r.ByQuestion[q.QuestionID]; !ok || v < 0 || v > 1 {
					t.Errorf("%s/%s: sampled_by_question[%s] = %v, %v", split, policy, q.QuestionID, v, ok)
				}
			}
			tr, err := ReadTranscripts(dir, policy)
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, ep := range tr[split]["greedy"].Episodes {
				ids = append(ids, ep.QuestionID)
			}
			if len(ids) != len(qs) || (first != nil && !slices.Equal(ids, first)) {
				t.Errorf("%s/%s: greedy episodes on %v, want one per question, the same for every policy (%v)", split, policy, ids, first)
			}
			first = ids
			if n := len(tr[split]["sampled"].Episodes); n != len(qs)*p.Config.EvalSamples {
				t.Errorf("%s/%s: %d sampled episodes, want %d", split, policy, n, len(qs)*p.Config.EvalSamples)
			}
		}
	}
}

// TestInterruptSavesCheckpoint: a cancelled context (Ctrl-C) stops training
// after saving a checkpoint.
func TestInterruptSavesCheckpoint(t *testing.T) {
	out := t.TempDir()
	cfg, model, roller, ids, _ := tinySetup(t, out)
	cfg.MaxSteps = 5
	ctx, cancel := context.WithCancel(context.Background())
	log, _ := NewRunLog(out, 1, nil)
	log.OnLog = func(m Metrics) {
		if m["step"] == 1 {
			cancel()
		}
	}
	tr, err := NewGRPOTrainer(cfg, model, roller, ids, log)
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Train(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Train returned %v, want context.Canceled", err)
	}
	if _, err := os.Stat(filepath.Join(out, "checkpoint-1", "trainer_state.json")); err != nil {
		t.Fatalf("no checkpoint after interruption: %v", err)
	}
	// The run says it stopped, where, and why.
	if st, ok, err := ReadRunState(out); err != nil || !ok || st.Status != RunStopped || st.Step != 1 || st.TotalSteps != 5 ||
		st.Checkpoint != "checkpoint-1" || !strings.Contains(st.Error, "canceled") {
		t.Fatalf("run state after the interruption: %+v (%v)", st, err)
	}
}

// TestErrorSavesCheckpoint: a step that fails (here every environment is
// gone after the first step, so the rollout has no episode left) ends
// Train with its error, after a checkpoint of the steps done.
func TestErrorSavesCheckpoint(t *testing.T) {
	out := t.TempDir()
	qs, newEnv := bundledEnv(t, 3)
	made := 0
	dying := func() (sqlenv.Env, error) {
		made++
		if made > 2 { // the first step's two episodes
			return nil, errors.New("environment server unreachable")
		}
		return newEnv()
	}
	cfg, model, roller, ids, _ := tinySetupOn(t, out, qs, dying)
	cfg.MaxSteps = 5
	tr, err := NewGRPOTrainer(cfg, model, roller, ids, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = tr.Train(context.Background())
	if !errors.Is(err, errNoEpisodes) {
		t.Fatalf("Train returned %v, want errNoEpisodes", err)
	}
	if _, err := os.Stat(filepath.Join(out, "checkpoint-1", "trainer_state.json")); err != nil {
		t.Fatalf("no checkpoint after the error: %v", err)
	}
	// The error says which checkpoint holds the steps done and how to go on.
	if ckpt := filepath.Join(out, "checkpoint-1"); !containsAll(err.Error(), "1 step done is saved in "+ckpt, "resume_from_checkpoint "+ckpt) {
		t.Errorf("the error does not say where the run was saved and how to resume: %v", err)
	}
}

func TestPipelineErrors(t *testing.T) {
	cfg := tinyPipelineConfig(t.TempDir())
	cfg.QuestionsPath, cfg.DBDir = filepath.Join(t.TempDir(), "missing.json"), t.TempDir()
	if _, err := NewPipeline(context.Background(), cfg); err == nil || !errors.Is(err, os.ErrNotExist) && !containsAll(err.Error(), "missing.json", "does not exist") {
		t.Fatalf("missing questions: %v", err)
	}
	empty := filepath.Join(t.TempDir(), "empty.json")
	os.WriteFile(empty, nil, 0o644)
	cfg.QuestionsPath = empty
	if _, err := NewPipeline(context.Background(), cfg); err == nil || !containsAll(err.Error(), "empty.json", "is empty") {
		t.Fatalf("empty questions: %v", err)
	}
	cfg = tinyPipelineConfig(t.TempDir())
	cfg.ModelName = "Qwen/Qwen3-does-not-exist"
	t.Setenv("HF_HUB_OFFLINE", "1")
	t.Setenv("HF_HUB_CACHE", t.TempDir())
	if _, err := NewPipeline(context.Background(), cfg); err == nil || !containsAll(err.Error(), "Qwen/Qwen3-does-not-exist") {
		t.Fatalf("missing model: %v", err)
	}
	if err := withOOMHint(errors.New("RESOURCE_EXHAUSTED: Out of memory allocating 4GiB")); err == nil || !containsAll(err.Error(), "per_device_train_batch_size", "num_generations") {
		t.Fatalf("OOM hint: %v", err)
	}
}

func containsAll(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}
