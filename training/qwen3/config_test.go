package qwen3

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gomlx/compute/dtypes"
)

const dtypesFloat32 = dtypes.Float32

// The dense Qwen3 sizes as their config.json files describe them, with the
// parameter counts the Qwen team publishes (total, and without embeddings).
var qwen3Sizes = []struct {
	name                          string
	hidden, ff, layers, heads, kv int
	tied                          bool
	total, nonEmbedding           float64 // billions
}{
	{"Qwen3-0.6B", 1024, 3072, 28, 16, 8, true, 0.6, 0.44},
	{"Qwen3-1.7B", 2048, 6144, 28, 16, 8, true, 1.7, 1.4},
	{"Qwen3-4B", 2560, 9728, 36, 32, 8, true, 4.0, 3.6},
	{"Qwen3-8B", 4096, 12288, 36, 32, 8, false, 8.2, 6.95},
	{"Qwen3-14B", 5120, 17408, 40, 40, 8, false, 14.8, 13.2},
	{"Qwen3-32B", 5120, 25600, 64, 64, 8, false, 32.8, 31.2},
}

func TestReadConfigEveryDenseSize(t *testing.T) {
	for _, s := range qwen3Sizes {
		raw := map[string]any{
			"architectures": []string{"Qwen3ForCausalLM"}, "model_type": "qwen3", "vocab_size": 151936,
			"hidden_size": s.hidden, "intermediate_size": s.ff, "num_hidden_layers": s.layers,
			"num_attention_heads": s.heads, "num_key_value_heads": s.kv, "head_dim": 128, "hidden_act": "silu",
			"max_position_embeddings": 40960, "rms_norm_eps": 1e-6, "rope_theta": 1000000, "rope_scaling": nil,
			"tie_word_embeddings": s.tied, "torch_dtype": "bfloat16", "attention_bias": false, "use_sliding_window": false,
			"sliding_window": nil, "max_window_layers": s.layers, "bos_token_id": 151643, "eos_token_id": 151645,
		}
		path := filepath.Join(t.TempDir(), "config.json")
		b, _ := json.Marshal(raw)
		os.WriteFile(path, b, 0o644)
		cfg, err := ReadConfig(path)
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		total := float64(cfg.NumParameters()) / 1e9
		nonEmb := total - float64(cfg.VocabSize*cfg.HiddenSize)/1e9
		if !cfg.TieWordEmbeddings {
			nonEmb -= float64(cfg.VocabSize*cfg.HiddenSize) / 1e9
		}
		if math.Abs(total-s.total)/s.total > 0.05 || math.Abs(nonEmb-s.nonEmbedding)/s.nonEmbedding > 0.05 {
			t.Errorf("%s: %.2fB parameters (%.2fB without embeddings), published %.1fB (%.2fB)", s.name, total, nonEmb, s.total, s.nonEmbedding)
		}
	}
}

func TestConfigRejectsUnsupported(t *testing.T) {
	base := func() Config { return TinyConfig(64) }
	cases := []struct {
		mut  func(*Config)
		want string
	}{
		{func(c *Config) { c.Architectures = []string{"Qwen3MoeForCausalLM"}; c.ModelType = "qwen3_moe" }, "mixture-of-experts"},
		{func(c *Config) { c.NumExperts = 128 }, "mixture-of-experts"},
		{func(c *Config) { c.ModelType = "llama"; c.Architectures = nil }, `unsupported model_type "llama"`},
		{func(c *Config) { c.RopeScaling = json.RawMessage(`{"type":"yarn","factor":4}`) }, "unsupported rope_scaling"},
		{func(c *Config) { c.UseSlidingWindow = true }, "use_sliding_window"},
		{func(c *Config) { c.HiddenAct = "gelu" }, `unsupported hidden_act "gelu"`},
		{func(c *Config) { c.NumKeyValueHeads = 3 }, "num_attention_heads (4) must be divisible by num_key_value_heads (3)"},
		{func(c *Config) { c.VocabSize = 0 }, "vocab_size must be positive"},
	}
	for _, c := range cases {
		cfg := base()
		c.mut(&cfg)
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v, want %q", err, c.want)
		}
	}
	if _, err := ReadConfig(filepath.Join(t.TempDir(), "config.json")); err == nil || !strings.Contains(err.Error(), "config.json") {
		t.Fatalf("missing file: %v", err)
	}
}

// TestSaveWritesTransformersKeys: a saved config.json has every key
// transformers' Qwen3Config.save_pretrained writes, with the values read
// from the model's own config.json, or Qwen3Config's defaults for a config
// made in Go.
func TestSaveWritesTransformersKeys(t *testing.T) {
	keys := []string{"attention_dropout", "initializer_range", "max_window_layers", "sliding_window",
		"transformers_version", "use_cache", "use_sliding_window"}
	saved := func(t *testing.T, cfg Config) map[string]any {
		t.Helper()
		w, err := RandomWeights(cfg, 1, dtypesFloat32)
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		if err := w.Save(dir, dtypesFloat32); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(filepath.Join(dir, "config.json"))
		if err != nil {
			t.Fatal(err)
		}
		var raw map[string]any
		if err := json.Unmarshal(data, &raw); err != nil {
			t.Fatal(err)
		}
		for _, k := range keys {
			if _, ok := raw[k]; !ok {
				t.Errorf("config.json has no %q:\n%s", k, data)
			}
		}
		return raw
	}
	made := saved(t, TinyConfig(64))
	want := map[string]any{"attention_dropout": 0.0, "initializer_range": 0.02, "max_window_layers": 2.0,
		"sliding_window": nil, "transformers_version": MinTransformersVersion, "use_cache": true, "use_sliding_window": false}
	for k, v := range want {
		if made[k] != v {
			t.Errorf("config made in Go: %s = %v, want %v", k, made[k], v)
		}
	}

	// Values read from a config.json are written back as they were.
	path := filepath.Join(t.TempDir(), "config.json")
	tiny, _ := json.Marshal(TinyConfig(64))
	var raw map[string]any
	json.Unmarshal(tiny, &raw)
	for k, v := range map[string]any{"attention_dropout": 0.1, "initializer_range": 0.01, "max_window_layers": 1,
		"sliding_window": 4096, "transformers_version": "4.57.1", "use_cache": false} {
		raw[k] = v
	}
	data, _ := json.Marshal(raw)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := ReadConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	back := saved(t, cfg)
	for k, v := range map[string]any{"attention_dropout": 0.1, "initializer_range": 0.01, "max_window_layers": 1.0,
		"sliding_window": 4096.0, "transformers_version": "4.57.1", "use_cache": false} {
		if back[k] != v {
			t.Errorf("read from config.json: %s = %v written back as %v", k, v, back[k])
		}
	}
}
