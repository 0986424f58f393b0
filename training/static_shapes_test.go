package training

import (
	"context"
	"path/filepath"
	"testing"
)

// TestStaticShapesCompileUpFront: with static_shapes on (here on the Go
// backend), a short tiny-preset run compiles its programs in the SFT
// warm-up and the first two GRPO steps, and none after: the metrics'
// compile/programs stops growing, and compile/seconds is logged with it.
func TestStaticShapesCompileUpFront(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end training run")
	}
	out := t.TempDir()
	cfg := tinyPipelineConfig(out)
	cfg.StaticShapes, cfg.MaxSteps, cfg.EvalSteps = "true", 6, 0
	cfg.LengthBucket = 32
	ctx := context.Background()
	p, err := NewPipeline(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if !p.StaticShapes() || !p.Roller.cfg.StaticShapes {
		t.Fatal("static_shapes true: the pipeline does not use static shapes")
	}
	sftLog, _ := NewRunLog(filepath.Join(out, "sft"), 1, nil)
	if err := p.RunSFT(ctx, sftLog); err != nil {
		t.Fatal(err)
	}
	sftPrograms := Series(sftLog.History, "compile/programs")
	if n := len(sftPrograms); n < 2 || sftPrograms[n-1] != sftPrograms[0] {
		t.Fatalf("SFT compiled programs after its first step: compile/programs %v", sftPrograms)
	}
	log, _ := NewRunLog(out, 1, nil)
	tr, err := p.NewGRPO(log)
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Train(ctx); err != nil {
		t.Fatal(err)
	}
	programs, seconds := Series(log.History, "compile/programs"), Series(log.History, "compile/seconds")
	if len(programs) != cfg.MaxSteps || len(seconds) != cfg.MaxSteps {
		t.Fatalf("compile/programs %v, compile/seconds %v: want one per step", programs, seconds)
	}
	for s := 2; s < len(programs); s++ {
		if programs[s] != programs[1] || seconds[s] != seconds[1] {
			t.Fatalf("GRPO step %d compiled: compile/programs %v, compile/seconds %v", s+1, programs, seconds)
		}
	}
	if programs[0] <= sftPrograms[0] {
		t.Fatalf("GRPO's first step compiled nothing (%v after SFT's %v): are the generation programs counted?", programs, sftPrograms)
	}
	t.Logf("programs after SFT %v, GRPO %v (%.2f s), static prompt length %d", sftPrograms[0], programs, seconds[len(seconds)-1], p.Roller.StaticPromptLength())
}
