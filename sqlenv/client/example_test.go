package client_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"strings"

	"github.com/gosqlenv/gosqlenv/sqlenv"
	"github.com/gosqlenv/gosqlenv/sqlenv/client"
	"github.com/gosqlenv/gosqlenv/sqlenv/dataset"
	"github.com/gosqlenv/gosqlenv/sqlenv/dataset/bundled"
	"github.com/gosqlenv/gosqlenv/sqlenv/server"
	"github.com/gosqlenv/gosqlenv/sqlenv/sqlitedb"
)

// startServer serves the bundled evaluation questions on a loopback port
// (what `sqlenv-server` does on :8000) and returns its URL and a stop
// function.
func startServer(ctx context.Context) (string, func()) {
	paths, err := bundled.Ensure(ctx)
	if err != nil {
		panic(err)
	}
	qs, err := dataset.Load(ctx, paths.EvalQuestions, dataset.LoadOptions{})
	if err != nil {
		panic(err)
	}
	dbs := sqlenv.OpenDatabases(paths.DBDir, sqlitedb.Limits{})
	srv, err := server.New(server.Config{
		Env:    sqlenv.Config{Questions: qs, Databases: dbs, StepBudget: 10},
		Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		panic(err)
	}
	hs := httptest.NewServer(srv)
	return hs.URL, func() { hs.Close(); srv.Close(); dbs.Close() }
}

// A remote episode: the client is a sqlenv.Env, with the observations the
// server's environment made (reward, done and metadata included).
func ExampleDial() {
	ctx := context.Background()
	url, stop := startServer(ctx)
	defer stop()

	env, err := client.Dial(ctx, url, nil) // e.g. "localhost:8000"
	if err != nil {
		panic(err)
	}
	defer env.Close()
	obs, err := env.Reset(ctx, sqlenv.ResetOptions{QuestionID: "bank_eval_000"})
	if err != nil {
		panic(err)
	}
	fmt.Println(obs.Question)
	obs, _ = env.Step(ctx, sqlenv.Action{ActionType: sqlenv.Query,
		Argument: "SELECT count(*) FROM customer WHERE segment = 'Business' AND city = 'Amsterdam'"})
	fmt.Printf("QUERY reward %.3f, %d steps left\n%s\n", obs.Reward, obs.BudgetRemaining, obs.Result)
	obs, _ = env.Step(ctx, sqlenv.Action{ActionType: sqlenv.Answer, Argument: "103"})
	stats := obs.Metadata[sqlenv.MetaStats].(sqlenv.EpisodeStats)
	fmt.Printf("ANSWER reward %.3f, done %v, correct %v, total %.3f\n", obs.Reward, obs.Done, obs.Metadata[sqlenv.MetaCorrect], stats.TotalReward)
	st := env.State()
	fmt.Println(st.QuestionID, st.StepCount, st.Done)
	// Output:
	// How many Business customers live in Amsterdam?
	// QUERY reward 0.175, 9 steps left
	// count(*)
	// 1. 103
	// (1 row)
	// ANSWER reward 1.000, done true, correct true, total 1.175
	// bank_eval_000 2 true
}

// A Pool spreads sessions over servers in turn; sqlenv.Evaluate runs on
// each session like on an in-process environment.
func ExamplePool() {
	ctx := context.Background()
	urlA, stopA := startServer(ctx)
	defer stopA()
	urlB, stopB := startServer(ctx)
	defer stopB()

	pool, err := client.NewPool([]string{urlA, urlB}, nil)
	if err != nil {
		panic(err)
	}
	for i := range 4 {
		env, err := pool.NewEnv() // fits training.NewRoller
		if err != nil {
			panic(err)
		}
		name := "A"
		if strings.HasPrefix(env.(*client.Session).Addr(), "ws"+strings.TrimPrefix(urlB, "http")) {
			name = "B"
		}
		rep, err := sqlenv.Evaluate(ctx, env, sqlenv.NewRandomPolicy(uint64(i)), 20)
		if err != nil {
			panic(err)
		}
		fmt.Printf("session %d on server %s: %d episodes, %d failed\n", i, name, len(rep.Episodes), rep.Failed)
		env.Close()
	}
	// Output:
	// session 0 on server A: 20 episodes, 0 failed
	// session 1 on server B: 20 episodes, 0 failed
	// session 2 on server A: 20 episodes, 0 failed
	// session 3 on server B: 20 episodes, 0 failed
}
