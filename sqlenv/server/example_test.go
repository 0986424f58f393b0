package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"

	"github.com/gosqlenv/gosqlenv/sqlenv"
	"github.com/gosqlenv/gosqlenv/sqlenv/dataset"
	"github.com/gosqlenv/gosqlenv/sqlenv/dataset/bundled"
	"github.com/gosqlenv/gosqlenv/sqlenv/server"
	"github.com/gosqlenv/gosqlenv/sqlenv/sqlitedb"
)

// A server over the bundled evaluation questions, as `sqlenv-server` runs
// it (Serve on a listener; here httptest's), answering OpenEnv's /reset over
// plain HTTP. sqlenv/client has the Go clients.
func ExampleNew() {
	ctx := context.Background()
	paths, err := bundled.Ensure(ctx)
	if err != nil {
		panic(err)
	}
	qs, err := dataset.Load(ctx, paths.EvalQuestions, dataset.LoadOptions{})
	if err != nil {
		panic(err)
	}
	dbs := sqlenv.OpenDatabases(paths.DBDir, sqlitedb.Limits{})
	defer dbs.Close()
	srv, err := server.New(server.Config{
		Env:    sqlenv.Config{Questions: qs, Databases: dbs, StepBudget: 10},
		Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	hs := httptest.NewServer(srv)
	defer hs.Close()

	resp, err := http.Post(hs.URL+"/reset", "application/json", nil)
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	var res struct {
		Observation struct {
			BudgetRemaining int `json:"budget_remaining"`
		}
		Reward *float64
		Done   bool
	}
	json.NewDecoder(resp.Body).Decode(&res)
	fmt.Println(resp.Status, "session:", resp.Header.Get(server.SessionHeader) != "", "budget:", res.Observation.BudgetRemaining, "reward:", res.Reward, "done:", res.Done)
	// Output:
	// 200 OK session: true budget: 10 reward: <nil> done: false
}
