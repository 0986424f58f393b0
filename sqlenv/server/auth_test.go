package server

import (
	"context"
	"github.com/coder/websocket"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/gosqlenv/gosqlenv/sqlenv"
	"github.com/gosqlenv/gosqlenv/sqlenv/client"
)

// TestAuthToken: with an AuthToken every request but GET /health needs
// "Authorization: Bearer <token>", over HTTP and for the WebSocket
// handshake; the right token works everywhere.
func TestAuthToken(t *testing.T) {
	const token = "s3cret-token"
	_, hs := testServer(t, Config{AuthToken: token})
	good := map[string]string{"Authorization": "Bearer " + token}
	if status, _, body := request(t, "GET", hs.URL+"/health", nil, ""); status != 200 {
		t.Fatalf("health without a token: %d %s", status, body)
	}
	for _, c := range []struct{ method, path, body string }{
		{"POST", "/reset", `{}`}, {"GET", "/metadata", ""}, {"GET", "/schema", ""}, {"GET", "/metrics", ""},
		{"GET", "/state", ""}, {"POST", "/step", `{"action": {"action_type": "QUERY", "argument": "SELECT 1"}}`},
	} {
		for _, h := range []map[string]string{nil, {"Authorization": "Bearer wrong"}, {"Authorization": token}} {
			status, hdr, body := request(t, c.method, hs.URL+c.path, h, c.body)
			if code, _ := errorBody(t, body); status != 401 || code != CodeUnauthorized || !strings.HasPrefix(hdr.Get("WWW-Authenticate"), "Bearer") {
				t.Errorf("%s %s with %v: %d %s", c.method, c.path, h, status, body)
			}
		}
	}
	status, hdr, body := request(t, "POST", hs.URL+"/reset", good, `{}`)
	if status != 200 {
		t.Fatalf("reset with the token: %d %s", status, body)
	}
	good[SessionHeader] = hdr.Get(SessionHeader)
	if status, _, body := request(t, "POST", hs.URL+"/step", good, `{"action": {"action_type": "DESCRIBE", "argument": "customer"}}`); status != 200 {
		t.Fatalf("step with the token: %d %s", status, body)
	}
	if _, err := client.Dial(ctx, hs.URL, testClientOptions(t)); err == nil {
		t.Fatal("a WebSocket without the token was accepted")
	}
	opts := testClientOptions(t)
	opts.Header = http.Header{"Authorization": {"Bearer " + token}}
	ws, err := client.Dial(ctx, hs.URL, opts)
	if err != nil {
		t.Fatalf("WebSocket with the token: %v", err)
	}
	defer ws.Close()
	if _, err := ws.Reset(ctx, sqlenv.ResetOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestOriginCheckOnHTTP: a state-changing request from a browser page of
// another origin (even without a Content-Type, as a cross-site form sends)
// is refused with 403; the server's own origin and allowed patterns pass;
// programs send no Origin and are unaffected.
func TestOriginCheckOnHTTP(t *testing.T) {
	_, hs := testServer(t, Config{WebSocketOriginPatterns: []string{"*.example.org"}})
	host := strings.TrimPrefix(hs.URL, "http://")
	for origin, want := range map[string]int{
		"https://evil.example.com": 403,
		"null":                     403,
		"http://" + host:           200,
		"https://" + host:          403, // another origin to a browser: the scheme differs
		"https://lab.example.org":  200,
		"":                         200,
	} {
		status, _, body := request(t, "POST", hs.URL+"/reset", map[string]string{"Origin": origin}, "")
		if status != want {
			t.Errorf("POST /reset from origin %q: %d %s, want %d", origin, status, body, want)
		}
		if want == 403 {
			if code, _ := errorBody(t, body); code != CodeForbidden {
				t.Errorf("origin %q: code %s", origin, code)
			}
		}
	}
	// Reading is not state-changing.
	if status, _, _ := request(t, "GET", hs.URL+"/metadata", map[string]string{"Origin": "https://evil.example.com"}, ""); status != 200 {
		t.Errorf("GET /metadata from another origin: %d", status)
	}
}

// TestOriginCheckOnWebSocket: a WebSocket upgrade from a browser page is
// refused unless the page is of the server's own origin — scheme included —
// or of an allowed host.
func TestOriginCheckOnWebSocket(t *testing.T) {
	_, hs := testServer(t, Config{WebSocketOriginPatterns: []string{"*.example.org"}})
	host := strings.TrimPrefix(hs.URL, "http://")
	ws := "ws://" + host + "/ws"
	for origin, ok := range map[string]bool{
		"http://" + host:           true,
		"https://" + host:          false,
		"https://evil.example.com": false,
		"https://lab.example.org":  true,
		"":                         true,
	} {
		h := http.Header{}
		if origin != "" {
			h.Set("Origin", origin)
		}
		conn, resp, err := websocket.Dial(context.Background(), ws, &websocket.DialOptions{HTTPHeader: h})
		if conn != nil {
			conn.CloseNow()
		}
		if ok && err != nil {
			t.Errorf("WebSocket from origin %q: %v, want it accepted", origin, err)
		}
		if !ok && (err == nil || resp == nil || resp.StatusCode != http.StatusForbidden) {
			t.Errorf("WebSocket from origin %q: err %v, want 403", origin, err)
		}
	}
}

// TestErrorMessagesAreBounded: an error quoting a huge offending value is
// cut, not echoed whole.
func TestErrorMessagesAreBounded(t *testing.T) {
	_, hs := testServer(t, Config{MaxBodyBytes: 4 << 20})
	id := strings.Repeat("q", 900_000)
	status, _, body := request(t, "POST", hs.URL+"/reset", nil, `{"question_id": "`+id+`"}`)
	if status != 422 || len(body) > 4096 {
		t.Fatalf("huge question_id: %d, %d bytes of response", status, len(body))
	}
}

// TestSessionIDsStayApart: a WebSocket session's id does not drive it over
// HTTP, and no session id appears in the logs.
func TestSessionIDsStayApart(t *testing.T) {
	var logs strings.Builder
	var mu sync.Mutex
	logger := slog.New(slog.NewTextHandler(writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return logs.Write(p)
	}), &slog.HandlerOptions{Level: slog.LevelDebug}))
	s, hs := testServer(t, Config{Logger: logger})
	ws, err := client.Dial(ctx, hs.URL, testClientOptions(t))
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	if _, err := ws.Reset(ctx, sqlenv.ResetOptions{}); err != nil {
		t.Fatal(err)
	}
	status, hdr, body := request(t, "POST", hs.URL+"/reset", nil, `{}`)
	if status != 200 {
		t.Fatalf("reset: %d %s", status, body)
	}
	httpID := hdr.Get(SessionHeader)
	var wsID string
	s.reg.mu.Lock()
	for id, sess := range s.reg.sessions {
		if sess.transport == transportWS {
			wsID = id
		}
	}
	s.reg.mu.Unlock()
	if wsID == "" {
		t.Fatal("no WebSocket session")
	}
	for _, path := range []string{"/state", "/step"} {
		method, body := "GET", ""
		if path == "/step" {
			method, body = "POST", `{"action": {"action_type": "DESCRIBE", "argument": "customer"}}`
		}
		if status, _, b := request(t, method, hs.URL+path, map[string]string{SessionHeader: wsID}, body); status != 404 {
			t.Errorf("%s with the WebSocket session's id: %d %s", path, status, b)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for _, id := range []string{wsID, httpID} {
		if strings.Contains(logs.String(), id) {
			t.Errorf("the logs contain session id %s:\n%s", id, logs.String())
		}
	}
	if !strings.Contains(logs.String(), "session opened") {
		t.Errorf("no session was logged:\n%s", logs.String())
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// TestUnknownRoutesAnswerJSON: an unknown path is a JSON 404 and a wrong
// method a JSON 405 with Allow, as FastAPI answers them.
func TestUnknownRoutesAnswerJSON(t *testing.T) {
	_, hs := testServer(t, Config{})
	for _, c := range []struct {
		method, path string
		status       int
		allow        string
	}{{"GET", "/nowhere", 404, ""}, {"GET", "/reset", 405, "POST"}, {"POST", "/state", 405, "GET"}, {"GET", "/sessions/x", 405, "DELETE"}} {
		status, hdr, body := request(t, c.method, hs.URL+c.path, nil, "")
		if status != c.status || hdr.Get("Allow") != c.allow || !strings.HasPrefix(hdr.Get("Content-Type"), "application/json") || !strings.Contains(string(body), `"detail"`) {
			t.Errorf("%s %s: %d %q %s %s", c.method, c.path, status, hdr.Get("Allow"), hdr.Get("Content-Type"), body)
		}
	}
}
