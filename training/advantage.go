package training

import (
	"fmt"
	"math"
)

// Loss types (TRL's loss_type): how per-token losses are summed into one
// number. All are weighted sums of token losses; the weights differ.
const (
	// LossGRPO averages tokens within each episode, then episodes.
	LossGRPO = "grpo"
	// LossBNPO averages over the tokens of each micro-batch.
	LossBNPO = "bnpo"
	// LossDrGRPO divides the token sum by episodes × max completion length.
	LossDrGRPO = "dr_grpo"
	// LossDAPO divides the token sum by the tokens of the whole accumulated batch.
	LossDAPO = "dapo"
)

// Reward scaling modes (TRL's scale_rewards).
const (
	ScaleGroup = "group" // divide by the group's standard deviation
	ScaleBatch = "batch" // divide by the batch's standard deviation
	ScaleNone  = "none"  // only subtract the group mean
)

// Advantages computes GRPO's group-relative advantages: each reward minus
// its group's mean, divided (scale) by the group's or the batch's standard
// deviation (unbiased, as torch.std) plus 1e-4. A group whose standard
// deviation is 0, or below minStd, carries no learning signal: its
// advantages are 0 (with minStd > 0 this keeps reward noise, such as small
// operational differences between failed episodes, from being scaled up
// into full-size advantages). It also returns the fraction of episodes in
// such groups (TRL's frac_reward_zero_std).
func Advantages(rewards []float64, groups []int, scale string, minStd float64) (adv []float64, fracZeroStd float64, err error) {
	if len(groups) != len(rewards) {
		return nil, 0, fmt.Errorf("advantages: %d rewards but %d group ids", len(rewards), len(groups))
	}
	sum, sq, n := map[int]float64{}, map[int]float64{}, map[int]int{}
	for i, r := range rewards {
		sum[groups[i]] += r
		n[groups[i]]++
	}
	for i, r := range rewards {
		d := r - sum[groups[i]]/float64(n[groups[i]])
		sq[groups[i]] += d * d
	}
	std := func(sqSum float64, count int) float64 {
		if count < 2 {
			return 0
		}
		return math.Sqrt(sqSum / float64(count-1))
	}
	batchStd := std(variance(rewards)*float64(len(rewards)-1), len(rewards))
	adv = make([]float64, len(rewards))
	zero := 0
	for i, r := range rewards {
		g := groups[i]
		gstd := std(sq[g], n[g])
		if gstd == 0 || gstd < minStd {
			zero++
			continue // adv[i] = 0: no signal in this group
		}
		a := r - sum[g]/float64(n[g])
		switch scale {
		case ScaleGroup, "":
			a /= gstd + 1e-4
		case ScaleBatch:
			a /= batchStd + 1e-4
		case ScaleNone:
		default:
			return nil, 0, fmt.Errorf("advantages: unknown scale_rewards %q (group, batch or none)", scale)
		}
		adv[i] = a
	}
	if len(rewards) > 0 {
		fracZeroStd = float64(zero) / float64(len(rewards))
	}
	return adv, fracZeroStd, nil
}

// TokenWeights gives each loss token its weight for lossType, so that the
// sum over all micro-batches of Σ weight·token_loss is the loss of the whole
// accumulated batch. samples are grouped into micro-batches by microOf;
// episodes is the number of episodes and maxCompletion TRL's
// max_completion_length (dr_grpo).
func TokenWeights(samples []Sample, microOf []int, episodes, maxCompletion int, lossType string) ([][]float32, error) {
	total := 0
	perEpisode := map[int]int{}
	perMicro := map[int]int{}
	micros := 0
	for i, s := range samples {
		for _, m := range s.Mask {
			if m != 0 {
				total++
				perEpisode[s.Episode]++
				perMicro[microOf[i]]++
			}
		}
		micros = max(micros, microOf[i]+1)
	}
	weights := make([][]float32, len(samples))
	for i, s := range samples {
		var w float64
		switch lossType {
		case LossDAPO:
			w = 1 / float64(max(total, 1))
		case LossBNPO:
			w = 1 / float64(max(perMicro[microOf[i]], 1)*micros)
		case LossGRPO:
			w = 1 / float64(max(perEpisode[s.Episode], 1)*max(episodes, 1))
		case LossDrGRPO:
			w = 1 / float64(max(episodes, 1)*max(maxCompletion, 1))
		default:
			return nil, fmt.Errorf("unknown loss_type %q (grpo, bnpo, dr_grpo or dapo)", lossType)
		}
		weights[i] = make([]float32, len(s.Mask))
		for t, m := range s.Mask {
			if m != 0 {
				weights[i][t] = float32(w)
			}
		}
	}
	return weights, nil
}
