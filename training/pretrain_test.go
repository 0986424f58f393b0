package training

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gosqlenv/gosqlenv/sqlenv/dataset"
	"github.com/gosqlenv/gosqlenv/sqlenv/dataset/bundled"
	"github.com/gosqlenv/gosqlenv/sqlenv/sqlitedb"
	"github.com/gosqlenv/gosqlenv/training/tinybase"
)

// TestPretrainQuestionsLeaveSplitsOut: the pre-training questions are
// those of redrawn instances of the training databases, and none has the
// gold SQL or the text of any question of the bundled dataset (every
// database, difficulty and split — also those this run's settings leave
// out) or of the generated held-out and training questions a run may ask.
func TestPretrainQuestionsLeaveSplitsOut(t *testing.T) {
	ctx := context.Background()
	cfg, paths := tinyPresetOnFreshData(t)
	cfg.TrainDatabases = []string{"university"} // the keys must cover the other databases too
	p, err := OpenData(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	data := PretrainData{Databases: []string{"university", "company_hr"}, Instances: 2, PerInstance: 60, Seed: 1}
	pre, err := p.PretrainQuestions(ctx, data)
	if err != nil {
		t.Fatal(err)
	}
	if len(pre) != 4*60 {
		t.Fatalf("%d pre-training questions, want 2 databases × 2 instances × 60", len(pre))
	}
	all, err := dataset.Load(ctx, paths.TrainQuestions, dataset.LoadOptions{DBDir: paths.DBDir})
	if err != nil {
		t.Fatal(err)
	}
	evalQs, err := dataset.Load(ctx, paths.EvalQuestions, dataset.LoadOptions{DBDir: paths.DBDir, Split: dataset.Eval})
	if err != nil {
		t.Fatal(err)
	}
	reserve, err := GeneratedHeldout(ctx, paths.DBDir, all, HeldoutReserve, cfg.DifficultyFilter)
	if err != nil {
		t.Fatal(err)
	}
	trainReserve, err := GeneratedTraining(ctx, paths.DBDir, all, TrainReserve, cfg.DifficultyFilter)
	if err != nil {
		t.Fatal(err)
	}
	used := map[string]string{}
	for _, q := range slices.Concat(all, evalQs, reserve, trainReserve) {
		used[tinybase.SQLKey(q.GoldSQL)] = q.QuestionID
		used[strings.ToLower(q.QuestionText)] = q.QuestionID
	}
	dbs := map[string]int{}
	for _, q := range pre {
		dbs[q.DatabaseName]++
		if q.Difficulty == dataset.Hard {
			t.Fatalf("pre-training question of a filtered difficulty: %+v", q)
		}
		if id, ok := used[tinybase.SQLKey(q.GoldSQL)]; ok {
			t.Fatalf("%s has the gold SQL of %s", q.QuestionID, id)
		}
		if id, ok := used[strings.ToLower(q.QuestionText)]; ok {
			t.Fatalf("%s has the text of %s", q.QuestionID, id)
		}
	}
	for _, db := range []string{"university_i1", "university_i2", "company_hr_i1", "company_hr_i2"} {
		if dbs[db] != 60 {
			t.Fatalf("questions by database %v", dbs)
		}
	}
	again, err := p.PretrainQuestions(ctx, data)
	if err != nil || len(again) != len(pre) || again[77].GoldSQL != pre[77].GoldSQL {
		t.Fatalf("not deterministic: %v", err)
	}
	if _, err := p.PretrainQuestions(ctx, PretrainData{Databases: []string{"university", p.Eval[0].DatabaseName}, Instances: 1}); err == nil || !strings.Contains(err.Error(), p.Eval[0].DatabaseName) {
		t.Fatalf("pre-training on an evaluation database: %v", err)
	}
	if _, err := p.PretrainQuestions(ctx, PretrainData{Instances: 0}); err == nil || !strings.Contains(err.Error(), "instance") {
		t.Fatalf("no instances: %v", err)
	}
	// Guard: a base model pre-trained on a held-out question is refused.
	prov := tinybase.Provenance{SeenSQL: []string{tinybase.SQLKey(p.Heldout[1].GoldSQL)}}
	var seen *tinybase.ErrSeen
	if err := checkNotPretrained(prov, p.Heldout); !errors.As(err, &seen) || len(seen.QuestionIDs) != 1 || seen.QuestionIDs[0] != p.Heldout[1].QuestionID ||
		!strings.Contains(err.Error(), p.Heldout[1].QuestionID) {
		t.Fatalf("held-out question seen in pre-training: %v", err)
	}
	if err := checkNotPretrained(tinybase.Provenance{}, p.Heldout); err != nil {
		t.Fatal(err)
	}
}

// TestPretrainSavesLoadableBase: a short pre-training run writes a model
// directory that loads as a model_name, with provenance listing the SQL it
// saw.
func TestPretrainSavesLoadableBase(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a tiny model")
	}
	ctx := context.Background()
	cfg := tinyPipelineConfig(t.TempDir())
	cfg.TrainDatabases, cfg.DifficultyFilter, cfg.HeldoutFraction = []string{"university"}, []string{"easy"}, 0.2
	cfg.SFTEpochs, cfg.SFTBatchSize, cfg.EvalSteps = 1, 4, 2
	onFreshData(t, &cfg)
	p, err := OpenData(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	pre, err := p.PretrainQuestions(ctx, PretrainData{Instances: 1, PerInstance: 6})
	if err != nil {
		t.Fatal(err)
	}
	p.Pretrain = pre[:6]
	if err := p.LoadModel(ctx); err != nil {
		t.Fatal(err)
	}
	log, err := NewRunLog(t.TempDir(), 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	var evaluated []int
	log.OnLog = func(m Metrics) {
		if v, ok := m["eval/"+SplitHeldout+"/greedy_success"]; ok {
			if v < 0 || v > 1 {
				t.Errorf("step %v: held-out greedy success %v", m["step"], v)
			}
			evaluated = append(evaluated, int(m["step"]))
		}
	}
	res, err := p.RunPretrain(ctx, log)
	if err != nil {
		t.Fatal(err)
	}
	if res.Questions != 6 || res.Samples < 12 || !(res.FinalLoss > 0) {
		t.Fatalf("result %+v", res)
	}
	// eval_steps 2: every second step and the last one.
	wantSteps := []int{}
	for s := 2; s <= res.Steps; s += 2 {
		wantSteps = append(wantSteps, s)
	}
	if res.Steps%2 == 1 {
		wantSteps = append(wantSteps, res.Steps)
	}
	if !slices.Equal(evaluated, wantSteps) {
		t.Fatalf("evaluated at steps %v, want %v (eval_steps 2, %d steps)", evaluated, wantSteps, res.Steps)
	}
	dir := filepath.Join(t.TempDir(), "base")
	if err := p.SaveBaseModel(dir, tinybase.Provenance{Command: "test"}); err != nil {
		t.Fatal(err)
	}
	prov, err := tinybase.ReadProvenance(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(prov.SeenSQL) != 6 || !prov.Seen(pre[3].GoldSQL) || prov.Seen(p.Train[0].GoldSQL) || prov.Parameters != p.Model.Config.NumParameters() {
		t.Fatalf("provenance %+v", prov)
	}
	cfg.ModelName = dir
	q, err := NewPipeline(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	want, _ := p.Model.Logits([][]int32{{1, 2, 3}})
	got, _ := q.Model.Logits([][]int32{{1, 2, 3}})
	if got[0][2][5] != want[0][2][5] {
		t.Fatalf("reloaded base differs: %v vs %v", got[0][2][5], want[0][2][5])
	}
}

// TestPretrainResumesToTheSameModel: a pre-training interrupted after a few
// steps (a checkpoint is saved) and run again continues from its latest
// checkpoint and ends with the model of an uninterrupted run — the same
// float32 weights, bit for bit: the same batches (grouped by length), learning rates and
// optimizer state, computed by the same programs. Run with other settings,
// or on other questions, it refuses the checkpoint; checkpoints whose save
// was cut short are passed over.
func TestPretrainResumesToTheSameModel(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a tiny model three times")
	}
	ctx := context.Background()
	paths, err := bundled.EnsureAt(ctx, filepath.Join(t.TempDir(), "data"))
	if err != nil {
		t.Fatal(err)
	}
	data := PretrainData{Instances: 1, PerInstance: 5, Seed: 3}
	run := func(out string, stopAt int, change ...func(*GRPOConfig)) (*Pipeline, PretrainResult, error) {
		cfg := tinyPipelineConfig(out)
		cfg.QuestionsPath, cfg.EvalQuestionsPath, cfg.DBDir = paths.TrainQuestions, paths.EvalQuestions, paths.DBDir
		cfg.TrainDatabases, cfg.DifficultyFilter = []string{"university"}, []string{"easy"}
		cfg.SFTEpochs, cfg.SFTBatchSize, cfg.SaveSteps = 2, 4, 2
		cfg.SFTLengthGroupBatches = 2 // resumes the same length-grouped batches
		for _, c := range change {
			c(&cfg)
		}
		p, err := OpenData(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { p.Close() })
		if p.Pretrain, err = p.PretrainQuestions(ctx, data); err != nil {
			t.Fatal(err)
		}
		if err := p.LoadModel(ctx); err != nil {
			t.Fatal(err)
		}
		log, err := NewRunLog(filepath.Join(out, "log"), 1, nil)
		if err != nil {
			t.Fatal(err)
		}
		runCtx, cancel := context.WithCancel(ctx)
		defer cancel()
		log.OnLog = func(m Metrics) {
			if int(m["step"]) == stopAt {
				cancel()
			}
		}
		res, err := p.RunPretrain(runCtx, log)
		return p, res, err
	}
	wholeOut := t.TempDir()
	whole, res, err := run(wholeOut, -1)
	if err != nil || res.ResumedFrom != "" || res.Steps < 6 {
		t.Fatalf("uninterrupted run: %+v, %v", res, err)
	}
	out := t.TempDir()
	if _, _, err := run(out, 3); !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted run: %v", err)
	}
	// Saves cut short by a killed process, after checkpoint-3: one without
	// its trainer_state.json, one with it truncated. Resuming passes over
	// them. The killed process had also logged step 4 and begun step 5's
	// line: resuming drops them from the log, and logs step 4 again.
	logPath := filepath.Join(out, "log", MetricsFile)
	f, err := os.OpenFile(logPath, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"step": 4, "loss": 99}` + "\n" + `{"step": 5, "lo`)
	f.Close()
	for step, state := range map[int]string{4: `{"global_step": 4, "sta`, 5: ""} {
		dir := filepath.Join(out, "pretrain", fmt.Sprintf("checkpoint-%d", step))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, "model.safetensors"), []byte("partial"), 0o644)
		if state != "" {
			os.WriteFile(filepath.Join(dir, "trainer_state.json"), []byte(state), 0o644)
		}
	}
	// Other settings refuse the checkpoint instead of continuing it.
	if _, _, err := run(out, -1, func(c *GRPOConfig) { c.SFTLearningRate /= 2 }); err == nil || !strings.Contains(err.Error(), "sft_learning_rate") {
		t.Fatalf("resuming with another learning rate: %v", err)
	}
	if _, _, err := run(out, -1, func(c *GRPOConfig) { c.SFTLengthGroupBatches = 0 }); err == nil || !strings.Contains(err.Error(), "sft_length_group_batches") {
		t.Fatalf("resuming with other batches: %v", err)
	}
	// So do other pre-training questions under the same settings (as when
	// the code that chooses them changes between two runs of a command).
	data.PerInstance = 4
	if _, _, err := run(out, -1); err == nil || !strings.Contains(err.Error(), "other samples") || !strings.Contains(err.Error(), "checkpoint-3") {
		t.Fatalf("resuming on other questions: %v", err)
	}
	data.PerInstance = 5
	resumed, res2, err := run(out, -1)
	if err != nil || filepath.Base(res2.ResumedFrom) != "checkpoint-3" || res2.Steps != res.Steps {
		t.Fatalf("resumed run: %+v, %v", res2, err)
	}
	if ckpts, _ := filepath.Glob(filepath.Join(out, "pretrain", "checkpoint-*")); len(ckpts) != 1 {
		t.Fatalf("checkpoints kept: %v (want the latest only)", ckpts)
	}
	logged := func(path string) []string {
		t.Helper()
		records, err := ReadMetrics(path)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, m := range records {
			out = append(out, fmt.Sprintf("step %v epoch %v loss %v grad_norm %v learning_rate %v", m["step"], m["epoch"], m["loss"], m["grad_norm"], m["learning_rate"]))
		}
		return out
	}
	if a, b := logged(filepath.Join(wholeOut, "log", MetricsFile)), logged(logPath); !slices.Equal(a, b) {
		t.Fatalf("the resumed run's log differs from the uninterrupted run's:\n%s\nvs\n%s", strings.Join(b, "\n"), strings.Join(a, "\n"))
	}
	a, b := whole.Model.HostWeights(), resumed.Model.HostWeights()
	for _, spec := range whole.Model.Config.Weights() {
		x, y := tensors.MustCopyFlatData[float32](a.Tensors[spec.Name]), tensors.MustCopyFlatData[float32](b.Tensors[spec.Name])
		if !slices.Equal(x, y) {
			i := 0
			for i = range x {
				if x[i] != y[i] {
					break
				}
			}
			t.Fatalf("%s differs after resuming: [%d] %v vs %v", spec.Name, i, x[i], y[i])
		}
	}
}

// TestGeneratedHeldout: heldout_generated adds generated questions of each
// training database to the held-out split — none a question of the files,
// of the filtered difficulties, the same for every run — and the questions
// of a smaller n are among those of a larger one, so that pre-training,
// which leaves out HeldoutReserve of them, never saw any a run asks.
func TestGeneratedHeldout(t *testing.T) {
	ctx := context.Background()
	cfg := DefaultGRPOConfig()
	TinyPreset(&cfg)
	cfg.OutputDir, cfg.HeldoutGenerated = t.TempDir(), 60
	p, err := OpenData(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if len(p.Heldout) != 10+60 {
		t.Fatalf("%d held-out questions, want the file's 10 and 60 generated", len(p.Heldout))
	}
	paths, err := bundled.Ensure(ctx)
	if err != nil {
		t.Fatal(err)
	}
	file, err := dataset.Load(ctx, paths.TrainQuestions, dataset.LoadOptions{DBDir: paths.DBDir})
	if err != nil {
		t.Fatal(err)
	}
	used := map[string]string{}
	for _, q := range file {
		used[tinybase.SQLKey(q.GoldSQL)], used[strings.ToLower(q.QuestionText)] = q.QuestionID, q.QuestionID
	}
	generated := 0
	for _, q := range p.Heldout {
		if !strings.Contains(q.QuestionID, "_more_") {
			continue
		}
		generated++
		if id, ok := used[tinybase.SQLKey(q.GoldSQL)]; ok {
			t.Errorf("generated held-out %s has the gold SQL of %s", q.QuestionID, id)
		}
		if id, ok := used[strings.ToLower(q.QuestionText)]; ok {
			t.Errorf("generated held-out %s has the text of %s", q.QuestionID, id)
		}
		if q.Difficulty == dataset.Hard || q.DatabaseName != "university" {
			t.Errorf("generated held-out question outside the filters: %+v", q)
		}
	}
	if generated != cfg.HeldoutGenerated {
		t.Fatalf("%d generated held-out questions, want %d", generated, cfg.HeldoutGenerated)
	}
	all := slices.Concat(p.Train, p.Heldout[:len(p.Heldout)-generated])
	small, err := GeneratedHeldout(ctx, paths.DBDir, all, 20, cfg.DifficultyFilter)
	if err != nil {
		t.Fatal(err)
	}
	large, err := GeneratedHeldout(ctx, paths.DBDir, all, HeldoutReserve, cfg.DifficultyFilter)
	if err != nil {
		t.Fatal(err)
	}
	if len(small) != 20 || len(large) != HeldoutReserve || !slices.EqualFunc(small, large[:20], func(a, b dataset.QuestionRecord) bool { return a.QuestionID == b.QuestionID }) {
		t.Fatalf("20 generated held-out questions are not the first of %d: %v vs %v", HeldoutReserve, QuestionIDs(small), QuestionIDs(large[:20]))
	}
	pool, err := bundled.MoreQuestions(ctx, paths.DBDir, "university", difficulties(cfg.DifficultyFilter)...)
	if err != nil {
		t.Fatal(err)
	}
	checkSpread(t, "generated held-out", pool, p.Heldout[len(p.Heldout)-generated:], 5)
	checkSpread(t, "file held-out", slices.Concat(p.Train[:42], p.Heldout[:10]), p.Heldout[:10], 2)
}

// checkSpread fails unless the questions chosen from pool come from across
// it: pool, sorted by id, is cut into `parts` consecutive stretches, and each
// must give at least a third of its fair share of chosen. A generator emits its
// templates in id order, so a choice from one stretch of ids is a choice of
// few templates — what ordering by an FNV hash of the ids gave (the
// generated held-out split: 52 of 60 questions of two templates, all from
// ids university_more_0400 to _0462).
func checkSpread(t *testing.T, what string, pool, chosen []dataset.QuestionRecord, parts int) {
	t.Helper()
	ids := QuestionIDs(pool)
	slices.Sort(ids)
	count := make([]int, parts)
	for _, q := range chosen {
		at, ok := slices.BinarySearch(ids, q.QuestionID)
		if !ok {
			t.Fatalf("%s question %s is not in the pool", what, q.QuestionID)
		}
		count[at*parts/len(ids)]++
	}
	fair := float64(len(chosen)) / float64(parts)
	for i, n := range count {
		if float64(n) < fair/3 {
			t.Errorf("%s: %d of %d questions come from part %d of %d of the pool's ids (%v per part): not a sample of the whole pool", what, n, len(chosen), i+1, parts, count)
			return
		}
	}
}

// TestGeneratedTraining: train_generated adds generated questions of each
// training database to the training split, none of them a held-out question
// (neither the file's nor a generated one, by gold SQL or text), however many
// heldout_generated asks; and heldout_generated beyond the reserve is refused
// by name.
func TestGeneratedTraining(t *testing.T) {
	ctx := context.Background()
	cfg := DefaultGRPOConfig()
	TinyPreset(&cfg)
	cfg.OutputDir, cfg.HeldoutGenerated, cfg.TrainGenerated = t.TempDir(), HeldoutReserve, 150
	p, err := OpenData(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if len(p.Train) != 42+150 {
		t.Fatalf("%d training questions, want the file's 42 and 150 generated", len(p.Train))
	}
	heldout := questionKeys{}
	heldout.add(p.Heldout...)
	generated := 0
	for _, q := range p.Train {
		if strings.Contains(q.QuestionID, "_more_") {
			generated++
		}
		if heldout.has(q) {
			t.Errorf("training question %s (%q) is also held out", q.QuestionID, q.QuestionText)
		}
	}
	if generated != 150 {
		t.Fatalf("%d generated training questions, want 150", generated)
	}
	if got := len(p.SFTQuestions()); got != len(p.Train) {
		t.Fatalf("SFT imitates %d questions, want all %d", got, len(p.Train))
	}

	cfg.HeldoutGenerated = HeldoutReserve + 1
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "heldout_generated") {
		t.Fatalf("heldout_generated = %d: error %v, want one naming heldout_generated", cfg.HeldoutGenerated, err)
	}
}

// TestRenamedPretrainingLeavesReadingSplitsOut: pre-training on renamed,
// reworded instances asks every question on a renamed copy of its
// instance, and shares no table or column name with the renamed_schema
// split's copies and no text with the paraphrased_questions split, which
// hold every held-out question.
func TestRenamedPretrainingLeavesReadingSplitsOut(t *testing.T) {
	ctx := context.Background()
	cfg, paths := tinyPresetOnFreshData(t)
	cfg.TrainDatabases = []string{"university", "library"}
	p, err := OpenData(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if len(p.Renamed) != len(p.Heldout) || len(p.Paraphrased) != len(p.Heldout) {
		t.Fatalf("%d renamed and %d paraphrased questions of %d held-out", len(p.Renamed), len(p.Paraphrased), len(p.Heldout))
	}
	heldoutText := map[string]bool{}
	for i, q := range p.Heldout {
		r, para := p.Renamed[i], p.Paraphrased[i]
		if r.DatabaseName != q.DatabaseName+"_r1" || r.GoldAnswer != q.GoldAnswer || r.QuestionText != q.QuestionText || r.GoldSQL == q.GoldSQL {
			t.Fatalf("renamed %+v of %+v", r, q)
		}
		if para.QuestionText == q.QuestionText || para.GoldSQL != q.GoldSQL || para.DatabaseName != q.DatabaseName {
			t.Fatalf("paraphrased %+v of %+v", para, q)
		}
		heldoutText[strings.ToLower(para.QuestionText)] = true
	}
	pre, err := p.PretrainQuestions(ctx, PretrainData{Databases: []string{"university", "library"}, Instances: 2, Seed: 1, Renamed: true, Reworded: true})
	if err != nil {
		t.Fatal(err)
	}
	names := func(db string) map[string]bool {
		d, err := sqlitedb.Open(sqlitedb.Path(paths.DBDir, db), sqlitedb.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		out := map[string]bool{}
		for _, tb := range d.Tables() {
			out[strings.ToLower(tb.Name)] = true
			for _, c := range tb.Columns {
				out[strings.ToLower(c.Name)] = true
			}
		}
		return out
	}
	heldoutNames := map[string]bool{}
	for _, db := range []string{"university_r1", "library_r1"} {
		maps.Copy(heldoutNames, names(db))
	}
	dbs := map[string]bool{}
	for _, q := range pre {
		if !strings.HasSuffix(q.DatabaseName, "_v1") {
			t.Fatalf("pre-training question on %s, not a renamed copy", q.DatabaseName)
		}
		if heldoutText[strings.ToLower(q.QuestionText)] {
			t.Fatalf("pre-training question %q is a paraphrased question", q.QuestionText)
		}
		if !dbs[q.DatabaseName] {
			dbs[q.DatabaseName] = true
			for n := range names(q.DatabaseName) {
				if heldoutNames[n] {
					t.Fatalf("%s has the renamed_schema name %q", q.DatabaseName, n)
				}
			}
		}
	}
	if len(dbs) != 4 {
		t.Fatalf("pre-training databases %v, want 2 × 2 renamed copies", dbs)
	}
}

// tinyPresetOnFreshData is the notebook's preset over the bundled dataset
// generated into a temporary directory, writing into another.
func tinyPresetOnFreshData(t *testing.T) (GRPOConfig, bundled.Paths) {
	t.Helper()
	cfg := DefaultGRPOConfig()
	TinyPreset(&cfg)
	cfg.OutputDir = t.TempDir()
	return cfg, onFreshData(t, &cfg)
}

// onFreshData generates the bundled dataset into a temporary directory and
// points cfg's question files and database directory at it.
func onFreshData(t *testing.T, cfg *GRPOConfig) bundled.Paths {
	t.Helper()
	paths, err := bundled.EnsureAt(context.Background(), filepath.Join(t.TempDir(), "data"))
	if err != nil {
		t.Fatal(err)
	}
	cfg.QuestionsPath, cfg.EvalQuestionsPath, cfg.DBDir = paths.TrainQuestions, paths.EvalQuestions, paths.DBDir
	return paths
}

// TestRenamedCopiesTakeTurns: with RenamedCopies, an instance's questions
// are asked on its copies in turn — the same questions, answers and order
// as with one copy — and the copies carry different names.
func TestRenamedCopiesTakeTurns(t *testing.T) {
	ctx := context.Background()
	cfg, paths := tinyPresetOnFreshData(t)
	cfg.TrainDatabases = []string{"library"}
	p, err := OpenData(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	data := PretrainData{Databases: []string{"library"}, Instances: 1, Seed: 1, Renamed: true}
	one, err := p.PretrainQuestions(ctx, data)
	if err != nil {
		t.Fatal(err)
	}
	data.RenamedCopies = 3
	three, err := p.PretrainQuestions(ctx, data)
	if err != nil {
		t.Fatal(err)
	}
	if len(three) != len(one) || len(one) < 3 {
		t.Fatalf("%d questions on 3 copies, %d on one", len(three), len(one))
	}
	for i, q := range three {
		want := fmt.Sprintf("library_i1_v%d", i%3+1)
		if q.DatabaseName != want || q.QuestionText != one[i].QuestionText || q.GoldAnswer != one[i].GoldAnswer {
			t.Fatalf("question %d: %s %q → %q, want on %s %q → %q", i, q.DatabaseName, q.QuestionText, q.GoldAnswer,
				want, one[i].QuestionText, one[i].GoldAnswer)
		}
	}
	tables := func(db string) string {
		d, err := sqlitedb.Open(sqlitedb.Path(paths.DBDir, db), sqlitedb.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		var names []string
		for _, tb := range d.Tables() {
			names = append(names, tb.Name)
		}
		return strings.Join(names, ",")
	}
	v1, v2, v3 := tables("library_i1_v1"), tables("library_i1_v2"), tables("library_i1_v3")
	if v1 == v2 || v2 == v3 || v1 == v3 {
		t.Errorf("copies share their table names: %s / %s / %s", v1, v2, v3)
	}
}
