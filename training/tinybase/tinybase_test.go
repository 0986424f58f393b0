package tinybase_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/gosqlenv/gosqlenv/training/qwen3"
	"github.com/gosqlenv/gosqlenv/training/tinybase"
	"github.com/gosqlenv/gosqlenv/training/tokenizer"
)

// TestDirLoads: the embedded model is written to the cache once, loads as a
// Qwen3 model with its tokenizer, and its provenance says how it was made.
func TestDirLoads(t *testing.T) {
	t.Setenv(tinybase.CacheDirEnv, t.TempDir())
	dir, err := tinybase.Dir()
	if err != nil {
		t.Fatal(err)
	}
	again, err := tinybase.Dir()
	if err != nil || again != dir {
		t.Fatalf("second call: %q, %v (first %q)", again, err, dir)
	}
	for _, f := range []string{"config.json", "model.safetensors", tokenizer.TokenizerJSON, tokenizer.TokenizerConfig, tinybase.ProvenanceFile} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Fatal(err)
		}
	}
	backend, err := qwen3.NewBackend("go")
	if err != nil {
		t.Fatal(err)
	}
	model, _, err := qwen3.LoadModel(context.Background(), backend, dir, qwen3.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tk, err := tokenizer.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if tk.VocabSize() > model.Config.VocabSize || tk.EOS() < 0 {
		t.Fatalf("tokenizer: %d tokens, EOS %d; model vocabulary %d", tk.VocabSize(), tk.EOS(), model.Config.VocabSize)
	}
	prov, err := tinybase.ReadProvenance(dir)
	if err != nil {
		t.Fatal(err)
	}
	emb, err := tinybase.Embedded()
	if err != nil || emb.Command != prov.Command {
		t.Fatalf("embedded provenance %+v, %v", emb.Command, err)
	}
	if prov.Command == "" || prov.Questions == 0 || prov.Samples < prov.Questions || prov.Parameters != model.Config.NumParameters() ||
		len(prov.SeenSQL) == 0 || !slices.IsSorted(prov.SeenSQL) || prov.WallSeconds <= 0 || prov.Machine == "" {
		t.Fatalf("incomplete provenance: %+v", prov)
	}
	// Logits are finite: the weights are a trained model's, not garbage.
	ids := tk.Encode("Question: How many students come from Oslo?")
	logits, err := model.Logits([][]int32{ids})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range logits[0][len(ids)-1] {
		if v != v || v > 1e4 || v < -1e4 {
			t.Fatalf("logit %v", v)
		}
	}
}

// TestDirRewritesIncompleteCopy: a cache folder left incomplete (files
// missing, one truncated) is replaced by a whole copy.
func TestDirRewritesIncompleteCopy(t *testing.T) {
	t.Setenv(tinybase.CacheDirEnv, t.TempDir())
	dir, err := tinybase.Dir()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	// A copy cut short: one file, truncated.
	if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := tinybase.Dir(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "model.safetensors")); err != nil {
		t.Fatalf("incomplete copy left in place: %v", err)
	}
}

func TestSQLKeyAndSeen(t *testing.T) {
	a := tinybase.SQLKey("SELECT count(*)  FROM student\n WHERE home_city = 'Oslo'")
	b := tinybase.SQLKey(" SELECT count(*) FROM student WHERE home_city = 'Oslo' ")
	c := tinybase.SQLKey("SELECT count(*) FROM student WHERE home_city = 'Lima'")
	if a != b || a == c || len(a) != 16 {
		t.Fatalf("keys %q %q %q", a, b, c)
	}
	p := tinybase.Provenance{SeenSQL: []string{a, c}}
	slices.Sort(p.SeenSQL)
	if !p.Seen("SELECT count(*) FROM student WHERE home_city = 'Oslo'") || p.Seen("SELECT 1") {
		t.Fatal("Seen")
	}
}
