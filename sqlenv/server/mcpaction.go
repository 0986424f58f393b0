package server

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"time"
)

// OpenEnv's MCP actions as step data. OpenEnv's MCPToolClient, in its
// default mode, lists and calls tools by stepping the WebSocket session
// with {"type": "list_tools"} or {"type": "call_tool", "tool_name": …,
// "arguments": {…}} and reads a ListToolsObservation ({"tools": […]}) or a
// CallToolObservation ({"tool_name", "result", "error"}) back
// (openenv.core.env_server.mcp_types). This server accepts them wherever
// an action goes: a WebSocket "step" message's data and /step's "action".

// mcpAction is a decoded MCP action.
type mcpAction struct {
	kind string // "list_tools" or "call_tool"
	tool string
	args map[string]any
}

// mcpActionFields are the fields each MCP action may have.
var mcpActionFields = map[string][]string{
	"list_tools": {"type", "metadata"},
	"call_tool":  {"type", "tool_name", "arguments", "metadata"},
}

// decodeMCPAction reads the MCP action at loc whose fields are m (which
// has a "type").
func decodeMCPAction(m map[string]json.RawMessage, loc []any) (*mcpAction, *Error) {
	rawType := m["type"]
	var kind string
	if json.Unmarshal(rawType, &kind) != nil || mcpActionFields[kind] == nil {
		return nil, invalid("literal_error", at(loc, "type"), rawType, `action.type must be "list_tools" or "call_tool" (OpenEnv's MCP actions), got %s; an environment action has action_type and argument instead`, truncate(string(rawType), maxQuoted))
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if !slices.Contains(mcpActionFields[kind], k) {
			return nil, invalid("extra_forbidden", at(loc, k), m[k], "action: unknown field %q in a %s action (allowed: %s)", truncate(k, maxQuoted), kind, strings.Join(mcpActionFields[kind], ", "))
		}
	}
	a := &mcpAction{kind: kind}
	if kind == "call_tool" {
		if json.Unmarshal(m["tool_name"], &a.tool) != nil || a.tool == "" {
			return nil, invalid("string_type", at(loc, "tool_name"), m["tool_name"], "action.tool_name is required in a call_tool action (a string: describe, sample, query or answer)")
		}
		if raw, ok := m["arguments"]; ok && !isNull(raw) {
			if json.Unmarshal(raw, &a.args) != nil {
				return nil, invalid("dict_type", at(loc, "arguments"), raw, "action.arguments must be an object")
			}
		}
	}
	return a, nil
}

// listToolsObservation is the ListToolsObservation of the environment's
// tools, in the names of OpenEnv's Tool model.
func listToolsObservation() obj {
	tools := make([]obj, len(mcpTools))
	for i, t := range mcpTools {
		tools[i] = obj{"name": t.Name, "description": t.Description, "input_schema": t.InputSchema}
	}
	return obj{"tools": tools, "metadata": obj{}}
}

// mcpStepResult answers an MCP action as /step answers an action:
// {observation, reward, done}.
type mcpStepResult struct {
	Observation obj      `json:"observation"`
	Reward      *float64 `json:"reward"`
	Done        bool     `json:"done"`
}

// mcpStep runs an MCP action. list_tools needs no session (sess may be
// nil); call_tool is a step of sess, whose CallToolObservation carries the
// step's result as tools/call's (toolResult), or an error (tool_not_found,
// invalid_args) that changed nothing. Protocol errors (no episode, a
// timeout) come back as errors, as for any step.
func (s *Server) mcpStep(ctx context.Context, sess *session, a *mcpAction, timeout time.Duration) (mcpStepResult, *Error) {
	if a.kind == "list_tools" {
		return mcpStepResult{Observation: listToolsObservation()}, nil
	}
	action, problem := toolAction(a.tool, a.args)
	if problem != nil {
		return mcpStepResult{Observation: obj{"tool_name": a.tool, "result": nil, "metadata": obj{},
			"error": obj{"error_type": problem.errorType, "message": problem.message}}}, nil
	}
	if sess == nil {
		return mcpStepResult{}, errorf(CodeSession, "no episode: call_tool acts in a session; send reset first and its session id back")
	}
	obs, e := s.step(ctx, sess, action, timeout)
	if e != nil {
		return mcpStepResult{}, e
	}
	res := encodeResult(obs, false)
	meta := res.Observation.Metadata
	if meta == nil {
		meta = map[string]any{}
	}
	return mcpStepResult{
		Observation: obj{"tool_name": a.tool, "result": toolResult(res), "error": nil, "metadata": meta},
		Reward:      res.Reward,
		Done:        res.Done,
	}, nil
}
