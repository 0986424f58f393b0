package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/gosqlenv/gosqlenv/sqlenv"
	"github.com/gosqlenv/gosqlenv/sqlenv/internal/protocol"
)

// Options configures the clients. The zero value works.
type Options struct {
	// HTTPClient makes the requests and the WebSocket handshakes (default
	// http.DefaultClient).
	HTTPClient *http.Client
	// Header is sent with every request and handshake (authentication:
	// "Authorization: Bearer <token>"). Without it, an address with a
	// password (http://sqlenv:<token>@host:port) sends that as HTTP Basic
	// authentication, which the server also accepts; errors and Addr show
	// such an address with the password replaced by "xxxxx".
	Header http.Header
	// DialTimeout bounds Pool.NewEnv's connection (default 10 s).
	DialTimeout time.Duration
	// CallTimeout bounds State's round trip and Close's goodbye (default
	// 10 s); Reset and Step follow their context.
	CallTimeout time.Duration
	// MaxMessageBytes caps a server message (default 64 MiB).
	MaxMessageBytes int64
	// HTTP makes Pool hand out stateful HTTP clients instead of WebSocket
	// ones.
	HTTP bool
}

func (o *Options) withDefaults() Options {
	var c Options
	if o != nil {
		c = *o
	}
	if c.HTTPClient == nil {
		c.HTTPClient = http.DefaultClient
	}
	setDefault(&c.DialTimeout, 10*time.Second)
	setDefault(&c.CallTimeout, 10*time.Second)
	setDefault(&c.MaxMessageBytes, 64<<20)
	return c
}

// Redact hides the password of a server address, for messages and logs:
// url.URL.Redacted's form when the address parses, else the user
// information (between "://" and the last "@" before the path) replaced by
// "xxxxx".
func Redact(addr string) string {
	if u, err := url.Parse(addr); err == nil {
		return u.Redacted()
	}
	_, rest, ok := strings.Cut(addr, "://")
	if !ok {
		rest = addr
	}
	host, _, _ := strings.Cut(rest, "/")
	if at := strings.LastIndex(host, "@"); at >= 0 {
		return strings.Replace(addr, host[:at], "xxxxx", 1)
	}
	return addr
}

// baseURL turns an address ("host:port", "http://host:port",
// "ws://host:port/ws", with or without a path prefix) into the server's
// HTTP base URL.
func baseURL(addr string) (*url.URL, error) {
	if !strings.Contains(addr, "://") {
		addr = "http://" + addr
	}
	u, err := url.Parse(addr)
	if err != nil {
		return nil, fmt.Errorf("sqlenv client: address %q does not parse as a URL", Redact(addr))
	}
	switch u.Scheme {
	case "ws":
		u.Scheme = "http"
	case "wss":
		u.Scheme = "https"
	case "http", "https":
	default:
		return nil, fmt.Errorf("sqlenv client: address %q: scheme must be http, https, ws or wss", u.Redacted())
	}
	if u.Host == "" {
		return nil, fmt.Errorf("sqlenv client: address %q has no host", u.Redacted())
	}
	u.Path = strings.TrimSuffix(strings.TrimSuffix(u.Path, "/"), "/ws")
	u.RawQuery, u.Fragment = "", ""
	return u, nil
}

// Session is a remote environment over a WebSocket: one session, one
// episode at a time, like an in-process sqlenv.Environment. It implements
// sqlenv.Env and is safe for use by several goroutines (calls are
// serialised).
//
// Observations come back as the server's environment made them: reward and
// done inside, metadata (episode_id, question_id, database_name, correct,
// episode_stats as a sqlenv.EpisodeStats) restored. Differences from in
// process: an action whose type is not DESCRIBE, SAMPLE, QUERY or ANSWER is
// rejected by the server (an *Error with VALIDATION_ERROR, no step taken)
// instead of costing a step; and a Reset or Step whose context ends while
// waiting for the server closes the session (its state is unknown).
type Session struct {
	addr string
	opts Options
	conn *websocket.Conn

	episodeMirror // one call at a time; the episode as last seen
	closed        bool

	replies chan []byte   // read by the reader goroutine
	done    chan struct{} // closed when the reader stops
	readErr error         // why it stopped; read after done
}

// Dial opens a session on the server at addr.
func Dial(ctx context.Context, addr string, opts *Options) (*Session, error) {
	o := opts.withDefaults()
	u, err := baseURL(addr)
	if err != nil {
		return nil, err
	}
	u.Path += "/ws"
	u.Scheme = map[string]string{"http": "ws", "https": "wss"}[u.Scheme]
	conn, resp, err := websocket.Dial(ctx, u.String(), &websocket.DialOptions{HTTPClient: o.HTTPClient, HTTPHeader: o.Header})
	if err != nil {
		if resp != nil && resp.StatusCode != http.StatusSwitchingProtocols {
			if e := readErrorResponse(resp); e != nil {
				return nil, e
			}
		}
		return nil, fmt.Errorf("sqlenv client: dial %s: %w", u.Redacted(), err)
	}
	conn.SetReadLimit(o.MaxMessageBytes)
	c := &Session{addr: u.Redacted(), opts: o, conn: conn, replies: make(chan []byte, 1), done: make(chan struct{})}
	go c.read()
	// A full server accepts the upgrade, sends CAPACITY_REACHED and closes
	// (as OpenEnv's does): one state round trip finds out now, so that a
	// Pool can try another server.
	if _, err := c.call(ctx, protocol.Envelope{Type: "state"}); err != nil {
		c.conn.CloseNow()
		return nil, err
	}
	return c, nil
}

// read receives the server's messages; reading all the time lets the
// connection answer pings and close handshakes while the caller is away.
func (c *Session) read() {
	defer close(c.done)
	for {
		_, b, err := c.conn.Read(context.Background())
		if err != nil {
			c.readErr = err
			return
		}
		select {
		case c.replies <- b:
		default:
			c.readErr = errors.New("the server sent a message nobody asked for")
			c.conn.Close(websocket.StatusProtocolError, "unexpected message")
			return
		}
	}
}

// Addr is the WebSocket URL of the session.
func (c *Session) Addr() string { return c.addr }

// Done is closed when the connection has ended (closed by either side or
// lost); the session's calls then fail with sqlenv.ErrClosed.
func (c *Session) Done() <-chan struct{} { return c.done }

// call sends one message and waits for the reply.
func (c *Session) call(ctx context.Context, msg protocol.Envelope) (*wsReply, error) {
	if c.closed {
		return nil, sqlenv.ErrClosed
	}
	b, err := json.Marshal(msg)
	if err != nil {
		return nil, err
	}
	if err := c.conn.Write(ctx, websocket.MessageText, b); err != nil {
		return nil, c.refused(ctx, err)
	}
	select {
	case b := <-c.replies:
		return c.decode(b)
	case <-c.done:
		return nil, c.lost(ctx, c.readErr)
	case <-ctx.Done():
		// The reply may still come; the session's state is unknown.
		c.closed = true
		c.conn.CloseNow()
		<-c.done
		return nil, ctx.Err()
	}
}

// decode reads one server message: a reply, or the server's error.
func (c *Session) decode(b []byte) (*wsReply, error) {
	var r wsReply
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("sqlenv client: bad message from %s: %w", c.addr, err)
	}
	if r.Type == "error" {
		var m struct{ Data map[string]any }
		json.Unmarshal(b, &m) // again, for the fields beyond code and message
		return nil, protocol.ErrorFromJSON(m.Data, 0)
	}
	return &r, nil
}

// refused explains a write that failed: a server that refuses a session
// (CAPACITY_REACHED) sends its error and closes, and a write that comes
// after the close fails with nothing but "use of closed network
// connection". The read loop has the server's reason, so it is waited for
// (the connection is closed, so it ends at once) and its error message or
// close reason is returned instead.
func (c *Session) refused(ctx context.Context, writeErr error) error {
	c.closed = true
	c.conn.CloseNow()
	<-c.done
	select {
	case b := <-c.replies:
		if _, err := c.decode(b); err != nil {
			return err
		}
	default:
	}
	if _, ok := errors.AsType[websocket.CloseError](c.readErr); ok {
		return c.lost(ctx, c.readErr)
	}
	return c.lost(ctx, writeErr)
}

// lost explains a broken connection and marks the client closed.
func (c *Session) lost(ctx context.Context, err error) error {
	c.closed = true
	c.conn.CloseNow()
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if ce, ok := errors.AsType[websocket.CloseError](err); ok {
		// The server names its refusal (CAPACITY_REACHED, …) as the reason.
		if _, known := protocol.StatusOf[Code(ce.Reason)]; known {
			return &Error{Code: Code(ce.Reason), Message: "the server closed the connection: " + ce.Reason}
		}
		return fmt.Errorf("sqlenv client: %s closed the session (%v %s): %w", c.addr, ce.Code, ce.Reason, sqlenv.ErrClosed)
	}
	return fmt.Errorf("sqlenv client: connection to %s lost: %v: %w", c.addr, err, sqlenv.ErrClosed)
}

// wsReply is a server message as the client reads it: the fields of every
// message type in one struct, so that one pass decodes any of them.
type wsReply struct {
	Type string `json:"type"`
	Data struct {
		protocol.ResultWire                      // observation
		EpisodeID           *string              `json:"episode_id"` // state (with done)
		StepCount           int                  `json:"step_count"`
		QuestionID          string               `json:"question_id"`
		EpisodeStats        *sqlenv.EpisodeStats `json:"episode_stats"`
		Code                Code                 `json:"code"` // error
		Message             string               `json:"message"`
	} `json:"data"`
}

func (r *wsReply) observation() (sqlenv.Observation, error) {
	if r.Type != "observation" {
		return sqlenv.Observation{}, fmt.Errorf("sqlenv client: expected an observation, got a %q message", r.Type)
	}
	return r.Data.Decode()
}

func (r *wsReply) state() protocol.StateJSON {
	d := &r.Data
	return protocol.StateJSON{EpisodeID: d.EpisodeID, StepCount: d.StepCount, QuestionID: d.QuestionID, Done: d.Done, EpisodeStats: d.EpisodeStats}
}

// resetData is the reset message's data.
func resetData(opts sqlenv.ResetOptions) map[string]any {
	d := map[string]any{}
	if opts.Seed != nil {
		d["seed"] = *opts.Seed
	}
	if opts.EpisodeID != "" {
		d["episode_id"] = opts.EpisodeID
	}
	if opts.QuestionID != "" {
		d["question_id"] = opts.QuestionID
	}
	return d
}

// Reset starts an episode (a seed must be ≥ 0, as in OpenEnv).
func (c *Session) Reset(ctx context.Context, opts sqlenv.ResetOptions) (sqlenv.Observation, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r, err := c.call(ctx, protocol.Envelope{Type: "reset", Data: resetData(opts)})
	if err != nil {
		return sqlenv.Observation{}, err
	}
	return c.seen.record(r.observation())
}

// Step applies an action.
func (c *Session) Step(ctx context.Context, a sqlenv.Action) (sqlenv.Observation, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r, err := c.call(ctx, protocol.Envelope{Type: "step", Data: a})
	if err != nil {
		return sqlenv.Observation{}, err
	}
	return c.seen.record(r.observation())
}

// stateOf is the state an observation implies (what the server's State
// returns after it).
func stateOf(obs sqlenv.Observation) sqlenv.State {
	st := sqlenv.State{StepCount: obs.StepCount, Done: obs.Done}
	st.EpisodeID, _ = obs.Metadata[sqlenv.MetaEpisodeID].(string)
	st.QuestionID, _ = obs.Metadata[sqlenv.MetaQuestionID].(string)
	return st
}

// RemoteState asks the server for the session's state.
func (c *Session) RemoteState(ctx context.Context) (sqlenv.State, error) {
	st, err := c.remoteState(ctx)
	return st.State(), err
}

func (c *Session) remoteState(ctx context.Context) (protocol.StateJSON, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r, err := c.call(ctx, protocol.Envelope{Type: "state"})
	if err != nil {
		return protocol.StateJSON{}, err
	}
	if r.Type != "state" {
		return protocol.StateJSON{}, fmt.Errorf("sqlenv client: expected a state, got a %q message", r.Type)
	}
	return r.state(), nil
}

// Stats returns the reward components of the running (or last) episode, as
// sqlenv.Environment.Stats does: the training rollout reads them when it
// cuts an episode short. It asks the server (within CallTimeout); when that
// fails it returns those of the last final observation, or zero.
func (c *Session) Stats() sqlenv.EpisodeStats {
	ctx, cancel := context.WithTimeout(context.Background(), c.opts.CallTimeout)
	defer cancel()
	st, err := c.remoteState(ctx)
	return c.statsOr(st, err)
}

// episodeMirror is what both clients share: the lock that keeps one call
// at a time, and what they know of the episode from the observations
// received.
type episodeMirror struct {
	mu   sync.Mutex
	seen lastSeen
}

// State returns the episode's state as of the last observation (no round
// trip; RemoteState asks the server).
func (m *episodeMirror) State() sqlenv.State {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.seen.state
}

// statsOr returns the state's stats, else (err != nil, or a state without
// them) the last known ones.
func (m *episodeMirror) statsOr(st protocol.StateJSON, err error) sqlenv.EpisodeStats {
	if err == nil && st.EpisodeStats != nil {
		return *st.EpisodeStats
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.seen.stats
}

// lastSeen is what a client knows of its episode from the observations it
// received (both transports keep one).
type lastSeen struct {
	state sqlenv.State
	stats sqlenv.EpisodeStats // of the last final observation; zero after a reset
}

// record records obs (see observe) when err is nil, and returns both.
func (l *lastSeen) record(obs sqlenv.Observation, err error) (sqlenv.Observation, error) {
	if err == nil {
		l.observe(obs)
	}
	return obs, err
}

// observe records an observation: the state it implies and, for a final
// observation, its stats.
func (l *lastSeen) observe(obs sqlenv.Observation) {
	l.state = stateOf(obs)
	if st, ok := obs.Metadata[sqlenv.MetaStats].(sqlenv.EpisodeStats); ok {
		l.stats = st
	} else if obs.StepCount == 0 {
		l.stats = sqlenv.EpisodeStats{}
	}
}

// Close ends the session: it says goodbye ({"type": "close"}) and closes
// the connection, waiting for its goroutine to end. A session the server
// already closed closes without error.
func (c *Session) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.closed {
		c.closed = true
		ctx, cancel := context.WithTimeout(context.Background(), c.opts.CallTimeout)
		b, _ := json.Marshal(protocol.Envelope{Type: "close"})
		if c.conn.Write(ctx, websocket.MessageText, b) == nil {
			c.conn.Close(websocket.StatusNormalClosure, "")
		}
		cancel()
		c.conn.CloseNow()
	}
	<-c.done
	return nil
}

// readErrorResponse reads a protocol error from an HTTP error response.
func readErrorResponse(resp *http.Response) *Error {
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	var m map[string]any
	if json.Unmarshal(b, &m) != nil {
		m = map[string]any{"message": strings.TrimSpace(string(b))}
		if len(b) == 0 {
			m["message"] = resp.Status
		}
	}
	return protocol.ErrorFromJSON(m, resp.StatusCode)
}

// Pool spreads sessions over several servers: each NewEnv or Open dials the
// next address in turn (round robin), trying the others when one is down
// or full. It holds no connections itself.
type Pool struct {
	addrs []string
	opts  Options
	mu    sync.Mutex
	next  int
}

// NewPool returns a pool over the given server addresses.
func NewPool(addrs []string, opts *Options) (*Pool, error) {
	if len(addrs) == 0 {
		return nil, errors.New("sqlenv client: no server addresses")
	}
	for _, a := range addrs {
		if _, err := baseURL(a); err != nil {
			return nil, err
		}
	}
	return &Pool{addrs: append([]string(nil), addrs...), opts: opts.withDefaults()}, nil
}

// Addrs returns the pool's server addresses.
func (p *Pool) Addrs() []string { return append([]string(nil), p.addrs...) }

// Open opens a session on the next server: a *Session, or an *HTTPSession
// when Options.HTTP is set.
func (p *Pool) Open(ctx context.Context) (sqlenv.Env, error) {
	p.mu.Lock()
	start := p.next
	p.next = (p.next + 1) % len(p.addrs)
	p.mu.Unlock()
	var errs []error
	for i := range p.addrs {
		addr := p.addrs[(start+i)%len(p.addrs)]
		var env sqlenv.Env
		var err error
		if p.opts.HTTP {
			var hc *HTTPSession
			if hc, err = NewHTTPSession(addr, &p.opts); err == nil {
				err = hc.Health(ctx)
			}
			env = hc
		} else {
			env, err = Dial(ctx, addr, &p.opts)
		}
		if err == nil {
			return env, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	return nil, fmt.Errorf("sqlenv client: no server could open a session: %w", errors.Join(errs...))
}

// NewEnv opens a session within DialTimeout; its signature fits
// training.NewRoller and other code that makes environments on demand.
func (p *Pool) NewEnv() (sqlenv.Env, error) {
	ctx, cancel := context.WithTimeout(context.Background(), p.opts.DialTimeout)
	defer cancel()
	return p.Open(ctx)
}
