package server

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/gosqlenv/gosqlenv/sqlenv"
	"github.com/gosqlenv/gosqlenv/sqlenv/client"
	"github.com/gosqlenv/gosqlenv/sqlenv/dataset"
)

// BenchmarkSteps plays oracle episodes (DESCRIBE…, QUERY gold, ANSWER) over
// the bundled training questions with 1 and 64 concurrent sessions, in
// process and through the WebSocket and HTTP clients over loopback. One
// op is one step; steps/s counts every session's steps over the wall time
// (resets included in the time), p50/p99 are per-step latencies as the
// caller sees them.
//
//	go test -run=NONE -bench=Steps -benchtime=20000x ./sqlenv/server/
func BenchmarkSteps(b *testing.B) {
	for _, transport := range []string{"inprocess", "websocket", "http"} {
		for _, sessions := range []int{1, 64} {
			b.Run(fmt.Sprintf("%s/sessions=%d", transport, sessions), func(b *testing.B) {
				benchSteps(b, transport, sessions)
			})
		}
	}
}

var warmGold sync.Once

// benchQuestions are the bundled training questions and the oracle, with
// every gold result computed before any timing (in this process).
func benchQuestions(tb testing.TB) ([]dataset.QuestionRecord, sqlenv.Policy) {
	qs, _ := bundledData(tb)
	var train []dataset.QuestionRecord
	for _, q := range qs {
		if q.Split == dataset.Train {
			train = append(train, q)
		}
	}
	oracle := sqlenv.NewOraclePolicy(qs)
	warmGold.Do(func() {
		env := inProcess(tb, 0)
		for _, q := range train {
			sqlenv.PlayEpisode(ctx, env, oracle, sqlenv.ResetOptions{QuestionID: q.QuestionID})
		}
	})
	return train, oracle
}

// newBenchEnv returns how a benchmark makes sessions: in process, or
// clients of the server at addr over WebSocket or HTTP.
func newBenchEnv(tb testing.TB, transport, addr string) func() (sqlenv.Env, error) {
	qs, dbs := bundledData(tb)
	if transport == "inprocess" {
		return func() (sqlenv.Env, error) { return sqlenv.New(sqlenv.Config{Questions: qs, Databases: dbs}) }
	}
	opts := testClientOptions(tb)
	opts.HTTP = transport == "http"
	pool, err := client.NewPool([]string{addr}, opts)
	if err != nil {
		tb.Fatal(err)
	}
	return pool.NewEnv
}

func benchSteps(b *testing.B, transport string, sessions int) {
	train, oracle := benchQuestions(b)
	addr := ""
	if transport != "inprocess" {
		_, hs := testServer(b, Config{})
		addr = hs.URL
	}
	envs := openBenchEnvs(b, newBenchEnv(b, transport, addr), sessions, train, oracle)
	b.ResetTimer()
	res := playLoad(b, envs, train, oracle, b.N)
	b.StopTimer()
	res.report(b)
}

// openBenchEnvs opens sessions and plays one episode in each (which opens
// their connections).
func openBenchEnvs(tb testing.TB, newEnv func() (sqlenv.Env, error), sessions int, train []dataset.QuestionRecord, oracle sqlenv.Policy) []sqlenv.Env {
	envs := make([]sqlenv.Env, sessions)
	for i := range envs {
		env, err := newEnv()
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { env.Close() })
		if rep := sqlenv.PlayEpisode(ctx, env, oracle, sqlenv.ResetOptions{QuestionID: train[i%len(train)].QuestionID}); rep.Err != "" {
			tb.Fatal(rep.Err)
		}
		envs[i] = env
	}
	return envs
}

// loadResult is a load's throughput and per-step latencies, and the CPU
// its process used over it (in CPU seconds per second).
type loadResult struct {
	StepsPerSecond float64
	P50, P99       time.Duration
	Elapsed        time.Duration
	CPU            float64
}

func (r loadResult) report(b *testing.B) {
	b.ReportMetric(r.StepsPerSecond, "steps/s")
	b.ReportMetric(float64(r.P50.Nanoseconds()), "p50-ns/step")
	b.ReportMetric(float64(r.P99.Nanoseconds()), "p99-ns/step")
}

// cpuTime is the CPU time (user + system) this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// procCPU is the CPU time process pid has used (Linux /proc; 0 elsewhere).
func procCPU(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	utime, _ := strconv.ParseInt(f[11], 10, 64) // fields 14 and 15, in clock ticks
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * time.Second / 100
}

// playLoad plays oracle episodes in every session at once until steps
// steps are done.
func playLoad(tb testing.TB, envs []sqlenv.Env, train []dataset.QuestionRecord, oracle sqlenv.Policy, steps int) loadResult {
	sessions := len(envs)
	var remaining atomic.Int64
	remaining.Store(int64(steps))
	latencies := make([][]time.Duration, sessions)
	var wg sync.WaitGroup
	start, cpu0 := time.Now(), cpuTime()
	for w, env := range envs {
		wg.Go(func() {
			lat := make([]time.Duration, 0, steps/sessions+8)
			defer func() { latencies[w] = lat }()
			for i := w; ; i += sessions {
				obs, err := env.Reset(ctx, sqlenv.ResetOptions{QuestionID: train[i%len(train)].QuestionID})
				if err != nil {
					tb.Error(err)
					return
				}
				for !obs.Done {
					if remaining.Add(-1) < 0 {
						return
					}
					a, err := oracle.Act(ctx, obs)
					if err != nil {
						tb.Error(err)
						return
					}
					t0 := time.Now()
					obs, err = env.Step(ctx, a)
					lat = append(lat, time.Since(t0))
					if err != nil {
						tb.Error(err)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	all := slices.Concat(latencies...)
	slices.Sort(all)
	r := loadResult{Elapsed: elapsed, CPU: (cpuTime() - cpu0).Seconds() / elapsed.Seconds()}
	r.StepsPerSecond = float64(len(all)) / elapsed.Seconds()
	if len(all) > 0 {
		r.P50, r.P99 = all[len(all)/2], all[len(all)*99/100]
	}
	return r
}

// BenchmarkStepsSplitCores measures what the server costs beside the
// environment's own work, with clients that do not take the server's CPU:
// the environment gets CPU 1 alone — in process (the load in one process
// pinned there) or as the server (pinned there, its clients in another
// process pinned to CPU 0). Each side is this test binary run as a child
// (TestBenchChild) under taskset. 200 sessions; one op is one step.
//
//	go test -run=NONE -bench=SplitCores -benchtime=40000x ./sqlenv/server/
func BenchmarkStepsSplitCores(b *testing.B) {
	if runtime.NumCPU() < 2 {
		b.Skip("needs two CPUs")
	}
	if _, err := exec.LookPath("taskset"); err != nil {
		b.Skip("needs taskset (util-linux)")
	}
	const sessions = 200
	for _, transport := range []string{"inprocess", "websocket", "http"} {
		b.Run(fmt.Sprintf("%s/sessions=%d", transport, sessions), func(b *testing.B) {
			addr, server := "", 0
			if transport != "inprocess" {
				addr, server = startBenchServer(b)
			}
			serverCPU0 := procCPU(server)
			cpu := "0"
			if transport == "inprocess" {
				cpu = "1"
			}
			cmd := benchChild(b, cpu, "load", "GOSQLENV_BENCH_ADDR="+addr, "GOSQLENV_BENCH_TRANSPORT="+transport,
				fmt.Sprintf("GOSQLENV_BENCH_SESSIONS=%d", sessions), fmt.Sprintf("GOSQLENV_BENCH_STEPS=%d", b.N))
			out, err := cmd.Output()
			if err != nil {
				b.Fatalf("load child: %v\n%s", err, out)
			}
			var res loadResult
			if err := json.Unmarshal(lastLine(out), &res); err != nil {
				b.Fatalf("load child said %q", out)
			}
			res.report(b)
			// How busy each side was (CPU seconds per second; 1 = its CPU
			// saturated). The server's includes the load's warm-up.
			b.ReportMetric(res.CPU, "load-cpu")
			if server != 0 {
				b.ReportMetric((procCPU(server)-serverCPU0).Seconds()/res.Elapsed.Seconds(), "server-cpu")
			}
		})
	}
}

// benchChild is a command running this test binary as TestBenchChild in
// role, pinned to cpu.
func benchChild(tb testing.TB, cpu, role string, env ...string) *exec.Cmd {
	cmd := exec.Command("taskset", "-c", cpu, os.Args[0], "-test.run=^TestBenchChild$", "-test.bench=^$", "-test.v")
	cmd.Env = append(os.Environ(), append(env, "GOSQLENV_BENCH_ROLE="+role)...)
	cmd.Stderr = os.Stderr
	return cmd
}

// startBenchServer starts a server child on CPU 1 and returns its URL
// and process id.
func startBenchServer(tb testing.TB) (string, int) {
	cmd := benchChild(tb, "1", "server")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { stdin.Close(); cmd.Wait() })
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if addr, ok := strings.CutPrefix(sc.Text(), "ADDR "); ok {
			go io.Copy(io.Discard, stdout)
			return addr, cmd.Process.Pid
		}
	}
	tb.Fatal("the server child did not start")
	return "", 0
}

// profileCPU writes a CPU profile to the file the variable names, if set,
// until the returned function is called (GOSQLENV_BENCH_SERVER_CPUPROFILE:
// the server side from its start to the end of the load;
// GOSQLENV_BENCH_LOAD_CPUPROFILE: the load, sessions open).
func profileCPU(tb testing.TB, variable string) (stop func()) {
	path := os.Getenv(variable)
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	pprof.StartCPUProfile(f)
	return func() { pprof.StopCPUProfile(); f.Close() }
}

func lastLine(b []byte) []byte {
	lines := bytes.Split(bytes.TrimSpace(b), []byte("\n"))
	for i := len(lines) - 1; i >= 0; i-- {
		if bytes.HasPrefix(lines[i], []byte("{")) {
			return lines[i]
		}
	}
	return nil
}

// TestBenchChild is a side of BenchmarkStepsSplitCores (skipped
// otherwise): "server" serves until its stdin closes; "load" plays the
// load and prints its loadResult as JSON.
func TestBenchChild(t *testing.T) {
	role := os.Getenv("GOSQLENV_BENCH_ROLE")
	switch role {
	case "":
		t.Skip("run by BenchmarkStepsSplitCores")
	case "server":
		benchQuestions(t) // gold results cached, as in process
		_, hs := testServer(t, Config{MaxSessions: 1024, MaxSessionsPerClient: 1024, MaxConnsPerClient: 4096})
		defer profileCPU(t, "GOSQLENV_BENCH_SERVER_CPUPROFILE")()
		fmt.Printf("ADDR %s\n", hs.URL)
		io.Copy(io.Discard, os.Stdin)
	case "load":
		train, oracle := benchQuestions(t)
		sessions, _ := strconv.Atoi(os.Getenv("GOSQLENV_BENCH_SESSIONS"))
		steps, _ := strconv.Atoi(os.Getenv("GOSQLENV_BENCH_STEPS"))
		envs := openBenchEnvs(t, newBenchEnv(t, os.Getenv("GOSQLENV_BENCH_TRANSPORT"), os.Getenv("GOSQLENV_BENCH_ADDR")), sessions, train, oracle)
		stop := profileCPU(t, "GOSQLENV_BENCH_LOAD_CPUPROFILE")
		res := playLoad(t, envs, train, oracle, steps)
		stop()
		b, _ := json.Marshal(res)
		fmt.Printf("%s\n", b)
	}
}

// BenchmarkWebSocketRoundTrip is the floor under the WebSocket numbers: a
// 1 KiB message echoed over loopback by a bare coder/websocket handler (no
// JSON, no environment), read by the caller's goroutine.
func BenchmarkWebSocketRoundTrip(b *testing.B) {
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		for {
			t, m, err := c.Read(ctx)
			if err != nil {
				return
			}
			if c.Write(ctx, t, m) != nil {
				return
			}
		}
	}))
	defer hs.Close()
	c, _, err := websocket.Dial(ctx, hs.URL, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer c.CloseNow()
	msg := make([]byte, 1024)
	var lat []time.Duration
	for b.Loop() {
		t0 := time.Now()
		if err := c.Write(ctx, websocket.MessageText, msg); err != nil {
			b.Fatal(err)
		}
		if _, _, err := c.Read(ctx); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds()), "p50-ns/roundtrip")
}
