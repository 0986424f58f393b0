package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gosqlenv/gosqlenv/sqlenv"
	"github.com/gosqlenv/gosqlenv/sqlenv/dataset"
	"github.com/gosqlenv/gosqlenv/sqlenv/server"
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

// TestQuestionsStageServesTheRun: the questions stage writes the run's
// questions and the sqlenv-server command; a server started that way
// passes the run's check of env_servers, and one with the environment's
// default step budget is refused, naming the difference.
func TestQuestionsStageServesTheRun(t *testing.T) {
	ctx := context.Background()
	cfg, _, _, _, err := parse([]string{"-preset", "tiny", "-output_dir", t.TempDir(), "questions"})
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := writeEpisodeQuestions(ctx, cfg, &out); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(cfg.OutputDir, EpisodeQuestionsFile)
	var dbDir string
	var budget int
	// The printed commands run as printed: no placeholder to fill in.
	if strings.ContainsAny(out.String(), "…<") {
		t.Errorf("the printed commands hold a placeholder:\n%s", out.String())
	}
	for _, line := range strings.Split(out.String(), "\n") {
		if f := strings.Fields(line); slices.Contains(f, "./sqlenv/cmd/sqlenv-server") {
			for i := range f[:len(f)-1] {
				switch f[i] {
				case "--db-dir":
					dbDir = f[i+1]
				case "--step-budget":
					budget, _ = strconv.Atoi(f[i+1])
				case "--questions":
					if f[i+1] != path {
						t.Errorf("the command serves %s, not %s", f[i+1], path)
					}
				}
			}
		}
	}
	if dbDir == "" || budget != cfg.StepBudget {
		t.Fatalf("no sqlenv-server command with the run's step budget in:\n%s", out.String())
	}
	qs, err := dataset.Load(ctx, path, dataset.LoadOptions{DBDir: dbDir})
	if err != nil {
		t.Fatal(err)
	}
	serve := func(budget int) string {
		srv, err := server.New(server.Config{Env: sqlenv.Config{Questions: qs, DBDir: dbDir, StepBudget: budget}, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		hs := httptest.NewServer(srv)
		t.Cleanup(func() { hs.Close(); srv.Close() })
		return hs.URL
	}
	check := func(url string) error {
		c := cfg
		c.EnvServers = []string{url}
		p, err := training.OpenData(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		return p.ConnectEnvServers(ctx)
	}
	if err := check(serve(budget)); err != nil {
		t.Errorf("a server started as printed: %v", err)
	}
	if err := check(serve(0)); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("step_budget %d, not %d", sqlenv.DefaultStepBudget, cfg.StepBudget)) {
		t.Errorf("a server with another step budget: %v", err)
	}
}
