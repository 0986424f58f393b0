package tokenizer

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestTrainBPESaveLoad(t *testing.T) {
	corpus := []string{
		"SELECT count(*) FROM employee WHERE city = 'Oslo'",
		"SELECT name FROM employee ORDER BY salary DESC LIMIT 1",
		"DESCRIBE: employee", "QUERY: SELECT count(*) FROM department", "ANSWER: 42",
		"Table employee (120 rows)\nColumns:\n- id INTEGER, primary key\n- name TEXT",
	}
	specials := []string{"<|endoftext|>", "<|im_start|>", "<|im_end|>", "<think>", "</think>"}
	tk, err := TrainBPE(corpus, TrainOptions{VocabSize: 320, AddedTokens: specials, EOS: "<|im_end|>"})
	if err != nil {
		t.Fatal(err)
	}
	if tk.VocabSize() > 320 || tk.EOS() != int32(tk.VocabSize()-3) || tk.PAD() != int32(tk.VocabSize()-5) {
		t.Fatalf("vocab %d eos %d pad %d", tk.VocabSize(), tk.EOS(), tk.PAD())
	}
	text := "SELECT count(*) FROM employee WHERE salary > 10\n<|im_end|>"
	ids := tk.Encode(text)
	if len(ids) >= len(text)/2 {
		t.Fatalf("merges do not compress the training text: %d ids for %d bytes", len(ids), len(text))
	}
	if got, _ := tk.Decode(ids, false); got != text {
		t.Fatalf("round trip %q", got)
	}
	// Deterministic, and Save → Load gives the same encodings.
	tk2, _ := TrainBPE(corpus, TrainOptions{VocabSize: 320, AddedTokens: specials, EOS: "<|im_end|>"})
	if !reflect.DeepEqual(tk2.Encode(text), ids) {
		t.Fatal("training is not deterministic")
	}
	dir := t.TempDir()
	if err := tk.Save(dir); err != nil {
		t.Fatal(err)
	}
	loaded, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range append(corpus, "unseen wörds 123 🤗", strings.Repeat("ab", 50)) {
		if !reflect.DeepEqual(loaded.Encode(s), tk.Encode(s)) {
			t.Fatalf("saved tokenizer encodes %q differently", s)
		}
	}
	if loaded.EOS() != tk.EOS() || loaded.PAD() != tk.PAD() {
		t.Fatal("special ids lost in Save")
	}
}

// TestTrainBPEPattern: a custom pre-tokenizer pattern cuts the training
// texts and the encodings, and survives Save → Load (tokenizer.json carries
// it). With words split from their leading space or quote, a word is the
// same tokens in every context, which Qwen's pattern does not give.
func TestTrainBPEPattern(t *testing.T) {
	corpus := []string{"How many students come from Oslo?", "QUERY: SELECT count(*) FROM student WHERE home_city = 'Oslo'",
		"home_city\n1. Oslo\n2. Lima", "ANSWER: Oslo", "Students from Lima or Oslo"}
	pattern := `\p{L}+|\p{N}|[^\s\p{L}\p{N}]+|\s+`
	tk, err := TrainBPE(corpus, TrainOptions{VocabSize: 300, AddedTokens: []string{"<|endoftext|>"}, Pattern: pattern})
	if err != nil {
		t.Fatal(err)
	}
	oslo := tk.Encode("Oslo")
	for _, ctx := range []string{" from Oslo?", " = 'Oslo'", "1. Oslo\n", "ANSWER: Oslo"} {
		if !containsRun(tk.Encode(ctx), oslo) {
			t.Errorf("%q: %v does not contain Oslo's tokens %v", ctx, tk.Encode(ctx), oslo)
		}
	}
	qwen, err := TrainBPE(corpus, TrainOptions{VocabSize: 300, AddedTokens: []string{"<|endoftext|>"}})
	if err != nil {
		t.Fatal(err)
	}
	if containsRun(qwen.Encode(" = 'Oslo'"), qwen.Encode("Oslo")) && containsRun(qwen.Encode(" from Oslo"), qwen.Encode("Oslo")) {
		t.Error("Qwen's pattern gives Oslo the same tokens after a space and after a quote: the comparison above proves nothing")
	}
	dir := t.TempDir()
	if err := tk.Save(dir); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, TokenizerJSON))
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		PreTokenizer struct {
			Pretokenizers []struct {
				Pattern map[string]string `json:"pattern"`
			} `json:"pretokenizers"`
		} `json:"pre_tokenizer"`
	}
	if err := json.Unmarshal(b, &file); err != nil || len(file.PreTokenizer.Pretokenizers) == 0 || file.PreTokenizer.Pretokenizers[0].Pattern["Regex"] != pattern {
		t.Fatalf("tokenizer.json pre_tokenizer: %+v (%v)", file.PreTokenizer, err)
	}
	loaded, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range append(corpus, "unseen wörds 123 🤗 'quoted'") {
		if !reflect.DeepEqual(loaded.Encode(s), tk.Encode(s)) {
			t.Fatalf("saved tokenizer encodes %q differently", s)
		}
	}
	if _, err := TrainBPE(corpus, TrainOptions{VocabSize: 300, Pattern: `(`}); err == nil || !strings.Contains(err.Error(), "(") {
		t.Fatalf("bad pattern: %v", err)
	}
}

// containsRun reports whether sub occurs in ids as a contiguous run.
func containsRun(ids, sub []int32) bool {
	for i := 0; i+len(sub) <= len(ids); i++ {
		if reflect.DeepEqual(ids[i:i+len(sub)], sub) {
			return true
		}
	}
	return false
}
