package server

import (
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
	reply := func(resp rpcResponse) {
		resp.JSONRPC = "2.0"
		if resp.ID == nil {
			resp.ID = json.RawMessage("null")
		}
		s.writeJSON(w, http.StatusOK, resp)
	}
	fail := func(id json.RawMessage, code int, msg string) {
		reply(rpcResponse{ID: id, Error: &rpcError{Code: code, Message: truncate(msg, maxMessageLen)}})
	}
	m, e := s.readBody(w, r)
	if e != nil {
		if e.Code == CodeInvalidJSON {
			fail(nil, rpcParseError, "Parse error: "+e.Message)
		} else {
			fail(nil, rpcInvalidRequest, e.Message)
		}
		return
	}
	id := m["id"]
	var version, method string
	if json.Unmarshal(m["jsonrpc"], &version) != nil || version != "2.0" || json.Unmarshal(m["method"], &method) != nil || method == "" {
		fail(id, rpcInvalidRequest, `Invalid Request: need "jsonrpc": "2.0" and a "method"`)
		return
	}
	params := map[string]json.RawMessage{}
	if raw, ok := m["params"]; ok && string(raw) != "null" {
		if err := json.Unmarshal(raw, &params); err != nil {
			fail(id, rpcInvalidParams, "Params must be an object")
			return
		}
	}
	text := func(key string) string {
		var v string
		_ = json.Unmarshal(params[key], &v)
		return v
	}
	switch method {
	case "tools/list":
		reply(rpcResponse{ID: id, Result: obj{"tools": mcpTools}})
	case "openenv/session/create":
		sess, e := s.openSession(transportHTTP, clientIP(r), 1)
		if e != nil {
			reply(rpcResponse{ID: id, Error: &rpcError{Code: rpcServerError, Message: e.Message, Data: e.Fields}})
			return
		}
		defer s.reg.release(sess, time.Now())
		if _, e := s.reset(r.Context(), sess, sqlenv.ResetOptions{}); e != nil {
			s.reg.remove(sess)
			s.closeSession(sess, "reset failed")
			reply(rpcResponse{ID: id, Error: &rpcError{Code: rpcServerError, Message: e.Message}})
			return
		}
		reply(rpcResponse{ID: id, Result: obj{"session_id": sess.id}})
	case "openenv/session/close":
		sid := text("session_id")
		if sid == "" {
			fail(id, rpcInvalidParams, "Invalid params - 'session_id' is required")
			return
		}
		sess, ok := s.reg.acquire(sid, time.Now())
		if !ok {
			fail(id, rpcInvalidParams, "Unknown session_id")
			return
		}
		s.reg.release(sess, time.Now())
		if s.reg.remove(sess) {
			s.closeSession(sess, "closed over MCP")
		}
		reply(rpcResponse{ID: id, Result: obj{"session_id": sid, "closed": true}})
	case "tools/call":
		name := text("name")
		var args map[string]any
		_ = json.Unmarshal(params["arguments"], &args)
		var tool *mcpTool
		for i := range mcpTools {
			if mcpTools[i].Name == name {
				tool = &mcpTools[i]
			}
		}
		if tool == nil {
			fail(id, rpcInvalidParams, "Tool not found: "+name)
			return
		}
		sid := text("session_id")
		if v, ok := args["session_id"].(string); ok && sid == "" {
			sid = v
		}
		if sid == "" {
			fail(id, rpcInvalidParams, "Invalid params - 'session_id' is required: an episode runs in a session (openenv/session/create)")
			return
		}
		argName := tool.InputSchema["required"].([]string)[0]
		arg, ok := args[argName].(string)
		if !ok {
			fail(id, rpcInvalidParams, "Invalid params - arguments."+argName+" must be a string")
			return
		}
		sess, found := s.reg.acquire(sid, time.Now())
		if !found {
			fail(id, rpcInvalidParams, "Unknown session_id")
			return
		}
		defer s.reg.release(sess, time.Now())
		obs, e := s.step(r.Context(), sess, sqlenv.Action{ActionType: sqlenv.ActionType(strings.ToUpper(name)), Argument: arg}, 0)
		if e != nil {
			reply(rpcResponse{ID: id, Error: &rpcError{Code: rpcServerError, Message: e.Message, Data: obj{"code": e.Code}}})
			return
		}
		reply(rpcResponse{ID: id, Result: encodeResult(obs, false)})
	default:
		fail(id, rpcMethodNotFound, "Method not found: "+method)
	}
}
