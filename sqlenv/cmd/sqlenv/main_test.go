package main

import (
	"context"
	"database/sql"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gosqlenv/gosqlenv/sqlenv/dataset/bundled"
)

// capture runs f with stdout redirected and returns what it printed.
func capture(t *testing.T, f func() error) (string, error) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	old := os.Stdout
	os.Stdout = w
	done := make(chan string)
	go func() {
		b, _ := io.ReadAll(r)
		done <- string(b)
	}()
	ferr := f()
	w.Close()
	os.Stdout = old
	return <-done, ferr
}

func TestCommands(t *testing.T) {
	ctx := context.Background()
	paths, err := bundled.Ensure(ctx)
	if err != nil {
		t.Fatal(err)
	}
	data := []string{"-data", paths.Root}

	out, err := capture(t, func() error { return runList(ctx, append(data, "-split", "eval")) })
	if err != nil || !strings.Contains(out, "database") || !strings.Contains(out, "all") {
		t.Fatalf("list: %v\n%s", err, out)
	}
	out, err = capture(t, func() error { return runValidate(ctx, append(data, "-split", "eval")) })
	if err != nil || !strings.Contains(out, "success 100.0%") || !strings.Contains(out, ", 0 problems") {
		t.Fatalf("validate: %v\n%s", err, out)
	}
	transcripts := filepath.Join(t.TempDir(), "t.json")
	out, err = capture(t, func() error {
		return runEval(ctx, append(data, "-policy", "oracle", "-n", "20", "-transcripts", transcripts))
	})
	if err != nil || !strings.Contains(out, "oracle policy") || !strings.Contains(out, "20 episodes: success 100.0%") {
		t.Fatalf("eval: %v\n%s", err, out)
	}
	if b, err := os.ReadFile(transcripts); err != nil || !strings.Contains(string(b), `"action_type": "ANSWER"`) {
		t.Fatalf("transcripts: %v", err)
	}
	if _, err := capture(t, func() error { return runEval(ctx, append(data, "-policy", "genius")) }); err == nil || !strings.Contains(err.Error(), `unknown policy "genius"`) {
		t.Fatalf("unknown policy: %v", err)
	}
	if _, err := capture(t, func() error { return runList(ctx, append(data, "-difficulty", "trivial")) }); err == nil || !strings.Contains(err.Error(), `unknown difficulty "trivial"`) {
		t.Fatalf("bad difficulty: %v", err)
	}
	if _, err := capture(t, func() error { return runList(ctx, []string{"-questions", "/nonexistent/q.json", "-db-dir", "/tmp"}) }); err == nil || !strings.Contains(err.Error(), "/nonexistent/q.json does not exist") {
		t.Fatalf("missing questions: %v", err)
	}
}

// TestImportDevOnlyThenPrintedCommands: importing Spider's dev files alone
// (one database missing) works, warns about the missing database, and the
// commands it prints next run as printed.
func TestImportDevOnlyThenPrintedCommands(t *testing.T) {
	ctx := context.Background()
	spider := t.TempDir()
	path := filepath.Join(spider, "database", "music", "music.sqlite")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{`CREATE TABLE song (id INTEGER PRIMARY KEY, title TEXT, plays INTEGER)`,
		`INSERT INTO song VALUES (1, 'Blue', 10), (2, 'Red', 30), (3, 'Gold', 20)`} {
		if _, err := db.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	dev := `[{"question": "How many songs?", "db_id": "music", "query": "SELECT count(*) FROM song"},
	 {"question": "Most played song?", "db_id": "music", "query": "SELECT title FROM song ORDER BY plays DESC LIMIT 1"},
	 {"question": "How many animals?", "db_id": "zoo", "query": "SELECT count(*) FROM animal"}]`
	if err := os.WriteFile(filepath.Join(spider, "dev.json"), []byte(dev), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "imported")
	printed, err := capture(t, func() error { return runImport(ctx, []string{"-spider", spider, "-out", out}) })
	if err != nil {
		t.Fatalf("import: %v\n%s", err, printed)
	}
	if !strings.Contains(printed, "imported 0 train and 2 eval questions over 1 databases") || !strings.Contains(printed, "dropped 1: database file missing") {
		t.Fatalf("import printed:\n%s", printed)
	}
	var ran int
	for _, line := range strings.Split(printed, "\n") {
		line = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "next:"))
		fields := strings.Fields(line)
		if len(fields) < 2 || fields[0] != "sqlenv" {
			continue
		}
		cmd := map[string]func(context.Context, []string) error{"validate": runValidate, "eval": runEval, "list": runList}[fields[1]]
		if cmd == nil {
			t.Fatalf("printed an unknown command: %s", line)
		}
		if res, err := capture(t, func() error { return cmd(ctx, fields[2:]) }); err != nil {
			t.Errorf("%s: %v\n%s", line, err, res)
		}
		ran++
	}
	if ran != 2 {
		t.Errorf("ran %d printed commands, want 2:\n%s", ran, printed)
	}
}
