package qwen3

import (
	"math"

	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph"
)

// maskedScore is the score given to masked keys: finite, so a query that sees
// no key at all (a padding query) gets uniform weights instead of NaNs.
const maskedScore = -1e30

// projectQKV computes the rotated queries [B, T, nH, D] and keys, and the
// values [B, T, nKV, D], of normalized hidden states a [B, T, H].
func projectQKV(cfg Config, p layerParams, a, cos, sin *Node) (q, k, v *Node) {
	dims := a.Shape().Dimensions
	b, t := dims[0], dims[1]
	q = Reshape(p.linear(a, p.q, p.qBias), b, t, cfg.NumAttentionHeads, cfg.HeadDim)
	k = Reshape(p.linear(a, p.k, p.kBias), b, t, cfg.NumKeyValueHeads, cfg.HeadDim)
	v = Reshape(p.linear(a, p.v, p.vBias), b, t, cfg.NumKeyValueHeads, cfg.HeadDim)
	q = applyRoPE(rmsNorm(q, p.qNorm, cfg.RMSNormEps), cos, sin)
	k = applyRoPE(rmsNorm(k, p.kNorm, cfg.RMSNormEps), cos, sin)
	return q, k, v
}

// keyLayout is how a tensor of keys is laid out.
type keyLayout int

const (
	// keysByPosition is [B, nKV, S, D], as the keys are projected: each
	// key's D values are contiguous.
	keysByPosition keyLayout = iota
	// keysByDim is [B, nKV, D, S]: each dimension's S values are
	// contiguous. The generation's key cache is kept so on the pure-Go
	// backend with AVX-512 (Model.keysInCache): its matrix product packs
	// the right operand of q·kᵀ with vector code when that operand is
	// [D, S] but element by element when it is [S, D] (30 % of an
	// evaluation's CPU time); the AVX2 kernels are a little faster the
	// other way (BENCHMARKS.md, "Decode attention and the key layout").
	keysByDim
)

func (l keyLayout) String() string {
	if l == keysByDim {
		return "keys_by_dim"
	}
	return "keys_by_position"
}

// attend is causal grouped-query attention of queries q [B, T, nH, D] over
// keys k (laid out as layout says) and values v [B, nKV, S, D]; visible
// [B, T, S] (bool) says which keys each query may see. It returns
// [B, T, nH·D]. Scores and softmax are computed in float32; kn builds the
// products and the softmax.
func attend(cfg Config, kn kernels, q, k *Node, layout keyLayout, v, visible *Node) *Node {
	dims := q.Shape().Dimensions
	b, t := dims[0], dims[1]
	kvHeads, group, d := cfg.NumKeyValueHeads, cfg.NumAttentionHeads/cfg.NumKeyValueHeads, cfg.HeadDim
	s := v.Shape().Dimensions[2]
	keyDim := 3 // the contracted axis of k: D
	if layout == keysByDim {
		keyDim = 2
	}
	// Query head h reads kv head h / group (transformers' repeat_kv).
	q5 := TransposeAllAxes(Reshape(q, b, t, kvHeads, group, d), 0, 2, 3, 1, 4) // [B, nKV, G, T, D]
	scale := 1 / math.Sqrt(float64(d))
	if kn.scalesQueries(q) {
		q5, scale = MulScalar(q5, scale), 1
	}
	scores := kn.dot(q5, []int{4}, []int{0, 1}, k, []int{keyDim}, []int{0, 1}) // [B, nKV, G, T, S]
	scores = ConvertDType(scores, dtypes.Float32)
	if scale != 1 {
		scores = MulScalar(scores, scale)
	}
	mask := BroadcastToDims(Reshape(visible, b, 1, 1, t, s), b, kvHeads, group, t, s)
	scores = Where(mask, scores, FillScalar(q.Graph(), scores.Shape(), maskedScore))
	probs := ConvertDType(kn.softmax(scores), q.DType())
	out := kn.dot(probs, []int{4}, []int{0, 1}, v, []int{2}, []int{0, 1}) // [B, nKV, G, T, D]
	return Reshape(TransposeAllAxes(out, 0, 3, 1, 2, 4), b, t, cfg.NumAttentionHeads*d)
}

// causalVisibility is the mask of a full sequence: key s is visible to query
// t when s ≤ t and s is a real token. mask is [B, T] (any integer or bool).
func causalVisibility(mask *Node) *Node {
	dims := mask.Shape().Dimensions
	b, t := dims[0], dims[1]
	g := mask.Graph()
	query := Iota(g, shapesOf(dtypes.Int32, t, t), 0)
	key := Iota(g, shapesOf(dtypes.Int32, t, t), 1)
	causal := BroadcastToDims(Reshape(LessOrEqual(key, query), 1, t, t), b, t, t)
	real := BroadcastToDims(Reshape(isReal(mask), b, 1, t), b, t, t)
	return LogicalAnd(causal, real)
}

// isReal turns a mask of any type into bool.
func isReal(mask *Node) *Node {
	if mask.DType() == dtypes.Bool {
		return mask
	}
	return NotEqual(mask, ScalarZero(mask.Graph(), mask.DType()))
}
