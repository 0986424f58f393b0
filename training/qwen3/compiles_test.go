package qwen3

import (
	"testing"
	"time"

	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
)

// TestRunCountsCompilations: Run compiles once per executor and input
// shapes — a new shape, or a donated buffer's shape, is a new program; the
// same shapes again are not — and reports slow ones.
func TestRunCountsCompilations(t *testing.T) {
	backend := testBackend
	e := MustNewExec(backend, func(x *Node) *Node { return MulScalar(x, 2) }).WithName("double")
	before, _ := CompileStats()
	var slow []string
	old, oldLimit, oldNotice := OnSlowCompile, slowCompile, OnCompiling
	defer func() { OnSlowCompile, slowCompile, OnCompiling = old, oldLimit, oldNotice }()
	slowCompile = -1 // report every compilation
	OnCompiling = nil
	OnSlowCompile = func(program string, inputs []shapes.Shape, d time.Duration) {
		slow = append(slow, program+" "+shapesText(inputs))
	}
	for _, n := range []int{3, 3, 5, 3} {
		out, err := Run(e, tensors.FromValue(make([]float32, n)))
		if err != nil {
			t.Fatal(err)
		}
		if got := out[0].Shape().Dimensions[0]; got != n {
			t.Fatalf("output of %d elements, want %d", got, n)
		}
	}
	d, err := Donate(tensors.FromValue(make([]float32, 7)), backend)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Run(e, d); err != nil {
		t.Fatal(err)
	}
	after, _ := CompileStats()
	if after-before != 3 || len(slow) != 3 || slow[0] != "double (Float32)[3]" || slow[2] != "double (Float32)[7]" {
		t.Fatalf("%d programs compiled (want 3: [3], [5], [7]), reported %q", after-before, slow)
	}
}
