package qwen3

import (
	"slices"

	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/compute/support/xslices"

	. "github.com/gomlx/gomlx/core/graph"
)

// Matrix products whose gradients the pure-Go backend computes without
// generic transposes.
//
// GoMLX differentiates out = DotGeneral(lhs, rhs) with two products whose
// left operand is the incoming gradient v ([batch, lhs cross, rhs cross]).
// For the gradient of rhs, v is contracted over its lhs-cross axes, which
// are not its last, and the pure-Go backend (github.com/gomlx/compute
// v0.1.14) multiplies only operands whose left side contracts its trailing
// axes: it then transposes both operands element by element — in attention,
// the score gradient and the probabilities, B·H·T·T floats each, a third of
// a training step's CPU time (BENCHMARKS.md, "The backward pass without
// generic transposes"). rhsGradient computes the same gradient from operands laid
// out for the backend's matrix kernels, transposing only the smaller of v
// and lhs (and the result, where rhs is laid out the other way), with the
// backend's fast transposes (see transposeAxes).

// productWithLaidOutGradient is DotGeneral (same arguments) whose gradient
// with respect to rhs is rhsGradient's (see customGradient).
func productWithLaidOutGradient(lhs *Node, lhsContracting, lhsBatch []int, rhs *Node, rhsContracting, rhsBatch []int) *Node {
	rhsShape := rhs.Shape()
	return customGradient(rhs, func(rhs *Node) *Node {
		return DotGeneral(lhs, lhsContracting, lhsBatch, rhs, rhsContracting, rhsBatch)
	}, func(_, dOut *Node) *Node {
		return rhsGradient(dOut, lhs, lhsContracting, lhsBatch, rhsShape, rhsContracting, rhsBatch)
	})
}

// rhsGradient is the gradient with respect to rhs (of shape rhsShape) of
// DotGeneral(lhs, lhsContracting, lhsBatch, rhs, rhsContracting, rhsBatch),
// given the gradient v of its output. It sums over the lhs-cross axes with
// one of two products, whichever transposes fewer floats:
//
//   - lhsᵀ [batch, contracting, lhs cross] · v [batch, lhs cross, rhs cross]:
//     lhs is transposed, v is the right operand as it is;
//   - vᵀ [batch, rhs cross, lhs cross] · lhs [batch, lhs cross, contracting]:
//     v is transposed, lhs is the right operand as it is.
//
// Either result is then put in rhs's axis order (a transpose unless rhs is
// laid out as that product's output).
func rhsGradient(v, lhs *Node, lhsContracting, lhsBatch []int, rhsShape shapes.Shape, rhsContracting, rhsBatch []int) *Node {
	rhsRank, rhsSize := rhsShape.Rank(), rhsShape.Size()
	nBatch, nContracting := len(lhsBatch), len(lhsContracting)
	lhsCross := crossAxes(lhs.Rank(), lhsContracting, lhsBatch)
	rhsCross := crossAxes(rhsRank, rhsContracting, rhsBatch)
	nLhsCross, nRhsCross := len(lhsCross), len(rhsCross)
	batch := xslices.Iota(0, nBatch)

	// Plan 1: lhsᵀ · v → [batch, contracting (lhsContracting's order), rhs cross].
	lhsT := slices.Concat(lhsBatch, lhsContracting, lhsCross)
	toRHS1 := make([]int, rhsRank) // rhs axis → the product's axis that becomes it
	// Plan 2: vᵀ · lhs → [batch, rhs cross, lhs's contracting axes in lhs's order].
	vT := slices.Concat(batch, xslices.Iota(nBatch+nLhsCross, nRhsCross), xslices.Iota(nBatch, nLhsCross))
	toRHS2 := make([]int, rhsRank)
	lhsRest := slices.Sorted(slices.Values(lhsContracting)) // lhs's axes left in plan 2's output, in order
	for i, axis := range rhsBatch {
		toRHS1[axis], toRHS2[axis] = i, i
	}
	for i, axis := range rhsContracting {
		toRHS1[axis] = nBatch + i
		toRHS2[axis] = nBatch + nRhsCross + slices.Index(lhsRest, lhsContracting[i])
	}
	for j, axis := range rhsCross {
		toRHS1[axis] = nBatch + nContracting + j
		toRHS2[axis] = nBatch + j
	}
	// Plan 2's right operand is lhs contracted over its cross axes: the
	// backend takes it as it is when those axes follow the batch axes or
	// end it (lhs laid out [batch, cross, contracting], as every product's
	// left operand here is).
	lhsAsRHS := isIdentity(slices.Concat(lhsBatch, lhsCross, lhsContracting)) || isIdentity(slices.Concat(lhsBatch, lhsContracting, lhsCross))

	cost1 := movedIf(!isIdentity(lhsT), lhs.Shape().Size()) + movedIf(!isIdentity(toRHS1), rhsSize)
	cost2 := movedIf(!isIdentity(vT), v.Shape().Size()) + movedIf(!isIdentity(toRHS2), rhsSize) +
		movedIf(!lhsAsRHS, lhs.Shape().Size())
	var grad *Node
	var toRHS []int
	if cost1 <= cost2 {
		grad = DotGeneral(transposeAxes(lhs, lhsT), xslices.Iota(nBatch+nContracting, nLhsCross), batch,
			v, xslices.Iota(nBatch, nLhsCross), batch)
		toRHS = toRHS1
	} else {
		grad = DotGeneral(transposeAxes(v, vT), xslices.Iota(nBatch+nRhsCross, nLhsCross), batch,
			lhs, lhsCross, lhsBatch)
		toRHS = toRHS2
	}
	return transposeAxes(grad, toRHS)
}

// transposeAxes is TransposeAllAxes(x, perm...) done with the pure-Go
// backend's fast transposes where perm, once adjacent axes that stay
// together are merged, swaps the last two groups of axes after a leading
// group that stays: [N, A, C] → [N, C, A] (a 2-D transpose when N is 1).
// The backend moves that with its element-by-element iterator; here it is
// a tiled 2-D transpose of [N·A, C] followed by a copy of rows of A floats
// ([C, N, A] → [N, C, A]), both of which the backend parallelises.
func transposeAxes(x *Node, perm []int) *Node {
	if isIdentity(perm) {
		return x
	}
	dims := x.Shape().Dimensions
	// Groups of axes that stay adjacent and in order.
	var groups [][]int
	for _, axis := range perm {
		if n := len(groups); n > 0 && groups[n-1][len(groups[n-1])-1]+1 == axis {
			groups[n-1] = append(groups[n-1], axis)
			continue
		}
		groups = append(groups, []int{axis})
	}
	size := func(axes []int) int {
		s := 1
		for _, a := range axes {
			s *= dims[a]
		}
		return s
	}
	outDims := make([]int, len(perm))
	for i, axis := range perm {
		outDims[i] = dims[axis]
	}
	switch {
	case len(groups) == 2 && groups[0][0] > groups[1][0]: // [A, C] → [C, A]
		a, c := size(groups[1]), size(groups[0])
		return Reshape(TransposeAllAxes(Reshape(x, a, c), 1, 0), outDims...)
	case len(groups) == 3 && groups[0][0] == 0 && groups[1][0] > groups[2][0]: // [N, A, C] → [N, C, A]
		n, a, c := size(groups[0]), size(groups[2]), size(groups[1])
		ct := Reshape(TransposeAllAxes(Reshape(x, n*a, c), 1, 0), c, n, a)
		return Reshape(TransposeAllAxes(ct, 1, 0, 2), outDims...)
	}
	return TransposeAllAxes(x, perm...)
}

// crossAxes are the axes of a rank-rank operand that are neither
// contracted nor batch axes, in order.
func crossAxes(rank int, contracting, batch []int) []int {
	var cross []int
	for axis := range rank {
		if !slices.Contains(contracting, axis) && !slices.Contains(batch, axis) {
			cross = append(cross, axis)
		}
	}
	return cross
}

// isIdentity says whether perm leaves every axis in place.
func isIdentity(perm []int) bool {
	for i, p := range perm {
		if p != i {
			return false
		}
	}
	return true
}

// movedIf is the floats a transpose of size floats moves: size if it
// moves them at all.
func movedIf(moved bool, size int) int {
	if moved {
		return size
	}
	return 0
}
