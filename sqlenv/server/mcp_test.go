package server

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// decodeJSON unmarshals b into a map, failing the test otherwise.
func decodeJSON(tb testing.TB, b []byte) map[string]any {
	tb.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		tb.Fatalf("not a JSON object: %s", b)
	}
	return m
}

// jsonAt walks nested objects (keys) and arrays (ints) of a decoded JSON
// value; nil when a step is missing.
func jsonAt(v any, steps ...any) any {
	for _, s := range steps {
		switch k := s.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			a, _ := v.([]any)
			if k >= len(a) {
				return nil
			}
			v = a[k]
		}
	}
	return v
}

// TestMCPLifecycle: MCP's initialize (version negotiation), the
// initialized notification (202, no body, as Streamable HTTP says) and ping.
func TestMCPLifecycle(t *testing.T) {
	_, hs := testServer(t, Config{})
	post := func(body string) (int, []byte) {
		t.Helper()
		status, _, b := request(t, "POST", hs.URL+"/mcp", nil, body)
		return status, b
	}
	for requested, want := range map[string]string{"2025-06-18": "2025-06-18", "2024-11-05": "2024-11-05", "2099-01-01": mcpProtocolVersions[0], "": mcpProtocolVersions[0]} {
		status, b := post(`{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "` + requested + `", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}`)
		m := decodeJSON(t, b)
		if status != 200 || jsonAt(m, "result", "protocolVersion") != want || jsonAt(m, "result", "capabilities", "tools") == nil ||
			jsonAt(m, "result", "serverInfo", "name") != Name || jsonAt(m, "id") != 1.0 {
			t.Errorf("initialize %q: %d %s", requested, status, b)
		}
	}
	for _, n := range []string{
		`{"jsonrpc": "2.0", "method": "notifications/initialized"}`,
		`{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}`,
		`{"jsonrpc": "2.0", "method": "notifications/whatever"}`,
	} {
		if status, b := post(n); status != http.StatusAccepted || len(b) != 0 {
			t.Errorf("notification %s: %d %q", n, status, b)
		}
	}
	// A request with "id": null is a request, not a notification.
	if status, b := post(`{"jsonrpc": "2.0", "id": null, "method": "ping"}`); status != 200 || strings.TrimSpace(string(b)) != `{"jsonrpc":"2.0","id":null,"result":{}}` {
		t.Errorf("ping: %d %s", status, b)
	}
	if _, b := post(`{"jsonrpc": "2.0", "id": 9, "method": "resources/list"}`); jsonAt(decodeJSON(t, b), "error", "code") != float64(rpcMethodNotFound) {
		t.Errorf("unknown method: %s", b)
	}
}

// TestMCPToolResult: tools/call answers MCP's CallToolResult — the step's
// {observation, reward, done} as structuredContent, the same as JSON text,
// isError for a failed action — and repeats it as data (what OpenEnv's
// MCPToolClient returns).
func TestMCPToolResult(t *testing.T) {
	_, hs := testServer(t, Config{})
	call := func(body string) map[string]any {
		t.Helper()
		status, _, b := request(t, "POST", hs.URL+"/mcp", nil, body)
		if status != 200 {
			t.Fatalf("%s: %d %s", body, status, b)
		}
		return decodeJSON(t, b)
	}
	sid := jsonAt(call(`{"jsonrpc": "2.0", "id": 1, "method": "openenv/session/create"}`), "result", "session_id").(string)
	reset := call(`{"jsonrpc": "2.0", "id": 2, "method": "sqlenv/reset", "params": {"session_id": "` + sid + `", "question_id": "bank_eval_000"}}`)
	if q, _ := jsonAt(reset, "result", "observation", "question").(string); !strings.Contains(q, "Amsterdam") {
		t.Fatalf("sqlenv/reset: %v", reset)
	}
	for _, tc := range []struct {
		sql     string
		isError bool
	}{{"SELECT 1 AS one", false}, {"SELECT nope FROM nowhere", true}} {
		res := call(`{"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "query", "arguments": {"sql": "` + tc.sql + `", "session_id": "` + sid + `"}}}`)
		r := jsonAt(res, "result")
		if jsonAt(r, "isError") != tc.isError || jsonAt(r, "content", 0, "type") != "text" {
			t.Fatalf("%s: %v", tc.sql, res)
		}
		var fromText any
		if err := json.Unmarshal([]byte(jsonAt(r, "content", 0, "text").(string)), &fromText); err != nil {
			t.Fatal(err)
		}
		sc, _ := json.Marshal(jsonAt(r, "structuredContent"))
		txt, _ := json.Marshal(fromText)
		data, _ := json.Marshal(jsonAt(r, "data"))
		if string(sc) != string(txt) || string(sc) != string(data) {
			t.Errorf("structuredContent %s, text %s, data %s", sc, txt, data)
		}
		if (jsonAt(r, "structuredContent", "observation", "error") != "") != tc.isError || jsonAt(r, "structuredContent", "reward") == nil {
			t.Errorf("%s: %s", tc.sql, sc)
		}
	}
}

// TestMCPActionsAsSteps: OpenEnv's MCPToolClient (default mode) steps the
// session with {"type": "list_tools"} and {"type": "call_tool", …}; both
// transports answer its ListToolsObservation and CallToolObservation.
func TestMCPActionsAsSteps(t *testing.T) {
	_, hs := testServer(t, Config{})
	ws := dialRaw(t, hs.URL)
	list := decodeJSON(t, ws.exchange(`{"type": "step", "data": {"type": "list_tools"}}`))
	var names []string
	for _, tl := range jsonAt(list, "data", "observation", "tools").([]any) {
		names = append(names, jsonAt(tl, "name").(string))
		if jsonAt(tl, "input_schema", "type") != "object" {
			t.Errorf("tool %v has no input_schema", tl)
		}
	}
	if jsonAt(list, "type") != "observation" || strings.Join(names, ",") != "describe,sample,query,answer" {
		t.Fatalf("list_tools: %v", list)
	}
	// Before reset, a call is refused as any step is.
	if m := decodeJSON(t, ws.exchange(`{"type": "step", "data": {"type": "call_tool", "tool_name": "query", "arguments": {"sql": "SELECT 1"}}}`)); jsonAt(m, "data", "code") != string(CodeSession) {
		t.Errorf("call before reset: %v", m)
	}
	ws.exchange(`{"type": "reset", "data": {"question_id": "bank_eval_000"}}`)
	m := decodeJSON(t, ws.exchange(`{"type": "step", "data": {"type": "call_tool", "tool_name": "describe", "arguments": {"table": "customer"}}}`))
	obs := jsonAt(m, "data", "observation")
	if jsonAt(obs, "tool_name") != "describe" || jsonAt(obs, "error") != nil || jsonAt(obs, "result", "data", "observation", "step_count") != 1.0 ||
		!strings.Contains(jsonAt(obs, "result", "data", "observation", "result").(string), "customer") || jsonAt(m, "data", "done") != false {
		t.Fatalf("call_tool: %v", m)
	}
	// Tool errors are observations that change nothing.
	for msg, errType := range map[string]string{
		`{"type": "step", "data": {"type": "call_tool", "tool_name": "drop", "arguments": {}}}`:                      "tool_not_found",
		`{"type": "step", "data": {"type": "call_tool", "tool_name": "query", "arguments": {"sql": 7}}}`:             "invalid_args",
		`{"type": "step", "data": {"type": "call_tool", "tool_name": "sample", "arguments": {"tablename": "loan"}}}`: "invalid_args",
	} {
		m := decodeJSON(t, ws.exchange(msg))
		if jsonAt(m, "data", "observation", "error", "error_type") != errType || jsonAt(m, "data", "observation", "result") != nil {
			t.Errorf("%s: %v", msg, m)
		}
	}
	if st := decodeJSON(t, ws.exchange(`{"type": "state"}`)); jsonAt(st, "data", "step_count") != 1.0 {
		t.Errorf("tool errors took steps: %v", st)
	}
	for msg, code := range map[string]Code{
		`{"type": "step", "data": {"type": "reset_db"}}`:                                          CodeValidation,
		`{"type": "step", "data": {"type": "list_tools", "tool_name": "x"}}`:                      CodeValidation,
		`{"type": "step", "data": {"type": "call_tool", "arguments": {}}}`:                        CodeValidation,
		`{"type": "step", "data": {"type": "call_tool", "tool_name": "query", "arguments": [1]}}`: CodeValidation,
	} {
		if m := decodeJSON(t, ws.exchange(msg)); jsonAt(m, "type") != "error" || jsonAt(m, "data", "code") != string(code) {
			t.Errorf("%s: %v", msg, m)
		}
	}

	// Over HTTP: listing needs no session; a call acts in the session.
	status, _, b := request(t, "POST", hs.URL+"/step", nil, `{"action": {"type": "list_tools"}}`)
	if status != 200 || len(jsonAt(decodeJSON(t, b), "observation", "tools").([]any)) != 4 {
		t.Errorf("HTTP list_tools: %d %s", status, b)
	}
	status, hdr, _ := request(t, "POST", hs.URL+"/reset", nil, `{"question_id": "bank_eval_000"}`)
	sid := hdr.Get(SessionHeader)
	if status != 200 || sid == "" {
		t.Fatalf("reset: %d", status)
	}
	status, _, b = request(t, "POST", hs.URL+"/step", map[string]string{SessionHeader: sid},
		`{"action": {"type": "call_tool", "tool_name": "query", "arguments": {"sql": "SELECT 2 AS two"}}}`)
	if m := decodeJSON(t, b); status != 200 || jsonAt(m, "observation", "result", "data", "observation", "step_count") != 1.0 || jsonAt(m, "reward") == nil {
		t.Errorf("HTTP call_tool: %d %s", status, b)
	}
	status, _, b = request(t, "POST", hs.URL+"/step", nil, `{"action": {"type": "call_tool", "tool_name": "query", "arguments": {"sql": "SELECT 1"}}}`)
	if status != http.StatusNotFound {
		t.Errorf("HTTP call_tool without a session: %d %s", status, b)
	}
}

// TestMCPWebSocketEndpoint: GET /mcp upgrades to a WebSocket of bare
// JSON-RPC, one session whose episode has started; notifications get no
// answer; a plain GET gets 405; a full server answers a JSON-RPC error.
func TestMCPWebSocketEndpoint(t *testing.T) {
	_, hs := testServer(t, Config{MaxSessions: 1})
	ws := dialRawPath(t, hs.URL, "/mcp")
	init := decodeJSON(t, ws.exchange(`{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18"}}`))
	if jsonAt(init, "result", "protocolVersion") != "2025-06-18" {
		t.Fatalf("initialize: %v", init)
	}
	// A notification is not answered: the next message is ping's answer.
	if err := ws.conn.Write(ctx, websocket.MessageText, []byte(`{"jsonrpc": "2.0", "method": "notifications/initialized"}`)); err != nil {
		t.Fatal(err)
	}
	if b := ws.exchange(`{"jsonrpc": "2.0", "id": "p", "method": "ping"}`); string(b) != `{"jsonrpc":"2.0","id":"p","result":{}}` {
		t.Fatalf("ping after a notification: %s", b)
	}
	if m := decodeJSON(t, ws.exchange(`{"jsonrpc": "2.0", "id": 2, "method": "tools/list"}`)); len(jsonAt(m, "result", "tools").([]any)) != 4 {
		t.Fatalf("tools/list: %v", m)
	}
	// The episode started with the connection: tools work at once.
	m := decodeJSON(t, ws.exchange(`{"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "query", "arguments": {"sql": "SELECT 1 AS one"}}}`))
	if jsonAt(m, "result", "structuredContent", "observation", "step_count") != 1.0 || jsonAt(m, "result", "isError") != false {
		t.Fatalf("tools/call: %v", m)
	}
	m = decodeJSON(t, ws.exchange(`{"jsonrpc": "2.0", "id": 4, "method": "sqlenv/reset", "params": {"question_id": "bank_eval_000"}}`))
	if q, _ := jsonAt(m, "result", "observation", "question").(string); !strings.Contains(q, "Amsterdam") || jsonAt(m, "result", "observation", "step_count") != 0.0 {
		t.Fatalf("sqlenv/reset: %v", m)
	}
	if m := decodeJSON(t, ws.exchange(`{"jsonrpc": "2.0", "id": 5, "method": "sqlenv/reset", "params": {"question_id": "no_such"}}`)); jsonAt(m, "error", "code") != float64(rpcInvalidParams) {
		t.Errorf("reset to an unknown question: %v", m)
	}
	for msg, code := range map[string]float64{`not json`: rpcParseError, `[1]`: rpcInvalidRequest, `{"id": 6}`: rpcInvalidRequest} {
		if m := decodeJSON(t, ws.exchange(msg)); jsonAt(m, "error", "code") != code || jsonAt(m, "jsonrpc") != "2.0" {
			t.Errorf("%s: %v", msg, m)
		}
	}

	// The one session slot is taken: another connection gets an error.
	full := dialRawPath(t, hs.URL, "/mcp")
	if m := decodeJSON(t, full.read()); jsonAt(m, "error", "code") != float64(rpcServerError) || jsonAt(m, "error", "data", "code") != string(CodeCapacity) {
		t.Errorf("at capacity: %v", m)
	}
	c, cancel := contextWithTimeout(5 * time.Second)
	defer cancel()
	if _, _, err := full.conn.Read(c); websocket.CloseStatus(err) != websocket.StatusTryAgainLater {
		t.Errorf("at capacity the connection closes with 1013: %v", err)
	}

	status, hdr, b := request(t, "GET", hs.URL+"/mcp", nil, "")
	if status != http.StatusMethodNotAllowed || hdr.Get("Allow") != "POST" {
		t.Errorf("GET /mcp without an upgrade: %d %q %s", status, hdr.Get("Allow"), b)
	}
}
