package main

import (
	"strings"
	"testing"

	"github.com/gosqlenv/gosqlenv/training"
)

func TestParse(t *testing.T) {
	o, err := parse(nil)
	if err != nil || o.epochs != defaultEpochs || o.batchSize != defaultBatchSize || o.learningRate != defaultLearningRate || o.outputDir != "training/tinybase/model" {
		t.Fatalf("defaults: %+v, %v", o, err)
	}
	cfg := Config(o, "/tmp/w")
	if cfg.ModelName != training.TinyModelName || cfg.SFTEpochs != o.epochs || cfg.OutputDir != "/tmp/w" || cfg.TrainDatabases[0] != "university" {
		t.Fatalf("config %+v", cfg)
	}
	for _, bad := range [][]string{{"-epochs", "0"}, {"-learning_rate", "-1"}, {"-batch_size", "0"}, {"extra"}} {
		if _, err := parse(bad); err == nil || !strings.Contains(err.Error(), strings.TrimPrefix(bad[0], "-")) {
			t.Errorf("%v: %v", bad, err)
		}
	}
}
