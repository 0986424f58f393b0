// Command copyprobe measures how fast a tiny Qwen3 shape learns to copy a
// constant from the question into its action — the skill a base model needs
// to answer questions it never saw ("How many students enrolled in 2019?" →
// `... WHERE enrollment_year = 2019`), and the one the tiny base models of
// issue 25 lacked.
//
// It trains a randomly initialised model of the given shape on dense
// synthetic samples in the tiny preset's chat format: a question about a
// made-up table that names a constant (one or two words, real or made up,
// or a number), answered by one QUERY whose literal is that constant. Every
// eval_every steps it generates greedily for 64 fixed unseen questions and
// counts the completions whose literal is exactly the question's constant.
// Nothing in it comes from the bundled dataset's question templates.
//
//	GOEXPERIMENT=simd go run ./training/cmd/copyprobe -heads 8 -kv_heads 8 -steps 2000
//
// Results on the developer machine are in BENCHMARKS.md ("Pre-training on
// redrawn instances").
package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"time"

	"github.com/gomlx/compute/dtypes"
	"github.com/gosqlenv/gosqlenv/training"
	"github.com/gosqlenv/gosqlenv/training/optim"
	"github.com/gosqlenv/gosqlenv/training/qwen3"
	"github.com/gosqlenv/gosqlenv/training/tokenizer"
)

func main() {
	if err := run(context.Background(), os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "copyprobe:", err)
		os.Exit(1)
	}
}

// probe is one synthetic question: the chat prompt, the completion the
// model is trained on, and the constant it must copy.
type probe struct{ prompt, completion, constant string }

// templates are question → QUERY pairs over made-up tables; %s is the
// constant, quoted in the SQL unless it is a number.
var templates = []struct{ question, query string }{
	{"How many parcels were sent to %s?", "SELECT count(*) FROM parcel WHERE destination = %s"},
	{"Which pilots fly for the airline %s?", "SELECT p.name FROM pilot AS p JOIN airline AS a ON p.airline_id = a.airline_id WHERE a.name = %s"},
	{"What is the longest river in the region %s?", "SELECT max(length) FROM river WHERE region = %s"},
	{"List the songs recorded in %s.", "SELECT title FROM song WHERE recorded_year = %s"},
	{"Who owns the boat called %s?", "SELECT owner FROM boat WHERE boat_name = %s"},
	{"How many orders did the shop %s receive?", "SELECT count(*) FROM orders AS o JOIN shop AS s ON o.shop_id = s.shop_id WHERE s.name = %s"},
}

// realWords are words the tiny vocabularies hold whole; made-up words are
// split into several tokens.
var realWords = []string{"Brussels", "Stockholm", "Lisbon", "Garcia", "Maria", "Physics", "History", "North", "River", "Green", "Star", "Ocean", "Silver", "Blue", "Elm", "Oak"}

var syllables = []string{"ka", "lo", "mi", "ren", "tu", "vo", "sa", "ber", "ni", "dor", "fa", "gu", "le", "pa", "zi", "mon", "ta", "ri", "shu", "el"}

func word(r *rand.Rand) string {
	if r.IntN(2) == 0 {
		return realWords[r.IntN(len(realWords))]
	}
	var b strings.Builder
	for range 2 + r.IntN(2) {
		b.WriteString(syllables[r.IntN(len(syllables))])
	}
	s := b.String()
	return strings.ToUpper(s[:1]) + s[1:]
}

func newProbe(r *rand.Rand) probe {
	t := templates[r.IntN(len(templates))]
	var constant, literal string
	if strings.Contains(t.question, "recorded in") {
		constant = fmt.Sprint(1900 + r.IntN(200))
		literal = constant
	} else {
		words := make([]string, 1+r.IntN(2))
		for i := range words {
			words[i] = word(r)
		}
		constant = strings.Join(words, " ")
		literal = "'" + constant + "'"
	}
	return probe{
		prompt: "<|im_start|>system\n" + training.TinySystemPrompt + "<|im_end|>\n<|im_start|>user\nQuestion: " + fmt.Sprintf(t.question, constant) +
			"\n\nTables: " + strings.Fields(strings.SplitN(t.query, "FROM ", 2)[1])[0] + "<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n",
		completion: "QUERY: " + fmt.Sprintf(t.query, literal) + "<|im_end|>",
		constant:   literal,
	}
}

func run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("copyprobe", flag.ContinueOnError)
	tokDir := fs.String("tokenizer", "training/tinybase/model", "directory with the vocabulary (tokenizer.json, tokenizer_config.json)")
	layers := fs.Int("layers", 2, "transformer layers")
	heads := fs.Int("heads", 4, "attention (query) heads")
	kvHeads := fs.Int("kv_heads", 2, "key/value heads (a divisor of heads)")
	hidden := fs.Int("hidden", 128, "hidden size (the MLP is 3× wider)")
	steps := fs.Int("steps", 2000, "optimizer steps")
	every := fs.Int("eval_every", 500, "steps between copy measurements")
	batch := fs.Int("batch_size", 16, "samples per step")
	lr := fs.Float64("learning_rate", 2e-3, "peak learning rate (linear decay to 0)")
	seed := fs.Uint64("seed", 1, "initialisation and data seed")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *heads < 1 || *kvHeads < 1 || *heads%*kvHeads != 0 {
		return fmt.Errorf("-heads %d -kv_heads %d: want kv_heads ≥ 1 dividing heads", *heads, *kvHeads)
	}
	if *steps < 1 || *every < 1 || *batch < 1 || *layers < 1 || *hidden < 1 {
		return fmt.Errorf("-steps, -eval_every, -batch_size, -layers and -hidden must be positive")
	}
	tk, err := tokenizer.Load(*tokDir)
	if err != nil {
		return fmt.Errorf("-tokenizer %s: %w", *tokDir, err)
	}
	cfg := training.TinyModelConfig(tk.VocabSize())
	cfg.NumHiddenLayers, cfg.NumAttentionHeads, cfg.NumKeyValueHeads = *layers, *heads, *kvHeads
	cfg.HiddenSize, cfg.IntermediateSize = *hidden, 3**hidden
	backend, err := qwen3.NewBackend("")
	if err != nil {
		return err
	}
	w, err := qwen3.RandomWeights(cfg, *seed, dtypes.Float32)
	if err != nil {
		return err
	}
	model, err := qwen3.New(backend, w)
	if err != nil {
		return err
	}
	learner := training.NewLearner(model, optim.AdamWConfig{Beta1: 0.9, Beta2: 0.999, Epsilon: 1e-8, MaxGradNorm: 1})

	train := rand.New(rand.NewPCG(*seed, 1))
	held := rand.New(rand.NewPCG(*seed, 2))
	tests := make([]probe, 64)
	for i := range tests {
		tests[i] = newProbe(held)
	}
	fmt.Printf("model: %d layers, hidden %d, %d heads / %d key-value heads (head_dim %d), %d parameters\n",
		cfg.NumHiddenLayers, cfg.HiddenSize, cfg.NumAttentionHeads, cfg.NumKeyValueHeads, cfg.HeadDim, cfg.NumParameters())
	start := time.Now()
	var loss float64
	for s := range *steps {
		res, err := learner.NLLStep(probeSamples(train, tk, *batch), 1, 32, optim.LinearSchedule(*lr, s, 0, *steps))
		if err != nil {
			return err
		}
		loss += res.Loss
		if (s+1)%*every == 0 || s+1 == *steps {
			copied, example, err := measure(ctx, model, tk, tests)
			if err != nil {
				return err
			}
			n := (s % *every) + 1
			fmt.Printf("step %5d  %4.0f s  loss %.3f  copied %2d/%d  e.g. %s\n", s+1, time.Since(start).Seconds(), loss/float64(n), copied, len(tests), example)
			loss = 0
		}
	}
	return nil
}

// measure generates greedily for every test question and counts the
// completions whose SQL holds exactly the question's literal; example is
// the first completion that does not (or the first one).
func measure(ctx context.Context, model *qwen3.Model, tk *tokenizer.Tokenizer, tests []probe) (copied int, example string, err error) {
	prompts := make([][]int32, len(tests))
	for i, p := range tests {
		prompts[i] = tk.Encode(p.prompt)
	}
	g, err := model.Generate(ctx, prompts, qwen3.GenerateOptions{MaxNewTokens: 64, StopTokens: []int32{tk.EOS()}, PadID: tk.PAD(), LengthBucket: 32})
	if err != nil {
		return 0, "", err
	}
	for i, toks := range g.Tokens {
		text, err := tk.Decode(toks, true)
		if err != nil {
			return 0, "", err
		}
		if strings.HasSuffix(strings.TrimSpace(text), "= "+tests[i].constant) {
			copied++
		} else if example == "" {
			example = fmt.Sprintf("want %s, wrote %.100q", tests[i].constant, text)
		}
	}
	if example == "" {
		example = fmt.Sprintf("%.100q", strings.TrimSpace(mustDecode(tk, g.Tokens[0])))
	}
	return copied, example, nil
}

func mustDecode(tk *tokenizer.Tokenizer, ids []int32) string {
	s, _ := tk.Decode(ids, true)
	return s
}

// probeSamples draws n training samples: a probe's prompt, then its
// completion, the only tokens trained.
func probeSamples(rng *rand.Rand, tk *tokenizer.Tokenizer, n int) []training.Sample {
	samples := make([]training.Sample, n)
	for i := range samples {
		p := newProbe(rng)
		prompt, completion := tk.Encode(p.prompt), tk.Encode(p.completion)
		ids := append(prompt, completion...)
		mask := make([]int32, len(ids))
		for k := len(prompt); k < len(ids); k++ {
			mask[k] = 1
		}
		samples[i] = training.Sample{IDs: ids, Mask: mask, LogProbs: make([]float32, len(ids))}
	}
	return samples
}
