package qwen3

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
)

// Compilations: every program of a run — prefill, decode, log-probs,
// loss and gradients, optimizer — is compiled by its backend once per
// input shapes, on first use. On the pure-Go backend that costs
// milliseconds; through XLA on a GPU, seconds each, so a run whose shapes
// keep changing spends its time compiling. Run (instead of Exec.Call)
// compiles a new program explicitly and times it, so that a run can say
// how many programs it compiled and how long that took (CompileStats,
// metrics compile/programs and compile/seconds) and name each slow one.

// SlowCompile is the compile time past which a compilation is reported to
// OnSlowCompile.
const SlowCompile = 2 * time.Second

// slowCompile is SlowCompile (a test lowers it).
var slowCompile = SlowCompile

// OnSlowCompile is told of each compilation longer than SlowCompile: the
// program's name, its input shapes and the time. The default prints one
// line to standard error.
var OnSlowCompile = func(program string, inputs []shapes.Shape, d time.Duration) {
	fmt.Fprintf(os.Stderr, "compiled %s for %s in %.1f s\n", program, shapesText(inputs), d.Seconds())
}

// OnCompiling is told of each compilation still running after
// SlowCompile, so that a long one shows while it runs. The default prints
// one line to standard error.
var OnCompiling = func(program string, inputs []shapes.Shape) {
	fmt.Fprintf(os.Stderr, "compiling %s for %s…\n", program, shapesText(inputs))
}

var compiles struct {
	sync.Mutex
	programs int
	total    time.Duration
	seen     map[*graph.Exec]map[string]bool
	donated  map[any]shapes.Shape
}

// CompileStats returns the number of programs Run compiled so far in this
// process (every model and backend) and the time it took.
func CompileStats() (programs int, seconds float64) {
	compiles.Lock()
	defer compiles.Unlock()
	return compiles.programs, compiles.total.Seconds()
}

// Free releases tensors' memory, device buffers included, now (nil entries
// are skipped). Go's garbage collector frees a tensor's device buffer only
// when it collects the tensor, and it does not see device memory: a GRPO
// step of 32 one-episode micro-batches of a Qwen3-1.7B-shaped model, each
// leaving a model's worth of float32 gradients (5.6 GB) to the collector,
// ran out of an H200's 139 GiB. Free only tensors nothing else holds.
func Free(ts []*tensors.Tensor) {
	for _, t := range ts {
		if t != nil {
			_ = t.FinalizeAll() // fails only for a backend's own error on release: nothing to do
		}
	}
}

// Donate donates the buffer of t to the next Run that takes the returned
// value (graph.DonateTensorBuffer), remembering its shape for Run.
func Donate(t *tensors.Tensor, backend compute.Backend) (any, error) {
	shape := t.Shape()
	d, err := graph.DonateTensorBuffer(t, backend, 0)
	if err != nil {
		return nil, err
	}
	compiles.Lock()
	if compiles.donated == nil {
		compiles.donated = map[any]shapes.Shape{}
	}
	compiles.donated[d] = shape
	compiles.Unlock()
	return d, nil
}

// Run executes e on args (tensors, or values from Donate), compiling its
// program for their shapes first — timed, counted in CompileStats and
// reported to OnSlowCompile when slow — when e has not run on those
// shapes yet.
func Run(e *graph.Exec, args ...any) ([]*tensors.Tensor, error) {
	if len(args) == 1 {
		if list, ok := args[0].([]*tensors.Tensor); ok {
			args = make([]any, len(list))
			for i, t := range list {
				args[i] = t
			}
		}
	}
	inputs := make([]shapes.Shape, len(args))
	known := true
	compiles.Lock()
	for i, a := range args {
		switch x := a.(type) {
		case *tensors.Tensor:
			inputs[i] = x.Shape()
		default:
			s, ok := compiles.donated[a]
			inputs[i], known = s, known && ok
			delete(compiles.donated, a)
		}
	}
	key := shapesText(inputs)
	fresh := known && !compiles.seen[e][key]
	compiles.Unlock()
	if fresh {
		start := time.Now()
		notice := time.AfterFunc(slowCompile, func() {
			if OnCompiling != nil {
				OnCompiling(e.Name(), inputs)
			}
		})
		_, err := e.Compile(inputs...)
		notice.Stop()
		if err != nil {
			return nil, err
		}
		d := time.Since(start)
		compiles.Lock()
		if compiles.seen == nil {
			compiles.seen = map[*graph.Exec]map[string]bool{}
		}
		if compiles.seen[e] == nil {
			compiles.seen[e] = map[string]bool{}
		}
		compiles.seen[e][key] = true
		compiles.programs++
		compiles.total += d
		compiles.Unlock()
		if d > slowCompile && OnSlowCompile != nil {
			OnSlowCompile(e.Name(), inputs, d)
		}
	}
	return e.Call(args...)
}

// shapesText writes input shapes compactly, runs of equal shapes
// counted: "28×(bf16)[2048 2048], (i32)[8 96]".
func shapesText(ss []shapes.Shape) string {
	var parts []string
	for i := 0; i < len(ss); {
		j := i
		for j < len(ss) && ss[j].Equal(ss[i]) {
			j++
		}
		s := ss[i].String()
		if j-i > 1 {
			s = fmt.Sprintf("%d×%s", j-i, s)
		}
		parts = append(parts, s)
		i = j
	}
	return strings.Join(parts, ", ")
}
