package sqlenv

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/gosqlenv/gosqlenv/sqlenv/answer"
	"github.com/gosqlenv/gosqlenv/sqlenv/dataset"
	"github.com/gosqlenv/gosqlenv/sqlenv/dataset/bundled"
	"github.com/gosqlenv/gosqlenv/sqlenv/sqlitedb"
)

var ctx = context.Background()

func reset(t *testing.T, e *Environment, id string) Observation {
	t.Helper()
	obs, err := e.Reset(ctx, ResetOptions{QuestionID: id})
	if err != nil {
		t.Fatal(err)
	}
	return obs
}

func step(t *testing.T, e *Environment, kind ActionType, arg string) Observation {
	t.Helper()
	obs, err := e.Step(ctx, Action{ActionType: kind, Argument: arg})
	if err != nil {
		t.Fatal(err)
	}
	return obs
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-12 }

func TestFixtureGold(t *testing.T) {
	f := newFixture(t)
	want := []struct {
		gold string
		typ  answer.Type
		diff dataset.Difficulty
	}{
		{"32", answer.Integer, dataset.Easy},
		{"Ben Diaz, Gia Diaz, Dan Berg, Ada Okafor, Finn Okafor, Cleo Rossi, Hugo Rossi", answer.List, dataset.Easy},
		{"63.0", answer.Float, dataset.Easy},
		{"Oslo", answer.String, dataset.Easy},
		{"4", answer.Integer, dataset.Medium},
		{"", answer.Table, dataset.Medium},
		{"", answer.Integer, dataset.Hard},
	}
	for i, w := range want {
		q := f.questions[i]
		if (w.gold != "" && string(q.GoldAnswer) != w.gold) || q.AnswerType != w.typ || q.Difficulty != w.diff {
			t.Errorf("question %d: gold %q %s %s, want %q %s %s", i, q.GoldAnswer, q.AnswerType, q.Difficulty, w.gold, w.typ, w.diff)
		}
	}
	if got := strings.Join(f.questions[6].TablesInvolved, ","); got != "customer,orders,product" {
		t.Errorf("tables of the hard question = %s", got)
	}
}

func TestResetShowsOnlyTableNames(t *testing.T) {
	f := newFixture(t)
	e := f.env(t, Config{})
	obs := reset(t, e, "shop_train_000")
	if obs.Question != "How many customers are there?" || obs.SchemaInfo != "Tables: customer, orders, product" {
		t.Fatalf("reset observation: %+v", obs)
	}
	if obs.StepCount != 0 || obs.BudgetRemaining != 15 || obs.Done || obs.Reward != 0 || obs.Result != "" || obs.Error != "" || len(obs.ActionHistory) != 0 {
		t.Fatalf("reset observation: %+v", obs)
	}
	if obs.Metadata[MetaQuestionID] != "shop_train_000" || obs.Metadata[MetaDatabaseName] != "shop" || obs.Metadata[MetaEpisodeID] == "" {
		t.Fatalf("metadata: %v", obs.Metadata)
	}
	if st := e.State(); st.StepCount != 0 || st.EpisodeID != obs.Metadata[MetaEpisodeID] || st.QuestionID != "shop_train_000" {
		t.Fatalf("state: %+v", st)
	}
}

func TestDescribe(t *testing.T) {
	f := newFixture(t)
	e := f.env(t, Config{})
	reset(t, e, "shop_train_000")
	obs := step(t, e, "describe", "ORDERS")
	want := "Table orders (120 rows)\nColumns:\n- id INTEGER, primary key\n- customer_id INTEGER, references customer.id\n- product_id INTEGER, references product.id\n- quantity INTEGER"
	if obs.Result != want || obs.Error != "" {
		t.Fatalf("describe result:\n%s\nerror: %s", obs.Result, obs.Error)
	}
	if obs.SchemaInfo != "Tables: customer, orders, product\nDescribed tables:\n- orders(id INTEGER, customer_id INTEGER, product_id INTEGER, quantity INTEGER)" {
		t.Fatalf("schema info after describe:\n%s", obs.SchemaInfo)
	}
	if !near(obs.Reward, 0.025) || obs.StepCount != 1 || obs.BudgetRemaining != 14 {
		t.Fatalf("reward %v step %d budget %d", obs.Reward, obs.StepCount, obs.BudgetRemaining)
	}
	if got := obs.ActionHistory; len(got) != 1 || got[0] != "DESCRIBE ORDERS → ok" {
		t.Fatalf("history %q", got)
	}
	obs = step(t, e, Describe, "nosuch")
	if obs.Error != `table "nosuch" not found; available tables: customer, orders, product` || obs.Result != "" {
		t.Fatalf("unknown table: %+v", obs)
	}
	if !near(obs.Reward, -0.005) {
		t.Fatalf("reward of a failed describe = %v, want -0.005", obs.Reward)
	}
}

func TestSample(t *testing.T) {
	f := newFixture(t)
	e := f.env(t, Config{})
	reset(t, e, "shop_train_000")
	obs := step(t, e, Sample, "product")
	want := "id | name | price\n1. 1 | Lamp | 19.5\n2. 2 | Desk | 26.75\n3. 3 | Chair | 48.5\n4. 4 | Shelf | 84.75\n5. 5 | Rug | 135.5\n(5 rows)"
	if obs.Result != want {
		t.Fatalf("sample:\n%s", obs.Result)
	}
	obs = step(t, e, Sample, "customer")
	if !strings.HasSuffix(obs.Result, "5. 5 | Eva Diaz | Kyoto\n(showing 5 of 32 rows)") {
		t.Fatalf("sample of a larger table:\n%s", obs.Result)
	}
}

func TestQuery(t *testing.T) {
	f := newFixture(t)
	e := f.env(t, Config{})
	reset(t, e, "shop_train_001")
	obs := step(t, e, Query, "SELECT id, name FROM customer ORDER BY id")
	lines := strings.Split(obs.Result, "\n")
	if len(lines) != 22 || lines[0] != "id | name" || lines[1] != "1. 1 | Ada Diaz" || lines[20] != "20. 20 | Dan Okafor" || lines[21] != "(showing 20 of 32 rows)" {
		t.Fatalf("query result:\n%s", obs.Result)
	}
	obs = step(t, e, Query, "SELECT count(*) AS n FROM orders WHERE quantity > 10")
	if obs.Result != "n\n1. 0\n(1 row)" {
		t.Fatalf("one row:\n%s", obs.Result)
	}
	obs = step(t, e, Query, "SELECT * FROM customer WHERE 0")
	if obs.Result != "id | name | city\n(0 rows)" {
		t.Fatalf("no rows:\n%s", obs.Result)
	}
	obs = step(t, e, Query, "SELECT nme FROM customer")
	if obs.Error != "SQL error: no such column: nme" || obs.Result != "" {
		t.Fatalf("sql error: %+v", obs)
	}
	obs = step(t, e, Query, "DROP TABLE customer")
	if obs.Error != "query refused: only SELECT queries are allowed (got DROP): the database is read-only" {
		t.Fatalf("refused: %q", obs.Error)
	}
	// The schema is discovered with DESCRIBE, never read from SQLite's own tables.
	obs = step(t, e, Query, "SELECT sql FROM sqlite_master")
	if obs.Error != "query refused: reading sqlite_master is not allowed: the schema is discovered with DESCRIBE <table> (and SAMPLE <table>)" || obs.Result != "" {
		t.Fatalf("sqlite_master: %+v", obs)
	}
	obs = step(t, e, Query, "SELECT * FROM pragma_table_info('customer')")
	if !strings.Contains(obs.Error, "PRAGMA table_info is not allowed") || !strings.Contains(obs.Error, "DESCRIBE") {
		t.Fatalf("pragma_table_info: %+v", obs)
	}
	obs = step(t, e, Query, "SELECT printf('%.300c', 'x')")
	if !strings.HasPrefix(obs.Result, "printf('%.300c', 'x')\n1. "+strings.Repeat("x", 99)+"…\n") {
		t.Fatalf("wide cell not capped:\n%s", obs.Result)
	}
}

func TestQueryTimeout(t *testing.T) {
	f := newFixture(t)
	// An endless query ends with the CPU-time message, or — on a machine so
	// busy that it got less than a third of a core (CI's race tests beside a
	// pre-training) — with the wall-clock backstop's (TestTimeoutIsCPUTime
	// checks which one when).
	e := f.env(t, Config{Limits: sqlitedb.Limits{Timeout: 200 * time.Millisecond}})
	reset(t, e, "shop_train_000")
	obs := step(t, e, Query, "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM n) SELECT max(x) FROM n")
	if obs.Error != "query timed out after 200ms of CPU time: simplify the query or add a LIMIT" &&
		obs.Error != "query timed out after 600ms (the machine is too busy to give it 200ms of CPU time): try again later, or simplify the query" {
		t.Fatalf("timeout error: %q", obs.Error)
	}
	if obs.Done {
		t.Fatal("a timeout must not end the episode")
	}
}

// TestGoldIgnoresTheWallClock: the gold SQL of a question runs without the
// agent's wall-clock timeout, so a process starved past it (a busy machine,
// a paused kernel) still starts the question's episodes; the failure was
// also kept for the process's life, so every later episode of the question
// failed too. The agent's own query of the same SQL still times out.
func TestGoldIgnoresTheWallClock(t *testing.T) {
	f := newFixture(t)
	const slow = "SELECT count(*) FROM customer WHERE id <= (WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM n WHERE x < 300000) SELECT max(x) FROM n)"
	g, err := sqlitedb.Open(sqlitedb.Path(f.dir, "shop"), sqlitedb.Limits{Timeout: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	q, err := dataset.Enrich(context.Background(), g, dataset.RawRecord{Question: "How many customers are there?", DBID: "shop", Query: slow}, dataset.Train, 99)
	if err != nil {
		t.Fatalf("Enrich of a gold query slower than the database's timeout: %v", err)
	}
	if q.GoldAnswer != "32" {
		t.Fatalf("gold answer %q, want 32", q.GoldAnswer)
	}
	e := f.env(t, Config{Questions: []dataset.QuestionRecord{q}, Limits: sqlitedb.Limits{Timeout: time.Millisecond}})
	reset(t, e, q.QuestionID)
	if obs := step(t, e, Query, slow); !strings.HasPrefix(obs.Error, "query timed out after ") { // 1ms of CPU time, or the wall-clock backstop's 3ms on a busy machine
		t.Fatalf("the agent's query of the gold SQL: %+v, want a timeout", obs)
	}
	if obs := step(t, e, Answer, "32"); !obs.Done || obs.Reward <= 0 {
		t.Fatalf("answering the gold answer: %+v", obs)
	}
}

func TestSelectOneScoresExactly0025(t *testing.T) {
	f := newFixture(t)
	e := f.env(t, Config{})
	reset(t, e, "shop_train_001") // a list of 7 names: SELECT 1 shares nothing with it
	obs := step(t, e, Query, "SELECT 1")
	if obs.Reward != 0.025 && !near(obs.Reward, 0.025) {
		t.Fatalf("SELECT 1 reward = %v, want 0.025", obs.Reward)
	}
	// The same query again: exec ok, repeat penalty, step cost.
	obs = step(t, e, Query, "select  1")
	if !near(obs.Reward, 0.02-0.01-0.005) {
		t.Fatalf("repeated query reward = %v, want 0.005", obs.Reward)
	}
}

func TestAnswerEndsEpisode(t *testing.T) {
	f := newFixture(t)
	e := f.env(t, Config{})
	reset(t, e, "shop_train_000")
	obs := step(t, e, Answer, "Answer: 32.0")
	if !obs.Done || obs.Reward != 1.0 || obs.Result != "Answer submitted: correct." || obs.Metadata[MetaCorrect] != true {
		t.Fatalf("correct answer: %+v", obs)
	}
	stats := obs.Metadata[MetaStats].(EpisodeStats)
	if !stats.Correct || !stats.Answered || stats.Steps != 1 || stats.Terminal != 1 {
		t.Fatalf("stats: %+v", stats)
	}
	// Actions after the end: an error, and nothing changes.
	before := e.State()
	obs = step(t, e, Query, "SELECT 1")
	if obs.Error != "the episode is over: call reset to start a new one" || obs.Reward != 0 || !obs.Done || obs.StepCount != 1 {
		t.Fatalf("after the end: %+v", obs)
	}
	if e.State() != before || e.Stats() != stats {
		t.Fatal("a step after the end changed the episode")
	}

	reset(t, e, "shop_train_000")
	obs = step(t, e, Answer, "31")
	if !obs.Done || obs.Reward != 0 || obs.Result != "Answer submitted: incorrect." || obs.Metadata[MetaCorrect] != false {
		t.Fatalf("wrong answer: %+v", obs)
	}
}

func TestInvalidActions(t *testing.T) {
	f := newFixture(t)
	e := f.env(t, Config{})
	reset(t, e, "shop_train_000")
	cases := []struct {
		a    Action
		want string
	}{
		{Action{ActionType: "EXPLODE", Argument: "x"}, `unknown action type "EXPLODE": use DESCRIBE, SAMPLE, QUERY or ANSWER`},
		{Action{ActionType: "", Argument: "x"}, `unknown action type "": use DESCRIBE, SAMPLE, QUERY or ANSWER`},
		{Action{ActionType: Query, Argument: "  "}, "QUERY needs an argument: one SELECT statement"},
		{Action{ActionType: Describe}, "DESCRIBE needs an argument: the name of a table"},
		{Action{ActionType: Answer}, "ANSWER needs an argument: the answer to the question"},
	}
	for i, c := range cases {
		obs, err := e.Step(ctx, c.a)
		if err != nil {
			t.Fatal(err)
		}
		if obs.Error != c.want || obs.Done || obs.StepCount != i+1 || !near(obs.Reward, -0.005) {
			t.Errorf("%+v: %+v", c.a, obs)
		}
	}
}

func TestBudgetExhaustion(t *testing.T) {
	f := newFixture(t)
	e := f.env(t, Config{StepBudget: 3})
	reset(t, e, "shop_train_000")
	step(t, e, Describe, "customer")
	obs := step(t, e, Describe, "orders")
	if obs.Done || obs.BudgetRemaining != 1 {
		t.Fatalf("done too early: %+v", obs)
	}
	obs = step(t, e, Describe, "product")
	if !obs.Done || obs.BudgetRemaining != 0 || !strings.HasSuffix(obs.Result, "Step budget exhausted: the episode is over without an answer.") {
		t.Fatalf("budget end: %+v", obs)
	}
	stats := e.Stats()
	if !stats.BudgetExhausted || stats.Answered || stats.Correct || stats.Terminal != 0 || !near(stats.TotalReward, 0.075) {
		t.Fatalf("stats: %+v", stats)
	}
	if obs.Metadata[MetaCorrect] != false {
		t.Fatal("metadata must say the episode was not answered correctly")
	}
}

func TestStepErrors(t *testing.T) {
	f := newFixture(t)
	e := f.env(t, Config{})
	if _, err := e.Step(ctx, Action{ActionType: Query, Argument: "SELECT 1"}); !errors.Is(err, ErrNoEpisode) {
		t.Fatalf("step before reset: %v", err)
	}
	if _, err := e.Reset(ctx, ResetOptions{QuestionID: "nope"}); err == nil || !strings.Contains(err.Error(), `unknown question id "nope"`) {
		t.Fatalf("unknown question: %v", err)
	}
	e.Close()
	if _, err := e.Reset(ctx, ResetOptions{}); !errors.Is(err, ErrClosed) {
		t.Fatalf("reset after close: %v", err)
	}
	if _, err := New(Config{DBDir: f.dir}); err == nil || !strings.Contains(err.Error(), "no questions") {
		t.Fatalf("no questions: %v", err)
	}
	if _, err := New(Config{Questions: f.questions}); err == nil || !strings.Contains(err.Error(), "no databases") {
		t.Fatalf("no databases: %v", err)
	}
	bad := append([]dataset.QuestionRecord(nil), f.questions[0])
	bad[0].DatabaseName = "missing_db"
	e2, err := New(Config{Questions: bad, DBDir: f.dir})
	if err != nil {
		t.Fatal(err)
	}
	defer e2.Close()
	if _, err := e2.Reset(ctx, ResetOptions{}); err == nil || !strings.Contains(err.Error(), `database "missing_db" not found`) {
		t.Fatalf("missing database: %v", err)
	}
}

func TestSeededResetIsReproducible(t *testing.T) {
	f := newFixture(t)
	e1, e2 := f.env(t, Config{}), f.env(t, Config{})
	for s := int64(0); s < 5; s++ {
		seed := s
		o1, err1 := e1.Reset(ctx, ResetOptions{Seed: &seed})
		o2, err2 := e2.Reset(ctx, ResetOptions{Seed: &seed})
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		if o1.Metadata[MetaQuestionID] != o2.Metadata[MetaQuestionID] || o1.Metadata[MetaEpisodeID] != o2.Metadata[MetaEpisodeID] {
			t.Fatalf("seed %d: %v vs %v", seed, o1.Metadata, o2.Metadata)
		}
	}
	obs, err := e1.Reset(ctx, ResetOptions{EpisodeID: "ep-7", QuestionID: "shop_train_003"})
	if err != nil || obs.Metadata[MetaEpisodeID] != "ep-7" || e1.State().EpisodeID != "ep-7" {
		t.Fatalf("chosen episode id: %v %v", obs.Metadata, err)
	}
}

func TestOracleEpisodeReward(t *testing.T) {
	f := newFixture(t)
	e := f.env(t, Config{})
	// A two-table question: DESCRIBE ×2 (0.025 each), QUERY gold (0.025 +
	// 0.15 progress), ANSWER (1.0).
	ep := PlayEpisode(ctx, e, NewOraclePolicy(f.questions), ResetOptions{QuestionID: "shop_train_004"})
	if ep.Err != "" || !ep.Correct || ep.Steps != 4 {
		t.Fatalf("oracle episode: %+v", ep)
	}
	rewards := []float64{0.025, 0.025, 0.175, 1.0}
	for i, turn := range ep.Turns {
		if !near(turn.Observation.Reward, rewards[i]) {
			t.Errorf("step %d (%s) reward %v, want %v", i+1, turn.Action.ActionType, turn.Observation.Reward, rewards[i])
		}
	}
	if !near(ep.Reward, 1.225) {
		t.Fatalf("oracle total = %v, want 1.225", ep.Reward)
	}
	stats := e.Stats()
	if !near(stats.Operational, 0.075) || stats.Progress != 1 || !near(stats.ProgressReward, 0.15) || !stats.Correct {
		t.Fatalf("stats: %+v", stats)
	}
}

func TestOracleSolvesEveryFixtureQuestion(t *testing.T) {
	f := newFixture(t)
	e := f.env(t, Config{})
	rep, err := Evaluate(ctx, e, NewOraclePolicy(f.questions), len(f.questions))
	if err != nil {
		t.Fatal(err)
	}
	if rep.SuccessRate != 1 || rep.Failed != 0 {
		for _, ep := range rep.Episodes {
			if !ep.Correct {
				t.Logf("%s: %s last: %+v", ep.QuestionID, ep.Err, ep.Turns[len(ep.Turns)-1])
			}
		}
		t.Fatalf("oracle: %s", rep)
	}
}

func TestRandomPolicyBaseline(t *testing.T) {
	f := newFixture(t)
	e := f.env(t, Config{StepBudget: 10})
	rep, err := Evaluate(ctx, e, NewRandomPolicy(1), 50)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Failed != 0 || len(rep.Episodes) != 50 || rep.AvgSteps < 1 || rep.AvgSteps > 10 {
		t.Fatalf("random: %s", rep)
	}
	// Same seed, same transcripts.
	rep2, _ := Evaluate(ctx, f.env(t, Config{StepBudget: 10}), NewRandomPolicy(1), 50)
	if rep.String() != rep2.String() {
		t.Fatalf("random policy is not reproducible: %s vs %s", rep, rep2)
	}
}

func TestEvaluateRecordsFailuresAndContinues(t *testing.T) {
	f := newFixture(t)
	e := f.env(t, Config{})
	calls := 0
	p := PolicyFunc(func(ctx context.Context, obs Observation) (Action, error) {
		calls++
		if obs.Metadata[MetaQuestionID] == "shop_train_001" {
			return Action{}, errors.New("model crashed")
		}
		return Action{ActionType: Answer, Argument: "32"}, nil
	})
	rep, err := Evaluate(ctx, e, p, 3)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Failed != 1 || rep.Episodes[1].Err != "policy: model crashed" || !rep.Episodes[0].Correct || rep.Episodes[2].Correct {
		t.Fatalf("report: %+v", rep)
	}
	if !near(rep.SuccessRate, 1.0/3) {
		t.Fatalf("success rate %v", rep.SuccessRate)
	}
}

func TestCancelledStepChangesNothing(t *testing.T) {
	f := newFixture(t)
	e := f.env(t, Config{})
	reset(t, e, "shop_train_000")
	step(t, e, Describe, "customer")
	cctx, cancel := context.WithCancel(ctx)
	go func() { time.Sleep(50 * time.Millisecond); cancel() }()
	_, err := e.Step(cctx, Action{ActionType: Query, Argument: "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM n) SELECT max(x) FROM n"})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if st := e.State(); st.StepCount != 1 {
		t.Fatalf("a cancelled step counted: %+v", st)
	}
	if stats := e.Stats(); stats.Steps != 1 || !near(stats.TotalReward, 0.025) {
		t.Fatalf("a cancelled step was scored: %+v", stats)
	}
	obs := step(t, e, Query, "SELECT 1")
	if obs.StepCount != 2 || len(obs.ActionHistory) != 2 {
		t.Fatalf("after cancel: %+v", obs)
	}
}

// TestOracleSolvesEveryBundledQuestion proves every bundled gold answer can
// be read off the environment's observations.
func TestOracleSolvesEveryBundledQuestion(t *testing.T) {
	paths, err := bundled.Ensure(ctx)
	if err != nil {
		t.Fatal(err)
	}
	dbs := OpenDatabases(paths.DBDir, sqlitedb.Limits{})
	defer dbs.Close()
	for _, file := range []string{paths.TrainQuestions, paths.EvalQuestions} {
		qs, err := dataset.Load(ctx, file, dataset.LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		e, err := New(Config{Questions: qs, Databases: dbs, StepBudget: 10})
		if err != nil {
			t.Fatal(err)
		}
		rep, err := Evaluate(ctx, e, NewOraclePolicy(qs), len(qs))
		if err != nil {
			t.Fatal(err)
		}
		if rep.SuccessRate != 1 {
			for _, ep := range rep.Episodes {
				if !ep.Correct {
					t.Errorf("%s: oracle failed (%s)", ep.QuestionID, ep.Err)
				}
			}
		}
		t.Logf("%s: oracle %s", file, rep)
		random, err := Evaluate(ctx, e, NewRandomPolicy(7), len(qs))
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: random %s", file, random)
	}
}

// TestNoveltyKey: the novelty key is the lower-cased argument with white
// space collapsed, as strings.Fields + ToLower would give.
func TestNoveltyKey(t *testing.T) {
	for _, arg := range []string{"", "  ", "SELECT  count(*)\n FROM\tSinger ", "ÉTÉ  Straße", " a", "a ", "x\u00a0y"} {
		want := string(Query) + "\x00" + strings.ToLower(strings.Join(strings.Fields(arg), " "))
		if got := noveltyKey(Query, arg); got != want {
			t.Errorf("noveltyKey(%q) = %q, want %q", arg, got, want)
		}
	}
}
