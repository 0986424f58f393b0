package qwen3

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
)

// productCase is a DotGeneral whose gradients are checked.
type productCase struct {
	name                     string
	lhsDims                  []int
	lhsContracting, lhsBatch []int
	rhsDims                  []int
	rhsContracting, rhsBatch []int
	wantPlan                 string // "lhsT" or "vT": which operand rhsGradient transposes
}

// productCases are the model's products (linear layers and attention, with
// grouped queries and both key layouts) and products laid out otherwise:
// several contracting and batch axes, batch axes that are not leading, a
// left operand laid out for no kernel. (Contracting axes out of order are
// left out: GoMLX v0.28.16's own gradient of the left operand has the
// wrong shape there.)
var productCases = []productCase{
	{"linear", []int{3, 5, 8}, []int{2}, nil, []int{6, 8}, []int{1}, nil, "vT"},
	{"linear_wide_out", []int{3, 5, 4}, []int{2}, nil, []int{40, 4}, []int{1}, nil, "lhsT"},
	{"scores_by_position", []int{2, 2, 3, 7, 4}, []int{4}, []int{0, 1}, []int{2, 2, 9, 4}, []int{3}, []int{0, 1}, "lhsT"},
	{"scores_by_dim", []int{2, 2, 3, 7, 4}, []int{4}, []int{0, 1}, []int{2, 2, 4, 9}, []int{2}, []int{0, 1}, "lhsT"},
	{"attention_out", []int{2, 2, 3, 7, 9}, []int{4}, []int{0, 1}, []int{2, 2, 9, 4}, []int{2}, []int{0, 1}, "vT"},
	{"two_contracting", []int{2, 3, 4, 5}, []int{2, 3}, []int{0}, []int{2, 4, 6, 5}, []int{1, 3}, []int{0}, ""},
	{"batch_not_leading", []int{5, 2, 4}, []int{2}, []int{1}, []int{4, 2, 3}, []int{0}, []int{1}, ""},
	{"lhs_contracting_first", []int{4, 5}, []int{0}, nil, []int{4, 6}, []int{0}, nil, ""},
	{"two_cross_axes", []int{2, 3, 4, 5}, []int{3}, []int{0}, []int{2, 5, 6, 2}, []int{1}, []int{0}, ""},
}

// TestProductGradientsMatchAutodiff: the gradients of a product built with
// productWithLaidOutGradient equal GoMLX's own (DotGeneral's derived
// gradient) within float32 rounding, for both operands, with a gradient
// arriving from two uses of the output.
func TestProductGradientsMatchAutodiff(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	random := func(dims []int) *tensors.Tensor {
		x := tensors.FromShape(shapesOf(dtypes.Float32, dims...))
		tensors.MutableFlatData(x, func(flat []float32) {
			for i := range flat {
				flat[i] = float32(rng.NormFloat64())
			}
		})
		return x
	}
	for _, c := range productCases {
		t.Run(c.name, func(t *testing.T) {
			lhs, rhs := random(c.lhsDims), random(c.rhsDims)
			grads := func(laidOut bool) (dl, dr []float32) {
				out := MustExecOnceN(testBackend, func(l, r *Node) []*Node {
					var y *Node
					if laidOut {
						y = productWithLaidOutGradient(l, c.lhsContracting, c.lhsBatch, r, c.rhsContracting, c.rhsBatch)
					} else {
						y = DotGeneral(l, c.lhsContracting, c.lhsBatch, r, c.rhsContracting, c.rhsBatch)
					}
					// A loss that weighs every output differently, reached twice.
					w := Sin(IotaFull(l.Graph(), y.Shape()))
					loss := Add(ReduceAllSum(Mul(y, w)), ReduceAllSum(Square(y)))
					return Gradient(loss, l, r)
				}, lhs, rhs)
				return tensors.MustCopyFlatData[float32](out[0]), tensors.MustCopyFlatData[float32](out[1])
			}
			wantL, wantR := grads(false)
			gotL, gotR := grads(true)
			closeSlices(t, "lhs gradient", gotL, wantL)
			closeSlices(t, "rhs gradient", gotR, wantR)
		})
	}
}

// closeSlices fails t where got and want differ by more than float32
// rounding of sums of a few dozen terms.
func closeSlices(t *testing.T, what string, got, want []float32) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	for i := range got {
		if d := math.Abs(float64(got[i] - want[i])); d > 1e-5*(1+math.Abs(float64(want[i]))) {
			t.Fatalf("%s[%d] = %g, want %g", what, i, got[i], want[i])
		}
	}
}

// TestRHSGradientTransposesTheSmallerOperand: rhsGradient picks the plan
// that moves fewer floats (the score gradient and the probabilities of
// attention are never transposed).
func TestRHSGradientTransposesTheSmallerOperand(t *testing.T) {
	for _, c := range productCases {
		if c.wantPlan == "" {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			g := NewGraph(testBackend, c.name)
			defer g.Finalize()
			lhs := Zeros(g, shapesOf(dtypes.Float32, c.lhsDims...))
			rhs := Zeros(g, shapesOf(dtypes.Float32, c.rhsDims...))
			out := DotGeneral(lhs, c.lhsContracting, c.lhsBatch, rhs, c.rhsContracting, c.rhsBatch)
			v := Zeros(g, out.Shape())
			before := len(g.Nodes())
			grad := rhsGradient(v, lhs, c.lhsContracting, c.lhsBatch, rhs.Shape(), c.rhsContracting, c.rhsBatch)
			if !grad.Shape().Equal(rhs.Shape()) {
				t.Fatalf("gradient shape %s, want %s", grad.Shape(), rhs.Shape())
			}
			var moved []string
			for _, n := range g.Nodes()[before:] {
				if n.Type() != NodeTypeTranspose {
					continue
				}
				switch n.Inputs()[0].Shape().Size() {
				case v.Shape().Size():
					moved = append(moved, "vT")
				case lhs.Shape().Size():
					moved = append(moved, "lhsT")
				}
			}
			if !slices.Contains(moved, c.wantPlan) {
				t.Errorf("transposed %v, want %s", moved, c.wantPlan)
			}
		})
	}
}

// TestTransposeAxesEqualsTransposeAllAxes: transposeAxes moves every value
// where TransposeAllAxes does, for every permutation of ranks 1 to 5 (with
// axes of size 1 among them).
func TestTransposeAxesEqualsTransposeAllAxes(t *testing.T) {
	for rank := 1; rank <= 5; rank++ {
		dims := []int{3, 1, 4, 2, 5}[:rank]
		x := tensors.FromShape(shapesOf(dtypes.Float32, dims...))
		tensors.MutableFlatData(x, func(flat []float32) {
			for i := range flat {
				flat[i] = float32(i)
			}
		})
		for _, perm := range permutations(rank) {
			t.Run(fmt.Sprint(perm), func(t *testing.T) {
				out := MustExecOnceN(testBackend, func(x *Node) []*Node {
					return []*Node{transposeAxes(x, perm), TransposeAllAxes(x, perm...)}
				}, x)
				if !out[0].Shape().Equal(out[1].Shape()) {
					t.Fatalf("shape %s, want %s", out[0].Shape(), out[1].Shape())
				}
				got, want := tensors.MustCopyFlatData[float32](out[0]), tensors.MustCopyFlatData[float32](out[1])
				if !slices.Equal(got, want) {
					t.Fatalf("got %v, want %v", got, want)
				}
			})
		}
	}
}

// permutations returns every permutation of 0…n-1.
func permutations(n int) [][]int {
	if n == 0 {
		return [][]int{{}}
	}
	var all [][]int
	for _, p := range permutations(n - 1) {
		for pos := 0; pos <= len(p); pos++ {
			all = append(all, slices.Insert(slices.Clone(p), pos, n-1))
		}
	}
	return all
}

// TestSoftmaxGradientMatchesAutodiff: the softmax of differentiated graphs
// (closed-form gradient) has GoMLX's values and gradients within float32
// rounding, with masked scores (maskedScore) in some rows and a row that is
// all masked.
func TestSoftmaxGradientMatchesAutodiff(t *testing.T) {
	const rows, cols = 6, 9
	x := tensors.FromShape(shapesOf(dtypes.Float32, 2, rows, cols))
	tensors.MutableFlatData(x, func(flat []float32) {
		rng := rand.New(rand.NewPCG(3, 4))
		for i := range flat {
			flat[i] = float32(3 * rng.NormFloat64())
			if row := i / cols % rows; row == 5 || (row%2 == 1 && i%cols > row) {
				flat[i] = maskedScore
			}
		}
	})
	run := func(kn kernels) (y, dx []float32) {
		out := MustExecOnceN(testBackend, func(x *Node) []*Node {
			y := kn.softmax(x)
			w := Cos(IotaFull(x.Graph(), y.Shape()))
			return []*Node{y, Gradient(ReduceAllSum(Mul(Square(y), w)), x)[0]}
		}, x)
		return tensors.MustCopyFlatData[float32](out[0]), tensors.MustCopyFlatData[float32](out[1])
	}
	wantY, wantDX := run(kernels{})
	gotY, gotDX := run(kernels{differentiated: true})
	closeSlices(t, "softmax", gotY, wantY)
	closeSlices(t, "softmax gradient", gotDX, wantDX)
}
