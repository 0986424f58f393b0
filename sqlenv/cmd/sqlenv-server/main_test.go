package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gosqlenv/gosqlenv/sqlenv"
	"github.com/gosqlenv/gosqlenv/sqlenv/client"
	"github.com/gosqlenv/gosqlenv/sqlenv/server"
)

func env(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestParse(t *testing.T) {
	var stderr bytes.Buffer
	o, err := parse([]string{"--max-sessions", "7"}, env(map[string]string{
		"SQLENV_ADDR": "127.0.0.1:9000", "SQLENV_MAX_SESSIONS": "3", "SQLENV_IDLE_TIMEOUT": "90s", "SQLENV_STEP_BUDGET": "10",
	}), &stderr)
	if err != nil {
		t.Fatal(err)
	}
	if o.addr != "127.0.0.1:9000" || o.maxSessions != 7 || o.idleTimeout != 90*time.Second || o.stepBudget != 10 {
		t.Errorf("parsed %+v: want the environment's addr, idle timeout and budget, the flag's max sessions", o)
	}
	if o.stepTimeout != server.DefaultStepTimeout || o.logLevel != "info" {
		t.Errorf("defaults not applied: %+v", o)
	}
	if _, err := parse(nil, env(map[string]string{"SQLENV_MAX_SESSIONS": "many"}), &stderr); err == nil || !strings.Contains(err.Error(), "SQLENV_MAX_SESSIONS") {
		t.Errorf("bad environment value: %v", err)
	}
	if _, err := parse([]string{"extra"}, env(nil), &stderr); err == nil {
		t.Error("a stray argument was accepted")
	}
	if _, err := parse([]string{"-h"}, env(nil), &stderr); err == nil || !strings.Contains(stderr.String(), "(env SQLENV_DATA)") {
		t.Errorf("usage does not name the environment variables: %v\n%s", err, stderr.String())
	}
	if err := run(context.Background(), []string{"--log-level", "loud"}, env(nil), &stderr, nil); err == nil {
		t.Error("a bad log level was accepted")
	}
	if err := run(context.Background(), []string{"--questions", "q.json"}, env(nil), &stderr, nil); err == nil {
		t.Error("--questions without --db-dir was accepted")
	}
}

// TestServe starts the command on a loopback port with the bundled eval
// questions, plays an episode through the Go client, and stops it.
func TestServe(t *testing.T) {
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	var logs syncBuffer
	addrc := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"--split", "eval", "--step-budget", "5", "--log-format", "json"},
			env(map[string]string{"SQLENV_ADDR": "127.0.0.1:0"}), &logs, func(a net.Addr) { addrc <- a })
	}()
	var addr string
	select {
	case a := <-addrc:
		addr = a.String()
	case err := <-done:
		t.Fatal(err)
	}

	resp, err := http.Get("http://" + addr + "/info")
	if err != nil {
		t.Fatal(err)
	}
	var meta struct {
		Name       string
		StepBudget int `json:"step_budget"`
		Questions  int
	}
	json.NewDecoder(resp.Body).Decode(&meta)
	resp.Body.Close()
	if meta.Name != "sql_env" || meta.StepBudget != 5 || meta.Questions != 220 {
		t.Errorf("metadata %+v: want sql_env, budget 5, the 220 eval questions", meta)
	}
	c, err := client.Dial(ctx, addr, nil)
	if err != nil {
		t.Fatal(err)
	}
	obs, err := c.Reset(ctx, sqlenv.ResetOptions{QuestionID: "bank_eval_000"})
	if err != nil || obs.BudgetRemaining != 5 {
		t.Fatalf("reset: %+v, %v", obs, err)
	}
	c.Close()

	stop()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("run: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the server did not stop")
	}
	for _, want := range []string{`"msg":"serving"`, `"msg":"session opened"`, `"msg":"shut down"`} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("logs lack %s:\n%s", want, logs.String())
		}
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestSafeDefaults: the server listens on this machine only unless told
// otherwise; a token comes from the environment; listening beyond
// loopback without one is warned about, with one it is not.
func TestSafeDefaults(t *testing.T) {
	var stderr bytes.Buffer
	o, err := parse(nil, env(map[string]string{"SQLENV_AUTH_TOKEN": "tok"}), &stderr)
	if err != nil {
		t.Fatal(err)
	}
	host, _, _ := net.SplitHostPort(o.addr)
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() || o.authToken != "tok" || o.evictAfter != server.DefaultEvictAfter {
		t.Errorf("defaults %+v: want a loopback address, the environment's token, the default eviction delay", o)
	}
	for _, c := range []struct {
		token string
		warn  bool
	}{{"", true}, {"tok", false}} {
		ctx, stop := context.WithCancel(context.Background())
		var logs syncBuffer
		done := make(chan error, 1)
		ready := make(chan struct{})
		go func() {
			done <- run(ctx, []string{"--split", "eval"}, env(map[string]string{"SQLENV_ADDR": "0.0.0.0:0", "SQLENV_AUTH_TOKEN": c.token}),
				&logs, func(net.Addr) { close(ready) })
		}()
		select {
		case <-ready:
		case err := <-done:
			t.Fatal(err)
		}
		stop()
		<-done
		if got := strings.Contains(logs.String(), "without authentication"); got != c.warn {
			t.Errorf("token %q: warning %v, want %v:\n%s", c.token, got, c.warn, logs.String())
		}
	}
}
