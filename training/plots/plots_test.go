package plots

import (
	"bytes"
	"image/png"
	"slices"
	"testing"

	"github.com/gosqlenv/gosqlenv/training"
	"gonum.org/v1/plot/plotter"
)

func TestLearningCurvesPNG(t *testing.T) {
	var recs []training.Metrics
	for s := 1; s <= 5; s++ {
		f := float64(s)
		recs = append(recs, training.Metrics{"step": f, "reward": 0.1 * f, "reward_std": 0.05, "rewards/correctness/mean": 0.05 * f,
			"rewards/progress/mean": 0.02 * f, "loss": 1 / f, "entropy": 2 - 0.1*f, "completions/mean_length": 100 + f})
	}
	b, err := LearningCurves(recs)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if img.Bounds().Dx() < 500 || img.Bounds().Dy() < 300 {
		t.Fatalf("image is %v", img.Bounds())
	}
	// Not blank: the image has many distinct colours.
	seen := map[uint32]bool{}
	for x := 0; x < img.Bounds().Dx(); x += 3 {
		for y := 0; y < img.Bounds().Dy(); y += 3 {
			r, g, b, _ := img.At(x, y).RGBA()
			seen[r>>8<<16|g>>8<<8|b>>8] = true
		}
	}
	if len(seen) < 10 {
		t.Fatalf("the plot looks empty (%d colours)", len(seen))
	}
	if _, err := LearningCurves(nil); err == nil {
		t.Fatal("no records accepted")
	}
}

// TestSuccessCurvesPNG: the per-split success figure draws the periodic
// evaluations and the stages, in each split's colour.
func TestSuccessCurvesPNG(t *testing.T) {
	var recs []training.Metrics
	for s := 1; s <= 4; s++ {
		m := training.Metrics{"step": float64(10 * s)}
		if s%2 == 0 {
			m["eval/train/greedy_success"], m["eval/heldout_questions/greedy_success"] = 0.2*float64(s), 0.1
		}
		recs = append(recs, m)
	}
	summary := training.EvalSummary{}
	for i, policy := range training.Policies {
		summary.Set(policy, map[string]training.SplitResult{
			training.SplitTrain:   {GreedySuccess: 0.2 * float64(i), SampledSuccess: 0.15 * float64(i), SampledSuccessSE: 0.04},
			training.SplitHeldout: {SampledSuccess: 0.05, SampledSuccessSE: 0.02},
		})
	}
	b, err := SuccessCurves(recs, summary)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	// The train split's colour (palette[0]) and the held-out split's
	// (palette[1]) are both drawn.
	found := map[int]int{}
	for x := 0; x < img.Bounds().Dx(); x++ {
		for y := 0; y < img.Bounds().Dy(); y++ {
			r, g, b, _ := img.At(x, y).RGBA()
			for i, c := range palette[:2] {
				pr, pg, pb, _ := c.RGBA()
				if r == pr && g == pg && b == pb {
					found[i]++
				}
			}
		}
	}
	if found[0] < 50 || found[1] < 50 {
		t.Fatalf("pixels per split colour: %v", found)
	}
}

// TestGreedyCurve: a split's curve starts at the SFT evaluation, follows
// the periodic evaluations, and ends at the GRPO evaluation only where no
// periodic evaluation ran after the last step.
func TestGreedyCurve(t *testing.T) {
	summary := training.EvalSummary{}
	summary.Set(training.PolicySFT, map[string]training.SplitResult{training.SplitTrain: {GreedySuccess: 0.25}})
	summary.Set(training.PolicyGRPO, map[string]training.SplitResult{training.SplitTrain: {GreedySuccess: 0.75}})
	records := []training.Metrics{
		{"step": 10}, {"step": 20, "eval/train/greedy_success": 0.5}, {"step": 30},
	}
	got := greedyCurve(records, summary, training.SplitTrain)
	want := plotter.XYs{{X: 0, Y: 25}, {X: 20, Y: 50}, {X: 30, Y: 75}}
	if !slices.Equal(got, want) {
		t.Errorf("curve %v, want %v", got, want)
	}
	records[2]["eval/train/greedy_success"] = 0.6
	got = greedyCurve(records, summary, training.SplitTrain)
	want = plotter.XYs{{X: 0, Y: 25}, {X: 20, Y: 50}, {X: 30, Y: 60}}
	if !slices.Equal(got, want) {
		t.Errorf("with an evaluation after the last step: curve %v, want %v", got, want)
	}
	if got := greedyCurve(records, summary, training.SplitHeldout); len(got) != 0 {
		t.Errorf("a split without evaluations: curve %v", got)
	}
}
