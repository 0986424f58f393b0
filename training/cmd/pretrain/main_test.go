package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/gosqlenv/gosqlenv/sqlenv/dataset/bundled"
	"github.com/gosqlenv/gosqlenv/training"
)

func TestParse(t *testing.T) {
	o, err := parse(nil)
	if err != nil || o.epochs != defaultEpochs || o.batchSize != defaultBatchSize || o.learningRate != defaultLearningRate ||
		o.instances != defaultInstances || o.perInstance != defaultPerInstance || o.lengthGroupBatches != defaultLengthGroupBatches || o.loss != "actions" || o.heads != training.TinyPretrainHeads || o.outputDir != "training/tinybase/model" ||
		!slices.Equal(o.databases, []string{"university"}) {
		t.Fatalf("defaults: %+v, %v", o, err)
	}
	o.workDir = "/tmp/w"
	cfg := Config(o, bundled.PathsIn("/tmp/d"))
	if cfg.ModelName != training.TinyModelName || cfg.SFTEpochs != o.epochs || cfg.OutputDir != "/tmp/w" || cfg.DBDir != "/tmp/d/databases" || cfg.SaveSteps != o.saveSteps ||
		cfg.EvalSteps != defaultEvalSteps || cfg.HeldoutGenerated != 60 || cfg.MaxEvalQuestions != 70 {
		t.Fatalf("config %+v", cfg)
	}
	for _, bad := range [][]string{{"-epochs", "0"}, {"-learning_rate", "-1"}, {"-batch_size", "0"}, {"-instances", "0"}, {"-save_steps", "0"}, {"-per_instance", "-1"}, {"-databases", "cinema"}, {"-loss", "everything"}, {"-heads", "0"}, {"-eval_steps", "-1"}, {"-length_group_batches", "-1"}, {"extra"}} {
		if _, err := parse(bad); err == nil || !strings.Contains(err.Error(), strings.TrimPrefix(bad[0], "-")) {
			t.Errorf("%v: %v", bad, err)
		}
	}
	// The work directory is named by the settings: the same command finds
	// its checkpoints again, other settings another folder.
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	a, _ := parse([]string{"-instances", "3"})
	b, _ := parse([]string{"-instances", "3", "-output_dir", "elsewhere"})
	c, _ := parse([]string{"-instances", "4"})
	if d, _ := parse([]string{"-instances", "3", "-loss", "text"}); d.loss != "text" {
		t.Fatalf("-loss text: %+v", d)
	} else if dd, _ := defaultWorkDir(d); dd == mustWorkDir(t, a) {
		t.Fatal("-loss does not change the work directory")
	}
	if h, _ := parse([]string{"-instances", "3", "-heads", "4"}); h.heads != 4 {
		t.Fatalf("-heads 4: %+v", h)
	} else if dh, _ := defaultWorkDir(h); dh == mustWorkDir(t, a) {
		t.Fatal("-heads does not change the work directory")
	}
	if g, _ := parse([]string{"-instances", "3", "-length_group_batches", "2"}); Config(g, bundled.PathsIn("/tmp/d")).SFTLengthGroupBatches != 2 {
		t.Fatalf("-length_group_batches 2: %+v", g)
	} else if dg, _ := defaultWorkDir(g); dg == mustWorkDir(t, a) || !strings.Contains(commandLine(g), "-length_group_batches 2 ") {
		t.Fatalf("-length_group_batches: work directory %s, command %s", dg, commandLine(g))
	}
	da, err := defaultWorkDir(a)
	if err != nil {
		t.Fatal(err)
	}
	db, _ := defaultWorkDir(b)
	dc, _ := defaultWorkDir(c)
	if da != db || da == dc {
		t.Fatalf("work directories %s, %s, %s", da, db, dc)
	}
}

func mustWorkDir(t *testing.T, o options) string {
	d, err := defaultWorkDir(o)
	if err != nil {
		t.Fatal(err)
	}
	return d
}
