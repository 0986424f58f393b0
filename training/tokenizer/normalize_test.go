package tokenizer

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"golang.org/x/text/unicode/norm"
)

// NFC and NFKC as Hugging Face's tokenizers compute them, also for runs of
// more than 30 combining marks, where golang.org/x/text inserts U+034F:
// testdata/nfc_golden.json holds 159 such inputs normalized by Python's
// unicodedata (testdata/nfc_golden.py).
func TestNormalizationOfLongMarkRuns(t *testing.T) {
	b, err := os.ReadFile("testdata/nfc_golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct{ Input, NFC, NFKC string }
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatal(err)
	}
	nfkc := normalizer(norm.NFKC)
	long := 0
	for _, c := range cases {
		if hasLongMarkRun(c.Input) {
			long++
		}
		if got := nfc(c.Input); got != c.NFC {
			t.Errorf("NFC(%+q) = %+q, want %+q", c.Input, got, c.NFC)
		}
		if got := nfkc(c.Input); got != c.NFKC {
			t.Errorf("NFKC(%+q) = %+q, want %+q", c.Input, got, c.NFKC)
		}
		if strings.ContainsRune(nfc(c.Input), '\u034f') {
			t.Errorf("NFC(%+q) holds U+034F", c.Input)
		}
	}
	if long < 60 {
		t.Errorf("only %d inputs have a run of more than 30 marks", long)
	}
	t.Logf("%d inputs, %d with a run of more than 30 marks", len(cases), long)
}

// The case on the real Qwen tokenizer: "e" and 31 U+0301 are 31
// tokens, as Hugging Face's tokenizer gives (x/text's stream-safe U+034F
// made 33), and decode back to the NFC text.
func TestQwenLongMarkRun(t *testing.T) {
	tk := qwen(t)
	s := "e" + strings.Repeat("\u0301", 31)
	ids := tk.Encode(s)
	got, err := tk.Decode(ids, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) != 31 || got != norm.NFC.String("e\u0301")+strings.Repeat("\u0301", 30) {
		t.Errorf("%d ids %v, decoded %+q", len(ids), ids, got)
	}
}
