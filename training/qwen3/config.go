// Package qwen3 is the Qwen3 decoder (Qwen3ForCausalLM, dense sizes 0.6B to
// 32B) in GoMLX: Hugging Face weights in and out, a forward pass equal to
// transformers', batched generation with a KV cache, and per-token
// log-probabilities with gradients for training.
package qwen3

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
)

// DefaultModelID is the model used when none is given.
const DefaultModelID = "Qwen/Qwen3-1.7B"

// Config mirrors the fields of a Hugging Face Qwen3 config.json that the
// model uses; the JSON names are transformers'.
type Config struct {
	Architectures         []string `json:"architectures"`
	ModelType             string   `json:"model_type"`
	VocabSize             int      `json:"vocab_size"`
	HiddenSize            int      `json:"hidden_size"`
	IntermediateSize      int      `json:"intermediate_size"`
	NumHiddenLayers       int      `json:"num_hidden_layers"`
	NumAttentionHeads     int      `json:"num_attention_heads"`
	NumKeyValueHeads      int      `json:"num_key_value_heads"`
	HeadDim               int      `json:"head_dim"`
	HiddenAct             string   `json:"hidden_act"`
	MaxPositionEmbeddings int      `json:"max_position_embeddings"`
	RMSNormEps            float64  `json:"rms_norm_eps"`
	RopeTheta             float64  `json:"rope_theta"`
	TieWordEmbeddings     bool     `json:"tie_word_embeddings"`
	AttentionBias         bool     `json:"attention_bias"`
	TorchDtype            string   `json:"torch_dtype"`
	BOSTokenID            *int     `json:"bos_token_id,omitempty"`
	EOSTokenID            *int     `json:"eos_token_id,omitempty"`

	// Unsupported features, read only to be refused clearly.
	RopeScaling json.RawMessage `json:"rope_scaling,omitempty"`
	// RopeParameters is transformers ≥ 5's form of rope_theta and
	// rope_scaling ({"rope_type": "default", "rope_theta": 1000000}); only
	// the default type is implemented, and its rope_theta fills RopeTheta.
	RopeParameters   json.RawMessage `json:"rope_parameters,omitempty"`
	UseSlidingWindow bool            `json:"use_sliding_window"`
	NumExperts       int             `json:"num_experts,omitempty"`

	// Keys transformers writes in every Qwen3 config.json and this model
	// does not use (no dropout, caches always, no sliding window); read and
	// written back so that a saved model's config.json has what
	// transformers' own save_pretrained gives. Save fills unset ones with
	// Qwen3Config's defaults (see WithTransformersDefaults).
	AttentionDropout    float64 `json:"attention_dropout"`
	InitializerRange    float64 `json:"initializer_range"`
	MaxWindowLayers     int     `json:"max_window_layers"`
	SlidingWindow       *int    `json:"sliding_window"`
	UseCache            *bool   `json:"use_cache"`
	TransformersVersion string  `json:"transformers_version"`
}

// MinTransformersVersion is the first transformers release with Qwen3: the
// transformers_version written into a config.json that was not read from one.
const MinTransformersVersion = "4.51.0"

// WithTransformersDefaults fills the keys transformers writes but the model
// does not use with Qwen3Config's defaults where they are unset:
// initializer_range 0.02, max_window_layers = num_hidden_layers, use_cache
// true, transformers_version MinTransformersVersion (sliding_window stays
// null: it is unused without use_sliding_window).
func (c Config) WithTransformersDefaults() Config {
	if c.InitializerRange == 0 {
		c.InitializerRange = 0.02
	}
	if c.MaxWindowLayers == 0 {
		c.MaxWindowLayers = c.NumHiddenLayers
	}
	if c.UseCache == nil {
		yes := true
		c.UseCache = &yes
	}
	if c.TransformersVersion == "" {
		c.TransformersVersion = MinTransformersVersion
	}
	return c
}

// ReadConfig reads and validates a config.json.
func ReadConfig(path string) (Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Config{}, fmt.Errorf("qwen3 config: %w", err)
	}
	var c Config
	if err := json.Unmarshal(data, &c); err != nil {
		return Config{}, fmt.Errorf("qwen3 config: %s is not valid JSON: %w", path, err)
	}
	if err := c.Validate(); err != nil {
		return Config{}, fmt.Errorf("qwen3 config %s: %w", path, err)
	}
	return c, nil
}

// Validate checks that the configuration describes a dense Qwen3 model this
// package implements, and fills derived defaults (head_dim).
func (c *Config) Validate() error {
	switch {
	case c.NumExperts > 0 || strings.Contains(strings.ToLower(c.ModelType), "moe") || containsMoE(c.Architectures):
		return fmt.Errorf("unsupported architecture %v (model_type %q): mixture-of-experts Qwen3 models are not implemented, only dense Qwen3ForCausalLM", c.Architectures, c.ModelType)
	case c.ModelType != "" && c.ModelType != "qwen3":
		return fmt.Errorf("unsupported model_type %q: this package implements qwen3", c.ModelType)
	case len(c.Architectures) > 0 && c.Architectures[0] != "Qwen3ForCausalLM":
		return fmt.Errorf("unsupported architecture %q: this package implements Qwen3ForCausalLM", c.Architectures[0])
	case c.HiddenAct != "" && c.HiddenAct != "silu":
		return fmt.Errorf("unsupported hidden_act %q (Qwen3 uses silu)", c.HiddenAct)
	case len(c.RopeScaling) > 0 && string(c.RopeScaling) != "null":
		return fmt.Errorf("unsupported rope_scaling %s (only plain RoPE is implemented)", c.RopeScaling)
	case c.UseSlidingWindow:
		return errors.New("unsupported use_sliding_window: true")
	}
	if len(c.RopeParameters) > 0 && string(c.RopeParameters) != "null" {
		var rp struct {
			RopeType  string  `json:"rope_type"`
			Type      string  `json:"type"`
			RopeTheta float64 `json:"rope_theta"`
		}
		if err := json.Unmarshal(c.RopeParameters, &rp); err != nil {
			return fmt.Errorf("rope_parameters %s: %w", c.RopeParameters, err)
		}
		if kind := rp.RopeType + rp.Type; kind != "" && kind != "default" {
			return fmt.Errorf("unsupported rope_parameters %s (only plain RoPE, rope_type \"default\", is implemented)", c.RopeParameters)
		}
		if c.RopeTheta <= 0 {
			c.RopeTheta = rp.RopeTheta
		}
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"vocab_size", c.VocabSize}, {"hidden_size", c.HiddenSize}, {"intermediate_size", c.IntermediateSize},
		{"num_hidden_layers", c.NumHiddenLayers}, {"num_attention_heads", c.NumAttentionHeads}, {"num_key_value_heads", c.NumKeyValueHeads}} {
		if f.v <= 0 {
			return fmt.Errorf("%s must be positive (got %d)", f.name, f.v)
		}
	}
	if c.NumAttentionHeads%c.NumKeyValueHeads != 0 {
		return fmt.Errorf("num_attention_heads (%d) must be divisible by num_key_value_heads (%d)", c.NumAttentionHeads, c.NumKeyValueHeads)
	}
	if c.HeadDim == 0 {
		if c.HiddenSize%c.NumAttentionHeads != 0 {
			return fmt.Errorf("hidden_size (%d) must be divisible by num_attention_heads (%d) when head_dim is not given", c.HiddenSize, c.NumAttentionHeads)
		}
		c.HeadDim = c.HiddenSize / c.NumAttentionHeads
	}
	if c.HeadDim%2 != 0 {
		return fmt.Errorf("head_dim (%d) must be even for RoPE", c.HeadDim)
	}
	if c.RMSNormEps <= 0 {
		c.RMSNormEps = 1e-6
	}
	if c.RopeTheta <= 0 {
		c.RopeTheta = 1e6
	}
	if c.MaxPositionEmbeddings <= 0 {
		c.MaxPositionEmbeddings = 40960
	}
	return nil
}

func containsMoE(archs []string) bool {
	for _, a := range archs {
		if strings.Contains(strings.ToLower(a), "moe") {
			return true
		}
	}
	return false
}

// WeightShape returns the shape of a named weight, following Hugging Face's
// names and PyTorch's [out, in] layout for projections.
//
//	model.embed_tokens.weight                       [vocab, hidden]
//	model.layers.N.input_layernorm.weight           [hidden]
//	model.layers.N.self_attn.{q,k,v}_proj.weight    [heads·head_dim | kv_heads·head_dim, hidden]
//	model.layers.N.self_attn.{q,k,v}_proj.bias      (only with attention_bias)
//	model.layers.N.self_attn.o_proj.weight          [hidden, heads·head_dim]
//	model.layers.N.self_attn.{q,k}_norm.weight      [head_dim]
//	model.layers.N.post_attention_layernorm.weight  [hidden]
//	model.layers.N.mlp.{gate,up}_proj.weight        [intermediate, hidden]
//	model.layers.N.mlp.down_proj.weight             [hidden, intermediate]
//	model.norm.weight                               [hidden]
//	lm_head.weight                                  [vocab, hidden] (absent when tied)
func (c Config) WeightShape(name string) ([]int, bool) {
	for _, w := range c.Weights() {
		if w.Name == name {
			return w.Shape, true
		}
	}
	return nil, false
}

// WeightSpec names one weight tensor and its shape.
type WeightSpec struct {
	Name  string
	Shape []int
}

// Weights lists every weight the model has, in a fixed order (embedding,
// layers, final norm, lm_head).
func (c Config) Weights() []WeightSpec {
	h, q, kv, ff := c.HiddenSize, c.NumAttentionHeads*c.HeadDim, c.NumKeyValueHeads*c.HeadDim, c.IntermediateSize
	specs := []WeightSpec{{"model.embed_tokens.weight", []int{c.VocabSize, h}}}
	for l := 0; l < c.NumHiddenLayers; l++ {
		p := fmt.Sprintf("model.layers.%d.", l)
		specs = append(specs,
			WeightSpec{p + "input_layernorm.weight", []int{h}},
			WeightSpec{p + "self_attn.q_proj.weight", []int{q, h}},
			WeightSpec{p + "self_attn.k_proj.weight", []int{kv, h}},
			WeightSpec{p + "self_attn.v_proj.weight", []int{kv, h}},
		)
		if c.AttentionBias {
			specs = append(specs,
				WeightSpec{p + "self_attn.q_proj.bias", []int{q}},
				WeightSpec{p + "self_attn.k_proj.bias", []int{kv}},
				WeightSpec{p + "self_attn.v_proj.bias", []int{kv}},
			)
		}
		specs = append(specs,
			WeightSpec{p + "self_attn.o_proj.weight", []int{h, q}},
		)
		if c.AttentionBias {
			specs = append(specs, WeightSpec{p + "self_attn.o_proj.bias", []int{h}})
		}
		specs = append(specs,
			WeightSpec{p + "self_attn.q_norm.weight", []int{c.HeadDim}},
			WeightSpec{p + "self_attn.k_norm.weight", []int{c.HeadDim}},
			WeightSpec{p + "post_attention_layernorm.weight", []int{h}},
			WeightSpec{p + "mlp.gate_proj.weight", []int{ff, h}},
			WeightSpec{p + "mlp.up_proj.weight", []int{ff, h}},
			WeightSpec{p + "mlp.down_proj.weight", []int{h, ff}},
		)
	}
	specs = append(specs, WeightSpec{"model.norm.weight", []int{h}})
	if !c.TieWordEmbeddings {
		specs = append(specs, WeightSpec{"lm_head.weight", []int{c.VocabSize, h}})
	}
	return specs
}

// NumParameters counts the model's parameters.
func (c Config) NumParameters() int64 {
	var n int64
	for _, w := range c.Weights() {
		p := int64(1)
		for _, d := range w.Shape {
			p *= int64(d)
		}
		n += p
	}
	return n
}

// TinyConfig is a small random-weight configuration for tests and CPU runs:
// the Qwen3 architecture at toy scale.
func TinyConfig(vocab int) Config {
	c := Config{
		Architectures: []string{"Qwen3ForCausalLM"}, ModelType: "qwen3",
		VocabSize: vocab, HiddenSize: 64, IntermediateSize: 128, NumHiddenLayers: 2,
		NumAttentionHeads: 4, NumKeyValueHeads: 2, HeadDim: 16, HiddenAct: "silu",
		MaxPositionEmbeddings: 4096, RMSNormEps: 1e-6, RopeTheta: 10000, TieWordEmbeddings: true,
		TorchDtype: "float32",
	}
	return c
}
