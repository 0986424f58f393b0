package training

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/gobackend"
	"github.com/gosqlenv/gosqlenv/sqlenv"
	"github.com/gosqlenv/gosqlenv/sqlenv/dataset"
	"github.com/gosqlenv/gosqlenv/sqlenv/sqlitedb"
	"github.com/gosqlenv/gosqlenv/training/qwen3"
)

// tinySetup builds a tiny Qwen3 over the fake byte tokenizer, a roller over
// bundled questions and a small training configuration.
func tinySetup(t *testing.T, outDir string) (GRPOConfig, *qwen3.Model, *Roller, []string, func() (sqlenv.Env, error)) {
	t.Helper()
	qs, newEnv := bundledEnv(t, 3)
	return tinySetupOn(t, outDir, qs, newEnv)
}

// tinySetupOn is tinySetup with rollouts on the environments newEnv makes
// (budget 3, over qs).
func tinySetupOn(t *testing.T, outDir string, qs []dataset.QuestionRecord, newEnv func() (sqlenv.Env, error)) (GRPOConfig, *qwen3.Model, *Roller, []string, func() (sqlenv.Env, error)) {
	t.Helper()
	backend, err := gobackend.New("")
	if err != nil {
		t.Fatal(err)
	}
	w, err := qwen3.RandomWeights(qwen3.TinyConfig(259), 1, dtypes.Float32)
	if err != nil {
		t.Fatal(err)
	}
	model, err := qwen3.New(backend, w)
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultGRPOConfig()
	cfg.OutputDir = outDir
	cfg.Precision = "float32"
	cfg.NumGenerations, cfg.PerDeviceTrainBatchSize, cfg.GradientAccumulationSteps = 2, 2, 1
	cfg.MaxSteps, cfg.LoggingSteps, cfg.LearningRate = 3, 1, 1e-3
	cfg.MaxNewTokens, cfg.MaxCompletionLength, cfg.StepBudget, cfg.MaxResultChars = 24, 72, 3, 120
	cfg.LengthBucket = 64
	roller, err := NewRoller(model, byteTokenizer{}, newEnv, RolloutConfig{
		NumGenerations: cfg.NumGenerations, MaxNewTokens: cfg.MaxNewTokens, MaxCompletionLength: cfg.MaxCompletionLength,
		HistoryPairs: 1, MaxResultChars: cfg.MaxResultChars, Temperature: 1, LengthBucket: 64, Seed: 7,
		SystemPrompt: "Reply ACTION: argument.",
	})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, q := range qs[:6] {
		ids = append(ids, q.QuestionID)
	}
	return cfg, model, roller, ids, newEnv
}

// lengthReward scores a completion by its length: within a group it
// almost always differs, so advantages are non-zero.
var lengthReward = NamedReward{Name: "length", Weight: 1, Func: func(c []string, _ []EpisodeMetadata) []float64 {
	out := make([]float64, len(c))
	for i, s := range c {
		out[i] = float64(len(s)) / 100
	}
	return out
}}

// loggedTrainer returns a GRPO trainer of tinySetup's parts whose metrics
// go to out (logging_steps of cfg).
func loggedTrainer(t *testing.T, cfg GRPOConfig, model *qwen3.Model, roller *Roller, ids []string, out string) *GRPOTrainer {
	t.Helper()
	log, err := NewRunLog(out, cfg.LoggingSteps, nil)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := NewGRPOTrainer(cfg, model, roller, ids, log)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func TestGRPOEndToEndTiny(t *testing.T) {
	out := t.TempDir()
	cfg, model, roller, ids, _ := tinySetup(t, out)
	tr := loggedTrainer(t, cfg, model, roller, ids, out)
	before := model.Weights()
	// A reward that always differs within a group (the completion's length)
	// guarantees non-zero advantages, hence a weight change.
	tr.Rewards = append(tr.Rewards, lengthReward)
	// Before any update the trainer's recomputed log-probs of the sampled
	// tokens equal the sampling log-probs (same prompts, same temperature).
	m, err := tr.Step(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if d := m["sampling/logp_abs_diff_mean"]; d > 1e-4 || m["num_tokens"] == 0 {
		t.Fatalf("recomputed log-probs differ from sampling ones by %g on %g tokens", d, m["num_tokens"])
	}
	for _, k := range []string{"reward", "reward_std", "rewards/correctness/mean", "frac_reward_zero_std", "completions/mean_length",
		"entropy", "clip_ratio/region_mean", "loss", "grad_norm", "learning_rate", "step_time", "tokens/s"} {
		if _, ok := m[k]; !ok || !isFinite(m[k]) {
			t.Errorf("metric %s = %v", k, m[k])
		}
	}
	if m["frac_reward_zero_std"] == 1 {
		t.Fatalf("every group had identical rewards: %v", m)
	}
	if slices.Equal(tensorsBytes(before), tensorsBytes(model.Weights())) {
		t.Fatal("a GRPO step did not change the weights")
	}
	if err := tr.Log.Add(m, tr.TotalSteps()); err != nil {
		t.Fatal(err)
	}
	if err := tr.Train(context.Background()); err != nil {
		t.Fatal(err)
	}
	recs, err := ReadMetrics(filepath.Join(out, MetricsFile))
	if err != nil || len(recs) != 3 || recs[2]["step"] != 3 {
		t.Fatalf("metrics file: %d records (%v)", len(recs), err)
	}
	t.Logf("reward by step: %v, loss: %v", Series(recs, "reward"), Series(recs, "loss"))
	// The final checkpoint reloads bit-exactly and resumes at its step.
	ckpt := checkpointDir(out, 3)
	w, err := qwen3.LoadWeights(ckpt, dtypes.Float32)
	if err != nil {
		t.Fatal(err)
	}
	for i, spec := range model.Config.Weights() {
		if !slices.Equal(tensorBytes(w.Tensors[spec.Name]), tensorBytes(model.Weights()[i])) {
			t.Fatalf("checkpoint weight %s differs", spec.Name)
		}
	}
	_, model2, roller2, _, _ := tinySetup(t, out)
	tr2, err := NewGRPOTrainer(cfg, model2, roller2, ids, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := tr2.LoadCheckpoint(ckpt); err != nil {
		t.Fatal(err)
	}
	if tr2.Learner.Steps != 3 || !slices.Equal(tensorsBytes(model2.Weights()), tensorsBytes(model.Weights())) {
		t.Fatalf("resume: step %d", tr2.Learner.Steps)
	}
	if _, err := os.Stat(filepath.Join(ckpt, "optimizer", "exp_avg", "model.safetensors")); err != nil {
		t.Fatalf("optimizer state not saved: %v", err)
	}
}

// TestGRPODeterministic: the same seed gives the same metrics on CPU.
func TestGRPODeterministic(t *testing.T) {
	run := func() Metrics {
		cfg, model, roller, ids, _ := tinySetup(t, t.TempDir())
		tr, err := NewGRPOTrainer(cfg, model, roller, ids, nil)
		if err != nil {
			t.Fatal(err)
		}
		var m Metrics
		for s := 0; s < 2; s++ {
			if m, err = tr.Step(context.Background(), s); err != nil {
				t.Fatal(err)
			}
		}
		return m
	}
	a, b := run(), run()
	for _, k := range []string{"reward", "loss", "grad_norm", "entropy", "completions/mean_length"} {
		if a[k] != b[k] && !(math.IsNaN(a[k]) && math.IsNaN(b[k])) {
			t.Errorf("%s: %v vs %v", k, a[k], b[k])
		}
	}
}

// TestOracleSamplesRefuseErrors: an oracle step that gets an error (here
// its gold query, slower than the environment's timeout, as on a starved
// machine) fails OracleSamples by name instead of leaving a demonstration
// that answers past an error in the samples.
func TestOracleSamplesRefuseErrors(t *testing.T) {
	_, _, roller, _, _ := tinySetup(t, t.TempDir())
	qs, dbs := bundledTrain(t)
	db, err := dbs.Get(qs[0].DatabaseName)
	if err != nil {
		t.Fatal(err)
	}
	slow := dataset.RawRecord{Question: "Count to 300000.", DBID: qs[0].DatabaseName,
		Query: "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM n WHERE x < 300000) SELECT count(*) FROM n"}
	q, err := dataset.Enrich(context.Background(), db, slow, dataset.Train, 999)
	if err != nil {
		t.Fatal(err)
	}
	timed := sqlenv.OpenDatabases(dbs.Dir(), sqlitedb.Limits{Timeout: time.Millisecond})
	defer timed.Close()
	roller.newEnv = func() (sqlenv.Env, error) {
		return sqlenv.New(sqlenv.Config{Questions: []dataset.QuestionRecord{q}, Databases: timed, StepBudget: 5})
	}
	_, err = roller.OracleSamples(context.Background(), []dataset.QuestionRecord{q})
	if err == nil || !strings.Contains(err.Error(), "QUERY on "+q.QuestionID+" got an error") || !strings.Contains(err.Error(), "timed out") {
		t.Fatalf("OracleSamples with a step that times out: err = %v", err)
	}
}

func TestSFTWarmupLowersNLL(t *testing.T) {
	out := t.TempDir()
	cfg, model, roller, _, _ := tinySetup(t, out)
	qs, _ := bundledEnv(t, 3)
	samples, err := roller.OracleSamples(context.Background(), qs[:3])
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range samples {
		text, _ := byteTokenizer{}.Decode(s.IDs, false)
		if s.Mask[len(s.Mask)-1] != 1 || s.IDs[len(s.IDs)-1] != 1 {
			t.Fatalf("an SFT sample must end with a trained EOS: %q", text)
		}
	}
	cfg.SFTEpochs, cfg.SFTLearningRate, cfg.SFTBatchSize = 4, 3e-3, 2
	log, _ := NewRunLog(out, 1, nil)
	tr, err := NewSFTTrainer(cfg, model, samples, log)
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Train(context.Background()); err != nil {
		t.Fatal(err)
	}
	losses := Series(log.History, "loss")
	if len(losses) < 4 || !(losses[len(losses)-1] < 0.8*losses[0]) {
		t.Fatalf("SFT loss did not fall: %v", losses)
	}
	t.Logf("SFT NLL per token: %.3f → %.3f over %d steps", losses[0], losses[len(losses)-1], len(losses))
}

// TestGRPOPeriodicEvaluation: Evaluate runs every eval_steps steps and after
// the last, its metrics joining those steps' records; a trainer told that a
// full evaluation follows (EvaluatedAfter) leaves out the one after the last.
func TestGRPOPeriodicEvaluation(t *testing.T) {
	for _, after := range []bool{false, true} {
		out := t.TempDir()
		cfg, model, roller, ids, _ := tinySetup(t, out)
		cfg.MaxSteps, cfg.EvalSteps, cfg.LoggingSteps = 3, 2, 1
		tr := loggedTrainer(t, cfg, model, roller, ids, out)
		var evaluatedAt []int
		var shown []string
		tr.Log.OnActivity = func(last Metrics, total int, what string) {
			shown = append(shown, fmt.Sprintf("step %v/%d %s", last["step"], total, what))
		}
		tr.Evaluate = func(context.Context) (Metrics, error) {
			evaluatedAt = append(evaluatedAt, tr.Learner.Steps)
			tr.Log.Activity("evaluating")
			return Metrics{"eval/train/greedy_success": 0.5}, nil
		}
		tr.EvaluatedAfter = after
		if err := tr.Train(context.Background()); err != nil {
			t.Fatal(err)
		}
		records, err := ReadMetrics(filepath.Join(out, MetricsFile))
		if err != nil {
			t.Fatal(err)
		}
		var logged []float64
		for _, r := range records {
			if _, ok := r["eval/train/greedy_success"]; ok {
				logged = append(logged, r["step"])
			}
		}
		want, wantLogged := []int{2, 3}, []float64{2, 3}
		if after {
			want, wantLogged = []int{2}, []float64{2}
		}
		if !slices.Equal(evaluatedAt, want) || !slices.Equal(logged, wantLogged) {
			t.Errorf("EvaluatedAfter %v: evaluated after steps %v, logged at %v; want %v", after, evaluatedAt, logged, want)
		}
		// The display says what runs between steps, with the step it follows.
		wantShown := []string{"step 2/3 evaluating", "step 3/3 evaluating"}[:len(want)]
		evals := slices.DeleteFunc(slices.Clone(shown), func(s string) bool { return !strings.HasSuffix(s, "evaluating") })
		if !slices.Equal(evals, wantShown) || !slices.Contains(shown, "step 0/3 step 1: rollout, 2/2 episodes finished") {
			t.Errorf("EvaluatedAfter %v: activity shown %q, want the rollouts' and %q", after, shown, wantShown)
		}
		// The time left counts the evaluations left at the last one's time:
		// after step 2, one step and (unless the caller evaluates after)
		// one evaluation.
		r2 := records[1]
		wantLeft := r2["step_time"]
		if !after {
			wantLeft += r2["time/eval"]
		}
		if _, ok := r2["time/eval"]; !ok || math.Abs(r2["time/remaining"]-wantLeft) > 1e-9 || records[2]["time/remaining"] != 0 {
			t.Errorf("EvaluatedAfter %v: time/remaining %v, %v, %v with time/eval %v, want %v after step 2 and 0 at the end",
				after, records[0]["time/remaining"], r2["time/remaining"], records[2]["time/remaining"], r2["time/eval"], wantLeft)
		}
	}
}
