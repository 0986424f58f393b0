package raft_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/gosqlenv/gosqlenv/training"
	"github.com/gosqlenv/gosqlenv/training/qwen3"
	"github.com/gosqlenv/gosqlenv/training/raft"
	"github.com/gosqlenv/gosqlenv/training/verify"
)

// Select keeps the candidates RAFT fine-tunes on: rewards ≥ the threshold,
// duplicates dropped, then the best half.
func ExampleSelect() {
	cfg := raft.DefaultConfig()
	cands := []raft.Candidate{
		{Prompt: 0, PromptID: "square", Text: "prog A", Reward: 1.0},
		{Prompt: 0, PromptID: "square", Text: "prog A", Reward: 1.0}, // duplicate
		{Prompt: 0, PromptID: "square", Text: "prog B", Reward: 0.5}, // compiles, fails the tests
		{Prompt: 0, PromptID: "square", Text: "prog C", Reward: 0.0}, // does not compile
		{Prompt: 1, PromptID: "sum", Text: "prog D", Reward: 0.75},
	}
	sel := raft.Select(cands, cfg, 1)
	fmt.Printf("%d unique, %d above %.1f, kept:\n", sel.Unique, sel.AboveThreshold, cfg.RewardThreshold)
	for _, k := range sel.Kept {
		fmt.Println(k.PromptID, k.Text, k.Reward)
	}
	// Output:
	// 4 unique, 3 above 0.5, kept:
	// square prog A 1
	// sum prog D 0.75
}

// The learning rate decays per cycle; the temperature can be annealed.
func ExampleConfig_LearningRateAt() {
	cfg := raft.DefaultConfig()
	cfg.FinalTemperature = 0.3
	for c := 0; c < cfg.NumCycles; c++ {
		fmt.Printf("cycle %d: lr %.3g, temperature %.2f\n", c+1, cfg.LearningRateAt(c), cfg.TemperatureAt(c))
	}
	// Output:
	// cycle 1: lr 5e-05, temperature 0.70
	// cycle 2: lr 4.25e-05, temperature 0.50
	// cycle 3: lr 3.61e-05, temperature 0.30
}

// A RAFT run on code prompts: a sandboxed g++ verifier scores each
// completion against the examples written in its own prompt, and three
// cycles fine-tune the model on the best completions. (Compiled, not run:
// it needs a model, e.g. qwen3.LoadModel of Qwen/Qwen3-1.7B, and its tokenizer.)
func ExampleTrainer() {
	var (
		model *qwen3.Model           // qwen3.LoadModel(ctx, backend, "Qwen/Qwen3-1.7B", …)
		tok   training.ChatTokenizer // training.Qwen3Chat{Tokenizer: …}
	)
	src := &raft.PromptSource{
		Model: model, Tokenizer: tok,
		Prompts: []raft.Prompt{
			{ID: "square", Text: "Write a C++ program that reads n and prints n squared.\nExample: input=5, output=25"},
		},
		Verifier: verify.NewGCCExecutionVerifier(nil, verify.WithRunTimeout(2*time.Second)),
	}
	cfg := raft.DefaultConfig()
	cfg.OutputDir = "outputs/raft-code"
	tr, err := raft.New(cfg, model, src)
	if err != nil {
		log.Fatal(err)
	}
	tr.Progress = os.Stderr
	history, err := tr.Run(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	for _, c := range history {
		fmt.Printf("cycle %d: kept %d of %d, success %.0f%%\n", c.Cycle, c.Kept, c.Total, 100*c.SuccessRate)
	}
}
