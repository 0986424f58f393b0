package server

import (
	"crypto/subtle"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/gosqlenv/gosqlenv/sqlenv"
)

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /reset", s.handleReset)
	mux.HandleFunc("POST /step", s.handleStep)
	mux.HandleFunc("GET /state", s.handleState)
	mux.HandleFunc("DELETE /sessions/{id}", s.handleDeleteSession)
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, r *http.Request) {
		s.writeJSON(w, http.StatusOK, map[string]string{"status": "healthy"})
	})
	mux.HandleFunc("GET /schema", func(w http.ResponseWriter, r *http.Request) {
		s.writeJSON(w, http.StatusOK, schemas())
	})
	mux.HandleFunc("GET /metadata", func(w http.ResponseWriter, r *http.Request) {
		s.writeJSON(w, http.StatusOK, s.metadata())
	})
	mux.HandleFunc("GET /info", func(w http.ResponseWriter, r *http.Request) {
		s.writeJSON(w, http.StatusOK, s.info())
	})
	mux.Handle("GET /metrics", s.metrics.handler)
	mux.HandleFunc("GET /questions", s.handleQuestions)
	mux.HandleFunc("GET /ws", s.handleWS)
	mux.HandleFunc("POST /mcp", s.handleMCP)
	mux.HandleFunc("GET /mcp", s.handleMCPWS)
	mux.HandleFunc("GET /openapi.json", func(w http.ResponseWriter, r *http.Request) {
		doc, err := openAPIDocument()
		if err != nil {
			s.writeError(w, r, errorf(CodeExecution, "OpenAPI document: %v", err))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(doc)
	})
	// Anything else gets a JSON error, as FastAPI (OpenEnv's server) sends.
	allowed := map[string]string{"/reset": "POST", "/step": "POST", "/state": "GET", "/health": "GET",
		"/schema": "GET", "/metadata": "GET", "/info": "GET", "/metrics": "GET", "/questions": "GET", "/ws": "GET", "/mcp": "POST", "/openapi.json": "GET"}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if m, ok := allowed[r.URL.Path]; ok || strings.HasPrefix(r.URL.Path, "/sessions/") {
			if !ok {
				m = "DELETE"
			}
			w.Header().Set("Allow", m)
			s.writeJSON(w, http.StatusMethodNotAllowed, map[string]string{"detail": "Method Not Allowed"})
			return
		}
		s.writeJSON(w, http.StatusNotFound, map[string]string{"detail": "Not Found"})
	})
	return s.logRequests(s.guard(mux))
}

// guard enforces the AuthToken on every request but GET /health, and the
// allowed origins on state-changing requests from browser pages (a
// cross-site form or fetch carries an Origin header; programs send none).
func (s *Server) guard(next http.Handler) http.Handler {
	want := []byte(s.cfg.AuthToken)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if len(r.TransferEncoding) > 0 {
			// Go reads a chunked body by its chunks even when a
			// Content-Length came too (it drops that header before we see
			// it). A proxy in front that went by the length would read the
			// rest as another request: RFC 9112 §6.3 says to close the
			// connection after answering, so that nothing smuggled after
			// the body is read. Clients send JSON bodies with a length.
			w.Header().Set("Connection", "close")
		}
		if !s.hostAllowed(r.Host) {
			s.writeError(w, r, errorf(CodeForbidden, "host %s is not served here (a name that is not loopback could be DNS rebinding): start the server with --allowed-hosts %s",
				strconv.Quote(truncate(r.Host, maxQuoted)), hostName(truncate(r.Host, maxQuoted))))
			return
		}
		health := (r.Method == http.MethodGet || r.Method == http.MethodHead) && r.URL.Path == "/health"
		if s.cfg.AuthToken != "" && !health && !hasToken(r, want) {
			// Only Bearer is advertised: a Basic challenge would make
			// browsers prompt for, then send on their own, a password.
			w.Header().Set("WWW-Authenticate", `Bearer realm="sqlenv"`)
			s.writeError(w, r, errorf(CodeUnauthorized, "missing or wrong token: send the header \"Authorization: Bearer <token>\", or put the token in the URL as the password (http://sqlenv:<token>@host:port) for clients that take no headers"))
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead && r.Method != http.MethodOptions {
			if origin := r.Header.Get("Origin"); origin != "" && !s.originAllowed(origin, r) {
				s.writeError(w, r, errorf(CodeForbidden, "requests from pages of origin %q are not allowed (see --allow-origins)", truncate(origin, maxQuoted)))
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// hasToken reports whether a request carries the token want, either as
// "Authorization: Bearer <token>" or as the password of HTTP Basic
// authentication (any user name). Clients that take no header argument —
// OpenEnv's EnvClient, MCPToolClient and validator — send Basic from a URL
// with user information (http://sqlenv:<token>@host:port): Python's
// websockets and requests both do. Schemes are case-insensitive (RFC 7235).
func hasToken(r *http.Request, want []byte) bool {
	if _, password, ok := r.BasicAuth(); ok {
		return subtle.ConstantTimeCompare([]byte(password), want) == 1
	}
	scheme, token, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	return strings.EqualFold(scheme, "Bearer") && subtle.ConstantTimeCompare([]byte(strings.TrimSpace(token)), want) == 1
}

// hostAllowed reports whether a request's Host may be served: an IP address
// (DNS rebinding needs a name), localhost and its subdomains, or a name
// matching Config.AllowedHosts.
func (s *Server) hostAllowed(host string) bool {
	name := hostName(host)
	if name == "" || net.ParseIP(name) != nil || name == "localhost" || strings.HasSuffix(name, ".localhost") {
		return true
	}
	for _, p := range s.cfg.AllowedHosts {
		if ok, err := path.Match(strings.ToLower(p), name); err == nil && ok {
			return true
		}
	}
	return false
}

// hostName is a Host header's name, lower-cased, without port or brackets.
func hostName(host string) string {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	return strings.ToLower(strings.TrimSuffix(strings.Trim(host, "[]"), "."))
}

// originAllowed reports whether a browser page of origin may change state
// or open a WebSocket: it is the server's own origin (the request's scheme
// and host: a page served over https is another origin than this http
// server, as browsers see it), or its host matches an allowed pattern.
func (s *Server) originAllowed(origin string, r *http.Request) bool {
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false
	}
	if strings.EqualFold(u.Host, r.Host) && strings.EqualFold(u.Scheme, s.scheme(r)) {
		return true
	}
	for _, p := range s.cfg.WebSocketOriginPatterns {
		if ok, err := path.Match(strings.ToLower(p), strings.ToLower(u.Host)); err == nil && ok {
			return true
		}
	}
	return false
}

// scheme is the scheme a client used to reach the server: https over TLS,
// the first X-Forwarded-Proto when a trusted proxy sends it (the proxy
// ended TLS), else http.
func (s *Server) scheme(r *http.Request) string {
	if r.TLS != nil {
		return "https"
	}
	if p := r.Header.Get("X-Forwarded-Proto"); p != "" && s.trusted(peerIP(r)) {
		first, _, _ := strings.Cut(p, ",")
		return strings.ToLower(strings.TrimSpace(first))
	}
	return "http"
}

// peerIP is the address of a request's TCP peer (its IP, without the port).
func peerIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// clientIP is the client a request comes from, for per-client caps: its
// TCP peer, or, when that peer is a trusted proxy (Config.TrustedProxies),
// the last address in X-Forwarded-For that is not one — a client cannot
// forge it, since each trusted proxy appends the address it received from.
func (s *Server) clientIP(r *http.Request) string {
	ip := peerIP(r)
	if !s.trusted(ip) {
		return ip
	}
	hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
	for i := len(hops) - 1; i >= 0; i-- {
		hop := strings.TrimSpace(hops[i])
		if net.ParseIP(hop) == nil {
			break // not an address: the header is not a proxy's
		}
		if !s.trusted(hop) {
			return hop
		}
		ip = hop
	}
	return ip
}

// trusted reports whether ip is in Config.TrustedProxies.
func (s *Server) trusted(ip string) bool {
	addr := net.ParseIP(ip)
	if addr == nil {
		return false
	}
	for _, n := range s.proxies {
		if n.Contains(addr) {
			return true
		}
	}
	return false
}

// statusRecorder remembers the status a handler wrote.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

// WriteHeader records the first status written and passes it on.
func (r *statusRecorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

// Unwrap lets the WebSocket upgrade reach the connection (http.Hijacker).
func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// logRequests logs every request at debug level (failures at warn) and
// turns a panic into a 500 EXECUTION_ERROR.
func (s *Server) logRequests(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w}
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				s.log.Error("panic", "method", r.Method, "path", r.URL.Path, "panic", p)
				if rec.status == 0 {
					s.writeError(rec, r, errorf(CodeExecution, "internal error"))
				}
			}
			status := rec.status
			if status == 0 {
				status = http.StatusOK
			}
			level := slog.LevelDebug
			if status >= 500 {
				level = slog.LevelWarn
			}
			s.log.Log(r.Context(), level, "request", "method", r.Method, "path", r.URL.Path,
				"status", status, "duration", time.Since(start), "remote", r.RemoteAddr)
		}()
		next.ServeHTTP(rec, r)
	})
}

func (s *Server) writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		s.log.Error("encoding a response", "err", err)
		http.Error(w, `{"code":"EXECUTION_ERROR","message":"cannot encode the response"}`, http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	// A client that does not read its answer holds the connection only
	// this long (the write deadline; WebSocket messages have their own).
	_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(s.cfg.BodyTimeout))
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

// writeError answers with e's status (the table in errors.go) and body
// {"code", "message", "detail"}.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, e *Error) {
	s.metrics.error(e.Code)
	s.log.Debug("request error", "path", r.URL.Path, "code", e.Code, "message", e.Message)
	s.writeJSON(w, e.Code.HTTPStatus(), e.JSON(true))
}

// readBody reads a JSON object body of at most MaxBodyBytes. An empty body
// is an empty object (OpenEnv's /reset takes none).
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) (map[string]json.RawMessage, *Error) {
	max := s.cfg.MaxBodyBytes
	if r.ContentLength > max {
		return nil, errorf(CodeTooLarge, "request body of %d bytes is larger than %d", r.ContentLength, max)
	}
	if r.ContentLength != 0 && !isJSONType(r.Header.Get("Content-Type")) {
		return nil, errorf(CodeMediaType, "Content-Type %q is not application/json", truncate(r.Header.Get("Content-Type"), maxQuoted))
	}
	if enc := strings.TrimSpace(r.Header.Get("Content-Encoding")); enc != "" && !strings.EqualFold(enc, "identity") {
		return nil, errorf(CodeMediaType, "Content-Encoding %q is not supported: send the JSON body uncompressed", truncate(enc, maxQuoted))
	}
	// A body trickling in holds a connection: it must arrive in BodyTimeout.
	_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(s.cfg.BodyTimeout))
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, max))
	if err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			return nil, errorf(CodeTooLarge, "request body larger than %d bytes", max)
		}
		if ne, ok := errors.AsType[net.Error](err); ok && ne.Timeout() {
			return nil, errorf(CodeBodyTimeout, "the request body did not arrive within %v", s.cfg.BodyTimeout)
		}
		return nil, errorf(CodeInvalidJSON, "the request body could not be read (the connection broke off)")
	}
	return object(body, "the request body", []any{"body"})
}

// isJSONType accepts application/json, application/*+json, and no type at
// all (as FastAPI does).
func isJSONType(ct string) bool {
	if ct == "" {
		return true
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return false
	}
	return mt == "application/json" || (strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json"))
}

// SessionCookie also names the session: /reset sets it, so that a client
// keeping cookies (OpenEnv's older HTTP client uses a requests.Session) plays
// whole episodes over HTTP without knowing about sessions.
const SessionCookie = "sqlenv_session"

// sessionID picks the session id of a request: the X-Session-Id header,
// else the body's (or for GET the query's) session_id, else the cookie.
// fromCookie reports the last case.
func sessionID(r *http.Request, fromBody string) (id string, fromCookie bool, e *Error) {
	if vs := r.Header.Values(SessionHeader); len(vs) > 1 {
		values, _ := json.Marshal(vs)
		return "", false, invalid("value_error", []any{"header", strings.ToLower(SessionHeader)}, values, "the %s header appears %d times: send it once", SessionHeader, len(vs))
	}
	h := strings.TrimSpace(r.Header.Get(SessionHeader))
	if fromBody == "" {
		fromBody = r.URL.Query().Get("session_id")
	}
	switch {
	case h != "" && fromBody != "" && h != fromBody:
		value, _ := json.Marshal(h)
		return "", false, invalid("value_error", []any{"header", strings.ToLower(SessionHeader)}, value, "the %s header and session_id differ", SessionHeader)
	case h != "":
		return h, false, nil
	case fromBody != "":
		return fromBody, false, nil
	}
	if c, err := r.Cookie(SessionCookie); err == nil && c.Value != "" {
		return c.Value, true, nil
	}
	return "", false, nil
}

// unknownSession is the error for a session id that names no HTTP
// session. It does not repeat the id: errors are logged, and ids must not be.
func unknownSession() *Error {
	return errorf(CodeSession, "unknown or expired session: call /reset for a new one")
}

// handleReset starts an episode. Without a session id it opens a new
// stateful session (OpenEnv's fresh environment per request, kept so that
// /step can continue it); with one, it resets that session (a session named
// only by an expired cookie is replaced by a new one).
func (s *Server) handleReset(w http.ResponseWriter, r *http.Request) {
	m, e := s.readBody(w, r)
	if e != nil {
		s.writeError(w, r, e)
		return
	}
	p, e := decodeReset(m, []any{"body"})
	if e == nil {
		e = s.checkQuestion(p.opts) // before a session is made for nothing
	}
	if e != nil {
		s.writeError(w, r, e)
		return
	}
	id, fromCookie, e := sessionID(r, p.sessionID)
	if e != nil {
		s.writeError(w, r, e)
		return
	}
	var sess *session
	created := false
	if id != "" {
		var ok bool
		if sess, ok = s.reg.acquire(id, time.Now()); !ok && !fromCookie {
			s.writeError(w, r, unknownSession())
			return
		}
	}
	if sess == nil { // no id, or an expired one from a cookie
		if sess, e = s.openSession(transportHTTP, s.clientIP(r), 1); e != nil {
			s.writeError(w, r, e)
			return
		}
		created = true
	}
	defer s.reg.release(sess, time.Now())
	obs, e := s.reset(r.Context(), sess, p.opts)
	if e != nil {
		if created && s.reg.remove(sess) {
			s.closeSession(sess, "reset failed")
		}
		s.writeError(w, r, e)
		return
	}
	res := encodeResult(obs, true)
	w.Header().Set(SessionHeader, sess.id)
	http.SetCookie(w, &http.Cookie{Name: SessionCookie, Value: sess.id, Path: "/", HttpOnly: true, SameSite: http.SameSiteLaxMode})
	s.writeJSON(w, http.StatusOK, res)
}

// handleStep applies an action in the session the request names. Without
// one there is no episode (OpenEnv's stateless /step runs in a fresh
// environment, which has none either): SESSION_ERROR.
func (s *Server) handleStep(w http.ResponseWriter, r *http.Request) {
	m, e := s.readBody(w, r)
	if e != nil {
		s.writeError(w, r, e)
		return
	}
	p, e := decodeStep(m)
	if e != nil {
		s.writeError(w, r, e)
		return
	}
	id, _, e := sessionID(r, p.sessionID)
	if e != nil {
		s.writeError(w, r, e)
		return
	}
	if p.mcp != nil && (p.mcp.kind == "list_tools" || id == "") {
		// Listing tools needs no session; a tool call without one gets
		// its tool errors or SESSION_ERROR.
		res, e := s.mcpStep(r.Context(), nil, p.mcp, p.timeout)
		if e != nil {
			s.writeError(w, r, e)
			return
		}
		s.writeJSON(w, http.StatusOK, res)
		return
	}
	if id == "" {
		s.writeError(w, r, errorf(CodeSession, "no episode: over HTTP each request without a session runs in a fresh environment; "+
			"send back the session id /reset returned in its %s header (in that header, or keep the %s cookie), or use the WebSocket /ws", SessionHeader, SessionCookie))
		return
	}
	sess, ok := s.reg.acquire(id, time.Now())
	if !ok {
		s.writeError(w, r, unknownSession())
		return
	}
	defer s.reg.release(sess, time.Now())
	var res any
	if p.mcp != nil {
		res, e = s.mcpStep(r.Context(), sess, p.mcp, p.timeout)
	} else {
		var obs sqlenv.Observation
		if obs, e = s.step(r.Context(), sess, p.action, p.timeout); e == nil {
			res = encodeResult(obs, false)
		}
	}
	if e != nil {
		s.writeError(w, r, e)
		return
	}
	w.Header().Set(SessionHeader, sess.id)
	s.writeJSON(w, http.StatusOK, res)
}

// handleState returns a session's state; without a session, the state of a
// fresh environment ({"episode_id": null, "step_count": 0}), as OpenEnv.
func (s *Server) handleState(w http.ResponseWriter, r *http.Request) {
	id, _, e := sessionID(r, "")
	if e != nil {
		s.writeError(w, r, e)
		return
	}
	if id == "" {
		s.writeJSON(w, http.StatusOK, stateJSON{})
		return
	}
	sess, ok := s.reg.acquire(id, time.Now())
	if !ok {
		s.writeError(w, r, unknownSession())
		return
	}
	defer s.reg.release(sess, time.Now())
	sess.mu.Lock()
	st := encodeState(sess.env)
	sess.mu.Unlock()
	st.SessionID = sess.id
	s.writeJSON(w, http.StatusOK, st)
}

// handleDeleteSession closes a stateful HTTP session (204).
func (s *Server) handleDeleteSession(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	sess, ok := s.reg.acquire(id, time.Now())
	if !ok || sess.transport != transportHTTP {
		if ok {
			s.reg.release(sess, time.Now())
		}
		s.writeError(w, r, unknownSession())
		return
	}
	removed := s.reg.remove(sess)
	s.reg.release(sess, time.Now())
	if removed {
		sess.mu.Lock() // after the session's running request, if any
		s.closeSession(sess, "deleted by the client")
		sess.mu.Unlock()
	}
	if c, err := r.Cookie(SessionCookie); err == nil && c.Value == id {
		http.SetCookie(w, &http.Cookie{Name: SessionCookie, Path: "/", MaxAge: -1})
	}
	w.WriteHeader(http.StatusNoContent)
}

// headerHas reports whether a comma-separated header contains token.
func headerHas(h http.Header, key, token string) bool {
	for _, v := range h.Values(key) {
		for _, t := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), token) {
				return true
			}
		}
	}
	return false
}
