package training

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestRunStateAcrossReruns: the SFT warm-up run again replaces what its
// previous run wrote (one run's metrics, its checkpoints only); a run
// stopped part-way says so in run.json, and GRPO then refuses to start
// from an older run's checkpoint, naming what happened; after a completed
// run it names the checkpoint it starts from.
func TestRunStateAcrossReruns(t *testing.T) {
	if testing.Short() {
		t.Skip("trains three times")
	}
	out := t.TempDir()
	cfg := tinyPipelineConfig(out)
	cfg.SFTEpochs, cfg.SaveSteps = 2, 1
	ctx := context.Background()
	p, err := NewPipeline(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	sftDir := filepath.Join(out, "sft")
	runSFT := func(stopAfter int) (*RunLog, error) {
		log, err := NewRunLog(sftDir, 1, nil)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		if stopAfter > 0 {
			log.OnLog = func(m Metrics) {
				if int(m["step"]) == stopAfter {
					cancel()
				}
			}
		}
		return log, p.RunSFT(ctx, log)
	}
	first, err := runSFT(0)
	if err != nil {
		t.Fatal(err)
	}
	total := len(first.History)
	if total < 3 {
		t.Fatalf("SFT of %d steps: too short to stop part-way", total)
	}
	if _, start, err := StartAfterSFT(cfg); err != nil || !strings.Contains(start, "checkpoint-") || !strings.Contains(start, "completed SFT run") {
		t.Fatalf("after a completed SFT: %q, %v", start, err)
	}
	// Run again, stopped after step 2: its metrics alone, its checkpoints alone.
	if _, err := runSFT(2); !errors.Is(err, context.Canceled) {
		t.Fatalf("stopped SFT: %v", err)
	}
	records, err := ReadMetrics(filepath.Join(sftDir, MetricsFile))
	if err != nil || len(records) != 2 || records[0]["step"] != 1 {
		t.Fatalf("after a re-run stopped at step 2, metrics.jsonl holds %d records (%v), want that run's 2", len(records), err)
	}
	st, ok, err := ReadRunState(sftDir)
	if err != nil || !ok || st.Status != RunStopped || st.Step != 2 || st.TotalSteps != total || st.Checkpoint != "checkpoint-2" {
		t.Fatalf("run state after the stopped re-run: %+v, %v", st, err)
	}
	if _, err := os.Stat(filepath.Join(sftDir, "checkpoint-"+itoa(total))); !os.IsNotExist(err) {
		t.Fatalf("the first run's final checkpoint is still there after the re-run: %v", err)
	}
	_, _, err = StartAfterSFT(cfg)
	if err == nil || !strings.Contains(err.Error(), "stopped") || !strings.Contains(err.Error(), "after 2 of "+itoa(total)+" steps") {
		t.Fatalf("GRPO after a stopped SFT re-run: %v, want a refusal naming the stopped run", err)
	}
	// A completed run again: GRPO starts from its final checkpoint.
	if _, err := runSFT(0); err != nil {
		t.Fatal(err)
	}
	c, start, err := StartAfterSFT(cfg)
	if err != nil || c.ModelName != filepath.Join(sftDir, "checkpoint-"+itoa(total)) || !strings.Contains(start, "sft/checkpoint-"+itoa(total)) {
		t.Fatalf("after a completed SFT: model %s, %q, %v", c.ModelName, start, err)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
