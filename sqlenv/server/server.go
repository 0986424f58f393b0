package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gosqlenv/gosqlenv/sqlenv"
)

// Config configures a Server. Only Env (questions and databases) or NewEnv
// is required.
type Config struct {
	// Env is the configuration of every session's environment. Each session
	// gets its own Environment with Seed = Env.Seed + the session's ordinal,
	// so sessions that reset without a seed draw different questions. When
	// Env.Databases is nil and Env.DBDir is set, the server opens the
	// databases once for all sessions (and closes them on Close).
	Env sqlenv.Config
	// NewEnv, when set, makes the sessions' environments instead of
	// sqlenv.New(Env); Env.Questions is then used only to validate
	// question_id and to describe the environment in /metadata.
	NewEnv func() (sqlenv.Env, error)

	// MaxSessions caps the open sessions, WebSocket and stateful HTTP
	// together (default 512). Beyond it a WebSocket upgrade or a new HTTP
	// session gets CAPACITY_REACHED (HTTP 503), except that an HTTP session
	// idle for EvictAfter or longer is evicted, least recently used first,
	// to make room: a session in the middle of an episode is never taken
	// from its client by another.
	MaxSessions int
	// MaxSessionsPerClient caps the sessions of one client IP address
	// (default MaxSessions minus an eighth of it, at least 1, kept for the
	// others: one client's idle WebSockets cannot lock everyone else out).
	MaxSessionsPerClient int
	// MaxConnsPerClient caps the open TCP connections of one client IP
	// address (default 2 × MaxSessionsPerClient + 16); Serve closes
	// connections beyond it at once.
	MaxConnsPerClient int
	// BodyTimeout is the time an HTTP request body may take to arrive, and
	// a response to be taken by the client (default 30 s); IdleConnTimeout
	// closes keep-alive connections idle that long (default 60 s).
	BodyTimeout, IdleConnTimeout time.Duration
	// EvictAfter is the idle time after which an HTTP session may be
	// evicted to make room at capacity (default 1 minute; it should be
	// longer than an agent takes to think between two steps).
	EvictAfter time.Duration
	// AuthToken, when set, must come with every request as "Authorization:
	// Bearer <token>", or as the password of HTTP Basic authentication
	// (what clients without a header option send for a URL like
	// http://sqlenv:<token>@host:port), on HTTP requests and the WebSocket
	// handshake; GET and HEAD /health are exempt, for health checks.
	// 401 UNAUTHORIZED otherwise.
	AuthToken string
	// IdleTimeout closes sessions without a request for that long (default
	// 5 minutes; negative: never).
	IdleTimeout time.Duration
	// MaxBodyBytes caps HTTP request bodies (default 1 MiB): 413 beyond.
	MaxBodyBytes int64
	// MaxMessageBytes caps WebSocket messages (default 1 MiB). A larger
	// message is answered with REQUEST_TOO_LARGE and the session goes on;
	// one larger than 16 × MaxMessageBytes closes the connection (1009).
	MaxMessageBytes int64
	// StepTimeout is the time a reset or step may take, and the cap on a
	// request's timeout_s (default 30 s). A step that runs out of time is
	// cancelled, changes nothing, and fails with TIMEOUT (504).
	StepTimeout time.Duration
	// ShutdownTimeout bounds Serve's graceful shutdown (default 30 s).
	ShutdownTimeout time.Duration
	// MaxRunningQueries caps the QUERY and SAMPLE steps that run at once
	// across sessions (default twice GOMAXPROCS, at least 4); others wait their
	// turn, and their step time starts when they run, so that waiting
	// changes no outcome. A running query holds its result in Go memory —
	// up to sqlitedb.Limits.MaxBytes (8 MiB) of values, about 2.5 times
	// that as Go values — so this bounds the server's result memory
	// (BENCHMARKS.md, "sqlenv/server — memory"); more queries than cores
	// would not run faster anyway.
	MaxRunningQueries int
	// WebSocketOriginPatterns lists the origins (besides the server's own
	// host) whose browser pages may open /ws or send state-changing HTTP
	// requests (POST, DELETE: 403 FORBIDDEN for other origins); patterns
	// match the origin's host as in websocket.AcceptOptions.
	WebSocketOriginPatterns []string
	// AllowedHosts lists the host names (patterns as in path.Match, "*"
	// for any) that requests may name in their Host header besides IP
	// addresses, localhost and *.localhost; others get 403 FORBIDDEN, so that
	// a web page cannot drive a loopback server through a DNS-rebinding
	// name. Set it to the names clients use to reach the server.
	AllowedHosts []string
	// TrustedProxies lists the reverse proxies (IP addresses or CIDR
	// ranges) whose X-Forwarded-For names the client: behind them, the
	// per-client caps count each client, not the proxy, and the proxies'
	// own connections are not capped per client. Requests from other peers
	// are counted by their own address, whatever they send.
	TrustedProxies []string
	// Logger receives structured logs (default slog.Default()).
	Logger *slog.Logger
}

// Defaults of Config.
const (
	DefaultMaxSessions     = 512
	DefaultIdleTimeout     = 5 * time.Minute
	DefaultEvictAfter      = time.Minute
	DefaultBodyTimeout     = 30 * time.Second
	DefaultIdleConnTimeout = time.Minute
	DefaultMaxBodyBytes    = 1 << 20
	DefaultMaxMessageBytes = 1 << 20
	DefaultStepTimeout     = 30 * time.Second
	DefaultShutdownTimeout = 30 * time.Second
)

// Server serves sqlenv over OpenEnv's HTTP and WebSocket protocol. It is an
// http.Handler; Serve runs it on a listener with graceful shutdown.
type Server struct {
	cfg         Config
	log         *slog.Logger
	handler     http.Handler
	reg         *registry
	metrics     *metrics
	questionIDs map[string]bool // nil: any question id goes to the environment
	proxies     []*net.IPNet    // Config.TrustedProxies
	dbs         *sqlenv.Databases
	ownsDBs     bool
	ordinal     atomic.Uint64 // sessions made, for their seeds
	questions   questionList  // GET /questions, computed once

	// baseCtx outlives requests: WebSocket steps run under it, so that a
	// graceful shutdown lets them finish; Close cancels it.
	queries chan struct{} // a slot per running QUERY or SAMPLE step (MaxRunningQueries)

	baseCtx context.Context
	cancel  context.CancelFunc
	wsWG    sync.WaitGroup // WebSocket handlers and their closers
	stop    chan struct{}  // stops the janitor
	janitor sync.WaitGroup
	once    sync.Once
}

// New validates cfg and returns a server. Call Close when done with it.
func New(cfg Config) (*Server, error) {
	if cfg.NewEnv == nil && len(cfg.Env.Questions) == 0 {
		return nil, errors.New("sqlenv server: no questions: set Config.Env.Questions (or Config.NewEnv)")
	}
	if cfg.NewEnv == nil && cfg.Env.Databases == nil && cfg.Env.DBDir == "" {
		return nil, errors.New("sqlenv server: no databases: set Config.Env.Databases or Config.Env.DBDir")
	}
	if cfg.MaxSessions < 0 || cfg.EvictAfter < 0 || cfg.MaxSessionsPerClient < 0 || cfg.MaxConnsPerClient < 0 || cfg.MaxBodyBytes < 0 || cfg.MaxMessageBytes < 0 || cfg.StepTimeout < 0 || cfg.ShutdownTimeout < 0 || cfg.MaxRunningQueries < 0 {
		return nil, errors.New("sqlenv server: negative limit in Config")
	}
	setDefault(&cfg.MaxSessions, DefaultMaxSessions)
	setDefault(&cfg.IdleTimeout, DefaultIdleTimeout)
	setDefault(&cfg.EvictAfter, DefaultEvictAfter)
	setDefault(&cfg.MaxSessionsPerClient, max(1, cfg.MaxSessions-max(1, cfg.MaxSessions/8)))
	setDefault(&cfg.MaxConnsPerClient, 2*cfg.MaxSessionsPerClient+16)
	setDefault(&cfg.BodyTimeout, DefaultBodyTimeout)
	setDefault(&cfg.IdleConnTimeout, DefaultIdleConnTimeout)
	setDefault(&cfg.MaxBodyBytes, DefaultMaxBodyBytes)
	setDefault(&cfg.MaxMessageBytes, DefaultMaxMessageBytes)
	setDefault(&cfg.StepTimeout, DefaultStepTimeout)
	setDefault(&cfg.ShutdownTimeout, DefaultShutdownTimeout)
	setDefault(&cfg.MaxRunningQueries, max(4, 2*runtime.GOMAXPROCS(0)))
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	var proxies []*net.IPNet
	for _, p := range cfg.TrustedProxies {
		if !strings.Contains(p, "/") {
			if ip := net.ParseIP(p); ip != nil && ip.To4() != nil {
				p += "/32"
			} else {
				p += "/128"
			}
		}
		_, n, err := net.ParseCIDR(p)
		if err != nil {
			return nil, fmt.Errorf("sqlenv server: trusted proxy %q is not an IP address or CIDR range", p)
		}
		proxies = append(proxies, n)
	}
	s := &Server{cfg: cfg, log: cfg.Logger, reg: newRegistry(cfg.MaxSessions, cfg.MaxSessionsPerClient, cfg.EvictAfter), stop: make(chan struct{}), proxies: proxies}
	s.metrics = newMetrics(s.reg.counts)
	if len(cfg.Env.Questions) > 0 {
		s.questionIDs = make(map[string]bool, len(cfg.Env.Questions))
		for _, q := range cfg.Env.Questions {
			s.questionIDs[q.QuestionID] = true
		}
	}
	if cfg.NewEnv == nil {
		// Fail now, not at the first session, on a bad configuration.
		probe := cfg.Env
		if probe.Databases == nil {
			probe.Databases = sqlenv.OpenDatabases(cfg.Env.DBDir, cfg.Env.Limits)
			s.dbs, s.ownsDBs = probe.Databases, true
			s.cfg.Env.Databases = probe.Databases
		}
		e, err := sqlenv.New(probe)
		if err != nil {
			s.closeDBs()
			return nil, fmt.Errorf("sqlenv server: %w", err)
		}
		e.Close()
	}
	s.baseCtx, s.cancel = context.WithCancel(context.Background())
	s.queries = make(chan struct{}, cfg.MaxRunningQueries)
	s.handler = s.routes()
	if cfg.IdleTimeout > 0 {
		s.janitor.Add(1)
		go s.expireLoop()
	}
	return s, nil
}

func setDefault[T int | int64 | time.Duration](v *T, def T) {
	if *v == 0 {
		*v = def
	}
}

func (s *Server) closeDBs() {
	if s.ownsDBs {
		s.dbs.Close()
	}
}

// ServeHTTP serves the protocol.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// shutdownGrace is how long requests whose steps were cancelled at the end
// of ShutdownTimeout get to write their answer.
const shutdownGrace = 500 * time.Millisecond

// Serve accepts connections on l until ctx ends, then shuts down
// gracefully: it stops accepting, lets in-flight requests and WebSocket
// messages finish (each connection closes after its current message, with
// status 1001 "going away"), closes every session, and returns nil. After
// Config.ShutdownTimeout it closes what is left. Serve calls Close.
func (s *Server) Serve(ctx context.Context, l net.Listener) error {
	hs := &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       s.cfg.IdleConnTimeout,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	errc := make(chan error, 1)
	l = newClientLimit(l, s.cfg.MaxConnsPerClient, s.log, s.trusted)
	go func() { errc <- hs.Serve(l) }()
	select {
	case err := <-errc:
		s.Close()
		return err
	case <-ctx.Done():
	}
	s.log.Info("shutting down", "timeout", s.cfg.ShutdownTimeout)
	sctx, cancel := context.WithTimeout(context.Background(), s.cfg.ShutdownTimeout)
	defer cancel()
	var wg sync.WaitGroup
	var httpErr, wsErr error
	wg.Go(func() { httpErr = hs.Shutdown(sctx) })
	wg.Go(func() { wsErr = s.Shutdown(sctx) })
	wg.Wait()
	if httpErr != nil {
		// Out of time: cancel the steps still running, so that their
		// requests are answered (SHUTTING_DOWN) rather than cut, and give
		// them a moment to write that answer.
		s.log.Warn("shutdown timeout reached: cancelling the steps still running", "timeout", s.cfg.ShutdownTimeout)
		s.cancel()
		gctx, gcancel := context.WithTimeout(context.Background(), shutdownGrace)
		if hs.Shutdown(gctx) == nil {
			httpErr = nil
		}
		gcancel()
	}
	<-errc // http.ErrServerClosed
	s.Close()
	if err := errors.Join(httpErr, wsErr); err != nil {
		hs.Close()
		return fmt.Errorf("sqlenv server: shutdown: %w", err)
	}
	s.log.Info("shut down")
	return nil
}

// Shutdown ends the WebSocket sessions gracefully: no new session opens,
// each connection closes after answering the message it is processing
// (idle ones at once), and Shutdown waits for them until ctx ends. It does
// not stop the HTTP listener (http.Server.Shutdown does) nor close HTTP
// sessions (Close does, once in-flight requests are done).
func (s *Server) Shutdown(ctx context.Context) error {
	for _, sess := range s.reg.startClosing() {
		if sess.ws != nil {
			sess.ws.requestClose(statusGoingAway, "server shutting down", false)
		}
	}
	done := make(chan struct{})
	go func() { s.wsWG.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close stops the server at once: it cancels running steps, closes every
// connection and session, and the databases it opened. It waits for the
// WebSocket handlers to return.
func (s *Server) Close() error {
	s.once.Do(func() {
		close(s.stop)
		s.janitor.Wait()
		s.cancel()
		for _, sess := range s.reg.takeAll() {
			if sess.ws != nil {
				sess.ws.closeNow()
			} else {
				s.closeSession(sess, "server closed")
			}
		}
		s.wsWG.Wait()
		s.closeDBs()
	})
	return nil
}

// newEnv makes the environment of a new session.
func (s *Server) newEnv() (sqlenv.Env, error) {
	if s.cfg.NewEnv != nil {
		return s.cfg.NewEnv()
	}
	cfg := s.cfg.Env
	cfg.Seed += s.ordinal.Add(1)
	return sqlenv.New(cfg)
}

// openSession makes a session, held by inUse requests. A WebSocket session
// comes with its wsConn (not yet connected) and counts in wsWG.
func (s *Server) openSession(transport, client string, inUse int) (*session, *Error) {
	evicted, e := s.reg.reserve(client)
	if evicted != nil {
		s.metrics.evicted.Add(1)
		s.closeSession(evicted, "evicted to make room at capacity")
	}
	if e != nil {
		return nil, e
	}
	env, err := s.newEnv()
	if err != nil {
		s.reg.unreserve(client)
		s.log.Error("cannot make an environment", "err", err)
		return nil, errorf(CodeFactory, "cannot make an environment: %v", err)
	}
	sess := &session{id: newSessionID(), transport: transport, client: client, env: env}
	sess.touch(time.Now())
	var wg *sync.WaitGroup
	if transport == transportWS {
		sess.ws, wg = &wsConn{}, &s.wsWG
	}
	if !s.reg.add(sess, inUse, wg) {
		env.Close()
		return nil, errorf(CodeShuttingDown, "the server is shutting down")
	}
	s.metrics.sessionOpened(transport)
	s.log.Info("session opened", "session", sess.tag(), "transport", transport)
	return sess, nil
}

// closeSession closes the environment of a session already taken out of
// the registry.
func (s *Server) closeSession(sess *session, why string) {
	if err := sess.env.Close(); err != nil {
		s.log.Warn("closing a session's environment", "session", sess.tag(), "err", err)
	}
	s.log.Info("session closed", "session", sess.tag(), "transport", sess.transport, "reason", why)
}

// expireLoop closes idle sessions until Close.
func (s *Server) expireLoop() {
	defer s.janitor.Done()
	every := min(max(s.cfg.IdleTimeout/4, 10*time.Millisecond), 30*time.Second)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case now := <-t.C:
			expired, idleWS := s.reg.idle(now.Add(-s.cfg.IdleTimeout))
			for _, sess := range expired {
				s.metrics.expired.Add(1)
				s.closeSession(sess, "idle timeout")
			}
			for _, sess := range idleWS {
				if sess.ws.requestClose(statusPolicyViolation, "idle timeout", true) {
					s.metrics.expired.Add(1)
				}
			}
		}
	}
}

// checkQuestion rejects a question id the server does not serve.
func (s *Server) checkQuestion(opts sqlenv.ResetOptions) *Error {
	if opts.QuestionID != "" && s.questionIDs != nil && !s.questionIDs[opts.QuestionID] {
		id, _ := json.Marshal(opts.QuestionID)
		return invalid("value_error", []any{"body", "question_id"}, id, "unknown question_id %q", truncate(opts.QuestionID, maxQuoted))
	}
	return nil
}

// reset starts an episode in sess.
func (s *Server) reset(ctx context.Context, sess *session, opts sqlenv.ResetOptions) (sqlenv.Observation, *Error) {
	if e := s.checkQuestion(opts); e != nil {
		return sqlenv.Observation{}, e
	}
	ctx, cancel := s.stepContext(ctx, s.cfg.StepTimeout)
	defer cancel()
	sess.mu.Lock()
	defer sess.mu.Unlock()
	obs, err := sess.env.Reset(ctx, opts)
	if err != nil {
		return obs, s.envError(ctx, err)
	}
	s.metrics.resets.Add(1)
	return obs, nil
}

// step applies a validated action in sess, within timeout (0 or beyond
// StepTimeout: StepTimeout).
func (s *Server) step(ctx context.Context, sess *session, a sqlenv.Action, timeout time.Duration) (sqlenv.Observation, *Error) {
	if timeout <= 0 || timeout > s.cfg.StepTimeout {
		timeout = s.cfg.StepTimeout
	}
	if a.ActionType == sqlenv.Query || a.ActionType == sqlenv.Sample {
		// Wait for a query slot first (the client's patience and the
		// server's shutdown bound the wait); the step's time starts after.
		select {
		case s.queries <- struct{}{}:
			defer func() { <-s.queries }()
		case <-ctx.Done():
			return sqlenv.Observation{}, s.envError(ctx, ctx.Err())
		case <-s.baseCtx.Done():
			return sqlenv.Observation{}, errorf(CodeShuttingDown, "the server is shutting down: the step did not run")
		}
	}
	ctx, cancel := s.stepContext(ctx, timeout)
	defer cancel()
	sess.mu.Lock()
	defer sess.mu.Unlock()
	start := time.Now()
	obs, err := sess.env.Step(ctx, a)
	if err != nil {
		return obs, s.envError(ctx, err)
	}
	s.metrics.step(a.ActionType, time.Since(start))
	return obs, nil
}

// stepContext bounds a reset or step: its timeout, the caller's context,
// and the server's shutdown (when the shutdown timeout runs out, steps still
// running are cancelled so that they answer SHUTTING_DOWN before their
// connections close).
func (s *Server) stepContext(ctx context.Context, timeout time.Duration) (context.Context, context.CancelFunc) {
	ctx, cancelTimeout := context.WithTimeoutCause(ctx, timeout, errStepTimeout)
	ctx, cancel := context.WithCancelCause(ctx)
	stop := context.AfterFunc(s.baseCtx, func() { cancel(errShutdown) })
	return ctx, func() { stop(); cancel(nil); cancelTimeout() }
}

var errShutdown = errors.New("server shutting down")

// envError classifies an environment error, telling our timeout from the
// caller's cancellation (a client that went away mid-step) and from the
// server's shutdown.
func (s *Server) envError(ctx context.Context, err error) *Error {
	if errors.Is(context.Cause(ctx), errShutdown) {
		return errorf(CodeShuttingDown, "the server is shutting down: the step was cancelled and changed nothing")
	}
	if errors.Is(context.Cause(ctx), errStepTimeout) && errors.Is(err, context.DeadlineExceeded) {
		err = errStepTimeout
	} else if errors.Is(err, context.Canceled) && ctx.Err() != nil {
		return errorf(CodeClientClosed, "the client went away during the step; it was cancelled and changed nothing")
	}
	e := stepError(err)
	if e.Code == CodeExecution {
		s.log.Warn("environment error", "err", err)
	}
	return e
}

// DefaultMemoryLimit is the Go runtime's soft memory limit that LimitMemory
// sets: results of up to 8 MiB each are garbage once sent, and without a
// limit the runtime collects and returns them only when the heap doubles or
// every two minutes, so a server's resident memory stays at its peak long
// after the load. SQLite's own memory (at most Limits.HeapLimit per running
// query, accounted separately) is not counted in it.
const DefaultMemoryLimit = 96 << 20

// LimitMemory sets the Go runtime's soft memory limit to DefaultMemoryLimit,
// unless the GOMEMLIMIT environment variable sets one, and returns the limit
// in effect. It is process-wide: sqlenv-server calls it; a program that
// embeds a Server decides for itself.
func LimitMemory() int64 {
	if os.Getenv("GOMEMLIMIT") != "" {
		return debug.SetMemoryLimit(-1)
	}
	debug.SetMemoryLimit(DefaultMemoryLimit)
	return DefaultMemoryLimit
}
