package qwen3

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"

	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
)

// GenerateOptions configure Generate.
type GenerateOptions struct {
	// MaxNewTokens bounds the tokens generated per sequence (required).
	MaxNewTokens int
	// Temperature divides the logits before sampling; 0 means greedy.
	Temperature float64
	// Temperatures, when set, gives each prompt its own temperature (0:
	// greedy) instead of Temperature: greedy and sampled sequences share
	// one batch (an evaluation's greedy and sampled episodes).
	Temperatures []float64
	// TopK keeps only the k most likely tokens (0: all).
	TopK int
	// TopP keeps the smallest set of most likely tokens whose probability
	// reaches p (0 or 1: all).
	TopP float64
	// Seed makes sampling reproducible.
	Seed int64
	// StopTokens end a sequence when generated (e.g. <|im_end|>, <|endoftext|>).
	StopTokens []int32
	// PadID fills prompts on the left and finished sequences.
	PadID int32
	// LengthBucket rounds the prompt length and the KV-cache length up to a
	// multiple (default 64), and the batch is rounded up (BucketRows), so
	// XLA compiles few distinct programs.
	LengthBucket int
	// SharePrompts prefills each distinct prompt once and copies its KV
	// cache to every sequence that has it (the episodes of a group start
	// from the same prompt, and often stay alike). Sampling is unchanged:
	// each sequence still draws its own tokens.
	SharePrompts bool
	// MaxBatchBytes bounds, approximately, the memory one batch of
	// generation needs: the prefill's attention (about four float32 tensors
	// of heads × prompt length² per distinct prompt at once: the products,
	// the masked scores, the softmax and its mask) and the KV cache (2 ×
	// layers × KV heads × cache length × head size per sequence). Prompts
	// that would need more are generated in slices of the batch, one slice
	// after the other, equal prompts together; with static shapes, the
	// batches' rows shrink to fit (staticSliceRows). 0 means
	// DefaultMaxBatchBytes on the pure-Go backend, whose buffers are host
	// memory, and DefaultXLAMaxBatchBytes on XLA backends; a negative value
	// means no bound. Without a bound, the
	// attention of a large batch of long prompts, quadratic in their length,
	// outgrows the machine's memory.
	MaxBatchBytes int64

	// Static, when its Rows is set, fixes the shapes of the generation's
	// programs so that a run compiles each once (static_shapes).
	Static StaticShapes

	// keepLogits makes Generate also return every step's logits (tests).
	keepLogits bool
}

// StaticShapes are the fixed shapes of a generation (GenerateOptions.Static):
// every batch has Rows rows (more prompts are generated Rows at a time, in
// order; padding fills the last batch), every prompt is left-padded to
// PromptLength tokens (a longer one is an error), the KV caches hold
// PromptLength + MaxNewTokens positions (rounded up to LengthBucket) from
// the first step, and the batch keeps its rows to the end (no moving the
// live sequences into a smaller batch). The prefill and decode programs
// then have one shape per (Rows, PromptLength): on XLA, where each new
// shape compiles for seconds, a run compiles them once.
type StaticShapes struct {
	Rows, PromptLength int
}

// Generation is the output of Generate, one entry per prompt.
type Generation struct {
	// Tokens are the generated tokens, the stop token included when one ended the sequence.
	Tokens [][]int32
	// LogProbs are log p(token) under the sampling distribution's
	// temperature-scaled softmax (before top-k/top-p truncation), one per token.
	LogProbs [][]float32
	// Stopped says whether a stop token ended the sequence (else MaxNewTokens did).
	Stopped []bool

	logits  [][][]float32 // [step][row][vocab], only with keepLogits
	maxNew  int           // MaxNewTokens
	batches []int         // the batch sizes decoding went through (tests)
}

// sampling holds the compile-time sampling parameters of a generation program.
type sampling struct {
	temperature float64
	topK        int
	topP        float64
	keepLogits  bool
	perRow      bool // temperatures are an input, one per row (temperature unused)
}

func (s sampling) key() string {
	if s.perRow {
		return fmt.Sprintf("rows_k%d_p%g_l%v", s.topK, s.topP, s.keepLogits)
	}
	return fmt.Sprintf("t%g_k%d_p%g_l%v", s.temperature, s.topK, s.topP, s.keepLogits)
}

// DefaultMaxBatchBytes is GenerateOptions.MaxBatchBytes when unset on the
// pure-Go backend: 2 GiB. The notebook's preset rarely needs more (one of
// the 26 generation calls of an evaluation of its trained model was cut in
// two, none of GRPO's); an evaluation over the ten training databases
// peaked at 6.5 GB of resident memory with it instead of 10.6–11.5 GB (the
// process's memory is about three times the bound plus the program: the Go
// collector's headroom and the backend's pool of freed buffers). Slicing
// costs about 8 % more CPU in the slices' decode loops (BENCHMARKS.md).
const DefaultMaxBatchBytes = 2 << 30

// DefaultXLAMaxBatchBytes is GenerateOptions.MaxBatchBytes when unset on an
// XLA backend: 16 GiB, for GPUs of 40 GB and more that also hold a training
// state. Unbounded, a GRPO rollout of 32 episodes of a Qwen3-1.7B-shaped
// model with 2,048-token prompts asked for 14.9 GiB at once in one
// prefill (H200, 2026-11-28); with this bound it runs as 4 batches of 8
// (static shapes) or as many slices as fit.
const DefaultXLAMaxBatchBytes = 16 << 30

// Generate continues each prompt until a stop token or MaxNewTokens, all
// prompts advancing together: one prefill over the (left-padded) prompts
// fills a KV cache, then each step decodes one token for every sequence.
// Sequences that finish stop contributing tokens; the loop ends when all
// have finished. ctx is checked between steps. A batch larger than
// MaxBatchBytes allows is generated in slices, each with its own seed
// derived from Seed.
func (m *Model) Generate(ctx context.Context, prompts [][]int32, opts GenerateOptions) (*Generation, error) {
	if len(prompts) == 0 {
		return &Generation{}, nil
	}
	if err := m.checkPrompts(prompts, opts); err != nil {
		return nil, err
	}
	if opts.Temperatures != nil && len(opts.Temperatures) != len(prompts) {
		return nil, fmt.Errorf("qwen3: %d temperatures for %d prompts", len(opts.Temperatures), len(prompts))
	}
	if opts.Static.Rows > 0 {
		opts.Static.Rows = m.staticSliceRows(opts)
	}
	parts, err := m.batchParts(prompts, opts)
	if err != nil {
		return nil, err
	}
	if len(parts) == 1 {
		return m.generate(ctx, prompts, opts)
	}
	gen := &Generation{Tokens: make([][]int32, len(prompts)), LogProbs: make([][]float32, len(prompts)),
		Stopped: make([]bool, len(prompts)), maxNew: opts.MaxNewTokens}
	for i, rows := range parts {
		sub, subOpts := make([][]int32, len(rows)), opts
		for j, r := range rows {
			sub[j] = prompts[r]
		}
		if opts.Temperatures != nil {
			subOpts.Temperatures = make([]float64, len(rows))
			for j, r := range rows {
				subOpts.Temperatures[j] = opts.Temperatures[r]
			}
		}
		subOpts.Seed = sliceSeed(opts.Seed, i)
		part, err := m.generate(ctx, sub, subOpts)
		if err != nil {
			return nil, err
		}
		for j, r := range rows {
			gen.Tokens[r], gen.LogProbs[r], gen.Stopped[r] = part.Tokens[j], part.LogProbs[j], part.Stopped[j]
		}
		if opts.keepLogits {
			for step, stepLogits := range part.logits {
				if step == len(gen.logits) {
					gen.logits = append(gen.logits, make([][]float32, len(prompts)))
				}
				for j, r := range rows {
					gen.logits[step][r] = stepLogits[j]
				}
			}
		}
		gen.batches = append(gen.batches, part.batches...)
	}
	return gen, nil
}

// sliceSeed is the sampling seed of slice i of a batch: slice 0 keeps the
// caller's seed (an unsliced batch samples as before), the others are
// scattered away from it so that slices of consecutive seeds do not share
// random streams.
func sliceSeed(seed int64, i int) int64 {
	if i == 0 {
		return seed
	}
	return seed ^ int64(uint64(i)*0x9E3779B97F4A7C15)
}

// batchParts splits the prompts' rows into the batches generated one
// after the other: batchSlices, or with static shapes runs of
// opts.Static.Rows rows, after checking every prompt fits
// opts.Static.PromptLength.
func (m *Model) batchParts(prompts [][]int32, opts GenerateOptions) ([][]int, error) {
	st := opts.Static
	if st.Rows <= 0 {
		return m.batchSlices(prompts, opts), nil
	}
	var parts [][]int
	for r, p := range prompts {
		if len(p) > st.PromptLength {
			return nil, fmt.Errorf("qwen3: prompt %d has %d tokens, more than the static prompt length %d", r, len(p), st.PromptLength)
		}
		if r%st.Rows == 0 {
			parts = append(parts, nil)
		}
		parts[len(parts)-1] = append(parts[len(parts)-1], r)
	}
	return parts, nil
}

// batchSlices splits the prompts' rows into slices whose generation fits
// opts.MaxBatchBytes (see GenerateOptions), in order, keeping equal prompts
// in one slice when they share their prefill. One slice holds at least one
// distinct prompt, whatever its size.
func (m *Model) batchSlices(prompts [][]int32, opts GenerateOptions) [][]int {
	budget := m.batchBudget(opts)
	plen, smax := generationLengths(prompts, opts)
	scoresPerPrompt, cachePerRow := m.generationBytes(plen, smax)
	// Rows of the same prompt form a group: one prefill, one cache per row.
	unique, sourceOf := distinctPrompts(prompts, len(prompts), opts.SharePrompts)
	groups := make([][]int, len(unique))
	for r, u := range sourceOf {
		groups[u] = append(groups[u], r)
	}
	// A slice of d distinct prompts and r rows computes BucketRows(d)
	// prompts and BucketRows(r) caches (padding included), so slices fill
	// up to a bucket size: none wastes work on padding but the last.
	need := func(d, r int) int64 {
		return int64(BucketRows(d))*scoresPerPrompt + int64(BucketRows(r))*cachePerRow
	}
	var parts [][]int
	var rows []int
	distinct := 0
	for _, g := range groups {
		if len(rows) > 0 && need(distinct+1, len(rows)+len(g)) > budget {
			parts, rows, distinct = append(parts, rows), nil, 0
		}
		rows, distinct = append(rows, g...), distinct+1
	}
	parts = append(parts, rows)
	for _, p := range parts {
		slices.Sort(p)
	}
	return parts
}

// batchBudget is the memory bound of one generation batch:
// opts.MaxBatchBytes, or the backend's default when 0 (DefaultMaxBatchBytes
// on the pure-Go backend, DefaultXLAMaxBatchBytes on XLA); no bound
// (MaxInt64) when negative.
func (m *Model) batchBudget(opts GenerateOptions) int64 {
	budget := opts.MaxBatchBytes
	if budget == 0 {
		budget = DefaultXLAMaxBatchBytes
		if isGoBackend(m.backend) {
			budget = DefaultMaxBatchBytes
		}
	}
	if budget <= 0 {
		budget = math.MaxInt64
	}
	return budget
}

// generationBytes estimates a generation's memory at prompt length plen and
// cache length smax: the prefill's attention per prompt (about four
// score-sized float32 tensors at once) and the KV cache per row.
func (m *Model) generationBytes(plen, smax int) (scoresPerPrompt, cachePerRow int64) {
	cfg := m.Config
	scoresPerPrompt = 4 * int64(cfg.NumAttentionHeads) * int64(plen) * int64(plen) * 4
	cachePerRow = 2 * int64(cfg.NumHiddenLayers*cfg.NumKeyValueHeads*cfg.HeadDim) * int64(smax) * int64(m.DType.Size())
	return scoresPerPrompt, cachePerRow
}

// staticSliceRows is the rows of each generation batch with static shapes:
// opts.Static.Rows, or fewer — the next smaller row bucket, again and again
// — while a batch of that many distinct prompts at the static prompt length
// would need more than the memory bound (batchBudget). It depends only on
// the configuration and the static prompt length, so the programs stay few.
func (m *Model) staticSliceRows(opts GenerateOptions) int {
	budget := m.batchBudget(opts)
	plen := opts.Static.PromptLength
	scores, cache := m.generationBytes(plen, roundUp(plen+opts.MaxNewTokens, max(opts.LengthBucket, 1)))
	rows := opts.Static.Rows
	for rows > 1 && int64(rows)*(scores+cache) > budget {
		next := BucketRows(rows / 2)
		if next >= rows {
			next = rows - 1
		}
		rows = next
	}
	return rows
}

// generationLengths are the prompt length and the KV-cache length of a
// batch: its longest prompt, and that plus MaxNewTokens, each rounded up to
// LengthBucket (default 64).
func generationLengths(prompts [][]int32, opts GenerateOptions) (plen, smax int) {
	bucket := opts.LengthBucket
	if bucket <= 0 {
		bucket = 64
	}
	longest := 0
	for _, p := range prompts {
		longest = max(longest, len(p))
	}
	plen = roundUp(longest, bucket)
	if opts.Static.Rows > 0 {
		plen = opts.Static.PromptLength
	}
	return plen, roundUp(plen+opts.MaxNewTokens, bucket)
}

// generate is Generate for one batch.
func (m *Model) generate(ctx context.Context, prompts [][]int32, opts GenerateOptions) (*Generation, error) {
	d, err := m.startDecoding(prompts, opts)
	if err != nil {
		return nil, err
	}
	defer d.free()
	for step := 0; ; step++ {
		live := d.gen.add(d.out, d.rowOf, opts, d.s.keepLogits, m.Config.VocabSize)
		if live == 0 {
			return d.gen, nil
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := d.compactIfSparse(live); err != nil {
			return nil, err
		}
		if err := d.growIfFull(step); err != nil {
			return nil, err
		}
		if err := d.step(step); err != nil {
			return nil, err
		}
	}
}

// decoding is one generation batch between its decode steps.
type decoding struct {
	m      *Model
	opts   GenerateOptions
	s      sampling
	decode *Exec
	static bool
	// plen is the prompt length, smax the longest the KV caches may grow,
	// cacheLen their length now, grow their growth step (0: full from the
	// start).
	plen, smax, cacheLen, grow int
	// out are the last step's outputs: sampled tokens, log-probs, RNG state,
	// (logits), then the keys and values of every layer.
	out        []*tensors.Tensor
	promptMask *tensors.Tensor // [slots, plen]: each slot's real prompt tokens
	lengths    []int           // each slot's prompt length
	rowOf      []int           // each slot's sequence (−1: a padding slot)
	temps      []float32       // each slot's temperature (per-row sampling only)
	gen        *Generation
}

// startDecoding fixes the batch's shapes — rows rounded up (BucketRows),
// prompt and cache lengths to the bucket, or the static ones — and runs the
// prefill over the distinct prompts (all of them without SharePrompts).
func (m *Model) startDecoding(prompts [][]int32, opts GenerateOptions) (*decoding, error) {
	s := sampling{temperature: opts.Temperature, topK: opts.TopK, topP: opts.TopP, keepLogits: opts.keepLogits, perRow: opts.Temperatures != nil}
	if s.topP >= 1 {
		s.topP = 0
	}
	if s.perRow {
		s.temperature = 0
	}
	rows := len(prompts)
	bsz := BucketRows(rows)
	d := &decoding{m: m, opts: opts, s: s, static: opts.Static.Rows > 0}
	d.plen, d.smax = generationLengths(prompts, opts)
	if d.static {
		bsz = opts.Static.Rows
	}
	// sourceOf maps each of the bsz rows to its prompt.
	distinct, sourceOf := distinctPrompts(prompts, bsz, opts.SharePrompts)
	padded := slices.Clone(distinct)
	prefillRows := BucketRows(len(distinct))
	if d.static {
		prefillRows = bsz
	}
	for len(padded) < prefillRows {
		padded = append(padded, []int32{opts.PadID})
	}
	batch := PadLeft(padded, opts.PadID, d.plen)

	// The caches start short and grow as the longest sequence needs
	// (cacheGrowth): a decode step's attention costs as many positions as
	// the caches hold, and most sequences stop long before MaxNewTokens.
	d.cacheLen, d.grow = d.smax, m.cacheGrowth(opts)
	if d.static {
		d.grow = 0
	}
	if d.grow > 0 {
		d.cacheLen = min(d.smax, d.plen+d.grow)
	}
	prefill, decode, err := m.generationExecs(s, d.plen, d.cacheLen)
	if err != nil {
		return nil, err
	}
	d.decode = decode
	rng, err := RNGStateFromSeed(opts.Seed)
	if err != nil {
		return nil, err
	}
	if s.perRow {
		d.temps = make([]float32, bsz)
		for r := range d.temps {
			d.temps[r] = float32(opts.Temperatures[min(r, rows-1)])
		}
	}
	prefillArgs := []*tensors.Tensor{batch.IDs, batch.Mask, batch.Positions, tensors.FromFlatDataAndDimensions(sourceOf, bsz), rng}
	if s.perRow {
		prefillArgs = append(prefillArgs, tensors.FromFlatDataAndDimensions(d.temps, bsz))
	}
	defer Free(prefillArgs) // uploaded for the prefill only
	if d.out, err = m.call(prefill, prefillArgs...); err != nil {
		return nil, err
	}
	d.gen = &Generation{Tokens: make([][]int32, rows), LogProbs: make([][]float32, rows), Stopped: make([]bool, rows),
		maxNew: opts.MaxNewTokens, batches: []int{bsz}}
	d.promptMask, d.lengths = rowsOf(batch, sourceOf)
	d.rowOf = make([]int, bsz)
	for i := range d.rowOf {
		d.rowOf[i] = -1
		if i < rows {
			d.rowOf[i] = i
		}
	}
	return d, nil
}

// free releases the batch's device memory — the last step's outputs, KV
// caches included (a generation batch of a Qwen3-1.7B holds gigabytes) —
// now rather than when Go's collector, which does not see device memory,
// gets to it. Inputs donated to a step are gone already.
func (d *decoding) free() {
	Free(d.out)
	Free([]*tensors.Tensor{d.promptMask})
}

// compactIfSparse goes on with the live sequences only, in a smaller batch
// of a power of two (few shapes to compile), once at most half the slots
// are live: a sampling step costs as many rows as it has. Not with static
// shapes, nor when every step's logits are kept.
func (d *decoding) compactIfSparse(live int) error {
	smaller := 1 << bits.Len(uint(live-1))
	if d.static || d.opts.keepLogits || smaller > len(d.rowOf)/2 {
		return nil
	}
	var keep []int32
	var err error
	if d.out, d.promptMask, d.lengths, d.rowOf, keep, err = d.m.compact(d.gen, d.out, d.promptMask, d.lengths, d.rowOf, smaller); err != nil {
		return err
	}
	if d.s.perRow {
		kept := make([]float32, len(keep))
		for i, slot := range keep {
			kept[i] = d.temps[slot]
		}
		d.temps = kept
	}
	d.gen.batches = append(d.gen.batches, len(d.rowOf))
	return nil
}

// growIfFull grows the KV caches when decode step `step` would write past
// them (its slot is plen+step).
func (d *decoding) growIfFull(step int) error {
	if d.plen+step != d.cacheLen {
		return nil
	}
	grown := min(d.smax, d.cacheLen+d.grow)
	var err error
	if d.out, err = d.m.growCaches(d.out, grown); err != nil {
		return err
	}
	d.cacheLen = grown
	return nil
}

// step feeds the sampled tokens at their positions and samples the next
// ones. The KV caches are donated: nothing reads them after this step, so
// the backend may update them in place instead of copying every layer's
// cache per generated token.
func (d *decoding) step(step int) error {
	L := d.m.Config.NumHiddenLayers
	b := len(d.rowOf)
	positions := make([]int32, b)
	for r := range positions {
		positions[r] = int32(d.lengths[r] + step)
	}
	made := []*tensors.Tensor{tensors.FromFlatDataAndDimensions(positions, b), tensors.FromScalar(int32(d.plen + step))}
	defer func() { Free(made) }() // made grows below
	args := []any{d.out[0], made[0], d.promptMask, made[1], d.out[2]}
	for _, c := range d.out[len(d.out)-2*L:] {
		donated, err := Donate(c, d.m.backend)
		if err != nil {
			return fmt.Errorf("qwen3: donate the KV cache: %w", err)
		}
		args = append(args, donated)
	}
	if d.s.perRow {
		made = append(made, tensors.FromFlatDataAndDimensions(d.temps, b))
		args = append(args, made[len(made)-1])
	}
	prev := d.out
	out, err := d.m.callAny(d.decode, args...)
	if err != nil {
		d.out = prev[:len(prev)-2*L] // the caches were donated
		return err
	}
	d.out = out
	Free(prev[:len(prev)-2*L]) // the step's tokens, log-probs, RNG state (and logits), read already
	return nil
}

// compact moves the sequences still running into a batch of size b: the
// step's outputs (sampled tokens, RNG state, KV caches) and the prompt
// masks and lengths are gathered to the live slots, in order; the slots
// past them repeat the last live one and are padding. keep lists the old
// slot of each new one.
func (m *Model) compact(gen *Generation, out []*tensors.Tensor, promptMask *tensors.Tensor, lengths []int, rowOf []int, b int) (_ []*tensors.Tensor, _ *tensors.Tensor, _ []int, _ []int, keep []int32, _ error) {
	for slot, r := range rowOf {
		if r >= 0 && gen.running(r) {
			keep = append(keep, int32(slot))
		}
	}
	for len(keep) < b {
		keep = append(keep, keep[len(keep)-1])
	}
	newRowOf, newLengths := make([]int, b), make([]int, b)
	tokens := tensors.MustCopyFlatData[int32](out[0])
	newTokens := make([]int32, b)
	mask := tensors.MustCopyFlatData[int32](promptMask)
	s := len(mask) / len(rowOf)
	newMask := make([]int32, b*s)
	for i, slot := range keep {
		newRowOf[i] = rowOf[slot]
		if i > 0 && slot == keep[i-1] {
			newRowOf[i] = -1
		}
		newLengths[i], newTokens[i] = lengths[slot], tokens[slot]
		copy(newMask[i*s:(i+1)*s], mask[int(slot)*s:(int(slot)+1)*s])
	}
	L := m.Config.NumHiddenLayers
	gather, err := m.bucketedExec("compact", func(g *Graph, in []*Node) []*Node {
		idx := ExpandAxes(in[len(m.weights)], -1)
		caches := in[len(m.weights)+1:]
		res := make([]*Node, len(caches))
		for i, c := range caches {
			res[i] = Gather(c, idx)
		}
		return res
	})
	if err != nil {
		return nil, nil, nil, nil, nil, err
	}
	args := append([]*tensors.Tensor{tensors.FromFlatDataAndDimensions(keep, b)}, out[len(out)-2*L:]...)
	caches, err := m.call(gather, args...)
	if err != nil {
		return nil, nil, nil, nil, nil, fmt.Errorf("qwen3: compact the KV caches: %w", err)
	}
	Free(out[len(out)-2*L:]) // the uncompacted caches
	Free([]*tensors.Tensor{out[0], out[1], promptMask})
	head := []*tensors.Tensor{tensors.FromFlatDataAndDimensions(newTokens, b), nil, out[2]}
	return append(head, caches...), tensors.FromFlatDataAndDimensions(newMask, b, s), newLengths, newRowOf, keep, nil
}

// checkPrompts refuses empty prompts, token ids outside the vocabulary and
// MaxNewTokens ≤ 0.
func (m *Model) checkPrompts(prompts [][]int32, opts GenerateOptions) error {
	if opts.MaxNewTokens <= 0 {
		return errors.New("qwen3: Generate needs MaxNewTokens > 0")
	}
	for i, p := range prompts {
		if len(p) == 0 {
			return fmt.Errorf("qwen3: prompt %d is empty", i)
		}
		for _, id := range p {
			if id < 0 || int(id) >= m.Config.VocabSize {
				return fmt.Errorf("qwen3: prompt %d has token id %d outside the vocabulary (%d)", i, id, m.Config.VocabSize)
			}
		}
	}
	return nil
}

// add appends one step's sampled tokens and log-probabilities (out[0],
// out[1]; out[3] the logits when kept) of each batch slot to its sequence
// (rowOf; −1: padding), if that sequence still runs, and returns how many
// still run.
func (gen *Generation) add(out []*tensors.Tensor, rowOf []int, opts GenerateOptions, keepLogits bool, vocab int) (live int) {
	tokens := tensors.MustCopyFlatData[int32](out[0])
	logps := tensors.MustCopyFlatData[float32](out[1])
	if keepLogits {
		flat := tensors.MustCopyFlatData[float32](out[3])
		stepLogits := make([][]float32, len(gen.Tokens))
		for slot, r := range rowOf {
			if r >= 0 {
				stepLogits[r] = flat[slot*vocab : (slot+1)*vocab]
			}
		}
		gen.logits = append(gen.logits, stepLogits)
	}
	for slot, r := range rowOf {
		if r < 0 || !gen.running(r) {
			continue
		}
		gen.Tokens[r] = append(gen.Tokens[r], tokens[slot])
		gen.LogProbs[r] = append(gen.LogProbs[r], logps[slot])
		if slices.Contains(opts.StopTokens, tokens[slot]) {
			gen.Stopped[r] = true
		} else if gen.running(r) {
			live++
		}
	}
	return live
}

// running says whether sequence r is still generating.
func (gen *Generation) running(r int) bool {
	return !gen.Stopped[r] && len(gen.Tokens[r]) < gen.maxNew
}

func roundUp(n, m int) int { return (n + m - 1) / m * m }

// BucketRows rounds a batch size up to the next of 1, 2, 4, 8, 12, 16, 24,
// 32, 48, … (2ᵏ, and 1.5·2ᵏ from 12): at most a third of a batch is padding
// rows, and few distinct batch sizes are compiled.
func BucketRows(n int) int {
	if n <= 8 {
		return 1 << bits.Len(uint(max(n, 1)-1))
	}
	b := 8
	for b < n {
		if b&(b-1) == 0 {
			b += b / 2
		} else {
			b = b / 3 * 4
		}
	}
	return b
}

// distinctPrompts returns the prompts the prefill computes and, for each of
// bsz rows, the index of its prompt among them (padding rows: the last
// prompt, whose results they ignore). With share, equal prompts are one;
// without, every prompt is its own.
func distinctPrompts(prompts [][]int32, bsz int, share bool) ([][]int32, []int32) {
	sourceOf := make([]int32, bsz)
	if !share {
		for r := range sourceOf {
			sourceOf[r] = int32(min(r, len(prompts)-1))
		}
		return prompts, sourceOf
	}
	var distinct [][]int32
	index := map[string]int32{}
	for r, p := range prompts {
		key := string(promptKey(p))
		i, ok := index[key]
		if !ok {
			i = int32(len(distinct))
			index[key] = i
			distinct = append(distinct, p)
		}
		sourceOf[r] = i
	}
	for r := len(prompts); r < bsz; r++ {
		sourceOf[r] = sourceOf[len(prompts)-1]
	}
	return distinct, sourceOf
}

// promptKey is a token sequence as bytes, to key a map.
func promptKey(p []int32) []byte {
	b := make([]byte, 4*len(p))
	for i, t := range p {
		b[4*i], b[4*i+1], b[4*i+2], b[4*i+3] = byte(t), byte(t>>8), byte(t>>16), byte(t>>24)
	}
	return b
}

// rowsOf gives each row the prompt mask [B, P] of its prompt in the prefill
// batch's [U, P], and returns each row's prompt length.
func rowsOf(b Batch, sourceOf []int32) (*tensors.Tensor, []int) {
	src := tensors.MustCopyFlatData[int32](b.Mask)
	dst := make([]int32, len(sourceOf)*b.T)
	lengths := make([]int, len(sourceOf))
	for r, u := range sourceOf {
		copy(dst[r*b.T:], src[int(u)*b.T:(int(u)+1)*b.T])
		lengths[r] = b.Lengths[u]
	}
	return tensors.FromFlatDataAndDimensions(dst, len(sourceOf), b.T), lengths
}

// cacheGrowth is how many positions the KV caches start with past the
// prompts, and grow by when a sequence reaches their end: on the pure-Go
// backend, 64 rounded up to a multiple of the length bucket (measured in
// BENCHMARKS.md, "Generation's KV caches grow as needed"); elsewhere 0, the
// caches holding prompt + MaxNewTokens from the start (each cache length is
// another compiled decode program, which XLA takes seconds to compile).
func (m *Model) cacheGrowth(opts GenerateOptions) int {
	if !isGoBackend(m.backend) {
		return 0
	}
	bucket := opts.LengthBucket
	if bucket <= 0 {
		bucket = 64
	}
	return roundUp(64, bucket)
}

// growCaches pads the KV caches of a step's outputs with zeros up to s
// positions.
func (m *Model) growCaches(out []*tensors.Tensor, s int) ([]*tensors.Tensor, error) {
	L := m.Config.NumHiddenLayers
	grow, err := m.bucketedExec(fmt.Sprintf("grow_caches_s%d", s), func(g *Graph, in []*Node) []*Node {
		caches := in[len(m.weights):]
		res := make([]*Node, len(caches))
		for i, c := range caches {
			axis := 2
			if i < L {
				axis = positionAxis(m.keysInCache)
			}
			res[i] = growTo(c, axis, s)
		}
		return res
	})
	if err != nil {
		return nil, err
	}
	caches, err := m.call(grow, out[len(out)-2*L:]...)
	if err != nil {
		return nil, fmt.Errorf("qwen3: grow the KV caches to %d positions: %w", s, err)
	}
	Free(out[len(out)-2*L:]) // the shorter caches
	return append(slices.Clone(out[:len(out)-2*L]), caches...), nil
}

// generationExecs builds the prefill and decode programs for one sampling setup.
//
//	prefill(weights…, ids [U,P], mask [U,P], positions [U,P], sourceOf [B], rng, (temps [B])) →
//	    token [B], logp [B], rng, (logits [B,V]), K₀…K_{L−1}, V₀…V_{L−1}
//
// The prefill computes U prompts and gives row b the caches and next-token
// distribution of prompt sourceOf[b]. The caches hold smax positions:
// values [B, nKV, S, D], keys laid out as m.keysInCache says.
//
//	decode(weights…, token [B], position [B], promptMask [B,P], slot, rng, K…, V…, (temps [B])) → same outputs
//
// The decode step takes caches of any length (they grow between steps,
// growCaches). temps, each row's temperature, are inputs with per-row
// sampling only.
func (m *Model) generationExecs(s sampling, plen, smax int) (prefill, decode *Exec, err error) {
	cfg, n, L, layout := m.Config, len(m.weights), m.Config.NumHiddenLayers, m.keysInCache
	prefill, err = m.bucketedExec(fmt.Sprintf("prefill_%s_s%d", s.key(), smax), func(g *Graph, in []*Node) []*Node {
		p := bindParams(cfg, in[:n], kernels{})
		ids, mask, positions, sourceOf, rng := in[n], in[n+1], in[n+2], in[n+3], in[n+4]
		rowsOf := func(x *Node) *Node { return Gather(x, ExpandAxes(sourceOf, -1)) } // [U, …] → [B, …]
		h := embed(p, ids)
		cos, sin := ropeCosSin(positions, cfg.HeadDim, cfg.RopeTheta, h.DType())
		visible := causalVisibility(mask)
		var ks, vs []*Node
		for _, lp := range p.layers {
			h = decoderLayer(cfg, lp, h, cos, sin, keysByPosition, func(k, v *Node) (*Node, *Node, *Node) {
				k, v = TransposeAllAxes(k, 0, 2, 1, 3), TransposeAllAxes(v, 0, 2, 1, 3) // [U, nKV, P, D]
				cached := k
				if layout == keysByDim {
					cached = TransposeAllAxes(k, 0, 1, 3, 2) // [U, nKV, D, P]
				}
				ks, vs = append(ks, growTo(rowsOf(cached), positionAxis(layout), smax)), append(vs, growTo(rowsOf(v), 2, smax))
				return k, v, visible
			})
		}
		t := h.Shape().Dimensions[1]
		last := rowsOf(Squeeze(SliceAxis(h, 1, AxisRange(t-1, t)), 1)) // [B, H]
		logits := logitsOf(p, rmsNorm(last, p.norm, cfg.RMSNormEps))
		var temps *Node
		if s.perRow {
			temps = in[n+5]
		}
		return append(sample(s, logits, rng, temps), append(ks, vs...)...)
	})
	if err != nil {
		return nil, nil, err
	}
	decode, err = m.bucketedExec("decode_"+s.key(), func(g *Graph, in []*Node) []*Node {
		p := bindParams(cfg, in[:n], kernels{})
		token, position, promptMask, slot, rng := in[n], in[n+1], in[n+2], in[n+3], in[n+4]
		kCache, vCache := in[n+5:n+5+L], in[n+5+L:n+5+2*L]
		b := token.Shape().Dimensions[0]
		plen, smax := promptMask.Shape().Dimensions[1], vCache[0].Shape().Dimensions[2]
		h := embed(p, Reshape(token, b, 1))
		cos, sin := ropeCosSin(Reshape(position, b, 1), cfg.HeadDim, cfg.RopeTheta, h.DType())
		// Key slot j is visible if it holds a real prompt token (j < plen),
		// or a generated one: plen ≤ j ≤ slot.
		j := AddScalar(Iota(g, shapesOf(dtypes.Int32, b, smax-plen), 1), plen)
		visible := Reshape(Concatenate([]*Node{isReal(promptMask), LessOrEqual(j, slot)}, 1), b, 1, smax)
		zero := ScalarZero(g, dtypes.Int32)
		var ks, vs []*Node
		for l, lp := range p.layers {
			h = decoderLayer(cfg, lp, h, cos, sin, layout, func(k, v *Node) (*Node, *Node, *Node) {
				v = TransposeAllAxes(v, 0, 2, 1, 3) // [B, nKV, 1, D]
				kAt := []*Node{zero, zero, slot, zero}
				if layout == keysByDim {
					k, kAt = TransposeAllAxes(k, 0, 2, 3, 1), []*Node{zero, zero, zero, slot} // [B, nKV, D, 1]
				} else {
					k = TransposeAllAxes(k, 0, 2, 1, 3) // [B, nKV, 1, D]
				}
				kc := DynamicUpdateSlice(kCache[l], k, kAt)
				vc := DynamicUpdateSlice(vCache[l], v, []*Node{zero, zero, slot, zero})
				ks, vs = append(ks, kc), append(vs, vc)
				return kc, vc, visible
			})
		}
		logits := logitsOf(p, rmsNorm(Squeeze(h, 1), p.norm, cfg.RMSNormEps))
		var temps *Node
		if s.perRow {
			temps = in[n+5+2*L]
		}
		return append(sample(s, logits, rng, temps), append(ks, vs...)...)
	})
	return prefill, decode, err
}

// growTo pads x's axis with zeros up to length s.
func growTo(x *Node, axis, s int) *Node {
	t := x.Shape().Dimensions[axis]
	if t == s {
		return x
	}
	return GrowRight(x, axis, s-t, 0)
}

// positionAxis is the axis of the key positions in keys laid out so.
func positionAxis(layout keyLayout) int {
	if layout == keysByDim {
		return 3
	}
	return 2
}

// sample draws the next token from float32 logits [B, V] and returns
// token [B] int32, its log-probability [B] (temperature-scaled softmax), the
// new RNG state and, with keepLogits, the logits. temps [B], with per-row
// sampling, gives each row's temperature (≤ 0: greedy, log-probability at
// temperature 1).
func sample(s sampling, logits, rng, temps *Node) []*Node {
	g := logits.Graph()
	b, v := logits.Shape().Dimensions[0], logits.Shape().Dimensions[1]
	scaled := logits
	var greedyRow *Node
	switch {
	case s.perRow:
		greedyRow = LessOrEqual(temps, ScalarZero(g, dtypes.Float32))
		eff := Where(greedyRow, OnesLike(temps), temps)
		scaled = Div(logits, BroadcastToShape(Reshape(eff, b, 1), logits.Shape()))
	case s.temperature > 0:
		scaled = DivScalar(logits, s.temperature)
	}
	logProbs := LogSoftmax(scaled, -1)
	var token *Node
	if !s.perRow && s.temperature <= 0 {
		token = ArgMax(logits, -1, dtypes.Int32)
	} else {
		allowed := scaled
		if s.topK > 0 && s.topK < v {
			kth := ReduceAndKeep(topKValues(scaled, s.topK), ReduceMin, -1)
			allowed = Where(GreaterOrEqual(scaled, BroadcastToShape(kth, scaled.Shape())), allowed, FillScalar(g, scaled.Shape(), maskedScore))
		}
		if s.topP > 0 {
			// Keep the most likely tokens until their probability reaches topP:
			// a token is kept if the mass strictly above it is below topP.
			sorted := Sort(allowed, -1, false)
			probs := Softmax(sorted, -1)
			above := Sub(CumSum(probs, -1), probs)
			keep := LessThan(above, Scalar(g, dtypes.Float32, s.topP))
			threshold := ReduceAndKeep(Where(keep, sorted, FillScalar(g, sorted.Shape(), 1e30)), ReduceMin, -1)
			allowed = Where(GreaterOrEqual(allowed, BroadcastToShape(threshold, allowed.Shape())), allowed, FillScalar(g, allowed.Shape(), maskedScore))
		}
		// Gumbel-max: argmax(logits + Gumbel noise) samples softmax(logits).
		var u *Node
		rng, u = RandomUniform(rng, allowed.Shape())
		const tiny = 1e-20
		gumbel := Neg(Log(AddScalar(Neg(Log(AddScalar(u, tiny))), tiny)))
		token = ArgMax(Add(allowed, gumbel), -1, dtypes.Int32)
		if s.perRow {
			token = Where(greedyRow, ArgMax(logits, -1, dtypes.Int32), token)
		}
	}
	logp := Reshape(pick(Reshape(logProbs, b, 1, v), Reshape(token, b, 1)), b)
	out := []*Node{token, logp, rng}
	if s.keepLogits {
		out = append(out, logits)
	}
	return out
}

// topKValues returns the k largest values along the last axis.
func topKValues(x *Node, k int) *Node {
	values, _ := TopK(x, k, -1)
	return values
}
