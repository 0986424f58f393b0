package tokenizer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/text/unicode/norm"
)

// File names of a Hugging Face tokenizer directory.
const (
	TokenizerJSON   = "tokenizer.json"
	VocabJSON       = "vocab.json"
	MergesTXT       = "merges.txt"
	TokenizerConfig = "tokenizer_config.json"
)

// cacheCapacity bounds the per-tokenizer cache of pre-token encodings.
const cacheCapacity = 1 << 16

// Load reads a tokenizer from a directory: tokenizer.json when present,
// else vocab.json and merges.txt (Qwen2Tokenizer's files, with Qwen's
// normalizer and pattern). tokenizer_config.json, when present, gives the
// eos/pad/bos tokens, the chat template and added tokens.
func Load(dir string) (*Tokenizer, error) {
	cfg, err := readConfig(filepath.Join(dir, TokenizerConfig))
	if err != nil {
		return nil, err
	}
	var t *Tokenizer
	if _, err := os.Stat(filepath.Join(dir, TokenizerJSON)); err == nil {
		t, err = loadTokenizerJSON(filepath.Join(dir, TokenizerJSON), cfg)
		if err != nil {
			return nil, err
		}
	} else {
		vocab, merges := filepath.Join(dir, VocabJSON), filepath.Join(dir, MergesTXT)
		for _, f := range []string{vocab, merges} {
			if _, err := os.Stat(f); err != nil {
				return nil, fmt.Errorf("tokenizer: no %s in %s, and %s is missing too", TokenizerJSON, dir, filepath.Base(f))
			}
		}
		t, err = loadVocabMerges(vocab, merges, cfg)
		if err != nil {
			return nil, err
		}
	}
	t.source = dir
	if err := t.applyConfig(cfg); err != nil {
		return nil, err
	}
	return t, nil
}

// tokenizerFile is the part of tokenizer.json this package reads.
type tokenizerFile struct {
	AddedTokens   []AddedToken    `json:"added_tokens"`
	Normalizer    json.RawMessage `json:"normalizer"`
	PreTokenizer  json.RawMessage `json:"pre_tokenizer"`
	PostProcessor json.RawMessage `json:"post_processor"`
	Decoder       json.RawMessage `json:"decoder"`
	Model         struct {
		Type                    string           `json:"type"`
		Vocab                   map[string]int32 `json:"vocab"`
		Merges                  json.RawMessage  `json:"merges"`
		Dropout                 *float64         `json:"dropout"`
		UnkToken                *string          `json:"unk_token"`
		ContinuingSubwordPrefix string           `json:"continuing_subword_prefix"`
		EndOfWordSuffix         string           `json:"end_of_word_suffix"`
		ByteFallback            bool             `json:"byte_fallback"`
		IgnoreMerges            bool             `json:"ignore_merges"`
	} `json:"model"`
}

func loadTokenizerJSON(path string, cfg *configFile) (*Tokenizer, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	var f tokenizerFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("tokenizer: %s is not valid tokenizer JSON: %w", path, err)
	}
	unsupported := func(what string) error {
		return fmt.Errorf("tokenizer: %s: unsupported %s (this package implements byte-level BPE as used by Qwen)", path, what)
	}
	m := f.Model
	switch {
	case m.Type != "BPE":
		return nil, unsupported(fmt.Sprintf("model type %q", m.Type))
	case m.ByteFallback:
		return nil, unsupported("model.byte_fallback")
	case m.Dropout != nil && *m.Dropout > 0:
		return nil, unsupported("model.dropout")
	case m.ContinuingSubwordPrefix != "" || m.EndOfWordSuffix != "":
		return nil, unsupported("continuing_subword_prefix / end_of_word_suffix")
	case len(m.Vocab) == 0:
		return nil, fmt.Errorf("tokenizer: %s: empty model.vocab", path)
	}
	merges, err := parseMerges(m.Merges)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %s: %w", path, err)
	}
	t := &Tokenizer{eos: -1, pad: -1, bos: -1}
	if t.normalizer, err = parseNormalizer(f.Normalizer); err != nil {
		return nil, fmt.Errorf("tokenizer: %s: %w", path, err)
	}
	if t.splitter, err = parsePreTokenizer(f.PreTokenizer); err != nil {
		return nil, fmt.Errorf("tokenizer: %s: %w", path, err)
	}
	if err := checkByteLevel("decoder", f.Decoder, false); err != nil {
		return nil, fmt.Errorf("tokenizer: %s: %w", path, err)
	}
	if err := checkByteLevel("post_processor", f.PostProcessor, true); err != nil {
		return nil, fmt.Errorf("tokenizer: %s: %w", path, err)
	}
	if t.model, err = newBPE(m.Vocab, merges, m.IgnoreMerges); err != nil {
		return nil, fmt.Errorf("tokenizer: %s: %w", path, err)
	}
	t.merges = merges
	t.setAdded(f.AddedTokens)
	return t, nil
}

// parseMerges accepts both forms found on the Hub: "a b" strings and ["a", "b"] pairs.
func parseMerges(raw json.RawMessage) ([][2]string, error) {
	var asStrings []string
	if err := json.Unmarshal(raw, &asStrings); err == nil {
		out := make([][2]string, len(asStrings))
		for i, s := range asStrings {
			a, b, ok := strings.Cut(s, " ")
			if !ok || a == "" || b == "" {
				return nil, fmt.Errorf("merge %d %q is not two tokens separated by a space", i, s)
			}
			out[i] = [2]string{a, b}
		}
		return out, nil
	}
	var pairs [][2]string
	if err := json.Unmarshal(raw, &pairs); err != nil {
		return nil, fmt.Errorf("model.merges is neither a list of \"a b\" strings nor of [a, b] pairs: %w", err)
	}
	return pairs, nil
}

// newBPE builds the model; every merge's parts and result must be in the vocabulary.
func newBPE(vocab map[string]int32, merges [][2]string, ignoreMerges bool) (*bpe, error) {
	m := &bpe{vocab: vocab, merges: make(map[uint64]merge, len(merges)), ignoreMerges: ignoreMerges, cache: newWordCache(cacheCapacity)}
	maxID := int32(-1)
	for tok, id := range vocab {
		if id < 0 {
			return nil, fmt.Errorf("vocabulary entry %q has negative id %d", tok, id)
		}
		maxID = max(maxID, id)
	}
	m.tokens = make([]string, maxID+1)
	for tok, id := range vocab {
		m.tokens[id] = tok
	}
	for b := 0; b < 256; b++ {
		id, ok := vocab[byteChars[b]]
		if !ok {
			return nil, fmt.Errorf("vocabulary lacks the byte-level character %q for byte 0x%02x: not a byte-level BPE vocabulary", byteChars[b], b)
		}
		m.byteIDs[b] = id
	}
	for rank, mg := range merges {
		a, okA := vocab[mg[0]]
		b, okB := vocab[mg[1]]
		merged, okM := vocab[mg[0]+mg[1]]
		if !okA || !okB || !okM {
			return nil, fmt.Errorf("merge %d %q + %q: token not in the vocabulary", rank, mg[0], mg[1])
		}
		key := pairKey(a, b)
		if _, dup := m.merges[key]; !dup { // the first (lowest) rank wins
			m.merges[key] = merge{rank: int32(rank), id: merged}
		}
	}
	return m, nil
}

type typed struct {
	Type string `json:"type"`
}

func parseNormalizer(raw json.RawMessage) (func(string) string, error) {
	if isNull(raw) {
		return nil, nil
	}
	var n struct {
		typed
		Normalizers []json.RawMessage `json:"normalizers"`
	}
	if err := json.Unmarshal(raw, &n); err != nil {
		return nil, fmt.Errorf("normalizer: %w", err)
	}
	switch n.Type {
	case "NFC":
		return nfc, nil
	case "NFD":
		return normalizer(norm.NFD), nil
	case "NFKC":
		return normalizer(norm.NFKC), nil
	case "NFKD":
		return normalizer(norm.NFKD), nil
	case "Lowercase":
		return strings.ToLower, nil
	case "Sequence":
		var fs []func(string) string
		for _, sub := range n.Normalizers {
			f, err := parseNormalizer(sub)
			if err != nil {
				return nil, err
			}
			if f != nil {
				fs = append(fs, f)
			}
		}
		return func(s string) string {
			for _, f := range fs {
				s = f(s)
			}
			return s
		}, nil
	}
	return nil, fmt.Errorf("unsupported normalizer %q (supported: NFC, NFD, NFKC, NFKD, Lowercase, Sequence)", n.Type)
}

// gpt2Pattern is ByteLevel's own pattern (use_regex: true).
const gpt2Pattern = `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`

func parsePreTokenizer(raw json.RawMessage) (splitter, error) {
	if isNull(raw) {
		return nil, errors.New("no pre_tokenizer: a byte-level BPE needs a ByteLevel pre-tokenizer")
	}
	var p struct {
		typed
		Pretokenizers  []json.RawMessage `json:"pretokenizers"`
		Pattern        map[string]string `json:"pattern"`
		Behavior       string            `json:"behavior"`
		Invert         bool              `json:"invert"`
		AddPrefixSpace bool              `json:"add_prefix_space"`
		UseRegex       *bool             `json:"use_regex"`
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, fmt.Errorf("pre_tokenizer: %w", err)
	}
	switch p.Type {
	case "Sequence":
		// The supported shape: Split(pattern, Isolated) then ByteLevel(use_regex=false).
		if len(p.Pretokenizers) == 2 {
			split, err := parseSplit(p.Pretokenizers[0])
			if err != nil {
				return nil, err
			}
			if err := checkByteLevel("pre_tokenizer", p.Pretokenizers[1], false); err != nil {
				return nil, err
			}
			return split, nil
		}
		if len(p.Pretokenizers) == 1 {
			return parsePreTokenizer(p.Pretokenizers[0])
		}
		return nil, fmt.Errorf("unsupported pre_tokenizer Sequence of %d steps (supported: Split then ByteLevel)", len(p.Pretokenizers))
	case "ByteLevel":
		if p.AddPrefixSpace {
			return nil, errors.New("unsupported pre_tokenizer ByteLevel with add_prefix_space")
		}
		if p.UseRegex == nil || *p.UseRegex {
			return newSplitter(gpt2Pattern)
		}
		return nil, errors.New("unsupported pre_tokenizer: ByteLevel without a regex and without a Split")
	}
	return nil, fmt.Errorf("unsupported pre_tokenizer %q (supported: Sequence[Split, ByteLevel], ByteLevel)", p.Type)
}

func parseSplit(raw json.RawMessage) (splitter, error) {
	var s struct {
		typed
		Pattern  map[string]string `json:"pattern"`
		Behavior string            `json:"behavior"`
		Invert   bool              `json:"invert"`
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("pre_tokenizer Split: %w", err)
	}
	if s.Type != "Split" {
		return nil, fmt.Errorf("unsupported pre_tokenizer step %q (supported: Split then ByteLevel)", s.Type)
	}
	if s.Behavior != "Isolated" || s.Invert {
		return nil, fmt.Errorf("unsupported Split behavior %q (invert %v): only Isolated", s.Behavior, s.Invert)
	}
	if re, ok := s.Pattern["Regex"]; ok {
		return newSplitter(re)
	}
	if lit, ok := s.Pattern["String"]; ok {
		return newSplitter(regexpQuote(lit))
	}
	return nil, errors.New("pre_tokenizer Split has no pattern")
}

func regexpQuote(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`\.+*?()|[]{}^$#&-~ `, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// checkByteLevel accepts a ByteLevel component (or null when allowNull).
func checkByteLevel(what string, raw json.RawMessage, allowNull bool) error {
	if isNull(raw) {
		if allowNull {
			return nil
		}
		return fmt.Errorf("no %s: a byte-level BPE needs ByteLevel", what)
	}
	var p struct {
		typed
		AddPrefixSpace bool `json:"add_prefix_space"`
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if p.Type != "ByteLevel" {
		return fmt.Errorf("unsupported %s %q (supported: ByteLevel)", what, p.Type)
	}
	if p.AddPrefixSpace && what == "pre_tokenizer" {
		return fmt.Errorf("unsupported %s ByteLevel with add_prefix_space", what)
	}
	return nil
}

func isNull(raw json.RawMessage) bool {
	return len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null"
}

// loadVocabMerges builds Qwen2Tokenizer's pipeline from vocab.json and merges.txt.
func loadVocabMerges(vocabPath, mergesPath string, cfg *configFile) (*Tokenizer, error) {
	data, err := os.ReadFile(vocabPath)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	var vocab map[string]int32
	if err := json.Unmarshal(data, &vocab); err != nil {
		return nil, fmt.Errorf("tokenizer: %s is not a JSON object of token ids: %w", vocabPath, err)
	}
	data, err = os.ReadFile(mergesPath)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	var merges [][2]string
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimRight(line, "\r")
		if line == "" || (i == 0 && strings.HasPrefix(line, "#version")) {
			continue
		}
		a, b, ok := strings.Cut(line, " ")
		if !ok || a == "" || b == "" {
			return nil, fmt.Errorf("tokenizer: %s line %d %q is not two tokens separated by a space", mergesPath, i+1, line)
		}
		merges = append(merges, [2]string{a, b})
	}
	m, err := newBPE(vocab, merges, false)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %s / %s: %w", vocabPath, mergesPath, err)
	}
	sp, _ := newSplitter(QwenPattern)
	t := &Tokenizer{model: m, splitter: sp, normalizer: nfc, eos: -1, pad: -1, bos: -1, merges: merges}
	t.setAdded(nil)
	return t, nil
}

// setAdded installs the added tokens and the vocabulary size.
func (t *Tokenizer) setAdded(tokens []AddedToken) {
	t.added = map[int32]*AddedToken{}
	t.addedByContent = map[string]int32{}
	var raw, normalized []AddedToken
	t.vocabSize = len(t.model.tokens)
	for i := range tokens {
		a := tokens[i]
		t.added[a.ID] = &a
		t.addedByContent[a.Content] = a.ID
		if a.Normalized {
			normalized = append(normalized, a)
		} else {
			raw = append(raw, a)
		}
		t.vocabSize = max(t.vocabSize, int(a.ID)+1)
	}
	t.raw, t.normalized = newAddedMatcher(raw), newAddedMatcher(normalized)
}

// configFile is the part of tokenizer_config.json this package reads.
type configFile struct {
	path               string
	EOS, PAD, BOS      tokenRef
	ChatTemplate       json.RawMessage
	AddedTokensDecoder map[string]AddedToken
}

// tokenRef is a token named in tokenizer_config.json: a string or {"content": …}.
type tokenRef string

// UnmarshalJSON reads either form; null leaves the reference empty.
func (r *tokenRef) UnmarshalJSON(b []byte) error {
	if isNull(b) {
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*r = tokenRef(s)
		return nil
	}
	var obj struct {
		Content string `json:"content"`
	}
	if err := json.Unmarshal(b, &obj); err != nil {
		return err
	}
	*r = tokenRef(obj.Content)
	return nil
}

func readConfig(path string) (*configFile, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	var c struct {
		EOS                tokenRef              `json:"eos_token"`
		PAD                tokenRef              `json:"pad_token"`
		BOS                tokenRef              `json:"bos_token"`
		ChatTemplate       json.RawMessage       `json:"chat_template"`
		AddedTokensDecoder map[string]AddedToken `json:"added_tokens_decoder"`
	}
	if err := json.Unmarshal(data, &c); err != nil {
		return nil, fmt.Errorf("tokenizer: %s is not valid JSON: %w", path, err)
	}
	return &configFile{path: path, EOS: c.EOS, PAD: c.PAD, BOS: c.BOS, ChatTemplate: c.ChatTemplate, AddedTokensDecoder: c.AddedTokensDecoder}, nil
}

// applyConfig reads special tokens, added tokens and the chat template.
func (t *Tokenizer) applyConfig(cfg *configFile) error {
	if cfg == nil {
		return nil
	}
	// Added tokens declared only in tokenizer_config.json (vocab.json + merges.txt setups).
	var extra []AddedToken
	for idText, a := range cfg.AddedTokensDecoder {
		var id int32
		if _, err := fmt.Sscan(idText, &id); err != nil {
			return fmt.Errorf("tokenizer: %s: added_tokens_decoder key %q is not a token id", cfg.path, idText)
		}
		if _, ok := t.added[id]; !ok {
			a.ID = id
			extra = append(extra, a)
		}
	}
	if len(extra) > 0 {
		all := extra
		for _, a := range t.added {
			all = append(all, *a)
		}
		t.setAdded(all)
	}
	for _, s := range []struct {
		ref  tokenRef
		dst  *int32
		name string
	}{{cfg.EOS, &t.eos, "eos_token"}, {cfg.PAD, &t.pad, "pad_token"}, {cfg.BOS, &t.bos, "bos_token"}} {
		if s.ref == "" {
			continue
		}
		id, ok := t.TokenToID(string(s.ref))
		if !ok {
			return fmt.Errorf("tokenizer: %s: %s %q is not a token of the vocabulary", cfg.path, s.name, s.ref)
		}
		*s.dst = id
	}
	if !isNull(cfg.ChatTemplate) {
		var tmpl string
		if err := json.Unmarshal(cfg.ChatTemplate, &tmpl); err != nil {
			var named []struct{ Name, Template string }
			if err := json.Unmarshal(cfg.ChatTemplate, &named); err != nil {
				return fmt.Errorf("tokenizer: %s: chat_template is neither a string nor a list of named templates", cfg.path)
			}
			for _, n := range named {
				if n.Name == "default" {
					tmpl = n.Template
				}
			}
		}
		t.chatTemplate = tmpl
	}
	return nil
}
