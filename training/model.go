package training

import (
	"context"
	"fmt"
	"strings"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	"github.com/gosqlenv/gosqlenv/training/qwen3"
	"github.com/gosqlenv/gosqlenv/training/tokenizer"
)

// Loading a Qwen3 model with its tokenizer, the tiny base model's name, and
// what to do when a model does not fit in memory.

// LoadModelAndTokenizer loads a Qwen3 model (a local directory or a Hugging
// Face id, see qwen3.LoadModel) in dtype on backend, and the tokenizer from
// the same directory. A checkpoint saved without Qwen3's chat template gets
// Qwen3's ChatML rendering (Qwen3Chat). It returns the model directory too
// (checkpoints copy its tokenizer files).
func LoadModelAndTokenizer(ctx context.Context, backend compute.Backend, modelID string, dtype dtypes.DType) (*qwen3.Model, ChatTokenizer, string, error) {
	model, dir, err := qwen3.LoadModel(ctx, backend, modelID, qwen3.LoadOptions{DType: dtype})
	if err != nil {
		return nil, nil, "", err
	}
	tk, err := tokenizer.Load(dir)
	if err != nil {
		return nil, nil, "", err
	}
	if !tokenizer.IsQwen3ChatTemplate(tk.ChatTemplate()) {
		return model, Qwen3Chat{tk}, dir, nil
	}
	return model, tk, dir, nil
}

// Qwen3Chat renders chats with Qwen3's template (tokenizer.RenderQwen3Chat)
// whatever template the wrapped tokenizer's files carry: for the tiny preset
// and for Qwen3 checkpoints saved without a template.
type Qwen3Chat struct{ *tokenizer.Tokenizer }

// ApplyChatTemplate renders msgs as Qwen3's template does.
func (Qwen3Chat) ApplyChatTemplate(msgs []tokenizer.Message, opts tokenizer.ChatOptions) (string, error) {
	return tokenizer.RenderQwen3Chat(msgs, opts)
}

// withOOMHint adds TRL's advice to device out-of-memory errors.
func withOOMHint(err error) error {
	if err == nil {
		return nil
	}
	msg := strings.ToLower(err.Error())
	if strings.Contains(msg, "out of memory") || strings.Contains(msg, "resource_exhausted") || strings.Contains(msg, "oom") {
		return fmt.Errorf("%w\nthe device ran out of memory: reduce per_device_train_batch_size or num_generations (or max_completion_length), or use precision bfloat16", err)
	}
	return err
}

// TinyBaseModelName selects the pre-trained tiny base model shipped in
// package tinybase (architecture TinyModelConfig, its own vocabulary)
// instead of a randomly initialised tiny model.
const TinyBaseModelName = "tiny-base"
