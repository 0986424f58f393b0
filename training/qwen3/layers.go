package qwen3

import (
	"math"
	"strconv"

	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph"
)

// params binds the flat list of weight nodes (Config.Weights order) to the
// model's structure.
type params struct {
	kernels
	embed  *Node // [V, H]
	layers []layerParams
	norm   *Node // [H]
	lmHead *Node // [V, H]; the embedding when tied
}

type layerParams struct {
	kernels
	inputNorm, postNorm *Node // [H]
	q, k, v, o          *Node // [out, in]
	qBias, kBias, vBias *Node // nil without attention_bias
	oBias               *Node
	qNorm, kNorm        *Node // [D]
	gate, up, down      *Node // [F, H], [F, H], [H, F]
}

// bindParams maps nodes, given in cfg.Weights() order, to their roles; kn
// says how the graph builds its products and softmax.
func bindParams(cfg Config, nodes []*Node, kn kernels) params {
	byName := make(map[string]*Node, len(nodes))
	for i, w := range cfg.Weights() {
		byName[w.Name] = nodes[i]
	}
	p := params{kernels: kn, embed: byName["model.embed_tokens.weight"], norm: byName["model.norm.weight"]}
	p.lmHead = p.embed
	if !cfg.TieWordEmbeddings {
		p.lmHead = byName["lm_head.weight"]
	}
	for l := 0; l < cfg.NumHiddenLayers; l++ {
		get := func(suffix string) *Node { return byName[layerPrefix(l)+suffix] }
		p.layers = append(p.layers, layerParams{kernels: kn,
			inputNorm: get("input_layernorm.weight"), postNorm: get("post_attention_layernorm.weight"),
			q: get("self_attn.q_proj.weight"), k: get("self_attn.k_proj.weight"),
			v: get("self_attn.v_proj.weight"), o: get("self_attn.o_proj.weight"),
			qBias: get("self_attn.q_proj.bias"), kBias: get("self_attn.k_proj.bias"),
			vBias: get("self_attn.v_proj.bias"), oBias: get("self_attn.o_proj.bias"),
			qNorm: get("self_attn.q_norm.weight"), kNorm: get("self_attn.k_norm.weight"),
			gate: get("mlp.gate_proj.weight"), up: get("mlp.up_proj.weight"), down: get("mlp.down_proj.weight"),
		})
	}
	return p
}

func layerPrefix(l int) string { return "model.layers." + strconv.Itoa(l) + "." }

// linear applies a PyTorch-layout projection: x [..., in] · wᵀ [in, out] (+ b).
func (kn kernels) linear(x, w, b *Node) *Node {
	rank := x.Rank()
	// Contract the last axis of x with axis 1 of w.
	out := kn.dot(x, []int{rank - 1}, nil, w, []int{1}, nil)
	if b != nil {
		out = Add(out, ExpandLeftToRank(b, out.Rank()))
	}
	return out
}

// rmsNorm is Qwen3RMSNorm: x / sqrt(mean(x², last axis) + eps) · weight. The
// statistics are computed in float32, as transformers does, and the result is
// cast back to x's dtype before the weight is applied.
func rmsNorm(x, weight *Node, eps float64) *Node {
	dtype := x.DType()
	x32 := ConvertDType(x, dtypes.Float32)
	variance := ReduceAndKeep(Square(x32), ReduceMean, -1)
	// Rsqrt has no gradient in GoMLX; x / sqrt(·) does the same.
	normed := Div(x32, Sqrt(AddScalar(variance, eps)))
	return Mul(ExpandLeftToRank(weight, x.Rank()), ConvertDType(normed, dtype))
}

// ropeCosSin returns cos and sin [B, T, 1, D] for positions [B, T] (int32),
// in the half-split layout of transformers' rotate_half.
func ropeCosSin(positions *Node, headDim int, theta float64, dtype dtypes.DType) (cos, sin *Node) {
	g := positions.Graph()
	half := headDim / 2
	invFreq := make([]float32, half)
	for i := range invFreq {
		invFreq[i] = float32(1 / math.Pow(theta, float64(2*i)/float64(headDim)))
	}
	freq := Reshape(Const(g, invFreq), 1, 1, half)                               // [1, 1, D/2]
	angles := Mul(ExpandAxes(ConvertDType(positions, dtypes.Float32), -1), freq) // [B, T, D/2]
	angles = Concatenate([]*Node{angles, angles}, -1)                            // [B, T, D]
	cos = ConvertDType(ExpandAxes(Cos(angles), 2), dtype)                        // [B, T, 1, D]
	sin = ConvertDType(ExpandAxes(Sin(angles), 2), dtype)
	return cos, sin
}

// applyRoPE rotates x [B, T, heads, D]: x·cos + rotate_half(x)·sin. cos and
// sin are broadcast over the heads first: the pure-Go backend multiplies
// operands broadcast along a middle axis element by element, and equal
// shapes with vector code. (The broadcast adds the heads axis, so that the
// backend does not fold it back into the products; the broadcasts of a
// graph are computed once, as the backend merges identical nodes.)
func applyRoPE(x, cos, sin *Node) *Node {
	dims := x.Shape().Dimensions
	overHeads := func(c *Node) *Node {
		return ExpandAndBroadcast(Squeeze(c, 2), dims, []int{2})
	}
	cos, sin = overHeads(cos), overHeads(sin)
	d := dims[x.Rank()-1]
	x1 := SliceAxis(x, -1, AxisRange(0, d/2))
	x2 := SliceAxis(x, -1, AxisRange(d/2, d))
	rotated := Concatenate([]*Node{Neg(x2), x1}, -1)
	return Add(Mul(x, cos), Mul(rotated, sin))
}

// mlp is the SwiGLU feed-forward block: down(silu(gate(x)) ⊙ up(x)).
func mlp(x *Node, p layerParams) *Node {
	gate := p.linear(x, p.gate, nil)
	return p.linear(Mul(Mul(gate, Sigmoid(gate)), p.linear(x, p.up, nil)), p.down, nil)
}
