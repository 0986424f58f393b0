package raft

import (
	"context"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gosqlenv/gosqlenv/sqlenv"
	"github.com/gosqlenv/gosqlenv/sqlenv/dataset"
	"github.com/gosqlenv/gosqlenv/sqlenv/dataset/bundled"
	"github.com/gosqlenv/gosqlenv/sqlenv/sqlitedb"
	"github.com/gosqlenv/gosqlenv/training"
	"github.com/gosqlenv/gosqlenv/training/qwen3"
	"github.com/gosqlenv/gosqlenv/training/verify"
)

// scripted is a Generator that writes script(row, prompt text) for each
// prompt, ended by EOS, with log-prob −0.5 per token.
type scripted struct {
	tok    training.ChatTokenizer
	script func(row int, prompt string) string
	mu     sync.Mutex
	rows   int
}

func (s *scripted) Generate(_ context.Context, prompts [][]int32, _ qwen3.GenerateOptions) (*qwen3.Generation, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := &qwen3.Generation{}
	for _, p := range prompts {
		text, err := s.tok.Decode(p, false)
		if err != nil {
			return nil, err
		}
		ids := append(s.tok.Encode(s.script(s.rows, text)), s.tok.EOS())
		s.rows++
		lp := make([]float32, len(ids))
		for i := range lp {
			lp[i] = -0.5
		}
		g.Tokens, g.LogProbs, g.Stopped = append(g.Tokens, ids), append(g.LogProbs, lp), append(g.Stopped, true)
	}
	return g, nil
}

const (
	squareOK    = "```cpp\n#include <iostream>\nint main(){long long n; std::cin >> n; std::cout << n*n << \"\\n\";}\n```"
	squareWrong = "```cpp\n#include <iostream>\nint main(){long long n; std::cin >> n; std::cout << 2*n << \"\\n\";}\n```"
	sumOK       = "```cpp\n#include <iostream>\nint main(){int a, b; std::cin >> a >> b; std::cout << a+b << std::endl;}\n```"
	broken      = "```cpp\nint main( { return }\n```"
)

// TestPromptSourceExecution: single-turn code completions are verified by
// the sandboxed g++ ExecutionVerifier against the tests written in each
// candidate's own prompt, scored on the reward ladder, and turned into
// completion-only training samples.
func TestPromptSourceExecution(t *testing.T) {
	if _, err := exec.LookPath("g++"); err != nil {
		t.Skip("g++ not installed")
	}
	tok := tinyTokenizer(t)
	prompts := []Prompt{
		{ID: "square", Text: "Read n and print n squared.\nExample: input=5, output=25"},
		{ID: "sum", Text: "Read two integers and print their sum.\nInput: 1 2\nOutput: 3"},
	}
	// Rows 0–3 answer "square", rows 4–7 "sum".
	answers := []string{squareOK, squareWrong, broken, squareOK, sumOK, squareOK, broken, sumOK}
	gen := &scripted{tok: tok, script: func(row int, _ string) string { return answers[row] }}
	src := &PromptSource{Model: gen, Tokenizer: tok, Prompts: prompts, Verifier: verify.NewGCCExecutionVerifier(nil), GenerateBatch: 3}
	cands, err := src.Candidates(context.Background(), Request{SamplesPerPrompt: 4, Temperature: 0.7, MaxNewTokens: 64, MaxWorkers: 2})
	if err != nil {
		t.Fatal(err)
	}
	// square: ok 1.0, wrong output 0.5 (compiles, 0 of 1 tests), broken 0, ok 1.0;
	// sum: ok 1.0, the square program reads "1 2" and prints 1 (0.5), broken 0, ok 1.0.
	wantReward := []float64{1, 0.5, 0, 1, 1, 0.5, 0, 1}
	for i, c := range cands {
		if c.Reward != wantReward[i] || c.Success != (wantReward[i] == 1) {
			t.Errorf("row %d (%s): reward %g success %v, want %g (%s)", i, c.PromptID, c.Reward, c.Success, wantReward[i], c.Details)
		}
		if c.Prompt != i/4 || c.PromptID != prompts[i/4].ID || c.Text != answers[i] {
			t.Errorf("row %d: prompt %d %q, text %q", i, c.Prompt, c.PromptID, c.Text)
		}
		s := c.Samples[0]
		trained := 0
		for _, m := range s.Mask {
			trained += int(m)
		}
		if want := len(tok.Encode(answers[i])) + 1; trained != want || s.Mask[0] != 0 || s.Mask[len(s.Mask)-1] != 1 {
			t.Errorf("row %d: %d trained tokens, want the %d completion tokens only", i, trained, want)
		}
	}
	sel := Select(cands, DefaultConfig(), 1)
	// Unique: square has ok twice → 3 unique + sum has ok twice → 3 unique = 6;
	// above 0.5: square ok, wrong; sum ok, square-program → 4; top half → 2 (the two 1.0s).
	if sel.Unique != 6 || sel.AboveThreshold != 4 || len(sel.Kept) != 2 || sel.Kept[0].Reward != 1 || sel.Kept[1].Reward != 1 {
		t.Errorf("selection %d unique, %d above, kept %v", sel.Unique, sel.AboveThreshold, texts(sel.Kept))
	}
}

// TestEnvironmentSource: RAFT on the SQL environment's questions — episodes
// are played through the environment, whose answer check decides
// correctness; kept episodes fine-tune the model on the model's turns only.
func TestEnvironmentSource(t *testing.T) {
	ctx := context.Background()
	paths, err := bundled.Ensure(ctx)
	if err != nil {
		t.Fatal(err)
	}
	qs, err := dataset.Load(ctx, paths.TrainQuestions, dataset.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	qs = qs[:4]
	dbs := sqlenv.OpenDatabases(paths.DBDir, sqlitedb.Limits{})
	defer dbs.Close()
	newEnv := func() (sqlenv.Env, error) {
		return sqlenv.New(sqlenv.Config{Questions: qs, Databases: dbs, StepBudget: 3})
	}
	tok := tinyTokenizer(t)
	gold := map[string]string{}
	for _, q := range qs {
		gold[q.QuestionText] = string(q.GoldAnswer)
	}
	// Even rows answer the gold answer, odd rows a wrong one.
	gen := &scripted{tok: tok, script: func(row int, prompt string) string {
		for question, answer := range gold {
			if strings.Contains(prompt, question) {
				if row%2 == 0 {
					return "ANSWER: " + answer
				}
				return "ANSWER: certainly not this"
			}
		}
		return "ANSWER: ?"
	}}
	roller, err := training.NewRoller(gen, tok, newEnv, training.RolloutConfig{NumGenerations: 1, MaxNewTokens: 32,
		MaxCompletionLength: 256, HistoryPairs: 1, MaxResultChars: 200, Temperature: 1, LengthBucket: 32, SystemPrompt: "Reply ACTION: argument."})
	if err != nil {
		t.Fatal(err)
	}
	ids := training.QuestionIDs(qs)
	src := &EnvironmentSource{Roller: roller, QuestionIDs: ids}
	model := tinyModel(t, tok.VocabSize(), 1)
	cfg := DefaultConfig()
	cfg.NumCycles, cfg.SamplesPerPrompt, cfg.OutputDir, cfg.Precision, cfg.LearningRate = 1, 4, t.TempDir(), "float32", 1e-3
	tr, err := New(cfg, model, src)
	if err != nil {
		t.Fatal(err)
	}
	before := model.Weights()
	hist, err := tr.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	st := hist[0]
	// 4 questions × 4 episodes, half of them correct; duplicates of a
	// question's correct episode collapse to one, so 4 correct unique
	// episodes are above 0.5 and the top half, 2, are kept.
	if st.Total != 16 || st.SuccessRate != 0.5 || st.PromptSuccessRate != 1 || st.Unique != 8 || st.AboveThreshold != 4 || st.Kept != 2 {
		t.Errorf("cycle: %+v", st)
	}
	if st.TrainSequences != 2 || st.TrainSteps != 1 {
		t.Errorf("trained %d sequences in %d steps, want the 2 kept one-turn episodes in 1 step", st.TrainSequences, st.TrainSteps)
	}
	after := model.Weights()
	if equalTensors(before[0], after[0]) {
		t.Error("fine-tuning did not change the embedding")
	}
}

func equalTensors(a, b *tensors.Tensor) bool {
	x, y := tensors.MustCopyFlatData[float32](a), tensors.MustCopyFlatData[float32](b)
	return slices.Equal(x, y)
}
