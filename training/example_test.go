package training_test

import (
	"context"
	"fmt"
	"log"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/gosqlenv/gosqlenv/training"
)

// ExamplePipeline drives a run as notebooks/train_grpo.ipynb does, one cell
// after another — baselines, SFT warm-up, GRPO, results — each cell with a
// pipeline of its own (a notebook cell is a program of its own). The model
// is the tiny one from random weights and every stage is cut to seconds.
func ExamplePipeline() {
	ctx := context.Background()
	out, err := os.MkdirTemp("", "gosqlenv-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(out)
	must := func(err error) {
		if err != nil {
			log.Fatal(err)
		}
	}

	// Configuration: TRL's field names; here a seconds-long run.
	cfg := training.DefaultGRPOConfig()
	cfg.ModelName, cfg.Precision, cfg.OutputDir = training.TinyModelName, "float32", out
	cfg.NumGenerations, cfg.PerDeviceTrainBatchSize, cfg.GradientAccumulationSteps = 2, 2, 1
	cfg.MaxSteps, cfg.LoggingSteps, cfg.LearningRate = 2, 1, 1e-3
	cfg.StepBudget, cfg.MaxNewTokens, cfg.MaxCompletionLength, cfg.MaxResultChars = 3, 40, 96, 200
	cfg.MaxTrainQuestions, cfg.MaxEvalQuestions, cfg.EvalSamples = 8, 2, 1
	cfg.SFTMaxQuestions, cfg.SFTEpochs, cfg.SFTLearningRate = 4, 1, 1e-3
	cfg.LengthBucket = 128

	// Baselines: a fresh output directory, the random policy evaluated.
	must(training.ResetOutputs(cfg.OutputDir))
	p, err := training.NewPipeline(ctx, cfg)
	must(err)
	_, err = p.EvaluateAndRecord(ctx, training.PolicyRandom)
	must(err)
	p.Close()

	// SFT warm-up: imitate the oracle, then evaluate.
	p, err = training.NewPipeline(ctx, cfg)
	must(err)
	sftLog, err := training.NewRunLog(filepath.Join(out, "sft"), 1, nil)
	must(err)
	must(p.RunSFT(ctx, sftLog))
	_, err = p.EvaluateAndRecord(ctx, training.PolicySFT)
	must(err)
	p.Close()

	// GRPO from the SFT checkpoint, then evaluate.
	grpoCfg, err := training.ConfigAfterSFT(cfg)
	must(err)
	p, err = training.NewPipeline(ctx, grpoCfg)
	must(err)
	grpoLog, err := training.NewRunLog(out, 1, nil)
	must(err)
	tr, err := p.NewGRPO(grpoLog)
	must(err)
	must(tr.Train(ctx))
	summary, err := p.EvaluateAndRecord(ctx, training.PolicyGRPO)
	must(err)
	p.Close()

	// Results: what the plots and tables of the notebook read.
	final, err := training.LatestCheckpoint(out)
	must(err)
	records, err := training.ReadMetrics(filepath.Join(out, training.MetricsFile))
	must(err)
	fmt.Println("SFT from:", filepath.Base(grpoCfg.ModelName))
	fmt.Println("final checkpoint:", filepath.Base(final))
	fmt.Println("GRPO steps logged:", len(training.Series(records, "reward")))
	fmt.Println("splits evaluated:", slices.Sorted(maps.Keys(summary)))
	fmt.Println("policies evaluated:", slices.Sorted(maps.Keys(summary[training.SplitTrain])))
	// Output:
	// SFT from: checkpoint-2
	// final checkpoint: checkpoint-2
	// GRPO steps logged: 2
	// splits evaluated: [heldout_questions paraphrased_questions renamed_schema train unseen_databases]
	// policies evaluated: [grpo random sft]
}
