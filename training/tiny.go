// The tiny CPU preset: model, vocabulary and training settings that run the
// whole pipeline in minutes on two cores.

package training

import "github.com/gosqlenv/gosqlenv/training/qwen3"

// TinyModelName selects the CPU-sized preset instead of a Hugging Face model:
// a small random-initialised Qwen3 (see TinyModelConfig) with a byte-level BPE
// vocabulary learned from the environment's own texts, so that a whole SFT +
// GRPO run fits in minutes on a laptop CPU and needs no download.
const TinyModelName = "tiny"

// TinyModelConfig is the architecture of the tiny preset for a vocabulary size.
func TinyModelConfig(vocab int) qwen3.Config {
	c := qwen3.TinyConfig(vocab)
	c.HiddenSize, c.IntermediateSize, c.NumHiddenLayers = 128, 384, 2
	c.NumAttentionHeads, c.NumKeyValueHeads, c.HeadDim = 4, 2, 32
	return c
}

// TinyPretrainHeads is the number of attention heads (each with its own key
// and value head, head_dim 32) the pretrain command gives a new base model.
// With TinyModelConfig's 4 query heads sharing 2 key/value heads, two
// layers did not learn to copy a constant from the question into the SQL:
// on dense synthetic question → QUERY samples, 3–5 of 64 constants copied
// after 600 steps (2 or 4 layers alike) against 12 of 64 with 8 full
// heads, which reached 63 of 64 after 2,000 steps (BENCHMARKS.md,
// "Pre-training on redrawn instances").
const TinyPretrainHeads = 8

// TinyTokenizerPattern is the pre-tokenizer of the tiny base model's
// vocabulary (package tinybase; the from-scratch preset keeps Qwen's): runs of
// letters, single digits, runs of other symbols and runs of white space are
// separate pre-tokens, so a word is the same token sequence wherever it
// stands — "Ivanov" in "the instructor Ivanov", in "name = 'Ivanov'" and on
// a result line. Qwen's pattern glues a leading space or quote to a word
// (" Ivanov", "'Ivanov"), and a model this small then has to learn each
// value's forms separately instead of copying it from the question into the
// SQL and from a result into the answer.
const TinyTokenizerPattern = `\p{L}+|\p{N}|[^\s\p{L}\p{N}]+|\s+`

// TinyAddedTokens are the special tokens of a vocabulary learned for the
// tiny models (tokenizer.TrainOptions.AddedTokens): Qwen3's chat markers,
// the first one the padding token.
var TinyAddedTokens = []string{"<|endoftext|>", "<|im_start|>", "<|im_end|>", "<think>", "</think>"}

// TinyVocabSize is the tiny preset's vocabulary size.
const TinyVocabSize = 1024

// TinySystemPrompt is the tiny preset's one-line system prompt: the default
// prompt (~310 tokens) would be two thirds of every sequence of a model that
// has to learn the actions from the SFT warm-up anyway.
const TinySystemPrompt = "Answer the question about the SQLite database. Reply with one action: DESCRIBE: table, SAMPLE: table, QUERY: select, or ANSWER: value."

// TinyScratchPreset turns cfg into the from-scratch CPU preset: a tiny
// model initialised at random and trained on one database in about five
// minutes on two cores. The SFT warm-up imitates the oracle on the
// database's 42 training questions (easy and medium); GRPO then plays 12 of
// them, 80 steps of 2 questions × 8 episodes sampled at temperature 0.7, so
// each question about 13 times (a model this small learns per question:
// GRPO spread over all 42 questions left their success flat).
// The evaluation shows what such a model can do (its training questions)
// and cannot (held-out questions, other databases): it memorises, it does
// not generalise. Measured in BENCHMARKS.md ("Learning on the CPU").
func TinyScratchPreset(cfg *GRPOConfig) {
	cfg.ModelName, cfg.Precision, cfg.SystemPrompt = TinyModelName, "float32", TinySystemPrompt
	cfg.TrainDatabases, cfg.DifficultyFilter, cfg.HeldoutFraction = []string{"university"}, []string{"easy", "medium"}, 0.2
	cfg.StepBudget, cfg.HistoryPairs, cfg.MaxResultChars = 5, 0, 300
	cfg.MaxNewTokens, cfg.MaxCompletionLength, cfg.LengthBucket = 80, 240, 32
	cfg.SFTMaxQuestions, cfg.SFTEpochs, cfg.SFTBatchSize, cfg.SFTLearningRate = 0, 18, 8, 2e-3
	cfg.GRPOMaxQuestions, cfg.NumGenerations, cfg.PerDeviceTrainBatchSize, cfg.GradientAccumulationSteps = 12, 8, 8, 2
	cfg.Temperature, cfg.RewardFuncs, cfg.LossType = 0.7, []string{"correctness", "progress"}, LossDAPO
	cfg.MaxSteps, cfg.LearningRate, cfg.LRSchedulerType, cfg.WarmupSteps = 80, 1e-4, "constant", 0
	cfg.LoggingSteps, cfg.EvalSteps = 5, 20
	cfg.MaxEvalQuestions, cfg.EvalSamples = 24, 8
}

// TinyPreset turns cfg into the notebook's CPU preset: TinyScratchPreset's
// database, prompts and rollouts, starting from the pre-trained tiny base
// model (TinyBaseModelName, package tinybase: pre-trained on redrawn
// instances of the database, where every constant changes, so it had to
// learn to copy constants from the question rather than recall them) and
// training on many distinct questions instead of a few repeated ones. The
// training split is the file's 42 questions and 150 generated ones
// (train_generated); the held-out split is the file's 10 and 60 generated
// ones (heldout_generated), so that with the 70 questions of the unseen
// databases every split has one standard error of at most ~6 points. SFT
// imitates the oracle on all 192 training questions for 2 epochs at a
// learning rate of 2e-4 (the from-scratch preset's 2e-3 taught the base
// this instance's values at the cost of copying: held-out success fell on
// every seed); GRPO plays 80 steps of 2 of them × 8 episodes, each question
// at most once. Measured over 3 seeds in BENCHMARKS.md ("Learning on the
// CPU").
func TinyPreset(cfg *GRPOConfig) {
	TinyScratchPreset(cfg)
	// The base model's vocabulary was learned from the training database's
	// texts: its longest oracle action there has 84 tokens and its longest
	// episode 155, but the unseen databases' names split into many more
	// (up to 203 and 294 tokens, end of turn included, over all 176 of their
	// easy and medium questions). The budgets fit those, so that no question
	// of any split is lost to them (TestTinyPresetFitsEveryOracleEpisode);
	// generation stops at the end of turn, so they cost little more.
	cfg.ModelName, cfg.MaxNewTokens, cfg.MaxCompletionLength = TinyBaseModelName, 224, 320
	cfg.TrainGenerated, cfg.HeldoutGenerated, cfg.MaxEvalQuestions, cfg.EvalSamples = 150, 60, 70, 4
	cfg.SFTEpochs, cfg.SFTLearningRate, cfg.GRPOMaxQuestions = 2, 2e-4, 0
}
