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
	// The group's queries are the rows of one product per kv head (computed
	// of them: more when the backend wants more, productRows).
	computed := kn.productRows(q, b*kvHeads, group*t, s, d)
	product := func(x, y *Node, yContracting int) *Node { // x [B, nKV, G, T, ·] → [B, nKV, G, T, ·]
		if computed == group*t {
			return kn.dot(x, []int{4}, []int{0, 1}, y, []int{yContracting}, []int{0, 1})
		}
		x = GrowRight(Reshape(x, b, kvHeads, group*t, -1), 2, computed-group*t, 0)
		out := kn.dot(x, []int{3}, []int{0, 1}, y, []int{yContracting}, []int{0, 1})
		return Reshape(SliceAxis(out, 2, AxisRange(0, group*t)), b, kvHeads, group, t, -1)
	}
	scores := ConvertDType(product(q5, k, keyDim), dtypes.Float32) // [B, nKV, G, T, S]
	if scale != 1 {
		scores = MulScalar(scores, scale)
	}
	mask := BroadcastToDims(Reshape(visible, b, 1, 1, t, s), b, kvHeads, group, t, s)
	scores = Where(mask, scores, FillScalar(q.Graph(), scores.Shape(), maskedScore))
	probs := ConvertDType(kn.softmax(scores), q.DType())
	out := product(probs, v, 2) // [B, nKV, G, T, D]
	return Reshape(TransposeAllAxes(out, 0, 3, 1, 2, 4), b, t, cfg.NumAttentionHeads*d)
}

// minKernelRows is the fewest left-hand rows the pure-Go backend's SIMD
// matrix kernels (github.com/gomlx/compute v0.1.14, AVX2 and AVX-512)
// multiply with vector code: their small-product kernels take rows four at a
// time and the remaining ones one scalar multiply-add at a time.
const minKernelRows = 4

// smallProductMultiplyAdds is the size, in multiply-adds, below which that
// backend multiplies with its small-product kernels (its
// SmallMatMulSizeThreshold): with AVX-512, counting the whole batch of
// matrices; with AVX2, each matrix of the batch. Larger products pack their
// operands and take any number of rows.
const smallProductMultiplyAdds = 4 << 20

// forcedProductRows, when not 0, overrides productRows's choice: rows are
// padded to at least that many whatever the backend, never when −1 (tests
// and benchmarks compare both ways).
var forcedProductRows int

// productRows is how many rows attention's products compute per kv head
// for a batch of count products of rows queries over s keys of d
// dimensions: rows, or minKernelRows when there are fewer (a decode step
// has one query per head) and the pure-Go backend would multiply them one
// scalar at a time; the extra rows are zeros, their results dropped. A
// decode step's attention of the tiny base over 448 cached positions, 32
// sequences, takes half the time so (BENCHMARKS.md, "Decode
// attention, one query row"). Differentiated graphs keep their rows.
func (kn kernels) productRows(q *Node, count, rows, s, d int) int {
	if forcedProductRows != 0 {
		return max(rows, forcedProductRows) // −1: rows
	}
	if rows >= minKernelRows || kn.differentiated || !isGoBackend(q.Graph().Backend()) {
		return rows
	}
	switch {
	case goMatMulAVX512:
		if count*rows*s*d >= smallProductMultiplyAdds { // packed: any rows are fast
			return rows
		}
	case !goMatMulAVX2:
		return rows
	}
	return minKernelRows
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
