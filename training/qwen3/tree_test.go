package qwen3

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/tensors"
)

// TestPackTrees: shared prefixes become one node each, depth-first order
// puts every subtree in one interval, and each sequence's nodes spell it.
func TestPackTrees(t *testing.T) {
	seqs := [][]int32{
		{1, 2, 3, 4},
		{1, 2, 3, 4}, // identical: no new node
		{1, 2, 5},    // shares 1 2
		{7, 8},       // a second root
		{1, 2, 3, 4, 9},
	}
	tb, err := PackTrees(seqs, 100, -1)
	if err != nil {
		t.Fatal(err)
	}
	if tb.Nodes != 8 || tb.Rows() != 1 || tb.N != 16 {
		t.Fatalf("nodes %d rows %d N %d, want 8 nodes in 1 row of 16", tb.Nodes, tb.Rows(), tb.N)
	}
	ids := tensors.MustCopyFlatData[int32](tb.IDs)
	pos := tensors.MustCopyFlatData[int32](tb.Positions)
	end := tensors.MustCopyFlatData[int32](tb.SubtreeEnd)
	wantIDs := []int32{1, 2, 3, 4, 9, 5, 7, 8}
	wantPos := []int32{0, 1, 2, 3, 4, 2, 0, 1}
	wantEnd := []int32{5, 5, 4, 4, 4, 5, 7, 7}
	if !slices.Equal(ids[:8], wantIDs) || !slices.Equal(pos[:8], wantPos) || !slices.Equal(end[:8], wantEnd) {
		t.Fatalf("ids %v pos %v end %v, want %v %v %v", ids[:8], pos[:8], end[:8], wantIDs, wantPos, wantEnd)
	}
	if ids[8] != -1 || end[8] != -1 {
		t.Fatalf("padding node: id %d end %d, want -1 -1", ids[8], end[8])
	}
	for i, s := range seqs {
		for j, n := range tb.Node[i] {
			if ids[n] != s[j] || pos[n] != int32(j) {
				t.Fatalf("sequence %d token %d: node %d holds %d at depth %d", i, j, n, ids[n], pos[n])
			}
			if j > 0 && !(tb.Node[i][j-1] < n && n <= end[tb.Node[i][j-1]]) {
				t.Fatalf("sequence %d: node %d is not in the subtree of the previous token's node", i, n)
			}
		}
	}
	// Rows of at most 5 nodes: the third sequence still fits (one new
	// node), the fourth does not, nor the fifth beside it; 3 rows pad to 4.
	tb, err = PackTrees(seqs, 5, -1)
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{0, 0, 0, 1, 2}; !slices.Equal(tb.Row, want) || tb.Rows() != 4 {
		t.Fatalf("rows %v of %d, want %v of 4", tb.Row, tb.Rows(), want)
	}
	if _, err := PackTrees([][]int32{{1}, {}}, 10, 0); err == nil {
		t.Fatal("an empty sequence was packed")
	}
}

// TestScoreTreesMatchesScore: log-probabilities and entropies over prefix
// trees equal those of a padded batch, for sequences sharing prefixes,
// identical ones, several roots and rows split by maxNodes.
func TestScoreTreesMatchesScore(t *testing.T) {
	cfg := TinyConfig(64)
	m := tinyModel(t, cfg, dtypes.Float32)
	rng := rand.New(rand.NewPCG(1, 2))
	random := func(n int) []int32 {
		s := make([]int32, n)
		for i := range s {
			s[i] = int32(rng.IntN(64))
		}
		return s
	}
	prompt := random(40)
	var seqs [][]int32
	for i := 0; i < 12; i++ {
		s := slices.Clone(prompt[:20+rng.IntN(21)])
		seqs = append(seqs, append(s, random(1+rng.IntN(30))...))
	}
	seqs = append(seqs, slices.Clone(seqs[3]), random(17), random(2))
	want, wantEnt, err := m.Score(seqs, 0.7)
	if err != nil {
		t.Fatal(err)
	}
	for _, maxNodes := range []int{1 << 20, 100} {
		got, gotEnt, err := m.ScoreTrees(seqs, maxNodes, 0.7)
		if err != nil {
			t.Fatal(err)
		}
		worst := 0.0
		for i := range seqs {
			if len(got[i]) != len(want[i]) {
				t.Fatalf("sequence %d: %d log-probs, want %d", i, len(got[i]), len(want[i]))
			}
			for j := range want[i] {
				worst = max(worst, math.Abs(float64(got[i][j]-want[i][j])), math.Abs(float64(gotEnt[i][j]-wantEnt[i][j])))
			}
		}
		// float32 sums over differently padded key sets: a few ulps of
		// values around 4 (log 64).
		if worst > 1e-5 {
			t.Fatalf("maxNodes %d: max |tree − padded| = %g", maxNodes, worst)
		}
		t.Logf("maxNodes %d: max |tree − padded| = %.2g", maxNodes, worst)
	}
}

// TestSharePromptsSameGeneration: prefilling each distinct prompt once and
// copying its caches gives every sequence the tokens and log-probs it gets
// when each prompt is prefilled on its own, sampling included.
func TestSharePromptsSameGeneration(t *testing.T) {
	cfg := TinyConfig(128)
	m := tinyModel(t, cfg, dtypes.Float32)
	a, b, c := []int32{5, 6, 7, 8, 9}, []int32{5, 6, 7, 1}, []int32{3}
	prompts := [][]int32{a, b, a, a, c, b, a, a, a, b} // 10 rows → 12, 3 distinct prompts → 4
	for _, temp := range []float64{0, 0.8} {
		opts := GenerateOptions{MaxNewTokens: 12, Temperature: temp, Seed: 9, StopTokens: []int32{0}, LengthBucket: 16}
		alone, err := m.Generate(context.Background(), prompts, opts)
		if err != nil {
			t.Fatal(err)
		}
		opts.SharePrompts = true
		shared, err := m.Generate(context.Background(), prompts, opts)
		if err != nil {
			t.Fatal(err)
		}
		for r := range prompts {
			if !slices.Equal(alone.Tokens[r], shared.Tokens[r]) {
				t.Fatalf("temperature %g, row %d: %v alone, %v shared", temp, r, alone.Tokens[r], shared.Tokens[r])
			}
			for j := range alone.LogProbs[r] {
				if d := math.Abs(float64(alone.LogProbs[r][j] - shared.LogProbs[r][j])); d > 1e-5 {
					t.Fatalf("temperature %g, row %d token %d: log-prob %g alone, %g shared", temp, r, j, alone.LogProbs[r][j], shared.LogProbs[r][j])
				}
			}
		}
		if temp > 0 && slices.Equal(shared.Tokens[0], shared.Tokens[2]) && slices.Equal(shared.Tokens[2], shared.Tokens[3]) {
			t.Fatalf("rows with the same prompt drew the same tokens: %v", shared.Tokens[0])
		}
	}
}

func TestBucketRows(t *testing.T) {
	for _, c := range [][2]int{{0, 1}, {1, 1}, {3, 4}, {8, 8}, {9, 12}, {12, 12}, {13, 16}, {17, 24}, {25, 32}, {33, 48}, {70, 96}, {560, 768}} {
		if got := BucketRows(c[0]); got != c[1] {
			t.Errorf("BucketRows(%d) = %d, want %d", c[0], got, c[1])
		}
	}
}

// TestGenerateCompactsEndedSequences: when most sequences have stopped,
// decoding goes on in a smaller batch, and greedy sequences are still those
// each prompt gives alone.
func TestGenerateCompactsEndedSequences(t *testing.T) {
	m := contextModel(t, TinyConfig(64))
	var prompts [][]int32
	for i := 0; i < 24; i++ {
		prompts = append(prompts, []int32{int32(i), int32(i*5%64 + 1), int32(i*11%64 + 2)})
	}
	// Stop on the tokens the first 20 prompts continue with.
	first, err := m.Generate(context.Background(), prompts, GenerateOptions{MaxNewTokens: 1, LengthBucket: 16})
	if err != nil {
		t.Fatal(err)
	}
	var stops []int32
	for i := 0; i < 20; i++ {
		stops = append(stops, first.Tokens[i][0])
	}
	running := 0
	for i := 20; i < 24; i++ {
		if !slices.Contains(stops, first.Tokens[i][0]) {
			running++
		}
	}
	if running == 0 {
		t.Fatal("every prompt starts with a stop token: pick other prompts")
	}
	opts := GenerateOptions{MaxNewTokens: 20, StopTokens: stops, LengthBucket: 16}
	batch, err := m.Generate(context.Background(), prompts, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(batch.batches) < 2 || batch.batches[len(batch.batches)-1] >= batch.batches[0] {
		t.Fatalf("decoding never moved to a smaller batch: %v", batch.batches)
	}
	for i, p := range prompts {
		alone, err := m.Generate(context.Background(), [][]int32{p}, opts)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(alone.Tokens[0], batch.Tokens[i]) || alone.Stopped[0] != batch.Stopped[i] {
			t.Fatalf("prompt %d: %v (stopped %v) alone, %v (stopped %v) in the batch", i, alone.Tokens[0], alone.Stopped[0], batch.Tokens[i], batch.Stopped[i])
		}
		for j := range alone.LogProbs[0] {
			if d := math.Abs(float64(alone.LogProbs[0][j] - batch.LogProbs[i][j])); d > 1e-5 {
				t.Fatalf("prompt %d token %d: log-prob %g alone, %g in the batch", i, j, alone.LogProbs[0][j], batch.LogProbs[i][j])
			}
		}
	}
	t.Logf("batch sizes while decoding: %v; tokens of the last prompt: %v", batch.batches, batch.Tokens[23])
}

// contextModel is a tiny random model whose weights are scaled up from
// RandomWeights' std 0.02, so that its next token depends on the context
// (at std 0.02 a tied-embedding model repeats its last token).
func contextModel(t *testing.T, cfg Config) *Model {
	t.Helper()
	w, err := RandomWeights(cfg, 5, dtypes.Float32)
	if err != nil {
		t.Fatal(err)
	}
	for name, x := range w.Tensors {
		if x.Rank() < 2 {
			continue
		}
		v := tensors.MustCopyFlatData[float32](x)
		for i := range v {
			v[i] *= 40
		}
		w.Tensors[name] = tensors.FromFlatDataAndDimensions(v, x.Shape().Dimensions...)
	}
	m, err := New(testBackend, w)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestPerRowTemperatures: greedy and sampled sequences in one batch — the
// greedy ones are what a greedy batch gives, and every recorded log-prob is
// the model's score of that token at the row's temperature (1 for greedy).
func TestPerRowTemperatures(t *testing.T) {
	m := contextModel(t, TinyConfig(64))
	prompts := [][]int32{{1, 2, 3}, {4, 5}, {1, 2, 3}, {6, 7, 8, 9}, {4, 5}, {10}}
	temps := []float64{0, 0.8, 0.8, 0, 1.3, 0.8}
	mixed, err := m.Generate(context.Background(), prompts, GenerateOptions{MaxNewTokens: 10, Temperatures: temps, Seed: 3, LengthBucket: 16})
	if err != nil {
		t.Fatal(err)
	}
	greedy, err := m.Generate(context.Background(), prompts, GenerateOptions{MaxNewTokens: 10, LengthBucket: 16})
	if err != nil {
		t.Fatal(err)
	}
	sampledDiffers := false
	for r, p := range prompts {
		if temps[r] == 0 && !slices.Equal(mixed.Tokens[r], greedy.Tokens[r]) {
			t.Fatalf("greedy row %d: %v among sampled rows, %v in a greedy batch", r, mixed.Tokens[r], greedy.Tokens[r])
		}
		if temps[r] > 0 && !slices.Equal(mixed.Tokens[r], greedy.Tokens[r]) {
			sampledDiffers = true
		}
		at := temps[r]
		if at == 0 {
			at = 1
		}
		score, _, err := m.Score([][]int32{append(slices.Clone(p), mixed.Tokens[r]...)}, at)
		if err != nil {
			t.Fatal(err)
		}
		for j, lp := range mixed.LogProbs[r] {
			if d := math.Abs(float64(lp - score[0][len(p)-1+j])); d > 1e-4 {
				t.Fatalf("row %d token %d: recorded log-prob %g, scored %g at temperature %g", r, j, lp, score[0][len(p)-1+j], at)
			}
		}
	}
	if !sampledDiffers {
		t.Fatal("every sampled row drew the greedy sequence")
	}
	if _, err := m.Generate(context.Background(), prompts, GenerateOptions{MaxNewTokens: 2, Temperatures: temps[:2]}); err == nil {
		t.Fatal("2 temperatures for 6 prompts were accepted")
	}
}

// TestGenerateManyShapes: a long run meets more than 64 shapes of one
// program (here the compaction of the KV caches: batch sizes before and
// after, cache lengths); every one compiles.
func TestGenerateManyShapes(t *testing.T) {
	m := contextModel(t, TinyConfig(64))
	compactions := map[[3]int]bool{} // rows before, rows after, cache length
	for rows := 5; rows <= 40; rows += 5 {
		for plen := 3; plen <= 150; plen += 16 {
			prompts := make([][]int32, rows)
			for i := range prompts {
				prompts[i] = make([]int32, plen)
				for j := range prompts[i] {
					prompts[i][j] = int32((i*7 + j*3) % 64)
				}
			}
			// Most sequences stop at once on their first token.
			first, err := m.Generate(context.Background(), prompts, GenerateOptions{MaxNewTokens: 1, LengthBucket: 16})
			if err != nil {
				t.Fatal(err)
			}
			var stops []int32
			for i := 0; i < rows-2; i++ {
				stops = append(stops, first.Tokens[i][0])
			}
			g, err := m.Generate(context.Background(), prompts, GenerateOptions{MaxNewTokens: 6, StopTokens: stops, LengthBucket: 16})
			if err != nil {
				t.Fatalf("%d prompts of %d tokens: %v", rows, plen, err)
			}
			for i := 1; i < len(g.batches); i++ {
				compactions[[3]int{g.batches[i-1], g.batches[i], roundUp(roundUp(plen, 16)+6, 16)}] = true
			}
		}
	}
	if len(compactions) <= 64 {
		t.Fatalf("only %d distinct compactions: the test needs more than 64", len(compactions))
	}
}

// FuzzPackTrees: for any sequences and row size, every sequence's nodes
// spell it at depths 0, 1, …, each node lies in its parent's subtree
// interval, and a row holds exactly one node per distinct prefix of its
// sequences.
func FuzzPackTrees(f *testing.F) {
	f.Add([]byte{1, 2, 3, 0, 1, 2, 4, 0, 5}, uint8(4))
	f.Add([]byte{7, 7, 7, 0, 7, 7, 0, 7}, uint8(0))
	f.Fuzz(func(t *testing.T, data []byte, maxNodes uint8) {
		var seqs [][]int32
		var cur []int32
		for _, b := range append(data, 0) {
			if b == 0 {
				if len(cur) > 0 {
					seqs = append(seqs, cur)
				}
				cur = nil
				continue
			}
			cur = append(cur, int32(b%8)) // a small alphabet: many shared prefixes
		}
		if len(seqs) == 0 {
			return
		}
		tb, err := PackTrees(seqs, int(maxNodes), -1)
		if err != nil {
			t.Fatal(err)
		}
		ids := tensors.MustCopyFlatData[int32](tb.IDs)
		pos := tensors.MustCopyFlatData[int32](tb.Positions)
		end := tensors.MustCopyFlatData[int32](tb.SubtreeEnd)
		prefixes := map[int]map[string]bool{}
		for i, s := range seqs {
			r := tb.Row[i]
			if prefixes[r] == nil {
				prefixes[r] = map[string]bool{}
			}
			for j, n := range tb.Node[i] {
				o := r*tb.N + int(n)
				if ids[o] != s[j] || pos[o] != int32(j) {
					t.Fatalf("sequence %d token %d: node %d holds %d at depth %d", i, j, n, ids[o], pos[o])
				}
				if j > 0 {
					p := tb.Node[i][j-1]
					if !(p < n && n <= end[r*tb.N+int(p)]) {
						t.Fatalf("sequence %d token %d: node %d outside its parent %d's subtree", i, j, n, p)
					}
				}
				prefixes[r][fmt.Sprint(s[:j+1])] = true
			}
		}
		nodes := 0
		for r := 0; r < tb.Rows(); r++ {
			real := 0
			for k := 0; k < tb.N; k++ {
				if end[r*tb.N+k] >= 0 {
					real++
				}
			}
			if real != len(prefixes[r]) {
				t.Fatalf("row %d: %d nodes for %d distinct prefixes", r, real, len(prefixes[r]))
			}
			nodes += real
		}
		if nodes != tb.Nodes {
			t.Fatalf("Nodes = %d, rows hold %d", tb.Nodes, nodes)
		}
	})
}
