package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/gosqlenv/gosqlenv/sqlenv"
	"github.com/gosqlenv/gosqlenv/sqlenv/internal/protocol"
)

// HTTPSession is a remote environment over the stateful HTTP extension: the
// first Reset opens a session, later Resets reuse it, Step and State name it
// in the X-Session-Id header, and Close deletes it. It implements
// sqlenv.Env with the same observations and differences as Session; a
// Step's context deadline is sent as timeout_s. Prefer Session (one
// WebSocket per session) for throughput; HTTPSession passes proxies that
// refuse WebSockets.
type HTTPSession struct {
	base *url.URL
	opts Options

	episodeMirror // one call at a time; the episode as last seen
	session       string
	closed        bool
}

// NewHTTPSession returns a client of the server at addr. It does not
// connect until the first call.
func NewHTTPSession(addr string, opts *Options) (*HTTPSession, error) {
	u, err := baseURL(addr)
	if err != nil {
		return nil, err
	}
	return &HTTPSession{base: u, opts: opts.withDefaults()}, nil
}

// SessionID is the server's id of the session ("" before the first Reset).
func (c *HTTPSession) SessionID() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.session
}

// do sends a request and decodes a 2xx JSON answer into out (if not nil).
func (c *HTTPSession) do(ctx context.Context, method, path string, body any, out any) (http.Header, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	}
	u := *c.base
	u.Path += path
	req, err := http.NewRequestWithContext(ctx, method, u.String(), rd)
	if err != nil {
		return nil, err
	}
	for k, v := range c.opts.Header {
		req.Header[k] = v
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.session != "" {
		req.Header.Set(protocol.SessionHeader, c.session)
	}
	resp, err := c.opts.HTTPClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("sqlenv client: %s %s: %w", method, u.Redacted(), err)
	}
	if resp.StatusCode/100 != 2 {
		return nil, readErrorResponse(resp)
	}
	defer resp.Body.Close()
	if out != nil {
		if err := json.NewDecoder(io.LimitReader(resp.Body, c.opts.MaxMessageBytes)).Decode(out); err != nil {
			return nil, fmt.Errorf("sqlenv client: %s %s: bad response: %w", method, u.Redacted(), err)
		}
	}
	io.Copy(io.Discard, resp.Body) // let the connection be reused
	return resp.Header, nil
}

// Health checks that the server answers /health.
func (c *HTTPSession) Health(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var h struct{ Status string }
	if _, err := c.do(ctx, http.MethodGet, "/health", nil, &h); err != nil {
		return err
	}
	if h.Status != "healthy" {
		return fmt.Errorf("sqlenv client: %s is %q", c.base.Redacted(), h.Status)
	}
	return nil
}

// Reset starts an episode, in a new session the first time and after the
// server expired the previous one.
func (c *HTTPSession) Reset(ctx context.Context, opts sqlenv.ResetOptions) (sqlenv.Observation, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return sqlenv.Observation{}, sqlenv.ErrClosed
	}
	var res protocol.ResultWire
	hdr, err := c.do(ctx, http.MethodPost, "/reset", resetData(opts), &res)
	if e, ok := errors.AsType[*Error](err); ok && e.Code == CodeSession && c.session != "" {
		c.session = "" // expired: open a new one
		hdr, err = c.do(ctx, http.MethodPost, "/reset", resetData(opts), &res)
	}
	if err != nil {
		return sqlenv.Observation{}, err
	}
	c.session = hdr.Get(protocol.SessionHeader)
	return c.seen.record(res.Decode())
}

// Step applies an action.
func (c *HTTPSession) Step(ctx context.Context, a sqlenv.Action) (sqlenv.Observation, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.closed:
		return sqlenv.Observation{}, sqlenv.ErrClosed
	case c.session == "":
		return sqlenv.Observation{}, sqlenv.ErrNoEpisode
	}
	body := map[string]any{"action": a}
	if d, ok := ctx.Deadline(); ok {
		body["timeout_s"] = max(time.Until(d).Seconds(), 0.001)
	}
	var res protocol.ResultWire
	if _, err := c.do(ctx, http.MethodPost, "/step", body, &res); err != nil {
		return sqlenv.Observation{}, err
	}
	return c.seen.record(res.Decode())
}

// RemoteState asks the server for the session's state (a fresh
// environment's before the first Reset).
func (c *HTTPSession) RemoteState(ctx context.Context) (sqlenv.State, error) {
	st, err := c.remoteState(ctx)
	return st.State(), err
}

func (c *HTTPSession) remoteState(ctx context.Context) (protocol.StateJSON, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var st protocol.StateJSON
	_, err := c.do(ctx, http.MethodGet, "/state", nil, &st)
	return st, err
}

// Stats returns the reward components of the running (or last) episode;
// see Session.Stats.
func (c *HTTPSession) Stats() sqlenv.EpisodeStats {
	ctx, cancel := context.WithTimeout(context.Background(), c.opts.CallTimeout)
	defer cancel()
	if c.SessionID() == "" {
		return sqlenv.EpisodeStats{}
	}
	st, err := c.remoteState(ctx)
	return c.statsOr(st, err)
}

// Close deletes the session on the server.
func (c *HTTPSession) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	c.closed = true
	if c.session == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.opts.CallTimeout)
	defer cancel()
	id := c.session
	c.session = ""
	_, err := c.do(ctx, http.MethodDelete, "/sessions/"+url.PathEscape(id), nil, nil)
	if e, ok := errors.AsType[*Error](err); ok && e.Code == CodeSession {
		return nil // already expired
	}
	return err
}
