package qwen3_test

import (
	"context"
	"fmt"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gosqlenv/gosqlenv/training/qwen3"
)

// A tiny random Qwen3 on the CPU: generate greedily, then score the result.
// With network or a filled Hugging Face cache, qwen3.LoadModel(ctx, backend,
// qwen3.DefaultModelID, …) loads the real Qwen/Qwen3-1.7B the same way.
func Example() {
	backend, err := qwen3.NewBackend("go") // or "" for $GOMLX_BACKEND, e.g. xla:cuda
	if err != nil {
		panic(err)
	}
	w, err := qwen3.RandomWeights(qwen3.TinyConfig(256), 1, dtypes.Float32)
	if err != nil {
		panic(err)
	}
	m, err := qwen3.New(backend, w)
	if err != nil {
		panic(err)
	}
	gen, err := m.Generate(context.Background(), [][]int32{{1, 2, 3}, {4}}, qwen3.GenerateOptions{MaxNewTokens: 5})
	if err != nil {
		panic(err)
	}
	fmt.Println(len(gen.Tokens[0]), len(gen.Tokens[1]), len(gen.LogProbs[0]))
	logp, entropy, err := m.Score([][]int32{append([]int32{1, 2, 3}, gen.Tokens[0]...)}, 1)
	if err != nil {
		panic(err)
	}
	fmt.Println(len(logp[0]), len(entropy[0]))
	// Output:
	// 5 5 5
	// 7 7
}

// ExamplePackTrees packs three turn samples that share a prompt: the shared
// tokens become one node each, and every sequence maps to its nodes.
func ExamplePackTrees() {
	seqs := [][]int32{
		{10, 11, 12, 20, 21}, // prompt 10 11 12, completion 20 21
		{10, 11, 12, 30},     // same prompt, another completion
		{10, 11, 40},
	}
	tb, err := qwen3.PackTrees(seqs, 1024, 0)
	if err != nil {
		panic(err)
	}
	fmt.Println("tokens:", tb.Nodes, "instead of", 5+4+3)
	fmt.Println("nodes of the second sequence:", tb.Node[1])
	fmt.Println("depths:", tensors.MustCopyFlatData[int32](tb.Positions)[:tb.Nodes])
	// Output:
	// tokens: 7 instead of 12
	// nodes of the second sequence: [0 1 2 5]
	// depths: [0 1 2 3 4 3 2]
}
