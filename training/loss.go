package training

import (
	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gosqlenv/gosqlenv/training/qwen3"
)

// LossConfig holds the compile-time constants of the GRPO loss.
type LossConfig struct {
	Epsilon, EpsilonHigh float64 // clipping range [1−ε, 1+ε_high]
	Beta                 float64 // KL coefficient (0: no reference model)
	Temperature          float64 // logits are divided by it, as when sampling
	// FreshOld uses the current log-probs (gradient stopped) as the old
	// policy's: num_iterations = 1, ρ = 1.
	FreshOld bool
}

// LossInputs are the per-micro-batch tensors of the GRPO loss, all [B, T]
// except Advantages [B].
type LossInputs struct {
	IDs, Mask, Positions *Node // tokens, attention mask (1 real), RoPE positions
	// Weights is each token's loss weight (see TokenWeights), 0 on tokens
	// that get no gradient. The weight of token t applies to predicting it
	// from tokens < t.
	Weights *Node
	// Advantages per sequence.
	Advantages *Node
	// OldLogp and RefLogp hold, at each weighted token, log p_old and
	// log p_ref of that token (ignored when FreshOld / Beta = 0).
	OldLogp, RefLogp *Node
	// SamplingLogp are the log-probs recorded when sampling (diagnostics).
	SamplingLogp *Node
}

// LossOutputs are the loss and the sums the trainer turns into metrics.
type LossOutputs struct {
	Loss *Node // Σ weight · token loss
	// Token sums over weighted tokens: count, entropy, KL, clipped low,
	// clipped high, |logp − sampling logp|.
	Tokens, Entropy, KL, ClipLow, ClipHigh, SamplingDiff *Node
}

// GRPOLoss builds the clipped surrogate objective of GRPO for one
// micro-batch: per token −min(ρ·A, clip(ρ, 1−ε, 1+ε_high)·A) with ρ =
// exp(logp − logp_old), plus β·(exp(ref−logp) − (ref−logp) − 1) when β > 0,
// weighted and summed.
func GRPOLoss(cfg qwen3.Config, weights []*Node, in LossInputs, lc LossConfig) LossOutputs {
	logp, entropy := qwen3.TokenLogProbs(cfg, weights, in.IDs, in.Mask, in.Positions, lc.Temperature) // [B, T−1]
	return tokenObjective(logp, entropy, in, lc)
}

// TreeLossInputs are GRPOLoss's inputs for a micro-batch packed as prefix
// trees (qwen3.TreeBatch): the model inputs are [R, N]; every other tensor
// is [R, K], one entry per scored token occurrence — the token Targets[r, k]
// predicted from node From[r, k], with its sequence's advantage. Identical
// tokens of several episodes are one node but several occurrences, each
// with its own advantage and weight.
type TreeLossInputs struct {
	IDs, Positions, SubtreeEnd *Node
	From, Targets              *Node
	Weights, Advantages        *Node
	OldLogp, RefLogp           *Node
	SamplingLogp               *Node
}

// GRPOTreeLoss is GRPOLoss over prefix-tree rows: the same objective, each
// shared prefix of the micro-batch's turn samples computed once.
func GRPOTreeLoss(cfg qwen3.Config, weights []*Node, in TreeLossInputs, lc LossConfig) LossOutputs {
	logp, entropy := qwen3.TreeTokenLogProbs(cfg, weights, in.IDs, in.Positions, in.SubtreeEnd, in.From, in.Targets, lc.Temperature)
	return objective(tokenTerms{logp: logp, entropy: entropy, weights: in.Weights, advantages: in.Advantages,
		old: in.OldLogp, ref: in.RefLogp, sampling: in.SamplingLogp}, lc)
}

// tokenObjective is GRPOLoss after the model: logp and entropy [B, T−1] are
// those of tokens 1…T−1.
func tokenObjective(logp, entropy *Node, in LossInputs, lc LossConfig) LossOutputs {
	t := in.Weights.Shape().Dimensions[1]
	next := func(x *Node) *Node { return SliceAxis(x, 1, AxisRange(1, t)) } // values of the predicted tokens
	terms := tokenTerms{logp: logp, entropy: entropy, weights: next(in.Weights),
		advantages: BroadcastToShape(ExpandAxes(in.Advantages, -1), logp.Shape()), sampling: next(in.SamplingLogp)}
	if !lc.FreshOld {
		terms.old = next(in.OldLogp)
	}
	if lc.Beta > 0 {
		terms.ref = next(in.RefLogp)
	}
	return objective(terms, lc)
}

// tokenTerms are the per-token quantities of the objective, all of one
// shape: the current log-probs and entropies, each token's loss weight
// (0: no gradient) and advantage, and the old, reference and sampling
// log-probs (old unused with FreshOld, ref with Beta = 0).
type tokenTerms struct {
	logp, entropy, weights, advantages, old, ref, sampling *Node
}

// objective is the clipped surrogate of GRPOLoss over token terms.
func objective(in tokenTerms, lc LossConfig) LossOutputs {
	logp, w, adv := in.logp, in.weights, in.advantages
	active := ConvertDType(GreaterThan(w, ZerosLike(w)), dtypes.Float32)
	old := StopGradient(logp)
	if !lc.FreshOld {
		old = in.old
	}
	ratio := Exp(Sub(logp, old))
	epsHigh := lc.EpsilonHigh
	if epsHigh <= 0 {
		epsHigh = lc.Epsilon
	}
	clipped := ClipScalar(ratio, 1-lc.Epsilon, 1+epsHigh)
	tokenLoss := Neg(Min(Mul(ratio, adv), Mul(clipped, adv)))
	out := LossOutputs{}
	zero := ScalarZero(logp.Graph(), dtypes.Float32)
	kl := zero
	if lc.Beta > 0 {
		d := Sub(in.ref, logp)
		perToken := Sub(Sub(Exp(d), d), OnesLike(d))
		tokenLoss = Add(tokenLoss, MulScalar(perToken, lc.Beta))
		kl = ReduceAllSum(Mul(perToken, active))
	}
	out.Loss = ReduceAllSum(Mul(tokenLoss, w))
	sum := func(x *Node) *Node { return ReduceAllSum(Mul(ConvertDType(x, dtypes.Float32), active)) }
	out.Tokens = ReduceAllSum(active)
	out.Entropy = sum(in.entropy)
	out.KL = kl
	out.ClipLow = sum(LogicalAnd(LessThan(ratio, Scalar(ratio.Graph(), dtypes.Float32, 1-lc.Epsilon)), LessThan(adv, ZerosLike(adv))))
	out.ClipHigh = sum(LogicalAnd(GreaterThan(ratio, Scalar(ratio.Graph(), dtypes.Float32, 1+epsHigh)), GreaterThan(adv, ZerosLike(adv))))
	out.SamplingDiff = sum(Abs(Sub(logp, in.sampling)))
	return out
}
