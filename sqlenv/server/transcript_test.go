package server

import (
	"reflect"
	"testing"

	"github.com/gosqlenv/gosqlenv/sqlenv"
	"github.com/gosqlenv/gosqlenv/sqlenv/client"
	"github.com/gosqlenv/gosqlenv/sqlenv/dataset"
)

// TestTranscriptsMatchInProcess evaluates the seeded random policy, and the
// oracle on the evaluation questions, in process and through both clients:
// the reports (every observation of every transcript) must be equal.
func TestTranscriptsMatchInProcess(t *testing.T) {
	const budget, n = 10, 60
	_, hs := testServer(t, Config{Env: sqlenv.Config{StepBudget: budget}})
	opts := testClientOptions(t)
	ws, err := client.Dial(ctx, hs.URL, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	h, err := client.NewHTTPSession(hs.URL, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	local := envOnly{inProcess(t, budget)}

	want, err := sqlenv.Evaluate(ctx, local, sqlenv.NewRandomPolicy(5), n)
	if err != nil || want.Failed != 0 {
		t.Fatalf("in process: %v, %d failed", err, want.Failed)
	}
	qs, _ := bundledData(t)
	var evalEpisodes []sqlenv.ResetOptions
	for _, q := range qs {
		if q.Split == dataset.Eval && len(evalEpisodes) < n {
			evalEpisodes = append(evalEpisodes, sqlenv.ResetOptions{QuestionID: q.QuestionID})
		}
	}
	oracle := sqlenv.NewOraclePolicy(qs)
	wantOracle, err := sqlenv.EvaluateEpisodes(ctx, local, oracle, evalEpisodes)
	if err != nil || wantOracle.SuccessRate != 1 {
		t.Fatalf("oracle in process: %v, %v", err, wantOracle)
	}
	for name, env := range map[string]sqlenv.Env{"websocket": ws, "http": h} {
		got, err := sqlenv.Evaluate(ctx, env, sqlenv.NewRandomPolicy(5), n)
		if err != nil {
			t.Fatal(err)
		}
		compareReports(t, name+" random", got, want)
		got, err = sqlenv.EvaluateEpisodes(ctx, env, oracle, evalEpisodes)
		if err != nil {
			t.Fatal(err)
		}
		compareReports(t, name+" oracle", got, wantOracle)
		if st, want := env.State(), local.State(); st != want {
			t.Errorf("%s: state %+v, in process %+v", name, st, want)
		}
	}
	rs, err := ws.RemoteState(ctx)
	if err != nil || rs != local.State() {
		t.Errorf("remote state %+v (%v), in process %+v", rs, err, local.State())
	}
}

func compareReports(t *testing.T, name string, got, want sqlenv.EvalReport) {
	t.Helper()
	if reflect.DeepEqual(got, want) {
		return
	}
	t.Errorf("%s: %v, in process %v", name, got, want)
	for i := range min(len(got.Episodes), len(want.Episodes)) {
		if !reflect.DeepEqual(got.Episodes[i], want.Episodes[i]) {
			t.Errorf("first difference, episode %d:\n got %+v\nwant %+v", i, got.Episodes[i], want.Episodes[i])
			return
		}
	}
}

// TestStatsMidEpisode: the clients report the running episode's reward
// components as the in-process environment does (the trainer reads them
// when it cuts an episode short).
func TestStatsMidEpisode(t *testing.T) {
	_, hs := testServer(t, Config{})
	opts := testClientOptions(t)
	ws, err := client.Dial(ctx, hs.URL, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	h, err := client.NewHTTPSession(hs.URL, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	local := inProcess(t, 0)
	q := question(t, goldenQuestion)
	actions := []sqlenv.Action{{ActionType: sqlenv.Describe, Argument: "customer"}, {ActionType: sqlenv.Query, Argument: q.GoldSQL}}
	for _, env := range []sqlenv.Env{local, ws, h} {
		if _, err := env.Reset(ctx, sqlenv.ResetOptions{QuestionID: q.QuestionID}); err != nil {
			t.Fatal(err)
		}
		if st := env.(statsEnv).Stats(); st != (sqlenv.EpisodeStats{}) {
			t.Errorf("%T: stats after reset %+v", env, st)
		}
		for _, a := range actions {
			if _, err := env.Step(ctx, a); err != nil {
				t.Fatal(err)
			}
		}
	}
	want := local.Stats()
	if want.Progress != 1 || want.Steps != 2 {
		t.Fatalf("in process: %+v", want)
	}
	for _, env := range []statsEnv{ws, h} {
		if got := env.Stats(); got != want {
			t.Errorf("%T: stats %+v, in process %+v", env, got, want)
		}
	}
	// A closed client still reports its last final stats.
	ws.Step(ctx, sqlenv.Action{ActionType: sqlenv.Answer, Argument: "103"})
	local.Step(ctx, sqlenv.Action{ActionType: sqlenv.Answer, Argument: "103"})
	ws.Close()
	if got := ws.Stats(); got != local.Stats() {
		t.Errorf("after close: %+v, in process %+v", got, local.Stats())
	}
}

// statsEnv is an environment that reports its episode's reward components.
type statsEnv interface{ Stats() sqlenv.EpisodeStats }
