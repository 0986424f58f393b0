package training

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	"github.com/gosqlenv/gosqlenv/sqlenv"
	"github.com/gosqlenv/gosqlenv/sqlenv/dataset"
	"github.com/gosqlenv/gosqlenv/training/qwen3"
	"github.com/gosqlenv/gosqlenv/training/tokenizer"
)

// Pipeline holds everything a run needs, built from a GRPOConfig: questions,
// shared databases, backend, model, tokenizer and roller.
type Pipeline struct {
	Config    GRPOConfig
	Backend   compute.Backend
	Model     *qwen3.Model
	Tokenizer ChatTokenizer
	// TokenizerDir holds the tokenizer files (copied into checkpoints).
	TokenizerDir string
	Databases    *sqlenv.Databases
	// Train holds the training questions (SFT and GRPO), Heldout the
	// held-out questions of the training databases, Eval the questions of
	// the evaluation databases (never trained on).
	Train, Heldout, Eval []dataset.QuestionRecord
	// Pretrain holds the questions of pre-training (set only to make a base
	// model, see PretrainQuestions): the environment and the tiny vocabulary
	// include them.
	Pretrain []dataset.QuestionRecord
	// TokenizerPattern is the pre-tokenizer pattern of the vocabulary
	// learned for model_name tiny ("": Qwen's); the pretrain command sets
	// TinyTokenizerPattern.
	TokenizerPattern string
	Roller           *Roller
}

// NewPipeline validates cfg, loads the questions (the bundled dataset unless
// paths are given), filters them by difficulty, creates the backend and the
// model (TinyModelName, a local directory or a Hub id) and the roller.
func NewPipeline(ctx context.Context, cfg GRPOConfig) (*Pipeline, error) {
	p, err := OpenData(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if err := p.LoadModel(ctx); err != nil {
		p.Close()
		return nil, err
	}
	return p, nil
}

// OpenData is the data half of NewPipeline: questions and databases, no
// model (LoadModel adds it).
func OpenData(ctx context.Context, cfg GRPOConfig) (*Pipeline, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	p := &Pipeline{Config: cfg}
	if err := p.loadQuestions(ctx); err != nil {
		return nil, err
	}
	return p, nil
}

// LoadModel creates the backend, the model and tokenizer named by
// model_name, and the roller.
func (p *Pipeline) LoadModel(ctx context.Context) error {
	var err error
	if p.Backend, err = qwen3.NewBackend(p.Config.Backend); err != nil {
		return err
	}
	if err := p.loadModel(ctx); err != nil {
		return err
	}
	p.Roller, err = NewRoller(p.Model, p.Tokenizer, p.NewEnv, p.RolloutConfig())
	return err
}

// RolloutConfig derives the roller's settings from the run configuration.
func (p *Pipeline) RolloutConfig() RolloutConfig {
	c := p.Config
	return RolloutConfig{SystemPrompt: c.SystemPrompt, NumGenerations: c.NumGenerations, MaxNewTokens: c.MaxNewTokens, MaxCompletionLength: c.MaxCompletionLength,
		HistoryPairs: c.HistoryPairs, MaxResultChars: c.MaxResultChars, Temperature: c.Temperature, TopP: c.TopP, TopK: c.TopK,
		EnableThinking: c.EnableThinking, LengthBucket: c.LengthBucket, Seed: int64(c.Seed)}
}

// NewEnv makes an environment over all questions (training, held-out and
// evaluation) sharing the pipeline's databases.
func (p *Pipeline) NewEnv() (sqlenv.Env, error) {
	return sqlenv.New(sqlenv.Config{Questions: slices.Concat(p.Pretrain, p.Train, p.Heldout, p.Eval),
		Databases: p.Databases, StepBudget: p.Config.StepBudget})
}

// Close releases the databases.
func (p *Pipeline) Close() error {
	if p.Databases != nil {
		return p.Databases.Close()
	}
	return nil
}

// dtype is the model's dtype: the config's precision resolved on the
// pipeline's backend (Validate has checked the name).
func (p *Pipeline) dtype() dtypes.DType {
	dtype, err := qwen3.DTypeForPrecision(p.Config.Precision, p.Backend)
	if err != nil {
		return dtypes.Float32
	}
	return dtype
}

func (p *Pipeline) loadModel(ctx context.Context) error {
	c := p.Config
	switch c.ModelName {
	case TinyModelName:
		return p.tinyModel(ctx)
	case TinyBaseModelName:
		return p.tinyBaseModel(ctx)
	}
	model, tok, dir, err := LoadModelAndTokenizer(ctx, p.Backend, c.ModelName, p.dtype())
	if err != nil {
		return fmt.Errorf("model_name %q: %w", c.ModelName, err)
	}
	p.Model, p.Tokenizer, p.TokenizerDir = model, tok, dir
	return nil
}

// LoadModelAndTokenizer loads a Qwen3 model (a local directory or a Hugging
// Face id, see qwen3.LoadModel) in dtype on backend, and the tokenizer from
// the same directory. A checkpoint saved without Qwen3's chat template gets
// Qwen3's ChatML rendering (Qwen3Chat). It returns the model directory too
// (checkpoints copy its tokenizer files).
func LoadModelAndTokenizer(ctx context.Context, backend compute.Backend, modelID string, dtype dtypes.DType) (*qwen3.Model, ChatTokenizer, string, error) {
	model, dir, err := qwen3.LoadModel(ctx, backend, modelID, qwen3.LoadOptions{DType: dtype})
	if err != nil {
		return nil, nil, "", err
	}
	tk, err := tokenizer.Load(dir)
	if err != nil {
		return nil, nil, "", err
	}
	if !tokenizer.IsQwen3ChatTemplate(tk.ChatTemplate()) {
		return model, Qwen3Chat{tk}, dir, nil
	}
	return model, tk, dir, nil
}

// tinyModel builds the tiny preset: a BPE vocabulary learned from the
// system prompt and oracle episodes of the training questions (saved under
// output_dir/tokenizer), and a random Qwen3 of TinyModelConfig.
func (p *Pipeline) tinyModel(ctx context.Context) error {
	dir := filepath.Join(p.Config.OutputDir, "tokenizer")
	tk, err := tokenizer.Load(dir)
	if err != nil {
		corpus, err := p.tinyCorpus(ctx)
		if err != nil {
			return err
		}
		if tk, err = tokenizer.TrainBPE(corpus, tokenizer.TrainOptions{VocabSize: TinyVocabSize,
			AddedTokens: []string{"<|endoftext|>", "<|im_start|>", "<|im_end|>", "<think>", "</think>"}, EOS: "<|im_end|>",
			Pattern: p.TokenizerPattern}); err != nil {
			return err
		}
		if err := tk.Save(dir); err != nil {
			return err
		}
	}
	w, err := qwen3.RandomWeights(TinyModelConfig(tk.VocabSize()), uint64(p.Config.Seed), p.dtype())
	if err != nil {
		return err
	}
	if p.Model, err = qwen3.New(p.Backend, w); err != nil {
		return err
	}
	p.Tokenizer, p.TokenizerDir = Qwen3Chat{tk}, dir
	return nil
}

// tinyCorpus is the text the tiny vocabulary is learned from: the chat
// framing, the system prompt, and the observations and actions of oracle
// episodes on the training questions.
func (p *Pipeline) tinyCorpus(ctx context.Context) ([]string, error) {
	system := p.Config.SystemPrompt
	if system == "" {
		system = GetSystemPrompt()
	}
	corpus := []string{system, "<|im_start|>system\n", "<|im_start|>user\n", "<|im_start|>assistant\n<think>\n\n</think>\n\n"}
	qs := slices.Concat(p.Pretrain, p.Train)
	oracle := sqlenv.NewOraclePolicy(qs)
	env, err := p.NewEnv()
	if err != nil {
		return nil, err
	}
	defer env.Close()
	for _, q := range qs {
		obs, err := env.Reset(ctx, sqlenv.ResetOptions{QuestionID: q.QuestionID})
		if err != nil {
			return nil, err
		}
		for {
			corpus = append(corpus, FormatObservation(obs, p.Config.MaxResultChars))
			if obs.Done {
				break
			}
			a, err := oracle.Act(ctx, obs)
			if err != nil {
				return nil, err
			}
			corpus = append(corpus, FormatAction(a))
			if obs, err = env.Step(ctx, a); err != nil {
				return nil, err
			}
		}
	}
	return corpus, nil
}

// Qwen3Chat renders chats with Qwen3's template (tokenizer.RenderQwen3Chat)
// whatever template the wrapped tokenizer's files carry: for the tiny preset
// and for Qwen3 checkpoints saved without a template.
type Qwen3Chat struct{ *tokenizer.Tokenizer }

// ApplyChatTemplate renders msgs as Qwen3's template does.
func (Qwen3Chat) ApplyChatTemplate(msgs []tokenizer.Message, opts tokenizer.ChatOptions) (string, error) {
	return tokenizer.RenderQwen3Chat(msgs, opts)
}

// QuestionIDs lists the ids of questions.
func QuestionIDs(qs []dataset.QuestionRecord) []string {
	ids := make([]string, len(qs))
	for i, q := range qs {
		ids[i] = q.QuestionID
	}
	return ids
}

// RunSFT plays the oracle on up to sft_max_questions training questions and
// fine-tunes on those trajectories (assistant-only loss).
func (p *Pipeline) RunSFT(ctx context.Context, log *RunLog) error {
	qs := p.SFTQuestions()
	samples, err := p.Roller.OracleSamples(ctx, qs)
	if err != nil {
		return err
	}
	if warning := CheckActionLengths(samples, p.Config.MaxNewTokens); warning != "" {
		fmt.Fprintln(os.Stderr, "warning:", warning)
	}
	cfg := p.Config
	cfg.OutputDir = filepath.Join(p.Config.OutputDir, "sft")
	tr, err := NewSFTTrainer(cfg, p.Model, samples, log)
	if err != nil {
		return err
	}
	tr.TokenizerDir = p.TokenizerDir
	return withOOMHint(tr.Train(ctx))
}

// GRPOQuestions returns the training questions GRPO plays: all of Train, or
// grpo_max_questions of them spread over the databases.
func (p *Pipeline) GRPOQuestions() []dataset.QuestionRecord {
	return SpreadOverDatabases(p.Train, p.Config.GRPOMaxQuestions)
}

// SFTQuestions returns the training questions the SFT warm-up imitates: all
// of Train, or sft_max_questions of them spread over the databases.
func (p *Pipeline) SFTQuestions() []dataset.QuestionRecord {
	return SpreadOverDatabases(p.Train, p.Config.SFTMaxQuestions)
}

// NewGRPO returns the GRPO trainer of the pipeline (resuming from
// resume_from_checkpoint when set).
func (p *Pipeline) NewGRPO(log *RunLog) (*GRPOTrainer, error) {
	tr, err := NewGRPOTrainer(p.Config, p.Model, p.Roller, QuestionIDs(p.GRPOQuestions()), log)
	if err != nil {
		return nil, err
	}
	tr.TokenizerDir = p.TokenizerDir
	tr.Evaluate = p.greedySuccess
	if r := p.Config.ResumeFromCheckpoint; r != "" {
		if err := tr.LoadCheckpoint(r); err != nil {
			return nil, err
		}
	}
	return tr, nil
}

// greedySuccess is GRPO's periodic evaluation: the greedy success rate on
// each split, as metrics "eval/<split>/greedy_success".
func (p *Pipeline) greedySuccess(ctx context.Context) (Metrics, error) {
	m := Metrics{}
	for _, split := range Splits {
		qs, err := p.EvalQuestions(split)
		if err != nil || len(qs) == 0 {
			continue
		}
		rep, err := EvaluateModel(ctx, p.Roller, QuestionIDs(qs))
		if err != nil {
			return nil, fmt.Errorf("evaluate on %s: %w", split, err)
		}
		m["eval/"+split+"/greedy_success"] = rep.SuccessRate
	}
	return m, nil
}

// CheckActionLengths compares the oracle's actions (the completions of SFT
// samples) with max_new_tokens: it returns "" when every action fits, and
// otherwise a warning that says how many do not and the value that fits
// them all — a model trained on actions it can never finish cuts them off
// when it plays.
func CheckActionLengths(samples []Sample, maxNewTokens int) string {
	longest, over := 0, 0
	for _, s := range samples {
		n := 0
		for _, m := range s.Mask {
			n += int(m)
		}
		longest = max(longest, n)
		if n > maxNewTokens {
			over++
		}
	}
	if over == 0 {
		return ""
	}
	return fmt.Sprintf("%d of %d oracle actions are longer than max_new_tokens = %d (the longest has %d tokens, end of turn included): "+
		"the model learns actions it cannot finish; set max_new_tokens to at least %d", over, len(samples), maxNewTokens, longest, longest)
}

// withOOMHint adds TRL's advice to device out-of-memory errors.
func withOOMHint(err error) error {
	if err == nil {
		return nil
	}
	msg := strings.ToLower(err.Error())
	if strings.Contains(msg, "out of memory") || strings.Contains(msg, "resource_exhausted") || strings.Contains(msg, "oom") {
		return fmt.Errorf("%w\nthe device ran out of memory: reduce per_device_train_batch_size or num_generations (or max_completion_length), or use precision bfloat16", err)
	}
	return err
}
