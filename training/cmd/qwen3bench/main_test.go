package main

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestParseFlags(t *testing.T) {
	o, err := parseFlags(nil, io.Discard)
	if err != nil || o.Mode != "decode" || !slices.Equal(o.Batches, []int{1, 16, 64}) || o.Shape != "tiny" || o.DType != "auto" {
		t.Fatalf("defaults: %+v, %v", o, err)
	}
	if o, err = parseFlags([]string{"-mode", "trainstep"}, io.Discard); err != nil || !slices.Equal(o.Batches, []int{16}) || o.Seq != 512 {
		t.Fatalf("trainstep defaults: %+v, %v", o, err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-mode", "serve"}, "-mode"},
		{[]string{"-shape", "7b"}, "-shape"},
		{[]string{"-dtype", "f16"}, "-dtype"},
		{[]string{"-batch", "1,x"}, "-batch"},
		{[]string{"-batch", "0"}, "-batch"},
		{[]string{"-new_tokens", "1"}, "new_tokens"},
		{[]string{"-generations", "1", "-mode", "grpostep"}, "generations"},
		{[]string{"extra"}, "unexpected"},
	} {
		if _, err := parseFlags(c.args, io.Discard); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want one mentioning %q", c.args, err, c.want)
		}
	}
}

func runJSON(t *testing.T, args ...string) map[string]any {
	t.Helper()
	path := filepath.Join(t.TempDir(), "out.json")
	o, err := parseFlags(append(args, "-backend", "go", "-out", path), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	r, err := run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if err := writeReport(o.Out, r); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	return doc
}

// TestDecodeAndTrainStepJSON runs both benchmarks at toy sizes on the CPU
// and checks the JSON that run.sh's summary reads.
func TestDecodeAndTrainStepJSON(t *testing.T) {
	doc := runJSON(t, "-mode", "decode", "-batch", "1,2", "-prompt_len", "12", "-new_tokens", "4", "-reps", "1", "-dtype", "f32")
	res := doc["results"].([]any)
	if len(res) != 2 {
		t.Fatalf("decode results: %v", res)
	}
	for _, r := range res {
		m := r.(map[string]any)
		for _, k := range []string{"tokens_per_s", "generate_seconds", "prefill_seconds", "bytes_per_step", "kv_bytes_per_step"} {
			if v, ok := m[k].(float64); !ok || v <= 0 {
				t.Errorf("decode %s = %v", k, m[k])
			}
		}
		if m["cache_len"].(float64) != 16 { // prompt 12 padded to 16 (bucket = new_tokens 4), + 4
			t.Errorf("cache_len %v, want 16", m["cache_len"])
		}
	}
	if doc["params"].(float64) <= 0 || doc["param_bytes"].(float64) != 4*doc["params"].(float64) {
		t.Errorf("params %v, param_bytes %v", doc["params"], doc["param_bytes"])
	}
	doc = runJSON(t, "-mode", "trainstep", "-batch", "2", "-seq", "16", "-reps", "2")
	m := doc["results"].([]any)[0].(map[string]any)
	losses := m["losses"].([]any)
	if len(losses) != 3 || m["step_seconds"].(float64) <= 0 || m["tokens"].(float64) != 32 {
		t.Fatalf("trainstep result %v", m)
	}
	if !(losses[2].(float64) < losses[0].(float64)) {
		t.Errorf("loss did not decrease over 3 AdamW steps: %v", losses)
	}
}

// TestGRPOStepJSON runs two real GRPO steps of the tiny preset on the CPU.
func TestGRPOStepJSON(t *testing.T) {
	if testing.Short() {
		t.Skip("GRPO steps on the bundled environment")
	}
	doc := runJSON(t, "-mode", "grpostep", "-dtype", "f32", "-questions", "2", "-generations", "2", "-grpo_steps", "1",
		"-max_new_tokens", "8", "-max_completion_length", "16", "-step_budget", "2", "-length_bucket", "64")
	res := doc["results"].([]any)
	if len(res) != 1 {
		t.Fatalf("results %v", res)
	}
	m := res[0].(map[string]any)
	for _, k := range []string{"step_time", "time/rollout", "time/generation", "time/loss_backward"} {
		if v, ok := m[k].(float64); !ok || v <= 0 {
			t.Errorf("%s = %v", k, m[k])
		}
	}
}
