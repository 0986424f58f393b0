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
// With -task names it measures the other half of reading a schema: copying
// a listed table name into a DESCRIBE. A question asks about one kind of
// thing; the table list names 4–6 kinds with made-up affixes (or none) in
// one case style; the answer is "DESCRIBE: <the listed name>". The tests
// count exact copies of names whose affixes are real words no training
// name has (prefixes apart from suffixes: a prefix must be written before
// the part of the name the question points at) and of names of kinds no
// training question asks about. Three levers try to teach that copying:
// -list_share mixes in a dense lesson (re-write the whole table list; its
// tests re-write lists of held-out names), -curriculum_steps grows the lists
// from one name to six, and -vocab/-pattern learn the probe's own vocabulary
// with another pre-tokenizer (e.g. one that keeps a name's words whole).
//
//	GOEXPERIMENT=simd go run ./training/cmd/copyprobe -heads 8 -kv_heads 8 -steps 2000
//	GOEXPERIMENT=simd go run ./training/cmd/copyprobe -task names -heads 8 -kv_heads 8 -tokenizer <dir>
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
	"slices"
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
// model is trained on, and the text its completion must end with (the
// constant copied, or the table name copied); kind groups the results.
type probe struct{ prompt, completion, want, kind string }

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
		prompt:     chatPrompt(fmt.Sprintf(t.question, constant), strings.Fields(strings.SplitN(t.query, "FROM ", 2)[1])[0]),
		completion: "QUERY: " + fmt.Sprintf(t.query, literal) + "<|im_end|>",
		want:       "= " + literal,
		kind:       "constant",
	}
}

// chatPrompt is the tiny preset's chat prompt for a question and its table
// list, up to the assistant's (empty) think block.
func chatPrompt(question, tables string) string {
	return "<|im_start|>system\n" + training.TinySystemPrompt + "<|im_end|>\n<|im_start|>user\nQuestion: " + question +
		"\n\nTables: " + tables + "<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n"
}

// options are the command's flags.
type options struct {
	tokDir, task, pattern, affixes         string
	layers, heads, kvHeads, hidden         int
	steps, every, batch, curriculum, vocab int
	lr, listShare                          float64
	seed                                   uint64
	styles                                 []string
}

// parse reads and checks the flags.
func parse(args []string) (options, error) {
	var o options
	fs := flag.NewFlagSet("copyprobe", flag.ContinueOnError)
	fs.StringVar(&o.tokDir, "tokenizer", "training/tinybase/model", "directory with the vocabulary (tokenizer.json, tokenizer_config.json)")
	fs.IntVar(&o.layers, "layers", 2, "transformer layers")
	fs.IntVar(&o.heads, "heads", 4, "attention (query) heads")
	fs.IntVar(&o.kvHeads, "kv_heads", 2, "key/value heads (a divisor of heads)")
	fs.IntVar(&o.hidden, "hidden", 128, "hidden size (the MLP is 3× wider)")
	fs.IntVar(&o.steps, "steps", 2000, "optimizer steps")
	fs.IntVar(&o.every, "eval_every", 500, "steps between copy measurements")
	fs.IntVar(&o.batch, "batch_size", 16, "samples per step")
	fs.Float64Var(&o.lr, "learning_rate", 2e-3, "peak learning rate (linear decay to 0)")
	fs.Uint64Var(&o.seed, "seed", 1, "initialisation and data seed")
	fs.StringVar(&o.task, "task", "constants", "constants: copy a question's constant into a QUERY; names: copy a listed table name into a DESCRIBE")
	fs.IntVar(&o.curriculum, "curriculum_steps", 0, "names task: over this many first steps the table lists grow from 1 name to 6 (0: 4–6 from the start)")
	fs.Float64Var(&o.listShare, "list_share", 0, "names task: the share of training samples that copy the whole table list (\"Which tables are there?\" → \"TABLES: <the list>\"), a dense copying lesson")
	styleList := fs.String("name_styles", strings.Join(caseStyles, ","), "names task: the case styles of the names (snake, lower, camel, pascal), comma-separated")
	fs.StringVar(&o.affixes, "affixes", "syllables", "names task: the training names' made-up affixes: syllables (one or two), or letters (half of them 2–8 random letters)")
	fs.IntVar(&o.vocab, "vocab", 0, "when > 0, learn a BPE vocabulary of this size from 20,000 training samples instead of loading -tokenizer")
	fs.StringVar(&o.pattern, "pattern", "", "with -vocab: the pre-tokenizer's regular expression (\"\" is Qwen's)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	for _, s := range strings.Split(*styleList, ",") {
		if s = strings.TrimSpace(s); !slices.Contains(caseStyles, s) {
			return o, fmt.Errorf("-name_styles %q: %q is not one of %v", *styleList, s, caseStyles)
		}
		o.styles = append(o.styles, s)
	}
	switch {
	case o.listShare < 0 || o.listShare > 1 || (o.listShare > 0 && o.task != "names"):
		return o, fmt.Errorf("-list_share %g: want a share in [0, 1], with -task names", o.listShare)
	case o.affixes != "syllables" && o.affixes != "letters":
		return o, fmt.Errorf("-affixes %q: want syllables or letters", o.affixes)
	case o.curriculum < 0 || (o.curriculum > 0 && o.task != "names"):
		return o, fmt.Errorf("-curriculum_steps %d: want 0 or more steps, with -task names", o.curriculum)
	case o.heads < 1 || o.kvHeads < 1 || o.heads%o.kvHeads != 0:
		return o, fmt.Errorf("-heads %d -kv_heads %d: want kv_heads ≥ 1 dividing heads", o.heads, o.kvHeads)
	case o.steps < 1 || o.every < 1 || o.batch < 1 || o.layers < 1 || o.hidden < 1:
		return o, fmt.Errorf("-steps, -eval_every, -batch_size, -layers and -hidden must be positive")
	}
	return o, nil
}

func run(ctx context.Context, args []string) error {
	o, err := parse(args)
	if err != nil {
		return err
	}
	defer func() { trainAffix = madeUp }()
	if o.affixes == "letters" {
		trainAffix = func(r *rand.Rand) string {
			if r.IntN(2) == 0 {
				return randomLetters(r)
			}
			return madeUp(r)
		}
	}
	maxNames := 0 // the curriculum's cap on listed names (0: none)
	draw, tests, err := probeTask(o.task, o.seed, o.styles, &maxNames)
	if err != nil {
		return err
	}
	if o.listShare > 0 {
		held := rand.New(rand.NewPCG(o.seed, 4))
		for i := range 32 {
			tests = append(tests, newListProbe(held, []nameTest{namesNewPrefix, namesNewSuffix}[i%2], o.styles, 0))
		}
		selective := draw
		draw = func(r *rand.Rand) probe {
			if r.Float64() < o.listShare {
				return newListProbe(r, namesTrain, o.styles, maxNames)
			}
			return selective(r)
		}
	}
	tk, err := probeTokenizer(o.tokDir, o.vocab, o.pattern, o.seed, draw)
	if err != nil {
		return err
	}
	cfg := training.TinyModelConfig(tk.VocabSize())
	cfg.NumHiddenLayers, cfg.NumAttentionHeads, cfg.NumKeyValueHeads = o.layers, o.heads, o.kvHeads
	cfg.HiddenSize, cfg.IntermediateSize = o.hidden, 3*o.hidden
	backend, err := qwen3.NewBackend("")
	if err != nil {
		return err
	}
	w, err := qwen3.RandomWeights(cfg, o.seed, dtypes.Float32)
	if err != nil {
		return err
	}
	model, err := qwen3.New(backend, w)
	if err != nil {
		return err
	}
	fmt.Printf("model: %d layers, hidden %d, %d heads / %d key-value heads (head_dim %d), %d parameters\n",
		cfg.NumHiddenLayers, cfg.HiddenSize, cfg.NumAttentionHeads, cfg.NumKeyValueHeads, cfg.HeadDim, cfg.NumParameters())
	fmt.Printf("vocabulary: %d tokens; tests' completions as tokens:\n", tk.VocabSize())
	for i := 0; i < len(tests); i += 32 {
		fmt.Printf("  %s\n", showTokens(tk, tests[i].want))
	}
	return train(ctx, o, model, tk, draw, tests, &maxNames)
}

// train runs the optimizer steps, measuring the copies every o.every steps;
// it sets the curriculum's cap on listed names before each step.
func train(ctx context.Context, o options, model *qwen3.Model, tk *tokenizer.Tokenizer, draw func(*rand.Rand) probe, tests []probe, maxNames *int) error {
	learner := training.NewLearner(model, optim.AdamWConfig{Beta1: 0.9, Beta2: 0.999, Epsilon: 1e-8, MaxGradNorm: 1})
	data := rand.New(rand.NewPCG(o.seed, 1))
	start := time.Now()
	var loss float64
	for s := range o.steps {
		if *maxNames = 0; s < o.curriculum {
			*maxNames = 1 + 5*s/o.curriculum
		}
		res, err := learner.NLLStep(probeSamples(data, tk, o.batch, draw), 1, 32, optim.LinearSchedule(o.lr, s, 0, o.steps))
		if err != nil {
			return err
		}
		loss += res.Loss
		if (s+1)%o.every == 0 || s+1 == o.steps {
			copied, example, err := measure(ctx, model, tk, tests)
			if err != nil {
				return err
			}
			n := (s % o.every) + 1
			fmt.Printf("step %5d  %4.0f s  loss %.3f  copied %s  e.g. %s\n", s+1, time.Since(start).Seconds(), loss/float64(n), copied, example)
			loss = 0
		}
	}
	return nil
}

// probeTokenizer loads the vocabulary in dir, or with vocab > 0 learns one
// of that size from 20,000 training samples (their own random stream).
func probeTokenizer(dir string, vocab int, pattern string, seed uint64, draw func(*rand.Rand) probe) (*tokenizer.Tokenizer, error) {
	if vocab <= 0 {
		tk, err := tokenizer.Load(dir)
		if err != nil {
			return nil, fmt.Errorf("-tokenizer %s: %w", dir, err)
		}
		return tk, nil
	}
	r := rand.New(rand.NewPCG(seed, 3))
	texts := make([]string, 20000)
	for i := range texts {
		p := draw(r)
		texts[i] = p.prompt + p.completion
	}
	tk, err := tokenizer.TrainBPE(texts, tokenizer.TrainOptions{VocabSize: vocab,
		AddedTokens: training.TinyAddedTokens, EOS: "<|im_end|>", Pattern: pattern})
	if err != nil {
		return nil, fmt.Errorf("-vocab %d -pattern %q: %w", vocab, pattern, err)
	}
	return tk, nil
}

// probeTask returns the training probes' drawer of a task and its fixed
// test probes (drawn from their own stream): 64 constants, or 32 names of
// each kind of test.
func probeTask(task string, seed uint64, styles []string, maxNames *int) (draw func(*rand.Rand) probe, tests []probe, err error) {
	held := rand.New(rand.NewPCG(seed, 2))
	switch task {
	case "constants":
		for range 64 {
			tests = append(tests, newProbe(held))
		}
		return newProbe, tests, nil
	case "names":
		for _, t := range []nameTest{namesTrain, namesNewPrefix, namesNewSuffix, namesNewNoun} {
			for range 32 {
				tests = append(tests, newNameProbe(held, t, styles, 0))
			}
		}
		return func(r *rand.Rand) probe { return newNameProbe(r, namesTrain, styles, *maxNames) }, tests, nil
	}
	return nil, nil, fmt.Errorf("-task %q: want constants or names", task)
}

// copiedOK says whether a completion's text copied what the probe wants:
// a QUERY ending with the constant, or exactly the DESCRIBE of the name.
func (p probe) copiedOK(text string) bool {
	text = strings.TrimSpace(text)
	if p.kind == "constant" {
		return strings.HasSuffix(text, p.want)
	}
	return text == p.want
}

// measure generates greedily for every test question and counts, per kind
// of probe, the completions that copied what they had to; example is the
// first completion that did not (or the first one).
func measure(ctx context.Context, model *qwen3.Model, tk *tokenizer.Tokenizer, tests []probe) (copied string, example string, err error) {
	prompts := make([][]int32, len(tests))
	for i, p := range tests {
		prompts[i] = tk.Encode(p.prompt)
	}
	g, err := model.Generate(ctx, prompts, qwen3.GenerateOptions{MaxNewTokens: 64, StopTokens: []int32{tk.EOS()}, PadID: tk.PAD(), LengthBucket: 32})
	if err != nil {
		return "", "", err
	}
	var kinds []string
	right, total := map[string]int{}, map[string]int{}
	for i, toks := range g.Tokens {
		text, err := tk.Decode(toks, true)
		if err != nil {
			return "", "", err
		}
		k := tests[i].kind
		if total[k] == 0 {
			kinds = append(kinds, k)
		}
		total[k]++
		if tests[i].copiedOK(text) {
			right[k]++
		} else if example == "" {
			example = fmt.Sprintf("want %s, wrote %.100q", tests[i].want, text)
		}
	}
	var parts []string
	for _, k := range kinds {
		parts = append(parts, fmt.Sprintf("%s %d/%d", k, right[k], total[k]))
	}
	copied = strings.Join(parts, ", ")
	if example == "" {
		example = fmt.Sprintf("%.100q", strings.TrimSpace(mustDecode(tk, g.Tokens[0])))
	}
	return copied, example, nil
}

// showTokens is text cut into its tokens, each quoted.
func showTokens(tk *tokenizer.Tokenizer, text string) string {
	var parts []string
	for _, id := range tk.Encode(text) {
		parts = append(parts, fmt.Sprintf("%q", mustDecode(tk, []int32{id})))
	}
	return strings.Join(parts, " ")
}

func mustDecode(tk *tokenizer.Tokenizer, ids []int32) string {
	s, _ := tk.Decode(ids, true)
	return s
}

// probeSamples draws n training samples: a probe's prompt, then its
// completion, the only tokens trained.
func probeSamples(rng *rand.Rand, tk *tokenizer.Tokenizer, n int, draw func(*rand.Rand) probe) []training.Sample {
	samples := make([]training.Sample, n)
	for i := range samples {
		p := draw(rng)
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

// The names task: a question about one kind of thing, the table list of a
// database whose names carry affixes in a case style, and the answer
// "DESCRIBE: <the listed name>" — the first step of an agent that reads the
// schema it is shown. Training names carry made-up affixes (or none);
// the tests carry affixes that are real words no training name has
// ("sys", "ledger"), or name kinds of things no training question asks
// about, so that only copying the listed name gets them right.

// trainNouns are the kinds of things of the training questions; newNouns
// are kinds no training question names.
var (
	trainNouns = []string{"parcel", "pilot", "airline", "river", "song", "boat", "shop", "order", "customer", "invoice",
		"driver", "truck", "garden", "plant", "farmer", "harvest", "museum", "painting", "artist", "visitor", "hotel",
		"room", "guest", "school", "teacher", "pupil", "lesson", "clinic", "nurse", "ward", "bakery", "recipe", "oven",
		"supplier", "factory", "machine", "worker", "shift", "station", "engine", "bridge", "tower", "village", "island",
		"planet", "comet", "sensor", "device", "server", "cable", "bottle", "crate", "barrel", "wagon", "saddle", "horse"}
	newNouns = []string{"movie", "actor", "account", "vehicle", "rental", "paper", "researcher", "conference", "cinema",
		"screening", "director", "locker"}
	// heldoutPrefixes and heldoutSuffixes are the tests' affixes: words,
	// unlike the made-up training affixes.
	heldoutPrefixes = []string{"core", "sys", "dim", "src"}
	heldoutSuffixes = []string{"registry", "ledger", "master", "catalog", "vault"}
	questionFrames  = []string{"How many %s are there?", "List every %s.", "Which %s has the highest value?", "Show the details of the %s."}
)

// plural is the English plural of a lower-case noun (regular forms).
func plural(w string) string {
	switch {
	case strings.HasSuffix(w, "y") && !strings.ContainsRune("aeiou", rune(w[len(w)-2])):
		return w[:len(w)-1] + "ies"
	case strings.HasSuffix(w, "s"), strings.HasSuffix(w, "x"), strings.HasSuffix(w, "ch"), strings.HasSuffix(w, "sh"):
		return w + "es"
	}
	return w + "s"
}

// trainAffix draws the made-up affixes of training names: madeUp, or with
// -affixes letters, half of them randomLetters.
var trainAffix = madeUp

// randomLetters is 2–8 random lower-case letters: an affix the vocabulary
// cuts into arbitrary pieces, as it cuts names it never learned (the tests'
// affixes have up to 8 letters).
func randomLetters(r *rand.Rand) string {
	b := make([]byte, 2+r.IntN(7))
	for i := range b {
		b[i] = byte('a' + r.IntN(26))
	}
	return string(b)
}

// madeUp is a lower-case made-up affix of one or two syllables.
func madeUp(r *rand.Rand) string {
	var b strings.Builder
	for range 1 + r.IntN(2) {
		b.WriteString(syllables[r.IntN(len(syllables))])
	}
	return b.String()
}

// joinName joins lower-case words in a case style (caseStyles): snake_case,
// lowercase, camelCase, PascalCase.
func joinName(words []string, style string) string {
	var b strings.Builder
	for i, w := range words {
		switch {
		case style == "snake" && i > 0:
			b.WriteString("_" + w)
		case style == "pascal" || (style == "camel" && i > 0):
			b.WriteString(strings.ToUpper(w[:1]) + w[1:])
		default:
			b.WriteString(w)
		}
	}
	return b.String()
}

// nameTest says what a names probe's table list is made of: the training
// distribution, or one of the tests.
type nameTest int

const (
	namesTrain     nameTest = iota // training nouns, made-up affixes or none
	namesNewPrefix                 // training nouns, held-out word prefixes
	namesNewSuffix                 // training nouns, held-out word suffixes
	namesNewNoun                   // nouns no training question has, held-out affixes or none
)

func (t nameTest) String() string {
	return [...]string{"train", "new-prefix", "new-suffix", "new-noun"}[t]
}

// caseStyles are joinName's case styles.
var caseStyles = []string{"snake", "lower", "camel", "pascal"}

// newNameProbe draws a question about one table of a list of 4–6, its
// names in one of styles (caseStyles).
func newNameProbe(r *rand.Rand, test nameTest, styles []string, maxNames int) probe {
	nouns := trainNouns
	if test == namesNewNoun {
		nouns = newNouns
	}
	names, picked := nameList(r, test, nouns, styles, maxNames)
	target := r.IntN(len(picked))
	question := fmt.Sprintf(questionFrames[r.IntN(len(questionFrames))], nouns[picked[target]])
	if strings.HasPrefix(question, "How many") || strings.HasPrefix(question, "List") {
		question = strings.Replace(question, nouns[picked[target]], plural(nouns[picked[target]]), 1)
	}
	name := names[target]
	slices.Sort(names) // the environment lists tables in order
	return probe{
		prompt:     chatPrompt(question, strings.Join(names, ", ")),
		completion: "DESCRIBE: " + name + "<|im_end|>",
		want:       "DESCRIBE: " + name,
		kind:       test.String(),
	}
}

// newListProbe draws a table list of the kind test says and asks for all
// of it: the completion re-writes every listed name in order.
func newListProbe(r *rand.Rand, test nameTest, styles []string, maxNames int) probe {
	names, _ := nameList(r, test, trainNouns, styles, maxNames)
	slices.Sort(names)
	list := strings.Join(names, ", ")
	return probe{
		prompt:     chatPrompt("Which tables are there?", list),
		completion: "TABLES: " + list + "<|im_end|>",
		want:       "TABLES: " + list,
		kind:       "list-" + test.String(),
	}
}

// nameList draws 4–6 of nouns (their indices in picked; at most maxNames
// when it is positive), each singular or plural, with an affix or none as
// test says, joined in one of styles.
func nameList(r *rand.Rand, test nameTest, nouns []string, styles []string, maxNames int) (names []string, picked []int) {
	prefix, suffix := trainAffix, trainAffix
	if test != namesTrain {
		prefix = func(r *rand.Rand) string { return heldoutPrefixes[r.IntN(len(heldoutPrefixes))] }
		suffix = func(r *rand.Rand) string { return heldoutSuffixes[r.IntN(len(heldoutSuffixes))] }
	}
	picked = r.Perm(len(nouns))[:4+r.IntN(3)]
	if maxNames > 0 && len(picked) > maxNames {
		picked = picked[:maxNames]
	}
	style := styles[r.IntN(len(styles))]
	names = make([]string, len(picked))
	for i, at := range picked {
		noun := nouns[at]
		if r.IntN(2) == 0 {
			noun = plural(noun)
		}
		words := []string{noun}
		affix := r.IntN(3) // 0: none, 1: prefix, 2: suffix
		switch test {
		case namesNewPrefix:
			affix = 1
		case namesNewSuffix:
			affix = 2
		}
		switch affix {
		case 1:
			words = append([]string{prefix(r)}, words...)
		case 2:
			words = append(words, suffix(r))
		}
		names[i] = joinName(words, style)
	}
	return names, picked
}
