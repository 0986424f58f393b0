package nb

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
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
