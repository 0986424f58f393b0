package raft

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func cand(prompt int, text string, reward float64) Candidate {
	return Candidate{Prompt: prompt, PromptID: string(rune('A' + prompt)), Text: text, Reward: reward, Success: reward >= 0.5}
}

func texts(cs []Candidate) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.PromptID + ":" + c.Text
	}
	return out
}

func TestSelect(t *testing.T) {
	cands := []Candidate{
		cand(0, "a1", 1.0), cand(0, "a2", 0.75), cand(0, "a1", 1.0), // duplicate of a1
		cand(0, "a3", 0.5), cand(0, "a4", 0.3), cand(0, "a5", math.NaN()),
		cand(1, "b1", 0.6), cand(1, "b2", 0.2), cand(1, "a1", 0.9), // same text, other prompt: not a duplicate
		cand(2, "c1", 0.1), cand(2, "c2", 0.0),
	}
	tests := []struct {
		name          string
		sel           Selection
		fraction      float64
		keepDup       bool
		unique, above int
		want          []string
	}{
		// above: a1 1.0, b:a1 0.9, a2 0.75, b1 0.6, a3 0.5 → 5; ceil(2.5) = 3.
		{name: "global half", sel: Global, fraction: 0.5, unique: 10, above: 5, want: []string{"A:a1", "B:a1", "A:a2"}},
		{name: "global all", sel: Global, fraction: 1, unique: 10, above: 5, want: []string{"A:a1", "B:a1", "A:a2", "B:b1", "A:a3"}},
		// per prompt: A has a1, a2, a3 → ceil(1.5) = 2; B has a1, b1 → 1; C none.
		{name: "per prompt half", sel: PerPrompt, fraction: 0.5, unique: 10, above: 5, want: []string{"A:a1", "B:a1", "A:a2"}},
		{name: "per prompt small fraction keeps one each", sel: PerPrompt, fraction: 0.1, unique: 10, above: 5, want: []string{"A:a1", "B:a1"}},
		{name: "duplicates kept", sel: Global, fraction: 0.5, keepDup: true, unique: 11, above: 6, want: []string{"A:a1", "A:a1", "B:a1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.Selection, cfg.KeepTopFraction, cfg.KeepDuplicates = tc.sel, tc.fraction, tc.keepDup
			got := Select(cands, cfg, 1)
			if got.Unique != tc.unique || got.AboveThreshold != tc.above {
				t.Errorf("unique %d above %d, want %d %d", got.Unique, got.AboveThreshold, tc.unique, tc.above)
			}
			if !slices.Equal(texts(got.Kept), tc.want) {
				t.Errorf("kept %v, want %v", texts(got.Kept), tc.want)
			}
			for i, k := range got.KeptIndex {
				if c := cands[k]; c.PromptID != got.Kept[i].PromptID || c.Text != got.Kept[i].Text || c.Reward != got.Kept[i].Reward {
					t.Errorf("KeptIndex[%d] = %d is %+v, not the kept %+v", i, k, c, got.Kept[i])
				}
			}
		})
	}
}

// TestSelectTiesAreSeeded: among equal rewards the choice depends on the seed
// only, not on the candidates' order (no position is favoured), and the same
// seed gives the same choice.
func TestSelectTiesAreSeeded(t *testing.T) {
	var cands []Candidate
	for i := 0; i < 20; i++ {
		cands = append(cands, cand(0, strings.Repeat("x", i+1), 1))
	}
	cfg := DefaultConfig()
	first := Select(cands, cfg, 7)
	if len(first.Kept) != 10 {
		t.Fatalf("kept %d of 20 equal candidates, want 10", len(first.Kept))
	}
	if again := Select(cands, cfg, 7); !slices.Equal(texts(again.Kept), texts(first.Kept)) {
		t.Error("same seed, different selection")
	}
	if other := Select(cands, cfg, 8); slices.Equal(texts(other.Kept), texts(first.Kept)) {
		t.Error("another seed chose exactly the same 10 of 20 tied candidates")
	}
	firstHalf := 0
	for _, k := range first.Kept {
		if len(k.Text) <= 10 {
			firstHalf++
		}
	}
	if firstHalf == 10 {
		t.Error("ties resolved by position: the first ten were kept")
	}
}

func TestSelectNothingAbove(t *testing.T) {
	got := Select([]Candidate{cand(0, "a", 0.2), cand(1, "b", 0.49)}, DefaultConfig(), 1)
	if len(got.Kept) != 0 || got.AboveThreshold != 0 || got.Unique != 2 {
		t.Errorf("got %+v", got)
	}
}

func TestHistogram(t *testing.T) {
	got := Histogram([]float64{0, 0.05, 0.1, 0.3, 0.5, 0.55, 0.7, 0.75, 1, 1.5, -0.2, math.NaN()})
	want := []int{3, 1, 0, 1, 0, 2, 0, 2, 0, 2}
	if !slices.Equal(got, want) {
		t.Errorf("histogram %v, want %v", got, want)
	}
}

func TestConfig(t *testing.T) {
	cfg := DefaultConfig()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	if cfg.NumCycles != 3 || cfg.SamplesPerPrompt != 8 || cfg.Temperature != 0.7 || cfg.RewardThreshold != 0.5 ||
		cfg.KeepTopFraction != 0.5 || cfg.LRDecay != 0.85 || cfg.Selection != Global {
		t.Errorf("defaults differ from the reference setup: %+v", cfg)
	}
	if got := cfg.LearningRateAt(2); math.Abs(got-5e-5*0.85*0.85) > 1e-18 {
		t.Errorf("learning rate of cycle 3 = %g", got)
	}
	if cfg.TemperatureAt(2) != 0.7 {
		t.Error("temperature changed without annealing")
	}
	cfg.FinalTemperature = 0.3
	for c, want := range []float64{0.7, 0.5, 0.3} {
		if got := cfg.TemperatureAt(c); math.Abs(got-want) > 1e-12 {
			t.Errorf("annealed temperature of cycle %d = %g, want %g", c, got, want)
		}
	}
	bad := []struct {
		field string
		edit  func(*Config)
	}{
		{"num_cycles", func(c *Config) { c.NumCycles = 0 }},
		{"samples_per_prompt", func(c *Config) { c.SamplesPerPrompt = 0 }},
		{"temperature", func(c *Config) { c.Temperature = -1 }},
		{"keep_top_fraction", func(c *Config) { c.KeepTopFraction = 0 }},
		{"keep_top_fraction", func(c *Config) { c.KeepTopFraction = 1.5 }},
		{"selection", func(c *Config) { c.Selection = "best" }},
		{"learning_rate", func(c *Config) { c.LearningRate = 0 }},
		{"lr_decay", func(c *Config) { c.LRDecay = 1.2 }},
		{"batch_size", func(c *Config) { c.BatchSize = 0 }},
		{"output_dir", func(c *Config) { c.OutputDir = "" }},
		{"precision", func(c *Config) { c.Precision = "fp8" }},
		{"reward_threshold", func(c *Config) { c.RewardThreshold = math.NaN() }},
	}
	for _, b := range bad {
		c := DefaultConfig()
		b.edit(&c)
		err := c.Validate()
		if err == nil || !strings.Contains(err.Error(), b.field) {
			t.Errorf("%s: error %v does not name the field", b.field, err)
		}
	}
}

func TestLoadConfig(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cfg, err := LoadConfig(write("a.yaml", "num_cycles: 5\nselection: per_prompt\nfinal_temperature: 0.3\n"))
	if err != nil || cfg.NumCycles != 5 || cfg.Selection != PerPrompt || cfg.FinalTemperature != 0.3 || cfg.SamplesPerPrompt != 8 {
		t.Errorf("yaml: %+v %v", cfg, err)
	}
	cfg, err = LoadConfig(write("b.json", `{"samples_per_prompt": 4, "keep_top_fraction": 0.25}`))
	if err != nil || cfg.SamplesPerPrompt != 4 || cfg.KeepTopFraction != 0.25 {
		t.Errorf("json: %+v %v", cfg, err)
	}
	for text, want := range map[string]string{
		"num_cycle: 3\n":          "num_cycle",
		"keep_top_fraction: 2\n":  "keep_top_fraction",
		"selection: everything\n": "selection",
	} {
		p := write("bad.yaml", text)
		if _, err := LoadConfig(p); err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), p) {
			t.Errorf("%q: error %v, want one naming %s and the file", text, err, want)
		}
	}
	if _, err := LoadConfig(filepath.Join(dir, "missing.yaml")); err == nil || !strings.Contains(err.Error(), "missing.yaml") {
		t.Errorf("missing file: %v", err)
	}
}
