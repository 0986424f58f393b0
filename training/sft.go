package training

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gosqlenv/gosqlenv/sqlenv"
	"github.com/gosqlenv/gosqlenv/sqlenv/dataset"
	"github.com/gosqlenv/gosqlenv/training/optim"
	"github.com/gosqlenv/gosqlenv/training/qwen3"
	"github.com/gosqlenv/gosqlenv/training/tokenizer"
)

// OracleSamples plays the oracle policy (describe the involved tables,
// query the gold SQL, answer) on each question and turns every turn into a
// training sample: the prompt exactly as a rollout would render it (same
// system prompt, history window and chat template) followed by the oracle's
// action as canonical text and the end-of-turn token. Only those action
// tokens are trained on (assistant-only loss): multi-turn warm-up data. An
// oracle step that gets an error observation (its query timed out on a
// starved machine) is an error, not a demonstration.
func (r *Roller) OracleSamples(ctx context.Context, questions []dataset.QuestionRecord) ([]Sample, error) {
	oracle := sqlenv.NewOraclePolicy(questions)
	var out []Sample
	for qi, q := range questions {
		env, err := r.newEnv()
		if err != nil {
			return nil, err
		}
		obs, err := env.Reset(ctx, sqlenv.ResetOptions{QuestionID: q.QuestionID})
		if err != nil {
			env.Close()
			return nil, fmt.Errorf("sft: reset %s: %w", q.QuestionID, err)
		}
		history := []tokenizer.Message{{Role: "user", Content: FormatObservation(obs, r.cfg.MaxResultChars)}}
		for !obs.Done {
			a, err := oracle.Act(ctx, obs)
			if err != nil {
				env.Close()
				return nil, fmt.Errorf("sft: oracle on %s: %w", q.QuestionID, err)
			}
			prompt, err := r.prompt(history)
			if err != nil {
				env.Close()
				return nil, err
			}
			text := FormatAction(a)
			completion := append(r.tok.Encode(text), r.tok.EOS())
			s := actionSample(prompt, completion)
			s.Episode = qi
			out = append(out, s)
			if obs, err = env.Step(ctx, a); err != nil {
				env.Close()
				return nil, fmt.Errorf("sft: step %s: %w", q.QuestionID, err)
			}
			if obs.Error != "" {
				// A demonstration must not teach answering past an error
				// (a query starved past its timeout on a busy machine):
				// the samples would differ from run to run.
				env.Close()
				return nil, fmt.Errorf("sft: the oracle's %s on %s got an error, so its demonstration would be wrong: %s", a.ActionType, q.QuestionID, obs.Error)
			}
			history = append(history, tokenizer.Message{Role: "assistant", Content: text},
				tokenizer.Message{Role: "user", Content: FormatObservation(obs, r.cfg.MaxResultChars)})
		}
		env.Close()
	}
	return out, nil
}

// SFTTrainer fine-tunes on fixed samples with the negative log-likelihood of
// their masked tokens.
type SFTTrainer struct {
	Config       GRPOConfig
	Learner      *Learner
	Samples      []Sample
	Log          *RunLog
	TokenizerDir string
	// BatchSamples is the number of samples per optimizer step (default
	// sft_batch_size).
	BatchSamples int
	// LastEpochLoss is the mean loss of the steps of the last epoch Train
	// ran.
	LastEpochLoss float64
	// Stage names the checkpoints' stage in trainer_state.json (default
	// "sft").
	Stage string
	// KeepLastCheckpoint removes each periodic checkpoint (save_steps) when
	// the next one is written, so that a long run keeps one.
	KeepLastCheckpoint bool
	// Evaluate, when set, runs every eval_steps steps and at the end; its
	// metrics join that step's in the log (as GRPOTrainer.Evaluate).
	Evaluate func(ctx context.Context) (Metrics, error)
	// StaticShapes packs every micro-batch to one shape (static_shapes):
	// the rows of the largest micro-batch (BucketRows) and the longest
	// sample's length (a power of two times length_bucket).
	StaticShapes bool

	digest string // samplesDigest(Samples), computed once
}

// NewSFTTrainer prepares supervised warm-up with the config's SFT settings.
func NewSFTTrainer(cfg GRPOConfig, model *qwen3.Model, samples []Sample, log *RunLog) (*SFTTrainer, error) {
	if len(samples) == 0 {
		return nil, errors.New("sft: no samples")
	}
	return &SFTTrainer{Config: cfg, Samples: samples, Log: log,
		Learner: NewLearner(model, optim.AdamWConfig{Beta1: cfg.AdamBeta1, Beta2: cfg.AdamBeta2, Epsilon: cfg.AdamEpsilon,
			WeightDecay: cfg.WeightDecay, MaxGradNorm: cfg.MaxGradNorm})}, nil
}

func (t *SFTTrainer) batchSize() int {
	if t.BatchSamples > 0 {
		return t.BatchSamples
	}
	return max(1, t.Config.SFTBatchSize)
}

// epochOrder returns the batches of an epoch, as indices into Samples: a
// shuffle seeded by the seed and the epoch (so that a resumed run plays the
// same batches), cut into batches of batchSize — after sorting each run of
// sft_length_group_batches batches by sample length, when that is above 1,
// and then shuffling the batches.
func (t *SFTTrainer) epochOrder(epoch int) [][]int {
	r := rand.New(rand.NewPCG(uint64(t.Config.Seed), uint64(1000+epoch)))
	order := r.Perm(len(t.Samples))
	bs, group := t.batchSize(), t.Config.SFTLengthGroupBatches
	if group > 1 {
		for start := 0; start < len(order); start += group * bs {
			run := order[start:min(start+group*bs, len(order))]
			slices.SortStableFunc(run, func(a, b int) int { return cmp.Compare(len(t.Samples[a].IDs), len(t.Samples[b].IDs)) })
		}
	}
	var batches [][]int
	for start := 0; start < len(order); start += bs {
		batches = append(batches, order[start:min(start+bs, len(order))])
	}
	if group > 1 {
		r.Shuffle(len(batches), func(i, j int) { batches[i], batches[j] = batches[j], batches[i] })
	}
	return batches
}

// fixedShape is the micro-batches' shape with StaticShapes (none
// without).
func (t *SFTTrainer) fixedShape() fixedShape {
	if !t.StaticShapes {
		return fixedShape{}
	}
	micros := min(max(1, t.Config.SFTGradientAccumulationSteps), t.batchSize())
	longest := 0
	for _, s := range t.Samples {
		longest = max(longest, len(s.IDs))
	}
	return fixedShape{rows: qwen3.BucketRows((t.batchSize() + micros - 1) / micros), length: staticLength(longest, t.Config.LengthBucket)}
}

// TotalSteps is the number of optimizer steps of Train.
func (t *SFTTrainer) TotalSteps() int {
	per := (len(t.Samples) + t.batchSize() - 1) / t.batchSize()
	return per * max(1, t.Config.SFTEpochs)
}

// Train runs sft_epochs over the samples (epochOrder: seeded shuffles, by
// length under sft_length_group_batches), with a linear
// learning-rate decay from sft_learning_rate, logging NLL per step.
//
// A run from step 0 first removes the metrics and checkpoints an earlier
// run left in output_dir; output_dir/run.json (RunState) says whether the
// run is going, completed or stopped, and at which checkpoint.
func (t *SFTTrainer) Train(ctx context.Context) error {
	end, err := trackRun(t.Config.OutputDir, t.stage(), t.Learner.Steps, t.TotalSteps(), "")
	if err != nil {
		return err
	}
	err = t.train(ctx)
	end(t.Learner.Steps, err)
	return err
}

func (t *SFTTrainer) train(ctx context.Context) error {
	total := t.TotalSteps()
	bs := t.batchSize()
	per := (len(t.Samples) + bs - 1) / bs
	var epochLoss float64
	var epochSteps int
	var order [][]int // the batches of epoch orderEpoch
	orderEpoch := -1
	fixed := t.fixedShape()
	evalAt := func(step int) bool {
		return t.Evaluate != nil && t.Config.EvalSteps > 0 && (step%t.Config.EvalSteps == 0 || step == total)
	}
	var evalSeconds float64 // the last periodic evaluation's
	if t.Log != nil {
		t.Log.between(Metrics{"step": float64(t.Learner.Steps)}, total)
	}
	for s := t.Learner.Steps; s < total; s++ {
		if err := ctx.Err(); err != nil {
			if _, serr := t.checkpoint(); serr != nil {
				return errors.Join(err, serr)
			}
			return err
		}
		start := now()
		epoch, within := s/per, s%per
		if epoch != orderEpoch {
			order, orderEpoch = t.epochOrder(epoch), epoch
		}
		batch := make([]Sample, 0, bs)
		for _, i := range order[within] {
			batch = append(batch, t.Samples[i])
		}
		lr := optim.LinearSchedule(t.Config.SFTLearningRate, s, 0, total)
		step, err := t.Learner.nllStep(batch, t.Config.SFTGradientAccumulationSteps, t.Config.LengthBucket, lr, fixed)
		if err != nil {
			return err
		}
		if within == 0 {
			epochLoss, epochSteps = 0, 0
		}
		epochLoss += step.Loss
		epochSteps++
		t.LastEpochLoss = epochLoss / float64(epochSteps)
		m := Metrics{"step": float64(s + 1), "epoch": float64(s+1) / float64(per), "loss": step.Loss, "grad_norm": step.GradNorm,
			"learning_rate": lr, "num_tokens": step.Tokens, "step_time": since(start)}
		addCompileMetrics(m)
		if evalAt(s + 1) {
			if t.Log != nil {
				t.Log.between(m, total)
			}
			evalStart := now()
			em, err := t.Evaluate(ctx)
			if err != nil {
				return fmt.Errorf("%s: evaluate at step %d: %w", t.stage(), s+1, err)
			}
			maps.Copy(m, em)
			evalSeconds = since(evalStart)
			m["time/eval"] = evalSeconds
		}
		m["time/remaining"] = remainingSeconds(s+1, total, m["step_time"], evalSeconds, evalAt)
		if t.Log != nil {
			if err := t.Log.Add(m, total); err != nil {
				return err
			}
		}
		if n := t.Config.SaveSteps; n > 0 && (s+1)%n == 0 && s+1 < total {
			if _, err := t.checkpoint(); err != nil {
				return err
			}
		}
	}
	if t.Log != nil {
		if err := t.Log.Flush(); err != nil {
			return err
		}
	}
	_, err := t.checkpoint()
	return err
}

// stage is the checkpoints' stage name.
func (t *SFTTrainer) stage() string {
	if t.Stage != "" {
		return t.Stage
	}
	return "sft"
}

// checkpoint saves output_dir/checkpoint-<step> and, with
// KeepLastCheckpoint, removes the stage's earlier ones.
func (t *SFTTrainer) checkpoint() (string, error) {
	dir, err := saveCheckpoint(t.Learner, t.Config, TrainerState{Stage: t.stage(), SamplesDigest: t.samplesDigest()}, t.TokenizerDir)
	if err != nil || !t.KeepLastCheckpoint {
		return dir, err
	}
	old, err := filepath.Glob(filepath.Join(t.Config.OutputDir, "checkpoint-*"))
	if err != nil {
		return dir, err
	}
	for _, o := range old {
		if o != dir {
			if err := os.RemoveAll(o); err != nil {
				return dir, err
			}
		}
	}
	return dir, nil
}

// Resume continues from the latest checkpoint of this trainer's stage in
// output_dir (the highest step), restoring the model, the optimizer moments
// and the step count; the batches that follow are those an uninterrupted
// run would take. It returns the checkpoint used, or "" when there is none.
// A checkpoint whose settings differ from the trainer's (samples per step,
// learning rate, epochs, seed), or that was trained on other samples (other
// questions, another tokenizer, or code that builds them differently, told
// by TrainerState.SamplesDigest), is refused: continuing it would make a
// model that neither run describes.
func (t *SFTTrainer) Resume() (string, error) {
	dir, st, err := latestCheckpoint(t.Config.OutputDir)
	if err != nil || dir == "" {
		return "", err
	}
	if st.Stage != t.stage() {
		return "", fmt.Errorf("resume: %s is a %s checkpoint, not %s", dir, st.Stage, t.stage())
	}
	a, b := st.Config, t.Config
	if a.SFTBatchSize != b.SFTBatchSize || a.SFTLearningRate != b.SFTLearningRate || a.SFTEpochs != b.SFTEpochs || a.Seed != b.Seed ||
		a.SFTLengthGroupBatches != b.SFTLengthGroupBatches {
		return "", fmt.Errorf("resume: %s was trained with sft_batch_size %d, sft_learning_rate %g, sft_epochs %d, seed %d, sft_length_group_batches %d; "+
			"this run asks for %d, %g, %d, %d, %d: use the same settings, or another output directory", dir,
			a.SFTBatchSize, a.SFTLearningRate, a.SFTEpochs, a.Seed, a.SFTLengthGroupBatches,
			b.SFTBatchSize, b.SFTLearningRate, b.SFTEpochs, b.Seed, b.SFTLengthGroupBatches)
	}
	if st.SamplesDigest != "" && st.SamplesDigest != t.samplesDigest() {
		return "", fmt.Errorf("resume: %s was trained on other samples than this run's %d (samples digest %.12s, now %.12s): "+
			"the questions, the tokenizer or the code that turns them into samples changed; use another output directory", dir, len(t.Samples), st.SamplesDigest, t.samplesDigest())
	}
	_, err = loadCheckpoint(t.Learner, dir)
	return dir, err
}

// samplesDigest returns the hex SHA-256 of the trainer's samples in order:
// each sample's token ids and loss mask.
func (t *SFTTrainer) samplesDigest() string {
	if t.digest == "" {
		h := sha256.New()
		var buf []byte
		for _, s := range t.Samples {
			buf = binary.LittleEndian.AppendUint32(buf[:0], uint32(len(s.IDs)))
			for i, id := range s.IDs {
				buf = binary.LittleEndian.AppendUint32(buf, uint32(id))
				buf = binary.LittleEndian.AppendUint32(buf, uint32(s.Mask[i]))
			}
			h.Write(buf)
		}
		t.digest = hex.EncodeToString(h.Sum(nil))
	}
	return t.digest
}

// NLLStepResult is what one supervised step measured.
type NLLStepResult struct {
	// Loss is the mean negative log-likelihood per trained (masked) token.
	Loss float64
	// Tokens is the number of trained tokens.
	Tokens float64
	// GradNorm is the gradients' global norm before clipping.
	GradNorm float64
}

// NLLStep takes one optimizer step of supervised fine-tuning on batch: the
// negative log-likelihood of each sample's masked tokens (the completion
// only; prompt and observation tokens carry no loss), averaged over all
// trained tokens of the batch, accumulated over microBatches micro-batches
// padded to multiples of lengthBucket, then one AdamW step at learning rate
// lr. SFT warm-up and RAFT both train with it.
func (l *Learner) NLLStep(batch []Sample, microBatches, lengthBucket int, lr float64) (NLLStepResult, error) {
	return l.nllStep(batch, microBatches, lengthBucket, lr, fixedShape{})
}

// nllStep is NLLStep with every micro-batch packed to a fixed shape when
// one is given.
func (l *Learner) nllStep(batch []Sample, microBatches, lengthBucket int, lr float64, fixed fixedShape) (NLLStepResult, error) {
	if len(batch) == 0 {
		return NLLStepResult{}, errors.New("nll step: empty batch")
	}
	micros := min(max(1, microBatches), len(batch))
	microOf := make([]int, len(batch))
	for i := range batch {
		microOf[i] = i * micros / len(batch)
	}
	weights, err := TokenWeights(batch, microOf, len(batch), 0, LossDAPO)
	if err != nil {
		return NLLStepResult{}, err
	}
	cfg := l.Model.Config
	nll := func(weights, in []*Node) (*Node, []*Node) {
		logp, _ := qwen3.TokenLogProbs(cfg, weights, in[0], in[1], in[2], 1)
		w := SliceAxis(in[3], 1, AxisRange(1, in[3].Shape().Dimensions[1]))
		active := ConvertDType(GreaterThan(w, ZerosLike(w)), dtypes.Float32)
		return ReduceAllSum(Mul(Neg(logp), w)), []*Node{ReduceAllSum(active)}
	}
	var res NLLStepResult
	for k := 0; k < micros; k++ {
		var rows []int
		for i := range batch {
			if microOf[i] == k {
				rows = append(rows, i)
			}
		}
		mb := packSamples(batch, rows, weights, 0, lengthBucket, fixed)
		loss, extras, err := l.accumulate("sft", nll, []*tensors.Tensor{mb.ids, mb.mask, mb.positions, mb.weights})
		if err != nil {
			l.Discard()
			return NLLStepResult{}, err
		}
		res.Loss += loss
		res.Tokens += extras[0]
	}
	if res.GradNorm, err = l.Apply(lr); err != nil {
		return NLLStepResult{}, err
	}
	return res, nil
}

// CheckTokenBudgets compares the oracle's episodes (SFT samples: one per
// turn, the completion its action) with the generation budgets: each
// action with max_new_tokens and each episode's actions together with
// max_completion_length. It returns "" when everything fits, and otherwise
// a warning that says how many actions or episodes do not and the values
// that fit them all. A model cannot finish an action longer than
// max_new_tokens, nor answer after its episode has used up
// max_completion_length, so the questions that need them are lost to the
// budget whatever the model learns.
func CheckTokenBudgets(samples []Sample, maxNewTokens, maxCompletionLength int) string {
	n := measureTokenNeeds(samples, maxNewTokens, maxCompletionLength)
	var msgs []string
	if n.actionsOver > 0 {
		msgs = append(msgs, fmt.Sprintf("%d of %d oracle actions are longer than max_new_tokens = %d (the longest has %d tokens, end of turn included); set max_new_tokens to at least %d",
			n.actionsOver, len(samples), maxNewTokens, n.longestAction, n.longestAction))
	}
	if n.episodesOver > 0 {
		msgs = append(msgs, fmt.Sprintf("%d of %d oracle episodes write more than max_completion_length = %d tokens (the longest %d); set max_completion_length to at least %d",
			n.episodesOver, n.episodes, maxCompletionLength, n.longestEpisode, n.longestEpisode))
	}
	return strings.Join(msgs, "; ")
}

// tokenNeeds is what the oracle's samples need of the generation budgets
// (CheckTokenBudgets): the longest action (completion tokens of one sample,
// end of turn included) and episode (its samples' completions together),
// and how many of each are over max_new_tokens and max_completion_length.
type tokenNeeds struct {
	longestAction, longestEpisode int
	actionsOver, episodesOver     int
	episodes                      int
}

// measureTokenNeeds counts tokenNeeds; maxCompletionLength ≤ 0 means no
// episode cap.
func measureTokenNeeds(samples []Sample, maxNewTokens, maxCompletionLength int) tokenNeeds {
	var n tokenNeeds
	perEpisode := map[int]int{}
	for _, s := range samples {
		action := 0
		for _, m := range s.Mask {
			action += int(m)
		}
		n.longestAction = max(n.longestAction, action)
		if action > maxNewTokens {
			n.actionsOver++
		}
		perEpisode[s.Episode] += action
	}
	n.episodes = len(perEpisode)
	for _, total := range perEpisode {
		n.longestEpisode = max(n.longestEpisode, total)
		if maxCompletionLength > 0 && total > maxCompletionLength {
			n.episodesOver++
		}
	}
	return n
}
