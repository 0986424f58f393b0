package server

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/gosqlenv/gosqlenv/sqlenv"
	"github.com/gosqlenv/gosqlenv/sqlenv/client"
	"github.com/gosqlenv/gosqlenv/sqlenv/dataset"
	"github.com/gosqlenv/gosqlenv/sqlenv/dataset/bundled"
	"github.com/gosqlenv/gosqlenv/sqlenv/sqlitedb"
)

var ctx = context.Background()

// data is the bundled dataset (train and eval questions) with databases
// shared by every test, opened and warmed once.
var data struct {
	once      sync.Once
	err       error
	questions []dataset.QuestionRecord
	dbs       *sqlenv.Databases
}

func TestMain(m *testing.M) {
	code := m.Run()
	if data.dbs != nil {
		data.dbs.Close()
	}
	os.Exit(code)
}

// bundledData loads the dataset and opens every database (so that later
// goroutine and file counts do not see them open).
func bundledData(tb testing.TB) ([]dataset.QuestionRecord, *sqlenv.Databases) {
	tb.Helper()
	data.once.Do(func() {
		paths, err := bundled.Ensure(ctx)
		if err != nil {
			data.err = err
			return
		}
		for _, f := range []string{paths.TrainQuestions, paths.EvalQuestions} {
			qs, err := dataset.Load(ctx, f, dataset.LoadOptions{})
			if err != nil {
				data.err = err
				return
			}
			data.questions = append(data.questions, qs...)
		}
		data.dbs = sqlenv.OpenDatabases(paths.DBDir, sqlitedb.Limits{})
		for _, q := range data.questions {
			if _, err := data.dbs.Get(q.DatabaseName); err != nil {
				data.err = err
				return
			}
		}
	})
	if data.err != nil {
		tb.Fatal(data.err)
	}
	return data.questions, data.dbs
}

// quietLogger drops logs (set SQLENV_TEST_LOG=1 to see them).
func quietLogger() *slog.Logger {
	if os.Getenv("SQLENV_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// testServer starts a server over the bundled data on loopback; cfg's zero
// fields take the test defaults. Both are closed when the test ends.
func testServer(tb testing.TB, cfg Config) (*Server, *httptest.Server) {
	tb.Helper()
	qs, dbs := bundledData(tb)
	if cfg.Env.Questions == nil {
		cfg.Env.Questions = qs
	}
	if cfg.Env.Databases == nil {
		cfg.Env.Databases = dbs
	}
	if cfg.Logger == nil {
		cfg.Logger = quietLogger()
	}
	s, err := New(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	hs := httptest.NewServer(s)
	tb.Cleanup(func() {
		s.Close()
		hs.Close()
	})
	return s, hs
}

// testClientOptions uses a transport of its own, so its idle connections
// can be closed at the end of a test.
func testClientOptions(tb testing.TB) *client.Options {
	tr := &http.Transport{MaxIdleConnsPerHost: 256}
	tb.Cleanup(tr.CloseIdleConnections)
	return &client.Options{HTTPClient: &http.Client{Transport: tr}}
}

// inProcess is an in-process environment over the bundled data.
func inProcess(tb testing.TB, budget int) *sqlenv.Environment {
	tb.Helper()
	qs, dbs := bundledData(tb)
	env, err := sqlenv.New(sqlenv.Config{Questions: qs, Databases: dbs, StepBudget: budget})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { env.Close() })
	return env
}

// envOnly hides *sqlenv.Environment from sqlenv.Evaluate, which then resets
// episode i with seed i, as it does for remote environments.
type envOnly struct{ sqlenv.Env }

func contextWithTimeout(d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, d)
}
