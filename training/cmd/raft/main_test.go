package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/gosqlenv/gosqlenv/training/qwen3"
	"github.com/gosqlenv/gosqlenv/training/raft"
	"github.com/gosqlenv/gosqlenv/training/tokenizer"
)

func write(t *testing.T, path, text string) string {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestRunTinyModel runs the command end to end on a tiny random Qwen3 saved
// in Hugging Face format with a real BPE tokenizer: prompts from JSON lines,
// the sandboxed g++ verifier from YAML, one RAFT cycle, log and checkpoint.
func TestRunTinyModel(t *testing.T) {
	if _, err := exec.LookPath("g++"); err != nil {
		t.Skip("g++ not installed")
	}
	dir := t.TempDir()
	modelDir := filepath.Join(dir, "model")
	tk, err := tokenizer.TrainBPE([]string{"int main() { return 0; }", "#include <iostream>"}, tokenizer.TrainOptions{VocabSize: 280,
		AddedTokens: []string{"<|endoftext|>", "<|im_start|>", "<|im_end|>", "<think>", "</think>"}, EOS: "<|im_end|>"})
	if err != nil {
		t.Fatal(err)
	}
	if err := tk.Save(modelDir); err != nil {
		t.Fatal(err)
	}
	w, err := qwen3.RandomWeights(qwen3.TinyConfig(tk.VocabSize()), 1, dtypes.Float32)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Save(modelDir, dtypes.Float32); err != nil {
		t.Fatal(err)
	}
	prompts := write(t, filepath.Join(dir, "prompts.jsonl"), `{"id": "square", "prompt": "Read n, print n squared.\nExample: input=5, output=25"}

{"prompt": "Print the sum of two integers.\nInput: 1 2\nOutput: 3"}
`)
	verifier := write(t, filepath.Join(dir, "verifier.yaml"), "verifier:\n  type: gcc\n  run_timeout: 2s\n")
	config := write(t, filepath.Join(dir, "raft.yaml"), "num_cycles: 1\nsamples_per_prompt: 2\nmax_new_tokens: 12\nlength_bucket: 32\nmax_workers: 2\n")
	out := filepath.Join(dir, "out")
	var progress strings.Builder
	err = run(context.Background(), []string{"-prompts", prompts, "-verifier", verifier, "-config", config,
		"-model", modelDir, "-backend", "go", "-precision", "float32", "-output_dir", out}, &progress)
	if err != nil {
		t.Fatalf("%v\n%s", err, progress.String())
	}
	log, err := raft.ReadLog(filepath.Join(out, raft.LogFile))
	if err != nil || len(log) != 1 {
		t.Fatalf("log: %v, %v", log, err)
	}
	st := log[0]
	sum := 0
	for _, n := range st.RewardHistogram {
		sum += n
	}
	if st.Total != 4 || st.Prompts != 2 || sum != 4 {
		t.Errorf("cycle: %+v", st)
	}
	for _, f := range []string{"model.safetensors", "config.json", tokenizer.TokenizerJSON} {
		if _, err := os.Stat(filepath.Join(out, "cycle-1", f)); err != nil {
			t.Errorf("checkpoint: %v", err)
		}
	}
	if !strings.Contains(progress.String(), "raft cycle 1/1: 4 sampled") {
		t.Errorf("progress: %s", progress.String())
	}
	// The checkpoint is a model directory the command can start from again.
	if _, err := qwen3.LoadWeights(filepath.Join(out, "cycle-1"), dtypes.Float32); err != nil {
		t.Errorf("checkpoint does not load: %v", err)
	}
	t.Log(progress.String())
}

func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	verifier := write(t, filepath.Join(dir, "verifier.yaml"), "verifier: {type: gcc}\n")
	missing := filepath.Join(dir, "nope.jsonl")
	bad := write(t, filepath.Join(dir, "bad.jsonl"), "{\"prompt\": \"a\"}\n{\"promt\": \"b\"}\n")
	empty := write(t, filepath.Join(dir, "empty.jsonl"), "\n\n")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-verifier", verifier}, "-prompts and -verifier are required"},
		{[]string{"-prompts", missing, "-verifier", verifier}, missing},
		{[]string{"-prompts", bad, "-verifier", verifier}, bad + " line 2"},
		{[]string{"-prompts", empty, "-verifier", verifier}, "no prompts"},
		{[]string{"-prompts", empty, "-verifier", filepath.Join(dir, "v.yaml")}, "no prompts"},
		{[]string{"-prompts", bad, "-verifier", verifier, "-precision", "fp8"}, "precision"},
	} {
		err := run(context.Background(), tc.args, new(strings.Builder))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want one containing %q", tc.args, err, tc.want)
		}
	}
}
