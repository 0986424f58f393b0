// Package raft trains a policy by rejection-sampling fine-tuning (RAFT):
// each cycle samples several completions per prompt, scores them with a
// verifier, keeps the best ones and fine-tunes on them with a
// completion-only loss, then decays the learning rate and repeats.
//
// Data flows one way: a Source (prompts scored by a training/verify
// Verifier, or the SQL environment's questions scored by sqlenv) yields
// candidates → Select keeps some → the training.Learner fine-tunes the
// model → the next cycle samples from the updated model.
package raft

import (
	"fmt"
	"math"
	"slices"

	"github.com/gosqlenv/gosqlenv/training/qwen3"
)

// Selection says where the top fraction of candidates is taken.
type Selection string

const (
	// Global keeps the top fraction of all candidates above the threshold
	// (the reference implementation's behaviour).
	Global Selection = "global"
	// PerPrompt keeps the top fraction of each prompt's candidates above the
	// threshold, so that easy prompts do not crowd out hard ones.
	PerPrompt Selection = "per_prompt"
)

// Config configures a RAFT run. Names follow the reference implementation's
// (samples_per_prompt, temperature, reward_threshold, keep_top_fraction,
// num_cycles, lr_decay).
type Config struct {
	// NumCycles is the number of generate → verify → filter → fine-tune cycles.
	NumCycles int `json:"num_cycles" yaml:"num_cycles"`
	// SamplesPerPrompt is the number of completions sampled per prompt and cycle.
	SamplesPerPrompt int `json:"samples_per_prompt" yaml:"samples_per_prompt"`
	// Temperature is the sampling temperature of the first cycle.
	Temperature float64 `json:"temperature" yaml:"temperature"`
	// FinalTemperature, when > 0, anneals the temperature linearly from
	// Temperature (first cycle) to FinalTemperature (last cycle).
	FinalTemperature float64 `json:"final_temperature" yaml:"final_temperature"`
	// TopP and TopK restrict sampling (0: off).
	TopP float64 `json:"top_p" yaml:"top_p"`
	TopK int     `json:"top_k" yaml:"top_k"`
	// MaxNewTokens bounds one completion (PromptSource; the environment
	// source uses its roller's settings).
	MaxNewTokens int `json:"max_new_tokens" yaml:"max_new_tokens"`

	// RewardThreshold: only candidates with reward ≥ threshold can be kept.
	RewardThreshold float64 `json:"reward_threshold" yaml:"reward_threshold"`
	// KeepTopFraction of the candidates above the threshold are kept (at
	// least one wherever any is above it), best rewards first.
	KeepTopFraction float64 `json:"keep_top_fraction" yaml:"keep_top_fraction"`
	// Selection: "global" (default) or "per_prompt".
	Selection Selection `json:"selection" yaml:"selection"`
	// KeepDuplicates turns off deduplication of identical completions of a
	// prompt (by default only the first of them can be kept).
	KeepDuplicates bool `json:"keep_duplicates" yaml:"keep_duplicates"`

	// LearningRate of the first cycle's fine-tuning (constant within a cycle).
	LearningRate float64 `json:"learning_rate" yaml:"learning_rate"`
	// LRDecay multiplies the learning rate after each cycle.
	LRDecay float64 `json:"lr_decay" yaml:"lr_decay"`
	// EpochsPerCycle is the number of passes over the kept samples per cycle.
	EpochsPerCycle int `json:"epochs_per_cycle" yaml:"epochs_per_cycle"`
	// BatchSize is the number of training sequences per optimizer step.
	BatchSize int `json:"batch_size" yaml:"batch_size"`
	// GradientAccumulationSteps splits each batch into micro-batches.
	GradientAccumulationSteps int `json:"gradient_accumulation_steps" yaml:"gradient_accumulation_steps"`
	// LengthBucket pads training sequences to a multiple of it (few compiled shapes).
	LengthBucket int `json:"length_bucket" yaml:"length_bucket"`
	// WeightDecay and MaxGradNorm configure AdamW (betas and epsilon are PyTorch's defaults).
	WeightDecay float64 `json:"weight_decay" yaml:"weight_decay"`
	MaxGradNorm float64 `json:"max_grad_norm" yaml:"max_grad_norm"`

	// MaxWorkers bounds parallel verifications.
	MaxWorkers int `json:"max_workers" yaml:"max_workers"`
	// OutputDir receives raft_log.jsonl, raft_state.json and a checkpoint
	// per cycle (cycle-N: Hugging Face safetensors + optimizer state).
	OutputDir string `json:"output_dir" yaml:"output_dir"`
	// Precision is the model's dtype: "float32", "bfloat16" (trained with
	// float32 master weights) or "auto" (default: float32 on the pure-Go CPU
	// backend, bfloat16 on XLA); see qwen3.DTypeForPrecision.
	Precision string `json:"precision" yaml:"precision"`
	// Resume continues a run found in OutputDir after its last completed
	// cycle; without it, an OutputDir that holds a run is an error.
	Resume bool `json:"resume" yaml:"resume"`
	// Seed makes sampling, tie-breaking and shuffling reproducible.
	Seed int64 `json:"seed" yaml:"seed"`
}

// DefaultConfig is the reference implementation's setup: 3 cycles of 8
// samples per prompt at temperature 0.7, keep rewards ≥ 0.5 and then the top
// half globally, learning rate 5e-5 decayed ×0.85 per cycle, one epoch per cycle.
func DefaultConfig() Config {
	return Config{
		NumCycles: 3, SamplesPerPrompt: 8, Temperature: 0.7, MaxNewTokens: 512,
		RewardThreshold: 0.5, KeepTopFraction: 0.5, Selection: Global,
		LearningRate: 5e-5, LRDecay: 0.85, EpochsPerCycle: 1, BatchSize: 8, GradientAccumulationSteps: 1,
		LengthBucket: 64, MaxGradNorm: 1, MaxWorkers: 8, OutputDir: "outputs/raft", Precision: "auto", Seed: 42,
	}
}

// Validate reports the first invalid field by name.
func (c Config) Validate() error {
	bad := func(field string, v any, want string) error {
		return fmt.Errorf("raft config: %s = %v: %s", field, v, want)
	}
	switch {
	case c.NumCycles < 1:
		return bad("num_cycles", c.NumCycles, "need ≥ 1")
	case c.SamplesPerPrompt < 1:
		return bad("samples_per_prompt", c.SamplesPerPrompt, "need ≥ 1")
	case c.Temperature < 0 || math.IsNaN(c.Temperature):
		return bad("temperature", c.Temperature, "need ≥ 0")
	case c.FinalTemperature < 0 || math.IsNaN(c.FinalTemperature):
		return bad("final_temperature", c.FinalTemperature, "need ≥ 0 (0: no annealing)")
	case c.TopP < 0 || c.TopP > 1:
		return bad("top_p", c.TopP, "need 0 ≤ top_p ≤ 1")
	case c.TopK < 0:
		return bad("top_k", c.TopK, "need ≥ 0")
	case c.MaxNewTokens < 1:
		return bad("max_new_tokens", c.MaxNewTokens, "need ≥ 1")
	case math.IsNaN(c.RewardThreshold):
		return bad("reward_threshold", c.RewardThreshold, "need a number")
	case !(c.KeepTopFraction > 0 && c.KeepTopFraction <= 1):
		return bad("keep_top_fraction", c.KeepTopFraction, "need 0 < fraction ≤ 1")
	case c.Selection != Global && c.Selection != PerPrompt:
		return bad("selection", c.Selection, `need "global" or "per_prompt"`)
	case !(c.LearningRate > 0):
		return bad("learning_rate", c.LearningRate, "need > 0")
	case !(c.LRDecay > 0 && c.LRDecay <= 1):
		return bad("lr_decay", c.LRDecay, "need 0 < decay ≤ 1")
	case c.EpochsPerCycle < 1:
		return bad("epochs_per_cycle", c.EpochsPerCycle, "need ≥ 1")
	case c.BatchSize < 1:
		return bad("batch_size", c.BatchSize, "need ≥ 1")
	case c.GradientAccumulationSteps < 1:
		return bad("gradient_accumulation_steps", c.GradientAccumulationSteps, "need ≥ 1")
	case c.LengthBucket < 0:
		return bad("length_bucket", c.LengthBucket, "need ≥ 0")
	case c.WeightDecay < 0:
		return bad("weight_decay", c.WeightDecay, "need ≥ 0")
	case c.MaxGradNorm < 0:
		return bad("max_grad_norm", c.MaxGradNorm, "need ≥ 0 (0: no clipping)")
	case c.MaxWorkers < 1:
		return bad("max_workers", c.MaxWorkers, "need ≥ 1")
	case c.OutputDir == "":
		return bad("output_dir", `""`, "need a directory")
	case !slices.Contains(qwen3.Precisions, c.Precision):
		return bad("precision", c.Precision, fmt.Sprintf("need one of %q", qwen3.Precisions))
	}
	return nil
}

// TemperatureAt is the sampling temperature of cycle (0-based).
func (c Config) TemperatureAt(cycle int) float64 {
	if c.FinalTemperature <= 0 || c.NumCycles <= 1 {
		return c.Temperature
	}
	f := float64(cycle) / float64(c.NumCycles-1)
	return c.Temperature + f*(c.FinalTemperature-c.Temperature)
}

// LearningRateAt is the learning rate of cycle (0-based): LearningRate × LRDecay^cycle.
func (c Config) LearningRateAt(cycle int) float64 {
	return c.LearningRate * math.Pow(c.LRDecay, float64(cycle))
}
