package server

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/gosqlenv/gosqlenv/sqlenv"
	"github.com/gosqlenv/gosqlenv/sqlenv/client"
)

// TestGracefulShutdown: steps in flight over WebSocket and HTTP complete
// while Serve shuts down; idle connections close at once; Serve returns nil
// once everything is done.
func TestGracefulShutdown(t *testing.T) {
	cfg, entered, gate := gatedConfig(t, Config{ShutdownTimeout: 20 * time.Second, Logger: quietLogger()})
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	serveCtx, stop := context.WithCancel(ctx)
	defer stop()
	served := make(chan error, 1)
	go func() { served <- s.Serve(serveCtx, l) }()
	addr := "http://" + l.Addr().String()
	opts := testClientOptions(t)

	busyWS, err := client.Dial(ctx, addr, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer busyWS.Close()
	idleWS, err := client.Dial(ctx, addr, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer idleWS.Close()
	busyHTTP, err := client.NewHTTPSession(addr, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, env := range []sqlenv.Env{busyWS, idleWS, busyHTTP} {
		if _, err := env.Reset(ctx, sqlenv.ResetOptions{QuestionID: "bank_eval_000"}); err != nil {
			t.Fatal(err)
		}
	}
	type result struct {
		obs sqlenv.Observation
		err error
	}
	results := make(chan result, 2)
	for _, env := range []sqlenv.Env{busyWS, busyHTTP} {
		go func() {
			obs, err := env.Step(ctx, sqlenv.Action{ActionType: sqlenv.Describe, Argument: "customer", Metadata: slow})
			results <- result{obs, err}
		}()
	}
	<-entered
	<-entered

	stop() // Serve starts its graceful shutdown
	waitFor(t, "the listener to close", func() bool {
		c, err := net.Dial("tcp", l.Addr().String())
		if err == nil {
			c.Close()
		}
		return err != nil
	})
	waitFor(t, "the idle WebSocket to close", func() bool {
		select {
		case <-idleWS.Done():
			return true
		default:
			return false
		}
	})
	time.Sleep(50 * time.Millisecond)
	select {
	case err := <-served:
		t.Fatalf("Serve returned (%v) with steps in flight", err)
	case r := <-results:
		t.Fatalf("a step returned before its gate opened: %+v", r)
	default:
	}

	close(gate)
	for range 2 {
		r := <-results
		if r.err != nil || r.obs.StepCount != 1 || r.obs.Error != "" || r.obs.Reward == 0 {
			t.Errorf("in-flight step: %+v, %v; want a complete DESCRIBE", r.obs, r.err)
		}
	}
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("Serve did not return")
	}
	if _, err := busyWS.Step(ctx, sqlenv.Action{ActionType: sqlenv.Query, Argument: "SELECT 1"}); !errors.Is(err, sqlenv.ErrClosed) {
		t.Errorf("step after shutdown: %v, want ErrClosed", err)
	}
	if _, err := idleWS.Step(ctx, sqlenv.Action{ActionType: sqlenv.Query, Argument: "SELECT 1"}); !errors.Is(err, sqlenv.ErrClosed) {
		t.Errorf("step on the idle session after shutdown: %v, want ErrClosed", err)
	}
}
