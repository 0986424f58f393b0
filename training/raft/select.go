package raft

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/gosqlenv/gosqlenv/training"
)

// Candidate is one sampled completion of a prompt, scored.
type Candidate struct {
	// Prompt indexes the candidate's prompt within its source; PromptID names it.
	Prompt   int
	PromptID string
	// Text is the completion as decoded (all model turns, for multi-turn
	// episodes); deduplication compares it.
	Text string
	// Samples are the training sequences (prompt + completion, with the loss
	// mask on the completion only): one for a single-turn completion, one
	// per turn for an environment episode.
	Samples []training.Sample
	// Reward is the verifier's score; Success its verdict.
	Reward  float64
	Success bool
	// Details is the verifier's explanation (or error), for inspection.
	Details string
}

// Selected is what Select kept of a cycle's candidates, with counts.
type Selected struct {
	// Kept are the candidates to fine-tune on, best reward first.
	Kept []Candidate
	// KeptIndex[i] is the index of Kept[i] in Select's input.
	KeptIndex []int
	// Unique counts candidates left after deduplication.
	Unique int
	// AboveThreshold counts unique candidates with reward ≥ the threshold.
	AboveThreshold int
}

// Select filters candidates as RAFT does: drop duplicates of a prompt's
// completions (unless KeepDuplicates), keep rewards ≥ RewardThreshold, then
// the best ceil(KeepTopFraction × n) of the n left, over all prompts
// (Global) or within each prompt (PerPrompt). Equal rewards are ordered by
// a shuffle seeded with seed, so no prompt or sample position is favoured.
// Deduplicating before taking the top fraction keeps copies of one easy
// completion from using up the quota. NaN rewards are never kept.
func Select(cands []Candidate, cfg Config, seed uint64) Selected {
	var out Selected
	seen := map[[2]string]bool{}
	var above []int // indexes into cands
	for i, c := range cands {
		if !cfg.KeepDuplicates {
			key := [2]string{c.PromptID, c.Text}
			if seen[key] {
				continue
			}
			seen[key] = true
		}
		out.Unique++
		if !math.IsNaN(c.Reward) && c.Reward >= cfg.RewardThreshold {
			above = append(above, i)
		}
	}
	out.AboveThreshold = len(above)
	rng := rand.New(rand.NewPCG(seed, 0x5241_4654)) // "RAFT"
	rng.Shuffle(len(above), func(i, j int) { above[i], above[j] = above[j], above[i] })
	byReward := func(a, b int) int { return cmp.Compare(cands[b].Reward, cands[a].Reward) }
	slices.SortStableFunc(above, byReward)
	top := func(idx []int) []int {
		n := int(math.Ceil(cfg.KeepTopFraction*float64(len(idx)) - 1e-9))
		return idx[:min(max(n, 0), len(idx))]
	}
	if cfg.Selection == PerPrompt {
		groups := map[int][]int{}
		var order []int
		for _, i := range above {
			p := cands[i].Prompt
			if _, ok := groups[p]; !ok {
				order = append(order, p)
			}
			groups[p] = append(groups[p], i)
		}
		for _, p := range order {
			out.KeptIndex = append(out.KeptIndex, top(groups[p])...)
		}
		slices.SortStableFunc(out.KeptIndex, byReward)
	} else {
		out.KeptIndex = slices.Clone(top(above))
	}
	for _, i := range out.KeptIndex {
		out.Kept = append(out.Kept, cands[i])
	}
	return out
}

// HistogramBins is the number of reward histogram bins over [0, 1].
const HistogramBins = 10

// Histogram counts rewards in HistogramBins equal bins over [0, 1]; a
// reward of exactly 1 goes to the last bin, rewards below 0 to the first and
// above 1 to the last; NaN rewards are not counted.
func Histogram(rewards []float64) []int {
	h := make([]int, HistogramBins)
	for _, r := range rewards {
		if math.IsNaN(r) {
			continue
		}
		b := int(math.Floor(r * HistogramBins))
		h[min(max(b, 0), HistogramBins-1)]++
	}
	return h
}
