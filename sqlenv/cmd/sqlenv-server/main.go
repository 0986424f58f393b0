// Command sqlenv-server serves the SQL environment over OpenEnv's HTTP and
// WebSocket protocol (package sqlenv/server).
//
//	sqlenv-server [--addr :8000] [--data DIR | --questions FILE --db-dir DIR] [flags]
//
// Every flag can also be given as an environment variable (SQLENV_ADDR,
// SQLENV_DATA, SQLENV_MAX_SESSIONS, …; see -h); a flag on the command line
// wins. Without --data or --questions it serves every question (train and
// eval) of the bundled dataset, generated into the user's cache on first
// use. SIGINT or SIGTERM shuts it down gracefully.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/gosqlenv/gosqlenv/sqlenv"
	"github.com/gosqlenv/gosqlenv/sqlenv/dataset"
	"github.com/gosqlenv/gosqlenv/sqlenv/dataset/bundled"
	"github.com/gosqlenv/gosqlenv/sqlenv/server"
	"github.com/gosqlenv/gosqlenv/sqlenv/sqlitedb"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	server.LimitMemory() // memory comes back after heavy results (GOMEMLIMIT overrides)
	err := run(ctx, os.Args[1:], os.LookupEnv, os.Stderr, nil)
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "sqlenv-server:", err)
		os.Exit(1)
	}
}

// options are the command's settings.
type options struct {
	addr                   string
	data, questions, dbDir string
	split, difficulty      string
	stepBudget             int
	seed                   uint64
	maxSessions            int
	maxSessionsPerClient   int
	maxRunningQueries      int
	maxConnsPerClient      int
	bodyTimeout            time.Duration
	idleConnTimeout        time.Duration
	evictAfter             time.Duration
	authToken              string
	idleTimeout            time.Duration
	stepTimeout            time.Duration
	shutdownTimeout        time.Duration
	maxBody, maxMessage    int64
	allowOrigins           string
	allowedHosts           string
	trustedProxies         string
	logLevel, logFormat    string
}

// flagSet declares the flags and the environment variable of each.
func flagSet(o *options, stderr io.Writer) (*flag.FlagSet, map[string]string) {
	fs := flag.NewFlagSet("sqlenv-server", flag.ContinueOnError)
	fs.SetOutput(stderr)
	env := map[string]string{}
	def := func(name, variable string) string {
		env[name] = variable
		return " (env " + variable + ")"
	}
	fs.StringVar(&o.addr, "addr", "127.0.0.1:8000", "address to listen on (this machine only by default; :8000 or 0.0.0.0:8000 exposes it: set an auth token then)"+def("addr", "SQLENV_ADDR"))
	fs.StringVar(&o.authToken, "auth-token", "", "token every request must carry (Authorization: Bearer <token>, or as the Basic password of http://sqlenv:<token>@host:port; prefer the environment variable, which ps does not show)"+def("auth-token", "SQLENV_AUTH_TOKEN"))
	fs.StringVar(&o.data, "data", "", "data directory with databases/, questions_train.json and questions_eval.json (default: the bundled dataset)"+def("data", "SQLENV_DATA"))
	fs.StringVar(&o.questions, "questions", "", "a questions file (enriched records or raw Spider records); overrides --data"+def("questions", "SQLENV_QUESTIONS"))
	fs.StringVar(&o.dbDir, "db-dir", "", "database directory for --questions (<db-dir>/<db_id>/<db_id>.sqlite)"+def("db-dir", "SQLENV_DB_DIR"))
	fs.StringVar(&o.split, "split", "", "comma-separated splits to serve (train, eval; default all)"+def("split", "SQLENV_SPLIT"))
	fs.StringVar(&o.difficulty, "difficulty", "", "comma-separated difficulties to serve (easy, medium, hard; default all)"+def("difficulty", "SQLENV_DIFFICULTY"))
	fs.IntVar(&o.stepBudget, "step-budget", sqlenv.DefaultStepBudget, "steps an episode may take"+def("step-budget", "SQLENV_STEP_BUDGET"))
	fs.Uint64Var(&o.seed, "seed", 0, "base seed of the sessions' question draws"+def("seed", "SQLENV_SEED"))
	fs.IntVar(&o.maxSessions, "max-sessions", server.DefaultMaxSessions, "maximum concurrent sessions (WebSocket and HTTP)"+def("max-sessions", "SQLENV_MAX_SESSIONS"))
	fs.IntVar(&o.maxRunningQueries, "max-running-queries", 0, "maximum QUERY and SAMPLE steps running at once across sessions; others wait, their step time starting when they run (default: 2 × GOMAXPROCS, at least 4)"+def("max-running-queries", "SQLENV_MAX_RUNNING_QUERIES"))
	fs.IntVar(&o.maxSessionsPerClient, "max-sessions-per-client", 0, "maximum sessions of one client IP (default: max-sessions minus an eighth, kept for others)"+def("max-sessions-per-client", "SQLENV_MAX_SESSIONS_PER_CLIENT"))
	fs.IntVar(&o.maxConnsPerClient, "max-conns-per-client", 0, "maximum open connections of one client IP (default: 2 × sessions per client + 16)"+def("max-conns-per-client", "SQLENV_MAX_CONNS_PER_CLIENT"))
	fs.DurationVar(&o.bodyTimeout, "body-timeout", server.DefaultBodyTimeout, "time an HTTP request body may take to arrive"+def("body-timeout", "SQLENV_BODY_TIMEOUT"))
	fs.DurationVar(&o.idleConnTimeout, "idle-conn-timeout", server.DefaultIdleConnTimeout, "close keep-alive connections idle this long"+def("idle-conn-timeout", "SQLENV_IDLE_CONN_TIMEOUT"))
	fs.DurationVar(&o.evictAfter, "evict-after", server.DefaultEvictAfter, "idle time after which an HTTP session may be evicted to make room at capacity"+def("evict-after", "SQLENV_EVICT_AFTER"))
	fs.DurationVar(&o.idleTimeout, "idle-timeout", server.DefaultIdleTimeout, "close sessions idle this long (negative: never)"+def("idle-timeout", "SQLENV_IDLE_TIMEOUT"))
	fs.DurationVar(&o.stepTimeout, "step-timeout", server.DefaultStepTimeout, "time limit of a reset or step, and cap on timeout_s"+def("step-timeout", "SQLENV_STEP_TIMEOUT"))
	fs.DurationVar(&o.shutdownTimeout, "shutdown-timeout", server.DefaultShutdownTimeout, "time given to in-flight steps at shutdown"+def("shutdown-timeout", "SQLENV_SHUTDOWN_TIMEOUT"))
	fs.Int64Var(&o.maxBody, "max-body-bytes", server.DefaultMaxBodyBytes, "largest HTTP request body"+def("max-body-bytes", "SQLENV_MAX_BODY_BYTES"))
	fs.Int64Var(&o.maxMessage, "max-message-bytes", server.DefaultMaxMessageBytes, "largest WebSocket message"+def("max-message-bytes", "SQLENV_MAX_MESSAGE_BYTES"))
	fs.StringVar(&o.allowedHosts, "allowed-hosts", "", "comma-separated host names (patterns) clients may use in the Host header besides IP addresses and localhost; others are refused (DNS rebinding)"+def("allowed-hosts", "SQLENV_ALLOWED_HOSTS"))
	fs.StringVar(&o.trustedProxies, "trusted-proxies", "", "comma-separated reverse proxies (IPs or CIDR ranges) whose X-Forwarded-For names the client for per-client caps"+def("trusted-proxies", "SQLENV_TRUSTED_PROXIES"))
	fs.StringVar(&o.allowOrigins, "allow-origins", "", "comma-separated origin patterns whose browser pages may open /ws"+def("allow-origins", "SQLENV_ALLOW_ORIGINS"))
	fs.StringVar(&o.logLevel, "log-level", "info", "debug, info, warn or error"+def("log-level", "SQLENV_LOG_LEVEL"))
	fs.StringVar(&o.logFormat, "log-format", "text", "text or json"+def("log-format", "SQLENV_LOG_FORMAT"))
	return fs, env
}

// parse reads flags, then environment variables for the flags not given.
func parse(args []string, getenv func(string) (string, bool), stderr io.Writer) (options, error) {
	var o options
	fs, env := flagSet(&o, stderr)
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	var errs []error
	fs.VisitAll(func(f *flag.Flag) {
		if v, ok := getenv(env[f.Name]); ok && !given[f.Name] {
			if err := fs.Set(f.Name, v); err != nil {
				errs = append(errs, fmt.Errorf("%s=%q: %w", env[f.Name], v, err))
			}
		}
	})
	return o, errors.Join(errs...)
}

func logger(o options, w io.Writer) (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(o.logLevel)); err != nil {
		return nil, fmt.Errorf("log level %q: use debug, info, warn or error", o.logLevel)
	}
	ho := &slog.HandlerOptions{Level: level}
	switch o.logFormat {
	case "text":
		return slog.New(slog.NewTextHandler(w, ho)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, ho)), nil
	}
	return nil, fmt.Errorf("log format %q: use text or json", o.logFormat)
}

// loadQuestions returns the selected questions and their database directory.
func loadQuestions(ctx context.Context, o options) ([]dataset.QuestionRecord, string, error) {
	if o.questions != "" && o.dbDir == "" {
		return nil, "", errors.New("--questions needs --db-dir")
	}
	qs, dbDir, err := bundled.Source{Data: o.data, Questions: o.questions, DBDir: o.dbDir}.Load(ctx)
	if err != nil {
		return nil, "", err
	}
	qs, err = dataset.Filter{Difficulties: list(o.difficulty), Splits: list(o.split)}.Apply(qs)
	if err != nil {
		return nil, "", err
	}
	if len(qs) == 0 {
		return nil, "", fmt.Errorf("no questions left after filtering (difficulty %q, split %q)", o.difficulty, o.split)
	}
	return qs, dbDir, nil
}

// isLoopback reports whether addr is a loopback address (not a wildcard
// or a public one).
func isLoopback(addr net.Addr) bool {
	ta, ok := addr.(*net.TCPAddr)
	return ok && ta.IP.IsLoopback()
}

func list(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// run serves until ctx ends. ready, if not nil, gets the listening address.
func run(ctx context.Context, args []string, getenv func(string) (string, bool), stderr io.Writer, ready func(net.Addr)) error {
	o, err := parse(args, getenv, stderr)
	if err != nil {
		return err
	}
	log, err := logger(o, stderr)
	if err != nil {
		return err
	}
	qs, dbDir, err := loadQuestions(ctx, o)
	if err != nil {
		return err
	}
	dbs := sqlenv.OpenDatabases(dbDir, sqlitedb.Limits{})
	defer dbs.Close()
	srv, err := server.New(server.Config{
		Env:                     sqlenv.Config{Questions: qs, Databases: dbs, StepBudget: o.stepBudget, Seed: o.seed},
		MaxSessions:             o.maxSessions,
		EvictAfter:              o.evictAfter,
		MaxSessionsPerClient:    o.maxSessionsPerClient,
		MaxRunningQueries:       o.maxRunningQueries,
		MaxConnsPerClient:       o.maxConnsPerClient,
		BodyTimeout:             o.bodyTimeout,
		IdleConnTimeout:         o.idleConnTimeout,
		AuthToken:               o.authToken,
		IdleTimeout:             o.idleTimeout,
		MaxBodyBytes:            o.maxBody,
		MaxMessageBytes:         o.maxMessage,
		StepTimeout:             o.stepTimeout,
		ShutdownTimeout:         o.shutdownTimeout,
		WebSocketOriginPatterns: list(o.allowOrigins),
		AllowedHosts:            list(o.allowedHosts),
		TrustedProxies:          list(o.trustedProxies),
		Logger:                  log,
	})
	if err != nil {
		return err
	}
	l, err := net.Listen("tcp", o.addr)
	if err != nil {
		srv.Close()
		return err
	}
	log.Info("serving", "addr", l.Addr().String(), "questions", len(qs), "db_dir", dbDir,
		"step_budget", o.stepBudget, "max_sessions", o.maxSessions, "idle_timeout", o.idleTimeout,
		"auth", o.authToken != "")
	if o.authToken == "" && !isLoopback(l.Addr()) {
		log.Warn("listening beyond this machine without authentication: anyone who can reach "+l.Addr().String()+
			" can open sessions; set SQLENV_AUTH_TOKEN (or --auth-token)", "addr", l.Addr().String())
	}
	if ready != nil {
		ready(l.Addr())
	}
	return srv.Serve(ctx, l)
}
