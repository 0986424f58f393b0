package server

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/gosqlenv/gosqlenv/sqlenv"
	"github.com/gosqlenv/gosqlenv/sqlenv/client"
	"github.com/gosqlenv/gosqlenv/sqlenv/dataset"
	"github.com/gosqlenv/gosqlenv/sqlenv/sqlitedb"
)

// TestCheckServer: a server passes the check for its own questions (or
// some of them) on the same database files, and fails it, saying which and
// why, for questions it does not serve, questions with another gold or
// text, a database file that differs, or other rules.
func TestCheckServer(t *testing.T) {
	qs, dbs := bundledData(t)
	_, hs := testServer(t, Config{})
	dir := dbs.Dir()
	some := qs[:40]
	if err := client.CheckServer(ctx, hs.URL, nil, sqlenv.Config{Questions: some, Databases: dbs}); err != nil {
		t.Fatalf("the server's own questions: %v", err)
	}
	if err := client.CheckServer(ctx, hs.URL, nil, sqlenv.Config{Questions: qs, DBDir: dir, StepBudget: sqlenv.DefaultStepBudget}); err != nil {
		t.Fatalf("all of them: %v", err)
	}

	changed := append([]dataset.QuestionRecord(nil), some...)
	changed[3].GoldSQL += " "
	changed[7].QuestionText = "What else?"
	extra := dataset.QuestionRecord{QuestionID: "bank_gen_9999", DatabaseName: some[0].DatabaseName}
	changed = append(changed, extra)
	err := client.CheckServer(ctx, hs.URL, nil, sqlenv.Config{Questions: changed, DBDir: dir, StepBudget: 7})
	var m *client.MismatchError
	if !errors.As(err, &m) || m.MissingCount != 1 || m.Missing[0] != "bank_gen_9999" || m.DifferentCount != 2 ||
		m.Different[0] != changed[3].QuestionID || m.Rules.StepBudget != sqlenv.DefaultStepBudget || m.WantRules.StepBudget != 7 {
		t.Fatalf("mismatch: %#v", err)
	}
	t.Log(err)
	reward := sqlenv.DefaultRewardConfig()
	reward.StepCost *= 2
	for _, local := range []sqlenv.Config{{ObservationChars: 1200}, {Reward: &reward}, {OrderedAnswers: true}, {SampleRows: 3}} {
		local.Questions, local.DBDir = some, dir
		if err := client.CheckServer(ctx, hs.URL, nil, local); !errors.As(err, &m) || m.MissingCount+m.DifferentCount != 0 || m.Rules == m.WantRules {
			t.Errorf("other rules %+v: %v", local.Rules(), err)
		}
	}

	// The same questions over a database file with other bytes.
	other := t.TempDir()
	db := some[0].DatabaseName
	b, err := os.ReadFile(sqlitedb.Path(dir, db))
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)-1] ^= 1
	os.MkdirAll(filepath.Dir(sqlitedb.Path(other, db)), 0o755)
	if err := os.WriteFile(sqlitedb.Path(other, db), b, 0o644); err != nil {
		t.Fatal(err)
	}
	var sameDB []dataset.QuestionRecord
	for _, q := range some {
		if q.DatabaseName == db {
			sameDB = append(sameDB, q)
		}
	}
	err = client.CheckServer(ctx, hs.URL, nil, sqlenv.Config{Questions: sameDB, DBDir: other})
	if !errors.As(err, &m) || m.DifferentCount != len(sameDB) || m.MissingCount != 0 {
		t.Fatalf("another database file: %v", err)
	}

	// A protected server: the check sends the token as the clients do.
	_, hsAuth := testServer(t, Config{AuthToken: "t0ken-for-the-check"})
	if err := client.CheckServer(ctx, hsAuth.URL, nil, sqlenv.Config{Questions: some, DBDir: dir}); err == nil {
		t.Error("no token, no check")
	}
	opts := &client.Options{Header: map[string][]string{"Authorization": {"Bearer t0ken-for-the-check"}}}
	if err := client.CheckServer(ctx, hsAuth.URL, opts, sqlenv.Config{Questions: some, DBDir: dir}); err != nil {
		t.Errorf("with the token: %v", err)
	}
}
