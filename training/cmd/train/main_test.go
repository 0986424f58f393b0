package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gosqlenv/gosqlenv/training"
)

func TestParseStages(t *testing.T) {
	cfg, stage, ro, _, err := parse([]string{"-output_dir", "/tmp/run", "-seed", "7", "raft"})
	if err != nil {
		t.Fatal(err)
	}
	if stage != "raft" || ro.questions != 32 || ro.config.OutputDir != filepath.Join("/tmp/run", "raft") ||
		ro.config.Seed != 7 || ro.config.Precision != cfg.Precision || ro.config.NumCycles != 3 {
		t.Errorf("raft stage: stage %q, options %+v", stage, ro)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "raft.yaml")
	if err := os.WriteFile(path, []byte("num_cycles: 2\nsamples_per_prompt: 4\noutput_dir: "+dir+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, ro, _, err = parse([]string{"-raft_config", path, "-raft_questions", "0", "raft"})
	if err != nil || ro.config.NumCycles != 2 || ro.config.SamplesPerPrompt != 4 || ro.config.OutputDir != dir || ro.questions != 0 {
		t.Errorf("raft config file: %+v, %v", ro, err)
	}
	if err := os.WriteFile(path, []byte("num_cycle: 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, _, _, err := parse([]string{"-raft_config", path, "raft"}); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("bad raft config: %v, want an error naming %s", err, path)
	}
	cfg, _, _, _, err = parse([]string{"-preset", "tiny", "-seed", "3", "eval"})
	if err != nil || cfg.ModelName != training.TinyBaseModelName || cfg.TrainGenerated == 0 || cfg.HeldoutGenerated == 0 || cfg.Seed != 3 {
		t.Errorf("-preset tiny: %+v, %v", cfg, err)
	}
	cfg, _, _, _, err = parse([]string{"-preset", "tiny-scratch", "eval"})
	if err != nil || cfg.ModelName != training.TinyModelName || cfg.GRPOMaxQuestions == 0 {
		t.Errorf("-preset tiny-scratch: %+v, %v", cfg, err)
	}
	if _, _, _, _, err := parse([]string{"-preset=small"}); err == nil || !strings.Contains(err.Error(), `"small"`) {
		t.Errorf("unknown preset: %v", err)
	}
	if _, _, _, _, err := parse([]string{"rl"}); err == nil || !strings.Contains(err.Error(), `"rl"`) {
		t.Errorf("unknown stage: %v", err)
	}
}
