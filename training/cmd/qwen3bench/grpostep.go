package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/gomlx/compute/dtypes"
	"github.com/gosqlenv/gosqlenv/training"
	"github.com/gosqlenv/gosqlenv/training/qwen3"
)

// -mode grpostep: the real GRPO trainer on the bundled SQL environment.

// benchGRPO runs real GRPO steps of the trainer on the bundled environment.
func benchGRPO(ctx context.Context, o Options, r *Report) error {
	start := time.Now()
	out := o.GRPO.OutputDir
	if out == "" {
		dir, err := os.MkdirTemp("", "qwen3bench-grpo-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		out = dir
	}
	dtype, _ := parseDType(r.DType, nil) // resolved by run
	cfg, err := grpoBenchConfig(o, dtype, out)
	if err != nil {
		return err
	}
	episodes, micro := cfg.PerDeviceTrainBatchSize*cfg.GradientAccumulationSteps, cfg.PerDeviceTrainBatchSize
	p, err := training.NewPipeline(ctx, cfg)
	if err != nil {
		return err
	}
	defer p.Close()
	if err := useShape(o, p, dtype, r); err != nil {
		return err
	}
	r.Config, r.Params = p.Model.Config, p.Model.Config.NumParameters()
	r.ParamBytes = r.Params * int64(dtype.Size())
	r.Device = p.Backend.Description()
	r.SetupSecs = time.Since(start).Seconds()
	// The log shows where a long step is (rollout episodes, loss
	// micro-batches, compilations) on the terminal; Step does not log.
	log, err := training.NewRunLog(out, 1, os.Stderr)
	if err != nil {
		return err
	}
	tr, err := p.NewGRPO(log)
	if err != nil {
		return err
	}
	r.Extra = map[string]any{"questions": o.GRPO.Questions, "generations": o.GRPO.Generations, "episodes": episodes,
		"per_device_train_batch_size": micro, "gradient_accumulation_steps": episodes / micro,
		"max_new_tokens": cfg.MaxNewTokens, "max_completion_length": cfg.MaxCompletionLength,
		"step_budget": cfg.StepBudget, "length_bucket": cfg.LengthBucket}
	r.Notes = append(r.Notes, "each step: rollouts with the environment, rewards, advantages, loss+backward over micro-batches, AdamW; step 1 includes XLA compilation",
		"time/rollout = time/generation + time/environment + tokenizing and bookkeeping; step_time = time/rollout + rewards + time/loss_backward")
	for s := 0; s < o.GRPO.Steps; s++ {
		if s > 0 && r.outOfTime() {
			r.Notes = append(r.Notes, fmt.Sprintf("steps from %d skipped: -max_seconds reached", s+1))
			break
		}
		m, err := tr.Step(ctx, s)
		if err != nil {
			return fmt.Errorf("GRPO step %d: %w", s+1, err)
		}
		r.add(finiteMetrics(m))
		fmt.Fprintf(os.Stderr, "\nGRPO step %d: %.2f s (rollout %.2f: generation %.2f, environment %.2f; loss+backward+update %.2f), %g generated tokens/s, reward %.3f\n",
			s+1, m["step_time"], m["time/rollout"], m["time/generation"], m["time/environment"], m["time/loss_backward"], m["tokens/s"], m["reward"])
	}
	return nil
}

// grpoBenchConfig is the GRPO configuration of the benchmark: the tiny
// preset, o's group and batch sizes and lengths, no SFT, no checkpoints.
func grpoBenchConfig(o Options, dtype dtypes.DType, out string) (training.GRPOConfig, error) {
	cfg := training.DefaultGRPOConfig()
	cfg.ModelName, cfg.Backend, cfg.OutputDir, cfg.Seed = training.TinyModelName, o.Backend, out, int64(o.Seed)
	cfg.Precision = map[dtypes.DType]string{dtypes.BFloat16: "bfloat16", dtypes.Float32: "float32"}[dtype]
	episodes := o.GRPO.Questions * o.GRPO.Generations
	micro := o.GRPO.MicroBatch
	if micro <= 0 || episodes%micro != 0 {
		return cfg, fmt.Errorf("-micro_batch %d must divide questions × generations = %d", micro, episodes)
	}
	cfg.NumGenerations, cfg.PerDeviceTrainBatchSize, cfg.GradientAccumulationSteps = o.GRPO.Generations, micro, episodes/micro
	cfg.MaxSteps, cfg.LoggingSteps, cfg.SaveSteps = o.GRPO.Steps, 1, 0
	cfg.MaxNewTokens, cfg.MaxCompletionLength, cfg.StepBudget = o.GRPO.MaxNewTokens, o.GRPO.MaxCompletion, o.GRPO.StepBudget
	cfg.LengthBucket, cfg.LearningRate, cfg.LossRows = o.GRPO.LengthBucket, 1e-5, o.GRPO.LossRows
	cfg.SFTEnabled = false
	return cfg, cfg.Validate()
}

// useShape puts a model of shape o.Shape (random weights, the tiny preset's
// vocabulary) into the pipeline, unless the shape is the tiny preset itself.
func useShape(o Options, p *training.Pipeline, dtype dtypes.DType, r *Report) error {
	if o.Shape == "tiny" {
		r.Notes = append(r.Notes, "model: the tiny preset (training.TinyModelConfig), random weights")
		return nil
	}
	mcfg, err := shapeConfig(o.Shape, p.Model.Config.VocabSize)
	if err != nil {
		return err
	}
	w, err := qwen3.RandomWeights(mcfg, o.Seed, dtype)
	if err != nil {
		return err
	}
	if p.Model, err = qwen3.New(p.Backend, w); err != nil {
		return err
	}
	if p.Roller, err = training.NewRoller(p.Model, p.Tokenizer, p.NewEnv, p.RolloutConfig()); err != nil {
		return err
	}
	r.Notes = append(r.Notes, fmt.Sprintf("model: %s layers with the tiny preset's vocabulary (%d tokens), random weights", o.Shape, mcfg.VocabSize))
	return nil
}
