package server

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/gosqlenv/gosqlenv/sqlenv"
	"github.com/gosqlenv/gosqlenv/sqlenv/client"
)

// TestOpenEnvValidatorChecks performs the checks of OpenEnv's
// validate_running_environment (src/openenv/cli/_validation.py, behind
// `openenv validate --url`, OpenEnv main of 2026-11) against a running
// server: /openapi.json with info.version, /health, /metadata with name and
// description, /schema with action/observation/state, POST /mcp answering
// JSON-RPC 2.0 to {}, and the simulation mode's /reset, /step and /state in
// the OpenAPI paths.
func TestOpenEnvValidatorChecks(t *testing.T) {
	_, hs := testServer(t, Config{})
	openEnvValidatorChecks(t, hs.URL)
}

// TestOpenEnvValidatorChecksWithToken: OpenEnv's validator, EnvClient and
// MCPToolClient take no header argument; given the token as the URL's
// password (http://sqlenv:<token>@host:port), Python's requests and
// websockets send it as HTTP Basic authentication, as Go's net/http does
// here, and the server accepts it.
func TestOpenEnvValidatorChecksWithToken(t *testing.T) {
	const token = "s3cret-0123456789"
	_, hs := testServer(t, Config{AuthToken: token})
	u, _ := url.Parse(hs.URL)
	u.User = url.UserPassword("sqlenv", token)
	openEnvValidatorChecks(t, u.String())

	// The same URL drives both Go clients, with no header option.
	for _, transport := range []string{"ws", "http"} {
		var env sqlenv.Env
		var err error
		if transport == "ws" {
			env, err = client.Dial(ctx, u.String(), nil)
		} else {
			env, err = client.NewHTTPSession(u.String(), nil)
		}
		if err != nil {
			t.Fatalf("%s: %v", transport, err)
		}
		if _, err := env.Reset(ctx, sqlenv.ResetOptions{QuestionID: "bank_eval_000"}); err != nil {
			t.Fatalf("%s reset: %v", transport, err)
		}
		if obs, err := env.Step(ctx, sqlenv.Action{ActionType: sqlenv.Query, Argument: "SELECT 1"}); err != nil || obs.StepCount != 1 {
			t.Fatalf("%s step: %+v %v", transport, obs, err)
		}
		env.Close()
	}

	// A wrong password, the token as the user name, or no credentials: 401,
	// and no error the Go clients return quotes the password.
	for _, user := range []*url.Userinfo{url.UserPassword("sqlenv", "wrong-password-42"), url.UserPassword(token, ""), nil} {
		u.User = user
		status, hdr, body := request(t, "POST", u.String()+"/reset", nil, `{}`)
		if status != http.StatusUnauthorized || hdr.Get("WWW-Authenticate") != `Bearer realm="sqlenv"` {
			t.Errorf("%v: %d %q %s", user, status, hdr.Get("WWW-Authenticate"), body)
		}
		_, err := client.Dial(ctx, u.String(), nil)
		var pe *Error
		if !errors.As(err, &pe) || pe.Code != CodeUnauthorized {
			t.Errorf("%v: dial: %v", user, err)
		}
		hc, _ := client.NewHTTPSession(u.String(), nil)
		_, err = hc.Reset(ctx, sqlenv.ResetOptions{})
		if !errors.As(err, &pe) || pe.Code != CodeUnauthorized {
			t.Errorf("%v: http reset: %v", user, err)
		}
	}
	u.User = url.UserPassword("sqlenv", "wrong-password-42")
	down := strings.Replace(u.String(), u.Host, "127.0.0.1:1", 1) // nothing listens
	for _, addr := range []string{down, "ftp://sqlenv:wrong-password-42@h", "http://sqlenv:wrong-password-42@[::1"} {
		_, err := client.Dial(ctx, addr, nil)
		hc, herr := client.NewHTTPSession(addr, nil)
		if herr == nil {
			_, herr = hc.Reset(ctx, sqlenv.ResetOptions{})
		}
		for _, err := range []error{err, herr} {
			if err == nil || strings.Contains(err.Error(), "wrong-password-42") {
				t.Errorf("%s: %v", addr, err)
			}
		}
	}
}

// openEnvValidatorChecks performs validate_running_environment's checks
// against the server at base.
func openEnvValidatorChecks(t *testing.T, base string) {
	t.Helper()
	get := func(path string) map[string]any {
		t.Helper()
		status, _, body := request(t, "GET", base+path, nil, "")
		var m map[string]any
		if status != 200 || json.Unmarshal(body, &m) != nil {
			t.Fatalf("GET %s: %d %s", path, status, body)
		}
		return m
	}
	openapi := get("/openapi.json")
	info, _ := openapi["info"].(map[string]any)
	if _, ok := info["version"].(string); !ok {
		t.Errorf("openapi_version_available: info %v", info)
	}
	paths, _ := openapi["paths"].(map[string]any)
	for _, p := range []string{"/reset", "/step", "/state"} {
		if _, ok := paths[p]; !ok {
			t.Errorf("mode_endpoint_consistency: %s missing from the OpenAPI paths", p)
		}
	}
	if get("/health")["status"] != "healthy" {
		t.Error("health_endpoint")
	}
	meta := get("/metadata")
	if _, ok := meta["name"].(string); !ok {
		t.Error("metadata_endpoint: name")
	}
	if _, ok := meta["description"].(string); !ok {
		t.Error("metadata_endpoint: description")
	}
	schema := get("/schema")
	for _, k := range []string{"action", "observation", "state"} {
		if _, ok := schema[k].(map[string]any); !ok {
			t.Errorf("schema_endpoint: %s", k)
		}
	}
	status, _, body := request(t, "POST", base+"/mcp", nil, `{}`)
	var rpc map[string]any
	if status != 200 || json.Unmarshal(body, &rpc) != nil || rpc["jsonrpc"] != "2.0" {
		t.Errorf("mcp_endpoint: %d %s", status, body)
	}
}

// TestMCPTools: the actions are MCP tools; a session made over MCP plays an
// episode with tools/call; JSON-RPC errors use the standard codes.
func TestMCPTools(t *testing.T) {
	_, hs := testServer(t, Config{})
	call := func(body string) map[string]any {
		t.Helper()
		status, _, b := request(t, "POST", hs.URL+"/mcp", nil, body)
		var m map[string]any
		if status != 200 || json.Unmarshal(b, &m) != nil || m["jsonrpc"] != "2.0" {
			t.Fatalf("%s: %d %s", body, status, b)
		}
		return m
	}
	list := call(`{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}`)
	tools := list["result"].(map[string]any)["tools"].([]any)
	var names []string
	for _, tl := range tools {
		names = append(names, tl.(map[string]any)["name"].(string))
	}
	if strings.Join(names, ",") != "describe,sample,query,answer" {
		t.Fatalf("tools %v", names)
	}
	created := call(`{"jsonrpc": "2.0", "id": "a", "method": "openenv/session/create", "params": {}}`)
	sid := created["result"].(map[string]any)["session_id"].(string)
	if created["id"] != "a" || sid == "" {
		t.Fatalf("session/create: %v", created)
	}
	res := call(`{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "query", "session_id": "` + sid + `", "arguments": {"sql": "SELECT 1 AS one"}}}`)
	obs := res["result"].(map[string]any)["structuredContent"].(map[string]any)["observation"].(map[string]any)
	if obs["step_count"] != 1.0 || !strings.Contains(obs["result"].(string), "one") {
		t.Fatalf("tools/call: %v", res)
	}
	// The MCP session is an HTTP session: /state sees the step.
	if status, _, b := request(t, "GET", hs.URL+"/state", map[string]string{SessionHeader: sid}, ""); status != 200 || !strings.Contains(string(b), `"step_count":1`) {
		t.Errorf("state of the MCP session: %d %s", status, b)
	}
	for body, code := range map[string]float64{
		`not json`:  rpcParseError,
		`{"id": 3}`: rpcInvalidRequest,
		`{"jsonrpc": "2.0", "id": 4, "method": "nope"}`:                                                     rpcMethodNotFound,
		`{"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": []}`:                                 rpcInvalidParams,
		`{"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": {"name": "drop"}}`:                   rpcInvalidParams,
		`{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "query", "arguments": {}}}`: rpcInvalidParams,
	} {
		status, _, b := request(t, "POST", hs.URL+"/mcp", map[string]string{"Content-Type": "application/json"}, body)
		var m map[string]any
		json.Unmarshal(b, &m)
		e, _ := m["error"].(map[string]any)
		if status != 200 || e == nil || e["code"] != code {
			t.Errorf("%s: %d %s, want error code %v", body, status, b, code)
		}
	}
	closed := call(`{"jsonrpc": "2.0", "id": 8, "method": "openenv/session/close", "params": {"session_id": "` + sid + `"}}`)
	if closed["error"] != nil {
		t.Fatalf("close: %v", closed)
	}
	if status, _, _ := request(t, "GET", hs.URL+"/state", map[string]string{SessionHeader: sid}, ""); status != 404 {
		t.Errorf("state after session/close: %d", status)
	}
}

// TestMCPOverWebSocket: an "mcp" message carries a JSON-RPC request whose
// tools act in the connection's own session, as in OpenEnv.
func TestMCPOverWebSocket(t *testing.T) {
	_, hs := testServer(t, Config{})
	ws := dialRaw(t, hs.URL)
	var list struct {
		Type string
		Data struct {
			JSONRPC string
			Result  struct{ Tools []struct{ Name string } }
		}
	}
	if err := json.Unmarshal(ws.exchange(`{"type": "mcp", "data": {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}}`), &list); err != nil ||
		list.Type != "mcp" || list.Data.JSONRPC != "2.0" || len(list.Data.Result.Tools) != 4 {
		t.Fatalf("tools/list: %+v %v", list, err)
	}
	ws.exchange(`{"type": "reset", "data": {"question_id": "bank_eval_000"}}`)
	b := ws.exchange(`{"type": "mcp", "data": {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "describe", "arguments": {"table": "customer"}}}}`)
	var call struct {
		Type string
		Data struct {
			Result struct {
				StructuredContent struct {
					Observation struct {
						StepCount int `json:"step_count"`
					}
				}
			}
			Error any
		}
	}
	if err := json.Unmarshal(b, &call); err != nil || call.Type != "mcp" || call.Data.Error != nil || call.Data.Result.StructuredContent.Observation.StepCount != 1 {
		t.Fatalf("tools/call: %s", b)
	}
}

// jsonNames lists the JSON names of a struct's fields, sorted.
func jsonNames(v any) []string {
	var out []string
	t := reflect.TypeOf(v)
	for i := 0; i < t.NumField(); i++ {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

// TestOpenAPIRequestTypesMatchDecoders: every field /openapi.json documents
// for a request is one the handler's decoder reads (a value of the wrong
// type for it is refused, naming it), and an action has exactly the fields
// the decoder allows.
func TestOpenAPIRequestTypesMatchDecoders(t *testing.T) {
	if got, want := jsonNames(actionDoc{}), slices.Sorted(slices.Values(actionFields)); !slices.Equal(got, want) {
		t.Errorf("documented action fields %v, decoder %v", got, want)
	}
	wrong := json.RawMessage(`{"not": "a scalar"}`)
	for _, name := range jsonNames(resetRequestDoc{}) {
		if _, e := decodeReset(map[string]json.RawMessage{name: wrong}, nil); e == nil {
			t.Errorf("reset: the decoder ignores documented field %q", name)
		}
	}
	action := json.RawMessage(`{"action_type": "QUERY", "argument": "SELECT 1"}`)
	for _, name := range jsonNames(stepRequestDoc{}) {
		if name == "action" {
			continue
		}
		if _, e := decodeStep(map[string]json.RawMessage{"action": action, name: wrong}); e == nil {
			t.Errorf("step: the decoder ignores documented field %q", name)
		}
	}
	doc, err := openAPIDocument()
	if err != nil {
		t.Fatal(err)
	}
	loaded, err := openapi3.NewLoader().LoadFromData(doc)
	if err != nil {
		t.Fatal(err)
	}
	if err := loaded.Validate(ctx); err != nil {
		t.Errorf("/openapi.json is not a valid OpenAPI document: %v", err)
	}
	for _, want := range []string{`"/reset"`, `"/step"`, `"/state"`, `"action_type"`, `"budget_remaining"`, `"episode_id"`} {
		if !strings.Contains(string(doc), want) {
			t.Errorf("/openapi.json lacks %s", want)
		}
	}
}
