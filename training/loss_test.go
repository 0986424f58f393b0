package training

import (
	"math"
	"testing"

	"github.com/gomlx/compute/gobackend"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

func TestAdvantages(t *testing.T) {
	// Two groups: {1, 0, 1, 0} and {0.5, 0.5}.
	rewards := []float64{1, 0, 1, 0, 0.5, 0.5}
	groups := []int{0, 0, 0, 0, 1, 1}
	adv, zero, err := Advantages(rewards, groups, ScaleGroup, 0)
	if err != nil {
		t.Fatal(err)
	}
	std := math.Sqrt(1.0 / 3) // unbiased std of {1, 0, 1, 0}
	want := []float64{0.5 / (std + 1e-4), -0.5 / (std + 1e-4), 0.5 / (std + 1e-4), -0.5 / (std + 1e-4), 0, 0}
	for i := range want {
		if !near(adv[i], want[i], 1e-12) {
			t.Fatalf("group scaling: %v, want %v", adv, want)
		}
	}
	if !near(zero, 2.0/6, 1e-12) {
		t.Fatalf("frac_reward_zero_std %g, want 1/3", zero)
	}
	adv, _, _ = Advantages(rewards, groups, ScaleNone, 0)
	if adv[0] != 0.5 || adv[1] != -0.5 || adv[4] != 0 {
		t.Fatalf("no scaling: %v", adv)
	}
	adv, _, _ = Advantages(rewards, groups, ScaleBatch, 0)
	if !near(adv[0], 0.5/(math.Sqrt(variance(rewards))+1e-4), 1e-12) {
		t.Fatalf("batch scaling: %v", adv)
	}
	if _, _, err := Advantages(rewards, groups, "rank", 0); err == nil {
		t.Fatal("unknown scaling accepted")
	}
}

// TestAdvantagesNoiseThreshold: a group of failed episodes whose rewards
// differ only by operational noise (std ≈ 0.005) gets zero advantages under
// the threshold instead of ±1, and counts as carrying no signal; a group
// with a success keeps its scaled advantages.
func TestAdvantagesNoiseThreshold(t *testing.T) {
	rewards := []float64{0.010, 0.002, 0.008, 0.0, 1.2, 0.01, 0.0, 0.005}
	groups := []int{0, 0, 0, 0, 1, 1, 1, 1}
	noisy, zero, err := Advantages(rewards, groups, ScaleGroup, 0)
	if err != nil {
		t.Fatal(err)
	}
	if zero != 0 || math.Abs(noisy[0]) < 0.8 {
		t.Fatalf("without a threshold the noise group should get full-size advantages: %v (zero std %g)", noisy, zero)
	}
	adv, zero, err := Advantages(rewards, groups, ScaleGroup, 0.02)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 4; i++ {
		if adv[i] != 0 {
			t.Fatalf("noise group advantage %d = %g, want 0", i, adv[i])
		}
	}
	for i := 4; i < 8; i++ {
		if adv[i] != noisy[i] {
			t.Fatalf("signal group advantage %d = %g, want %g (unchanged)", i, adv[i], noisy[i])
		}
	}
	if zero != 0.5 {
		t.Fatalf("frac_reward_zero_std %g, want 0.5", zero)
	}
}

func TestTokenWeights(t *testing.T) {
	// Episode 0: samples with 2 and 1 loss tokens; episode 1: one with 3.
	samples := []Sample{
		{Mask: []int32{0, 1, 1}, Episode: 0},
		{Mask: []int32{0, 0, 1}, Episode: 0},
		{Mask: []int32{0, 1, 1, 1}, Episode: 1},
	}
	micro := []int{0, 0, 1}
	cases := map[string][]float32{
		LossDAPO:   {1.0 / 6, 1.0 / 6, 1.0 / 6},
		LossBNPO:   {1.0 / (3 * 2), 1.0 / (3 * 2), 1.0 / (3 * 2)},
		LossGRPO:   {1.0 / (3 * 2), 1.0 / (3 * 2), 1.0 / (3 * 2)},
		LossDrGRPO: {1.0 / (2 * 10), 1.0 / (2 * 10), 1.0 / (2 * 10)},
	}
	for lt, want := range cases {
		w, err := TokenWeights(samples, micro, 2, 10, lt)
		if err != nil {
			t.Fatal(err)
		}
		for i, s := range samples {
			for tok, m := range s.Mask {
				expect := float32(0)
				if m != 0 {
					expect = want[i]
				}
				if !near(float64(w[i][tok]), float64(expect), 1e-7) {
					t.Fatalf("%s: sample %d token %d weight %g, want %g", lt, i, tok, w[i][tok], expect)
				}
			}
		}
	}
	// grpo with unequal episodes: episode 0 has 3 tokens, 1 has 1.
	w, _ := TokenWeights([]Sample{{Mask: []int32{1, 1, 1}, Episode: 0}, {Mask: []int32{1}, Episode: 1}}, []int{0, 0}, 2, 0, LossGRPO)
	if !near(float64(w[0][0]), 1.0/6, 1e-7) || !near(float64(w[1][0]), 0.5, 1e-9) {
		t.Fatalf("grpo per-episode means: %v", w)
	}
	if _, err := TokenWeights(samples, micro, 2, 10, "ppo"); err == nil {
		t.Fatal("unknown loss type accepted")
	}
}

// TestClippedObjective computes the GRPO token objective on hand-set
// log-probs and compares with the formula worked by hand.
func TestClippedObjective(t *testing.T) {
	backend, err := gobackend.New("")
	if err != nil {
		t.Fatal(err)
	}
	// One sequence of 4 tokens → 3 predicted tokens, all weighted 1/3.
	logp := []float32{-1.0, -0.5, -2.0} // current policy
	old := []float32{0, -1.2, -0.4, -2.0}
	ref := []float32{0, -0.8, -0.6, -1.5}
	weights := []float32{0, 1.0 / 3, 1.0 / 3, 1.0 / 3}
	for _, tc := range []struct {
		name string
		adv  float32
		lc   LossConfig
	}{
		{"positive advantage, no KL", 1.5, LossConfig{Epsilon: 0.2}},
		{"negative advantage, asymmetric clip", -0.7, LossConfig{Epsilon: 0.2, EpsilonHigh: 0.28}},
		{"with KL", 0.9, LossConfig{Epsilon: 0.1, Beta: 0.04}},
	} {
		e := MustNewExec(backend, func(in []*Node) []*Node {
			out := tokenObjective(in[0], ZerosLike(in[0]), LossInputs{Weights: in[1], Advantages: in[2], OldLogp: in[3], RefLogp: in[4],
				SamplingLogp: in[3]}, tc.lc)
			return []*Node{out.Loss, out.ClipLow, out.ClipHigh, out.KL, out.Tokens}
		})
		out, err := e.Call(tensors.FromFlatDataAndDimensions(logp, 1, 3), tensors.FromFlatDataAndDimensions(weights, 1, 4),
			tensors.FromFlatDataAndDimensions([]float32{tc.adv}, 1), tensors.FromFlatDataAndDimensions(old, 1, 4), tensors.FromFlatDataAndDimensions(ref, 1, 4))
		if err != nil {
			t.Fatal(err)
		}
		epsHigh := tc.lc.EpsilonHigh
		if epsHigh == 0 {
			epsHigh = tc.lc.Epsilon
		}
		var loss, low, high, kl float64
		a := float64(tc.adv)
		for i := 0; i < 3; i++ {
			ratio := math.Exp(float64(logp[i]) - float64(old[i+1]))
			clipped := math.Min(math.Max(ratio, 1-tc.lc.Epsilon), 1+epsHigh)
			tl := -math.Min(ratio*a, clipped*a)
			d := float64(ref[i+1]) - float64(logp[i])
			k := math.Exp(d) - d - 1
			tl += tc.lc.Beta * k
			loss += tl / 3
			if ratio < 1-tc.lc.Epsilon && a < 0 {
				low++
			}
			if ratio > 1+epsHigh && a > 0 {
				high++
			}
			kl += k
		}
		got := func(i int) float64 { return float64(tensors.MustCopyFlatData[float32](out[i])[0]) }
		if !near(got(0), loss, 1e-6) || got(1) != low || got(2) != high || got(4) != 3 {
			t.Errorf("%s: loss %g low %g high %g tokens %g; want %g %g %g 3", tc.name, got(0), got(1), got(2), got(4), loss, low, high)
		}
		if tc.lc.Beta > 0 && !near(got(3), kl, 1e-6) {
			t.Errorf("%s: kl %g, want %g", tc.name, got(3), kl)
		}
	}
}

// With num_iterations = 1 the ratio is exactly 1: the loss is −A·Σw and its
// gradient is REINFORCE's.
func TestFreshOldRatioIsOne(t *testing.T) {
	backend, _ := gobackend.New("")
	e := MustNewExec(backend, func(logp, w, adv *Node) *Node {
		return tokenObjective(logp, ZerosLike(logp), LossInputs{Weights: w, Advantages: adv, SamplingLogp: w}, LossConfig{Epsilon: 0.2, FreshOld: true}).Loss
	})
	out, err := e.Call(tensors.FromValue([][]float32{{-3, -0.1}}), tensors.FromValue([][]float32{{0, 0.5, 0.5}}), tensors.FromValue([]float32{2}))
	if err != nil {
		t.Fatal(err)
	}
	if got := tensors.MustCopyFlatData[float32](out[0])[0]; !near(float64(got), -2, 1e-6) {
		t.Fatalf("loss %g, want −A·Σw = −2", got)
	}
}
