package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"strings"
	"testing"

	"github.com/coder/websocket"

	"github.com/gosqlenv/gosqlenv/sqlenv"
	"github.com/gosqlenv/gosqlenv/sqlenv/client"
	"github.com/gosqlenv/gosqlenv/sqlenv/internal/protocol"
)

// errorBody decodes an HTTP error body.
func errorBody(tb testing.TB, b []byte) (Code, string) {
	tb.Helper()
	var m struct {
		Code    Code
		Message string
		Detail  json.RawMessage
	}
	if err := json.Unmarshal(b, &m); err != nil {
		tb.Fatalf("error body %q is not JSON: %v", b, err)
	}
	// detail: the message, or for a validation error FastAPI's list of
	// {type, loc, msg, input}.
	var detail string
	if m.Code == CodeValidation {
		var list []struct {
			Type string
			Loc  []string
			Msg  string
		}
		if json.Unmarshal(m.Detail, &list) == nil && len(list) == 1 && list[0].Type != "" && len(list[0].Loc) > 0 {
			detail = list[0].Msg
		}
	} else {
		json.Unmarshal(m.Detail, &detail)
	}
	if m.Message == "" || detail != m.Message {
		tb.Errorf("error body %s: want message and detail", b)
	}
	return m.Code, m.Message
}

// TestHTTPBadInput sends malformed requests: each gets the documented code
// and status, and the session they name survives them unchanged.
func TestHTTPBadInput(t *testing.T) {
	_, hs := testServer(t, Config{MaxBodyBytes: 4 << 10})
	u := hs.URL
	status, hdr, body := request(t, "POST", u+"/reset", nil, `{"question_id": "bank_eval_000"}`)
	if status != 200 {
		t.Fatalf("reset: %d %s", status, body)
	}
	sid := hdr.Get(SessionHeader)
	with := map[string]string{SessionHeader: sid}
	big := `{"action": {"action_type": "QUERY", "argument": "` + strings.Repeat("x", 5000) + `"}}`

	cases := []struct {
		name, method, path string
		header             map[string]string
		body               string
		status             int
		code               Code
	}{
		{"invalid JSON", "POST", "/step", with, `{"action": {`, 400, CodeInvalidJSON},
		{"invalid JSON reset", "POST", "/reset", nil, `seed=1`, 400, CodeInvalidJSON},
		{"not an object", "POST", "/step", with, `[1, 2]`, 422, CodeValidation},
		{"wrong content type", "POST", "/step", map[string]string{SessionHeader: sid, "Content-Type": "text/plain"}, `{"action": {"action_type": "QUERY", "argument": "SELECT 1"}}`, 415, CodeMediaType},
		{"form content type", "POST", "/reset", map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, `seed=1`, 415, CodeMediaType},
		{"oversized body", "POST", "/step", with, big, 413, CodeTooLarge},
		{"missing action", "POST", "/step", with, `{}`, 422, CodeValidation},
		{"action not an object", "POST", "/step", with, `{"action": "QUERY SELECT 1"}`, 422, CodeValidation},
		{"unknown action type", "POST", "/step", with, `{"action": {"action_type": "DROP", "argument": "t"}}`, 422, CodeValidation},
		{"missing action type", "POST", "/step", with, `{"action": {"argument": "t"}}`, 422, CodeValidation},
		{"missing argument", "POST", "/step", with, `{"action": {"action_type": "QUERY"}}`, 422, CodeValidation},
		{"argument not a string", "POST", "/step", with, `{"action": {"action_type": "QUERY", "argument": 1}}`, 422, CodeValidation},
		{"unknown action field", "POST", "/step", with, `{"action": {"action_type": "QUERY", "arguments": "SELECT 1"}}`, 422, CodeValidation},
		{"bad timeout", "POST", "/step", with, `{"action": {"action_type": "QUERY", "argument": "SELECT 1"}, "timeout_s": 0}`, 422, CodeValidation},
		{"negative seed", "POST", "/reset", nil, `{"seed": -1}`, 422, CodeValidation},
		{"fractional seed", "POST", "/reset", nil, `{"seed": 1.5}`, 422, CodeValidation},
		{"unknown question", "POST", "/reset", nil, `{"question_id": "nope"}`, 422, CodeValidation},
		{"long episode id", "POST", "/reset", nil, `{"episode_id": "` + strings.Repeat("e", 256) + `"}`, 422, CodeValidation},
		{"step before reset (stateless)", "POST", "/step", nil, `{"action": {"action_type": "QUERY", "argument": "SELECT 1"}}`, 404, CodeSession},
		{"unknown session", "POST", "/step", map[string]string{SessionHeader: "feed"}, `{"action": {"action_type": "QUERY", "argument": "SELECT 1"}}`, 404, CodeSession},
		{"unknown session state", "GET", "/state", map[string]string{SessionHeader: "feed"}, ``, 404, CodeSession},
		{"unknown session reset", "POST", "/reset", map[string]string{SessionHeader: "feed"}, `{}`, 404, CodeSession},
		{"session ids differ", "POST", "/step", with, `{"action": {"action_type": "QUERY", "argument": "SELECT 1"}, "session_id": "other"}`, 422, CodeValidation},
		{"delete unknown session", "DELETE", "/sessions/feed", nil, ``, 404, CodeSession},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, _, body := request(t, c.method, u+c.path, c.header, c.body)
			if status != c.status {
				t.Errorf("status %d, want %d (%s)", status, c.status, body)
			}
			if code, _ := errorBody(t, body); code != c.code {
				t.Errorf("code %s, want %s (%s)", code, c.code, body)
			}
			if c.code.HTTPStatus() != c.status {
				t.Errorf("the table maps %s to %d, not %d", c.code, c.code.HTTPStatus(), c.status)
			}
		})
	}

	// A long bad value is echoed at most ~500 bytes in all (the message
	// quotes 64, the validation problem repeats the message and echoes 200).
	long := strings.Repeat("~", 3000) // within the 4 KiB body limit
	for _, c := range []struct{ name, method, path, body string }{
		{"long unknown question", "POST", "/reset", `{"question_id": "` + long + `"}`},
		{"long unknown field", "POST", "/step", `{"action": {"action_type": "QUERY", "` + long + `": 1}}`},
		{"long action type", "POST", "/step", `{"action": {"action_type": "` + long + `", "argument": "t"}}`},
	} {
		_, _, body := request(t, c.method, u+c.path, with, c.body)
		if n := strings.Count(string(body), "~"); n == 0 || n > 500 {
			t.Errorf("%s: the error echoes %d bytes of the value (want 1-500): %.300s", c.name, n, body)
		}
	}

	// The session is where it was: no step was taken by the bad requests.
	status, _, body = request(t, "GET", u+"/state", with, "")
	if status != 200 || !strings.Contains(string(body), `"step_count":0`) {
		t.Fatalf("state after bad requests: %d %s", status, body)
	}
	status, _, body = request(t, "POST", u+"/step", with, `{"action": {"action_type": "describe", "argument": "customer"}}`)
	if status != 200 || !strings.Contains(string(body), `"step_count":1`) {
		t.Fatalf("step after bad requests: %d %s", status, body)
	}
	// An empty argument is the agent's error, reported in the observation.
	status, _, body = request(t, "POST", u+"/step", with, `{"action": {"action_type": "QUERY", "argument": ""}}`)
	if status != 200 || !strings.Contains(string(body), `QUERY needs an argument`) {
		t.Fatalf("empty argument: %d %s", status, body)
	}
	// The schema is not readable from SQLite's own tables, over the wire as in the library.
	status, _, body = request(t, "POST", u+"/step", with, `{"action": {"action_type": "QUERY", "argument": "SELECT name, sql FROM sqlite_schema"}}`)
	if status != 200 || !strings.Contains(string(body), `reading sqlite_master is not allowed: the schema is discovered with DESCRIBE`) || strings.Contains(string(body), "CREATE TABLE") {
		t.Fatalf("sqlite_schema over HTTP: %d %s", status, body)
	}
	// A chunked body (no Content-Length) is capped too.
	req, _ := http.NewRequest("POST", u+"/step", io.MultiReader(strings.NewReader(big)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(SessionHeader, sid)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if code, _ := errorBody(t, b); resp.StatusCode != 413 || code != CodeTooLarge || req.ContentLength != 0 {
		t.Errorf("chunked oversized body: %d %s (content length %d)", resp.StatusCode, b, req.ContentLength)
	}
	// A body-less reset is OpenEnv's default reset.
	req, _ = http.NewRequest("POST", u+"/reset", nil)
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("reset without a body: %d", resp.StatusCode)
	}
}

// TestWebSocketBadInput sends malformed messages on one connection: each is
// answered with an error message and the session goes on.
func TestWebSocketBadInput(t *testing.T) {
	_, hs := testServer(t, Config{MaxMessageBytes: 4 << 10})
	ws := dialRaw(t, hs.URL)
	for _, c := range []struct {
		name, msg string
		code      Code
	}{
		{"invalid JSON", `{"type": "reset"`, CodeInvalidJSON},
		{"not JSON at all", `hello`, CodeInvalidJSON},
		{"not an object", `["reset"]`, CodeValidation},
		{"unknown type", `{"type": "restart"}`, CodeUnknownType},
		{"missing type", `{"data": {}}`, CodeUnknownType},
		{"type not a string", `{"type": 1}`, CodeUnknownType},
		{"step before reset", `{"type": "step", "data": {"action_type": "QUERY", "argument": "SELECT 1"}}`, CodeSession},
		{"extra field", `{"type": "reset", "data": {}, "id": 1}`, CodeValidation},
		{"reset data not an object", `{"type": "reset", "data": 7}`, CodeValidation},
		{"unknown question", `{"type": "reset", "data": {"question_id": "nope"}}`, CodeValidation},
		{"oversized message", `{"type": "reset", "data": {"episode_id": "` + strings.Repeat("e", 5000) + `"}}`, CodeTooLarge},
		{"reset", `{"type": "reset", "data": {"question_id": "bank_eval_000"}}`, ""},
		{"unknown action type", `{"type": "step", "data": {"action_type": "DROP", "argument": "customer"}}`, CodeValidation},
		{"step without data", `{"type": "step"}`, CodeValidation},
		{"unknown action field", `{"type": "step", "data": {"action_type": "QUERY", "argument": "SELECT 1", "sql": "x"}}`, CodeValidation},
		{"oversized step", `{"type": "step", "data": {"action_type": "QUERY", "argument": "` + strings.Repeat("x", 5000) + `"}}`, CodeTooLarge},
		{"step", `{"type": "step", "data": {"action_type": "DESCRIBE", "argument": "customer"}}`, ""},
	} {
		b := ws.exchange(c.msg)
		if got := errorCode(t, b); got != c.code {
			t.Errorf("%s: got %s, want code %q", c.name, b, c.code)
		}
		if c.code == CodeValidation {
			// OpenEnv's validation errors carry Pydantic's "errors" list.
			var m struct {
				Data struct {
					Errors []struct{ Type, Msg string }
				}
			}
			if json.Unmarshal(b, &m); len(m.Data.Errors) != 1 || m.Data.Errors[0].Msg == "" {
				t.Errorf("%s: no errors list in %s", c.name, b)
			}
		}
	}
	// The step after all the errors is the episode's first.
	var m struct{ Data protocol.ResultWire }
	b := ws.exchange(`{"type": "step", "data": {"action_type": "QUERY", "argument": "SELECT 1"}}`)
	json.Unmarshal(b, &m)
	if m.Data.Observation.StepCount != 2 {
		t.Errorf("step count %d after DESCRIBE and QUERY, want 2: %s", m.Data.Observation.StepCount, b)
	}
	// A message beyond 16 × MaxMessageBytes ends the connection (1009).
	if err := ws.conn.Write(ctx, websocket.MessageText, []byte(strings.Repeat(" ", 17*(4<<10)))); err != nil {
		t.Fatal(err)
	}
	c, cancel := contextWithTimeout(5e9)
	defer cancel()
	if _, _, err := ws.conn.Read(c); websocket.CloseStatus(err) != websocket.StatusMessageTooBig {
		t.Errorf("huge message: %v, want close status 1009", err)
	}
}

// TestClientErrors checks how the Go client reports protocol errors.
func TestClientErrors(t *testing.T) {
	_, hs := testServer(t, Config{})
	c, err := client.Dial(ctx, hs.URL, testClientOptions(t))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, err = c.Step(ctx, sqlenv.Action{ActionType: sqlenv.Query, Argument: "SELECT 1"})
	if !errors.Is(err, sqlenv.ErrNoEpisode) {
		t.Errorf("step before reset: %v, want sqlenv.ErrNoEpisode", err)
	}
	if _, err := c.Reset(ctx, sqlenv.ResetOptions{QuestionID: "nope"}); !isCode(err, CodeValidation) {
		t.Errorf("unknown question: %v", err)
	}
	if _, err := c.Reset(ctx, sqlenv.ResetOptions{QuestionID: "bank_eval_000"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Step(ctx, sqlenv.Action{ActionType: "EXPLAIN", Argument: "x"}); !isCode(err, CodeValidation) {
		t.Errorf("unknown action type: %v", err)
	}
	obs, err := c.Step(ctx, sqlenv.Action{ActionType: sqlenv.Describe, Argument: "nope"})
	if err != nil || obs.Error == "" || obs.StepCount != 1 {
		t.Errorf("unknown table: %v, %+v; want an observation with an error", err, obs)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Step(ctx, sqlenv.Action{ActionType: sqlenv.Describe, Argument: "customer"}); !errors.Is(err, sqlenv.ErrClosed) {
		t.Errorf("step after close: %v, want sqlenv.ErrClosed", err)
	}

	h, err := client.NewHTTPSession(hs.URL, testClientOptions(t))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Step(ctx, sqlenv.Action{ActionType: sqlenv.Query, Argument: "SELECT 1"}); !errors.Is(err, sqlenv.ErrNoEpisode) {
		t.Errorf("HTTP step before reset: %v", err)
	}
	if _, err := h.Reset(ctx, sqlenv.ResetOptions{QuestionID: "nope"}); !isCode(err, CodeValidation) {
		t.Errorf("HTTP unknown question: %v", err)
	} else if e := err.(*Error); e.Status != 422 {
		t.Errorf("HTTP status %d, want 422", e.Status)
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}

	if _, err := client.Dial(ctx, "ftp://x", nil); err == nil {
		t.Error("dial ftp:// succeeded")
	}
	if _, err := client.NewPool(nil, nil); err == nil {
		t.Error("a pool without addresses")
	}
}

func isCode(err error, code Code) bool {
	e, ok := errors.AsType[*Error](err)
	return ok && e.Code == code
}

// TestCookieSession plays as OpenEnv's older HTTP client does (a
// requests.Session: cookies kept, no session ids): the episode continues
// across requests, and later resets reuse the session.
func TestCookieSession(t *testing.T) {
	s, hs := testServer(t, Config{})
	jar, _ := cookiejar.New(nil)
	client := &http.Client{Jar: jar}
	post := func(path, body string) (int, []byte) {
		resp, err := client.Post(hs.URL+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}
	for round := range 3 {
		if status, body := post("/reset", `{"seed": 3}`); status != 200 {
			t.Fatalf("reset: %d %s", status, body)
		}
		for step := 1; step <= 2; step++ {
			status, body := post("/step", `{"action": {"action_type": "QUERY", "argument": "SELECT 1"}}`)
			if status != 200 || !strings.Contains(string(body), fmt.Sprintf(`"step_count":%d`, step)) {
				t.Fatalf("round %d step %d: %d %s", round, step, status, body)
			}
		}
	}
	if n := s.reg.counts()[transportHTTP]; n != 1 {
		t.Errorf("%d HTTP sessions, want the cookie's one", n)
	}
	resp, err := client.Get(hs.URL + "/state")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(b), `"step_count":2`) {
		t.Errorf("state by cookie: %s", b)
	}
	// An expired session named by the cookie: reset opens a new one.
	s.reg.mu.Lock()
	var gone []*session
	for id, sess := range s.reg.sessions {
		delete(s.reg.sessions, id)
		gone = append(gone, sess)
	}
	s.reg.mu.Unlock()
	for _, sess := range gone {
		s.closeSession(sess, "test")
	}
	if status, body := post("/step", `{"action": {"action_type": "QUERY", "argument": "SELECT 1"}}`); status != 404 {
		t.Errorf("step in an expired cookie session: %d %s", status, body)
	}
	if status, body := post("/reset", `{}`); status != 200 {
		t.Errorf("reset with an expired cookie: %d %s", status, body)
	}
}
