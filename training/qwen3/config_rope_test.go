package qwen3

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadConfigRopeParameters: transformers ≥ 5 writes rope_theta inside
// rope_parameters (no top-level rope_theta); the default type is read, other
// types are refused.
func TestReadConfigRopeParameters(t *testing.T) {
	write := func(rope string) string {
		path := filepath.Join(t.TempDir(), "config.json")
		os.WriteFile(path, []byte(`{"architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3", "vocab_size": 512,
			"hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4,
			"num_key_value_heads": 2, "head_dim": 16, "hidden_act": "silu", "dtype": "float32", `+rope+`}`), 0o644)
		return path
	}
	cfg, err := ReadConfig(write(`"rope_parameters": {"rope_type": "default", "rope_theta": 10000.0}`))
	if err != nil || cfg.RopeTheta != 10000 {
		t.Fatalf("rope_parameters: theta %g, %v", cfg.RopeTheta, err)
	}
	if cfg, err = ReadConfig(write(`"rope_theta": 5000, "rope_parameters": null`)); err != nil || cfg.RopeTheta != 5000 {
		t.Fatalf("rope_theta: theta %g, %v", cfg.RopeTheta, err)
	}
	_, err = ReadConfig(write(`"rope_parameters": {"rope_type": "yarn", "rope_theta": 10000.0, "factor": 4}`))
	if err == nil || !strings.Contains(err.Error(), "unsupported rope_parameters") {
		t.Fatalf("yarn: %v", err)
	}
}
