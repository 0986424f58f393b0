package server

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/gosqlenv/gosqlenv/sqlenv"
	"github.com/gosqlenv/gosqlenv/sqlenv/client"
)

// fromIP returns client options whose connections come from ip (another
// loopback address: a second client on the same machine).
func fromIP(t *testing.T, ip string) *client.Options {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	tr := &http.Transport{DialContext: d.DialContext}
	t.Cleanup(tr.CloseIdleConnections)
	return &client.Options{HTTPClient: &http.Client{Transport: tr}}
}

// TestPerClientSessionCap: one client's sessions stop at
// MaxSessionsPerClient, and another client still gets in.
func TestPerClientSessionCap(t *testing.T) {
	_, hs := testServer(t, Config{MaxSessions: 8, MaxSessionsPerClient: 3})
	for i := 0; i < 3; i++ {
		c, err := client.Dial(ctx, hs.URL, fromIP(t, "127.0.0.1"))
		if err != nil {
			t.Fatalf("session %d: %v", i, err)
		}
		defer c.Close()
	}
	_, err := client.Dial(ctx, hs.URL, fromIP(t, "127.0.0.1"))
	var pe *Error
	if !errors.As(err, &pe) || pe.Code != CodeCapacity {
		t.Fatalf("fourth session of one client: %v", err)
	}
	other, err := client.Dial(ctx, hs.URL, fromIP(t, "127.0.0.2"))
	if err != nil {
		t.Fatalf("another client was locked out: %v", err)
	}
	defer other.Close()
	if _, err := other.Reset(ctx, sqlenv.ResetOptions{}); err != nil {
		t.Fatal(err)
	}
}

// serveOn runs s.Serve on a loopback listener and returns its address.
func serveOn(t *testing.T, cfg Config) string {
	t.Helper()
	qs, dbs := bundledData(t)
	cfg.Env.Questions, cfg.Env.Databases, cfg.Logger = qs, dbs, quietLogger()
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, l) }()
	t.Cleanup(func() { stop(); <-done })
	return l.Addr().String()
}

// closedSoon reports whether the server closes c within d (a read ends).
func closedSoon(c net.Conn, d time.Duration) bool {
	c.SetReadDeadline(time.Now().Add(d))
	_, err := io.Copy(io.Discard, c)
	var ne net.Error
	return err == nil || !(errors.As(err, &ne) && ne.Timeout())
}

// TestConnectionLimits: connections beyond MaxConnsPerClient are closed at
// once (others' are not), a body that trickles in is cut after
// BodyTimeout, and an idle keep-alive connection after IdleConnTimeout.
func TestConnectionLimits(t *testing.T) {
	addr := serveOn(t, Config{MaxConnsPerClient: 4, BodyTimeout: 200 * time.Millisecond, IdleConnTimeout: 300 * time.Millisecond})
	dial := func(ip string) net.Conn {
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
		c, err := d.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	var held []net.Conn
	for i := 0; i < 4; i++ {
		held = append(held, dial("127.0.0.1"))
	}
	time.Sleep(50 * time.Millisecond) // let the server accept them
	if !closedSoon(dial("127.0.0.1"), time.Second) {
		t.Error("a fifth connection of one client was kept open")
	}
	if closedSoon(dial("127.0.0.2"), 100*time.Millisecond) {
		t.Error("another client's connection was closed")
	}
	for _, c := range held {
		c.Close()
	}
	time.Sleep(50 * time.Millisecond)

	// A slow body.
	c := dial("127.0.0.1")
	io.WriteString(c, "POST /reset HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{")
	start := time.Now()
	if !closedSoon(c, 3*time.Second) {
		t.Error("a trickling body held its connection for 3 s")
	} else if took := time.Since(start); took > 2*time.Second {
		t.Errorf("a trickling body held its connection for %v", took)
	}

	// An idle keep-alive connection.
	c = dial("127.0.0.1")
	io.WriteString(c, "GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("health: %v", err)
	}
	resp.Body.Close()
	if !closedSoon(c, 2*time.Second) {
		t.Error("an idle keep-alive connection stayed open for 2 s")
	}
}

// blockingEnv is an environment whose steps wait until they are cancelled.
type blockingEnv struct{ sqlenv.Env }

func (blockingEnv) Reset(context.Context, sqlenv.ResetOptions) (sqlenv.Observation, error) {
	return sqlenv.Observation{Question: "q"}, nil
}

func (blockingEnv) Step(ctx context.Context, _ sqlenv.Action) (sqlenv.Observation, error) {
	<-ctx.Done()
	return sqlenv.Observation{}, ctx.Err()
}

func (blockingEnv) Close() error { return nil }

// TestClientGoneMidStep: a client that disconnects while its step runs is
// counted as a client cancel, not as a server error.
func TestClientGoneMidStep(t *testing.T) {
	s, hs := testServer(t, Config{NewEnv: func() (sqlenv.Env, error) { return blockingEnv{}, nil }})
	status, hdr, body := request(t, "POST", hs.URL+"/reset", nil, `{}`)
	if status != 200 {
		t.Fatalf("reset: %d %s", status, body)
	}
	rctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(rctx, "POST", hs.URL+"/step",
		strings.NewReader(`{"action": {"action_type": "QUERY", "argument": "SELECT 1"}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(SessionHeader, hdr.Get(SessionHeader))
	if _, err := http.DefaultClient.Do(req); err == nil {
		t.Fatal("the step answered")
	}
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) {
		closed, exec := s.metrics.errors[CodeClientClosed].Load(), s.metrics.errors[CodeExecution].Load()
		if closed == 1 {
			if exec != 0 {
				t.Errorf("%d execution errors", exec)
			}
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Error("the disconnect was not counted as a client cancel")
}

// TestShutdownAnswersRunningSteps: when the shutdown timeout runs out, a
// step still running is cancelled and its request answered with
// SHUTTING_DOWN, not cut, and Serve returns soon after the timeout.
func TestShutdownAnswersRunningSteps(t *testing.T) {
	qs, dbs := bundledData(t)
	s, err := New(Config{Env: sqlenv.Config{Questions: qs, Databases: dbs}, Logger: quietLogger(),
		ShutdownTimeout: 300 * time.Millisecond, NewEnv: func() (sqlenv.Env, error) { return blockingEnv{}, nil }})
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	sctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- s.Serve(sctx, l) }()
	u := "http://" + l.Addr().String()
	status, hdr, body := request(t, "POST", u+"/reset", nil, `{}`)
	if status != 200 {
		t.Fatalf("reset: %d %s", status, body)
	}
	answered := make(chan []byte, 1)
	go func() {
		_, _, b := request(t, "POST", u+"/step", map[string]string{SessionHeader: hdr.Get(SessionHeader)},
			`{"action": {"action_type": "QUERY", "argument": "SELECT 1"}}`)
		answered <- b
	}()
	time.Sleep(100 * time.Millisecond) // the step is running
	start := time.Now()
	stop()
	select {
	case b := <-answered:
		if code, _ := errorBody(t, b); code != CodeShuttingDown {
			t.Errorf("the running step was answered %s", b)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the running step got no answer")
	}
	if err := <-served; err != nil {
		t.Errorf("Serve: %v", err)
	}
	if took := time.Since(start); took > 300*time.Millisecond+shutdownGrace+time.Second {
		t.Errorf("shutdown took %v", took)
	}
}

// stepStarted is a blockingEnv that says when a step starts and when its
// context ends.
type stepStarted struct {
	sqlenv.Env
	started, ended chan struct{}
}

func (e stepStarted) Reset(context.Context, sqlenv.ResetOptions) (sqlenv.Observation, error) {
	return sqlenv.Observation{Question: "q"}, nil
}

func (e stepStarted) Step(ctx context.Context, _ sqlenv.Action) (sqlenv.Observation, error) {
	e.started <- struct{}{}
	<-ctx.Done()
	e.ended <- struct{}{}
	return sqlenv.Observation{}, ctx.Err()
}

func (stepStarted) State() sqlenv.State { return sqlenv.State{} }
func (stepStarted) Close() error        { return nil }

// A WebSocket client that drops its connection while its step runs
// cancels the step at once, as an HTTP client does.
func TestWebSocketDisconnectCancelsTheStep(t *testing.T) {
	env := stepStarted{started: make(chan struct{}, 1), ended: make(chan struct{}, 1)}
	_, hs := testServer(t, Config{NewEnv: func() (sqlenv.Env, error) { return env, nil }})
	// A raw connection, dropped without a close handshake while the step runs.
	conn, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(hs.URL, "http")+"/ws", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{`{"type": "reset", "data": {}}`, `{"type": "step", "data": {"action_type": "QUERY", "argument": "SELECT 1"}}`} {
		if err := conn.Write(ctx, websocket.MessageText, []byte(m)); err != nil {
			t.Fatal(err)
		}
	}
	<-env.started
	conn.CloseNow()
	select {
	case <-env.ended:
	case <-time.After(2 * time.Second):
		t.Fatal("the step ran on after its client left")
	}
}

// Behind a trusted reverse proxy, per-client caps count the clients named
// by X-Forwarded-For; from any other peer the header changes nothing.
func TestTrustedProxies(t *testing.T) {
	reset := func(url, forwarded string) int {
		req, _ := http.NewRequest("POST", url+"/reset", strings.NewReader("{}"))
		req.Header.Set("Content-Type", "application/json")
		if forwarded != "" {
			req.Header.Set("X-Forwarded-For", forwarded)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	_, behind := testServer(t, Config{MaxSessions: 8, MaxSessionsPerClient: 2, EvictAfter: time.Hour, TrustedProxies: []string{"127.0.0.0/8"}})
	for i, c := range []struct {
		forwarded string
		want      int
	}{
		{"10.0.0.1", 200}, {"10.0.0.1", 200}, {"10.0.0.1", 503}, // one client's cap
		{"10.0.0.2", 200},            // another client behind the same proxy
		{"10.0.0.1, 127.0.0.1", 503}, // through two trusted hops: still 10.0.0.1
		{"6.6.6.6, 10.0.0.3", 200},   // a forged first hop is not believed: 10.0.0.3
	} {
		if got := reset(behind.URL, c.forwarded); got != c.want {
			t.Errorf("behind a proxy, request %d (X-Forwarded-For %q): %d, want %d", i, c.forwarded, got, c.want)
		}
	}
	_, direct := testServer(t, Config{MaxSessions: 8, MaxSessionsPerClient: 2, EvictAfter: time.Hour})
	for i, want := range []int{200, 200, 503} {
		if got := reset(direct.URL, fmt.Sprintf("10.0.1.%d", i)); got != want {
			t.Errorf("no trusted proxy, request %d: %d, want %d (X-Forwarded-For must not count)", i, got, want)
		}
	}
	if _, err := New(Config{NewEnv: func() (sqlenv.Env, error) { return blockingEnv{}, nil }, Env: sqlenv.Config{Questions: nil}, TrustedProxies: []string{"not-an-ip"}}); err == nil || !strings.Contains(err.Error(), "not-an-ip") {
		t.Errorf("a bad trusted proxy: %v", err)
	}
}

// countingEnv is an environment whose steps take 50 ms and count how many
// run at once.
type countingEnv struct {
	sqlenv.Env
	running, most *atomic.Int32
}

func (countingEnv) Reset(context.Context, sqlenv.ResetOptions) (sqlenv.Observation, error) {
	return sqlenv.Observation{Question: "q"}, nil
}

func (e countingEnv) Step(ctx context.Context, _ sqlenv.Action) (sqlenv.Observation, error) {
	n := e.running.Add(1)
	defer e.running.Add(-1)
	for {
		m := e.most.Load()
		if n <= m || e.most.CompareAndSwap(m, n) {
			break
		}
	}
	select {
	case <-time.After(50 * time.Millisecond):
	case <-ctx.Done():
		return sqlenv.Observation{}, ctx.Err()
	}
	return sqlenv.Observation{Result: "ok"}, nil
}

func (countingEnv) Close() error { return nil }

// TestRunningQueriesAreCapped: at most MaxRunningQueries QUERY and SAMPLE
// steps run at once across sessions (each holds its result in memory); the
// others wait their turn and still succeed — the wait is not part of their
// step time (here 12 steps of 50 ms, 2 at a time, under a 200 ms step
// timeout) — while other actions are not held back.
func TestRunningQueriesAreCapped(t *testing.T) {
	var running, most atomic.Int32
	_, hs := testServer(t, Config{MaxRunningQueries: 2, StepTimeout: 200 * time.Millisecond,
		NewEnv: func() (sqlenv.Env, error) { return countingEnv{running: &running, most: &most}, nil }})
	var wg sync.WaitGroup
	failed := atomic.Int32{}
	for i := range 12 {
		wg.Go(func() {
			status, hdr, body := request(t, "POST", hs.URL+"/reset", nil, `{}`)
			if status != 200 {
				t.Errorf("reset: %d %s", status, body)
				return
			}
			action := []string{"QUERY", "SAMPLE"}[i%2]
			status, _, body = request(t, "POST", hs.URL+"/step", map[string]string{SessionHeader: hdr.Get(SessionHeader)},
				`{"action": {"action_type": "`+action+`", "argument": "SELECT 1"}}`)
			if status != 200 {
				failed.Add(1)
				t.Errorf("%s step: %d %s", action, status, body)
			}
		})
	}
	wg.Wait()
	if m := most.Load(); m > 2 || m == 0 {
		t.Errorf("%d queries ran at once, want at most MaxRunningQueries = 2", m)
	}
	// DESCRIBE is not a query: 6 of them run side by side.
	most.Store(0)
	for range 6 {
		wg.Go(func() {
			_, hdr, _ := request(t, "POST", hs.URL+"/reset", nil, `{}`)
			request(t, "POST", hs.URL+"/step", map[string]string{SessionHeader: hdr.Get(SessionHeader)},
				`{"action": {"action_type": "DESCRIBE", "argument": "t"}}`)
		})
	}
	wg.Wait()
	if m := most.Load(); m <= 2 {
		t.Errorf("only %d DESCRIBE steps ran at once: they should not wait for query slots", m)
	}
}
