package training

import (
	"errors"
	"fmt"
	"maps"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/gosqlenv/gosqlenv/sqlenv/client"
	"github.com/gosqlenv/gosqlenv/sqlenv/dataset"
	"github.com/gosqlenv/gosqlenv/training/qwen3"
)

// GRPOConfig configures the SFT warm-up and GRPO training of a model on the
// SQL environment. Field names are those of TRL's GRPOConfig where TRL has
// one, as snake_case json/yaml keys, environment variables
// (GOSQLENV_<KEY IN UPPER CASE>) and flags (-<key>); see LoadGRPOConfig,
// ApplyEnv and RegisterFlags. Start from DefaultGRPOConfig, layer a file, the
// environment and flags on top, then call Validate.
type GRPOConfig struct {
	// ---- Model ----

	// ModelName is the Hugging Face model ID (or a local directory) of the
	// policy. Default "Qwen/Qwen3-1.7B". Training fails fast, naming it, when
	// the model cannot be found.
	ModelName string `json:"model_name" yaml:"model_name" help:"Hugging Face model ID or local directory of the policy"`
	// Backend is the GoMLX compute backend ("go", "xla:cuda", ...). If ""
	// (default), $GOMLX_BACKEND is used, then "go" (pure Go, CPU).
	Backend string `json:"backend" yaml:"backend" help:"GoMLX backend; empty means $GOMLX_BACKEND, then \"go\""`
	// Precision is the dtype of the weights and activations: "bfloat16"
	// (half the memory, as TRL's bf16=True; trained in mixed precision with
	// float32 master weights and moments), "float32", or "auto" (default):
	// float32 on the pure-Go CPU backend, where bfloat16 is no faster,
	// bfloat16 on XLA (GPU).
	Precision string `json:"precision" yaml:"precision" help:"weights dtype: auto (float32 on the CPU, bfloat16 on GPU), bfloat16 or float32"`
	// EnableThinking lets Qwen3 write a <think> block before each action.
	// Default false: the chat template gets an empty think block, as the
	// reference run (/no_think); turning it on costs many tokens per turn.
	EnableThinking bool `json:"enable_thinking" yaml:"enable_thinking" help:"let Qwen3 think before each action"`
	// SystemPrompt is the system message of every episode, in rollouts, SFT
	// trajectories and evaluation alike. If "" (default), GetSystemPrompt's
	// text (the actions, the reply format and a strategy, ~310 Qwen tokens).
	// A small model trained from scratch does better with a one-line prompt:
	// the prompt is part of every sequence it is trained and sampled on.
	SystemPrompt string `json:"system_prompt" yaml:"system_prompt" help:"system message of every episode; empty means the built-in prompt"`

	// ---- Data ----

	// QuestionsPath is the training questions file. If "" (default), the
	// bundled generated dataset's training questions are used.
	QuestionsPath string `json:"questions_path" yaml:"questions_path" help:"training questions file; empty means the bundled dataset"`
	// EvalQuestionsPath is the evaluation questions file. If "" (default),
	// the bundled dataset's evaluation questions are used.
	EvalQuestionsPath string `json:"eval_questions_path" yaml:"eval_questions_path" help:"evaluation questions file; empty means the bundled dataset"`
	// DBDir holds the databases, <db_dir>/<db_id>/<db_id>.sqlite (Spider
	// layout). If "" (default), the bundled dataset's databases are used.
	// Give all three data paths, or none, so that questions and databases
	// match.
	DBDir string `json:"db_dir" yaml:"db_dir" help:"database directory (Spider layout); empty means the bundled dataset"`
	// OutputDir receives checkpoints, logs and the final model. Default
	// "outputs/grpo".
	OutputDir string `json:"output_dir" yaml:"output_dir" help:"directory for checkpoints, logs and the final model"`
	// DifficultyFilter keeps only questions of these difficulties (easy,
	// medium, hard). Default [easy, medium]; empty keeps all. The reference
	// found hard (3+ table) questions out of reach of small models.
	DifficultyFilter []string `json:"difficulty_filter" yaml:"difficulty_filter" help:"comma-separated difficulties to train on (easy, medium, hard); empty keeps all"`
	// TrainDatabases keeps only the training questions of these databases
	// (names as in the questions file's database_name). Default [] = every
	// database of the training file. Evaluation databases are not affected.
	TrainDatabases []string `json:"train_databases" yaml:"train_databases" help:"comma-separated databases to train on; empty means all of the training file"`
	// HeldoutFraction is the fraction of each training database's questions
	// (after the filters) kept out of training and evaluated as the
	// "heldout_questions" split: same databases and question kinds, other
	// constants. Which questions is fixed by a hash of their ids (the same
	// for every seed and file order). Default 0.2; 0 holds none out.
	HeldoutFraction float64 `json:"heldout_fraction" yaml:"heldout_fraction" help:"fraction of each training database's questions held out for evaluation"`
	// HeldoutGenerated adds, for each training database of the bundled
	// dataset, this many generated questions to the held-out split
	// (bundled.MoreQuestions: the same kinds of questions with other
	// constants, none a question of the files), chosen by a hash of their
	// ids, so that the split is large enough to measure. Default 0.
	HeldoutGenerated int `json:"heldout_generated" yaml:"heldout_generated" help:"generated questions of each bundled training database added to the held-out split"`
	// TrainGenerated adds, for each training database of the bundled
	// dataset, this many generated questions to the training split, so that
	// SFT and GRPO learn from many distinct questions rather than the same
	// few again and again. They come after the held-out reserve in the same
	// hash order (GeneratedTraining), so they never meet a held-out
	// question (heldout_generated is at most HeldoutReserve). Default 0.
	TrainGenerated int `json:"train_generated" yaml:"train_generated" help:"generated questions of each bundled training database added to the training split"`
	// TrainRenamed is the share of the training questions (chosen by a hash
	// of their ids) asked on a renamed copy of their database instead
	// (<database>_v1: tables and columns under names drawn from the
	// pre-training pool, bundled.PretrainNames, never those of the
	// renamed_schema split), so that SFT and GRPO see schemas the model must
	// read. Their ids end in _v1. Default 0.
	TrainRenamed float64 `json:"train_renamed" yaml:"train_renamed" help:"share of the training questions asked on a renamed copy of their database"`
	// TrainReworded is the share of the training questions (chosen by
	// another hash) reworded with the pre-training pool of rewordings
	// (bundled.Reword with PretrainNames, never those of the
	// paraphrased_questions split). Default 0.
	TrainReworded float64 `json:"train_reworded" yaml:"train_reworded" help:"share of the training questions reworded"`
	// ReadingSplits adds two evaluation splits made of the held-out
	// questions, which measure whether a policy reads what it is shown:
	// renamed_schema asks them on renamed copies of their databases (every
	// table and column under a name that neither pre-training nor training
	// uses: bundled.HeldoutNames), written into db_dir as <database>_r1;
	// paraphrased_questions asks them in other wordings (bundled.Reword
	// with HeldoutNames). Default true.
	ReadingSplits bool `json:"reading_splits" yaml:"reading_splits" help:"also evaluate the held-out questions on renamed copies of their databases (renamed_schema) and reworded (paraphrased_questions)"`
	// MaxTrainQuestions caps the training questions (after filtering and
	// holding out), taken in turn from each database so that every database
	// keeps its share. Default 0 = all.
	MaxTrainQuestions int `json:"max_train_questions" yaml:"max_train_questions" help:"cap on training questions, spread over the databases; 0 means all"`
	// MaxEvalQuestions caps the questions of each evaluation split (training
	// questions, held-out questions, unseen databases), spread over the
	// databases and sampled from all of each database's questions
	// (EvalSample). Default 50 (the reference's evaluation size); 0 = all.
	MaxEvalQuestions int `json:"max_eval_questions" yaml:"max_eval_questions" help:"cap on the questions of each evaluation split; 0 means all"`
	// EvalSamples is the number of episodes sampled per question at the
	// training temperature when evaluating (besides one greedy episode), for
	// the sampled success rate and its standard error. Default 4; 0 = greedy
	// only.
	EvalSamples int `json:"eval_samples" yaml:"eval_samples" help:"sampled evaluation episodes per question (at the training temperature); 0 means greedy only"`

	// ---- Environment ----

	// StepBudget is the number of actions per episode. Default 10 (the
	// reference's training value); running out ends the episode unanswered.
	StepBudget int `json:"step_budget" yaml:"step_budget" help:"actions per episode"`
	// HistoryPairs is how many (assistant, observation) pairs of earlier
	// turns the prompt keeps after the system prompt. Default 3; 0 shows only
	// the current observation. More pairs cost prompt tokens every turn.
	HistoryPairs int `json:"history_pairs" yaml:"history_pairs" help:"earlier (action, observation) pairs kept in the prompt"`
	// MaxResultChars caps the result text of an observation shown to the
	// model (FormatObservation cuts it on a line boundary). Default 1200;
	// 0 = no cap.
	MaxResultChars int `json:"max_result_chars" yaml:"max_result_chars" help:"cap on the characters of a result shown to the model; 0 means none"`
	// EnvServers are the URLs of environment servers (sqlenv-server) that
	// play the episodes of rollouts and evaluations, spread over them
	// (client.Pool); a lost session is re-opened on another and its episode
	// replayed. Default [] = in-process environments. The servers must play
	// this run's questions, databases and rules: the pipeline checks each at
	// start (client.CheckServer) and refuses those that do not; `train …
	// questions` writes the question file to serve.
	EnvServers []string `json:"env_servers" yaml:"env_servers" help:"comma-separated URLs of environment servers (sqlenv-server) to play episodes on; empty means in process"`
	// EnvTransport is how to talk to EnvServers: "websocket" (default: one
	// connection per episode) or "http" (stateful HTTP sessions).
	EnvTransport string `json:"env_transport" yaml:"env_transport" help:"protocol for env_servers: websocket or http"`
	// EnvAuthToken is the servers' SQLENV_AUTH_TOKEN, sent as a bearer
	// token. Prefer the environment variable GOSQLENV_ENV_AUTH_TOKEN to a
	// file or flag; checkpoints record only whether it was set.
	EnvAuthToken string `json:"env_auth_token" yaml:"env_auth_token" help:"auth token of env_servers (prefer GOSQLENV_ENV_AUTH_TOKEN)"`

	// ---- Generation ----

	// MaxNewTokens caps the tokens the model writes in one turn. Default 256;
	// a turn that hits it is cut off (and usually fails to parse).
	MaxNewTokens int `json:"max_new_tokens" yaml:"max_new_tokens" help:"cap on tokens generated per turn"`
	// MaxCompletionLength caps the model tokens of a whole episode (all
	// turns, observations excluded), as TRL's max_completion_length for
	// multi-turn rollouts. Default 1024; the episode stops when it is spent.
	MaxCompletionLength int `json:"max_completion_length" yaml:"max_completion_length" help:"cap on model tokens per episode"`
	// Temperature of sampling; the loss uses the same temperature. Default 1.0.
	Temperature float64 `json:"temperature" yaml:"temperature" help:"sampling temperature (> 0)"`
	// TopP is the nucleus-sampling mass. Default 1.0 = off.
	TopP float64 `json:"top_p" yaml:"top_p" help:"nucleus sampling mass in [0, 1]; 1 means off"`
	// TopK keeps only the K most likely tokens. Default 0 = off.
	TopK int `json:"top_k" yaml:"top_k" help:"sample from the top K tokens; 0 means off"`
	// LengthBucket rounds prompt lengths up to a multiple of this many tokens
	// so that compiled programs are reused. Default 64; larger wastes
	// compute on padding, smaller compiles more programs.
	LengthBucket int `json:"length_bucket" yaml:"length_bucket" help:"prompt lengths are padded to a multiple of this"`
	// StaticShapes fixes the shapes of every program of the run, so that a
	// backend that compiles per shape (XLA: seconds each) compiles each
	// program a few times, early, instead of at every new batch size or
	// length: generation batches have a fixed number of rows per kind of
	// rollout (BucketRows of a full batch, the last one padded), prompts
	// are padded to a power of two times length_bucket that only grows
	// (started from the longest prompt of the SFT data), the caches hold
	// the prompt and max_new_tokens from the start, the SFT micro-batches
	// have a fixed number of rows and the longest sample's length, and
	// GRPO's loss micro-batches a fixed number of rows (episodes ×
	// step_budget turns) and the prompt length plus max_new_tokens,
	// without prefix trees. "auto" (default): on for XLA backends, off on
	// the pure-Go backend, which compiles in milliseconds and would
	// compute the padding; "true" or "false" to choose.
	StaticShapes string `json:"static_shapes" yaml:"static_shapes" help:"fixed program shapes, so that XLA compiles each program once: auto (on for XLA backends, off for go), true or false"`
	// RolloutBatchEpisodes bounds the episodes that advance together in one
	// generation batch. A rollout with more (an evaluation: every question
	// of a split times 1 + eval_samples) is played in batches of whole
	// question groups, so its memory (key/value caches, environments) stays
	// bounded whatever the split's size. Default 256; a group larger than
	// this is still played whole.
	RolloutBatchEpisodes int `json:"rollout_batch_episodes" yaml:"rollout_batch_episodes" help:"most episodes played together in one generation batch (larger rollouts go in batches of whole groups)"`
	// GenerationMemoryMB bounds, approximately, the memory of one
	// generation batch (the prefill's attention, quadratic in the prompt
	// length, and the KV cache): a batch that would need more is generated
	// in slices, one after the other (qwen3.GenerateOptions.MaxBatchBytes).
	// With static shapes the batches' rows shrink to fit instead. Default 0:
	// 2,048 MiB on the CPU (Go backend), 16,384 MiB on XLA (a GPU of 40 GB
	// or more); −1: no bound. On the CPU the process's resident memory is
	// about three times the bound (BENCHMARKS.md).
	GenerationMemoryMB int `json:"generation_memory_mb" yaml:"generation_memory_mb" help:"approximate memory (MiB) one generation batch may use, larger ones are generated in slices; 0: 2048 on the CPU, 16384 on XLA; -1: unbounded"`

	// ---- GRPO ----

	// NumGenerations is the group size G: episodes played per question, whose
	// rewards are compared to form advantages. Default 4 (TRL: 8); must be at
	// least 2.
	NumGenerations int `json:"num_generations" yaml:"num_generations" help:"episodes per question (group size, >= 2)"`
	// PerDeviceTrainBatchSize is the number of episodes per micro-batch.
	// Default 2.
	PerDeviceTrainBatchSize int `json:"per_device_train_batch_size" yaml:"per_device_train_batch_size" help:"episodes per micro-batch"`
	// GradientAccumulationSteps is the number of micro-batches per optimizer
	// step. Default 4. PerDeviceTrainBatchSize × GradientAccumulationSteps
	// episodes make one step and must be a multiple of NumGenerations (TRL's
	// rule); see QuestionsPerStep.
	GradientAccumulationSteps int `json:"gradient_accumulation_steps" yaml:"gradient_accumulation_steps" help:"micro-batches per optimizer step"`
	// LossRows, when above 0, caps the turn samples (rows) of one loss
	// forward and backward: each micro-batch's rows are split into calls of
	// at most this many, their gradients summed. The result is the same (the
	// loss is a weighted sum over tokens, weighted per micro-batch as
	// before); only the memory of a call changes: attention keeps
	// rows × heads × length² float32 scores per layer for the backward
	// (≈ 0.9 GB per row and layer for Qwen3-1.7B at 2,560 tokens). Default 0
	// (a micro-batch in one call). Not used with prefix sharing.
	LossRows int `json:"loss_rows" yaml:"loss_rows" help:"at most this many turn samples per loss forward+backward call (0: a whole micro-batch); same result, less memory"`
	// PrefixSharing computes shared prompts once. The loss packs each
	// micro-batch's turn samples into prefix trees (qwen3.PackTrees): a
	// prefix that several turns or episodes share — the system prompt and
	// the question, or whole turns that episodes of a group repeat — is
	// computed once; generation prefills each distinct prompt of a turn
	// once (qwen3.GenerateOptions.SharePrompts). Default true; false scores
	// each turn as its own padded row and prefills every episode's prompt,
	// the slower paths they replaced (same results; kept to compare).
	PrefixSharing bool `json:"prefix_sharing" yaml:"prefix_sharing" help:"compute shared prompt prefixes once, in the loss and in generation (false: one padded row per turn and per episode)"`
	// GRPOMaxQuestions caps the training questions GRPO plays, taken in turn
	// from each database (a spread subset of the SFT questions). Default 0 =
	// all training questions. A small model learns per question: fewer
	// questions visited more often can teach it more than many visited once.
	GRPOMaxQuestions int `json:"grpo_max_questions" yaml:"grpo_max_questions" help:"cap on the training questions GRPO plays, spread over the databases; 0 means all"`
	// NumTrainEpochs is the number of passes over the training questions when
	// MaxSteps is 0. Default 1.
	NumTrainEpochs int `json:"num_train_epochs" yaml:"num_train_epochs" help:"passes over the training questions (when max_steps is 0)"`
	// MaxSteps is the number of optimizer steps. Default 0 = derived from
	// NumTrainEpochs; if > 0 it overrides the epochs.
	MaxSteps int `json:"max_steps" yaml:"max_steps" help:"optimizer steps; 0 means derived from num_train_epochs"`
	// LearningRate is the peak AdamW learning rate. Default 5e-6 (TRL: 1e-6).
	LearningRate float64 `json:"learning_rate" yaml:"learning_rate" help:"peak learning rate"`
	// AdamBeta1 is AdamW's first-moment decay. Default 0.9.
	AdamBeta1 float64 `json:"adam_beta1" yaml:"adam_beta1" help:"AdamW beta1"`
	// AdamBeta2 is AdamW's second-moment decay. Default 0.999.
	AdamBeta2 float64 `json:"adam_beta2" yaml:"adam_beta2" help:"AdamW beta2"`
	// AdamEpsilon is AdamW's denominator epsilon. Default 1e-8.
	AdamEpsilon float64 `json:"adam_epsilon" yaml:"adam_epsilon" help:"AdamW epsilon"`
	// WeightDecay is AdamW's decoupled weight decay. Default 0.0.
	WeightDecay float64 `json:"weight_decay" yaml:"weight_decay" help:"AdamW decoupled weight decay"`
	// MaxGradNorm clips the global gradient norm. Default 1.0; 0 = no
	// clipping.
	MaxGradNorm float64 `json:"max_grad_norm" yaml:"max_grad_norm" help:"global gradient-norm clip; 0 means none"`
	// WarmupRatio is the fraction of the steps spent warming the learning
	// rate up linearly from 0. Default 0.0. Ignored when WarmupSteps > 0.
	WarmupRatio float64 `json:"warmup_ratio" yaml:"warmup_ratio" help:"fraction of steps of linear warm-up"`
	// WarmupSteps is the number of warm-up steps. Default 0; if > 0 it
	// overrides WarmupRatio.
	WarmupSteps int `json:"warmup_steps" yaml:"warmup_steps" help:"steps of linear warm-up (overrides warmup_ratio)"`
	// LRSchedulerType is the learning-rate schedule after warm-up: "linear"
	// (default: decays to 0 at the last step), "cosine" or "constant".
	LRSchedulerType string `json:"lr_scheduler_type" yaml:"lr_scheduler_type" help:"learning-rate schedule: linear, cosine or constant"`
	// Beta is the KL coefficient against a frozen reference model. If 0.0
	// (default), the reference model is not loaded (saving its memory: the
	// reference run's KL model ran out of memory on 24 GB).
	Beta float64 `json:"beta" yaml:"beta" help:"KL coefficient; 0 means no reference model"`
	// Epsilon is the lower clipping bound of the importance ratio (1 − ε).
	// Default 0.2.
	Epsilon float64 `json:"epsilon" yaml:"epsilon" help:"ratio clipping epsilon (lower bound 1-epsilon)"`
	// EpsilonHigh is the upper clipping bound (1 + ε_high). Default 0 = same
	// as Epsilon (DAPO recommends 0.28).
	EpsilonHigh float64 `json:"epsilon_high" yaml:"epsilon_high" help:"upper ratio clipping epsilon; 0 means epsilon"`
	// LossType selects the normalisation of the per-token loss: "grpo" (per
	// sequence mean, then mean), "bnpo" (per micro-batch token mean),
	// "dr_grpo" (divide by batch × max_completion_length) or "dapo" (default:
	// divide by the active tokens of the whole accumulated batch).
	LossType string `json:"loss_type" yaml:"loss_type" help:"loss normalisation: grpo, bnpo, dr_grpo or dapo"`
	// ScaleRewards scales advantages: "group" (default: divide by the group's
	// reward std), "batch" (by the batch's std) or "none" (Dr. GRPO's
	// recommendation, avoiding a bias toward easy/hard questions).
	ScaleRewards string `json:"scale_rewards" yaml:"scale_rewards" help:"advantage scaling: group, batch or none"`
	// NumIterations is the number of optimisation passes over each batch of
	// episodes. Default 1 (ratio = 1: REINFORCE with a group baseline); more
	// reuses rollouts and makes the clipping active.
	NumIterations int `json:"num_iterations" yaml:"num_iterations" help:"optimisation passes per batch of episodes"`
	// RewardFuncs names the reward functions (keys of the RewardFuncs map)
	// whose weighted sum is an episode's reward: correctness (1/0), progress
	// (normalised progress toward the gold result), operational (per-step
	// signals). Default all three.
	RewardFuncs []string `json:"reward_funcs" yaml:"reward_funcs" help:"comma-separated reward functions: correctness, progress, operational"`
	// MinGroupRewardStd is the reward spread (standard deviation within a
	// group) below which a group is taken to carry no signal: its advantages
	// are 0, and its episodes count in frac_reward_zero_std. Default 0.02,
	// about four times the spread that the operational reward alone gives a
	// group whose episodes all fail (≈ 0.005): dividing such noise by its own
	// std would turn it into full-size ±1 advantages. 0 keeps TRL's rule
	// (only exactly equal rewards carry no signal).
	MinGroupRewardStd float64 `json:"min_group_reward_std" yaml:"min_group_reward_std" help:"groups whose reward std is below this get zero advantage; 0 means only equal rewards"`
	// DynamicSampling is DAPO's dynamic sampling: each step plays this many
	// times QuestionsPerStep questions and trains on the first
	// QuestionsPerStep groups whose rewards vary; the others carry no
	// signal (zero advantages) and would only dilute the loss's
	// normalisation. When too few vary, it trains on those that do. Default
	// 0 (or 1): off — every group played is trained on, as in TRL.
	DynamicSampling int `json:"dynamic_sampling" yaml:"dynamic_sampling" help:"play this many times the step's questions and train on the first groups whose rewards vary (0 or 1: off)"`
	// RewardWeights weights RewardFuncs. Default [] = 1 each; otherwise it
	// must have one weight per reward function.
	RewardWeights []float64 `json:"reward_weights" yaml:"reward_weights" help:"comma-separated weights, one per reward function; empty means 1 each"`

	// ---- Logging and saving ----

	// LoggingSteps is the number of optimizer steps between metric logs.
	// Default 10.
	LoggingSteps int `json:"logging_steps" yaml:"logging_steps" help:"optimizer steps between metric logs"`
	// SaveSteps is the number of steps between checkpoints. Default 0 = save
	// only at the end.
	SaveSteps int `json:"save_steps" yaml:"save_steps" help:"optimizer steps between checkpoints; 0 means only at the end"`
	// EvalSteps is the number of GRPO steps between greedy evaluations on
	// every split (training, held-out and unseen-database questions, up to
	// max_eval_questions each), logged as eval/<split>/greedy_success; the
	// last step is always evaluated. Default 0 = no evaluation during
	// training.
	EvalSteps int `json:"eval_steps" yaml:"eval_steps" help:"optimizer steps between evaluations; 0 means off"`
	// Seed seeds question order and sampling; runs with the same seed and
	// config are reproducible. Default 42.
	Seed int64 `json:"seed" yaml:"seed" help:"random seed"`
	// ResumeFromCheckpoint is a checkpoint directory to continue from.
	// Default "" = start fresh.
	ResumeFromCheckpoint string `json:"resume_from_checkpoint" yaml:"resume_from_checkpoint" help:"checkpoint directory to resume from"`

	// ---- SFT warm-up ----

	// SFTEnabled runs a supervised warm-up on oracle episodes (whole
	// multi-turn trajectories, loss on assistant tokens only) before GRPO.
	// Default true: it was the reference's breakthrough; without it small
	// models rarely follow the action format and GRPO gets no signal.
	SFTEnabled bool `json:"sft_enabled" yaml:"sft_enabled" help:"run the supervised warm-up before GRPO"`
	// SFTEpochs is the number of passes over the warm-up trajectories.
	// Default 2.
	SFTEpochs int `json:"sft_epochs" yaml:"sft_epochs" help:"passes over the warm-up trajectories"`
	// SFTLearningRate is the warm-up learning rate. Default 1e-4.
	SFTLearningRate float64 `json:"sft_learning_rate" yaml:"sft_learning_rate" help:"warm-up learning rate"`
	// SFTMaxQuestions caps the training questions turned into warm-up
	// trajectories, taken in turn from each database (the same questions
	// GRPO trains on, or a spread subset of them). Default 120 (the
	// reference's count); 0 = all.
	SFTMaxQuestions int `json:"sft_max_questions" yaml:"sft_max_questions" help:"cap on warm-up trajectories, spread over the databases; 0 means all"`
	// SFTBatchSize is the number of turns (samples) per warm-up optimizer
	// step, independent of GRPO's batch. Default 8.
	SFTBatchSize int `json:"sft_batch_size" yaml:"sft_batch_size" help:"warm-up samples per optimizer step"`
	// SFTGradientAccumulationSteps splits each warm-up step into this many
	// micro-batches (less memory, same result). Default 1.
	SFTGradientAccumulationSteps int `json:"sft_gradient_accumulation_steps" yaml:"sft_gradient_accumulation_steps" help:"micro-batches per warm-up optimizer step"`
	// SFTLengthGroupBatches, when above 1, sorts each run of this many
	// batches of an epoch's shuffle by sample length before cutting it into
	// batches (as transformers' group_by_length does with 50), so that a
	// batch holds turns of similar length and is padded less; the batches
	// are then played in a shuffled order. On the tiny preset's turns, 4
	// pads a batch to 1.17× its tokens instead of 1.59×, a step 0.71× as
	// long — but the preset's SFT then generalised worse on 2 of 3 seeds
	// (held-out −4.1 ± 3.2 points; BENCHMARKS.md). Default 0: plain
	// shuffled batches.
	SFTLengthGroupBatches int `json:"sft_length_group_batches" yaml:"sft_length_group_batches" help:"sort runs of this many warm-up batches by sample length, so that batches pad less (0: plain shuffle)"`
}

// DefaultGRPOConfig returns the defaults documented on each field.
func DefaultGRPOConfig() GRPOConfig {
	return GRPOConfig{
		ModelName: "Qwen/Qwen3-1.7B",
		Precision: "auto",

		OutputDir:        "outputs/grpo",
		DifficultyFilter: []string{"easy", "medium"},
		TrainDatabases:   []string{},
		HeldoutFraction:  0.2,
		MaxEvalQuestions: 50,
		EvalSamples:      4,

		StepBudget:     10,
		HistoryPairs:   3,
		MaxResultChars: 1200,
		EnvServers:     []string{},
		EnvTransport:   "websocket",

		MaxNewTokens:         256,
		MaxCompletionLength:  1024,
		Temperature:          1.0,
		TopP:                 1.0,
		LengthBucket:         64,
		RolloutBatchEpisodes: 256,

		NumGenerations:            4,
		PerDeviceTrainBatchSize:   2,
		GradientAccumulationSteps: 4,
		PrefixSharing:             true,
		ReadingSplits:             true,
		StaticShapes:              "auto",
		NumTrainEpochs:            1,
		LearningRate:              5e-6,
		AdamBeta1:                 0.9,
		AdamBeta2:                 0.999,
		AdamEpsilon:               1e-8,
		MaxGradNorm:               1.0,
		LRSchedulerType:           "linear",
		Epsilon:                   0.2,
		LossType:                  "dapo",
		ScaleRewards:              "group",
		NumIterations:             1,
		RewardFuncs:               []string{"correctness", "progress", "operational"},
		RewardWeights:             []float64{},
		MinGroupRewardStd:         0.02,

		LoggingSteps: 10,
		Seed:         42,

		SFTEnabled:      true,
		SFTEpochs:       2,
		SFTLearningRate: 1e-4,
		SFTMaxQuestions: 120,
		SFTBatchSize:    8,

		SFTGradientAccumulationSteps: 1,
	}
}

// QuestionsPerStep is the number of distinct questions in one optimizer
// step: PerDeviceTrainBatchSize × GradientAccumulationSteps episodes, in
// groups of NumGenerations.
func (c GRPOConfig) QuestionsPerStep() int {
	if c.NumGenerations <= 0 {
		return 0
	}
	return c.PerDeviceTrainBatchSize * c.GradientAccumulationSteps / c.NumGenerations
}

// QuestionsPlayedPerStep is the number of questions a step plays:
// QuestionsPerStep, times DynamicSampling when that is on.
func (c GRPOConfig) QuestionsPlayedPerStep() int {
	return c.QuestionsPerStep() * max(1, c.DynamicSampling)
}

// The values Validate accepts for the enumerated fields.
var (
	cfgPrecisions = qwen3.Precisions
	cfgSchedulers = []string{"linear", "cosine", "constant"}
	cfgLossTypes  = []string{"grpo", "bnpo", "dr_grpo", "dapo"}
	cfgScales     = []string{"group", "batch", "none"}
	cfgTransports = []string{"websocket", "http"}
)

// Validate checks the configuration and returns every problem found (joined),
// each naming the field by its key and the bad value.
func (c *GRPOConfig) Validate() error {
	var v checker
	for _, check := range []func(*checker){
		c.checkModelAndData, c.checkEnvironment, c.checkGeneration, c.checkBatches,
		c.checkOptimizer, c.checkLoss, c.checkRewards, c.checkLogging, c.checkSFT,
	} {
		check(&v)
	}
	return errors.Join(v.errs...)
}

// checker collects the problems Validate finds.
type checker struct{ errs []error }

// bad records that the field key has a bad value.
func (v *checker) bad(key string, value any, format string, args ...any) {
	v.errs = append(v.errs, fmt.Errorf("training config: %s = %v: %s", key, value, fmt.Sprintf(format, args...)))
}

func (v *checker) atLeast(key string, x, lo int) {
	if x < lo {
		v.bad(key, x, "must be at least %d", lo)
	}
}

func (v *checker) oneOf(key, x string, valid []string) {
	if !slices.Contains(valid, x) {
		v.bad(key, strconv.Quote(x), "must be one of %s", strings.Join(valid, ", "))
	}
}

func (v *checker) positive(key string, x float64) {
	if !(x > 0) {
		v.bad(key, x, "must be > 0")
	}
}

func (v *checker) nonNegative(key string, x float64) {
	if !(x >= 0) {
		v.bad(key, x, "must be >= 0")
	}
}

// within checks lo <= x <= hi, or lo <= x < hi when openHigh is set.
func (v *checker) within(key string, x, lo, hi float64, openHigh bool) {
	switch {
	case openHigh && !(x >= lo && x < hi):
		v.bad(key, x, "must be in [%v, %v)", lo, hi)
	case !openHigh && !(x >= lo && x <= hi):
		v.bad(key, x, "must be in [%v, %v]", lo, hi)
	}
}

func (c *GRPOConfig) checkModelAndData(v *checker) {
	if strings.TrimSpace(c.ModelName) == "" {
		v.bad("model_name", strconv.Quote(c.ModelName), "must name a model (a Hugging Face ID or a local directory)")
	}
	v.oneOf("precision", c.Precision, cfgPrecisions)
	if strings.TrimSpace(c.OutputDir) == "" {
		v.bad("output_dir", strconv.Quote(c.OutputDir), "must name a directory")
	}
	for _, d := range c.DifficultyFilter {
		if _, err := dataset.ParseDifficulty(d); err != nil {
			v.bad("difficulty_filter", strconv.Quote(d), "unknown difficulty: must be easy, medium or hard")
		}
	}
	v.within("heldout_fraction", c.HeldoutFraction, 0, 1, true)
	v.atLeast("max_train_questions", c.MaxTrainQuestions, 0)
	v.atLeast("max_eval_questions", c.MaxEvalQuestions, 0)
	v.atLeast("heldout_generated", c.HeldoutGenerated, 0)
	if c.HeldoutGenerated > HeldoutReserve {
		v.bad("heldout_generated", c.HeldoutGenerated, "must be at most %d: pre-training and train_generated leave out only the first %d generated questions of each database", HeldoutReserve, HeldoutReserve)
	}
	v.atLeast("train_generated", c.TrainGenerated, 0)
	v.within("train_renamed", c.TrainRenamed, 0, 1, false)
	v.within("train_reworded", c.TrainReworded, 0, 1, false)
	v.atLeast("eval_samples", c.EvalSamples, 0)
}

func (c *GRPOConfig) checkEnvironment(v *checker) {
	v.atLeast("step_budget", c.StepBudget, 1)
	v.atLeast("history_pairs", c.HistoryPairs, 0)
	v.atLeast("max_result_chars", c.MaxResultChars, 0)
	for _, addr := range c.EnvServers {
		if u, err := url.Parse(addr); err != nil || u.Host == "" || !slices.Contains([]string{"http", "https", "ws", "wss"}, u.Scheme) {
			v.bad("env_servers", strconv.Quote(client.Redact(addr)), "must be a URL like http://host:8000 (http, https, ws or wss)")
		}
	}
	v.oneOf("env_transport", c.EnvTransport, cfgTransports)
}

// Redacted returns the configuration with its secret (env_auth_token)
// replaced by "(set)", and passwords in env_servers by "xxxxx": what
// checkpoints and logs may record.
func (c GRPOConfig) Redacted() GRPOConfig {
	if c.EnvAuthToken != "" {
		c.EnvAuthToken = "(set)"
	}
	c.EnvServers = slices.Clone(c.EnvServers)
	for i, s := range c.EnvServers {
		c.EnvServers[i] = client.Redact(s)
	}
	return c
}

func (c *GRPOConfig) checkGeneration(v *checker) {
	v.atLeast("max_new_tokens", c.MaxNewTokens, 1)
	v.atLeast("max_completion_length", c.MaxCompletionLength, 1)
	v.positive("temperature", c.Temperature)
	v.within("top_p", c.TopP, 0, 1, false)
	v.atLeast("top_k", c.TopK, 0)
	v.atLeast("length_bucket", c.LengthBucket, 1)
	v.atLeast("rollout_batch_episodes", c.RolloutBatchEpisodes, 1)
	if _, err := ParseStaticShapes(c.StaticShapes); err != nil {
		v.bad("static_shapes", c.StaticShapes, "want auto, true or false")
	}
	v.atLeast("generation_memory_mb", c.GenerationMemoryMB, -1)
}

// checkBatches checks the group and batch sizes and the run's length.
func (c *GRPOConfig) checkBatches(v *checker) {
	v.atLeast("num_generations", c.NumGenerations, 2)
	v.atLeast("per_device_train_batch_size", c.PerDeviceTrainBatchSize, 1)
	v.atLeast("gradient_accumulation_steps", c.GradientAccumulationSteps, 1)
	v.atLeast("loss_rows", c.LossRows, 0)
	if c.NumGenerations >= 2 && c.PerDeviceTrainBatchSize >= 1 && c.GradientAccumulationSteps >= 1 {
		if n := c.PerDeviceTrainBatchSize * c.GradientAccumulationSteps; n%c.NumGenerations != 0 {
			v.errs = append(v.errs, fmt.Errorf("training config: per_device_train_batch_size × gradient_accumulation_steps = %d × %d = %d "+
				"must be divisible by num_generations = %d (TRL's rule: an optimizer step takes whole groups of episodes)",
				c.PerDeviceTrainBatchSize, c.GradientAccumulationSteps, n, c.NumGenerations))
		}
	}
	if c.MaxSteps == 0 {
		v.atLeast("num_train_epochs", c.NumTrainEpochs, 1)
	}
	v.atLeast("max_steps", c.MaxSteps, 0)
	v.atLeast("grpo_max_questions", c.GRPOMaxQuestions, 0)
}

func (c *GRPOConfig) checkOptimizer(v *checker) {
	v.positive("learning_rate", c.LearningRate)
	v.within("adam_beta1", c.AdamBeta1, 0, 1, true)
	v.within("adam_beta2", c.AdamBeta2, 0, 1, true)
	v.positive("adam_epsilon", c.AdamEpsilon)
	v.nonNegative("weight_decay", c.WeightDecay)
	v.nonNegative("max_grad_norm", c.MaxGradNorm)
	v.within("warmup_ratio", c.WarmupRatio, 0, 1, false)
	v.atLeast("warmup_steps", c.WarmupSteps, 0)
	v.oneOf("lr_scheduler_type", c.LRSchedulerType, cfgSchedulers)
}

func (c *GRPOConfig) checkLoss(v *checker) {
	v.nonNegative("beta", c.Beta)
	v.positive("epsilon", c.Epsilon)
	v.nonNegative("epsilon_high", c.EpsilonHigh)
	v.oneOf("loss_type", c.LossType, cfgLossTypes)
	v.oneOf("scale_rewards", c.ScaleRewards, cfgScales)
	v.atLeast("num_iterations", c.NumIterations, 1)
}

func (c *GRPOConfig) checkRewards(v *checker) {
	known := slices.Sorted(maps.Keys(RewardFuncs))
	if len(c.RewardFuncs) == 0 {
		v.bad("reward_funcs", "[]", "must name at least one of %s", strings.Join(known, ", "))
	}
	for i, f := range c.RewardFuncs {
		switch {
		case RewardFuncs[f] == nil:
			v.bad("reward_funcs", strconv.Quote(f), "unknown reward function: must be one of %s", strings.Join(known, ", "))
		case slices.Contains(c.RewardFuncs[:i], f):
			v.bad("reward_funcs", strconv.Quote(f), "listed twice")
		}
	}
	v.nonNegative("min_group_reward_std", c.MinGroupRewardStd)
	v.atLeast("dynamic_sampling", c.DynamicSampling, 0)
	if len(c.RewardWeights) != 0 && len(c.RewardWeights) != len(c.RewardFuncs) {
		v.bad("reward_weights", c.RewardWeights, "has %d weights but reward_funcs has %d functions: give one weight per function, or none (1 each)",
			len(c.RewardWeights), len(c.RewardFuncs))
	}
}

func (c *GRPOConfig) checkLogging(v *checker) {
	v.atLeast("logging_steps", c.LoggingSteps, 1)
	v.atLeast("save_steps", c.SaveSteps, 0)
	v.atLeast("eval_steps", c.EvalSteps, 0)
}

func (c *GRPOConfig) checkSFT(v *checker) {
	if c.SFTEnabled {
		v.atLeast("sft_epochs", c.SFTEpochs, 1)
		v.positive("sft_learning_rate", c.SFTLearningRate)
		v.atLeast("sft_batch_size", c.SFTBatchSize, 1)
		v.atLeast("sft_gradient_accumulation_steps", c.SFTGradientAccumulationSteps, 1)
	}
	v.atLeast("sft_max_questions", c.SFTMaxQuestions, 0)
	v.atLeast("sft_length_group_batches", c.SFTLengthGroupBatches, 0)
}

// EnvPrefix starts the environment variables read by ApplyEnv.
const EnvPrefix = "GOSQLENV_"

var (
	cfgStringsType = reflect.TypeFor[[]string]()
	cfgFloatsType  = reflect.TypeFor[[]float64]()
)

// ParseStaticShapes reads static_shapes: "auto" (or "") gives nil, "true"
// or "false" (also on/off, 1/0) their value.
func ParseStaticShapes(s string) (*bool, error) {
	var v bool
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "auto":
		return nil, nil
	case "true", "on", "1", "yes":
		v = true
	case "false", "off", "0", "no":
	default:
		return nil, fmt.Errorf("static_shapes %q: want auto, true or false", s)
	}
	return &v, nil
}
