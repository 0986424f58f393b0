package qwen3

import (
	"fmt"
	"slices"

	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
)

// TreeBatch packs token sequences that share prefixes into rows of prefix
// trees: every distinct prefix is one node (one token) of a row, stored in
// depth-first order, so a prefix that n sequences share is computed once
// instead of n times. A node attends to itself and its ancestors, at its
// depth as RoPE position: exactly what it sees in each of its sequences, so
// its hidden state is the one a padded batch of the sequences would give.
//
// Multi-turn episodes are the case it is made for: the turns of one question
// repeat the system prompt and the question, and the episodes of a GRPO
// group often repeat whole turns.
type TreeBatch struct {
	// IDs and Positions are [R, N] int32: each node's token and depth.
	IDs, Positions *tensors.Tensor
	// SubtreeEnd is [R, N] int32: the index of the last node of each node's
	// subtree (depth-first order makes a subtree one interval); −1 on
	// padding. Node j is an ancestor of node i (or i itself) exactly when
	// j ≤ i ≤ SubtreeEnd[j].
	SubtreeEnd *tensors.Tensor
	// Row[i] is the row holding sequence i, and Node[i][t] the index in that
	// row of the node of its token t.
	Row  []int
	Node [][]int32
	// N is the row length (nodes, padding included); Nodes the real nodes.
	N, Nodes int
}

// PackTrees packs seqs into prefix-tree rows of at most maxNodes nodes each
// (a sequence longer than that gets a row of its own), filling rows in the
// order of seqs. Rows are padded to BucketLength of the largest and their
// number to a power of two. Empty sequences are refused.
func PackTrees(seqs [][]int32, maxNodes int, pad int32) (TreeBatch, error) {
	var rows []*treeRow
	tb := TreeBatch{Row: make([]int, len(seqs)), Node: make([][]int32, len(seqs))}
	built := make([][]int, len(seqs)) // insertion index of each token's node
	for i, s := range seqs {
		if len(s) == 0 {
			return TreeBatch{}, fmt.Errorf("qwen3: tree packing: sequence %d is empty", i)
		}
		if n := len(rows); n == 0 || (len(rows[n-1].nodes) > 0 && len(rows[n-1].nodes)+rows[n-1].missing(s) > maxNodes) {
			rows = append(rows, &treeRow{roots: map[int32]int{}})
		}
		tb.Row[i] = len(rows) - 1
		built[i] = rows[len(rows)-1].insert(s)
	}
	longest := 0
	for _, r := range rows {
		longest = max(longest, len(r.nodes))
		tb.Nodes += len(r.nodes)
	}
	tb.N = BucketLength(longest)
	nRows := 1
	for nRows < len(rows) {
		nRows *= 2
	}
	ids, pos, end := make([]int32, nRows*tb.N), make([]int32, nRows*tb.N), make([]int32, nRows*tb.N)
	for i := range ids {
		ids[i], end[i] = pad, -1
	}
	order := make([][]int32, len(rows)) // insertion index → depth-first index
	for ri, r := range rows {
		order[ri] = r.depthFirst(ids[ri*tb.N:(ri+1)*tb.N], pos[ri*tb.N:(ri+1)*tb.N], end[ri*tb.N:(ri+1)*tb.N])
	}
	for i := range seqs {
		tb.Node[i] = make([]int32, len(built[i]))
		for t, b := range built[i] {
			tb.Node[i][t] = order[tb.Row[i]][b]
		}
	}
	tb.IDs = tensors.FromFlatDataAndDimensions(ids, nRows, tb.N)
	tb.Positions = tensors.FromFlatDataAndDimensions(pos, nRows, tb.N)
	tb.SubtreeEnd = tensors.FromFlatDataAndDimensions(end, nRows, tb.N)
	return tb, nil
}

// treeRow is a prefix tree being built: nodes in insertion order.
type treeRow struct {
	nodes []treeNode
	roots map[int32]int // first token → node
	order []int         // roots in insertion order
}

type treeNode struct {
	token    int32
	children map[int32]int // token → node
	kids     []int         // children in insertion order
}

// child returns the node after cur (−1: the root) for token tok.
func (r *treeRow) child(cur int, tok int32) (int, bool) {
	if cur < 0 {
		n, ok := r.roots[tok]
		return n, ok
	}
	n, ok := r.nodes[cur].children[tok]
	return n, ok
}

// missing counts the nodes inserting s would add.
func (r *treeRow) missing(s []int32) int {
	cur := -1
	for t, tok := range s {
		next, ok := r.child(cur, tok)
		if !ok {
			return len(s) - t
		}
		cur = next
	}
	return 0
}

// insert adds s and returns the node of each of its tokens.
func (r *treeRow) insert(s []int32) []int {
	out := make([]int, len(s))
	cur := -1
	for t, tok := range s {
		next, ok := r.child(cur, tok)
		if !ok {
			next = len(r.nodes)
			r.nodes = append(r.nodes, treeNode{token: tok, children: map[int32]int{}})
			if cur < 0 {
				r.roots[tok] = next
				r.order = append(r.order, next)
			} else {
				r.nodes[cur].children[tok] = next
				r.nodes[cur].kids = append(r.nodes[cur].kids, next)
			}
		}
		out[t] = next
		cur = next
	}
	return out
}

// depthFirst writes the row's tokens, depths and subtree ends in
// depth-first order and returns the depth-first index of each node.
func (r *treeRow) depthFirst(ids, pos, end []int32) []int32 {
	order := make([]int32, len(r.nodes))
	next := int32(0)
	// An explicit stack: a sequence may be tens of thousands of tokens deep.
	type frame struct {
		node  int
		depth int32
		kid   int // next child to visit
	}
	for _, root := range r.order {
		stack := []frame{{node: root}}
		order[root], ids[next], pos[next] = next, r.nodes[root].token, 0
		next++
		for len(stack) > 0 {
			f := &stack[len(stack)-1]
			if f.kid == len(r.nodes[f.node].kids) {
				end[order[f.node]] = next - 1
				stack = stack[:len(stack)-1]
				continue
			}
			k := r.nodes[f.node].kids[f.kid]
			f.kid++
			order[k], ids[next], pos[next] = next, r.nodes[k].token, f.depth+1
			next++
			stack = append(stack, frame{node: k, depth: f.depth + 1})
		}
	}
	return order
}

// Rows returns the number of rows of the batch (padding rows included).
func (tb TreeBatch) Rows() int { return tb.IDs.Shape().Dimensions[0] }

// treeVisibility is the attention mask of prefix-tree rows: key j is visible
// to query i when j is i or one of its ancestors, j ≤ i ≤ end[j]. end is
// [R, N] int32 (−1 on padding); it returns [R, N, N] bool.
func treeVisibility(end *Node) *Node {
	dims := end.Shape().Dimensions
	r, n := dims[0], dims[1]
	g := end.Graph()
	query := BroadcastToDims(Iota(g, shapesOf(dtypes.Int32, 1, n, n), 1), r, n, n)
	key := BroadcastToDims(Iota(g, shapesOf(dtypes.Int32, 1, n, n), 2), r, n, n)
	keyEnd := BroadcastToDims(Reshape(end, r, 1, n), r, n, n)
	return LogicalAnd(LessOrEqual(key, query), LessOrEqual(query, keyEnd))
}

// TreeTokenLogProbs scores tokens against prefix-tree rows (see TreeBatch):
// ids, positions and subtreeEnd are [R, N]; from and targets are [R, K]
// int32. For each k it returns log p(targets[r, k] | the sequence ending at
// node from[r, k]) and the entropy of that next-token distribution, both
// [R, K] float32, with logits divided by temperature (1 when ≤ 0). Only the
// K scored positions are projected to the vocabulary. weights are the
// model's weight nodes in Config.Weights order; gradients flow to them.
func TreeTokenLogProbs(cfg Config, weights []*Node, ids, positions, subtreeEnd, from, targets *Node, temperature float64) (logp, entropy *Node) {
	p := bindParams(cfg, weights, kernels{differentiated: true})
	h := decoderStack(cfg, p, ids, positions, treeVisibility(subtreeEnd)) // [R, N, H]
	dims := h.Shape().Dimensions
	r, n, hidden := dims[0], dims[1], dims[2]
	k := from.Shape().Dimensions[1]
	rowStart := MulScalar(Iota(h.Graph(), shapesOf(dtypes.Int32, r, k), 0), float64(n))
	flat := Add(rowStart, ConvertDType(from, dtypes.Int32))
	at := Gather(Reshape(h, r*n, hidden), ExpandAxes(flat, -1)) // [R, K, H]
	logits := logitsOf(p, at)
	if temperature > 0 && temperature != 1 {
		logits = DivScalar(logits, temperature)
	}
	logSoftmax := LogSoftmax(logits, -1)
	logp = pick(logSoftmax, targets)
	entropy = Neg(ReduceSum(Mul(Exp(logSoftmax), logSoftmax), -1))
	return logp, entropy
}

// ScoreTrees is Score computed over prefix trees (PackTrees with rows of at
// most maxNodes nodes): the same log-probabilities and entropies, each
// shared prefix computed once.
func (m *Model) ScoreTrees(seqs [][]int32, maxNodes int, temperature float64) (logp, entropy [][]float32, err error) {
	tb, err := PackTrees(seqs, maxNodes, 0)
	if err != nil {
		return nil, nil, err
	}
	rows := tb.Rows()
	k := make([]int, rows) // scored positions per row
	for i, s := range seqs {
		k[tb.Row[i]] += len(s) - 1
	}
	kmax := BucketLength(slices.Max(k))
	from, targets := make([]int32, rows*kmax), make([]int32, rows*kmax)
	at := make([][]int, len(seqs)) // flat index of each scored position
	fill := make([]int, rows)
	for i, s := range seqs {
		r := tb.Row[i]
		for t := 1; t < len(s); t++ {
			o := r*kmax + fill[r]
			fill[r]++
			from[o], targets[o] = tb.Node[i][t-1], s[t]
			at[i] = append(at[i], o)
		}
	}
	n := len(m.weights)
	e, err := m.bucketedExec(fmt.Sprintf("score_trees_t%g", temperature), func(g *Graph, in []*Node) []*Node {
		lp, ent := TreeTokenLogProbs(m.Config, in[:n], in[n], in[n+1], in[n+2], in[n+3], in[n+4], temperature)
		return []*Node{lp, ent}
	})
	if err != nil {
		return nil, nil, err
	}
	out, err := m.call(e, tb.IDs, tb.Positions, tb.SubtreeEnd,
		tensors.FromFlatDataAndDimensions(from, rows, kmax), tensors.FromFlatDataAndDimensions(targets, rows, kmax))
	if err != nil {
		return nil, nil, err
	}
	lpFlat := tensors.MustCopyFlatData[float32](out[0])
	entFlat := tensors.MustCopyFlatData[float32](out[1])
	for i := range seqs {
		lp, ent := make([]float32, len(at[i])), make([]float32, len(at[i]))
		for j, o := range at[i] {
			lp[j], ent[j] = lpFlat[o], entFlat[o]
		}
		logp, entropy = append(logp, lp), append(entropy, ent)
	}
	return logp, entropy, nil
}
