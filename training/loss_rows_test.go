package training

import (
	"context"
	"math"
	"testing"

	"github.com/gomlx/gomlx/core/tensors"
)

// TestLossRowsChangesCallsNotResults: loss_rows splits each micro-batch's
// turn samples into several loss calls whose gradients are summed; the
// loss, the gradient norm and the trained weights stay those of one call
// per micro-batch (up to float32 summation order), with and without static
// shapes, while the number of loss calls grows.
func TestLossRowsChangesCallsNotResults(t *testing.T) {
	for _, static := range []bool{false, true} {
		var initial [][]float32
		run := func(lossRows int) (Metrics, []*tensors.Tensor, int) {
			cfg, model, roller, ids, _ := tinySetup(t, t.TempDir())
			initial = initial[:0]
			for _, w := range model.Weights() {
				initial = append(initial, tensors.MustCopyFlatData[float32](w))
			}
			cfg.LossRows, cfg.PrefixSharing = lossRows, false
			roller.cfg.StaticShapes = static
			tr, err := NewGRPOTrainer(cfg, model, roller, ids, nil)
			if err != nil {
				t.Fatal(err)
			}
			tr.Rewards = append(tr.Rewards, lengthReward)
			var m Metrics
			for s := 0; s < 2; s++ {
				if m, err = tr.Step(context.Background(), s); err != nil {
					t.Fatal(err)
				}
			}
			sc, err := tr.rolloutAndScore(context.Background(), 2)
			if err != nil {
				t.Fatal(err)
			}
			batches, err := tr.packMicroBatches(sc)
			if err != nil {
				t.Fatal(err)
			}
			for _, b := range batches {
				if rows := b.model[0].Shape().Dimensions[0]; lossRows > 0 && rows > lossRows {
					t.Errorf("static=%v loss_rows=%d: a loss call of %d rows", static, lossRows, rows)
				}
			}
			return m, model.Weights(), len(batches)
		}
		whole, wWhole, callsWhole := run(0)
		split, wSplit, callsSplit := run(1)
		if callsSplit <= callsWhole {
			t.Errorf("static=%v: loss_rows 1 made %d loss calls, a whole micro-batch %d", static, callsSplit, callsWhole)
		}
		for _, k := range []string{"loss", "grad_norm", "reward", "entropy"} {
			a, b := whole[k], split[k]
			if math.Abs(a-b) > 1e-5*math.Max(1, math.Abs(a)) {
				t.Errorf("static=%v %s: %v with whole micro-batches, %v with loss_rows 1", static, k, a, b)
			}
		}
		// AdamW divides each gradient by its own scale, so an entry whose
		// gradient is ~0 may move differently for a last-bit difference:
		// compare the whole update, |w_split − w_whole| / |w_whole − w_0|.
		var diff, moved float64
		for i := range wWhole {
			a, b := tensors.MustCopyFlatData[float32](wWhole[i]), tensors.MustCopyFlatData[float32](wSplit[i])
			for j := range a {
				diff += math.Pow(float64(a[j]-b[j]), 2)
				moved += math.Pow(float64(a[j]-initial[i][j]), 2)
			}
		}
		rel := math.Sqrt(diff / moved)
		if moved == 0 || rel > 1e-3 {
			t.Errorf("static=%v: the updates differ by %.2g of their size (moved %g)", static, rel, math.Sqrt(moved))
		}
		t.Logf("static=%v: %d loss calls → %d; loss %.6g / %.6g; updates differ by %.2g", static, callsWhole, callsSplit, whole["loss"], split["loss"], rel)
	}
}
