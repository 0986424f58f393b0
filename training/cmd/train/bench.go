package main

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gosqlenv/gosqlenv/training"
)

// benchOptions are the bench stage's settings.
type benchOptions struct {
	steps, warmup, rounds int
}

// benchParts are the parts of a GRPO step the bench stage reports, as the
// trainer's metrics name them.
var benchParts = []string{"time/generation", "time/environment", "time/loss_backward", "time/optimizer", "step_time"}

// pathTimes accumulates one path's measurements over the rounds.
type pathTimes struct {
	wall          map[string]float64 // seconds per part, summed over timed steps
	cpu           float64            // process CPU seconds of the timed steps
	steps         int
	evalEpisodes  int
	evalWall      float64
	evalCPU       float64
	rewards, loss []float64 // per timed step, to show both paths trained alike
}

// benchmark runs the bench stage: for each round, the earlier path
// (prefix_sharing false) then the prefix-sharing one, each from the
// pipeline's initial weights with a fresh optimizer and roller, so both
// play the same episodes. Each runs warmup untimed GRPO steps and steps
// timed ones, then evaluates the held-out split (greedy and eval_samples
// sampled episodes per question).
func (r stages) benchmark(o benchOptions) error {
	p := r.p
	initial, err := cloneAll(p.Model.Weights())
	if err != nil {
		return err
	}
	split := "heldout_questions"
	evalQs, err := p.EvalQuestions(split)
	if err != nil {
		return err
	}
	evalIDs := training.QuestionIDs(evalQs)
	times := map[bool]*pathTimes{false: {wall: map[string]float64{}}, true: {wall: map[string]float64{}}}
	fmt.Fprintf(os.Stderr, "bench: %d rounds × (%d untimed + %d timed GRPO steps, then %s: %d questions × (1 greedy + %d sampled)) per path; GOMAXPROCS %d\n",
		o.rounds, o.warmup, o.steps, split, len(evalIDs), p.Config.EvalSamples, runtime.GOMAXPROCS(0))
	for round := 1; round <= o.rounds; round++ {
		for _, share := range []bool{false, true} {
			fresh, err := cloneAll(initial)
			if err != nil {
				return err
			}
			if err := p.Model.SetWeights(fresh); err != nil {
				return err
			}
			cfg := p.Config
			cfg.PrefixSharing, cfg.EvalSteps, cfg.SaveSteps, cfg.MaxSteps = share, 0, 0, o.warmup+o.steps
			rc := p.RolloutConfig()
			rc.SharePrompts = share
			roller, err := training.NewRoller(p.Model, p.Tokenizer, p.NewEnv, rc)
			if err != nil {
				return err
			}
			tr, err := training.NewGRPOTrainer(cfg, p.Model, roller, training.QuestionIDs(p.GRPOQuestions()), nil)
			if err != nil {
				return err
			}
			pt := times[share]
			for s := 0; s < o.warmup+o.steps; s++ {
				cpu0 := processCPUSeconds()
				m, err := tr.Step(r.ctx, s)
				if err != nil {
					return fmt.Errorf("bench: GRPO step %d (prefix_sharing %v): %w", s+1, share, err)
				}
				if s < o.warmup {
					continue
				}
				pt.cpu += processCPUSeconds() - cpu0
				pt.steps++
				for _, k := range benchParts {
					pt.wall[k] += m[k]
				}
				pt.rewards, pt.loss = append(pt.rewards, m["reward"]), append(pt.loss, m["loss"])
			}
			start, cpu0 := time.Now(), processCPUSeconds()
			n, err := benchEvaluate(r, roller, evalIDs, cfg, share)
			if err != nil {
				return err
			}
			pt.evalWall += time.Since(start).Seconds()
			pt.evalCPU += processCPUSeconds() - cpu0
			pt.evalEpisodes += n
			fmt.Fprintf(os.Stderr, "round %d, prefix_sharing %-5v: %.2f s per GRPO step, %.1f evaluation episodes/s\n",
				round, share, mean(pt.wall["step_time"], pt.steps), float64(n)/time.Since(start).Seconds())
		}
	}
	if err := p.Model.SetWeights(initial); err != nil {
		return err
	}
	fmt.Print(benchTable(times[false], times[true]))
	return nil
}

// benchEvaluate plays a split's evaluation episodes — one greedy and
// eval_samples sampled per question — and returns how many it played: in
// one rollout (Roller.Evaluate, the new path), or greedy then sampled in
// two (the earlier path).
func benchEvaluate(r stages, roller *training.Roller, ids []string, cfg training.GRPOConfig, share bool) (int, error) {
	if share {
		greedy, sampled, _, err := roller.Evaluate(r.ctx, ids, cfg.EvalSamples, cfg.Temperature)
		return len(greedy) + len(sampled), err
	}
	greedy, err := training.EvaluateModel(r.ctx, roller, ids)
	if err != nil {
		return 0, err
	}
	n := len(greedy.Episodes)
	if k := cfg.EvalSamples; k > 0 {
		eps, _, err := roller.RolloutWith(r.ctx, ids, k, cfg.Temperature)
		if err != nil {
			return 0, err
		}
		n += len(eps)
	}
	return n, nil
}

// cloneAll copies tensors (the model's weights are replaced, not updated in
// place, but a copy keeps the initial ones safe from any donation).
func cloneAll(ts []*tensors.Tensor) ([]*tensors.Tensor, error) {
	out := make([]*tensors.Tensor, len(ts))
	for i, t := range ts {
		c, err := t.Clone()
		if err != nil {
			return nil, fmt.Errorf("bench: copy the initial weights: %w", err)
		}
		out[i] = c
	}
	return out, nil
}

func mean(sum float64, n int) float64 { return sum / float64(max(n, 1)) }

// benchTable prints the per-step means of both paths and their ratio.
func benchTable(old, cur *pathTimes) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-28s %14s %14s %8s\n", "per GRPO step (mean)", "rows (before)", "prefix trees", "new/old")
	for _, k := range benchParts {
		o, c := mean(old.wall[k], old.steps), mean(cur.wall[k], cur.steps)
		fmt.Fprintf(&b, "%-28s %12.3f s %12.3f s %8.2f\n", strings.TrimPrefix(k, "time/")+" (wall)", o, c, c/o)
	}
	o, c := mean(old.cpu, old.steps), mean(cur.cpu, cur.steps)
	fmt.Fprintf(&b, "%-28s %12.3f s %12.3f s %8.2f\n", "step (CPU, process)", o, c, c/o)
	oe, ce := float64(old.evalEpisodes)/old.evalWall, float64(cur.evalEpisodes)/cur.evalWall
	fmt.Fprintf(&b, "%-28s %14.1f %14.1f %8.2f\n", "evaluation episodes/s (wall)", oe, ce, ce/oe)
	oe, ce = float64(old.evalEpisodes)/old.evalCPU, float64(cur.evalEpisodes)/cur.evalCPU
	fmt.Fprintf(&b, "%-28s %14.1f %14.1f %8.2f\n", "evaluation episodes/CPU s", oe, ce, ce/oe)
	fmt.Fprintf(&b, "timed steps: %d per path; rewards %v vs %v; losses %v vs %v\n", old.steps,
		rounded(old.rewards), rounded(cur.rewards), rounded(old.loss), rounded(cur.loss))
	return b.String()
}

func rounded(xs []float64) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = fmt.Sprintf("%.4g", x)
	}
	return out
}
