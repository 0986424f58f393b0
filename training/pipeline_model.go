package training

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/gomlx/compute/dtypes"
	"github.com/gosqlenv/gosqlenv/sqlenv"
	"github.com/gosqlenv/gosqlenv/sqlenv/dataset"
	"github.com/gosqlenv/gosqlenv/training/qwen3"
	"github.com/gosqlenv/gosqlenv/training/tinybase"
	"github.com/gosqlenv/gosqlenv/training/tokenizer"
)

// How a pipeline gets its model: a Qwen3 model by name or directory, or
// the tiny preset's base model and its tokenizer.

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
	if p.Roller, err = NewRoller(p.Model, p.Tokenizer, p.NewEnv, p.RolloutConfig()); err != nil {
		return err
	}
	p.Roller.OnEnvFailure = reportEnvFailure
	return nil
}

// reportEnvFailure tells the user, on stderr, of an environment failure
// during a rollout and what became of the episode.
func reportEnvFailure(questionID string, err error, recovered bool) {
	outcome := "its group was dropped from the rollout"
	if recovered {
		outcome = "it went on in a new session, its actions replayed"
	}
	fmt.Fprintf(os.Stderr, "environment failure on question %s: %v; %s\n", questionID, err, outcome)
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

// tinyModel builds the tiny preset: a BPE vocabulary learned from the
// system prompt and oracle episodes of the training questions (saved under
// output_dir/tokenizer), and a random Qwen3 of TinyModelConfig (with
// TinyHeads attention heads when set).
func (p *Pipeline) tinyModel(ctx context.Context) error {
	dir := filepath.Join(p.Config.OutputDir, "tokenizer")
	tk, err := tokenizer.Load(dir)
	if err != nil {
		corpus, err := p.tinyCorpus(ctx)
		if err != nil {
			return err
		}
		if tk, err = tokenizer.TrainBPE(corpus, tokenizer.TrainOptions{VocabSize: TinyVocabSize,
			AddedTokens: TinyAddedTokens, EOS: "<|im_end|>",
			Pattern: p.TokenizerPattern}); err != nil {
			return err
		}
		if err := tk.Save(dir); err != nil {
			return err
		}
	}
	mc := TinyModelConfig(tk.VocabSize())
	if p.TinyHeads > 0 {
		mc.NumAttentionHeads, mc.NumKeyValueHeads = p.TinyHeads, p.TinyHeads
	}
	w, err := qwen3.RandomWeights(mc, uint64(p.Config.Seed), p.dtype())
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
	err := p.eachDatabase(slices.Concat(p.Pretrain, p.Train), func(group []dataset.QuestionRecord, newEnv func() (sqlenv.Env, error)) error {
		oracle := sqlenv.NewOraclePolicy(group)
		env, err := newEnv()
		if err != nil {
			return err
		}
		defer env.Close()
		for _, q := range group {
			obs, err := env.Reset(ctx, sqlenv.ResetOptions{QuestionID: q.QuestionID})
			if err != nil {
				return err
			}
			for {
				corpus = append(corpus, FormatObservation(obs, p.Config.MaxResultChars))
				if obs.Done {
					break
				}
				a, err := oracle.Act(ctx, obs)
				if err != nil {
					return err
				}
				corpus = append(corpus, FormatAction(a))
				if obs, err = env.Step(ctx, a); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return corpus, nil
}

// tinyBaseModel loads the embedded base model and checks that its
// pre-training saw none of the run's held-out and evaluation questions.
func (p *Pipeline) tinyBaseModel(ctx context.Context) error {
	dir, err := tinybase.Dir()
	if err != nil {
		return err
	}
	prov, err := tinybase.ReadProvenance(dir)
	if err != nil {
		return err
	}
	if err := checkNotPretrained(prov, slices.Concat(p.Heldout, p.Eval)); err != nil {
		return err
	}
	model, tok, dir, err := LoadModelAndTokenizer(ctx, p.Backend, dir, p.dtype())
	if err != nil {
		return fmt.Errorf("model_name %q: %w", TinyBaseModelName, err)
	}
	p.Model, p.Tokenizer, p.TokenizerDir = model, tok, dir
	return nil
}
