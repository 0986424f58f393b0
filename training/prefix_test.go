package training

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/gomlx/gomlx/core/tensors"
)

// TestPrefixSharingMatchesTurnRows: on real episodes (several turns each,
// one earlier turn kept in the prompt), the loss over prefix trees gives the
// per-turn rows' token log-probabilities, loss, metric sums and gradients.
func TestPrefixSharingMatchesTurnRows(t *testing.T) {
	cfg, model, roller, ids, _ := tinySetup(t, t.TempDir())
	cfg.GradientAccumulationSteps = 2
	tr, err := NewGRPOTrainer(cfg, model, roller, ids, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var sc scoredRollout
	turns := 0
	for s := 0; turns <= len(sc.episodes); s++ { // want episodes of more than one turn
		if sc, err = tr.rolloutAndScore(ctx, s); err != nil {
			t.Fatal(err)
		}
		turns = len(Samples(sc.episodes))
	}
	for i := range sc.adv { // advantages of both signs, whatever the rewards
		sc.adv[i] = math.Sin(float64(3*i + 1))
	}
	// shifted perturbs log-probs by a function of the scored token, so that
	// the ratio is clipped on some tokens in both layouts alike.
	shifted := func(logp, targets *tensors.Tensor, shift func(t int32) float32) *tensors.Tensor {
		lp, tg := tensors.MustCopyFlatData[float32](logp), tensors.MustCopyFlatData[int32](targets)
		for i := range lp {
			lp[i] += shift(tg[i])
		}
		return tensors.FromFlatDataAndDimensions(lp, logp.Shape().Dimensions...)
	}
	type result struct {
		logp         []float32 // of each weighted token, in sample order
		loss         float64
		extras       []float64
		grads        [][]float32
		rows, tokens int
	}
	run := func(share bool, lc LossConfig) result {
		tr.Config.PrefixSharing = share
		batches, err := tr.packMicroBatches(sc)
		if err != nil {
			t.Fatal(err)
		}
		var res result
		for _, mb := range batches {
			lp, err := tr.tokenLogp(model.Weights(), mb)
			if err != nil {
				t.Fatal(err)
			}
			w, all := tensors.MustCopyFlatData[float32](mb.weights), tensors.MustCopyFlatData[float32](lp)
			targets := mb.model[0] // the token at each position of a row
			if mb.tree {
				targets = mb.model[4]
			}
			for i := range w {
				if w[i] > 0 {
					res.logp = append(res.logp, all[i])
				}
			}
			old := shifted(mb.samplingLogp, targets, func(t int32) float32 { return 0.4 * float32(math.Sin(float64(t))) })
			key, graph := tr.lossGraphOf(mb, lc)
			loss, extras, err := tr.Learner.accumulate(key, graph, append(append([]*tensors.Tensor{}, mb.model...),
				mb.weights, mb.advantages, old, mb.samplingLogp, mb.samplingLogp))
			if err != nil {
				t.Fatal(err)
			}
			res.loss += loss
			if res.extras == nil {
				res.extras = make([]float64, len(extras))
			}
			for i, x := range extras {
				res.extras[i] += x
			}
			dims := mb.model[0].Shape().Dimensions
			res.rows, res.tokens = res.rows+dims[0], res.tokens+dims[0]*dims[1]
		}
		for _, g := range tr.Learner.acc {
			res.grads = append(res.grads, tensors.MustCopyFlatData[float32](g))
		}
		tr.Learner.Discard()
		return res
	}
	for _, lc := range []LossConfig{
		{Epsilon: 0.2, Temperature: 1, FreshOld: true},
		{Epsilon: 0.2, EpsilonHigh: 0.28, Beta: 0.05, Temperature: 0.7},
	} {
		rows, trees := run(false, lc), run(true, lc)
		if len(trees.logp) != len(rows.logp) || len(rows.logp) == 0 {
			t.Fatalf("%d scored tokens in trees, %d in rows", len(trees.logp), len(rows.logp))
		}
		worst := 0.0
		for i := range rows.logp {
			worst = max(worst, math.Abs(float64(trees.logp[i]-rows.logp[i])))
		}
		// float32 attention and softmax over differently padded key sets (the
		// same keys, other masked ones): a few ulps of log-probs around −5.
		if worst > 2e-5 {
			t.Fatalf("%+v: max |log p(tree) − log p(rows)| = %g", lc, worst)
		}
		if d := math.Abs(trees.loss - rows.loss); d > 1e-5*math.Max(1, math.Abs(rows.loss)) {
			t.Fatalf("%+v: loss %g over trees, %g over rows", lc, trees.loss, rows.loss)
		}
		for i := range rows.extras {
			if d := math.Abs(trees.extras[i] - rows.extras[i]); d > 1e-4*math.Max(1, math.Abs(rows.extras[i])) {
				t.Fatalf("%+v: metric sum %d: %g over trees, %g over rows", lc, i, trees.extras[i], rows.extras[i])
			}
		}
		worstGrad := 0.0
		for i := range rows.grads {
			worstGrad = max(worstGrad, relL2(trees.grads[i], rows.grads[i]))
		}
		// Gradients sum the same float32 terms in another order (shared nodes
		// add their occurrences' gradients before, not after, the backward pass).
		if worstGrad > 1e-4 {
			t.Fatalf("%+v: gradients differ by %g (relative L2)", lc, worstGrad)
		}
		t.Logf("%+v: %d tokens: log-probs within %.1g, gradients within %.1g; %d positions in %d rows vs %d in %d tree rows",
			lc, len(rows.logp), worst, worstGrad, rows.tokens, rows.rows, trees.tokens, trees.rows)
	}
}

// TestEvaluateOneRollout: Roller.Evaluate plays each question's greedy and
// sampled episodes in one rollout (one generation call per turn); its
// greedy episodes are those Greedy plays alone.
func TestEvaluateOneRollout(t *testing.T) {
	_, _, roller, ids, _ := tinySetup(t, t.TempDir())
	ctx := context.Background()
	ids = ids[:3]
	alone, _, err := roller.Greedy(ctx, ids)
	if err != nil {
		t.Fatal(err)
	}
	greedy, sampled, stats, err := roller.Evaluate(ctx, ids, 4, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(greedy) != 3 || len(sampled) != 12 || stats.Episodes != 15 {
		t.Fatalf("%d greedy and %d sampled episodes (%d played), want 3 and 12", len(greedy), len(sampled), stats.Episodes)
	}
	turns := 0
	for i, e := range greedy {
		if e.QuestionID != ids[i] || e.Completion() != alone[i].Completion() {
			t.Fatalf("greedy episode %d (%s): %q, alone %q", i, e.QuestionID, e.Completion(), alone[i].Completion())
		}
		turns = max(turns, len(e.Turns))
	}
	differs := false
	for i, e := range sampled {
		if e.QuestionID != ids[i/4] {
			t.Fatalf("sampled episode %d is of %s, want %s", i, e.QuestionID, ids[i/4])
		}
		turns = max(turns, len(e.Turns))
		differs = differs || e.Completion() != greedy[i/4].Completion()
	}
	if !differs {
		t.Fatal("every sampled episode is its question's greedy one")
	}
	if stats.GenerateCalls != turns {
		t.Fatalf("%d generation calls for episodes of at most %d turns", stats.GenerateCalls, turns)
	}
}

// TestDynamicSamplingKeepsVariedGroups: the loss keeps the first groups
// whose rewards vary, up to the step's questions; with none varying, the
// first groups (zero advantages, no gradient).
func TestDynamicSamplingKeepsVariedGroups(t *testing.T) {
	var sc scoredRollout
	// Groups 0..4 of 2 episodes; groups 1, 3 and 4 vary.
	advs := [][2]float64{{0, 0}, {1, -1}, {0, 0}, {0.5, -0.5}, {-1, 1}}
	for g, a := range advs {
		for k := 0; k < 2; k++ {
			sc.episodes = append(sc.episodes, &Episode{QuestionID: fmt.Sprint("q", g), Group: g})
			sc.adv = append(sc.adv, a[k])
			sc.total = append(sc.total, float64(g))
		}
	}
	got := sc.varied(2)
	if got.groups() != 2 || got.episodes[0].Group != 1 || got.episodes[2].Group != 3 || got.adv[2] != 0.5 || got.total[3] != 3 {
		t.Fatalf("kept groups %v, advantages %v", groupsOf(got), got.adv)
	}
	if got := sc.varied(5); got.groups() != 3 {
		t.Fatalf("want all 3 varied groups, kept %v", groupsOf(got))
	}
	for i := range sc.adv {
		sc.adv[i] = 0
	}
	if got := sc.varied(2); got.groups() != 2 || got.episodes[0].Group != 0 || got.episodes[2].Group != 1 {
		t.Fatalf("nothing varies: want the first 2 groups, kept %v", groupsOf(got))
	}
}

func groupsOf(sc scoredRollout) []int {
	var g []int
	for _, e := range sc.episodes {
		g = append(g, e.Group)
	}
	return g
}

// TestDynamicSamplingStep: a step plays dynamic_sampling × the step's
// questions and trains on as many groups as the step has questions.
func TestDynamicSamplingStep(t *testing.T) {
	cfg, model, roller, ids, _ := tinySetup(t, t.TempDir())
	cfg.DynamicSampling = 3 // 1 question per step → 3 played
	tr, err := NewGRPOTrainer(cfg, model, roller, ids, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := tr.questionsForStep(0); len(got) != 3*cfg.QuestionsPerStep() {
		t.Fatalf("step 0 plays %d questions, want %d", len(got), 3*cfg.QuestionsPerStep())
	}
	// A reward that always varies within a group: every group is informative.
	tr.Rewards = append(tr.Rewards, lengthReward)
	m, err := tr.Step(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if m["dynamic_sampling/trained_groups"] != float64(cfg.QuestionsPerStep()) {
		t.Fatalf("trained on %v groups, want %d", m["dynamic_sampling/trained_groups"], cfg.QuestionsPerStep())
	}
}
