package raft

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/gobackend"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gosqlenv/gosqlenv/training"
	"github.com/gosqlenv/gosqlenv/training/qwen3"
	"github.com/gosqlenv/gosqlenv/training/tokenizer"
	"github.com/gosqlenv/gosqlenv/training/verify"
)

// tinyTokenizer is a real byte-level BPE tokenizer with a 300-token
// vocabulary learned from a few lines, rendered with Qwen3's chat template.
func tinyTokenizer(t testing.TB) training.Qwen3Chat {
	t.Helper()
	corpus := []string{"<|im_start|>user\n", "<|im_start|>assistant\n<think>\n\n</think>\n\n",
		"Write a number: 0 1 2 3 4 5 6 7 8 9 10 42 2026", "the quick brown fox jumps over the lazy dog",
		"Say something with a digit in it."}
	tk, err := tokenizer.TrainBPE(corpus, tokenizer.TrainOptions{VocabSize: 300,
		AddedTokens: []string{"<|endoftext|>", "<|im_start|>", "<|im_end|>", "<think>", "</think>"}, EOS: "<|im_end|>"})
	if err != nil {
		t.Fatal(err)
	}
	return training.Qwen3Chat{Tokenizer: tk}
}

func tinyModel(t testing.TB, vocab int, seed uint64) *qwen3.Model {
	t.Helper()
	backend, err := gobackend.New("")
	if err != nil {
		t.Fatal(err)
	}
	w, err := qwen3.RandomWeights(qwen3.TinyConfig(vocab), seed, dtypes.Float32)
	if err != nil {
		t.Fatal(err)
	}
	m, err := qwen3.New(backend, w)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// digitVerifier is the simple verifiable task of the learning test: a
// completion succeeds when it contains an ASCII digit.
type digitVerifier struct{}

func (digitVerifier) Verify(_ context.Context, code string) verify.Result {
	if strings.ContainsAny(code, "0123456789") {
		return verify.Result{Success: true, Reward: 1, Details: "has a digit"}
	}
	return verify.Result{Reward: 0, Details: "no digit"}
}

func digitSetup(t *testing.T, dir string, cycles, numPrompts int) (*Trainer, *qwen3.Model) {
	t.Helper()
	tok := tinyTokenizer(t)
	model := tinyModel(t, tok.VocabSize(), 3)
	var prompts []Prompt
	for i := 0; i < numPrompts; i++ {
		prompts = append(prompts, Prompt{ID: fmt.Sprint("p", i), Text: "Say something with a digit in it."})
	}
	cfg := DefaultConfig()
	cfg.NumCycles, cfg.MaxNewTokens, cfg.OutputDir, cfg.Precision = cycles, 8, dir, "float32"
	cfg.LearningRate, cfg.EpochsPerCycle, cfg.BatchSize, cfg.LengthBucket = 1e-2, 2, 8, 32
	cfg.Temperature = 1
	tr, err := New(cfg, model, &PromptSource{Model: model, Tokenizer: tok, Prompts: prompts, Verifier: digitVerifier{}, LengthBucket: 32})
	if err != nil {
		t.Fatal(err)
	}
	return tr, model
}

// TestRAFTLearnsTinyTask runs four RAFT cycles of a tiny random Qwen3 on a
// simple verifiable task and checks that they sample, filter, fine-tune and
// checkpoint, and that the success rate and kept-sample rate rise.
// (BENCHMARKS.md reports how they moved.)
func TestRAFTLearnsTinyTask(t *testing.T) {
	dir := t.TempDir()
	tr, _ := digitSetup(t, dir, 4, 32)
	var progress strings.Builder
	tr.Progress = &progress
	hist, err := tr.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + progress.String())
	if len(hist) != 4 {
		t.Fatalf("%d cycles logged, want 4", len(hist))
	}
	for _, st := range hist {
		if st.Total != 256 || st.Kept > st.AboveThreshold || st.AboveThreshold > st.Unique || st.Unique > st.Total {
			t.Errorf("cycle %d: inconsistent counts %+v", st.Cycle, st)
		}
		sum := 0
		for _, n := range st.RewardHistogram {
			sum += n
		}
		if sum != st.Total {
			t.Errorf("cycle %d: histogram counts %d of %d", st.Cycle, sum, st.Total)
		}
		if st.Kept > 0 && (st.TrainSteps == 0 || st.MeanKeptReward != 1) {
			t.Errorf("cycle %d: kept %d but trained %d steps, mean kept reward %g", st.Cycle, st.Kept, st.TrainSteps, st.MeanKeptReward)
		}
		if _, err := os.Stat(filepath.Join(dir, st.Checkpoint, "model.safetensors")); err != nil {
			t.Errorf("cycle %d: no checkpoint: %v", st.Cycle, err)
		}
	}
	if hist[1].LearningRate >= hist[0].LearningRate {
		t.Errorf("learning rate did not decay: %g then %g", hist[0].LearningRate, hist[1].LearningRate)
	}
	// 256 samples per cycle: the success rate's standard error is below 3
	// points, so a rise of 40 points is learning, not noise. Measured with
	// model seeds 1–5: 23–26 % in cycle 1, 88–92 % in cycle 4.
	first, last := hist[0], hist[3]
	if last.SuccessRate < first.SuccessRate+0.40 || last.KeptRate < first.KeptRate+0.15 {
		t.Errorf("no learning: success %.2f → %.2f, kept rate %.2f → %.2f", first.SuccessRate, last.SuccessRate, first.KeptRate, last.KeptRate)
	}
	// Every candidate of a cycle is recorded, the kept ones marked.
	data, err := os.ReadFile(filepath.Join(dir, SamplesDir, "cycle-4.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines, kept, successes := strings.Split(strings.TrimSpace(string(data)), "\n"), 0, 0
	for _, l := range lines {
		var r SampleRecord
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatal(err)
		}
		if r.Kept {
			kept++
			if r.Reward < 0.5 {
				t.Errorf("kept a sample with reward %g", r.Reward)
			}
		}
		if r.Success {
			successes++
		}
	}
	if len(lines) != last.Total || kept != last.Kept || float64(successes) != math.Round(last.SuccessRate*float64(last.Total)) {
		t.Errorf("samples file: %d lines, %d kept, %d successes; cycle %+v", len(lines), kept, successes, last)
	}
	logged, err := ReadLog(filepath.Join(dir, LogFile))
	if err != nil || len(logged) != 4 || logged[3].Kept != last.Kept {
		t.Errorf("log file: %d records, err %v", len(logged), err)
	}
}

// TestRAFTResume: two cycles, then a resumed run to three, equal an
// uninterrupted three-cycle run (same samples, same weights); a run into a
// used output_dir without resume is refused.
func TestRAFTResume(t *testing.T) {
	whole := t.TempDir()
	tr, wholeModel := digitSetup(t, whole, 3, 8)
	want, err := tr.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}

	split := t.TempDir()
	tr, _ = digitSetup(t, split, 2, 8)
	if _, err := tr.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	tr, splitModel := digitSetup(t, split, 3, 8)
	if _, err := tr.Run(context.Background()); err == nil || !strings.Contains(err.Error(), split) {
		t.Fatalf("rerun into a used output_dir: error %v, want one naming it", err)
	}
	tr.Config.Resume = true
	got, err := tr.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("%d cycles after resume", len(got))
	}
	for c := range got {
		g, w := got[c], want[c]
		if g.Total != w.Total || g.Kept != w.Kept || g.MeanReward != w.MeanReward || g.TrainSteps != w.TrainSteps {
			t.Errorf("cycle %d differs after resume: %+v vs %+v", c+1, g, w)
		}
	}
	if tr.Learner.Steps != want[0].TrainSteps+want[1].TrainSteps+want[2].TrainSteps {
		t.Errorf("optimizer steps %d after resume", tr.Learner.Steps)
	}
	a, b := wholeModel.Weights(), splitModel.Weights()
	for i := range a {
		x, y := tensors.MustCopyFlatData[float32](a[i]), tensors.MustCopyFlatData[float32](b[i])
		for j := range x {
			if x[j] != y[j] {
				t.Fatalf("weight %d differs after resume at %d: %g vs %g", i, j, x[j], y[j])
			}
		}
	}
}
