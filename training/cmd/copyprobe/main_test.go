package main

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestProbes: every synthetic question names its constant and the
// completion's SQL ends with it, so that copying is the only way to the
// right literal.
func TestProbes(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	for range 200 {
		p := newProbe(r)
		if !strings.Contains(p.prompt, strings.Trim(p.constant, "'")) {
			t.Fatalf("question %q does not name %s", p.prompt, p.constant)
		}
		if !strings.HasSuffix(p.completion, "= "+p.constant+"<|im_end|>") {
			t.Fatalf("completion %q does not end with %s", p.completion, p.constant)
		}
	}
}

// TestRun trains two steps of the smallest shape on the shipped base
// model's vocabulary and refuses inconsistent shapes by flag name.
func TestRun(t *testing.T) {
	ctx := context.Background()
	if err := run(ctx, []string{"-tokenizer", "../../tinybase/model", "-steps", "2", "-eval_every", "1", "-hidden", "32", "-layers", "1"}); err != nil {
		t.Fatal(err)
	}
	if err := run(ctx, []string{"-heads", "4", "-kv_heads", "3"}); err == nil || !strings.Contains(err.Error(), "-kv_heads") {
		t.Fatalf("-heads 4 -kv_heads 3: %v", err)
	}
	if err := run(ctx, []string{"-tokenizer", "/nonexistent"}); err == nil || !strings.Contains(err.Error(), "/nonexistent") {
		t.Fatalf("missing tokenizer: %v", err)
	}
}
