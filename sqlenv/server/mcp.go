package server

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/gosqlenv/gosqlenv/sqlenv"
)

// MCP over HTTP: POST /mcp takes JSON-RPC 2.0 requests as OpenEnv's server
// does (openenv.core.env_server.http_server's mcp_handler): tools/list
// names the environment's four actions as tools, tools/call runs one as a
// step of a session, and OpenEnv's openenv/session/create and
// openenv/session/close manage those sessions (the stateful HTTP sessions
// of /reset: the same ids work in both). Errors use JSON-RPC's codes, always
// with HTTP 200, as OpenEnv answers.

// JSON-RPC 2.0 error codes.
const (
	rpcParseError     = -32700
	rpcInvalidRequest = -32600
	rpcMethodNotFound = -32601
	rpcInvalidParams  = -32602
	rpcInternalError  = -32603
	rpcServerError    = -32000
)

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

type rpcResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

// mcpTool describes one action as an MCP tool.
type mcpTool struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	InputSchema obj    `json:"inputSchema"`
}

// mcpTools are the environment's actions as tools: the tool name is the
// action type in lower case, its one argument the action's argument.
var mcpTools = []mcpTool{
	{"describe", "DESCRIBE a table: its columns, types, keys and row count.", argSchema("table", "The table name")},
	{"sample", "SAMPLE a table: its first rows.", argSchema("table", "The table name")},
	{"query", "QUERY the database with one read-only SELECT statement.", argSchema("sql", "The SQL")},
	{"answer", "ANSWER the question; ends the episode.", argSchema("answer", "The answer")},
}

func argSchema(name, desc string) obj {
	return obj{"type": "object", "properties": obj{name: str(desc), "session_id": str("The session to act in (from openenv/session/create or /reset)")},
		"required": []string{name}}
}

// handleMCP answers POST /mcp: a JSON-RPC response, or for a notification
// (a request without "id") 202 Accepted with no body, as MCP's Streamable
// HTTP transport says.
func (s *Server) handleMCP(w http.ResponseWriter, r *http.Request) {
	m, e := s.readBody(w, r)
	if e != nil {
		code := rpcInvalidRequest
		if e.Code == CodeInvalidJSON {
			code = rpcParseError
		}
		s.writeJSON(w, http.StatusOK, rpcFail(nil, code, e.Message))
		return
	}
	resp, ok := s.mcp(r.Context(), m, s.clientIP(r), nil)
	if !ok {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	s.writeJSON(w, http.StatusOK, resp)
}

func rpcFail(id json.RawMessage, code int, msg string) rpcResponse {
	return rpcReply(rpcResponse{ID: id, Error: &rpcError{Code: code, Message: truncate(msg, maxMessageLen)}})
}

// rpcFromError answers a protocol error: invalid params for a validation
// error, else a server error whose data names the code.
func rpcFromError(id json.RawMessage, e *Error) rpcResponse {
	if e.Code == CodeValidation {
		return rpcFail(id, rpcInvalidParams, e.Message)
	}
	return rpcReply(rpcResponse{ID: id, Error: &rpcError{Code: rpcServerError, Message: e.Message, Data: obj{"code": e.Code}}})
}

func rpcReply(resp rpcResponse) rpcResponse {
	resp.JSONRPC = "2.0"
	if resp.ID == nil {
		resp.ID = json.RawMessage("null")
	}
	return resp
}

// mcp answers one JSON-RPC request m; ok is false for a notification,
// which gets no answer. Over a WebSocket, wsSess is the connection's
// session: tools act in it and openenv/session/create names it (by a tag: a
// WebSocket session is not reachable by id); over HTTP, tools act in the
// HTTP session named by session_id.
func (s *Server) mcp(ctx context.Context, m map[string]json.RawMessage, client string, wsSess *session) (resp rpcResponse, ok bool) {
	id, hasID := m["id"]
	var version, method string
	if json.Unmarshal(m["jsonrpc"], &version) != nil || version != "2.0" || json.Unmarshal(m["method"], &method) != nil || method == "" {
		return rpcFail(id, rpcInvalidRequest, `Invalid Request: need "jsonrpc": "2.0" and a "method"`), true
	}
	if !hasID {
		// notifications/initialized, notifications/cancelled, …: nothing
		// to do (steps are not cancellable by id) and nothing to answer.
		return rpcResponse{}, false
	}
	params := mcpParams{}
	if raw, ok := m["params"]; ok && string(raw) != "null" {
		if err := json.Unmarshal(raw, &params); err != nil {
			return rpcFail(id, rpcInvalidParams, "Params must be an object"), true
		}
	}
	switch method {
	case "initialize":
		return rpcReply(rpcResponse{ID: id, Result: mcpInitializeResult(params.text("protocolVersion"))}), true
	case "ping":
		return rpcReply(rpcResponse{ID: id, Result: obj{}}), true
	case "tools/list":
		return rpcReply(rpcResponse{ID: id, Result: obj{"tools": mcpTools}}), true
	case "openenv/session/create":
		return s.mcpCreateSession(ctx, id, client, wsSess), true
	case "openenv/session/close":
		return s.mcpCloseSession(id, params, wsSess), true
	case "tools/call":
		return s.mcpCallTool(ctx, id, params, wsSess), true
	case "sqlenv/reset":
		return s.mcpReset(ctx, id, params, wsSess), true
	}
	return rpcFail(id, rpcMethodNotFound, "Method not found: "+truncate(method, maxQuoted)), true
}

// mcpProtocolVersions are the MCP revisions whose lifecycle and tool
// messages this server speaks, newest first.
var mcpProtocolVersions = []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

// mcpInitializeResult answers initialize: the client's protocol version
// when it is one of ours, else our newest (the client then decides), and
// the one capability, tools.
func mcpInitializeResult(requested string) obj {
	version := mcpProtocolVersions[0]
	if slices.Contains(mcpProtocolVersions, requested) {
		version = requested
	}
	return obj{
		"protocolVersion": version,
		"capabilities":    obj{"tools": obj{"listChanged": false}},
		"serverInfo":      obj{"name": Name, "version": Version},
		"instructions": "Each session is one episode: a question about a SQLite database whose schema is hidden. " +
			"Explore with describe, sample and query (read-only SQL) within the step budget, then answer once. " +
			"Over HTTP, openenv/session/create starts a session and tools take its session_id; over a WebSocket " +
			"the connection is the session. sqlenv/reset starts a new episode (params: question_id, seed).",
	}
}

// mcpParams are a JSON-RPC request's params.
type mcpParams map[string]json.RawMessage

// text is the string parameter key ("" when absent or not a string).
func (p mcpParams) text(key string) string {
	var v string
	_ = json.Unmarshal(p[key], &v)
	return v
}

// mcpCreateSession answers openenv/session/create: the WebSocket's own
// session, or a new HTTP session with a reset episode.
func (s *Server) mcpCreateSession(ctx context.Context, id json.RawMessage, client string, wsSess *session) rpcResponse {
	if wsSess != nil {
		return rpcReply(rpcResponse{ID: id, Result: obj{"session_id": wsSess.tag()}})
	}
	sess, e := s.openSession(transportHTTP, client, 1)
	if e != nil {
		return rpcReply(rpcResponse{ID: id, Error: &rpcError{Code: rpcServerError, Message: e.Message, Data: e.Fields}})
	}
	defer s.reg.release(sess, time.Now())
	if _, e := s.reset(ctx, sess, sqlenv.ResetOptions{}); e != nil {
		s.reg.remove(sess)
		s.closeSession(sess, "reset failed")
		return rpcReply(rpcResponse{ID: id, Error: &rpcError{Code: rpcServerError, Message: e.Message}})
	}
	return rpcReply(rpcResponse{ID: id, Result: obj{"session_id": sess.id}})
}

// mcpCloseSession answers openenv/session/close (not for the WebSocket's
// own session).
func (s *Server) mcpCloseSession(id json.RawMessage, params mcpParams, wsSess *session) rpcResponse {
	sid := params.text("session_id")
	if sid == "" {
		return rpcFail(id, rpcInvalidParams, "Invalid params - 'session_id' is required")
	}
	if wsSess != nil && sid == wsSess.tag() {
		return rpcFail(id, rpcInvalidRequest, "Cannot close active WebSocket-managed session via MCP method")
	}
	sess, ok := s.reg.acquire(sid, time.Now())
	if !ok {
		return rpcFail(id, rpcInvalidParams, "Unknown session_id")
	}
	s.reg.release(sess, time.Now())
	if s.reg.remove(sess) {
		s.closeSession(sess, "closed over MCP")
	}
	return rpcReply(rpcResponse{ID: id, Result: obj{"session_id": sid, "closed": true}})
}

// mcpSession is the session an MCP call acts in: the WebSocket's, or the
// HTTP session named by params' session_id, held until release.
func (s *Server) mcpSession(id json.RawMessage, params mcpParams, wsSess *session) (sess *session, release func(), fail *rpcResponse) {
	if wsSess != nil {
		return wsSess, func() {}, nil
	}
	sid := params.text("session_id")
	if sid == "" {
		r := rpcFail(id, rpcInvalidParams, "Invalid params - 'session_id' is required: an episode runs in a session (openenv/session/create)")
		return nil, nil, &r
	}
	sess, found := s.reg.acquire(sid, time.Now())
	if !found {
		r := rpcFail(id, rpcInvalidParams, "Unknown session_id")
		return nil, nil, &r
	}
	return sess, func() { s.reg.release(sess, time.Now()) }, nil
}

// toolProblem is why a tool call names no action: OpenEnv's ToolError
// types tool_not_found and invalid_args.
type toolProblem struct {
	errorType, message string
}

// toolAction is the action a tool call stands for: the tool's name in
// upper case as the action type, its one argument as the argument.
func toolAction(name string, args map[string]any) (sqlenv.Action, *toolProblem) {
	for _, tool := range mcpTools {
		if tool.Name != name {
			continue
		}
		argName := tool.InputSchema["required"].([]string)[0]
		arg, ok := args[argName].(string)
		if !ok {
			return sqlenv.Action{}, &toolProblem{"invalid_args", "Invalid params - arguments." + argName + " must be a string"}
		}
		return sqlenv.Action{ActionType: sqlenv.ActionType(strings.ToUpper(name)), Argument: arg}, nil
	}
	return sqlenv.Action{}, &toolProblem{"tool_not_found", "Tool not found: " + truncate(name, maxQuoted) + " (tools: describe, sample, query, answer)"}
}

// mcpCallTool answers tools/call: one action (the tool's name) with its
// one argument, in the WebSocket's session or the session named by
// session_id.
func (s *Server) mcpCallTool(ctx context.Context, id json.RawMessage, params mcpParams, wsSess *session) rpcResponse {
	var args map[string]any
	_ = json.Unmarshal(params["arguments"], &args)
	action, problem := toolAction(params.text("name"), args)
	if problem != nil {
		return rpcFail(id, rpcInvalidParams, problem.message)
	}
	if v, ok := args["session_id"].(string); ok && params.text("session_id") == "" {
		params["session_id"], _ = json.Marshal(v)
	}
	sess, release, fail := s.mcpSession(id, params, wsSess)
	if fail != nil {
		return *fail
	}
	defer release()
	obs, e := s.step(ctx, sess, action, 0)
	if e != nil {
		return rpcFromError(id, e)
	}
	return rpcReply(rpcResponse{ID: id, Result: toolResult(encodeResult(obs, false))})
}

// toolResult is MCP's CallToolResult of a step: the {observation, reward,
// done} of /step as structuredContent and, for clients that read text
// only, as JSON text; isError when the action failed (observation.error,
// e.g. an SQL error, which the agent should read). data repeats it for
// OpenEnv's MCPToolClient, which returns a result's "data".
func toolResult(res resultJSON) obj {
	text, _ := json.Marshal(res)
	return obj{
		"content":           []obj{{"type": "text", "text": string(text)}},
		"structuredContent": res,
		"isError":           res.Observation.Error != "",
		"data":              res,
	}
}

// mcpReset answers sqlenv/reset (an extension): a new episode in the
// WebSocket's session or the HTTP session named by session_id, with
// /reset's question_id and seed.
func (s *Server) mcpReset(ctx context.Context, id json.RawMessage, params mcpParams, wsSess *session) rpcResponse {
	fields := map[string]json.RawMessage{}
	for _, k := range []string{"question_id", "seed"} {
		if v, ok := params[k]; ok {
			fields[k] = v
		}
	}
	p, e := decodeReset(fields, []any{"params"})
	if e != nil {
		return rpcFail(id, rpcInvalidParams, e.Message)
	}
	sess, release, fail := s.mcpSession(id, params, wsSess)
	if fail != nil {
		return *fail
	}
	defer release()
	obs, e := s.reset(ctx, sess, p.opts)
	if e != nil {
		return rpcFromError(id, e)
	}
	return rpcReply(rpcResponse{ID: id, Result: encodeResult(obs, true)})
}
