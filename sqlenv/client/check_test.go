package client_test

import (
	"context"
	"errors"
	"net"
	"testing"

	"github.com/gosqlenv/gosqlenv/sqlenv"
	"github.com/gosqlenv/gosqlenv/sqlenv/client"
	"github.com/gosqlenv/gosqlenv/sqlenv/dataset"
	"github.com/gosqlenv/gosqlenv/sqlenv/dataset/bundled"
	"github.com/gosqlenv/gosqlenv/sqlenv/sqlitedb"
)

// TestCheckEachServerTellsDownFromDifferent: CheckEachServer gives each
// address its own result — nil for a server that plays the questions, an
// error IsUnreachable accepts for an address where nothing listens, and one
// it refuses for a server that answers but serves other questions or wants
// a token — so that a trainer can skip a server that is down and stop at
// one that is wrong.
func TestCheckEachServerTellsDownFromDifferent(t *testing.T) {
	ctx := context.Background()
	url, stop := startServer(ctx)
	defer stop()
	paths, err := bundled.Ensure(ctx)
	if err != nil {
		t.Fatal(err)
	}
	qs, err := dataset.Load(ctx, paths.EvalQuestions, dataset.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dbs := sqlenv.OpenDatabases(paths.DBDir, sqlitedb.Limits{})
	defer dbs.Close()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := "http://" + l.Addr().String()
	l.Close() // nothing listens there now

	same := sqlenv.Config{Questions: qs, Databases: dbs, StepBudget: 10}
	other := sqlenv.Config{Questions: qs, Databases: dbs, StepBudget: 7}
	errs := client.CheckEachServer(ctx, []string{url, down}, nil, same)
	if errs[0] != nil {
		t.Errorf("the server that plays the questions: %v", errs[0])
	}
	if errs[1] == nil || !client.IsUnreachable(errs[1]) {
		t.Errorf("an address where nothing listens: %v; want an error IsUnreachable accepts", errs[1])
	}
	errs = client.CheckEachServer(ctx, []string{url}, nil, other)
	var me *client.MismatchError
	if !errors.As(errs[0], &me) || client.IsUnreachable(errs[0]) {
		t.Errorf("a server with other rules: %v; want a MismatchError, not unreachable", errs[0])
	}
	if client.IsUnreachable(nil) || client.IsUnreachable(errors.New("bad question_id")) {
		t.Error("IsUnreachable accepts nil or an error that is not about the network")
	}
	if err := client.CheckServers(ctx, []string{url, down}, nil, same); err == nil {
		t.Error("CheckServers with one server down: nil, want its error")
	}
}
