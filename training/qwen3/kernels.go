package qwen3

import (
	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph"
)

// kernels is how a graph builds the model's matrix products and softmax.
type kernels struct {
	// differentiated says the graph is differentiated: on the pure-Go
	// backend its products then compute the gradient of their right
	// operand with rhsGradient (product.go), and its softmax the gradient
	// of its input in closed form (softmax). Graphs that are not
	// differentiated (generation) leave it false: the identity that
	// carries a product's gradient copies a weight each time the graph
	// runs.
	differentiated bool
}

// dot is DotGeneral (same arguments) that computes half-precision products
// in float32 where halfProductsInFloat32 says so, with laid-out gradients
// where kernels.differentiated says so.
func (kn kernels) dot(lhs *Node, lhsContracting, lhsBatch []int, rhs *Node, rhsContracting, rhsBatch []int) *Node {
	if !isGoBackend(lhs.Graph().Backend()) {
		return DotGeneral(lhs, lhsContracting, lhsBatch, rhs, rhsContracting, rhsBatch)
	}
	dtype := lhs.DType()
	if isHalf(dtype) { // halfProductsInFloat32 holds on this backend
		lhs, rhs = ConvertDType(lhs, dtypes.Float32), ConvertDType(rhs, dtypes.Float32)
	}
	var out *Node
	if kn.differentiated {
		out = productWithLaidOutGradient(lhs, lhsContracting, lhsBatch, rhs, rhsContracting, rhsBatch)
	} else {
		out = DotGeneral(lhs, lhsContracting, lhsBatch, rhs, rhsContracting, rhsBatch)
	}
	return ConvertDType(out, dtype)
}

// scalesQueries says whether attention scales its queries (float32 on the
// pure-Go backend) by 1/√D rather than its scores: the same up to float32
// rounding, in T·D rather than T·S multiplications, forward and backward.
// Elsewhere the scores are scaled, as transformers does: XLA fuses the
// scaling into the product, and a half-precision query would be rounded
// once more.
func (kernels) scalesQueries(q *Node) bool {
	return q.DType() == dtypes.Float32 && isGoBackend(q.Graph().Backend())
}

// softmax is Softmax over the last axis. Differentiated on the pure-Go
// backend, its gradient is computed in closed form from the output y and
// the gradient dy arriving there, dx = y ⊙ (dy − Σ dy ⊙ y): four passes
// over the scores. GoMLX's own gradient of its fused softmax goes through
// the unfused formula (max, exponentials, sums and quotients computed
// again for their gradients), about three times as many passes over
// attention's [B, heads, T, T] scores.
func (kn kernels) softmax(x *Node) *Node {
	if !kn.differentiated || !isGoBackend(x.Graph().Backend()) {
		return Softmax(x, -1)
	}
	return customGradient(x, func(x *Node) *Node { return Softmax(x, -1) }, func(y, dy *Node) *Node {
		return Mul(y, Sub(dy, ReduceAndKeep(Mul(dy, y), ReduceSum, -1)))
	})
}

// customGradient returns f(x), whose gradient with respect to x is
// grad(y, dy) — y the output, dy the gradient arriving there — instead of
// the gradient autodiff derives through f. GoMLX offers a custom gradient
// only for an identity, so it takes two: one on the output records dy,
// one on x returns grad(y, dy) in place of the derived gradient. Reverse-
// mode autodiff visits the output's identity first (it visits nodes from
// the last created), and the backend never executes the derived gradient,
// which no output uses any more.
func customGradient(x *Node, f func(x *Node) *Node, grad func(y, dy *Node) *Node) *Node {
	var y, dy *Node
	in := IdentityWithCustomGradient(x, func(_, derived *Node) *Node {
		if dy == nil {
			return derived
		}
		return grad(y, dy)
	})
	y = IdentityWithCustomGradient(f(in), func(_, v *Node) *Node {
		dy = v
		return v
	})
	return y
}
