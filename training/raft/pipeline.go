package raft

import (
	"bytes"
	"fmt"
	"os"

	"github.com/gosqlenv/gosqlenv/training"
	"gopkg.in/yaml.v3"
)

// LoadConfig reads a RAFT configuration (YAML or JSON; fields as in
// Config's tags, e.g. samples_per_prompt) over DefaultConfig. Unknown
// fields are errors naming them and the file.
func LoadConfig(path string) (Config, error) {
	cfg := DefaultConfig()
	data, err := os.ReadFile(path)
	if err != nil {
		return cfg, fmt.Errorf("raft config: %w", err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&cfg); err != nil {
		return cfg, fmt.Errorf("raft config %s: %w", path, err)
	}
	if err := cfg.Validate(); err != nil {
		return cfg, fmt.Errorf("%s: %w", path, err)
	}
	return cfg, nil
}

// ForPipeline returns a RAFT trainer on the SQL environment: the first
// numQuestions training questions of p (all when ≤ 0) are the prompts,
// episodes are played by p's roller and model, sqlenv's answer check decides
// success, and the reward is the pipeline's GRPO reward (reward_funcs
// weighted by reward_weights) — the same data, model, rewards and
// evaluation as the pipeline's GRPO run, so the two compare directly.
func ForPipeline(p *training.Pipeline, cfg Config, numQuestions int) (*Trainer, error) {
	ids := training.QuestionIDs(p.Train)
	if numQuestions > 0 && numQuestions < len(ids) {
		ids = ids[:numQuestions]
	}
	rewards, err := training.RewardSet(p.Config.RewardFuncs, p.Config.RewardWeights)
	if err != nil {
		return nil, err
	}
	tr, err := New(cfg, p.Model, &EnvironmentSource{Roller: p.Roller, QuestionIDs: ids, Rewards: rewards})
	if err != nil {
		return nil, err
	}
	tr.TokenizerDir = p.TokenizerDir
	return tr, nil
}
