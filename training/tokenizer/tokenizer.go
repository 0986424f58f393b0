// Package tokenizer implements Qwen's byte-level BPE tokenizer (Qwen2,
// Qwen2.5, Qwen3) from Hugging Face files, with encodings identical to
// Hugging Face's tokenizers library, and renders the Qwen3 chat template.
//
// Encoding follows Hugging Face's pipeline: added tokens (such as
// "<|im_start|>") are matched first as exact strings, the rest is normalized
// (NFC), cut into pre-tokens by Qwen's pattern (a hand-written scanner equal
// to the regex, look-ahead included), mapped to byte-level characters and
// merged by rank. Decoding restores the exact bytes, also across tokens that
// split a multi-byte character (see StreamDecoder). Text that is not valid
// UTF-8 is tokenized losslessly byte by byte.
//
// Unicode versions: letters, numbers, white space and NFC come from Go's
// tables (Unicode 17.0 with Go 1.27 and golang.org/x/text v0.35), Hugging
// Face's from older ones (Oniguruma's regex tables, Unicode 15). About 4,750
// code points assigned in Unicode 16 and 17 — new scripts such as Garay
// (U+10D40…) and Tulu-Tigalari, new CJK and symbols — are letters or numbers
// here and unassigned there, so text containing them can be cut into
// different pre-tokens than Hugging Face cuts it, and tokenize differently.
// Every code point assigned in Unicode 15 or earlier tokenizes identically.
package tokenizer

import (
	"fmt"
	"runtime"
	"strings"
	"sync"

	"golang.org/x/text/unicode/norm"
)

// Tokenizer encodes text to token ids and back. It is safe for concurrent use.
type Tokenizer struct {
	model      *bpe
	splitter   splitter
	normalizer func(string) string // nil: none
	// raw matches added tokens in the input; normalized, those matched after
	// normalization.
	raw, normalized *addedMatcher
	added           map[int32]*AddedToken
	addedByContent  map[string]int32
	vocabSize       int

	// Special ids read from tokenizer_config.json (-1 when unknown).
	eos, pad, bos int32
	chatTemplate  string
	source        string      // where it was loaded from, for messages
	merges        [][2]string // kept for Save
}

// VocabSize is one more than the largest token id (vocabulary and added tokens).
func (t *Tokenizer) VocabSize() int { return t.vocabSize }

// EOS is the end-of-sequence id from tokenizer_config.json (Qwen3:
// <|im_end|>, 151645), or -1.
func (t *Tokenizer) EOS() int32 { return t.eos }

// PAD is the padding id from tokenizer_config.json (Qwen: <|endoftext|>,
// 151643), or -1.
func (t *Tokenizer) PAD() int32 { return t.pad }

// BOS is the beginning-of-sequence id, or -1 (Qwen has none).
func (t *Tokenizer) BOS() int32 { return t.bos }

// ChatTemplate is the Jinja chat template from tokenizer_config.json ("" if none).
func (t *Tokenizer) ChatTemplate() string { return t.chatTemplate }

// TokenToID returns the id of a token: an added token's content, or a
// vocabulary entry in its byte-level form (e.g. "Ġworld").
func (t *Tokenizer) TokenToID(token string) (int32, bool) {
	if id, ok := t.addedByContent[token]; ok {
		return id, true
	}
	id, ok := t.model.vocab[token]
	return id, ok
}

// IDToToken returns the token of an id (byte-level form for vocabulary entries).
func (t *Tokenizer) IDToToken(id int32) (string, bool) {
	if a, ok := t.added[id]; ok {
		return a.Content, true
	}
	if id >= 0 && int(id) < len(t.model.tokens) && t.model.tokens[id] != "" {
		return t.model.tokens[id], true
	}
	return "", false
}

// IsSpecial reports whether id is a special added token.
func (t *Tokenizer) IsSpecial(id int32) bool {
	a, ok := t.added[id]
	return ok && a.Special
}

// Encode returns the token ids of text. Added tokens in the text (such as
// "<|im_start|>") become their ids; no BOS/EOS is added (Qwen adds none).
func (t *Tokenizer) Encode(text string) []int32 {
	return t.AppendEncode(make([]int32, 0, len(text)/3+4), text)
}

// AppendEncode appends the token ids of text to dst.
func (t *Tokenizer) AppendEncode(dst []int32, text string) []int32 {
	var segs [8]segment
	for _, seg := range t.raw.split(text, segs[:0]) {
		if seg.token != nil {
			dst = append(dst, seg.token.ID)
			continue
		}
		s := seg.text
		if t.normalizer != nil {
			s = t.normalizer(s)
		}
		var inner [8]segment
		for _, nseg := range t.normalized.split(s, inner[:0]) {
			if nseg.token != nil {
				dst = append(dst, nseg.token.ID)
				continue
			}
			t.splitter.split(nseg.text, func(start, end int) {
				dst = t.model.encodeWord(dst, nseg.text[start:end])
			})
		}
	}
	return dst
}

// Decode turns ids back into text. Special tokens are kept unless
// skipSpecial; an unknown id is an error.
func (t *Tokenizer) Decode(ids []int32, skipSpecial bool) (string, error) {
	buf := make([]byte, 0, 4*len(ids))
	for i, id := range ids {
		var err error
		if buf, err = t.appendToken(buf, id, skipSpecial); err != nil {
			return "", fmt.Errorf("decode: token %d of %d: %w", i, len(ids), err)
		}
	}
	return string(buf), nil
}

func (t *Tokenizer) appendToken(dst []byte, id int32, skipSpecial bool) ([]byte, error) {
	if a, ok := t.added[id]; ok {
		if a.Special && skipSpecial {
			return dst, nil
		}
		return append(dst, a.Content...), nil
	}
	if id < 0 || int(id) >= len(t.model.tokens) || t.model.tokens[id] == "" {
		return dst, fmt.Errorf("unknown token id %d (vocabulary size %d)", id, t.vocabSize)
	}
	return unByteLevel(dst, t.model.tokens[id]), nil
}

// nfc is the NFC normalizer (as Hugging Face's: see normalize.go); it
// leaves bytes that are not valid UTF-8 alone.
var nfc = normalizer(norm.NFC)

// Side selects where padding goes.
type Side int

// Padding sides: generation pads on the left so that every prompt ends at
// the last position; training usually pads on the right.
const (
	PadRight Side = iota
	PadLeft
)

// BatchOptions configures EncodeBatch.
type BatchOptions struct {
	Side Side
	// PadID pads; 0 means the tokenizer's PAD id.
	PadID int32
	// PadToMultipleOf rounds the padded length up (e.g. 64), so that
	// compiled XLA programs see few distinct shapes.
	PadToMultipleOf int
}

// Batch is a padded batch of encodings.
type Batch struct {
	// IDs has one row per text, all of the same length.
	IDs [][]int32
	// Mask is 1 for real tokens and 0 for padding.
	Mask [][]int32
	// Lengths are the unpadded lengths.
	Lengths []int
}

// EncodeBatch encodes texts in parallel and pads them to a common length.
func (t *Tokenizer) EncodeBatch(texts []string, opts BatchOptions) (Batch, error) {
	pad := opts.PadID
	if pad == 0 {
		pad = t.pad
	}
	if pad < 0 {
		return Batch{}, fmt.Errorf("tokenizer %s has no pad token: set BatchOptions.PadID", t.source)
	}
	encs := make([][]int32, len(texts))
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < min(runtime.GOMAXPROCS(0), len(texts)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				encs[i] = t.Encode(texts[i])
			}
		}()
	}
	for i := range texts {
		next <- i
	}
	close(next)
	wg.Wait()
	return PadBatch(encs, pad, opts.Side, opts.PadToMultipleOf), nil
}

// PadBatch pads encodings to their longest length (rounded up to a multiple
// of multiple when > 0) with pad on the given side.
func PadBatch(encs [][]int32, pad int32, side Side, multiple int) Batch {
	longest := 0
	for _, e := range encs {
		longest = max(longest, len(e))
	}
	if multiple > 0 && longest%multiple != 0 {
		longest += multiple - longest%multiple
	}
	b := Batch{IDs: make([][]int32, len(encs)), Mask: make([][]int32, len(encs)), Lengths: make([]int, len(encs))}
	for i, e := range encs {
		ids, mask := make([]int32, longest), make([]int32, longest)
		off := 0
		if side == PadLeft {
			off = longest - len(e)
		}
		for j := range ids {
			ids[j] = pad
		}
		copy(ids[off:], e)
		for j := off; j < off+len(e); j++ {
			mask[j] = 1
		}
		b.IDs[i], b.Mask[i], b.Lengths[i] = ids, mask, len(e)
	}
	return b
}

// String describes the tokenizer.
func (t *Tokenizer) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "BPE tokenizer from %s: %d tokens (%d added)", t.source, t.vocabSize, len(t.added))
	return b.String()
}
