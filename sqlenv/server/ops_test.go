package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/gosqlenv/gosqlenv/sqlenv"
	"github.com/gosqlenv/gosqlenv/sqlenv/client"
)

// gatedEnv holds steps whose action metadata has "slow": true until the gate
// opens (or their context ends), signalling on entered when they start.
type gatedEnv struct {
	sqlenv.Env
	entered chan struct{}
	gate    chan struct{}
}

func (g *gatedEnv) Step(ctx context.Context, a sqlenv.Action) (sqlenv.Observation, error) {
	if a.Metadata["slow"] == true {
		select {
		case g.entered <- struct{}{}:
		default:
		}
		select {
		case <-g.gate:
		case <-ctx.Done():
			return sqlenv.Observation{}, ctx.Err()
		}
	}
	return g.Env.Step(ctx, a)
}

// gatedConfig makes every session's environment a gatedEnv sharing the
// returned channels.
func gatedConfig(tb testing.TB, cfg Config) (Config, chan struct{}, chan struct{}) {
	qs, dbs := bundledData(tb)
	entered, gate := make(chan struct{}, 16), make(chan struct{})
	cfg.Env = sqlenv.Config{Questions: qs, Databases: dbs}
	cfg.NewEnv = func() (sqlenv.Env, error) {
		e, err := sqlenv.New(sqlenv.Config{Questions: qs, Databases: dbs})
		if err != nil {
			return nil, err
		}
		return &gatedEnv{Env: e, entered: entered, gate: gate}, nil
	}
	return cfg, entered, gate
}

var slow = map[string]any{"slow": true}

func TestCapacity(t *testing.T) {
	s, hs := testServer(t, Config{MaxSessions: 2, MaxSessionsPerClient: 2})
	opts := testClientOptions(t)
	a, err := client.Dial(ctx, hs.URL, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := client.Dial(ctx, hs.URL, opts)
	if err != nil {
		t.Fatal(err)
	}
	// As with OpenEnv's server, the upgrade is accepted and the refusal is
	// an error message; Dial reports it.
	_, err = client.Dial(ctx, hs.URL, opts)
	if e, ok := errors.AsType[*Error](err); !ok || e.Code != CodeCapacity {
		t.Fatalf("third WebSocket: %v (%#v), want CAPACITY_REACHED", err, e)
	}
	status, _, body := request(t, "POST", hs.URL+"/reset", nil, `{}`)
	if code, _ := errorBody(t, body); status != 503 || code != CodeCapacity {
		t.Fatalf("HTTP reset at capacity: %d %s", status, body)
	}
	// A pool fails over to a server with room.
	_, hs2 := testServer(t, Config{})
	pool, err := client.NewPool([]string{hs.URL, hs2.URL}, opts)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		env, err := pool.Open(ctx)
		if err != nil {
			t.Fatalf("pool open %d: %v", i, err)
		}
		if !strings.HasPrefix(env.(*client.Session).Addr(), "ws"+strings.TrimPrefix(hs2.URL, "http")) {
			t.Errorf("pool session %d on %s, want the server with room", i, env.(*client.Session).Addr())
		}
		env.Close()
	}
	// A closed session frees its slot.
	b.Close()
	waitFor(t, "the slot to be free", func() bool { return s.reg.counts()[transportWS] == 1 })
	c, err := client.Dial(ctx, hs.URL, opts)
	if err != nil {
		t.Fatalf("dial after a close: %v", err)
	}
	c.Close()
}

// TestHTTPSessionEviction: at capacity, a new HTTP session takes the slot of
// the least recently used idle HTTP session, never a WebSocket's.
// TestHTTPSessionEviction: at capacity, a new session gets CAPACITY_REACHED
// while every HTTP session has been used within EvictAfter — another
// client's resets never take a session in the middle of an episode — and
// once sessions have been idle that long, the least recently used one is
// evicted to make room; a WebSocket session is never evicted.
func TestHTTPSessionEviction(t *testing.T) {
	const evictAfter = 300 * time.Millisecond
	s, hs := testServer(t, Config{MaxSessions: 3, MaxSessionsPerClient: 3, EvictAfter: evictAfter})
	ws, err := client.Dial(ctx, hs.URL, testClientOptions(t))
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	reset := func(want int) string {
		status, hdr, body := request(t, "POST", hs.URL+"/reset", nil, `{}`)
		if status != want {
			t.Fatalf("reset: %d %s, want %d", status, body, want)
		}
		return hdr.Get(SessionHeader)
	}
	state := func(id string) int {
		status, _, _ := request(t, "GET", hs.URL+"/state", map[string]string{SessionHeader: id}, "")
		return status
	}
	victim := reset(200)
	other := reset(200)
	// The victim takes a step; another client then resets again and again.
	if status, _, body := request(t, "POST", hs.URL+"/step", map[string]string{SessionHeader: victim},
		`{"action": {"action_type": "DESCRIBE", "argument": "customer"}}`); status != 200 {
		t.Fatalf("step: %d %s", status, body)
	}
	for i := 0; i < 20; i++ {
		reset(503)
	}
	if got := state(victim); got != 200 {
		t.Fatalf("the victim's session answers %d after another client's resets at capacity", got)
	}
	// Idle past EvictAfter, the least recently used session makes room.
	time.Sleep(evictAfter / 2)
	if state(victim) != 200 { // the victim is active again; other is not
		t.Fatal("victim lost")
	}
	time.Sleep(evictAfter/2 + 50*time.Millisecond)
	third := reset(200)
	for id, want := range map[string]int{victim: 200, other: 404, third: 200} {
		if got := state(id); got != want {
			t.Errorf("session %s: %d, want %d", id, got, want)
		}
	}
	if _, err := ws.Reset(ctx, sqlenv.ResetOptions{}); err != nil {
		t.Errorf("the WebSocket session was disturbed: %v", err)
	}
	if n := s.metrics.evicted.Load(); n != 1 {
		t.Errorf("%d evictions, want 1", n)
	}
}

func TestIdleExpiry(t *testing.T) {
	s, hs := testServer(t, Config{IdleTimeout: 150 * time.Millisecond})
	status, hdr, body := request(t, "POST", hs.URL+"/reset", nil, `{}`)
	if status != 200 {
		t.Fatalf("reset: %d %s", status, body)
	}
	sid := hdr.Get(SessionHeader)
	ws, err := client.Dial(ctx, hs.URL, testClientOptions(t))
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	if _, err := ws.Reset(ctx, sqlenv.ResetOptions{}); err != nil {
		t.Fatal(err)
	}
	// A session in use stays: keep the HTTP one busy for a while.
	deadline := time.Now().Add(300 * time.Millisecond)
	for time.Now().Before(deadline) {
		if status, _, body := request(t, "GET", hs.URL+"/state", map[string]string{SessionHeader: sid}, ""); status != 200 {
			t.Fatalf("a used session expired: %d %s", status, body)
		}
		time.Sleep(20 * time.Millisecond)
	}
	waitFor(t, "both sessions to expire", func() bool {
		n := s.reg.counts()
		return n[transportHTTP]+n[transportWS] == 0
	})
	if status, _, _ := request(t, "GET", hs.URL+"/state", map[string]string{SessionHeader: sid}, ""); status != 404 {
		t.Errorf("expired HTTP session: %d, want 404", status)
	}
	if _, err := ws.Step(ctx, sqlenv.Action{ActionType: sqlenv.Query, Argument: "SELECT 1"}); !errors.Is(err, sqlenv.ErrClosed) {
		t.Errorf("step on an expired WebSocket session: %v, want ErrClosed", err)
	}
	if n := s.metrics.expired.Load(); n != 2 {
		t.Errorf("%d expired, want 2", n)
	}
}

func TestStepTimeout(t *testing.T) {
	cfg, _, gate := gatedConfig(t, Config{StepTimeout: 200 * time.Millisecond})
	defer close(gate)
	_, hs := testServer(t, cfg)
	h, err := client.NewHTTPSession(hs.URL, testClientOptions(t))
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if _, err := h.Reset(ctx, sqlenv.ResetOptions{QuestionID: "bank_eval_000"}); err != nil {
		t.Fatal(err)
	}
	sid := h.SessionID()
	for _, c := range []struct {
		name    string
		timeout float64
		atLeast time.Duration
	}{
		{"timeout_s", 0.05, 50 * time.Millisecond},
		{"capped by StepTimeout", 100, 200 * time.Millisecond},
	} {
		start := time.Now()
		status, _, body := request(t, "POST", hs.URL+"/step", map[string]string{SessionHeader: sid}, mustJSON(map[string]any{
			"action": map[string]any{"action_type": "QUERY", "argument": "SELECT 1", "metadata": slow}, "timeout_s": c.timeout}))
		took := time.Since(start)
		if code, _ := errorBody(t, body); status != 504 || code != CodeTimeout {
			t.Errorf("%s: %d %s, want 504 TIMEOUT", c.name, status, body)
		}
		if took < c.atLeast || took > c.atLeast+2*time.Second {
			t.Errorf("%s: took %v, want about %v", c.name, took, c.atLeast)
		}
	}
	// The timed-out steps changed nothing; the client's deadline travels as
	// timeout_s.
	st, err := h.RemoteState(ctx)
	if err != nil || st.StepCount != 0 {
		t.Errorf("state after timeouts: %+v, %v; want step 0", st, err)
	}
	c, cancel := context.WithTimeout(ctx, 80*time.Millisecond)
	defer cancel()
	if _, err := h.Step(c, sqlenv.Action{ActionType: sqlenv.Query, Argument: "SELECT 1", Metadata: slow}); err == nil {
		t.Error("a step past its deadline succeeded")
	}
	obs, err := h.Step(ctx, sqlenv.Action{ActionType: sqlenv.Query, Argument: "SELECT 1"})
	if err != nil || obs.StepCount != 1 {
		t.Errorf("step after timeouts: %+v, %v", obs, err)
	}
}

// TestMetrics checks /metrics' values and its text format.
func TestMetrics(t *testing.T) {
	_, hs := testServer(t, Config{})
	c, err := client.Dial(ctx, hs.URL, testClientOptions(t))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Reset(ctx, sqlenv.ResetOptions{QuestionID: "bank_eval_000"}); err != nil {
		t.Fatal(err)
	}
	for _, a := range []sqlenv.Action{{ActionType: sqlenv.Describe, Argument: "customer"}, {ActionType: "describe", Argument: "loan"}, {ActionType: sqlenv.Query, Argument: "SELECT 1"}} {
		if _, err := c.Step(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	c.Step(ctx, sqlenv.Action{ActionType: "DROP", Argument: "x"})
	request(t, "POST", hs.URL+"/step", nil, `{`)

	status, hdr, body := request(t, "GET", hs.URL+"/metrics", nil, "")
	if status != 200 || !strings.HasPrefix(hdr.Get("Content-Type"), "text/plain; version=0.0.4") {
		t.Fatalf("metrics: %d %s", status, hdr.Get("Content-Type"))
	}
	values := parseMetrics(t, body)
	for k, want := range map[string]float64{
		`sqlenv_sessions{transport="ws"}`:                 1,
		`sqlenv_sessions{transport="http"}`:               0,
		`sqlenv_sessions_opened_total{transport="ws"}`:    1,
		`sqlenv_resets_total`:                             1,
		`sqlenv_steps_total{action_type="DESCRIBE"}`:      2,
		`sqlenv_steps_total{action_type="QUERY"}`:         1,
		`sqlenv_steps_total{action_type="ANSWER"}`:        0,
		`sqlenv_errors_total{code="VALIDATION_ERROR"}`:    1,
		`sqlenv_errors_total{code="INVALID_JSON"}`:        1,
		`sqlenv_errors_total{code="CAPACITY_REACHED"}`:    0,
		`sqlenv_step_duration_seconds_count`:              3,
		`sqlenv_step_duration_seconds_bucket{le="+Inf"}`:  3,
		`sqlenv_step_duration_seconds_bucket{le="5e-05"}`: -1, // present
	} {
		got, ok := values[k]
		if !ok {
			t.Errorf("no %s in\n%s", k, body)
		} else if want >= 0 && got != want {
			t.Errorf("%s = %v, want %v", k, got, want)
		}
	}
	if values["sqlenv_step_duration_seconds_sum"] <= 0 {
		t.Error("step duration sum is 0")
	}
	// What an operator's dashboards expect beside the server's own families:
	// the client library's standard Go runtime and process collectors.
	for _, k := range []string{"go_goroutines", "go_threads", "go_memstats_heap_alloc_bytes",
		"go_gc_duration_seconds_count", "process_resident_memory_bytes", "process_open_fds",
		"process_max_fds", "process_cpu_seconds_total", "process_start_time_seconds"} {
		if v, ok := values[k]; !ok {
			t.Errorf("no %s", k)
		} else if v <= 0 && k != "go_gc_duration_seconds_count" && k != "process_cpu_seconds_total" {
			t.Errorf("%s = %v", k, v)
		}
	}
	if n := len(values); n < 50 {
		t.Errorf("only %d samples", n)
	}
}

// parseMetrics parses the text format with Prometheus' own parser (which
// refuses a sample before its family's TYPE line, duplicate families and
// malformed lines) and returns the samples by name and labels as
// `name{k="v",…}` (histogram buckets as name_bucket{le="…"}, then _sum and
// _count; summaries likewise with quantile).
func parseMetrics(tb testing.TB, body []byte) map[string]float64 {
	tb.Helper()
	parser := expfmt.NewTextParser(model.LegacyValidation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		tb.Fatalf("metrics do not parse: %v\n%s", err, body)
	}
	values := map[string]float64{}
	for name, f := range families {
		if f.GetHelp() == "" {
			tb.Errorf("%s has no HELP", name)
		}
		for _, m := range f.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			key := func(suffix string, extra ...string) string {
				all := append(slices.Clone(labels), extra...)
				if len(all) == 0 {
					return name + suffix
				}
				return name + suffix + "{" + strings.Join(all, ",") + "}"
			}
			switch {
			case m.Counter != nil:
				values[key("")] = m.Counter.GetValue()
			case m.Gauge != nil:
				values[key("")] = m.Gauge.GetValue()
			case m.Untyped != nil:
				values[key("")] = m.Untyped.GetValue()
			case m.Histogram != nil:
				h := m.Histogram
				last := 0.0
				for _, b := range h.GetBucket() {
					v := float64(b.GetCumulativeCount())
					if v < last {
						tb.Errorf("%s: bucket le=%v below the previous one", name, b.GetUpperBound())
					}
					last = v
					values[key("_bucket", fmt.Sprintf("le=%q", formatBound(b.GetUpperBound())))] = v
				}
				values[key("_bucket", `le="+Inf"`)] = float64(h.GetSampleCount())
				values[key("_sum")] = h.GetSampleSum()
				values[key("_count")] = float64(h.GetSampleCount())
			case m.Summary != nil:
				values[key("_sum")] = m.Summary.GetSampleSum()
				values[key("_count")] = float64(m.Summary.GetSampleCount())
			}
		}
	}
	return values
}

func formatBound(b float64) string {
	if math.IsInf(b, 1) {
		return "+Inf"
	}
	return strconv.FormatFloat(b, 'g', -1, 64)
}

// waitFor polls cond for up to 10 s.
func waitFor(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			tb.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

var _ http.Handler = (*Server)(nil)
