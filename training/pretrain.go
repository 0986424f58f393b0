// Pre-training of the tiny base model: oracle imitation on many generated
// questions of the training databases, none of which the pipeline trains
// on, holds out or evaluates on.

package training

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/gomlx/compute/dtypes"
	"github.com/gosqlenv/gosqlenv/sqlenv"
	"github.com/gosqlenv/gosqlenv/sqlenv/dataset"
	"github.com/gosqlenv/gosqlenv/sqlenv/dataset/bundled"
	"github.com/gosqlenv/gosqlenv/sqlenv/sqlitedb"
	"github.com/gosqlenv/gosqlenv/training/tinybase"
	"github.com/gosqlenv/gosqlenv/training/tokenizer"
)

// PretrainData chooses the questions of pre-training: redrawn instances of
// bundled training databases (bundled.GenerateInstance: same schema and
// question templates, other rows, about half of the words made up), so that
// no constant or answer can be learned by heart.
type PretrainData struct {
	// Databases are the bundled training databases whose instances are
	// drawn (none: the pipeline's train_databases, or all training
	// databases when that is empty).
	Databases []string
	// Instances is the number of instances of each database (1…Instances).
	Instances int
	// PerInstance caps the questions taken from each instance of a
	// database, chosen at random with Seed (0: all of them).
	PerInstance int
	// Seed chooses the questions of each instance.
	Seed int64
	// Renamed trains on a renamed copy of each instance instead
	// (bundled.WriteRenamedCopy with bundled.PretrainNames: most tables
	// and columns under other names, drawn per instance), so that names
	// cannot be learned by heart and must be read from the observations.
	Renamed bool
	// RenamedCopies is the number of renamed copies of each instance when
	// Renamed (0 or 1: one). The questions of an instance go to its copies
	// in turn, so that each copy's names are seen on a few questions only:
	// with one copy per instance a model learns each copy's names by heart
	// (the table list tells which copy it is on) instead of reading them.
	RenamedCopies int
	// Reworded rewords the questions (bundled.Reword with
	// bundled.PretrainNames; about a third of them keep their wording).
	Reworded bool
}

// PretrainQuestions generates the instances of d into the pipeline's
// database directory, several at a time (an instance already there is
// reused: its bytes are deterministic) and returns their questions at the configured
// difficulties, minus any whose gold SQL or text is that of a question of
// the pipeline's question files (every training, held-out and evaluation
// question, whatever the split settings) — so that every split measures
// questions the base model never saw. A database of the evaluation split is
// refused.
func (p *Pipeline) PretrainQuestions(ctx context.Context, d PretrainData) ([]dataset.QuestionRecord, error) {
	if d.Instances < 1 {
		return nil, fmt.Errorf("pre-training needs at least one instance per database (got %d)", d.Instances)
	}
	dbs := d.Databases
	if len(dbs) == 0 {
		dbs = p.Config.TrainDatabases
	}
	if len(dbs) == 0 {
		dbs = bundled.Databases(dataset.Train)
	}
	for _, db := range dbs {
		if slices.Contains(bundled.Databases(dataset.Eval), db) {
			return nil, fmt.Errorf("pre-training on %s, a database of the unseen_databases split, would make it seen", db)
		}
	}
	used, err := p.allQuestionKeys(ctx)
	if err != nil {
		return nil, err
	}
	diffs := difficulties(p.Config.DifficultyFilter)
	type job struct {
		db string
		n  int
	}
	var jobs []job
	for n := 1; n <= d.Instances; n++ {
		for _, db := range dbs {
			jobs = append(jobs, job{db, n})
		}
	}
	generated := make([][]dataset.QuestionRecord, len(jobs))
	err = forEach(len(jobs), func(i int) (err error) {
		generated[i], err = bundled.GenerateInstance(ctx, p.Databases.Dir(), jobs[i].db, jobs[i].n, diffs...)
		return err
	})
	if err != nil {
		return nil, err
	}
	for i, j := range jobs {
		qs := slices.DeleteFunc(generated[i], used.has)
		if d.PerInstance > 0 && len(qs) > d.PerInstance {
			r := rand.New(rand.NewPCG(uint64(d.Seed), idHash(bundled.InstanceName(j.db, j.n))))
			pick := r.Perm(len(qs))[:d.PerInstance]
			slices.Sort(pick)
			kept := make([]dataset.QuestionRecord, len(pick))
			for k, at := range pick {
				kept[k] = qs[at]
			}
			qs = kept
		}
		generated[i] = qs
	}
	if d.Renamed || d.Reworded {
		err := forEach(len(jobs), func(i int) (err error) {
			generated[i], err = p.varyInstance(ctx, d, bundled.InstanceName(jobs[i].db, jobs[i].n), generated[i])
			return err
		})
		if err != nil {
			return nil, err
		}
	}
	var out []dataset.QuestionRecord
	for i := range jobs {
		out = append(out, generated[i]...)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no pre-training questions left for %v", dbs)
	}
	return out, nil
}

// varyInstance returns the questions qs of instance inst on its renamed
// copy (d.Renamed) and reworded (d.Reworded), each deterministically from
// the instance's name.
func (p *Pipeline) varyInstance(ctx context.Context, d PretrainData, inst string, qs []dataset.QuestionRecord) ([]dataset.QuestionRecord, error) {
	if d.Renamed && len(qs) > 0 {
		var err error
		if qs, err = p.renameInstance(ctx, inst, max(d.RenamedCopies, 1), qs); err != nil {
			return nil, err
		}
	}
	if d.Reworded {
		r := rand.New(rand.NewPCG(uint64(d.Seed), idHash(inst+"/reword")))
		for i := range qs {
			qs[i].QuestionText = bundled.Reword(qs[i].QuestionText, bundled.PretrainNames, r)
		}
	}
	return qs, nil
}

// renameInstance asks the questions qs of instance inst on its renamed
// copies 1…copies (question i on copy i mod copies + 1), in their order.
func (p *Pipeline) renameInstance(ctx context.Context, inst string, copies int, qs []dataset.QuestionRecord) ([]dataset.QuestionRecord, error) {
	out := make([]dataset.QuestionRecord, len(qs))
	for c := range min(copies, len(qs)) {
		dst := bundled.RenamedName(inst, bundled.PretrainNames, c+1)
		m, err := bundled.WriteRenamedCopy(ctx, p.Databases.Dir(), inst, dst, bundled.PretrainNames)
		if err != nil {
			return nil, err
		}
		var mine []dataset.QuestionRecord
		for i := c; i < len(qs); i += copies {
			mine = append(mine, qs[i])
		}
		renamed, err := bundled.RenameQuestions(ctx, p.Databases.Dir(), dst, dst+"_q", m, mine)
		if err != nil {
			return nil, err
		}
		for k, q := range renamed {
			out[c+k*copies] = q
		}
	}
	return out, nil
}

// forEach calls fn(0) … fn(n-1), GOMAXPROCS at a time, and joins their
// errors.
func forEach(n int, fn func(i int) error) error {
	errs := make([]error, n)
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), n) {
		wg.Go(func() {
			for i := range next {
				errs[i] = fn(i)
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	return errors.Join(errs...)
}

// allQuestionKeys fingerprints (questionKeys) every question of the
// pipeline's question files, of every database and difficulty, and the
// generated held-out and training questions of the training databases
// (HeldoutReserve and TrainReserve per database).
func (p *Pipeline) allQuestionKeys(ctx context.Context) (questionKeys, error) {
	used := questionKeys{}
	used.add(slices.Concat(p.Train, p.Heldout, p.Eval)...)
	for _, f := range []struct {
		path  string
		split dataset.Split
	}{{p.questionsPath, dataset.Train}, {p.evalQuestionsPath, dataset.Eval}} {
		if f.path == "" {
			continue
		}
		qs, err := dataset.Load(ctx, f.path, dataset.LoadOptions{DBDir: p.Databases.Dir(), Split: f.split})
		if err != nil {
			return nil, err
		}
		used.add(qs...)
		if f.split != dataset.Train {
			continue
		}
		// The generated held-out questions a run of these difficulties may
		// ask (up to HeldoutReserve per database).
		more, err := GeneratedHeldout(ctx, p.Databases.Dir(), qs, HeldoutReserve, p.Config.DifficultyFilter)
		if err != nil {
			return nil, err
		}
		used.add(more...)
		// And the generated training questions (up to TrainReserve), so
		// that the run's training questions are new to the base too.
		if more, err = GeneratedTraining(ctx, p.Databases.Dir(), qs, TrainReserve, p.Config.DifficultyFilter); err != nil {
			return nil, err
		}
		used.add(more...)
	}
	return used, nil
}

// HeldoutReserve is the number of generated held-out questions of
// each training database (GeneratedHeldout) that pre-training leaves out:
// a base model suits runs with heldout_generated up to it.
const HeldoutReserve = 100

// TrainReserve is the number of generated training questions of each
// training database (GeneratedTraining) that pre-training leaves out: a
// base model suits runs with train_generated up to it.
const TrainReserve = 200

// questionKeys holds the fingerprints of questions — SQLKey of the gold SQL
// and the text trimmed and in lower case — so that another question with
// either the same SQL or the same text is recognised.
type questionKeys map[string]bool

// add fingerprints qs.
func (k questionKeys) add(qs ...dataset.QuestionRecord) {
	for _, q := range qs {
		k[tinybase.SQLKey(q.GoldSQL)], k[questionText(q)] = true, true
	}
}

// has reports whether q has the gold SQL or the text of a question added.
func (k questionKeys) has(q dataset.QuestionRecord) bool {
	return k[tinybase.SQLKey(q.GoldSQL)] || k[questionText(q)]
}

func questionText(q dataset.QuestionRecord) string {
	return strings.ToLower(strings.TrimSpace(q.QuestionText))
}

// difficulties converts difficulty_filter's names.
func difficulties(names []string) []dataset.Difficulty {
	var out []dataset.Difficulty
	for _, d := range names {
		out = append(out, dataset.Difficulty(d))
	}
	return out
}

// eachDatabase calls fn with the questions of each database of qs in turn
// (runs of consecutive questions of one database, in order) and a factory
// of environments over a Databases that opens that database alone and is
// closed after fn returns. Pre-training reads hundreds of instance
// databases, and SQLite's heap limit is process-wide: kept open together,
// their caches would leave a query no memory.
func (p *Pipeline) eachDatabase(qs []dataset.QuestionRecord, fn func(group []dataset.QuestionRecord, newEnv func() (sqlenv.Env, error)) error) error {
	for start := 0; start < len(qs); {
		end := start + 1
		for end < len(qs) && qs[end].DatabaseName == qs[start].DatabaseName {
			end++
		}
		group := qs[start:end]
		dbs := sqlenv.OpenDatabases(p.Databases.Dir(), sqlitedb.Limits{})
		err := fn(group, func() (sqlenv.Env, error) {
			return sqlenv.New(sqlenv.Config{Questions: group, Databases: dbs, StepBudget: p.Config.StepBudget})
		})
		if cerr := dbs.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
		start = end
	}
	return nil
}

// oracleSamples plays the oracle on qs (Roller.OracleSamples), one
// database at a time (eachDatabase), and adds the schema lessons
// (Roller.SchemaLessons) of a share lessons of the questions (chosen by a
// hash of their ids).
func (p *Pipeline) oracleSamples(ctx context.Context, qs []dataset.QuestionRecord, lessons float64) ([]Sample, error) {
	var out []Sample
	err := p.eachDatabase(qs, func(group []dataset.QuestionRecord, newEnv func() (sqlenv.Env, error)) error {
		r := *p.Roller
		r.newEnv = newEnv
		samples, err := r.OracleSamples(ctx, group)
		if err != nil {
			return err
		}
		if lessons > 0 {
			taught := slices.DeleteFunc(slices.Clone(group), func(q dataset.QuestionRecord) bool {
				return float64(idHash(q.QuestionID+"/lessons")%1000) >= lessons*1000
			})
			more, err := r.SchemaLessons(ctx, taught)
			if err != nil {
				return err
			}
			samples = appendEpisodes(samples, more)
		}
		out = appendEpisodes(out, samples)
		return nil
	})
	return out, err
}

// appendEpisodes appends more to samples, numbering more's episodes
// (Sample.Episode, from 0) after the last of samples.
func appendEpisodes(samples, more []Sample) []Sample {
	next := 0
	if len(samples) > 0 {
		next = samples[len(samples)-1].Episode + 1
	}
	for i := range more {
		more[i].Episode += next
	}
	return append(samples, more...)
}

// PretrainLoss says which tokens of an oracle turn pre-training learns to
// predict.
type PretrainLoss string

const (
	// PretrainOnText (the default) trains on every token of each turn —
	// the question, the observations and the oracle's action: language
	// modelling of whole episodes. It gives ten times the training signal
	// of the actions alone, and much of it (a result line repeating a value,
	// a table's columns listed again) teaches the model to find and copy
	// text, which answering new questions needs.
	PretrainOnText PretrainLoss = "text"
	// PretrainOnActions trains on the oracle's actions only, as the SFT
	// warm-up does.
	PretrainOnActions PretrainLoss = "actions"
)

// PretrainResult is what Pretrain did.
type PretrainResult struct {
	Questions, Samples int
	// Steps is the number of optimizer steps of the whole pre-training.
	Steps int
	// ResumedFrom is the checkpoint the run continued from ("" if none).
	ResumedFrom string
	// FinalLoss is the mean token NLL over the last epoch's steps (of
	// this run, when it resumed within the last epoch).
	FinalLoss float64
}

// RunPretrain trains the pipeline's model on questions (PretrainQuestions) the
// way the SFT warm-up does — the oracle's turns, sft_epochs over
// sft_batch_size samples per step at sft_learning_rate — with the loss on
// the tokens Pipeline.PretrainLoss names (every token by default),
// with checkpoints under output_dir/pretrain every save_steps steps (the
// latest one kept) and, every eval_steps steps, the periodic evaluation of
// GRPO in the log (eval/<split>/greedy_success and constants_copied). It
// continues from the latest checkpoint there, if any,
// exactly where that run stopped: a pre-training cut into several runs
// ends with the same model, and the same log (RunLog.Rewind), as one
// uninterrupted run. The pipeline must have
// been opened with Pretrain set to the same questions before its model was
// loaded (the environment and the tiny vocabulary include them).
func (p *Pipeline) RunPretrain(ctx context.Context, log *RunLog) (PretrainResult, error) {
	if len(p.Pretrain) == 0 {
		return PretrainResult{}, errors.New("pretrain: Pipeline.Pretrain is empty (set it to PretrainQuestions before LoadModel)")
	}
	tr, samples, err := p.oracleTrainer(ctx, p.Pretrain, p.PretrainLessons, "pretrain", log)
	if err != nil {
		return PretrainResult{}, err
	}
	if p.PretrainLoss != PretrainOnActions {
		for i := range tr.Samples {
			s := &tr.Samples[i]
			s.Mask = make([]int32, len(s.IDs))
			for k := 1; k < len(s.Mask); k++ { // the first token has no prefix to predict it from
				s.Mask[k] = 1
			}
		}
	}
	tr.Stage, tr.KeepLastCheckpoint, tr.Evaluate = "pretrain", true, p.periodicEvaluation(log)
	res := PretrainResult{Questions: len(p.Pretrain), Samples: samples, Steps: tr.TotalSteps()}
	if res.ResumedFrom, err = tr.Resume(); err != nil {
		return res, err
	}
	if res.ResumedFrom != "" {
		if err := log.Rewind(tr.Learner.Steps); err != nil {
			return res, err
		}
	}
	if err := tr.Train(ctx); err != nil {
		return res, err
	}
	res.FinalLoss = tr.LastEpochLoss
	return res, nil
}

// SaveBaseModel writes the pipeline's model in float32 and its tokenizer
// to dir as a Hugging Face model directory, with provenance.json (prov,
// completed with the pre-training questions' SQL fingerprints).
func (p *Pipeline) SaveBaseModel(dir string, prov tinybase.Provenance) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := p.Model.HostWeights().Save(dir, dtypes.Float32); err != nil {
		return err
	}
	for _, f := range []string{tokenizer.TokenizerJSON, tokenizer.TokenizerConfig} {
		if err := copyIfExists(filepath.Join(p.TokenizerDir, f), filepath.Join(dir, f)); err != nil {
			return err
		}
	}
	prov.SeenSQL = nil
	for _, q := range p.Pretrain {
		prov.SeenSQL = append(prov.SeenSQL, tinybase.SQLKey(q.GoldSQL))
	}
	slices.Sort(prov.SeenSQL)
	prov.SeenSQL = slices.Compact(prov.SeenSQL)
	prov.Parameters = p.Model.Config.NumParameters()
	return writeJSON(filepath.Join(dir, tinybase.ProvenanceFile), prov)
}

// checkNotPretrained returns a *tinybase.ErrSeen naming the questions of qs
// whose gold SQL the base model was pre-trained on.
func checkNotPretrained(prov tinybase.Provenance, qs []dataset.QuestionRecord) error {
	var seen []string
	for _, q := range qs {
		if prov.Seen(q.GoldSQL) {
			seen = append(seen, q.QuestionID)
		}
	}
	if len(seen) > 0 {
		return &tinybase.ErrSeen{QuestionIDs: seen}
	}
	return nil
}
