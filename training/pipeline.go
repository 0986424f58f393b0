package training

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/gomlx/compute"
	"github.com/gosqlenv/gosqlenv/sqlenv"
	"github.com/gosqlenv/gosqlenv/sqlenv/client"
	"github.com/gosqlenv/gosqlenv/sqlenv/dataset"
	"github.com/gosqlenv/gosqlenv/sqlenv/dataset/bundled"
	"github.com/gosqlenv/gosqlenv/sqlenv/sqlitedb"
	"github.com/gosqlenv/gosqlenv/training/qwen3"
)

// Pipeline holds everything a run needs, built from a GRPOConfig: questions,
// shared databases, backend, model, tokenizer and roller.
type Pipeline struct {
	Config    GRPOConfig
	Backend   compute.Backend
	Model     *qwen3.Model
	Tokenizer ChatTokenizer
	// TokenizerDir holds the tokenizer files (copied into checkpoints).
	TokenizerDir string
	Databases    *sqlenv.Databases
	// Train holds the training questions (SFT and GRPO), Heldout the
	// held-out questions of the training databases, Eval the questions of
	// the evaluation databases (never trained on).
	Train, Heldout, Eval []dataset.QuestionRecord
	// Renamed and Paraphrased hold the held-out questions on renamed
	// copies of their databases and in other wordings (reading_splits).
	Renamed, Paraphrased []dataset.QuestionRecord
	// Pretrain holds the questions of pre-training (set only to make a base
	// model, see PretrainQuestions): the environment and the tiny vocabulary
	// include them.
	Pretrain []dataset.QuestionRecord
	// PretrainLoss chooses the tokens RunPretrain trains on ("":
	// PretrainOnText).
	PretrainLoss PretrainLoss
	// PretrainLessons is the share of the pre-training questions (chosen
	// by a hash of their ids) whose databases also give schema lessons
	// (Roller.SchemaLessons: re-write the table list, a table's columns);
	// 0: none.
	PretrainLessons float64
	// TokenizerPattern is the pre-tokenizer pattern of the vocabulary
	// learned for model_name tiny ("": Qwen's); the pretrain command sets
	// TinyTokenizerPattern.
	TokenizerPattern string
	// TinyHeads, when positive, gives the random tiny model (model_name
	// tiny) that many attention heads, each with its own key and value
	// head, instead of TinyModelConfig's 4 query heads sharing 2 key/value
	// heads; the pretrain command sets it (see TinyPretrainHeads).
	TinyHeads int
	Roller    *Roller
	// OnEvaluate, when set, is told how an evaluation (EvaluateSplits,
	// EvaluateAndRecord) progresses: at the start of each split, after each
	// turn of its episodes, and when it is done.
	OnEvaluate func(EvalProgress)
	// questionsPath and evalQuestionsPath are the question files read.
	questionsPath, evalQuestionsPath string
	// envServers spreads episodes over env_servers (nil: in process).
	envServers *client.Pool
	// budgetsChecked holds the evaluation splits whose questions were
	// checked against the generation budgets (checkSplitBudgets).
	budgetsChecked map[string]bool
}

// NewPipeline validates cfg, loads the questions (the bundled dataset unless
// paths are given), filters them by difficulty, creates the backend and the
// model (TinyModelName, a local directory or a Hub id) and the roller.
func NewPipeline(ctx context.Context, cfg GRPOConfig) (*Pipeline, error) {
	p, err := OpenData(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if err := p.ConnectEnvServers(ctx); err != nil {
		p.Close()
		return nil, err
	}
	if err := p.LoadModel(ctx); err != nil {
		p.Close()
		return nil, err
	}
	return p, nil
}

// OpenData is the data half of NewPipeline: questions and databases, no
// model (LoadModel adds it).
func OpenData(ctx context.Context, cfg GRPOConfig) (*Pipeline, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	p := &Pipeline{Config: cfg}
	if err := p.loadQuestions(ctx); err != nil {
		return nil, err
	}
	return p, nil
}

// RolloutConfig derives the roller's settings from the run configuration.
func (p *Pipeline) RolloutConfig() RolloutConfig {
	c := p.Config
	return RolloutConfig{SystemPrompt: c.SystemPrompt, NumGenerations: c.NumGenerations, MaxNewTokens: c.MaxNewTokens, MaxCompletionLength: c.MaxCompletionLength,
		HistoryPairs: c.HistoryPairs, MaxResultChars: c.MaxResultChars, Temperature: c.Temperature, TopP: c.TopP, TopK: c.TopK,
		EnableThinking: c.EnableThinking, LengthBucket: c.LengthBucket, Seed: int64(c.Seed), SharePrompts: c.PrefixSharing,
		BatchEpisodes: c.RolloutBatchEpisodes, MaxBatchBytes: int64(c.GenerationMemoryMB) << 20, StaticShapes: p.StaticShapes()}
}

// StaticShapes reports whether the run's programs have static shapes
// (static_shapes: auto means on for XLA backends, off for the pure-Go
// backend).
func (p *Pipeline) StaticShapes() bool {
	v, err := ParseStaticShapes(p.Config.StaticShapes)
	if err == nil && v != nil {
		return *v
	}
	return p.Backend != nil && !qwen3.IsGoBackend(p.Backend)
}

// NewEnv makes an environment for one episode: in process over all
// questions (training, held-out and evaluation) sharing the pipeline's
// databases, or, with env_servers, a session on one of the servers.
func (p *Pipeline) NewEnv() (sqlenv.Env, error) {
	if p.envServers != nil {
		return p.envServers.NewEnv()
	}
	return sqlenv.New(p.envConfig(slices.Concat(p.Pretrain, p.EpisodeQuestions())))
}

// envConfig is the in-process environment over qs.
func (p *Pipeline) envConfig(qs []dataset.QuestionRecord) sqlenv.Config {
	return sqlenv.Config{Questions: qs, Databases: p.Databases, StepBudget: p.Config.StepBudget}
}

// EpisodeQuestions are the questions whose episodes rollouts and
// evaluations play: training, held-out and unseen-database questions (what
// env_servers must serve).
func (p *Pipeline) EpisodeQuestions() []dataset.QuestionRecord {
	return slices.Concat(p.Train, p.Heldout, p.Renamed, p.Paraphrased, p.Eval)
}

// ConnectEnvServers makes NewEnv play on env_servers, after checking that
// each plays this run's episodes exactly as an in-process environment
// would (client.CheckServer: questions, gold, database files, rules). It
// does nothing when env_servers is empty.
func (p *Pipeline) ConnectEnvServers(ctx context.Context) error {
	c := p.Config
	if len(c.EnvServers) == 0 {
		return nil
	}
	opts := &client.Options{HTTP: c.EnvTransport == "http"}
	if c.EnvAuthToken != "" {
		opts.Header = http.Header{"Authorization": {"Bearer " + c.EnvAuthToken}}
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	servers, err := usableServers(c.EnvServers, client.CheckEachServer(ctx, c.EnvServers, opts, p.envConfig(p.EpisodeQuestions())))
	if err != nil {
		return err
	}
	pool, err := client.NewPool(servers, opts)
	if err != nil {
		return fmt.Errorf("env_servers: %w", err)
	}
	p.envServers = pool
	return nil
}

// usableServers returns the servers whose check passed (errs: each
// server's result). A server that does not answer is skipped with a
// warning — it was not checked, so this run does not use it even if it
// comes back — unless none answers; a server that answers but differs from
// the run (questions, databases, rules, token) stops it.
func usableServers(addrs []string, errs []error) ([]string, error) {
	var ok []string
	var down, wrong []error
	for i, err := range errs {
		switch {
		case err == nil:
			ok = append(ok, addrs[i])
		case client.IsUnreachable(err):
			down = append(down, err)
		default:
			wrong = append(wrong, err)
		}
	}
	switch {
	case len(wrong) > 0:
		return nil, fmt.Errorf("env_servers: %w", errors.Join(wrong...))
	case len(ok) == 0:
		return nil, fmt.Errorf("env_servers: no server answered: %w", errors.Join(down...))
	}
	for _, err := range down {
		fmt.Fprintf(os.Stderr, "warning: env_servers: skipped (no answer at start; this run does not use it, restart the run to): %v\n", err)
	}
	return ok, nil
}

// Close releases the databases.
func (p *Pipeline) Close() error {
	if p.Databases != nil {
		return p.Databases.Close()
	}
	return nil
}

// GRPOQuestions returns the training questions GRPO plays: all of Train, or
// grpo_max_questions of them spread over the databases.
func (p *Pipeline) GRPOQuestions() []dataset.QuestionRecord {
	return SpreadOverDatabases(p.Train, p.Config.GRPOMaxQuestions)
}

// SFTQuestions returns the training questions the SFT warm-up imitates: all
// of Train, or sft_max_questions of them spread over the databases.
func (p *Pipeline) SFTQuestions() []dataset.QuestionRecord {
	return SpreadOverDatabases(p.Train, p.Config.SFTMaxQuestions)
}

// loadQuestions reads the questions and opens the databases: the training
// file's questions of train_databases and difficulty_filter, minus the held
// out ones (heldout_fraction), capped by max_train_questions; the evaluation
// file's questions (unseen databases).
func (p *Pipeline) loadQuestions(ctx context.Context) error {
	c := p.Config
	trainPath, evalPath, dbDir := c.QuestionsPath, c.EvalQuestionsPath, c.DBDir
	if trainPath == "" && evalPath == "" && dbDir == "" {
		paths, err := bundled.Ensure(ctx)
		if err != nil {
			return err
		}
		trainPath, evalPath, dbDir = paths.TrainQuestions, paths.EvalQuestions, paths.DBDir
	} else if trainPath == "" || dbDir == "" {
		return errors.New("config: give questions_path and db_dir (and eval_questions_path), or none of them for the bundled dataset")
	}
	load := func(path string, split dataset.Split, databases []string) ([]dataset.QuestionRecord, error) {
		qs, err := dataset.Load(ctx, path, dataset.LoadOptions{DBDir: dbDir, Split: split})
		if err != nil {
			return nil, err
		}
		if err := checkDatabases(path, qs, databases); err != nil {
			return nil, err
		}
		if qs, err = (dataset.Filter{Difficulties: c.DifficultyFilter, Databases: databases}).Apply(qs); err != nil {
			return nil, err
		}
		if len(qs) == 0 {
			return nil, fmt.Errorf("questions file %s has no %s questions of difficulty %v", path, split, c.DifficultyFilter)
		}
		return qs, nil
	}
	p.questionsPath, p.evalQuestionsPath = trainPath, evalPath
	all, err := load(trainPath, dataset.Train, c.TrainDatabases)
	if err != nil {
		return err
	}
	train, heldout := HoldOut(all, c.HeldoutFraction)
	if len(train) == 0 {
		return fmt.Errorf("heldout_fraction = %g leaves no training questions of %d", c.HeldoutFraction, len(all))
	}
	if c.TrainGenerated > 0 {
		more, err := GeneratedTraining(ctx, dbDir, all, c.TrainGenerated, c.DifficultyFilter)
		if err != nil {
			return err
		}
		train = append(train, more...)
	}
	p.Train, p.Heldout = SpreadOverDatabases(train, c.MaxTrainQuestions), heldout
	if p.Train, err = VaryTraining(ctx, dbDir, p.Train, c.TrainRenamed, c.TrainReworded, uint64(c.Seed)); err != nil {
		return err
	}
	if c.HeldoutGenerated > 0 {
		more, err := GeneratedHeldout(ctx, dbDir, all, c.HeldoutGenerated, c.DifficultyFilter)
		if err != nil {
			return err
		}
		p.Heldout = append(p.Heldout, more...)
	}
	if evalPath != "" {
		if p.Eval, err = load(evalPath, dataset.Eval, nil); err != nil {
			return err
		}
	}
	if c.ReadingSplits {
		if p.Renamed, p.Paraphrased, err = ReadingSplits(ctx, dbDir, p.Heldout); err != nil {
			return err
		}
	}
	p.Databases = sqlenv.OpenDatabases(dbDir, sqlitedb.Limits{})
	return nil
}

// VaryTraining asks a share renamed (chosen by a hash of the ids) of the
// training questions qs on a renamed copy of their database
// (<database>_v1 in dbDir, bundled.PretrainNames; written there if
// missing), with ids <id>_v1, and rewords a share reworded of them
// (bundled.Reword with PretrainNames, drawn from seed and the id); the
// others are kept as they are, in order.
func VaryTraining(ctx context.Context, dbDir string, qs []dataset.QuestionRecord, renamed, reworded float64, seed uint64) ([]dataset.QuestionRecord, error) {
	if renamed <= 0 && reworded <= 0 {
		return qs, nil
	}
	out := slices.Clone(qs)
	byDB := map[string][]int{}
	var dbs []string
	for i, q := range qs {
		if renamed > 0 && unitHash(q.QuestionID+"/renamed") < renamed {
			if _, ok := byDB[q.DatabaseName]; !ok {
				dbs = append(dbs, q.DatabaseName)
			}
			byDB[q.DatabaseName] = append(byDB[q.DatabaseName], i)
		}
	}
	for _, db := range dbs {
		dst := bundled.RenamedName(db, bundled.PretrainNames, 1)
		m, err := bundled.WriteRenamedCopy(ctx, dbDir, db, dst, bundled.PretrainNames)
		if err != nil {
			return nil, fmt.Errorf("train_renamed: %w", err)
		}
		picked := make([]dataset.QuestionRecord, len(byDB[db]))
		for k, i := range byDB[db] {
			picked[k] = qs[i]
		}
		rs, err := bundled.RenameQuestions(ctx, dbDir, dst, dst+"_q", m, picked)
		if err != nil {
			return nil, fmt.Errorf("train_renamed: %w", err)
		}
		for k, i := range byDB[db] {
			rs[k].QuestionID = qs[i].QuestionID + "_v1"
			out[i] = rs[k]
		}
	}
	for i := range out {
		if reworded > 0 && unitHash(qs[i].QuestionID+"/reworded") < reworded {
			r := rand.New(rand.NewPCG(seed, idHash(qs[i].QuestionID)))
			out[i].QuestionText = bundled.Reword(out[i].QuestionText, bundled.PretrainNames, r)
		}
	}
	return out, nil
}

// unitHash maps s to [0, 1) (idHash).
func unitHash(s string) float64 { return float64(idHash(s)>>11) / (1 << 53) }

// ReadingSplits makes the renamed_schema and paraphrased_questions splits
// of held-out questions, in their order: renamed, each question on the renamed copy
// <database>_r1 of its database in dbDir (written there if missing:
// bundled.WriteRenamedCopy with bundled.HeldoutNames), with ids
// <database>_r1_q_<n>; paraphrased, each question reworded
// (bundled.Reword with bundled.HeldoutNames, drawn from the question's id,
// so the same for every seed), with id <id>_p.
func ReadingSplits(ctx context.Context, dbDir string, heldout []dataset.QuestionRecord) (renamed, paraphrased []dataset.QuestionRecord, err error) {
	var dbs []string
	byDB := map[string][]dataset.QuestionRecord{}
	for _, q := range heldout {
		if _, ok := byDB[q.DatabaseName]; !ok {
			dbs = append(dbs, q.DatabaseName)
		}
		byDB[q.DatabaseName] = append(byDB[q.DatabaseName], q)
	}
	byID := map[string]dataset.QuestionRecord{}
	for _, db := range dbs {
		dst := bundled.RenamedName(db, bundled.HeldoutNames, 1)
		m, err := bundled.WriteRenamedCopy(ctx, dbDir, db, dst, bundled.HeldoutNames)
		if err != nil {
			return nil, nil, fmt.Errorf("reading_splits: %w (set reading_splits to false to leave the split out)", err)
		}
		qs, err := bundled.RenameQuestions(ctx, dbDir, dst, dst+"_q", m, byDB[db])
		if err != nil {
			return nil, nil, fmt.Errorf("reading_splits: %w", err)
		}
		for i, q := range byDB[db] {
			byID[q.QuestionID] = qs[i]
		}
	}
	for _, q := range heldout {
		renamed = append(renamed, byID[q.QuestionID])
	}
	for _, q := range heldout {
		r := rand.New(rand.NewPCG(idHash(q.QuestionID), 0x9e3779b97f4a7c15))
		q.QuestionText = bundled.Reword(q.QuestionText, bundled.HeldoutNames, r)
		q.QuestionID += "_p"
		paraphrased = append(paraphrased, q)
	}
	return renamed, paraphrased, nil
}

// GeneratedHeldout returns, for each database of qs (a bundled training
// database), n questions its templates give at the difficulties
// (bundled.MoreQuestions) that are not questions of qs — neither their gold
// SQL nor their text — chosen by a hash of their ids: the held-out split's
// generated questions (heldout_generated). The order is prefix-stable: a
// larger n adds questions. Pre-training leaves out the first HeldoutReserve.
func GeneratedHeldout(ctx context.Context, dbDir string, qs []dataset.QuestionRecord, n int, diffNames []string) ([]dataset.QuestionRecord, error) {
	return generatedQuestions(ctx, "heldout_generated", dbDir, qs, 0, n, diffNames)
}

// GeneratedTraining returns, for each database of qs, n generated questions
// as GeneratedHeldout orders them but after its first HeldoutReserve: the
// training split's generated questions (train_generated), none of them a
// held-out question.
func GeneratedTraining(ctx context.Context, dbDir string, qs []dataset.QuestionRecord, n int, diffNames []string) ([]dataset.QuestionRecord, error) {
	return generatedQuestions(ctx, "train_generated", dbDir, qs, HeldoutReserve, n, diffNames)
}

// generatedQuestions returns, per database of qs, the generated questions
// [skip, skip+n) in hash order, leaving out those of qs; setting names the
// configuration key in errors.
func generatedQuestions(ctx context.Context, setting, dbDir string, qs []dataset.QuestionRecord, skip, n int, diffNames []string) ([]dataset.QuestionRecord, error) {
	used := questionKeys{}
	used.add(qs...)
	var dbs []string
	for _, q := range qs {
		if !slices.Contains(dbs, q.DatabaseName) {
			dbs = append(dbs, q.DatabaseName)
		}
	}
	var out []dataset.QuestionRecord
	for _, db := range dbs {
		more, err := bundled.MoreQuestions(ctx, dbDir, db, difficulties(diffNames)...)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", setting, err)
		}
		more = slices.DeleteFunc(more, used.has)
		slices.SortStableFunc(more, func(a, b dataset.QuestionRecord) int { return cmp.Compare(idHash(a.QuestionID), idHash(b.QuestionID)) })
		from := min(skip, len(more))
		out = append(out, more[from:min(from+n, len(more))]...)
	}
	return out, nil
}

// EvalQuestions returns up to max_eval_questions questions of an evaluation
// split (SplitTrain, SplitHeldout or SplitUnseen), spread over its databases
// and, under a cap, sampled from all of each database's questions
// (EvalSample), not the first ones of the file. The training split is the
// questions GRPO plays (GRPOQuestions: all training questions unless
// grpo_max_questions picks fewer; the SFT warm-up saw them too).
func (p *Pipeline) EvalQuestions(split string) ([]dataset.QuestionRecord, error) {
	var qs []dataset.QuestionRecord
	switch split {
	case SplitTrain:
		qs = p.GRPOQuestions()
	case SplitHeldout:
		qs = p.Heldout
	case SplitRenamed:
		qs = p.Renamed
	case SplitParaphrased:
		qs = p.Paraphrased
	case SplitUnseen:
		qs = p.Eval
	default:
		return nil, fmt.Errorf("unknown evaluation split %q (%s)", split, strings.Join(Splits, ", "))
	}
	return EvalSample(qs, p.Config.MaxEvalQuestions), nil
}
