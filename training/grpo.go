package training

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gosqlenv/gosqlenv/training/optim"
	"github.com/gosqlenv/gosqlenv/training/qwen3"
)

// GRPOTrainer trains a policy with Group Relative Policy Optimization on the
// SQL environment, one stage at a time: rollout → rewards → advantages →
// loss → optimizer step.
type GRPOTrainer struct {
	Config  GRPOConfig
	Roller  *Roller
	Learner *Learner
	Rewards []NamedReward
	// StartsFrom names the run the model comes from (RunState.From; the
	// pipeline sets the SFT warm-up's StageRunID).
	StartsFrom string
	// QuestionIDs are the training questions; each epoch visits them in a
	// seeded random order.
	QuestionIDs []string
	// Log receives metrics; it writes JSON lines to output_dir and a
	// progress line to the terminal when built by NewRunLog.
	Log *RunLog
	// TokenizerDir, when set, is copied into checkpoints with the weights.
	TokenizerDir string
	// Evaluate, when set, runs every eval_steps optimizer steps; the metrics
	// it returns (e.g. "eval/train/greedy_success") join that step's record.
	// Pipeline.NewGRPO sets it to a greedy evaluation on every split.
	Evaluate func(ctx context.Context) (Metrics, error)
	// EvaluatedAfter says the caller evaluates the trained model right
	// after Train (Pipeline.EvaluateSplits, as the notebook and `train all`
	// do), which gives the greedy results of the last step: Evaluate is then
	// not run after it (plots.SuccessCurves takes that point from the
	// evaluation summary).
	EvaluatedAfter bool

	ref []*tensors.Tensor // frozen reference weights when beta > 0
}

// NewGRPOTrainer wires a trainer from its parts. The model is the one the
// roller generates with.
func NewGRPOTrainer(cfg GRPOConfig, model *qwen3.Model, roller *Roller, questionIDs []string, log *RunLog) (*GRPOTrainer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if len(questionIDs) == 0 {
		return nil, errors.New("grpo: no training questions")
	}
	rewards, err := RewardSet(cfg.RewardFuncs, cfg.RewardWeights)
	if err != nil {
		return nil, err
	}
	t := &GRPOTrainer{
		Config: cfg, Roller: roller, Rewards: rewards, QuestionIDs: questionIDs, Log: log,
		Learner: NewLearner(model, optim.AdamWConfig{Beta1: cfg.AdamBeta1, Beta2: cfg.AdamBeta2, Epsilon: cfg.AdamEpsilon,
			WeightDecay: cfg.WeightDecay, MaxGradNorm: cfg.MaxGradNorm}),
	}
	if cfg.Beta > 0 {
		t.ref = model.Weights() // tensors are immutable: the initial weights stay as they are
	}
	return t, nil
}

// TotalSteps is the number of optimizer steps Train takes.
func (t *GRPOTrainer) TotalSteps() int {
	if t.Config.MaxSteps > 0 {
		return t.Config.MaxSteps
	}
	per := t.Config.QuestionsPlayedPerStep()
	perEpoch := (len(t.QuestionIDs) + per - 1) / per
	return perEpoch * max(t.Config.NumTrainEpochs, 1)
}

// questionsForStep returns the questions of 0-based step s: epochs are
// seeded shuffles of the question list, consumed QuestionsPlayedPerStep at
// a time.
func (t *GRPOTrainer) questionsForStep(s int) []string {
	per := t.Config.QuestionsPlayedPerStep()
	n := len(t.QuestionIDs)
	perEpoch := (n + per - 1) / per
	epoch, within := s/perEpoch, s%perEpoch
	order := slices.Clone(t.QuestionIDs)
	rng := rand.New(rand.NewPCG(uint64(t.Config.Seed), uint64(epoch)))
	rng.Shuffle(n, func(i, j int) { order[i], order[j] = order[j], order[i] })
	var ids []string
	for k := 0; k < per; k++ {
		ids = append(ids, order[(within*per+k)%n])
	}
	return ids
}

// learningRate is the scheduled learning rate at 0-based step s.
func (t *GRPOTrainer) learningRate(s int) float64 {
	return scheduledLR(t.Config.LRSchedulerType, t.Config.LearningRate, s, t.warmupSteps(), t.TotalSteps())
}

func (t *GRPOTrainer) warmupSteps() int {
	if t.Config.WarmupSteps > 0 {
		return t.Config.WarmupSteps
	}
	return int(math.Ceil(t.Config.WarmupRatio * float64(t.TotalSteps())))
}

func scheduledLR(kind string, peak float64, step, warmup, total int) float64 {
	switch kind {
	case "cosine":
		return optim.CosineSchedule(peak, step, warmup, total, 0)
	case "constant":
		if warmup > 0 && step < warmup {
			return peak * float64(step+1) / float64(warmup)
		}
		return peak
	default:
		return optim.LinearSchedule(peak, step, warmup, total)
	}
}

// Train runs from the learner's current step to TotalSteps, logging every
// logging_steps and checkpointing every save_steps and at the end. Whatever
// stops it early — ctx cancelled (Ctrl-C), a failed step or evaluation —
// it saves a checkpoint of the steps done before returning the error, so
// that a run can always resume where it stopped.
//
// A run from step 0 first removes the metrics and checkpoints an earlier
// run left in output_dir; output_dir/run.json (RunState) says whether the
// run is going, completed or stopped, and at which checkpoint.
func (t *GRPOTrainer) Train(ctx context.Context) error {
	end, err := trackRun(t.Config.OutputDir, "grpo", t.Learner.Steps, t.TotalSteps(), t.StartsFrom)
	if err != nil {
		return err
	}
	err = t.train(ctx)
	end(t.Learner.Steps, err)
	return err
}

func (t *GRPOTrainer) train(ctx context.Context) (err error) {
	saved := false
	defer func() {
		if err != nil && !saved {
			dir, serr := t.SaveCheckpoint()
			if serr != nil {
				err = errors.Join(err, fmt.Errorf("saving a checkpoint after the error: %w", serr))
				return
			}
			err = stoppedError{err: err, checkpoint: dir, steps: t.Learner.Steps}
		}
	}()
	total := t.TotalSteps()
	evalAt := func(step int) bool {
		return t.Evaluate != nil && t.Config.EvalSteps > 0 && (step%t.Config.EvalSteps == 0 || step == total) && !(step == total && t.EvaluatedAfter)
	}
	var evalSeconds float64 // the last periodic evaluation's
	if t.Log != nil {
		t.Log.between(Metrics{"step": float64(t.Learner.Steps)}, total)
	}
	for s := t.Learner.Steps; s < total; s++ {
		m, err := t.Step(ctx, s)
		if err == nil && evalAt(s+1) {
			if t.Log != nil {
				t.Log.between(m, total)
			}
			evalStart := now()
			var em Metrics
			if em, err = t.Evaluate(ctx); err == nil {
				maps.Copy(m, em)
				evalSeconds = since(evalStart)
				m["time/eval"] = evalSeconds
			}
		}
		if err == nil {
			m["time/remaining"] = remainingSeconds(s+1, total, m["step_time"], evalSeconds, evalAt)
		}
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return err
		}
		if t.Log != nil {
			if err := t.Log.Add(m, total); err != nil {
				return err
			}
		}
		if t.Config.SaveSteps > 0 && (s+1)%t.Config.SaveSteps == 0 && s+1 < total {
			if _, err := t.SaveCheckpoint(); err != nil {
				return err
			}
		}
	}
	if t.Log != nil {
		if err := t.Log.Flush(); err != nil {
			return err
		}
	}
	saved = true // a failed final save is not retried
	_, err = t.SaveCheckpoint()
	return err
}

// Step runs optimizer step s (0-based) and returns its metrics. Its stages
// are the arrows of the type's doc comment: rolloutAndScore (rollout →
// rewards → advantages), packMicroBatches, fixedLogProbs (the old and
// reference log-probabilities the loss compares against), update (loss →
// optimizer step, num_iterations times) and metrics.
func (t *GRPOTrainer) Step(ctx context.Context, s int) (Metrics, error) {
	cfg := t.Config
	start := now()
	sc, err := t.rolloutAndScore(ctx, s)
	if err != nil {
		return nil, err
	}
	rollSeconds := since(start)
	lossStart := now()
	trained := sc
	if cfg.DynamicSampling > 1 {
		trained = sc.varied(cfg.QuestionsPerStep())
	}
	batches, err := t.packMicroBatches(trained)
	if err != nil {
		return nil, err
	}
	lc := LossConfig{Epsilon: cfg.Epsilon, EpsilonHigh: cfg.EpsilonHigh, Beta: cfg.Beta, Temperature: cfg.Temperature, FreshOld: cfg.NumIterations <= 1}
	olds, refs, err := t.fixedLogProbs(batches, lc)
	if err != nil {
		return nil, err
	}
	lr := t.learningRate(s)
	up, err := t.update(batches, olds, refs, lc, lr)
	// The step's inputs and fixed log-probs are on the device now: freed
	// here rather than by Go's collector, which does not see device memory.
	for _, mb := range batches {
		qwen3.Free(slices.Concat(mb.model, []*tensors.Tensor{mb.weights, mb.advantages, mb.samplingLogp}))
	}
	qwen3.Free(olds)
	qwen3.Free(refs)
	if err != nil {
		return nil, err
	}
	lossSeconds := since(lossStart)
	stepSeconds := since(start)
	m := t.metrics(sc, up.sums)
	m["step"] = float64(s + 1)
	m["epoch"] = float64(s+1) / float64(max(1, t.TotalSteps()/max(1, cfg.NumTrainEpochs)))
	m["loss"], m["grad_norm"], m["learning_rate"] = up.loss, up.gradNorm, lr
	m["step_time"] = stepSeconds
	m["time/rollout"], m["time/generation"], m["time/environment"] = rollSeconds, sc.stats.GenerateSeconds, sc.stats.EnvironmentSeconds
	m["time/loss_backward"], m["time/optimizer"] = lossSeconds-up.optimizerSeconds, up.optimizerSeconds
	m["tokens/s"] = float64(sc.stats.GeneratedTokens) / stepSeconds
	addCompileMetrics(m)
	if cfg.DynamicSampling > 1 {
		m["dynamic_sampling/trained_groups"] = float64(trained.groups())
	}
	return m, nil
}

// scoredRollout is a step's episodes with their rewards and advantages.
type scoredRollout struct {
	episodes []*Episode
	stats    RolloutStats
	total    []float64            // weighted reward of each episode
	perFunc  map[string][]float64 // each reward function's value of each episode
	adv      []float64            // advantage of each episode
	zeroStd  float64              // fraction of groups whose rewards do not vary
}

// varied returns the rollout restricted to its first want groups whose
// advantages are not all zero (groups whose rewards vary), or, when no
// group varies, to its first want groups (their zero advantages give no
// gradient, as without dynamic sampling).
func (sc scoredRollout) varied(want int) scoredRollout {
	informative := map[int]bool{}
	for i, e := range sc.episodes {
		if sc.adv[i] != 0 {
			informative[e.Group] = true
		}
	}
	keep := map[int]bool{} // decided groups, in rollout order
	kept := 0
	for _, e := range sc.episodes {
		if _, decided := keep[e.Group]; !decided {
			keep[e.Group] = kept < want && (informative[e.Group] || len(informative) == 0)
			if keep[e.Group] {
				kept++
			}
		}
	}
	out := scoredRollout{stats: sc.stats, zeroStd: sc.zeroStd}
	for i, e := range sc.episodes {
		if keep[e.Group] {
			out.episodes = append(out.episodes, e)
			out.total = append(out.total, sc.total[i])
			out.adv = append(out.adv, sc.adv[i])
		}
	}
	return out
}

// groups counts the distinct groups of the rollout's episodes.
func (sc scoredRollout) groups() int {
	seen := map[int]bool{}
	for _, e := range sc.episodes {
		seen[e.Group] = true
	}
	return len(seen)
}

// rolloutAndScore plays the questions of step s (one group of completions
// each), scores the episodes and computes their group-relative advantages.
func (t *GRPOTrainer) rolloutAndScore(ctx context.Context, s int) (scoredRollout, error) {
	var sc scoredRollout
	var err error
	if t.Log != nil {
		before := t.Roller.OnProgress
		t.Roller.OnProgress = func(done, total int) {
			t.Log.Activity(fmt.Sprintf("step %d: rollout, %d/%d episodes finished", s+1, done, total))
		}
		defer func() { t.Roller.OnProgress = before }()
	}
	sc.episodes, sc.stats, err = t.Roller.Rollout(ctx, t.questionsForStep(s))
	if err != nil {
		return sc, withOOMHint(err)
	}
	if len(sc.episodes) == 0 {
		return sc, errNoEpisodes
	}
	sc.total, sc.perFunc = ScoreEpisodes(t.Rewards, sc.episodes)
	groups := make([]int, len(sc.episodes))
	for i, e := range sc.episodes {
		groups[i] = e.Group
	}
	sc.adv, sc.zeroStd, err = Advantages(sc.total, groups, t.Config.ScaleRewards, t.Config.MinGroupRewardStd)
	return sc, err
}

// lossBatch is a packed micro-batch of turn samples, as padded rows (one
// per sample) or as prefix trees (Config.PrefixSharing).
type lossBatch struct {
	// model holds the model's inputs: ids, mask and positions of the rows
	// [B, T]; or, for trees, ids, positions and subtree ends [R, N] and the
	// scored occurrences' from-nodes and targets [R, K].
	model []*tensors.Tensor
	// weights, samplingLogp: [B, T] for rows, [R, K] for trees;
	// advantages: [B] for rows, [R, K] for trees.
	weights, advantages, samplingLogp *tensors.Tensor
	tree                              bool
}

// treeRowNodes is the least number of nodes a prefix-tree row may hold (a
// row is as long as the longest sample when that is more): attention costs
// the square of a row's length, so rows are kept short.
const treeRowNodes = 1024

// packMicroBatches turns the episodes into training samples (one per model
// turn), splits them by episode into gradient_accumulation_steps
// micro-batches, and packs each with its token weights and advantages.
func (t *GRPOTrainer) packMicroBatches(sc scoredRollout) ([]lossBatch, error) {
	cfg := t.Config
	samples := Samples(sc.episodes)
	microOf := make([]int, len(samples))
	micros := max(1, cfg.GradientAccumulationSteps)
	perMicro := (len(sc.episodes) + micros - 1) / micros
	for i, smp := range samples {
		microOf[i] = smp.Episode / perMicro
	}
	weights, err := TokenWeights(samples, microOf, len(sc.episodes), cfg.MaxCompletionLength, cfg.LossType)
	if err != nil {
		return nil, err
	}
	sampleAdv := make([]float64, len(samples))
	for i, smp := range samples {
		sampleAdv[i] = sc.adv[smp.Episode]
	}
	var batches []lossBatch
	for k := 0; k < micros; k++ {
		var idx []int
		for i := range samples {
			if microOf[i] == k {
				idx = append(idx, i)
			}
		}
		if len(idx) == 0 {
			continue
		}
		if cfg.PrefixSharing && !t.Roller.cfg.StaticShapes {
			lb, err := packTreeSamples(samples, idx, weights, sampleAdv, t.Roller.tok.PAD())
			if err != nil {
				return nil, err
			}
			batches = append(batches, lb)
			continue
		}
		shape := t.lossShape(perMicro)
		for _, part := range rowChunks(idx, cfg.LossRows) {
			fixed := shape
			if cfg.LossRows > 0 && fixed.rows > 0 {
				fixed.rows = min(fixed.rows, cfg.LossRows)
			}
			mb := packSamples(samples, part, weights, t.Roller.tok.PAD(), cfg.LengthBucket, fixed)
			batches = append(batches, lossBatch{model: []*tensors.Tensor{mb.ids, mb.mask, mb.positions},
				weights: mb.weights, advantages: mb.perRow(sampleAdv), samplingLogp: mb.samplingLogp})
		}
	}
	return batches, nil
}

// rowChunks splits a micro-batch's sample indices into runs of at most n
// (all of them in one when n ≤ 0): the loss calls of loss_rows.
func rowChunks(idx []int, n int) [][]int {
	if n <= 0 || len(idx) <= n {
		return [][]int{idx}
	}
	var out [][]int
	for len(idx) > n {
		out = append(out, idx[:n])
		idx = idx[n:]
	}
	return append(out, idx)
}

// lossShape is the shape of the loss micro-batches with static shapes
// (none without): perMicro episodes of at most step_budget turns each, and
// the static prompt length plus max_new_tokens (the longest a turn sample
// can be).
func (t *GRPOTrainer) lossShape(perMicro int) fixedShape {
	if !t.Roller.cfg.StaticShapes {
		return fixedShape{}
	}
	cfg := t.Config
	return fixedShape{rows: qwen3.BucketRows(perMicro * max(1, cfg.StepBudget)),
		length: roundUpTo(t.Roller.StaticPromptLength()+cfg.MaxNewTokens, cfg.LengthBucket)}
}

func roundUpTo(n, m int) int {
	m = max(m, 1)
	return (n + m - 1) / m * m
}

// packTreeSamples packs the samples idx into prefix-tree rows
// (qwen3.PackTrees): each weighted token of each sample is one scored
// occurrence, with the sample's advantage, its weight and its sampling
// log-prob; identical prefixes of several samples are one set of nodes.
func packTreeSamples(samples []Sample, idx []int, weights [][]float32, adv []float64, pad int32) (lossBatch, error) {
	seqs := make([][]int32, len(idx))
	longest := 0
	for j, i := range idx {
		seqs[j] = samples[i].IDs
		longest = max(longest, len(seqs[j]))
	}
	tb, err := qwen3.PackTrees(seqs, max(treeRowNodes, longest), pad)
	if err != nil {
		return lossBatch{}, fmt.Errorf("grpo: pack turn samples: %w", err)
	}
	rows := tb.Rows()
	count := make([]int, rows)
	for j, i := range idx {
		for t := 1; t < len(samples[i].Mask); t++ {
			if samples[i].Mask[t] != 0 {
				count[tb.Row[j]]++
			}
		}
	}
	k := qwen3.BucketLength(slices.Max(count))
	from, targets := make([]int32, rows*k), make([]int32, rows*k)
	w, a, sl := make([]float32, rows*k), make([]float32, rows*k), make([]float32, rows*k)
	fill := make([]int, rows)
	for j, i := range idx {
		s, r := samples[i], tb.Row[j]
		for t := 1; t < len(s.Mask); t++ {
			if s.Mask[t] == 0 {
				continue
			}
			o := r*k + fill[r]
			fill[r]++
			from[o], targets[o] = tb.Node[j][t-1], s.IDs[t]
			w[o], a[o], sl[o] = weights[i][t], float32(adv[i]), s.LogProbs[t]
		}
	}
	occ := func(x []float32) *tensors.Tensor { return tensors.FromFlatDataAndDimensions(x, rows, k) }
	return lossBatch{
		model: []*tensors.Tensor{tb.IDs, tb.Positions, tb.SubtreeEnd,
			tensors.FromFlatDataAndDimensions(from, rows, k), tensors.FromFlatDataAndDimensions(targets, rows, k)},
		weights: occ(w), advantages: occ(a), samplingLogp: occ(sl), tree: true,
	}, nil
}

// fixedLogProbs computes, once per step, the log-probabilities the loss
// compares against: the old policy's when num_iterations > 1 (else the
// loss uses the current ones, detached) and the reference model's when
// beta > 0. A nil entry means: use the sampling log-probabilities.
func (t *GRPOTrainer) fixedLogProbs(batches []lossBatch, lc LossConfig) (olds, refs []*tensors.Tensor, err error) {
	olds = make([]*tensors.Tensor, len(batches))
	refs = make([]*tensors.Tensor, len(batches))
	for k, mb := range batches {
		if !lc.FreshOld {
			if olds[k], err = t.tokenLogp(t.Learner.Model.Weights(), mb); err != nil {
				return nil, nil, err
			}
		}
		if lc.Beta > 0 {
			if refs[k], err = t.tokenLogp(t.ref, mb); err != nil {
				return nil, nil, err
			}
		}
	}
	return olds, refs, nil
}

// lossSums are the per-token quantities the loss reports, summed over a
// step's tokens (of its first iteration).
type lossSums struct {
	Tokens, Entropy, KL, ClipLow, ClipHigh, SamplingDiff float64
}

// add adds the loss graph's extra outputs, in lossGraph's order.
func (s *lossSums) add(extras []float64) {
	s.Tokens += extras[0]
	s.Entropy += extras[1]
	s.KL += extras[2]
	s.ClipLow += extras[3]
	s.ClipHigh += extras[4]
	s.SamplingDiff += extras[5]
}

// updateResult is what the update stage reports.
type updateResult struct {
	loss, gradNorm   float64 // of the last iteration
	sums             lossSums
	optimizerSeconds float64 // in AdamW steps (the rest of the stage is loss and backward)
}

// update accumulates the loss's gradients over the micro-batches and takes
// an optimizer step at learning rate lr, num_iterations times.
func (t *GRPOTrainer) update(batches []lossBatch, olds, refs []*tensors.Tensor, lc LossConfig, lr float64) (updateResult, error) {
	var up updateResult
	for it := 0; it < max(1, t.Config.NumIterations); it++ {
		up.loss = 0
		for k, mb := range batches {
			if t.Log != nil && len(batches) > 1 {
				t.Log.Activity(fmt.Sprintf("step %d: loss and gradients, micro-batch %d of %d", t.Learner.Steps+1, k+1, len(batches)))
			}
			old, ref := olds[k], refs[k]
			if old == nil {
				old = mb.samplingLogp
			}
			if ref == nil {
				ref = mb.samplingLogp
			}
			key, graph := t.lossGraphOf(mb, lc)
			l, extras, err := t.Learner.accumulate(key, graph, slices.Concat(mb.model,
				[]*tensors.Tensor{mb.weights, mb.advantages, old, ref, mb.samplingLogp}))
			if err != nil {
				return up, withOOMHint(err)
			}
			up.loss += l
			if it == 0 {
				up.sums.add(extras)
			}
		}
		var err error
		start := now()
		if up.gradNorm, err = t.Learner.Apply(lr); err != nil {
			return up, withOOMHint(err)
		}
		up.optimizerSeconds += since(start)
	}
	return up, nil
}

// lossGraph adapts GRPOLoss to the learner; its extra outputs are in
// lossSums' order.
func (t *GRPOTrainer) lossGraph(lc LossConfig) lossGraph {
	cfg := t.Learner.Model.Config
	return func(weights, in []*Node) (*Node, []*Node) {
		out := GRPOLoss(cfg, weights, LossInputs{IDs: in[0], Mask: in[1], Positions: in[2], Weights: in[3], Advantages: in[4],
			OldLogp: in[5], RefLogp: in[6], SamplingLogp: in[7]}, lc)
		return out.Loss, []*Node{out.Tokens, out.Entropy, out.KL, out.ClipLow, out.ClipHigh, out.SamplingDiff}
	}
}

// lossGraphOf returns the learner key and loss graph of mb's layout.
func (t *GRPOTrainer) lossGraphOf(mb lossBatch, lc LossConfig) (string, lossGraph) {
	if mb.tree {
		return "grpo_tree", t.treeLossGraph(lc)
	}
	return "grpo", t.lossGraph(lc)
}

// treeLossGraph adapts GRPOTreeLoss to the learner, like lossGraph.
func (t *GRPOTrainer) treeLossGraph(lc LossConfig) lossGraph {
	cfg := t.Learner.Model.Config
	return func(weights, in []*Node) (*Node, []*Node) {
		out := GRPOTreeLoss(cfg, weights, TreeLossInputs{IDs: in[0], Positions: in[1], SubtreeEnd: in[2], From: in[3], Targets: in[4],
			Weights: in[5], Advantages: in[6], OldLogp: in[7], RefLogp: in[8], SamplingLogp: in[9]}, lc)
		return out.Loss, []*Node{out.Tokens, out.Entropy, out.KL, out.ClipLow, out.ClipHigh, out.SamplingDiff}
	}
}

// tokenLogp computes, without gradients and with the given weights, the
// log-probabilities the loss compares against: log p(token t | < t) at every
// position of padded rows ([B, T], 0 at t = 0), or of every scored
// occurrence of trees ([R, K]).
func (t *GRPOTrainer) tokenLogp(weights []*tensors.Tensor, mb lossBatch) (*tensors.Tensor, error) {
	cfg := t.Learner.Model.Config
	n := len(weights)
	key := fmt.Sprintf("logp_t%g", t.Config.Temperature)
	if mb.tree {
		key = "tree_" + key
	}
	e, err := t.Learner.exec(key, func(g *Graph, in []*Node) []*Node {
		if mb.tree {
			logp, _ := qwen3.TreeTokenLogProbs(cfg, in[:n], in[n], in[n+1], in[n+2], in[n+3], in[n+4], t.Config.Temperature)
			return []*Node{logp}
		}
		logp, _ := qwen3.TokenLogProbs(cfg, in[:n], in[n], in[n+1], in[n+2], t.Config.Temperature)
		b := logp.Shape().Dimensions[0]
		return []*Node{Concatenate([]*Node{Zeros(g, shapesOf(b, 1)), logp}, 1)}
	})
	if err != nil {
		return nil, err
	}
	out, err := qwen3.Run(e, slices.Concat(weights, mb.model))
	if err != nil {
		return nil, fmt.Errorf("grpo: score old/reference log-probs: %w", err)
	}
	return out[0], nil
}

func shapesOf(dims ...int) shapes.Shape { return shapes.Make(dtypes.Float32, dims...) }

// metrics computes the step's metrics with TRL's names.
func (t *GRPOTrainer) metrics(sc scoredRollout, sums lossSums) Metrics {
	m := Metrics{}
	m["reward"], m["reward_std"] = mean(sc.total), math.Sqrt(variance(sc.total))
	for _, r := range t.Rewards {
		vals := finite(sc.perFunc[r.Name])
		m["rewards/"+r.Name+"/mean"], m["rewards/"+r.Name+"/std"] = mean(vals), math.Sqrt(variance(vals))
	}
	m["frac_reward_zero_std"] = sc.zeroStd
	var lengths []float64
	correct, truncated := 0.0, 0.0
	for _, e := range sc.episodes {
		lengths = append(lengths, float64(e.Meta.CompletionTokens))
		if e.Meta.Correct {
			correct++
		}
		if e.Meta.Truncated {
			truncated++
		}
	}
	n := float64(len(sc.episodes))
	m["completions/mean_length"], m["completions/min_length"], m["completions/max_length"] = mean(lengths), slices.Min(lengths), slices.Max(lengths)
	m["completions/clipped_ratio"] = truncated / n
	m["success_rate"] = correct / n
	tokens := math.Max(sums.Tokens, 1)
	m["entropy"] = sums.Entropy / tokens
	if t.Config.Beta > 0 {
		m["kl"] = sums.KL / tokens
	}
	m["clip_ratio/low_mean"], m["clip_ratio/high_mean"] = sums.ClipLow/tokens, sums.ClipHigh/tokens
	m["clip_ratio/region_mean"] = (sums.ClipLow + sums.ClipHigh) / tokens
	m["sampling/logp_abs_diff_mean"] = sums.SamplingDiff / tokens
	m["num_tokens"] = sums.Tokens
	m["turns/mean"] = float64(sc.stats.Turns) / n
	m["parse_failures"] = float64(sc.stats.ParseFailures)
	m["rollout/env_failures"] = float64(sc.stats.EnvFailures)
	m["rollout/replayed_episodes"] = float64(sc.stats.ReplayedEpisodes)
	m["rollout/dropped_groups"] = float64(sc.stats.DroppedGroups)
	return m
}

// stoppedError is the error that stopped a run early, with the checkpoint
// saved of the steps done before it and how to continue from there.
type stoppedError struct {
	err        error
	checkpoint string
	steps      int
}

func (e stoppedError) Error() string {
	done := fmt.Sprintf("the %d steps done are", e.steps)
	if e.steps == 1 {
		done = "the 1 step done is"
	}
	return fmt.Sprintf("%v\n(%s saved in %s: to continue, run again with resume_from_checkpoint %s — flag -resume_from_checkpoint, or GRPOConfig.ResumeFromCheckpoint)",
		e.err, done, e.checkpoint, e.checkpoint)
}

func (e stoppedError) Unwrap() error { return e.err }
