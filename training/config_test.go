package training

import (
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestDefaultGRPOConfigMatchesSpec(t *testing.T) {
	want := GRPOConfig{
		ModelName: "Qwen/Qwen3-1.7B", Backend: "", Precision: "auto" /* bfloat16 (the spec's bf16) on a GPU, float32 on the CPU */, EnableThinking: false,
		QuestionsPath: "", EvalQuestionsPath: "", DBDir: "", OutputDir: "outputs/grpo",
		DifficultyFilter: []string{"easy", "medium"}, TrainDatabases: []string{}, HeldoutFraction: 0.2, ReadingSplits: true,
		MaxTrainQuestions: 0, MaxEvalQuestions: 50, EvalSamples: 4,
		StepBudget: 10, HistoryPairs: 3, MaxResultChars: 1200, EnvServers: []string{}, EnvTransport: "websocket",
		MaxNewTokens: 256, MaxCompletionLength: 1024, Temperature: 1.0, TopP: 1.0, TopK: 0, LengthBucket: 64, StaticShapes: "auto", RolloutBatchEpisodes: 256, GenerationMemoryMB: 0,
		NumGenerations: 4, PerDeviceTrainBatchSize: 2, GradientAccumulationSteps: 4, PrefixSharing: true, NumTrainEpochs: 1, MaxSteps: 0,
		LearningRate: 5e-6, AdamBeta1: 0.9, AdamBeta2: 0.999, AdamEpsilon: 1e-8, WeightDecay: 0, MaxGradNorm: 1.0,
		WarmupRatio: 0, WarmupSteps: 0, LRSchedulerType: "linear", Beta: 0, Epsilon: 0.2, EpsilonHigh: 0,
		LossType: "dapo", ScaleRewards: "group", NumIterations: 1,
		RewardFuncs: []string{"correctness", "progress", "operational"}, RewardWeights: []float64{}, MinGroupRewardStd: 0.02,
		LoggingSteps: 10, SaveSteps: 0, EvalSteps: 0, Seed: 42, ResumeFromCheckpoint: "",
		SFTEnabled: true, SFTEpochs: 2, SFTLearningRate: 1e-4, SFTMaxQuestions: 120, SFTBatchSize: 8, SFTGradientAccumulationSteps: 1,
	}
	got := DefaultGRPOConfig()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("DefaultGRPOConfig() =\n%+v\nwant\n%+v", got, want)
	}
	if err := got.Validate(); err != nil {
		t.Errorf("defaults do not validate: %v", err)
	}
	if n := got.QuestionsPerStep(); n != 2 {
		t.Errorf("QuestionsPerStep() = %d, want 2*4/4 = 2", n)
	}
	// Defaults must not share slices between calls.
	got.DifficultyFilter[0] = "hard"
	if DefaultGRPOConfig().DifficultyFilter[0] != "easy" {
		t.Error("DefaultGRPOConfig shares its slices")
	}
}

// Every field has matching json and yaml keys, a help text and a type the
// env/flag mapping supports.
func TestGRPOConfigFieldTags(t *testing.T) {
	rt := reflect.TypeFor[GRPOConfig]()
	for i := range rt.NumField() {
		f := rt.Field(i)
		j, y := f.Tag.Get("json"), f.Tag.Get("yaml")
		if j == "" || j != y {
			t.Errorf("field %s: json tag %q, yaml tag %q: want equal and non-empty", f.Name, j, y)
		}
		if f.Tag.Get("help") == "" {
			t.Errorf("field %s: no help tag", f.Name)
		}
		if !cfgSupported(f.Type) {
			t.Errorf("field %s: type %s not supported by ApplyEnv/RegisterFlags", f.Name, f.Type)
		}
	}
}

func cfgWriteFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestLoadGRPOConfig(t *testing.T) {
	check := func(t *testing.T, c GRPOConfig) {
		t.Helper()
		want := DefaultGRPOConfig()
		want.ModelName = "Qwen/Qwen3-0.6B"
		want.LearningRate = 1e-5
		want.NumGenerations = 8
		want.EnableThinking = true
		want.DifficultyFilter = []string{"easy"}
		want.RewardWeights = []float64{1, 0.5, 0.25}
		want.Seed = 7
		if !reflect.DeepEqual(c, want) {
			t.Errorf("loaded\n%+v\nwant\n%+v", c, want)
		}
	}
	t.Run("json", func(t *testing.T) {
		path := cfgWriteFile(t, "c.json", `{"model_name": "Qwen/Qwen3-0.6B", "learning_rate": 1e-5, "num_generations": 8,
			"enable_thinking": true, "difficulty_filter": ["easy"], "reward_weights": [1, 0.5, 0.25], "seed": 7}`)
		c, err := LoadGRPOConfig(path)
		if err != nil {
			t.Fatal(err)
		}
		check(t, c)
	})
	for _, ext := range []string{".yaml", ".yml", ".YAML"} {
		t.Run(ext, func(t *testing.T) {
			path := cfgWriteFile(t, "c"+ext, "# a comment\nmodel_name: Qwen/Qwen3-0.6B\nlearning_rate: 1e-5\nnum_generations: 8\n"+
				"enable_thinking: true\ndifficulty_filter: [easy]\nreward_weights:\n  - 1\n  - 0.5\n  - 0.25\nseed: 7\n")
			c, err := LoadGRPOConfig(path)
			if err != nil {
				t.Fatal(err)
			}
			check(t, c)
		})
	}
	t.Run("empty yaml keeps defaults", func(t *testing.T) {
		c, err := LoadGRPOConfig(cfgWriteFile(t, "c.yaml", ""))
		if err != nil || !reflect.DeepEqual(c, DefaultGRPOConfig()) {
			t.Errorf("got %+v, %v; want the defaults", c, err)
		}
	})
}

func TestLoadGRPOConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		name, file, content string
		want                []string // substrings of the error, besides the path
	}{
		{"json unknown key", "c.json", `{"learning_rat": 1e-5}`, []string{"learning_rat"}},
		{"yaml unknown key", "c.yaml", "learning_rate: 1e-5\nnum_generation: 8\n", []string{"num_generation"}},
		{"json wrong type", "c.json", `{"num_generations": "eight"}`, []string{"num_generations"}},
		{"yaml wrong type", "c.yml", "num_generations: 1.5\n", []string{"1.5"}},
		{"json trailing data", "c.json", `{"seed": 1} {"seed": 2}`, []string{"after the JSON object"}},
		{"yaml duplicate key", "c.yaml", "seed: 1\nseed: 2\n", []string{"seed"}},
		{"unknown extension", "c.toml", `seed = 1`, []string{`".toml"`, ".json, .yaml or .yml"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := cfgWriteFile(t, tc.file, tc.content)
			_, err := LoadGRPOConfig(path)
			if err == nil {
				t.Fatal("no error")
			}
			for _, s := range append(tc.want, path) {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not contain %q", err, s)
				}
			}
		})
	}
	t.Run("missing file", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "nope.yaml")
		_, err := LoadGRPOConfig(path)
		if err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("error %v does not name %s", err, path)
		}
	})
}

func cfgEnvLookup(env map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := env[k]; return v, ok }
}

func TestGRPOConfigApplyEnv(t *testing.T) {
	c := DefaultGRPOConfig()
	err := c.ApplyEnv(cfgEnvLookup(map[string]string{
		"GOSQLENV_MODEL_NAME":        "Qwen/Qwen3-0.6B",   // string
		"GOSQLENV_NUM_GENERATIONS":   " 8 ",               // int (spaces trimmed)
		"GOSQLENV_SEED":              "-3",                // int64
		"GOSQLENV_LEARNING_RATE":     "1e-5",              // float64
		"GOSQLENV_SFT_ENABLED":       "false",             // bool
		"GOSQLENV_DIFFICULTY_FILTER": "easy, medium,hard", // []string
		"GOSQLENV_REWARD_WEIGHTS":    "1,0.5,2",           // []float64
		"GOSQLENV_BACKEND":           "",                  // set to empty
		"LEARNING_RATE":              "9",                 // no prefix: ignored
	}))
	if err != nil {
		t.Fatal(err)
	}
	want := DefaultGRPOConfig()
	want.ModelName, want.NumGenerations, want.Seed, want.LearningRate, want.SFTEnabled = "Qwen/Qwen3-0.6B", 8, -3, 1e-5, false
	want.DifficultyFilter = []string{"easy", "medium", "hard"}
	want.RewardWeights = []float64{1, 0.5, 2}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("after ApplyEnv\n%+v\nwant\n%+v", c, want)
	}

	c = DefaultGRPOConfig()
	if err := c.ApplyEnv(cfgEnvLookup(map[string]string{"GOSQLENV_DIFFICULTY_FILTER": ""})); err != nil || len(c.DifficultyFilter) != 0 {
		t.Errorf("empty list variable: got %v, %v; want an empty list", c.DifficultyFilter, err)
	}

	for name, value := range map[string]string{
		"GOSQLENV_LEARNING_RATE":   "fast",
		"GOSQLENV_NUM_GENERATIONS": "4.5",
		"GOSQLENV_SEED":            "",
		"GOSQLENV_SFT_ENABLED":     "maybe",
		"GOSQLENV_REWARD_WEIGHTS":  "1,x",
	} {
		c := DefaultGRPOConfig()
		err := c.ApplyEnv(cfgEnvLookup(map[string]string{name: value}))
		if err == nil || !strings.Contains(err.Error(), name) || !strings.Contains(err.Error(), value) {
			t.Errorf("%s=%q: error %v does not name the variable and value", name, value, err)
		}
	}
}

func TestGRPOConfigRegisterFlags(t *testing.T) {
	c := DefaultGRPOConfig()
	c.Seed = 9 // defaults are the current values
	fs := flag.NewFlagSet("train", flag.ContinueOnError)
	c.RegisterFlags(fs)
	if f := fs.Lookup("seed"); f == nil || f.DefValue != "9" {
		t.Fatalf("flag -seed: %+v, want default 9", f)
	}
	if f := fs.Lookup("difficulty_filter"); f == nil || f.DefValue != "easy,medium" || !strings.Contains(f.Usage, "GOSQLENV_DIFFICULTY_FILTER") {
		t.Fatalf("flag -difficulty_filter: %+v", f)
	}
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	if want := reflect.TypeFor[GRPOConfig]().NumField(); n != want {
		t.Errorf("%d flags, want one per field (%d)", n, want)
	}
	err := fs.Parse([]string{"-learning_rate=2e-5", "-num_generations", "2", "-enable_thinking", "-sft_enabled=false",
		"-difficulty_filter=hard", "-reward_weights=0.5,1,1", "-model_name", "m", "-seed=-1", "rest"})
	if err != nil {
		t.Fatal(err)
	}
	want := DefaultGRPOConfig()
	want.LearningRate, want.NumGenerations, want.EnableThinking, want.SFTEnabled = 2e-5, 2, true, false
	want.DifficultyFilter, want.RewardWeights, want.ModelName, want.Seed = []string{"hard"}, []float64{0.5, 1, 1}, "m", -1
	if !reflect.DeepEqual(c, want) {
		t.Errorf("after Parse\n%+v\nwant\n%+v", c, want)
	}
	if fs.Arg(0) != "rest" {
		t.Errorf("args %v", fs.Args())
	}

	fs = flag.NewFlagSet("train", flag.ContinueOnError)
	fs.SetOutput(new(strings.Builder))
	c.RegisterFlags(fs)
	if err := fs.Parse([]string{"-top_p=high"}); err == nil || !strings.Contains(err.Error(), "top_p") {
		t.Errorf("bad flag value: error %v", err)
	}
	// PrintDefaults calls String on a zero flag value: it must not panic.
	var help strings.Builder
	fs.SetOutput(&help)
	fs.PrintDefaults()
	if strings.Contains(help.String(), "panic") || !strings.Contains(help.String(), "-learning_rate") {
		t.Errorf("PrintDefaults:\n%s", help.String())
	}
}

func TestGRPOConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		name   string
		modify func(*GRPOConfig)
		want   string
	}{
		{"model_name", func(c *GRPOConfig) { c.ModelName = " " }, `model_name = " ": must name a model`},
		{"precision", func(c *GRPOConfig) { c.Precision = "fp16" }, `precision = "fp16": must be one of auto, float32, bfloat16`},
		{"output_dir", func(c *GRPOConfig) { c.OutputDir = "" }, `output_dir = "": must name a directory`},
		{"difficulty", func(c *GRPOConfig) { c.DifficultyFilter = []string{"easy", "extreme"} }, `difficulty_filter = "extreme": unknown difficulty`},
		{"max_train_questions", func(c *GRPOConfig) { c.MaxTrainQuestions = -1 }, "max_train_questions = -1: must be at least 0"},
		{"max_eval_questions", func(c *GRPOConfig) { c.MaxEvalQuestions = -1 }, "max_eval_questions = -1: must be at least 0"},
		{"step_budget", func(c *GRPOConfig) { c.StepBudget = 0 }, "step_budget = 0: must be at least 1"},
		{"history_pairs", func(c *GRPOConfig) { c.HistoryPairs = -1 }, "history_pairs = -1: must be at least 0"},
		{"max_result_chars", func(c *GRPOConfig) { c.MaxResultChars = -5 }, "max_result_chars = -5: must be at least 0"},
		{"env_servers", func(c *GRPOConfig) { c.EnvServers = []string{"http://a:8000", "ftp://u:s3cret@b"} }, `env_servers = "ftp://u:xxxxx@b": must be a URL like http://host:8000`},
		{"env_servers no host", func(c *GRPOConfig) { c.EnvServers = []string{"localhost:8000"} }, `env_servers = "localhost:8000": must be a URL`},
		{"env_transport", func(c *GRPOConfig) { c.EnvTransport = "grpc" }, `env_transport = "grpc": must be one of websocket, http`},
		{"max_new_tokens", func(c *GRPOConfig) { c.MaxNewTokens = 0 }, "max_new_tokens = 0: must be at least 1"},
		{"max_completion_length", func(c *GRPOConfig) { c.MaxCompletionLength = 0 }, "max_completion_length = 0: must be at least 1"},
		{"temperature zero", func(c *GRPOConfig) { c.Temperature = 0 }, "temperature = 0: must be > 0"},
		{"temperature negative", func(c *GRPOConfig) { c.Temperature = -1 }, "temperature = -1: must be > 0"},
		{"top_p high", func(c *GRPOConfig) { c.TopP = 1.5 }, "top_p = 1.5: must be in [0, 1]"},
		{"top_p negative", func(c *GRPOConfig) { c.TopP = -0.1 }, "top_p = -0.1: must be in [0, 1]"},
		{"top_k", func(c *GRPOConfig) { c.TopK = -1 }, "top_k = -1: must be at least 0"},
		{"length_bucket", func(c *GRPOConfig) { c.LengthBucket = 0 }, "length_bucket = 0: must be at least 1"},
		{"rollout_batch_episodes", func(c *GRPOConfig) { c.RolloutBatchEpisodes = 0 }, "rollout_batch_episodes = 0: must be at least 1"},
		{"generation_memory_mb", func(c *GRPOConfig) { c.GenerationMemoryMB = -2 }, "generation_memory_mb = -2: must be at least -1"},
		{"num_generations", func(c *GRPOConfig) { c.NumGenerations = 1 }, "num_generations = 1: must be at least 2"},
		{"per_device_train_batch_size", func(c *GRPOConfig) { c.PerDeviceTrainBatchSize = 0 }, "per_device_train_batch_size = 0: must be at least 1"},
		{"gradient_accumulation_steps", func(c *GRPOConfig) { c.GradientAccumulationSteps = 0 }, "gradient_accumulation_steps = 0: must be at least 1"},
		{"divisibility", func(c *GRPOConfig) { c.NumGenerations = 3 },
			"per_device_train_batch_size × gradient_accumulation_steps = 2 × 4 = 8 must be divisible by num_generations = 3 (TRL's rule"},
		{"num_train_epochs", func(c *GRPOConfig) { c.NumTrainEpochs = 0 }, "num_train_epochs = 0: must be at least 1"},
		{"max_steps", func(c *GRPOConfig) { c.MaxSteps = -1 }, "max_steps = -1: must be at least 0"},
		{"learning_rate", func(c *GRPOConfig) { c.LearningRate = 0 }, "learning_rate = 0: must be > 0"},
		{"adam_beta1", func(c *GRPOConfig) { c.AdamBeta1 = 1 }, "adam_beta1 = 1: must be in [0, 1)"},
		{"adam_beta2", func(c *GRPOConfig) { c.AdamBeta2 = -0.5 }, "adam_beta2 = -0.5: must be in [0, 1)"},
		{"adam_epsilon", func(c *GRPOConfig) { c.AdamEpsilon = 0 }, "adam_epsilon = 0: must be > 0"},
		{"weight_decay", func(c *GRPOConfig) { c.WeightDecay = -0.1 }, "weight_decay = -0.1: must be >= 0"},
		{"max_grad_norm", func(c *GRPOConfig) { c.MaxGradNorm = -1 }, "max_grad_norm = -1: must be >= 0"},
		{"warmup_ratio", func(c *GRPOConfig) { c.WarmupRatio = 2 }, "warmup_ratio = 2: must be in [0, 1]"},
		{"warmup_steps", func(c *GRPOConfig) { c.WarmupSteps = -1 }, "warmup_steps = -1: must be at least 0"},
		{"lr_scheduler_type", func(c *GRPOConfig) { c.LRSchedulerType = "step" }, `lr_scheduler_type = "step": must be one of linear, cosine, constant`},
		{"beta", func(c *GRPOConfig) { c.Beta = -0.1 }, "beta = -0.1: must be >= 0"},
		{"epsilon", func(c *GRPOConfig) { c.Epsilon = 0 }, "epsilon = 0: must be > 0"},
		{"epsilon_high", func(c *GRPOConfig) { c.EpsilonHigh = -0.3 }, "epsilon_high = -0.3: must be >= 0"},
		{"loss_type", func(c *GRPOConfig) { c.LossType = "ppo" }, `loss_type = "ppo": must be one of grpo, bnpo, dr_grpo, dapo`},
		{"scale_rewards", func(c *GRPOConfig) { c.ScaleRewards = "true" }, `scale_rewards = "true": must be one of group, batch, none`},
		{"num_iterations", func(c *GRPOConfig) { c.NumIterations = 0 }, "num_iterations = 0: must be at least 1"},
		{"reward_funcs empty", func(c *GRPOConfig) { c.RewardFuncs = nil }, "reward_funcs = []: must name at least one of correctness, operational, progress"},
		{"reward_funcs unknown", func(c *GRPOConfig) { c.RewardFuncs = []string{"correctnes"} }, `reward_funcs = "correctnes": unknown reward function`},
		{"reward_funcs twice", func(c *GRPOConfig) { c.RewardFuncs = []string{"progress", "progress"} }, `reward_funcs = "progress": listed twice`},
		{"reward_weights", func(c *GRPOConfig) { c.RewardWeights = []float64{1, 2} },
			"reward_weights = [1 2]: has 2 weights but reward_funcs has 3 functions"},
		{"logging_steps", func(c *GRPOConfig) { c.LoggingSteps = 0 }, "logging_steps = 0: must be at least 1"},
		{"save_steps", func(c *GRPOConfig) { c.SaveSteps = -1 }, "save_steps = -1: must be at least 0"},
		{"eval_steps", func(c *GRPOConfig) { c.EvalSteps = -1 }, "eval_steps = -1: must be at least 0"},
		{"sft_epochs", func(c *GRPOConfig) { c.SFTEpochs = 0 }, "sft_epochs = 0: must be at least 1"},
		{"sft_learning_rate", func(c *GRPOConfig) { c.SFTLearningRate = 0 }, "sft_learning_rate = 0: must be > 0"},
		{"sft_max_questions", func(c *GRPOConfig) { c.SFTMaxQuestions = -1 }, "sft_max_questions = -1: must be at least 0"},
		{"sft_batch_size", func(c *GRPOConfig) { c.SFTBatchSize = 0 }, "sft_batch_size = 0: must be at least 1"},
		{"sft_gradient_accumulation_steps", func(c *GRPOConfig) { c.SFTGradientAccumulationSteps = 0 }, "sft_gradient_accumulation_steps = 0: must be at least 1"},
		{"sft_length_group_batches", func(c *GRPOConfig) { c.SFTLengthGroupBatches = -1 }, "sft_length_group_batches = -1: must be at least 0"},
		{"heldout_fraction", func(c *GRPOConfig) { c.HeldoutFraction = 1 }, "heldout_fraction = 1: must be in [0, 1)"},
		{"eval_samples", func(c *GRPOConfig) { c.EvalSamples = -1 }, "eval_samples = -1: must be at least 0"},
		{"grpo_max_questions", func(c *GRPOConfig) { c.GRPOMaxQuestions = -2 }, "grpo_max_questions = -2: must be at least 0"},
		{"min_group_reward_std", func(c *GRPOConfig) { c.MinGroupRewardStd = -0.1 }, "min_group_reward_std = -0.1: must be >= 0"},
		{"dynamic_sampling", func(c *GRPOConfig) { c.DynamicSampling = -1 }, "dynamic_sampling = -1: must be at least 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := DefaultGRPOConfig()
			tc.modify(&c)
			err := c.Validate()
			if err == nil {
				t.Fatalf("no error, want %q", tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q\ndoes not contain %q", err, tc.want)
			}
		})
	}
}

func TestGRPOConfigValidateAccepts(t *testing.T) {
	for name, modify := range map[string]func(*GRPOConfig){
		"all difficulties":             func(c *GRPOConfig) { c.DifficultyFilter = nil },
		"difficulty case":              func(c *GRPOConfig) { c.DifficultyFilter = []string{"Hard"} },
		"max_steps instead of epochs":  func(c *GRPOConfig) { c.NumTrainEpochs, c.MaxSteps = 0, 100 },
		"weights one per function":     func(c *GRPOConfig) { c.RewardWeights = []float64{1, 0.5, 0} },
		"sft off ignores its settings": func(c *GRPOConfig) { c.SFTEnabled, c.SFTEpochs, c.SFTLearningRate = false, 0, 0 },
		"float32 cosine grpo none": func(c *GRPOConfig) {
			c.Precision, c.LRSchedulerType, c.LossType, c.ScaleRewards = "float32", "cosine", "grpo", "none"
		},
		"top_p bounds": func(c *GRPOConfig) { c.TopP = 0 },
		"group of 8 in 16": func(c *GRPOConfig) {
			c.NumGenerations, c.PerDeviceTrainBatchSize, c.GradientAccumulationSteps = 8, 4, 4
		},
	} {
		c := DefaultGRPOConfig()
		modify(&c)
		if err := c.Validate(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	c := DefaultGRPOConfig()
	c.NumGenerations, c.PerDeviceTrainBatchSize, c.GradientAccumulationSteps = 8, 4, 4
	if n := c.QuestionsPerStep(); n != 2 {
		t.Errorf("QuestionsPerStep() = %d, want 16/8 = 2", n)
	}
}

// Validate reports every problem at once.
func TestGRPOConfigValidateJoinsErrors(t *testing.T) {
	c := DefaultGRPOConfig()
	c.LossType, c.StepBudget = "x", 0
	err := c.Validate()
	if err == nil || !strings.Contains(err.Error(), "loss_type") || !strings.Contains(err.Error(), "step_budget") {
		t.Errorf("error %v does not report both problems", err)
	}
}

// TestGRPOConfigRedacted: what checkpoints record of a configuration hides
// the environment servers' token and passwords, and keeps the rest.
func TestGRPOConfigRedacted(t *testing.T) {
	c := DefaultGRPOConfig()
	c.EnvAuthToken = "tok-123"
	c.EnvServers = []string{"http://a:8000", "http://sqlenv:pw-456@b:8000"}
	r := c.Redacted()
	if r.EnvAuthToken != "(set)" || r.EnvServers[0] != "http://a:8000" || r.EnvServers[1] != "http://sqlenv:xxxxx@b:8000" {
		t.Errorf("redacted: %q %q", r.EnvAuthToken, r.EnvServers)
	}
	if c.EnvAuthToken != "tok-123" || c.EnvServers[1] != "http://sqlenv:pw-456@b:8000" {
		t.Error("Redacted changed the configuration it was called on")
	}
	if d := DefaultGRPOConfig(); !reflect.DeepEqual(d.Redacted(), d) {
		t.Error("a configuration without secrets changed")
	}
}
