package server

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/gosqlenv/gosqlenv/sqlenv"
)

const (
	statusGoingAway       = websocket.StatusGoingAway
	statusPolicyViolation = websocket.StatusPolicyViolation
	// wsWriteTimeout bounds the write of one reply.
	wsWriteTimeout = 10 * time.Second
)

// wsConn is a WebSocket session's connection and the state that lets other
// goroutines (shutdown, idle expiry) close it between messages: a close
// requested while a message is being processed happens after its reply.
type wsConn struct {
	mu         sync.Mutex
	conn       *websocket.Conn // nil until the upgrade succeeds
	busy       bool            // a message is being processed
	closing    bool
	code       websocket.StatusCode
	reason     string
	closerDone chan struct{} // set when a goroutine runs conn.Close
}

// requestClose closes the connection now if it is idle, else after the
// reply to the current message (or not at all when onlyIdle is set). It
// reports whether it started closing the connection.
func (c *wsConn) requestClose(code websocket.StatusCode, reason string, onlyIdle bool) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closing || (onlyIdle && c.busy) {
		return false
	}
	c.closing, c.code, c.reason = true, code, reason
	if !c.busy && c.conn != nil {
		// The handler is waiting for a message: Close makes that read
		// return once the close handshake is done.
		done := make(chan struct{})
		c.closerDone = done
		conn := c.conn
		go func() {
			defer close(done)
			conn.Close(code, reason)
		}()
	}
	return true
}

// closeNow drops the connection without a handshake (Server.Close).
func (c *wsConn) closeNow() {
	c.mu.Lock()
	conn := c.conn
	c.closing = true
	c.mu.Unlock()
	if conn != nil {
		conn.CloseNow()
	}
}

// connect records the upgraded connection; false if a close was requested
// meanwhile.
func (c *wsConn) connect(conn *websocket.Conn) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.conn = conn
	return !c.closing
}

// begin marks a message as being processed; false when closing.
func (c *wsConn) begin() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closing {
		return false
	}
	c.busy = true
	return true
}

// end marks the message done; true when a close was requested meanwhile.
func (c *wsConn) end() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.busy = false
	return c.closing
}

// finish closes the connection with code and reason, or with the requested
// ones, or waits for the closer already running.
func (c *wsConn) finish(code websocket.StatusCode, reason string) {
	c.mu.Lock()
	if d := c.closerDone; d != nil {
		c.mu.Unlock()
		<-d
		return
	}
	if c.closing && c.code != 0 {
		code, reason = c.code, c.reason
	}
	c.closing = true
	c.mu.Unlock()
	c.conn.Close(code, reason)
}

// wsDialect is what a WebSocket endpoint speaks: /ws OpenEnv's typed
// messages, /mcp bare JSON-RPC.
type wsDialect struct {
	// handle answers one message (nil: no answer); stop ends the session.
	handle func(ctx context.Context, sess *session, data []byte) (reply any, stop bool)
	// failure is the message that reports e.
	failure func(e *Error) any
	// start, when set, prepares a new session before its first message.
	start func(ctx context.Context, sess *session) *Error
}

// handleWS serves GET /ws: OpenEnv's session protocol.
func (s *Server) handleWS(w http.ResponseWriter, r *http.Request) {
	s.serveWS(w, r, wsDialect{
		handle: func(ctx context.Context, sess *session, data []byte) (any, bool) {
			reply, stop := s.handleMessage(ctx, sess, data)
			if reply == nil {
				return nil, stop
			}
			return reply, stop
		},
		failure: func(e *Error) any { return s.wsError(e) },
	})
}

// handleMCPWS serves GET /mcp as OpenEnv's server does: a WebSocket whose
// messages are JSON-RPC requests and whose answers are JSON-RPC responses
// (notifications get none), the connection being one session. Its episode
// starts at once (a random question; sqlenv/reset chooses another), so that
// tools/call works without a reset, as MCP clients expect. A GET without
// the upgrade gets 405 (Allow: POST), as MCP's Streamable HTTP transport
// says of a server without an event stream.
func (s *Server) handleMCPWS(w http.ResponseWriter, r *http.Request) {
	if !headerHas(r.Header, "Upgrade", "websocket") {
		w.Header().Set("Allow", http.MethodPost)
		s.writeJSON(w, http.StatusMethodNotAllowed, map[string]string{"detail": "Method Not Allowed"})
		return
	}
	s.serveWS(w, r, wsDialect{
		handle: func(ctx context.Context, sess *session, data []byte) (any, bool) {
			m, e := object(data, "a JSON-RPC request", nil)
			if e != nil {
				code := rpcInvalidRequest
				if e.Code == CodeInvalidJSON {
					code = rpcParseError
				}
				return rpcFail(nil, code, e.Message), false
			}
			if resp, ok := s.mcp(ctx, m, "", sess); ok {
				return resp, false
			}
			return nil, false
		},
		failure: func(e *Error) any {
			s.metrics.error(e.Code)
			data := obj{"code": e.Code}
			for k, v := range e.Fields {
				data[k] = v
			}
			return rpcReply(rpcResponse{Error: &rpcError{Code: rpcServerError, Message: e.Message, Data: data}})
		},
		start: func(ctx context.Context, sess *session) *Error {
			_, e := s.reset(ctx, sess, sqlenv.ResetOptions{})
			return e
		},
	})
}

// serveWS serves one WebSocket session: its own environment for the life
// of the connection.
func (s *Server) serveWS(w http.ResponseWriter, r *http.Request, d wsDialect) {
	if !headerHas(r.Header, "Connection", "upgrade") || !headerHas(r.Header, "Upgrade", "websocket") {
		// Not a WebSocket request: Accept writes the error response.
		websocket.Accept(w, r, nil)
		return
	}
	// coder/websocket's own check compares the origin's host only.
	if origin := r.Header.Get("Origin"); origin != "" && !s.originAllowed(origin, r) {
		s.writeError(w, r, errorf(CodeForbidden, "WebSocket connections from pages of origin %q are not allowed (see --allow-origins)", truncate(origin, maxQuoted)))
		return
	}
	// As OpenEnv's server does, the upgrade is accepted before the session
	// is made: a full server answers with an error message
	// (CAPACITY_REACHED) that OpenEnv's client reads, then closes the
	// connection with 1013 (try again later).
	sess, e := s.openSession(transportWS, s.clientIP(r), 0)
	if e != nil {
		s.refuseWS(w, r, d.failure(e), e.Code)
		return
	}
	defer s.wsWG.Done()
	conn, err := websocket.Accept(w, r, &websocket.AcceptOptions{OriginPatterns: s.cfg.WebSocketOriginPatterns})
	if err != nil {
		s.reg.remove(sess)
		s.closeSession(sess, "upgrade failed: "+err.Error())
		return
	}
	conn.SetReadLimit(16 * s.cfg.MaxMessageBytes)
	c := sess.ws
	code, reason := websocket.StatusNormalClosure, ""
	// Messages are read ahead by a goroutine of their own (readWS), whose
	// context ends only after the close handshake: coder/websocket drops a
	// connection whose read is cancelled, which would cut the handshake.
	ctx, cancel := context.WithCancel(s.baseCtx)
	defer func() {
		c.finish(code, reason)
		cancel()
		s.reg.remove(sess)
		s.closeSession(sess, "connection closed")
	}()
	if !c.connect(conn) {
		return
	}
	if d.start != nil {
		if e := d.start(ctx, sess); e != nil {
			_ = s.writeWS(ctx, conn, d.failure(e))
			code, reason = websocket.StatusInternalError, string(e.Code)
			return
		}
	}
	s.answerWS(ctx, conn, sess, d, s.readWS(ctx, cancel, conn, sess))
}

// wsIncoming is one message a WebSocket client sent.
type wsIncoming struct {
	data   []byte
	tooBig bool // larger than MaxMessageBytes (data is empty)
}

// readWS reads conn's messages in a goroutine of its own, up to 8 ahead, so
// that a connection that drops (or closes) while a step runs cancels the
// step (cancel), as an HTTP client's disconnect does, instead of letting it
// run on. The channel closes when the client is gone or ctx ends.
func (s *Server) readWS(ctx context.Context, cancel context.CancelFunc, conn *websocket.Conn, sess *session) <-chan wsIncoming {
	next := make(chan wsIncoming, 8)
	go func() {
		defer close(next)
		for {
			data, tooBig, err := s.readMessage(ctx, conn)
			if err != nil {
				if st := websocket.CloseStatus(err); st == -1 && !errors.Is(err, context.Canceled) {
					s.log.Debug("websocket read", "session", sess.tag(), "err", err)
				}
				cancel() // the client is gone: stop what runs for it
				return
			}
			select {
			case next <- wsIncoming{data, tooBig}:
			case <-ctx.Done():
				return
			}
		}
	}()
	return next
}

// answerWS answers each message in turn (the dialect's handler) until the
// messages end, a write fails, the session is closing or the handler says
// stop.
func (s *Server) answerWS(ctx context.Context, conn *websocket.Conn, sess *session, d wsDialect, next <-chan wsIncoming) {
	c := sess.ws
	for in := range next {
		if !c.begin() {
			return
		}
		sess.touch(time.Now())
		var reply any
		stop := false
		if in.tooBig {
			reply = d.failure(errorf(CodeTooLarge, "message larger than %d bytes", s.cfg.MaxMessageBytes))
		} else {
			reply, stop = d.handle(ctx, sess, in.data)
		}
		if reply != nil {
			if err := s.writeWS(ctx, conn, reply); err != nil {
				c.end()
				s.log.Debug("websocket write", "session", sess.tag(), "err", err)
				return
			}
		}
		sess.touch(time.Now())
		if c.end() || stop {
			return
		}
	}
}

// refuseWS accepts the upgrade only to send the error message msg (of
// code) and close.
func (s *Server) refuseWS(w http.ResponseWriter, r *http.Request, msg any, code Code) {
	conn, err := websocket.Accept(w, r, &websocket.AcceptOptions{OriginPatterns: s.cfg.WebSocketOriginPatterns})
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(s.baseCtx, 5*time.Second)
	defer cancel()
	_ = s.writeWS(ctx, conn, msg)
	conn.Close(websocket.StatusTryAgainLater, string(code))
}

// readMessage reads one message, keeping at most MaxMessageBytes of it:
// tooBig reports a longer one (read to its end and dropped).
func (s *Server) readMessage(ctx context.Context, conn *websocket.Conn) (data []byte, tooBig bool, err error) {
	_, rd, err := conn.Reader(ctx)
	if err != nil {
		return nil, false, err
	}
	limit := s.cfg.MaxMessageBytes
	data, err = io.ReadAll(io.LimitReader(rd, limit+1))
	if err != nil {
		return nil, false, err
	}
	if int64(len(data)) > limit {
		if _, err := io.Copy(io.Discard, rd); err != nil {
			return nil, false, err
		}
		return nil, true, nil
	}
	return data, false, nil
}

func (s *Server) writeWS(ctx context.Context, conn *websocket.Conn, m any) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, wsWriteTimeout)
	defer cancel()
	return conn.Write(ctx, websocket.MessageText, b)
}

func (s *Server) wsError(e *Error) *wsEnvelope {
	s.metrics.error(e.Code)
	s.log.Debug("websocket error", "code", e.Code, "message", e.Message)
	return &wsEnvelope{Type: "error", Data: e.JSON(false)}
}

// wsMessageFields are the fields of a client message (OpenEnv's messages
// forbid others).
var wsMessageFields = map[string]bool{"type": true, "data": true}

// handleMessage answers one client message; stop is set by "close".
func (s *Server) handleMessage(ctx context.Context, sess *session, data []byte) (reply *wsEnvelope, stop bool) {
	m, e := object(data, "a message", []any{"body"})
	if e != nil {
		return s.wsError(e), false
	}
	var typ string
	if raw, ok := m["type"]; ok {
		json.Unmarshal(raw, &typ) // a non-string type is an unknown type
	}
	switch typ {
	case "reset", "step", "state", "close", "mcp":
	default:
		return s.wsError(errorf(CodeUnknownType, "Unknown message type: %q (use reset, step, state, mcp or close)", typ)), false
	}
	for k := range m {
		if !wsMessageFields[k] {
			return s.wsError(invalid("extra_forbidden", []any{k}, m[k], "unknown field %q in a %s message", truncate(k, maxQuoted), typ)), false
		}
	}
	switch typ {
	case "reset":
		fields, e := object(m["data"], "reset data", []any{"body"})
		if e != nil {
			return s.wsError(e), false
		}
		p, e := decodeReset(fields, []any{"body"})
		if e != nil {
			return s.wsError(e), false
		}
		obs, e := s.reset(ctx, sess, p.opts)
		if e != nil {
			return s.wsError(e), false
		}
		return &wsEnvelope{Type: "observation", Data: encodeResult(obs, true)}, false
	case "step":
		a, ma, e := decodeAnyAction(m["data"], []any{"body"})
		if e != nil {
			return s.wsError(e), false
		}
		if ma != nil {
			res, e := s.mcpStep(ctx, sess, ma, 0)
			if e != nil {
				return s.wsError(e), false
			}
			return &wsEnvelope{Type: "observation", Data: res}, false
		}
		obs, e := s.step(ctx, sess, a, 0)
		if e != nil {
			return s.wsError(e), false
		}
		return &wsEnvelope{Type: "observation", Data: encodeResult(obs, false)}, false
	case "state":
		sess.mu.Lock()
		st := encodeState(sess.env)
		sess.mu.Unlock()
		return &wsEnvelope{Type: "state", Data: st}, false
	case "mcp":
		// OpenEnv's MCP over the WebSocket: data is a JSON-RPC request,
		// answered in an "mcp" message; tools act in this session.
		req, e := object(m["data"], "mcp data", []any{"body"})
		if e != nil {
			return s.wsError(e), false
		}
		resp, ok := s.mcp(ctx, req, "", sess)
		if !ok {
			return nil, false // a notification
		}
		return &wsEnvelope{Type: "mcp", Data: resp}, false
	}
	return nil, true // close
}
