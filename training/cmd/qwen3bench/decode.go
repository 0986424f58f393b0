package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/gomlx/compute/dtypes"
	"github.com/gosqlenv/gosqlenv/training/qwen3"
)

// -mode decode: Model.Generate timed per batch size, prefill and decode step apart.

// DecodeResult is one batch size of -mode decode.
type DecodeResult struct {
	Batch     int `json:"batch"`
	PromptLen int `json:"prompt_len"`
	NewTokens int `json:"new_tokens"`
	CacheLen  int `json:"cache_len"`
	// FirstCallSecs includes compiling prefill and decode.
	FirstCallSecs float64 `json:"first_call_seconds"`
	// GenerateSecs is the median time of a whole Generate call; PrefillSecs
	// that of a call generating one token (prefill and its sampling).
	GenerateSecs float64   `json:"generate_seconds"`
	PrefillSecs  float64   `json:"prefill_seconds"`
	GenerateAll  []float64 `json:"generate_seconds_all"`
	// DecodeStepMs = (GenerateSecs − PrefillSecs) / (NewTokens − 1).
	DecodeStepMs float64 `json:"decode_step_ms"`
	// TokensPerSec = Batch·NewTokens / GenerateSecs (what generate users see);
	// DecodeTokensPerSec = Batch / decode step.
	TokensPerSec       float64 `json:"tokens_per_s"`
	DecodeTokensPerSec float64 `json:"decode_tokens_per_s"`
	// BytesPerStep is what one decode step must read at least: all weights
	// plus the keys and values of the average context (prompt + half the new
	// tokens) of every sequence.
	BytesPerStep   int64 `json:"bytes_per_step"`
	KVBytesPerStep int64 `json:"kv_bytes_per_step"`
}

// kvBytesPerStep is the KV-cache bytes one decode step reads at context ctx.
func kvBytesPerStep(cfg qwen3.Config, dtype dtypes.DType, batch, ctx int) int64 {
	return int64(2*cfg.NumHiddenLayers*cfg.NumKeyValueHeads*cfg.HeadDim) * int64(ctx) * int64(batch) * int64(dtype.Size())
}

func benchDecode(ctx context.Context, o Options, m *qwen3.Model, r *Report) error {
	// With the length bucket equal to new_tokens, a 1-token call and a
	// new_tokens call use the same compiled programs: the prompt is padded to
	// a multiple of new_tokens and the KV cache holds prompt + new_tokens.
	bucket := o.NewTokens
	plen := (o.PromptLen + bucket - 1) / bucket * bucket
	cacheLen := plen + o.NewTokens
	r.Notes = append(r.Notes, "greedy generation, no stop token: every sequence generates new_tokens tokens",
		fmt.Sprintf("length bucket %d: prompts padded to %d, KV cache of %d slots", bucket, plen, cacheLen))
	for _, b := range o.Batches {
		if r.outOfTime() {
			r.Notes = append(r.Notes, fmt.Sprintf("batch %d skipped: -max_seconds reached", b))
			continue
		}
		prompts := make([][]int32, b)
		for i := range prompts {
			prompts[i] = make([]int32, o.PromptLen)
			for j := range prompts[i] {
				prompts[i][j] = int32((i*7919 + j*104729 + 13) % m.Config.VocabSize)
			}
		}
		call := func(n int) (float64, error) {
			t0 := time.Now()
			gen, err := m.Generate(ctx, prompts, qwen3.GenerateOptions{MaxNewTokens: n, LengthBucket: bucket})
			if err != nil {
				return 0, fmt.Errorf("decode batch %d: %w", b, err)
			}
			for i, toks := range gen.Tokens {
				if len(toks) != n {
					return 0, fmt.Errorf("decode batch %d: row %d generated %d tokens, want %d", b, i, len(toks), n)
				}
			}
			return time.Since(t0).Seconds(), nil
		}
		res := DecodeResult{Batch: b, PromptLen: o.PromptLen, NewTokens: o.NewTokens, CacheLen: cacheLen}
		var err error
		if res.FirstCallSecs, err = call(o.NewTokens); err != nil {
			return err
		}
		if _, err = call(1); err != nil {
			return err
		}
		var full, pre []float64
		for k := 0; k < o.Reps; k++ {
			t, err := call(o.NewTokens)
			if err != nil {
				return err
			}
			full = append(full, t)
			if t, err = call(1); err != nil {
				return err
			}
			pre = append(pre, t)
		}
		res.GenerateAll = full
		res.GenerateSecs, res.PrefillSecs = median(full), median(pre)
		step := (res.GenerateSecs - res.PrefillSecs) / float64(o.NewTokens-1)
		res.DecodeStepMs = 1000 * step
		res.TokensPerSec = float64(b*o.NewTokens) / res.GenerateSecs
		if step > 0 {
			res.DecodeTokensPerSec = float64(b) / step
		}
		res.KVBytesPerStep = kvBytesPerStep(m.Config, m.DType, b, o.PromptLen+o.NewTokens/2)
		res.BytesPerStep = r.ParamBytes + res.KVBytesPerStep
		r.add(res)
		fmt.Fprintf(os.Stderr, "decode batch %d: %.1f tokens/s (decode step %.2f ms, prefill %.3f s, first call %.1f s)\n",
			b, res.TokensPerSec, res.DecodeStepMs, res.PrefillSecs, res.FirstCallSecs)
	}
	return nil
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}
