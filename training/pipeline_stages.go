package training

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/gosqlenv/gosqlenv/sqlenv"
	"github.com/gosqlenv/gosqlenv/sqlenv/dataset"
)

// The pipeline's stages: the SFT warm-up, GRPO, and the evaluations
// recorded before and after them.

// RunSFT plays the oracle on up to sft_max_questions training questions and
// fine-tunes on those trajectories (assistant-only loss).
func (p *Pipeline) RunSFT(ctx context.Context, log *RunLog) error {
	tr, _, err := p.oracleTrainer(ctx, p.SFTQuestions(), 0, "sft", log)
	if err != nil {
		return err
	}
	return withOOMHint(tr.Train(ctx))
}

// oracleTrainer plays the oracle on qs (with the schema lessons of a share
// lessons of them, oracleSamples) and returns an SFT trainer on those
// trajectories (the SFT settings; checkpoints under output_dir/subdir) and
// the number of samples. It warns when the oracle's actions do not fit the
// generation budgets (CheckTokenBudgets): the model would learn actions it
// cannot finish.
func (p *Pipeline) oracleTrainer(ctx context.Context, qs []dataset.QuestionRecord, lessons float64, subdir string, log *RunLog) (*SFTTrainer, int, error) {
	samples, err := p.oracleSamples(ctx, qs, lessons)
	if err != nil {
		return nil, 0, err
	}
	if warning := CheckTokenBudgets(samples, p.Config.MaxNewTokens, p.Config.MaxCompletionLength); warning != "" {
		fmt.Fprintln(os.Stderr, "warning: SFT:", warning+": the model learns actions it cannot finish")
	}
	cfg := p.Config
	cfg.OutputDir = filepath.Join(p.Config.OutputDir, subdir)
	tr, err := NewSFTTrainer(cfg, p.Model, samples, log)
	if err != nil {
		return nil, 0, err
	}
	tr.TokenizerDir = p.TokenizerDir
	if tr.StaticShapes = p.StaticShapes(); tr.StaticShapes {
		p.seedStaticPrompts(samples)
	}
	return tr, len(samples), nil
}

// seedStaticPrompts grows the roller's static prompt length (static_shapes)
// to the longest prompt of samples (the oracle's turns: the prompts a run
// meets are about as long), so that generation compiles its programs for
// that length from the start instead of growing into it.
func (p *Pipeline) seedStaticPrompts(samples []Sample) {
	if p.Roller == nil {
		return
	}
	for _, s := range samples {
		if n := slices.Index(s.Mask, 1); n > 0 {
			p.Roller.SetStaticPromptLength(n)
		}
	}
}

// NewGRPO returns the GRPO trainer of the pipeline (resuming from
// resume_from_checkpoint when set).
func (p *Pipeline) NewGRPO(log *RunLog) (*GRPOTrainer, error) {
	tr, err := NewGRPOTrainer(p.Config, p.Model, p.Roller, QuestionIDs(p.GRPOQuestions()), log)
	if err != nil {
		return nil, err
	}
	tr.TokenizerDir = p.TokenizerDir
	tr.Evaluate = p.periodicEvaluation(log)
	if sft := filepath.Join(p.Config.OutputDir, "sft"); strings.HasPrefix(filepath.Clean(p.Config.ModelName), sft+string(filepath.Separator)) {
		tr.StartsFrom = StageRunID(sft)
	}
	if p.StaticShapes() {
		samples, err := p.oracleSamples(context.Background(), p.GRPOQuestions(), 0)
		if err != nil {
			return nil, err
		}
		p.seedStaticPrompts(samples)
	}
	if r := p.Config.ResumeFromCheckpoint; r != "" {
		if err := tr.LoadCheckpoint(r); err != nil {
			return nil, err
		}
	}
	return tr, nil
}

// greedySuccess is GRPO's (and pre-training's) periodic evaluation: the
// greedy success rate on each split, as metrics
// "eval/<split>/greedy_success", the share of the questions' constants
// the greedy episodes' SQL carried (ConstantsCopied), as
// "eval/<split>/constants_copied", and the share of the names that SQL
// wrote that the episode had been shown (GroundedNames), as
// "eval/<split>/grounded_names".
func (p *Pipeline) greedySuccess(ctx context.Context) (Metrics, error) {
	return p.greedySuccessShown(ctx, nil)
}

// periodicEvaluation is greedySuccess showing its progress on log
// (RunLog.Activity): the split and the episodes done.
func (p *Pipeline) periodicEvaluation(log *RunLog) func(context.Context) (Metrics, error) {
	return func(ctx context.Context) (Metrics, error) { return p.greedySuccessShown(ctx, log) }
}

// greedySuccessShown is greedySuccess, showing its progress on log when
// not nil.
func (p *Pipeline) greedySuccessShown(ctx context.Context, log *RunLog) (Metrics, error) {
	m := Metrics{}
	var splits []string
	questions := map[string][]dataset.QuestionRecord{}
	for _, split := range Splits {
		if qs, err := p.EvalQuestions(split); err == nil && len(qs) > 0 {
			splits, questions[split] = append(splits, split), qs
		}
	}
	for i, split := range splits {
		qs := questions[split]
		var before func(done, total int)
		if log != nil && p.Roller != nil {
			show := func(done, total int) {
				log.Activity(fmt.Sprintf("evaluating %s (%d of %d splits): %d/%d episodes", split, i+1, len(splits), done, total))
			}
			show(0, len(qs))
			before, p.Roller.OnProgress = p.Roller.OnProgress, show
		}
		rep, err := EvaluateModel(ctx, p.Roller, QuestionIDs(qs))
		if log != nil && p.Roller != nil {
			p.Roller.OnProgress = before
		}
		if err != nil {
			return nil, fmt.Errorf("evaluate on %s: %w", split, err)
		}
		m["eval/"+split+"/greedy_success"] = rep.SuccessRate
		gold := map[string]string{}
		for _, q := range qs {
			gold[q.QuestionID] = q.GoldSQL
		}
		if copied, total := ConstantsCopied(rep.Episodes, gold); total > 0 {
			m["eval/"+split+"/constants_copied"] = float64(copied) / float64(total)
		}
		if grounded, total := GroundedNames(rep.Episodes); total > 0 {
			m["eval/"+split+"/grounded_names"] = float64(grounded) / float64(total)
		}
	}
	return m, nil
}

// EvaluateSplits evaluates a policy on every split (Splits) with
// EvaluateSplit, reporting its progress to OnEvaluate when set. Splits
// without questions are left out.
func (p *Pipeline) EvaluateSplits(ctx context.Context, policy string) (map[string]SplitResult, error) {
	var splits []string
	episodes := map[string]int{}
	for _, split := range Splits {
		qs, err := p.EvalQuestions(split)
		if err != nil {
			return nil, err
		}
		if len(qs) > 0 {
			splits = append(splits, split)
			episodes[split] = len(qs) * (1 + p.Config.EvalSamples)
		}
	}
	start := now()
	out := map[string]SplitResult{}
	for i, split := range splits {
		progress := func(done int) {
			if p.OnEvaluate != nil {
				p.OnEvaluate(EvalProgress{Policy: policy, Split: split, SplitNumber: i + 1, Splits: len(splits),
					Done: done, Episodes: episodes[split], Elapsed: now().Sub(start)})
			}
		}
		progress(0)
		if p.Roller != nil && p.OnEvaluate != nil {
			p.Roller.OnProgress = func(done, _ int) { progress(done) }
		}
		res, err := p.EvaluateSplit(ctx, policy, split)
		if p.Roller != nil {
			p.Roller.OnProgress = nil
		}
		if err != nil {
			return nil, err
		}
		out[split] = res
		progress(episodes[split])
	}
	return out, nil
}

// EvalProgress describes an evaluation under way (Pipeline.OnEvaluate).
type EvalProgress struct {
	// Policy is evaluated on Split, the SplitNumber-th (from 1) of Splits.
	Policy, Split       string
	SplitNumber, Splits int
	// Done of the split's Episodes have finished.
	Done, Episodes int
	// Elapsed is the time since the policy's evaluation began.
	Elapsed time.Duration
}

// EvaluateSplit evaluates a policy on the questions of one split
// (EvalQuestions): the model (policy "untrained", "sft", "grpo" or any other
// name) with one greedy episode per question and eval_samples episodes
// sampled at the training temperature, or PolicyRandom with sqlenv's random
// policy.
func (p *Pipeline) EvaluateSplit(ctx context.Context, policy, split string) (SplitResult, error) {
	qs, err := p.EvalQuestions(split)
	if err != nil {
		return SplitResult{}, err
	}
	if len(qs) == 0 {
		return SplitResult{}, fmt.Errorf("evaluate %s: split %s has no questions", policy, split)
	}
	var r SplitResult
	if policy == PolicyRandom {
		r, err = p.evaluateRandom(ctx, qs)
	} else {
		p.checkSplitBudgets(ctx, split, qs)
		r, err = p.evaluateModel(ctx, qs)
	}
	if err != nil {
		return r, fmt.Errorf("evaluate %s on %s: %w", policy, split, withOOMHint(err))
	}
	return r, nil
}

// checkSplitBudgets prints splitBudgetWarning's warning, once per split and
// pipeline.
func (p *Pipeline) checkSplitBudgets(ctx context.Context, split string, qs []dataset.QuestionRecord) {
	if p.budgetsChecked[split] || p.Roller == nil {
		return
	}
	if p.budgetsChecked == nil {
		p.budgetsChecked = map[string]bool{}
	}
	p.budgetsChecked[split] = true
	if warning := p.splitBudgetWarning(ctx, split, qs); warning != "" {
		fmt.Fprintln(os.Stderr, "warning:", warning)
	}
}

// splitBudgetWarning says, when the oracle's episodes on a split's questions
// do not fit the generation budgets (CheckTokenBudgets), that the questions
// needing longer actions or episodes cannot be solved: the budget, not the
// model, would cap the split's success. The oracle plays without the model
// (a second or so); a question the oracle cannot play is left to the
// evaluation to report.
func (p *Pipeline) splitBudgetWarning(ctx context.Context, split string, qs []dataset.QuestionRecord) string {
	samples, err := p.oracleSamples(ctx, qs, 0)
	if err != nil {
		return ""
	}
	if w := CheckTokenBudgets(samples, p.Config.MaxNewTokens, p.Config.MaxCompletionLength); w != "" {
		return fmt.Sprintf("evaluation split %s: %s: no policy can solve the questions that need them", split, w)
	}
	return ""
}

func (p *Pipeline) evaluateModel(ctx context.Context, qs []dataset.QuestionRecord) (SplitResult, error) {
	if p.Roller == nil {
		return SplitResult{}, errors.New("no model loaded")
	}
	greedy, sampled, _, err := p.Roller.Evaluate(ctx, QuestionIDs(qs), p.Config.EvalSamples, p.Config.Temperature)
	if err != nil {
		return SplitResult{}, err
	}
	var sampledReport sqlenv.EvalReport
	if len(sampled) > 0 {
		sampledReport = EvalReportOf(sampled)
	}
	return splitResult(len(qs), p.Config.Temperature, EvalReportOf(greedy), sampledReport), nil
}

func (p *Pipeline) evaluateRandom(ctx context.Context, qs []dataset.QuestionRecord) (SplitResult, error) {
	env, err := sqlenv.New(sqlenv.Config{Questions: qs, Databases: p.Databases, StepBudget: p.Config.StepBudget})
	if err != nil {
		return SplitResult{}, err
	}
	defer env.Close()
	policy := sqlenv.NewRandomPolicy(uint64(p.Config.Seed))
	greedy, err := sqlenv.Evaluate(ctx, env, policy, len(qs))
	if err != nil {
		return SplitResult{}, err
	}
	var sampled sqlenv.EvalReport
	if k := p.Config.EvalSamples; k > 0 {
		if sampled, err = sqlenv.Evaluate(ctx, env, policy, k*len(qs)); err != nil {
			return SplitResult{}, err
		}
	}
	return splitResult(len(qs), 1, greedy, sampled), nil
}

// EvaluateAndRecord evaluates policy on every split (EvaluateSplits) and
// records it in output_dir/eval_summary.json (RecordEvaluation); it
// returns the updated summary.
func (p *Pipeline) EvaluateAndRecord(ctx context.Context, policy string) (EvalSummary, error) {
	res, err := p.EvaluateSplits(ctx, policy)
	if err != nil {
		return nil, err
	}
	return RecordEvaluation(p.Config.OutputDir, policy, res)
}
