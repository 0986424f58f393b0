package training

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/gosqlenv/gosqlenv/sqlenv"
	"github.com/gosqlenv/gosqlenv/sqlenv/client"
	"github.com/gosqlenv/gosqlenv/sqlenv/server"
)

// envServer is a sqlenv server on a fixed loopback address that a test can
// kill (every session and connection dropped at once, as when its process
// dies) and start again.
type envServer struct {
	t    *testing.T
	cfg  sqlenv.Config
	addr string
	mu   sync.Mutex
	srv  *server.Server
	hs   *httptest.Server
}

func startEnvServer(t *testing.T, cfg sqlenv.Config) *envServer {
	s := &envServer{t: t, cfg: cfg, addr: "127.0.0.1:0"}
	s.start()
	t.Cleanup(s.kill)
	return s
}

func (s *envServer) url() string { return "http://" + s.addr }

func (s *envServer) start() {
	s.mu.Lock()
	defer s.mu.Unlock()
	srv, err := server.New(server.Config{Env: s.cfg, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		s.t.Fatal(err)
	}
	l, err := net.Listen("tcp", s.addr)
	if err != nil {
		s.t.Fatal(err)
	}
	s.addr = l.Addr().String()
	hs := &httptest.Server{Listener: l, Config: &http.Server{Handler: srv}}
	hs.Start()
	s.srv, s.hs = srv, hs
}

func (s *envServer) kill() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.hs == nil {
		return
	}
	s.hs.CloseClientConnections()
	s.srv.Close()
	s.hs.Close()
	s.srv, s.hs = nil, nil
}

// TestGRPOAgainstEnvServers: GRPO on a tiny model with its episodes played
// on three environment servers gives exactly the in-process run's results
// for the same seed; and with one server killed in the middle of a rollout
// (and started again at the next step), the run still finishes all its
// steps, the lost episodes replayed on the other servers (counted in
// rollout/env_failures and rollout/replayed_episodes).
func TestGRPOAgainstEnvServers(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a tiny model three times")
	}
	ctx := context.Background()
	qs, dbs := bundledTrain(t)
	local := sqlenv.Config{Questions: qs, Databases: dbs, StepBudget: 3}
	const steps = 3
	run := func(newEnv func() (sqlenv.Env, error), onProgress func(step, done int)) []Metrics {
		t.Helper()
		cfg, model, roller, ids, _ := tinySetupOn(t, t.TempDir(), qs, newEnv)
		cfg.MaxSteps = steps
		cfg.PerDeviceTrainBatchSize, cfg.GradientAccumulationSteps = 3, 2 // 3 questions, 6 episodes a step
		tr, err := NewGRPOTrainer(cfg, model, roller, ids, nil)
		if err != nil {
			t.Fatal(err)
		}
		tr.Rewards = append(tr.Rewards, lengthReward)
		var all []Metrics
		for s := range steps {
			roller.OnProgress = func(done, _ int) {
				if onProgress != nil {
					onProgress(s, done)
				}
			}
			m, err := tr.Step(ctx, s)
			if err != nil {
				t.Fatalf("step %d: %v", s, err)
			}
			all = append(all, m)
		}
		return all
	}
	inProcess := run(func() (sqlenv.Env, error) { return sqlenv.New(local) }, nil)

	servers := []*envServer{startEnvServer(t, local), startEnvServer(t, local), startEnvServer(t, local)}
	var urls []string
	for _, s := range servers {
		urls = append(urls, s.url())
		if err := client.CheckServer(ctx, s.url(), nil, local); err != nil {
			t.Fatal(err)
		}
	}
	pool, err := client.NewPool(urls, nil)
	if err != nil {
		t.Fatal(err)
	}
	remote := run(pool.NewEnv, nil)
	for s := range steps {
		for _, k := range []string{"reward", "loss", "grad_norm", "entropy", "completions/mean_length", "turns/mean", "success_rate"} {
			a, b := inProcess[s][k], remote[s][k]
			if a != b && !(math.IsNaN(a) && math.IsNaN(b)) {
				t.Errorf("step %d: %s in process %v, on servers %v", s+1, k, a, b)
			}
		}
		if f := remote[s]["rollout/env_failures"] + remote[s]["rollout/dropped_groups"]; f != 0 {
			t.Errorf("step %d: %v environment failures with no server down", s+1, f)
		}
	}

	// Server 1 dies after the first turn of step 2 and comes back at step 3.
	killed := false
	flaky := run(pool.NewEnv, func(step, done int) {
		switch {
		case step == 1 && !killed:
			servers[1].kill()
			killed = true
		case step == 2 && servers[1].hs == nil:
			servers[1].start()
		}
	})
	var failures, replayed, dropped float64
	for s, m := range flaky {
		failures += m["rollout/env_failures"]
		replayed += m["rollout/replayed_episodes"]
		dropped += m["rollout/dropped_groups"]
		t.Logf("step %d: env failures %v, replayed %v, dropped groups %v, reward %.3f", s+1, m["rollout/env_failures"], m["rollout/replayed_episodes"], m["rollout/dropped_groups"], m["reward"])
	}
	if len(flaky) != steps || failures < 2 || replayed != failures || dropped != 0 {
		t.Errorf("after a server died: %d steps, %v failures, %v replayed, %v dropped groups", len(flaky), failures, replayed, dropped)
	}
	// Its replays gave the observations the lost sessions would have: the
	// run's results are those of the undisturbed runs.
	for s := range steps {
		for _, k := range []string{"reward", "loss", "completions/mean_length", "turns/mean"} {
			if a, b := inProcess[s][k], flaky[s][k]; a != b && !(math.IsNaN(a) && math.IsNaN(b)) {
				t.Errorf("step %d: %s in process %v, with a server killed %v", s+1, k, a, b)
			}
		}
	}
	// The restarted server takes sessions again.
	env, err := client.Dial(ctx, servers[1].url(), nil)
	if err != nil {
		t.Fatalf("the restarted server: %v", err)
	}
	env.Close()
}

// TestUsableServersSkipsServersDown: at start a server that does not answer
// is skipped (the others are used), none answering stops the run naming
// them, and a server that answers but differs stops it whatever the others.
func TestUsableServersSkipsServersDown(t *testing.T) {
	addrs := []string{"http://a:8000", "http://b:8000", "http://c:8000"}
	down := &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connect: connection refused")}
	wrong := &client.MismatchError{Server: "http://c:8000", MissingCount: 3}
	got, err := usableServers(addrs, []error{nil, fmt.Errorf("environment server http://b:8000: %w", down), nil})
	if err != nil || !slices.Equal(got, []string{"http://a:8000", "http://c:8000"}) {
		t.Errorf("one server down: %v, %v; want a and c", got, err)
	}
	if _, err := usableServers(addrs, []error{down, down, down}); err == nil || !strings.Contains(err.Error(), "no server answered") {
		t.Errorf("every server down: %v; want an error saying none answered", err)
	}
	if _, err := usableServers(addrs, []error{nil, down, wrong}); err == nil || !errors.As(err, new(*client.MismatchError)) {
		t.Errorf("a server that differs: %v; want its mismatch", err)
	}
}
