package server

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/gosqlenv/gosqlenv/sqlenv"
	"github.com/gosqlenv/gosqlenv/sqlenv/dataset"
	"github.com/gosqlenv/gosqlenv/sqlenv/internal/protocol"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// goldenQuestion is the question the golden transcripts play.
const goldenQuestion = "bank_eval_000"

func question(tb testing.TB, id string) dataset.QuestionRecord {
	tb.Helper()
	qs, _ := bundledData(tb)
	for _, q := range qs {
		if q.QuestionID == id {
			return q
		}
	}
	tb.Fatalf("no question %s", id)
	return dataset.QuestionRecord{}
}

// request sends a request and returns the status, headers and body.
func keys(m map[string]json.RawMessage) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func request(tb testing.TB, method, url string, header map[string]string, body string) (int, http.Header, []byte) {
	tb.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		tb.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatal(err)
	}
	return resp.StatusCode, resp.Header, b
}

var sessionIDRe = regexp.MustCompile(`[0-9a-f]{32}`)

// golden compares JSON (indented, keys in the order sent, session ids
// masked) with testdata/<name>.json.
func golden(tb testing.TB, name string, raw []byte) {
	tb.Helper()
	raw = sessionIDRe.ReplaceAll(raw, []byte(`<session>`))
	var buf bytes.Buffer
	if err := json.Indent(&buf, raw, "", "  "); err != nil {
		tb.Fatalf("%s: not JSON: %v\n%s", name, err, raw)
	}
	buf.WriteByte('\n')
	path := filepath.Join("testdata", name+".json")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			tb.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		tb.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(buf.Bytes(), want) {
		tb.Errorf("%s differs from %s:\ngot:\n%s\nwant:\n%s", name, path, buf.Bytes(), want)
	}
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// TestHTTPProtocol plays an episode over stateful HTTP and checks every
// response against golden JSON, and the OpenEnv shapes explicitly.
func TestHTTPProtocol(t *testing.T) {
	_, hs := testServer(t, Config{Env: sqlenv.Config{StepBudget: 10}})
	u := hs.URL
	q := question(t, goldenQuestion)

	for _, c := range []struct{ path, name string }{
		{"/health", "health"}, {"/schema", "schema"}, {"/metadata", "metadata"}, {"/info", "info"}, {"/state", "http_state_stateless"},
	} {
		status, _, body := request(t, "GET", u+c.path, nil, "")
		if status != 200 {
			t.Fatalf("GET %s: %d %s", c.path, status, body)
		}
		golden(t, c.name, body)
	}
	if _, _, body := request(t, "GET", u+"/health", nil, ""); string(body) != `{"status":"healthy"}`+"\n" {
		t.Errorf("health body %q", body)
	}

	// OpenEnv's stateless reset: a seed, no body fields beyond it.
	status, hdr, body := request(t, "POST", u+"/reset", nil, `{"seed": 7, "episode_id": "episode-7"}`)
	if status != 200 {
		t.Fatalf("reset: %d %s", status, body)
	}
	golden(t, "http_reset_seed", body)
	var top map[string]json.RawMessage
	json.Unmarshal(body, &top)
	if string(top["reward"]) != "null" || string(top["done"]) != "false" {
		t.Errorf("reset reward %s done %s, want null and false", top["reward"], top["done"])
	}
	// OpenEnv's ResetResponse forbids fields beside observation, reward
	// and done: the metadata is the observation's, the session id a header.
	if len(top) != 3 {
		t.Errorf("reset response has fields %v, want exactly observation, reward, done", keys(top))
	}
	var inner map[string]any
	json.Unmarshal(top["observation"], &inner)
	for _, k := range []string{"reward", "done"} {
		if _, ok := inner[k]; ok {
			t.Errorf("observation object has %q: it belongs at the top level", k)
		}
	}
	if _, ok := inner["metadata"].(map[string]any); !ok || len(inner) != 8 {
		t.Errorf("observation has %d fields, want 8 with metadata: %v", len(inner), inner)
	}
	if hdr.Get(SessionHeader) == "" {
		t.Error("no session id header")
	}

	// An episode on a chosen question; the session named by header, then by
	// body field.
	status, hdr, body = request(t, "POST", u+"/reset", nil, `{"question_id": "`+goldenQuestion+`", "episode_id": "golden"}`)
	if status != 200 {
		t.Fatalf("reset: %d %s", status, body)
	}
	golden(t, "http_reset_question", body)
	sid := hdr.Get(SessionHeader)
	withSession := map[string]string{SessionHeader: sid}

	status, _, body = request(t, "POST", u+"/step", withSession, `{"action": {"action_type": "DESCRIBE", "argument": "customer"}}`)
	if status != 200 {
		t.Fatalf("step: %d %s", status, body)
	}
	golden(t, "http_step_describe", body)

	status, _, body = request(t, "POST", u+"/step", nil, mustJSON(map[string]any{
		"action": map[string]any{"action_type": "QUERY", "argument": q.GoldSQL}, "session_id": sid, "timeout_s": 10}))
	if status != 200 {
		t.Fatalf("step: %d %s", status, body)
	}
	golden(t, "http_step_query", body)
	var res protocol.ResultWire
	json.Unmarshal(body, &res)
	answer := sqlenv.AnswerFromResult(res.Observation.Result)

	status, _, body = request(t, "GET", u+"/state", withSession, "")
	if status != 200 {
		t.Fatalf("state: %d %s", status, body)
	}
	golden(t, "http_state_session", body)
	if status, _, body2 := request(t, "GET", u+"/state?session_id="+sid, nil, ""); status != 200 || !bytes.Equal(body, body2) {
		t.Errorf("state by query parameter: %d %s, want %s", status, body2, body)
	}

	status, _, body = request(t, "POST", u+"/step", withSession, mustJSON(map[string]any{
		"action": map[string]any{"action_type": "ANSWER", "argument": answer, "metadata": map[string]any{"note": "x"}}}))
	if status != 200 {
		t.Fatalf("step: %d %s", status, body)
	}
	golden(t, "http_step_answer", body)

	status, _, body = request(t, "POST", u+"/step", withSession, `{"action": {"action_type": "QUERY", "argument": "SELECT 1"}}`)
	if status != 200 {
		t.Fatalf("step after the end: %d %s", status, body)
	}
	golden(t, "http_step_after_done", body)

	status, _, body = request(t, "POST", u+"/step", withSession, `{"action": {"action_type": "EXPLAIN", "argument": "x"}}`)
	if status != 422 {
		t.Fatalf("unknown action type: %d %s", status, body)
	}
	golden(t, "http_error_validation", body)

	if status, _, body = request(t, "DELETE", u+"/sessions/"+sid, nil, ""); status != http.StatusNoContent {
		t.Fatalf("delete: %d %s", status, body)
	}
	status, _, body = request(t, "POST", u+"/step", withSession, `{"action": {"action_type": "QUERY", "argument": "SELECT 1"}}`)
	if status != 404 {
		t.Fatalf("step in a deleted session: %d %s", status, body)
	}
	golden(t, "http_error_session", body)
}

// wsRaw is a raw WebSocket connection for protocol tests.
type wsRaw struct {
	tb   testing.TB
	conn *websocket.Conn
}

func dialRaw(tb testing.TB, url string) *wsRaw {
	tb.Helper()
	return dialRawPath(tb, url, "/ws")
}

// dialRawPath opens a WebSocket to path of the server at url.
func dialRawPath(tb testing.TB, url, path string) *wsRaw {
	tb.Helper()
	conn, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(url, "http")+path, nil)
	if err != nil {
		tb.Fatal(err)
	}
	conn.SetReadLimit(64 << 20)
	tb.Cleanup(func() { conn.CloseNow() })
	return &wsRaw{tb, conn}
}

// exchange sends msg and returns the reply.
func (w *wsRaw) exchange(msg string) []byte {
	w.tb.Helper()
	if err := w.conn.Write(ctx, websocket.MessageText, []byte(msg)); err != nil {
		w.tb.Fatal(err)
	}
	return w.read()
}

func (w *wsRaw) read() []byte {
	w.tb.Helper()
	c, cancel := contextWithTimeout(10 * time.Second)
	defer cancel()
	_, b, err := w.conn.Read(c)
	if err != nil {
		w.tb.Fatal(err)
	}
	return b
}

// errorCode returns the code of an error message ("" for other messages).
func errorCode(tb testing.TB, b []byte) Code {
	tb.Helper()
	var m struct {
		Type string
		Data struct{ Code Code }
	}
	if err := json.Unmarshal(b, &m); err != nil {
		tb.Fatalf("bad message %s: %v", b, err)
	}
	if m.Type != "error" {
		return ""
	}
	return m.Data.Code
}

// TestWebSocketProtocol plays an episode over /ws and checks the exchange
// against golden JSON.
func TestWebSocketProtocol(t *testing.T) {
	_, hs := testServer(t, Config{Env: sqlenv.Config{StepBudget: 10}})
	q := question(t, goldenQuestion)
	ws := dialRaw(t, hs.URL)

	type pair struct {
		Send    json.RawMessage `json:"send"`
		Receive json.RawMessage `json:"receive"`
	}
	var transcript []pair
	send := func(msg string) []byte {
		b := ws.exchange(msg)
		transcript = append(transcript, pair{json.RawMessage(msg), b})
		return b
	}
	send(`{"type":"state"}`)
	send(`{"type":"step","data":{"action_type":"DESCRIBE","argument":"customer"}}`)
	send(`{"type":"reset","data":{"question_id":"` + goldenQuestion + `","episode_id":"golden"}}`)
	send(`{"type":"step","data":{"action_type":"DESCRIBE","argument":"customer"}}`)
	send(`{"type":"state"}`)
	b := send(mustJSON(map[string]any{"type": "step", "data": map[string]any{"action_type": "QUERY", "argument": q.GoldSQL}}))
	var m struct{ Data protocol.ResultWire }
	json.Unmarshal(b, &m)
	send(mustJSON(map[string]any{"type": "step", "data": map[string]any{"action_type": "ANSWER", "argument": sqlenv.AnswerFromResult(m.Data.Observation.Result)}}))
	send(`{"type":"reset","data":{"seed":7}}`)
	raw, _ := json.Marshal(transcript)
	golden(t, "ws_transcript", raw)

	// close: the server ends the session without a reply.
	if err := ws.conn.Write(ctx, websocket.MessageText, []byte(`{"type":"close"}`)); err != nil {
		t.Fatal(err)
	}
	c, cancel := contextWithTimeout(5 * time.Second)
	defer cancel()
	_, extra, err := ws.conn.Read(c)
	if websocket.CloseStatus(err) != websocket.StatusNormalClosure {
		t.Errorf("after close: message %s, err %v; want a normal closure", extra, err)
	}
}

// DNS rebinding: a request naming a host that is not loopback, an IP
// address or an allowed name is refused, over HTTP and WebSocket; the auth
// scheme is case-insensitive and HEAD /health needs no token.
func TestHostsAndAuthDetails(t *testing.T) {
	_, hs := testServer(t, Config{AuthToken: "s3cret", AllowedHosts: []string{"sqlenv.internal"}})
	do := func(method, path, host, auth string) int {
		req, _ := http.NewRequest(method, hs.URL+path, strings.NewReader("{}"))
		req.Host = host
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(hs.URL, "http://"))
	for _, c := range []struct {
		method, path, host, auth string
		want                     int
	}{
		{"POST", "/reset", "attacker.example:" + port, "Bearer s3cret", 403},
		{"GET", "/health", "attacker.example", "", 403},
		{"POST", "/reset", "localhost:" + port, "Bearer s3cret", 200},
		{"POST", "/reset", "app.localhost:" + port, "Bearer s3cret", 200},
		{"POST", "/reset", "127.0.0.1:" + port, "bearer s3cret", 200},
		{"POST", "/reset", "[::1]:" + port, "BEARER s3cret", 200},
		{"POST", "/reset", "sqlenv.internal:" + port, "Bearer s3cret", 200},
		{"POST", "/reset", "localhost", "Bearer wrong", 401},
		{"POST", "/reset", "localhost", "Basic s3cret", 401},
		{"HEAD", "/health", "localhost", "", 200},
		{"GET", "/health", "localhost", "", 200},
	} {
		if got := do(c.method, c.path, c.host, c.auth); got != c.want {
			t.Errorf("%s %s Host %s, %q: %d, want %d", c.method, c.path, c.host, c.auth, got, c.want)
		}
	}
	// WebSocket: the handshake is refused for a rebinding name.
	req, _ := http.NewRequest("GET", hs.URL+"/ws", nil)
	req.Host = "attacker.example:" + port
	req.Header.Set("Authorization", "Bearer s3cret")
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", "websocket")
	req.Header.Set("Sec-WebSocket-Version", "13")
	req.Header.Set("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 403 {
		t.Errorf("WebSocket handshake for a rebinding name: %d", resp.StatusCode)
	}
}

// Protocol details as RFCs and FastAPI behave: a compressed body is refused
// (415), a repeated session header too (422), a tiny timeout_s times out
// at once (504), and a body that never completes gets 408 with a message
// that names no socket address.
func TestProtocolDetails(t *testing.T) {
	_, hs := testServer(t, Config{BodyTimeout: 300 * time.Millisecond, NewEnv: func() (sqlenv.Env, error) { return blockingEnv{}, nil }})
	status, hdr, body := request(t, "POST", hs.URL+"/reset", nil, `{}`)
	if status != 200 {
		t.Fatalf("reset: %d %s", status, body)
	}
	sid := hdr.Get(SessionHeader)
	if status, _, body := request(t, "POST", hs.URL+"/reset", map[string]string{"Content-Encoding": "gzip"}, `{}`); status != 415 || !strings.Contains(string(body), "Content-Encoding") {
		t.Errorf("gzip body: %d %s", status, body)
	}
	req, _ := http.NewRequest("POST", hs.URL+"/step", strings.NewReader(`{"action": {"action_type": "QUERY", "argument": "SELECT 1"}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Add(SessionHeader, sid)
	req.Header.Add(SessionHeader, "other")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 422 {
		t.Errorf("two session headers: %d", resp.StatusCode)
	}
	start := time.Now()
	status, _, body = request(t, "POST", hs.URL+"/step", map[string]string{SessionHeader: sid}, `{"action": {"action_type": "QUERY", "argument": "SELECT 1"}, "timeout_s": 1e-300}`)
	if status != 504 || time.Since(start) > 5*time.Second {
		t.Errorf("timeout_s 1e-300: %d after %v: %s", status, time.Since(start), body)
	}
	conn, err := net.Dial("tcp", strings.TrimPrefix(hs.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	io.WriteString(conn, "POST /reset HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{")
	resp, err = http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	msg, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 408 || strings.Contains(string(msg), "127.0.0.1") {
		t.Errorf("a body that never completes: %d %s", resp.StatusCode, msg)
	}

	// Content-Length and chunked together (request smuggling's shape): the
	// body is read by its chunks, then the connection closes, so the bytes
	// a length-reading proxy would forward as a second request are never
	// read as one.
	smuggle, err := net.Dial("tcp", strings.TrimPrefix(hs.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer smuggle.Close()
	io.WriteString(smuggle, "POST /reset HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 4\r\n"+
		"Transfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\nGET /health HTTP/1.1\r\nHost: localhost\r\n\r\n")
	rd := bufio.NewReader(smuggle)
	resp, err = http.ReadResponse(rd, nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !resp.Close {
		t.Errorf("Content-Length with chunked: %d, close %v", resp.StatusCode, resp.Close)
	}
	smuggle.SetReadDeadline(time.Now().Add(5 * time.Second))
	if rest, err := io.ReadAll(rd); len(rest) != 0 || err != nil {
		t.Errorf("after a chunked request the connection answered again: %q %v", rest, err)
	}
}

// TestValidationErrorsAsFastAPI: a 422's detail is FastAPI's list — the
// Pydantic error type, loc from "body" (or "header") down to the field, the
// offending input (bounded) — and over a WebSocket OpenEnv's "errors" has
// the same with loc inside the message's data.
func TestValidationErrorsAsFastAPI(t *testing.T) {
	_, hs := testServer(t, Config{})
	long := strings.Repeat("x", 5000)
	type want struct {
		typ   string
		loc   string // joined with "."
		input string // JSON
	}
	for _, c := range []struct {
		path, body string
		header     map[string]string
		want       want
	}{
		{"/step", `{}`, nil, want{"missing", "body.action", `{}`}},
		{"/step", `{"action": []}`, nil, want{"model_attributes_type", "body.action", `[]`}},
		{"/step", `{"action": {"action_type": "QUERY", "argument": "x", "arguments": 1}}`, nil, want{"extra_forbidden", "body.action.arguments", `1`}},
		{"/step", `{"action": {"action_type": 5, "argument": "x"}}`, nil, want{"string_type", "body.action.action_type", `5`}},
		{"/step", `{"action": {"action_type": "DROP", "argument": "x"}}`, nil, want{"literal_error", "body.action.action_type", `"DROP"`}},
		{"/step", `{"action": {"action_type": "QUERY"}}`, nil, want{"missing", "body.action.argument", `{"action_type":"QUERY"}`}},
		{"/step", `{"action": {"action_type": "QUERY", "argument": "x", "metadata": 3}}`, nil, want{"dict_type", "body.action.metadata", `3`}},
		{"/step", `{"action": {"action_type": "QUERY", "argument": "x"}, "timeout_s": -1}`, nil, want{"greater_than", "body.timeout_s", `-1`}},
		{"/step", `{"action": {"action_type": "QUERY", "argument": "x"}, "timeout_s": "soon"}`, nil, want{"float_type", "body.timeout_s", `"soon"`}},
		{"/step", `{"action": {"type": "call_tools"}}`, nil, want{"literal_error", "body.action.type", `"call_tools"`}},
		{"/step", `{"action": {"action_type": "` + long + `", "argument": "x"}}`, nil, want{"literal_error", "body.action.action_type", `"` + strings.Repeat("x", maxInputBytes) + `…"`}},
		{"/step", `{"action": {"action_type": "QUERY", "argument": "x", "bad": [` + strings.Repeat("1,", 500) + `1]}}`, nil, want{"extra_forbidden", "body.action.bad", `null`}},
		{"/reset", `{"seed": -3}`, nil, want{"greater_than_equal", "body.seed", `-3`}},
		{"/reset", `{"seed": 1.5}`, nil, want{"int_from_float", "body.seed", `1.5`}},
		{"/reset", `{"seed": "a"}`, nil, want{"int_type", "body.seed", `"a"`}},
		{"/reset", `{"episode_id": ` + `"` + long + `"}`, nil, want{"string_too_long", "body.episode_id", `"` + strings.Repeat("x", maxInputBytes) + `…"`}},
		{"/reset", `{"question_id": "no_such_question"}`, nil, want{"value_error", "body.question_id", `"no_such_question"`}},
		{"/step", `{"action": {"action_type": "QUERY", "argument": "x"}, "session_id": "b"}`, map[string]string{SessionHeader: "a"}, want{"value_error", "header.x-session-id", `"a"`}},
	} {
		status, _, b := request(t, "POST", hs.URL+c.path, c.header, c.body)
		var resp struct {
			Detail []struct {
				Type  string
				Loc   []string
				Msg   string
				Input json.RawMessage
			}
			Message string
		}
		if err := json.Unmarshal(b, &resp); err != nil || status != 422 || len(resp.Detail) != 1 {
			t.Errorf("%s %.80s: %d %.300s", c.path, c.body, status, b)
			continue
		}
		d := resp.Detail[0]
		if got := (want{d.Type, strings.Join(d.Loc, "."), string(d.Input)}); got != c.want || d.Msg != resp.Message || len(b) > 1500 {
			t.Errorf("%s %.80s:\n got %+v (%d bytes)\nwant %+v", c.path, c.body, got, len(b), c.want)
		}
	}

	ws := dialRaw(t, hs.URL)
	for msg, w := range map[string]want{
		`{"type": "step", "data": {"action_type": "QUERY", "argument": "x", "arguments": 1}}`: {"extra_forbidden", "arguments", `1`},
		`{"type": "step", "data": {"action_type": 5, "argument": "x"}}`:                       {"string_type", "action_type", `5`},
		`{"type": "reset", "data": {"seed": -1}}`:                                             {"greater_than_equal", "seed", `-1`},
		`{"type": "state", "extra": true}`:                                                    {"extra_forbidden", "extra", `true`},
	} {
		var resp struct {
			Data struct {
				Errors []struct {
					Type  string
					Loc   []string
					Input json.RawMessage
				}
			}
		}
		b := ws.exchange(msg)
		if err := json.Unmarshal(b, &resp); err != nil || len(resp.Data.Errors) != 1 {
			t.Errorf("%s: %s", msg, b)
			continue
		}
		e := resp.Data.Errors[0]
		if got := (want{e.Type, strings.Join(e.Loc, "."), string(e.Input)}); got != w {
			t.Errorf("%s:\n got %+v\nwant %+v", msg, got, w)
		}
	}
}
