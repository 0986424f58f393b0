package raft

import (
	"context"
	"errors"
	"fmt"

	"github.com/gosqlenv/gosqlenv/training"
	"github.com/gosqlenv/gosqlenv/training/qwen3"
	"github.com/gosqlenv/gosqlenv/training/tokenizer"
	"github.com/gosqlenv/gosqlenv/training/verify"
)

// Request is what a cycle asks of a Source.
type Request struct {
	// Cycle is the 0-based cycle number.
	Cycle int
	// SamplesPerPrompt completions are sampled per prompt at Temperature
	// (with TopP/TopK and at most MaxNewTokens tokens where the source
	// generates itself).
	SamplesPerPrompt int
	Temperature      float64
	TopP             float64
	TopK             int
	MaxNewTokens     int
	// MaxWorkers bounds parallel verifications.
	MaxWorkers int
	// Seed makes the cycle's sampling reproducible.
	Seed int64
}

// Source samples and scores one cycle's candidates from the current policy.
type Source interface {
	// Candidates returns SamplesPerPrompt scored candidates for each prompt.
	Candidates(ctx context.Context, req Request) ([]Candidate, error)
	// NumPrompts is the number of prompts sampled per cycle.
	NumPrompts() int
}

// Prompt is one task of a PromptSource.
type Prompt struct {
	// ID names the prompt in logs (default: its index).
	ID string
	// Text is the user message the model answers. With an
	// ExecutionVerifier, examples written in it ("Input: 5 Output: 25",
	// "Example: input=5, output=25") become the prompt's test cases.
	Text string
}

// PromptSource samples single-turn completions of prompts from a model and
// scores them with a Verifier (e.g. a sandboxed verify.ExecutionVerifier for
// code). Verification gets each candidate's own prompt
// (verify.VerifyBatchWithPrompts), so per-prompt tests are extracted from it.
type PromptSource struct {
	// Model generates the completions: the policy being trained
	// (*qwen3.Model), so that each cycle samples the fine-tuned weights.
	Model training.Generator
	// Tokenizer renders the chat template and encodes/decodes.
	Tokenizer training.ChatTokenizer
	// Prompts are the tasks, each sampled SamplesPerPrompt times per cycle.
	Prompts []Prompt
	// Verifier scores completions (its Verify extracts the code).
	Verifier verify.Verifier
	// SystemPrompt, when set, opens every chat.
	SystemPrompt string
	// EnableThinking lets Qwen3 think first (default: the empty think block).
	EnableThinking bool
	// GenerateBatch bounds the sequences per generation call (default 64).
	GenerateBatch int
	// LengthBucket is passed to generation.
	LengthBucket int
}

// NumPrompts is len(Prompts).
func (s *PromptSource) NumPrompts() int { return len(s.Prompts) }

// Candidates samples req.SamplesPerPrompt completions per prompt and verifies them.
func (s *PromptSource) Candidates(ctx context.Context, req Request) ([]Candidate, error) {
	if s.Model == nil || s.Tokenizer == nil || s.Verifier == nil {
		return nil, errors.New("raft: PromptSource needs a Model, a Tokenizer and a Verifier")
	}
	if len(s.Prompts) == 0 {
		return nil, errors.New("raft: PromptSource has no prompts")
	}
	encoded := make([][]int32, len(s.Prompts))
	for i, p := range s.Prompts {
		var msgs []tokenizer.Message
		if s.SystemPrompt != "" {
			msgs = append(msgs, tokenizer.Message{Role: "system", Content: s.SystemPrompt})
		}
		msgs = append(msgs, tokenizer.Message{Role: "user", Content: p.Text})
		text, err := s.Tokenizer.ApplyChatTemplate(msgs, tokenizer.ChatOptions{AddGenerationPrompt: true, DisableThinking: !s.EnableThinking})
		if err != nil {
			return nil, fmt.Errorf("raft: prompt %s: chat template: %w", s.promptID(i), err)
		}
		encoded[i] = s.Tokenizer.Encode(text)
	}
	// Row r samples prompt r / SamplesPerPrompt.
	rows := len(s.Prompts) * req.SamplesPerPrompt
	batch := s.GenerateBatch
	if batch <= 0 {
		batch = 64
	}
	cands := make([]Candidate, rows)
	for start := 0; start < rows; start += batch {
		end := min(start+batch, rows)
		prompts := make([][]int32, 0, end-start)
		for r := start; r < end; r++ {
			prompts = append(prompts, encoded[r/req.SamplesPerPrompt])
		}
		gen, err := s.Model.Generate(ctx, prompts, qwen3.GenerateOptions{
			MaxNewTokens: req.MaxNewTokens, Temperature: req.Temperature, TopP: req.TopP, TopK: req.TopK,
			Seed: req.Seed*1_000_003 + int64(start), StopTokens: []int32{s.Tokenizer.EOS(), s.Tokenizer.PAD()},
			PadID: s.Tokenizer.PAD(), LengthBucket: s.LengthBucket,
		})
		if err != nil {
			return nil, fmt.Errorf("raft: generate rows %d–%d: %w", start, end-1, err)
		}
		for k, toks := range gen.Tokens {
			r := start + k
			p := r / req.SamplesPerPrompt
			text, err := s.Tokenizer.Decode(toks, true)
			if err != nil {
				return nil, fmt.Errorf("raft: decode a completion of prompt %s: %w", s.promptID(p), err)
			}
			// One single-turn episode: training.Samples masks the completion only.
			turn := training.Turn{PromptIDs: encoded[p], CompletionIDs: toks, LogProbs: gen.LogProbs[k]}
			samples := training.Samples([]*training.Episode{{Turns: []training.Turn{turn}}})
			samples[0].Episode = r
			cands[r] = Candidate{Prompt: p, PromptID: s.promptID(p), Text: text, Samples: samples}
		}
	}
	promptTexts, codes := make([]string, rows), make([]string, rows)
	for r, c := range cands {
		promptTexts[r], codes[r] = s.Prompts[c.Prompt].Text, c.Text
	}
	results, err := verify.VerifyBatchWithPrompts(ctx, s.Verifier, promptTexts, codes, req.MaxWorkers)
	if err != nil {
		return nil, fmt.Errorf("raft: verify: %w", err)
	}
	for r, res := range results {
		cands[r].Reward, cands[r].Success = res.Reward, res.Success
		cands[r].Details = res.Details
		if res.Error != "" {
			cands[r].Details = res.Error
		}
	}
	return cands, ctx.Err()
}

func (s *PromptSource) promptID(i int) string {
	if s.Prompts[i].ID != "" {
		return s.Prompts[i].ID
	}
	return fmt.Sprint(i)
}

// EnvironmentSource samples multi-turn episodes of the SQL environment's
// questions with a training.Roller: the environment verifies the final
// ANSWER against the gold answer (sqlenv's answer check), and the reward is
// the weighted sum of Rewards (default: correctness, 1 or 0). Each turn of a
// kept episode becomes a training sample whose loss covers the model's
// tokens only, the observations excluded — RAFT as a baseline to GRPO on the
// same rollouts.
type EnvironmentSource struct {
	// Roller plays the episodes with the policy being trained.
	Roller *training.Roller
	// QuestionIDs are the questions sampled each cycle.
	QuestionIDs []string
	// Rewards score episodes (default: training.RewardCorrectness, weight 1).
	Rewards []training.NamedReward
}

// NumPrompts is len(QuestionIDs).
func (s *EnvironmentSource) NumPrompts() int { return len(s.QuestionIDs) }

// Candidates plays req.SamplesPerPrompt episodes of each question at
// req.Temperature (the roller's other settings apply) and scores them.
func (s *EnvironmentSource) Candidates(ctx context.Context, req Request) ([]Candidate, error) {
	if s.Roller == nil {
		return nil, errors.New("raft: EnvironmentSource needs a Roller")
	}
	if len(s.QuestionIDs) == 0 {
		return nil, errors.New("raft: EnvironmentSource has no questions")
	}
	rewards := s.Rewards
	if len(rewards) == 0 {
		rewards = []training.NamedReward{{Name: "correctness", Weight: 1, Func: training.RewardCorrectness}}
	}
	episodes, _, err := s.Roller.RolloutWith(ctx, s.QuestionIDs, req.SamplesPerPrompt, req.Temperature)
	if err != nil {
		return nil, fmt.Errorf("raft: %w", err)
	}
	total, _ := training.ScoreEpisodes(rewards, episodes)
	cands := make([]Candidate, len(episodes))
	for i, ep := range episodes {
		details := "no answer"
		if ep.Meta.Answered {
			details = "wrong answer"
			if ep.Meta.Correct {
				details = "correct answer"
			}
		}
		cands[i] = Candidate{Prompt: ep.Group, PromptID: ep.QuestionID, Text: ep.Completion(),
			Samples: training.Samples([]*training.Episode{ep}), Reward: total[i], Success: ep.Meta.Correct, Details: details}
	}
	return cands, nil
}
