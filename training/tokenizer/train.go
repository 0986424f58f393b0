package tokenizer

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
)

// TrainOptions configure TrainBPE.
type TrainOptions struct {
	// VocabSize is the target size: 256 byte tokens, then merges, then the
	// added tokens.
	VocabSize int
	// AddedTokens are appended after the merges (e.g. <|endoftext|>,
	// <|im_start|>, <|im_end|>, <think>, </think>); the first is the pad
	// token and EOS names the end-of-sequence token.
	AddedTokens []string
	EOS         string
	// Pattern is the pre-tokenizer's regular expression (Hugging Face's
	// Split, Isolated); "" means QwenPattern. Texts are cut into pre-tokens
	// with it before merging, and the saved tokenizer.json carries it.
	Pattern string
}

// TrainBPE learns a byte-level BPE vocabulary from texts with Qwen's
// pre-tokenizer: starting from the 256 bytes it repeatedly merges the most
// frequent adjacent pair within pre-tokens (ties broken by the pair's text,
// so the result is deterministic). It is meant for small vocabularies — the
// CPU-sized model presets — and produces a tokenizer that loads, encodes and
// saves exactly like a Hugging Face one.
func TrainBPE(texts []string, opts TrainOptions) (*Tokenizer, error) {
	merges := 0
	if opts.VocabSize > 256+len(opts.AddedTokens) {
		merges = opts.VocabSize - 256 - len(opts.AddedTokens)
	}
	pattern := opts.Pattern
	if pattern == "" {
		pattern = QwenPattern
	}
	sp, err := newSplitter(pattern)
	if err != nil {
		return nil, fmt.Errorf("train BPE: %w", err)
	}
	vocab, mergeList := learnMerges(countPreTokens(texts, sp), merges)
	m, err := newBPE(vocab, mergeList, false)
	if err != nil {
		return nil, err
	}
	t := &Tokenizer{model: m, splitter: sp, normalizer: nfc, eos: -1, pad: -1, bos: -1, source: "TrainBPE", merges: mergeList}
	if err := t.addSpecialTokens(opts.AddedTokens, opts.EOS); err != nil {
		return nil, err
	}
	return t, nil
}

// bpeWord is one distinct pre-token while training: its current symbols
// (byte-level characters, merged as training goes) and how often it occurs.
type bpeWord struct {
	syms  []string
	count int
}

// countPreTokens cuts the NFC-normalized texts into pre-tokens and returns
// each distinct one, as byte-level symbols, with its count, sorted by text.
func countPreTokens(texts []string, sp splitter) []bpeWord {
	counts := map[string]int{}
	for _, t := range texts {
		t = nfc(t)
		sp.split(t, func(s, e int) { counts[t[s:e]]++ })
	}
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	words := make([]bpeWord, len(keys))
	for i, k := range keys {
		syms := make([]string, len(k))
		for j := 0; j < len(k); j++ {
			syms[j] = byteChars[k[j]]
		}
		words[i] = bpeWord{syms, counts[k]}
	}
	return words
}

// learnMerges merges the most frequent adjacent pair, up to n times or
// until no pair occurs twice, and returns the vocabulary (the 256 bytes,
// then each new merged symbol) and the merges in order.
func learnMerges(words []bpeWord, n int) (map[string]int32, [][2]string) {
	vocab := map[string]int32{}
	for b := 0; b < 256; b++ {
		vocab[byteChars[b]] = int32(b)
	}
	var merges [][2]string
	for len(merges) < n {
		best, count := mostFrequentPair(words)
		if count < 2 {
			break // nothing repeats any more
		}
		merged := best[0] + best[1]
		if _, dup := vocab[merged]; !dup {
			vocab[merged] = int32(len(vocab))
		}
		merges = append(merges, best)
		for i := range words {
			words[i].syms = applyMerge(words[i].syms, best, merged)
		}
	}
	return vocab, merges
}

// mostFrequentPair returns the adjacent pair of symbols occurring most
// often (ties broken by the pair's text, so training is deterministic) and
// its count.
func mostFrequentPair(words []bpeWord) ([2]string, int) {
	pairs := map[[2]string]int{}
	for _, w := range words {
		for j := 0; j+1 < len(w.syms); j++ {
			pairs[[2]string{w.syms[j], w.syms[j+1]}] += w.count
		}
	}
	var best [2]string
	bestN := 0
	for p, n := range pairs {
		if n > bestN || n == bestN && p[0]+"\x00"+p[1] < best[0]+"\x00"+best[1] {
			best, bestN = p, n
		}
	}
	return best, bestN
}

// applyMerge replaces, left to right, each occurrence of pair in syms by
// merged, in place.
func applyMerge(syms []string, pair [2]string, merged string) []string {
	out := syms[:0]
	for j := 0; j < len(syms); j++ {
		if j+1 < len(syms) && syms[j] == pair[0] && syms[j+1] == pair[1] {
			out = append(out, merged)
			j++
		} else {
			out = append(out, syms[j])
		}
	}
	return out
}

// addSpecialTokens appends the added tokens after the model's vocabulary,
// makes the first one the pad token and eos (when not "") the
// end-of-sequence token.
func (t *Tokenizer) addSpecialTokens(contents []string, eos string) error {
	added := make([]AddedToken, 0, len(contents))
	for i, a := range contents {
		added = append(added, AddedToken{ID: int32(len(t.model.tokens) + i), Content: a, Special: true})
	}
	t.setAdded(added)
	if len(added) > 0 {
		t.pad = added[0].ID
	}
	if eos != "" {
		id, ok := t.addedByContent[eos]
		if !ok {
			return fmt.Errorf("train BPE: EOS %q is not among the added tokens", eos)
		}
		t.eos = id
	}
	return nil
}

// Save writes tokenizer.json (Hugging Face's format: NFC, a Split
// pre-tokenizer with the tokenizer's pattern, ByteLevel, BPE) and tokenizer_config.json (eos, pad and
// added tokens) to dir.
func (t *Tokenizer) Save(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("save tokenizer: %w", err)
	}
	merges := make([]string, len(t.merges))
	for i, m := range t.merges {
		merges[i] = m[0] + " " + m[1]
	}
	var added []AddedToken
	for _, a := range t.added {
		added = append(added, *a)
	}
	sort.Slice(added, func(i, j int) bool { return added[i].ID < added[j].ID })
	byteLevel := map[string]any{"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": false, "use_regex": false}
	file := map[string]any{
		"version": "1.0", "truncation": nil, "padding": nil, "added_tokens": added,
		"normalizer": map[string]any{"type": "NFC"},
		"pre_tokenizer": map[string]any{"type": "Sequence", "pretokenizers": []any{
			map[string]any{"type": "Split", "pattern": map[string]any{"Regex": t.splitter.pattern()}, "behavior": "Isolated", "invert": false},
			byteLevel}},
		"post_processor": byteLevel, "decoder": byteLevel,
		"model": map[string]any{"type": "BPE", "dropout": nil, "unk_token": nil, "continuing_subword_prefix": "",
			"end_of_word_suffix": "", "fuse_unk": false, "byte_fallback": false, "ignore_merges": false,
			"vocab": t.model.vocab, "merges": merges},
	}
	if err := writeJSONFile(filepath.Join(dir, TokenizerJSON), file); err != nil {
		return err
	}
	decoder := map[string]any{}
	for _, a := range added {
		decoder[fmt.Sprint(a.ID)] = map[string]any{"content": a.Content, "special": a.Special, "lstrip": false, "rstrip": false, "normalized": false, "single_word": false}
	}
	cfg := map[string]any{"added_tokens_decoder": decoder, "tokenizer_class": "Qwen2Tokenizer", "model_max_length": 32768}
	if t.eos >= 0 {
		cfg["eos_token"] = t.added[t.eos].Content
	}
	if t.pad >= 0 {
		cfg["pad_token"] = t.added[t.pad].Content
	}
	if t.chatTemplate != "" {
		cfg["chat_template"] = t.chatTemplate
	}
	return writeJSONFile(filepath.Join(dir, TokenizerConfig), cfg)
}

func writeJSONFile(path string, v any) error {
	b, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		return fmt.Errorf("save tokenizer: %w", err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return fmt.Errorf("save tokenizer: %w", err)
	}
	return nil
}
