// Package report renders training runs as self-contained HTML (inline
// styles, no scripts), for notebooks and files: settings, splits, evaluation
// summaries and what they mean, progress of training and evaluation, and the
// questions a trained model solves beside other policies' attempts. Episodes,
// observations and tables themselves are drawn by sqlenv/render.
package report

import (
	"fmt"
	"html"
	"strings"
	"time"

	"github.com/gosqlenv/gosqlenv/sqlenv/render"
	"github.com/gosqlenv/gosqlenv/training"
)

// ConfigTable lists the settings that matter most for a run.
func ConfigTable(c training.GRPOConfig) string {
	system := c.SystemPrompt
	if system == "" {
		system = "(built-in, training.GetSystemPrompt)"
	}
	rows := [][]string{
		{"model_name", c.ModelName}, {"backend", orDefault(c.Backend, "$GOMLX_BACKEND, else go")}, {"precision", c.Precision},
		{"system_prompt", system},
		{"train_databases", orDefault(strings.Join(c.TrainDatabases, ", "), "all")}, {"difficulty_filter", strings.Join(c.DifficultyFilter, ", ")},
		{"heldout_fraction", fmt.Sprint(c.HeldoutFraction)}, {"max_train_questions", orDefault(nonZero(c.MaxTrainQuestions), "all")},
		{"step_budget", fmt.Sprint(c.StepBudget)}, {"history_pairs", fmt.Sprint(c.HistoryPairs)},
		{"max_new_tokens", fmt.Sprint(c.MaxNewTokens)}, {"max_completion_length", fmt.Sprint(c.MaxCompletionLength)},
		{"temperature", fmt.Sprint(c.Temperature)},
		{"sft_enabled", fmt.Sprint(c.SFTEnabled)}, {"sft_max_questions", orDefault(nonZero(c.SFTMaxQuestions), "all")},
		{"sft_epochs", fmt.Sprint(c.SFTEpochs)}, {"sft_batch_size", fmt.Sprint(c.SFTBatchSize)}, {"sft_learning_rate", fmt.Sprint(c.SFTLearningRate)},
		{"grpo_max_questions", orDefault(nonZero(c.GRPOMaxQuestions), "all")}, {"num_generations", fmt.Sprint(c.NumGenerations)},
		{"per_device_train_batch_size", fmt.Sprint(c.PerDeviceTrainBatchSize)}, {"gradient_accumulation_steps", fmt.Sprint(c.GradientAccumulationSteps)},
		{"max_steps", fmt.Sprint(c.MaxSteps)}, {"learning_rate", fmt.Sprint(c.LearningRate)}, {"loss_type", c.LossType}, {"beta", fmt.Sprint(c.Beta)},
		{"reward_funcs", strings.Join(c.RewardFuncs, ", ")}, {"min_group_reward_std", fmt.Sprint(c.MinGroupRewardStd)},
		{"max_eval_questions", orDefault(nonZero(c.MaxEvalQuestions), "all")}, {"eval_samples", fmt.Sprint(c.EvalSamples)},
		{"seed", fmt.Sprint(c.Seed)}, {"output_dir", c.OutputDir},
	}
	return render.Table([]string{"setting", "value"}, rows)
}

// nonZero formats n, or "" for 0.
func nonZero(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprint(n)
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// Progress renders a progress bar with the latest metrics, for in-place
// updates in a notebook.
func Progress(stage string, m training.Metrics, total int) string {
	return ProgressDoing(stage, m, total, "")
}

// ProgressDoing is Progress with what the run is doing between steps (a
// periodic evaluation, RunLog.Activity) on a line of its own.
func ProgressDoing(stage string, m training.Metrics, total int, doing string) string {
	step := int(m["step"])
	pct := 100 * step / max(total, 1)
	var extra []string
	for _, k := range []string{"reward", "success_rate", "loss", "grad_norm", "step_time"} {
		if v, ok := m[k]; ok {
			extra = append(extra, fmt.Sprintf("%s %.4g", k, v))
		}
	}
	left := ""
	if rem, ok := m["time/remaining"]; ok && step < total {
		left = fmt.Sprintf(" · about %s left", (time.Duration(rem) * time.Second).Round(time.Second))
	} else if st, ok := m["step_time"]; ok && step < total {
		left = fmt.Sprintf(" · about %s left", (time.Duration(st*float64(total-step)) * time.Second).Round(time.Second))
	}
	if doing != "" {
		doing = "<br><i>" + html.EscapeString(doing) + "</i>"
	}
	return fmt.Sprintf(`<div style="font-family:sans-serif;font-size:13px"><b>%s</b> step %d/%d%s
<div style="width:320px;height:10px;background:#eee;border:1px solid #ccc"><div style="width:%d%%;height:100%%;background:#1f77b4"></div></div>
<small>%s</small>%s</div>`, html.EscapeString(stage), step, total, left, pct, html.EscapeString(strings.Join(extra, " · ")), doing)
}

// EvalProgress renders an evaluation under way: the policy, the split (its
// number of all), the episodes finished with a bar, and the time so far.
func EvalProgress(e training.EvalProgress) string {
	pct := 100 * e.Done / max(e.Episodes, 1)
	state := fmt.Sprintf("%d/%d episodes", e.Done, e.Episodes)
	if e.SplitNumber == e.Splits && e.Done == e.Episodes {
		state = "done"
	}
	return fmt.Sprintf(`<div style="font-family:sans-serif;font-size:13px"><b>Evaluating %s</b> on %s (split %d of %d): %s · %s
<div style="width:320px;height:10px;background:#eee;border:1px solid #ccc"><div style="width:%d%%;height:100%%;background:#2ca02c"></div></div></div>`,
		html.EscapeString(e.Policy), html.EscapeString(splitTitles[e.Split]), e.SplitNumber, e.Splits, state,
		e.Elapsed.Round(time.Second), pct)
}
