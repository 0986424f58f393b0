package qwen3

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/gomlx/compute/dtypes"
)

// TestBatchSlices: the rows are cut into slices whose prefill attention
// (four heads × prompt length² float32 tensors per distinct prompt) and KV
// caches (2 × layers × KV heads × head size × cache length per row) fit
// MaxBatchBytes, counting the padding rows and prompts of BucketRows, in
// order, and rows sharing a prompt stay in one slice.
func TestBatchSlices(t *testing.T) {
	m := tinyModel(t, TinyConfig(64), dtypes.Float32)
	a, b, c := []int32{1, 2, 3}, []int32{4, 5}, []int32{6, 7, 8, 9, 10}
	prompts := [][]int32{a, b, a, c, a, b}
	// LengthBucket 16: prompt length 16, cache length roundUp(16+8, 16) = 32.
	// Attention: 4 × 4 heads × 16 × 16 × 4 B = 16,384 B a prompt; cache:
	// 2 × 2 layers × 2 KV heads × 16 × 32 × 4 B = 16,384 B a row; both
	// counted for BucketRows of them. Shared prompts: a (3 rows) alone
	// needs 1 + 4 = 5 units of 16,384 B, a and b (2 prompts, 5 rows) 2 + 8 =
	// 10, all three (3 → 4 prompts, 6 → 8 rows) 12; b alone 1 + 2 = 3, b and
	// c (2 prompts, 3 → 4 rows) 6.
	const unit = 16384
	for _, tc := range []struct {
		share  bool
		budget int64
		want   [][]int
	}{
		{true, 0, [][]int{{0, 1, 2, 3, 4, 5}}}, // the Go backend's default, 2 GiB
		{true, -1, [][]int{{0, 1, 2, 3, 4, 5}}},
		{true, 12 * unit, [][]int{{0, 1, 2, 3, 4, 5}}},
		{true, 12*unit - 1, [][]int{{0, 1, 2, 4, 5}, {3}}},
		{true, 10*unit - 1, [][]int{{0, 2, 4}, {1, 3, 5}}},
		{true, 5 * unit, [][]int{{0, 2, 4}, {1, 5}, {3}}},
		{true, 1, [][]int{{0, 2, 4}, {1, 5}, {3}}}, // a slice holds at least one prompt
		// Unshared, n rows cost BucketRows(n) × 2 units: 2, 4, 8, 8, 16.
		{false, 8 * unit, [][]int{{0, 1, 2, 3}, {4, 5}}},
		{false, 8*unit - 1, [][]int{{0, 1}, {2, 3}, {4, 5}}},
		{false, 4*unit - 1, [][]int{{0}, {1}, {2}, {3}, {4}, {5}}},
	} {
		opts := GenerateOptions{MaxNewTokens: 8, LengthBucket: 16, SharePrompts: tc.share, MaxBatchBytes: tc.budget}
		if got := m.batchSlices(prompts, opts); !slices.EqualFunc(got, tc.want, slices.Equal) {
			t.Errorf("share %v, budget %d: slices %v, want %v", tc.share, tc.budget, got, tc.want)
		}
	}

	// The Go backend's default bound, 2 GiB, holds two prompts of 3,000
	// tokens (4 × 4 heads × 3,008² × 4 B = 579 MB of attention each; three
	// are computed as four); no bound holds them all.
	long := [][]int32{make([]int32, 3000), make([]int32, 2990), make([]int32, 5)}
	for _, tc := range []struct {
		budget int64
		want   [][]int
	}{{0, [][]int{{0, 1}, {2}}}, {-1, [][]int{{0, 1, 2}}}} {
		opts := GenerateOptions{MaxNewTokens: 8, LengthBucket: 16, MaxBatchBytes: tc.budget}
		if got := m.batchSlices(long, opts); !slices.EqualFunc(got, tc.want, slices.Equal) {
			t.Errorf("3,000-token prompts, budget %d: slices %v, want %v", tc.budget, got, tc.want)
		}
	}
}

// TestGenerateInSlices: a batch generated in slices gives each row the
// tokens and log-probs it gets in one batch (greedy), keeps per-row
// temperatures with their rows, and samples each slice with its own seed.
func TestGenerateInSlices(t *testing.T) {
	m := tinyModel(t, TinyConfig(128), dtypes.Float32)
	ctx := context.Background()
	a, b, c := []int32{5, 6, 7, 8, 9}, []int32{5, 6, 7, 1}, []int32{3}
	prompts := [][]int32{a, b, a, c, b, a}
	opts := GenerateOptions{MaxNewTokens: 10, StopTokens: []int32{0}, LengthBucket: 16, SharePrompts: true}
	whole, err := m.Generate(ctx, prompts, opts)
	if err != nil {
		t.Fatal(err)
	}
	opts.MaxBatchBytes = 1 // one distinct prompt a slice
	sliced, err := m.Generate(ctx, prompts, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(sliced.batches) < 3 {
		t.Fatalf("decoding went through batches %v: want at least one per distinct prompt", sliced.batches)
	}
	for r := range prompts {
		if !slices.Equal(whole.Tokens[r], sliced.Tokens[r]) || whole.Stopped[r] != sliced.Stopped[r] {
			t.Fatalf("row %d: %v (stopped %v) in one batch, %v (stopped %v) in slices", r, whole.Tokens[r], whole.Stopped[r], sliced.Tokens[r], sliced.Stopped[r])
		}
		for j := range whole.LogProbs[r] {
			if d := math.Abs(float64(whole.LogProbs[r][j] - sliced.LogProbs[r][j])); d > 1e-4 {
				t.Fatalf("row %d token %d: log-prob %g in one batch, %g in slices", r, j, whole.LogProbs[r][j], sliced.LogProbs[r][j])
			}
		}
	}

	// Per-row temperatures follow their rows: the greedy rows of a mixed
	// batch still match the greedy generation above.
	opts.Temperatures = []float64{0, 1, 0, 1, 1, 0}
	mixed, err := m.Generate(ctx, prompts, opts)
	if err != nil {
		t.Fatal(err)
	}
	for r, temp := range opts.Temperatures {
		if temp == 0 && !slices.Equal(mixed.Tokens[r], whole.Tokens[r]) {
			t.Fatalf("greedy row %d in a mixed, sliced batch: %v, want %v", r, mixed.Tokens[r], whole.Tokens[r])
		}
	}

	// The same prompt sampled in four slices draws four different streams,
	// and the same call draws them again.
	same := [][]int32{a, a, a, a}
	sample := GenerateOptions{MaxNewTokens: 12, Temperature: 1.5, Seed: 4, LengthBucket: 16, MaxBatchBytes: 1}
	first, err := m.Generate(ctx, same, sample)
	if err != nil {
		t.Fatal(err)
	}
	again, err := m.Generate(ctx, same, sample)
	if err != nil {
		t.Fatal(err)
	}
	for r := range same {
		if !slices.Equal(first.Tokens[r], again.Tokens[r]) {
			t.Fatalf("row %d: sampled %v, then %v with the same seed", r, first.Tokens[r], again.Tokens[r])
		}
		for q := range r {
			if slices.Equal(first.Tokens[r], first.Tokens[q]) {
				t.Fatalf("slices %d and %d drew the same tokens %v", q, r, first.Tokens[r])
			}
		}
	}
}

// TestStaticShapesCompileOnce: with static shapes, batches of any size and
// prompts of any length up to the static length compile the prefill and
// decode programs once; greedy generation is the same as without them; a
// prompt longer than the static length is refused, naming the length.
func TestStaticShapesCompileOnce(t *testing.T) {
	m := tinyModel(t, TinyConfig(128), dtypes.Float32)
	ctx := context.Background()
	batches := [][][]int32{
		{{5, 6, 7, 8, 9}, {5, 6, 7, 1}, {3}},
		{{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20}},
		{{4}, {4, 4}, {9, 8, 7}, {3}, {2}, {1}, {7, 7, 7}}, // more rows than the static 4: two batches
	}
	opts := GenerateOptions{MaxNewTokens: 10, StopTokens: []int32{0}, LengthBucket: 16, SharePrompts: true}
	static := opts
	static.Static = StaticShapes{Rows: 4, PromptLength: 32}
	if _, err := m.Generate(ctx, batches[0], static); err != nil { // compiles prefill and decode
		t.Fatal(err)
	}
	for _, prompts := range batches {
		want, err := m.Generate(ctx, prompts, opts)
		if err != nil {
			t.Fatal(err)
		}
		got, err := m.Generate(ctx, prompts, static)
		if err != nil {
			t.Fatal(err)
		}
		for r := range prompts {
			if !slices.Equal(got.Tokens[r], want.Tokens[r]) || got.Stopped[r] != want.Stopped[r] {
				t.Fatalf("row %d: static %v, dynamic %v", r, got.Tokens[r], want.Tokens[r])
			}
		}
		for _, b := range got.batches {
			if b != 4 {
				t.Fatalf("static generation went through batches %v, want 4 rows each", got.batches)
			}
		}
	}
	// Generated statically again (nothing dynamic in between), nothing
	// compiles.
	mid, _ := CompileStats()
	for _, prompts := range batches {
		if _, err := m.Generate(ctx, prompts, static); err != nil {
			t.Fatal(err)
		}
	}
	if after, _ := CompileStats(); after != mid {
		t.Fatalf("static generation compiled %d programs after the first batch", after-mid)
	}
	long := make([]int32, 33)
	if _, err := m.Generate(ctx, [][]int32{long}, static); err == nil || !strings.Contains(err.Error(), "static prompt length 32") {
		t.Fatalf("a prompt of 33 tokens with a static length of 32: %v", err)
	}
}

// TestStaticSliceRows: with static shapes, a batch whose rows would need
// more than MaxBatchBytes at the static prompt length is generated in
// batches of fewer rows — the next smaller row buckets, fixed by the
// configuration — each greedy row getting the tokens it gets in one batch.
func TestStaticSliceRows(t *testing.T) {
	m := tinyModel(t, TinyConfig(128), dtypes.Float32)
	// Static prompt length 32, cache roundUp(32+6, 16) = 48: attention
	// 4 × 4 heads × 32² × 4 B = 65,536 B a row, cache 2 × 2 layers × 2 KV
	// heads × 16 × 48 × 4 B = 24,576 B a row: 90,112 B a row.
	const row = 90112
	base := GenerateOptions{MaxNewTokens: 6, StopTokens: []int32{0}, LengthBucket: 16, Static: StaticShapes{Rows: 8, PromptLength: 32}}
	for _, tc := range []struct {
		budget int64
		want   int
	}{{0, 8}, {-1, 8}, {8 * row, 8}, {8*row - 1, 4}, {4*row - 1, 2}, {2*row - 1, 1}, {1, 1}} {
		opts := base
		opts.MaxBatchBytes = tc.budget
		if got := m.staticSliceRows(opts); got != tc.want {
			t.Errorf("budget %d: %d rows a batch, want %d", tc.budget, got, tc.want)
		}
	}
	opts := base
	opts.Static.Rows = 12
	opts.MaxBatchBytes = 12*row - 1
	if got := m.staticSliceRows(opts); got != 8 {
		t.Errorf("12 rows, budget for 11: %d rows a batch, want 8", got)
	}

	ctx := context.Background()
	prompts := [][]int32{{5, 6, 7, 8, 9}, {5, 6, 7, 1}, {3}, {9, 9, 2}, {4, 4}, {7}}
	whole, err := m.Generate(ctx, prompts, base)
	if err != nil {
		t.Fatal(err)
	}
	small := base
	small.MaxBatchBytes = 2 * row
	sliced, err := m.Generate(ctx, prompts, small)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(whole.batches, []int{8}) || !slices.Equal(sliced.batches, []int{2, 2, 2}) {
		t.Fatalf("batches: %v in one, %v in slices; want [8] and [2 2 2]", whole.batches, sliced.batches)
	}
	for r := range prompts {
		if !slices.Equal(whole.Tokens[r], sliced.Tokens[r]) {
			t.Errorf("row %d: %v in one batch, %v in batches of 2", r, whole.Tokens[r], sliced.Tokens[r])
		}
	}
}
