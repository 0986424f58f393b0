package training

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/gosqlenv/gosqlenv/sqlenv"
	"github.com/gosqlenv/gosqlenv/sqlenv/dataset"
	"github.com/gosqlenv/gosqlenv/sqlenv/dataset/bundled"
	"github.com/gosqlenv/gosqlenv/sqlenv/sqlitedb"
	"github.com/gosqlenv/gosqlenv/training/qwen3"
	"github.com/gosqlenv/gosqlenv/training/tokenizer"
)

// byteTokenizer is a fake tokenizer: one token per byte (id = byte + 3),
// and three special tokens: 0 pad, 1 eos (<|im_end|>), 2 <|im_start|>.
type byteTokenizer struct{}

func (byteTokenizer) ApplyChatTemplate(msgs []tokenizer.Message, opts tokenizer.ChatOptions) (string, error) {
	return tokenizer.RenderQwen3Chat(msgs, opts)
}

func (byteTokenizer) Encode(text string) []int32 {
	var out []int32
	for len(text) > 0 {
		switch {
		case strings.HasPrefix(text, "<|im_end|>"):
			out, text = append(out, 1), text[len("<|im_end|>"):]
		case strings.HasPrefix(text, "<|im_start|>"):
			out, text = append(out, 2), text[len("<|im_start|>"):]
		default:
			out, text = append(out, int32(text[0])+3), text[1:]
		}
	}
	return out
}

func (byteTokenizer) Decode(ids []int32, skipSpecial bool) (string, error) {
	var b strings.Builder
	for _, id := range ids {
		switch {
		case id == 1 && !skipSpecial:
			b.WriteString("<|im_end|>")
		case id == 2 && !skipSpecial:
			b.WriteString("<|im_start|>")
		case id >= 3:
			b.WriteByte(byte(id - 3))
		}
	}
	return b.String(), nil
}

func (byteTokenizer) EOS() int32 { return 1 }
func (byteTokenizer) PAD() int32 { return 0 }

// scriptedGenerator answers each Generate call from a script: script(call,
// row, prompt) returns the text the "model" writes; it is encoded and ended
// with EOS, with log-prob −0.5 per token.
type scriptedGenerator struct {
	mu     sync.Mutex
	calls  int
	script func(call, row int, prompt string) string
	sizes  []int   // batch size of each call
	seeds  []int64 // sampling seed of each call
	last   qwen3.GenerateOptions
}

func (g *scriptedGenerator) Generate(_ context.Context, prompts [][]int32, opts qwen3.GenerateOptions) (*qwen3.Generation, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	tok := byteTokenizer{}
	gen := &qwen3.Generation{}
	for r, p := range prompts {
		text, _ := tok.Decode(p, false)
		ids := append(tok.Encode(g.script(g.calls, r, text)), tok.EOS())
		if len(ids) > opts.MaxNewTokens {
			ids = ids[:opts.MaxNewTokens]
		}
		lp := make([]float32, len(ids))
		for i := range lp {
			lp[i] = -0.5
		}
		gen.Tokens = append(gen.Tokens, ids)
		gen.LogProbs = append(gen.LogProbs, lp)
		gen.Stopped = append(gen.Stopped, ids[len(ids)-1] == tok.EOS())
	}
	g.sizes, g.seeds = append(g.sizes, len(prompts)), append(g.seeds, opts.Seed)
	g.calls++
	g.last = opts
	return gen, nil
}

// bundledEnv returns the bundled training questions and a factory of
// environments over them.
func bundledEnv(t testing.TB, budget int) ([]dataset.QuestionRecord, func() (sqlenv.Env, error)) {
	t.Helper()
	qs, dbs := bundledTrain(t)
	return qs, func() (sqlenv.Env, error) {
		return sqlenv.New(sqlenv.Config{Questions: qs, Databases: dbs, StepBudget: budget})
	}
}

// bundledTrain returns the bundled training questions and their databases
// (closed when the test ends).
func bundledTrain(t testing.TB) ([]dataset.QuestionRecord, *sqlenv.Databases) {
	t.Helper()
	paths, err := bundled.Ensure(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	qs, err := dataset.Load(context.Background(), paths.TrainQuestions, dataset.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dbs := sqlenv.OpenDatabases(paths.DBDir, sqlitedb.Limits{})
	t.Cleanup(func() { dbs.Close() })
	return qs, dbs
}
