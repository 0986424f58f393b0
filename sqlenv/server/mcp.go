package server

import (
	"context"
	"encoding/json"
	"net/http"
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

// handleMCP answers POST /mcp.
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
	s.writeJSON(w, http.StatusOK, s.mcp(r.Context(), m, s.clientIP(r), nil))
}

func rpcFail(id json.RawMessage, code int, msg string) rpcResponse {
	return rpcReply(rpcResponse{ID: id, Error: &rpcError{Code: code, Message: truncate(msg, maxMessageLen)}})
}

func rpcReply(resp rpcResponse) rpcResponse {
	resp.JSONRPC = "2.0"
	if resp.ID == nil {
		resp.ID = json.RawMessage("null")
	}
	return resp
}

// mcp answers one JSON-RPC request m. Over a WebSocket, wsSess is the
// connection's session: tools act in it and openenv/session/create names
// it (by a tag: a WebSocket session is not reachable by id); over HTTP,
// tools act in the HTTP session named by session_id.
func (s *Server) mcp(ctx context.Context, m map[string]json.RawMessage, client string, wsSess *session) rpcResponse {
	id := m["id"]
	var version, method string
	if json.Unmarshal(m["jsonrpc"], &version) != nil || version != "2.0" || json.Unmarshal(m["method"], &method) != nil || method == "" {
		return rpcFail(id, rpcInvalidRequest, `Invalid Request: need "jsonrpc": "2.0" and a "method"`)
	}
	params := mcpParams{}
	if raw, ok := m["params"]; ok && string(raw) != "null" {
		if err := json.Unmarshal(raw, &params); err != nil {
			return rpcFail(id, rpcInvalidParams, "Params must be an object")
		}
	}
	switch method {
	case "tools/list":
		return rpcReply(rpcResponse{ID: id, Result: obj{"tools": mcpTools}})
	case "openenv/session/create":
		return s.mcpCreateSession(ctx, id, client, wsSess)
	case "openenv/session/close":
		return s.mcpCloseSession(id, params, wsSess)
	case "tools/call":
		return s.mcpCallTool(ctx, id, params, wsSess)
	}
	return rpcFail(id, rpcMethodNotFound, "Method not found: "+method)
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

// mcpCallTool answers tools/call: one action (the tool's name) with its
// one argument, in the WebSocket's session or the session named by
// session_id.
func (s *Server) mcpCallTool(ctx context.Context, id json.RawMessage, params mcpParams, wsSess *session) rpcResponse {
	name := params.text("name")
	var args map[string]any
	_ = json.Unmarshal(params["arguments"], &args)
	var tool *mcpTool
	for i := range mcpTools {
		if mcpTools[i].Name == name {
			tool = &mcpTools[i]
		}
	}
	if tool == nil {
		return rpcFail(id, rpcInvalidParams, "Tool not found: "+name)
	}
	argName := tool.InputSchema["required"].([]string)[0]
	arg, ok := args[argName].(string)
	if !ok {
		return rpcFail(id, rpcInvalidParams, "Invalid params - arguments."+argName+" must be a string")
	}
	sess := wsSess
	if sess == nil {
		sid := params.text("session_id")
		if v, ok := args["session_id"].(string); ok && sid == "" {
			sid = v
		}
		if sid == "" {
			return rpcFail(id, rpcInvalidParams, "Invalid params - 'session_id' is required: an episode runs in a session (openenv/session/create)")
		}
		var found bool
		if sess, found = s.reg.acquire(sid, time.Now()); !found {
			return rpcFail(id, rpcInvalidParams, "Unknown session_id")
		}
		defer s.reg.release(sess, time.Now())
	}
	obs, e := s.step(ctx, sess, sqlenv.Action{ActionType: sqlenv.ActionType(strings.ToUpper(name)), Argument: arg}, 0)
	if e != nil {
		return rpcReply(rpcResponse{ID: id, Error: &rpcError{Code: rpcServerError, Message: e.Message, Data: obj{"code": e.Code}}})
	}
	return rpcReply(rpcResponse{ID: id, Result: encodeResult(obs, false)})
}
