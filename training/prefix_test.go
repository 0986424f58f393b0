package training

import (
	"context"
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
			key, graph := "grpo", tr.lossGraph(lc)
			if mb.tree {
				key, graph = "grpo_tree", tr.treeLossGraph(lc)
			}
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
