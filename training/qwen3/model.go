package qwen3

import (
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph"
)

func shapesOf(dtype dtypes.DType, dims ...int) shapes.Shape { return shapes.Make(dtype, dims...) }

// decoderLayer applies one transformer block to h [B, T, H] with the keys and
// values of this layer's attention given by kvFn, which receives the block's
// own new keys and values [B, T, nKV, D] and returns what to attend over
// (values [B, nKV, S, D], keys laid out as layout says) with its
// visibility [B, T, S].
func decoderLayer(cfg Config, p layerParams, h, cos, sin *Node, layout keyLayout, kvFn func(k, v *Node) (keys, values, visible *Node)) *Node {
	q, k, v := projectQKV(cfg, p, rmsNorm(h, p.inputNorm, cfg.RMSNormEps), cos, sin)
	keys, values, visible := kvFn(k, v)
	h = Add(h, p.linear(attend(cfg, p.kernels, q, keys, layout, values, visible), p.o, p.oBias))
	return Add(h, mlp(rmsNorm(h, p.postNorm, cfg.RMSNormEps), p))
}

// hiddenStates runs the decoder over full sequences: ids, positions and mask
// are [B, T]; it returns the final-normed hidden states [B, T, H].
func hiddenStates(cfg Config, p params, ids, positions, mask *Node) *Node {
	return decoderStack(cfg, p, ids, positions, causalVisibility(mask))
}

// decoderStack runs the decoder over ids and positions [B, T] where query t
// sees key s when visible[b, t, s] ([B, T, T] bool); it returns the
// final-normed hidden states [B, T, H].
func decoderStack(cfg Config, p params, ids, positions, visible *Node) *Node {
	h := embed(p, ids)
	cos, sin := ropeCosSin(positions, cfg.HeadDim, cfg.RopeTheta, h.DType())
	for _, lp := range p.layers {
		h = decoderLayer(cfg, lp, h, cos, sin, keysByPosition, func(k, v *Node) (*Node, *Node, *Node) {
			return TransposeAllAxes(k, 0, 2, 1, 3), TransposeAllAxes(v, 0, 2, 1, 3), visible
		})
	}
	return rmsNorm(h, p.norm, cfg.RMSNormEps)
}

// embed looks up token embeddings: ids [B, T] → [B, T, H].
func embed(p params, ids *Node) *Node {
	return Gather(p.embed, ExpandAxes(ConvertDType(ids, dtypes.Int32), -1))
}

// logitsOf projects hidden states [..., H] to float32 logits [..., V].
func logitsOf(p params, h *Node) *Node {
	return ConvertDType(p.linear(h, p.lmHead, nil), dtypes.Float32)
}

// TokenLogProbs is the building block of policy-gradient losses: for token
// sequences ids [B, T] with mask [B, T] and positions [B, T], it returns the
// log-probability of each next token, logp[b, t] = log p(ids[b, t+1] |
// ids[b, ≤t]), and the entropy of each next-token distribution, both
// [B, T−1] float32, computed from logits divided by temperature (1 when ≤ 0).
// weights are the model's weight nodes in Config.Weights order; gradients flow
// to them. Positions where mask[b, t+1] is 0 hold meaningless values: mask
// them in the loss.
func TokenLogProbs(cfg Config, weights []*Node, ids, mask, positions *Node, temperature float64) (logp, entropy *Node) {
	p := bindParams(cfg, weights, kernels{differentiated: true})
	h := hiddenStates(cfg, p, ids, positions, mask)
	t := h.Shape().Dimensions[1]
	logits := logitsOf(p, SliceAxis(h, 1, AxisRange(0, t-1))) // [B, T-1, V]
	if temperature > 0 && temperature != 1 {
		logits = DivScalar(logits, temperature)
	}
	logSoftmax := LogSoftmax(logits, -1)
	targets := SliceAxis(ids, 1, AxisRange(1, t))
	logp = pick(logSoftmax, targets)
	entropy = Neg(ReduceSum(Mul(Exp(logSoftmax), logSoftmax), -1))
	return logp, entropy
}

// pick gathers x[..., idx] along the last axis: x [B, T, V], idx [B, T] → [B, T].
func pick(x, idx *Node) *Node {
	v := x.Shape().Dimensions[x.Rank()-1]
	onehot := OneHot(ConvertDType(idx, dtypes.Int32), v, x.DType())
	return ReduceSum(Mul(x, onehot), -1)
}

// Logits returns the float32 logits [B, T, V] of full sequences (graph
// function; see Model.Logits for the executor).
func Logits(cfg Config, weights []*Node, ids, mask, positions *Node) *Node {
	p := bindParams(cfg, weights, kernels{})
	return logitsOf(p, hiddenStates(cfg, p, ids, positions, mask))
}
