package nb

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gosqlenv/gosqlenv/training"
)

// TrainedConfig picks the model the training notebook trained last: GRPO's
// latest complete checkpoint, else SFT's, else the preset's model. A
// checkpoint whose save was cut short (no trainer_state.json: the kernel
// was interrupted while writing it) is passed over.
func TestTrainedConfigFindsTheLatestModel(t *testing.T) {
	t.Setenv("GONB_DIR", t.TempDir())
	cfg, err := TrainedConfig()
	if err != nil {
		t.Fatal(err)
	}
	preset := cfg.ModelName
	checkpoint := func(dir string, complete bool) string {
		t.Helper()
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if complete {
			if err := os.WriteFile(filepath.Join(dir, "trainer_state.json"), []byte(`{"global_step": 1}`), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	checkpoint(filepath.Join(cfg.OutputDir, "checkpoint-1"), false)
	sft := checkpoint(filepath.Join(cfg.OutputDir, "sft", "checkpoint-12"), true)
	if cfg, _ = TrainedConfig(); cfg.ModelName != sft {
		t.Fatalf("with an SFT checkpoint: model %s, want %s (preset %s)", cfg.ModelName, sft, preset)
	}
	grpo := checkpoint(filepath.Join(cfg.OutputDir, "checkpoint-3"), true)
	checkpoint(filepath.Join(cfg.OutputDir, "checkpoint-4"), false)
	if cfg, _ = TrainedConfig(); cfg.ModelName != grpo {
		t.Fatalf("with GRPO and SFT checkpoints: model %s, want %s", cfg.ModelName, grpo)
	}
}

// The notebooks' configuration takes environment servers, their protocol
// and token from GOSQLENV_ENV_SERVERS, GOSQLENV_ENV_TRANSPORT and
// GOSQLENV_ENV_AUTH_TOKEN, as the train command does, and refuses a bad
// address naming the setting.
func TestRunConfigTakesEnvServers(t *testing.T) {
	t.Setenv("GONB_DIR", t.TempDir())
	t.Setenv("GOSQLENV_ENV_SERVERS", "http://env-a:8000,http://env-b:8000")
	t.Setenv("GOSQLENV_ENV_TRANSPORT", "http")
	t.Setenv("GOSQLENV_ENV_AUTH_TOKEN", "tok")
	cfg, _, err := RunConfig()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(cfg.EnvServers, []string{"http://env-a:8000", "http://env-b:8000"}) || cfg.EnvTransport != "http" || cfg.EnvAuthToken != "tok" {
		t.Errorf("env servers %q, transport %q, token %q", cfg.EnvServers, cfg.EnvTransport, cfg.EnvAuthToken)
	}
	t.Setenv("GOSQLENV_ENV_SERVERS", "env-a")
	if _, _, err := RunConfig(); err == nil || !strings.Contains(err.Error(), "env_servers") {
		t.Errorf("a bad address: %v", err)
	}
}

// UnfinishedNote warns of a run that did not complete, saying how it
// ended, and says nothing of a completed run or of none.
func TestUnfinishedNote(t *testing.T) {
	dir := t.TempDir()
	if note := UnfinishedNote("GRPO", dir); note != "" {
		t.Fatalf("no run: %q", note)
	}
	write := func(state string) {
		if err := os.WriteFile(filepath.Join(dir, "run.json"), []byte(state), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(`{"stage": "grpo", "status": "stopped", "started": "2026-11-28T12:00:00Z", "ended": "2026-11-28T12:05:40Z", "step": 15, "total_steps": 80, "checkpoint": "checkpoint-15", "error": "context canceled"}`)
	note := UnfinishedNote("GRPO", dir)
	for _, want := range []string{"did not finish", "stopped at 12:05:40 UTC after 15 of 80 steps", "context canceled", "checkpoint-15", "partial run"} {
		if !strings.Contains(note, want) {
			t.Errorf("note %q lacks %q", note, want)
		}
	}
	write(`{"stage": "grpo", "status": "completed", "started": "2026-11-28T12:00:00Z", "ended": "2026-11-28T12:09:00Z", "step": 80, "total_steps": 80, "checkpoint": "checkpoint-80"}`)
	if note := UnfinishedNote("GRPO", dir); note != "" {
		t.Fatalf("completed run: %q", note)
	}
}

// StaleGRPONote warns when the SFT warm-up was run again after the GRPO
// run started from it, and not while it is the one GRPO started from.
func TestStaleGRPONote(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "sft"), 0o755); err != nil {
		t.Fatal(err)
	}
	sft := func(started string) {
		state := `{"stage": "sft", "status": "completed", "started": "` + started + `", "ended": "2026-11-28T12:09:00Z", "step": 4, "total_steps": 4, "checkpoint": "checkpoint-4"}`
		if err := os.WriteFile(filepath.Join(dir, "sft", "run.json"), []byte(state), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sft("2026-11-28T12:00:00Z")
	from := training.StageRunID(filepath.Join(dir, "sft"))
	grpo := `{"stage": "grpo", "status": "completed", "started": "2026-11-28T12:10:00Z", "ended": "2026-11-28T12:19:00Z", "step": 3, "total_steps": 3, "from": "` + from + `"}`
	if err := os.WriteFile(filepath.Join(dir, "run.json"), []byte(grpo), 0o644); err != nil {
		t.Fatal(err)
	}
	if note := StaleGRPONote(dir); note != "" {
		t.Fatalf("GRPO from the latest SFT run: %q", note)
	}
	sft("2026-11-28T12:30:00Z") // the SFT cell run again
	if note := StaleGRPONote(dir); !strings.Contains(note, "started from an earlier SFT warm-up") || !strings.Contains(note, "run section 6 (GRPO) again") {
		t.Fatalf("GRPO from an earlier SFT run: %q", note)
	}
}
