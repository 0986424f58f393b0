package server

import (
	"slices"

	"github.com/gosqlenv/gosqlenv/sqlenv"
)

// Name and Version describe the environment in /metadata.
const (
	Name    = "sql_env"
	Version = "1.0.0"
)

type obj = map[string]any

func str(desc string) obj { return obj{"type": "string", "description": desc} }

// schemas returns /schema: the JSON Schemas (draft 2020-12, as Pydantic
// writes them) of the action, the observation and the state.
func schemas() obj {
	types := make([]string, len(sqlenv.ActionTypes))
	for i, t := range sqlenv.ActionTypes {
		types[i] = string(t)
	}
	action := obj{
		"title":       "SQLAction",
		"description": "One step of the agent: explore the hidden database or answer.",
		"type":        "object",
		"properties": obj{
			"action_type": obj{"type": "string", "enum": types,
				"description": "DESCRIBE (a table's columns), SAMPLE (its first rows), QUERY (one read-only SELECT) or ANSWER (ends the episode); case-insensitive"},
			"argument": str("The table name (DESCRIBE, SAMPLE), the SQL (QUERY) or the answer (ANSWER)"),
			"metadata": obj{"type": "object", "additionalProperties": true, "description": "Additional metadata for the action"},
		},
		"required":             []string{"action_type", "argument"},
		"additionalProperties": false,
	}
	observation := obj{
		"title":       "SQLObservation",
		"description": "What the agent sees after reset and after each step.",
		"type":        "object",
		"properties": obj{
			"question":         str("The natural-language question of the episode"),
			"schema_info":      str("The table names; described tables with their columns"),
			"result":           str("The rendered result of the last action (empty after reset)"),
			"error":            str("Why the last action failed (empty when it succeeded)"),
			"step_count":       obj{"type": "integer", "minimum": 0, "description": "Steps taken in the episode"},
			"budget_remaining": obj{"type": "integer", "description": "Steps left before the episode ends"},
			"action_history":   obj{"type": "array", "items": obj{"type": "string"}, "description": "One line per step taken"},
			"done":             obj{"type": "boolean", "default": false, "description": "Whether the episode has terminated"},
			"reward":           obj{"anyOf": []obj{{"type": "number"}, {"type": "null"}}, "default": nil, "description": "Reward of the last step"},
			"metadata": obj{"type": "object", "additionalProperties": true,
				"description": "episode_id, question_id, database_name; once done, correct and episode_stats"},
		},
		"required": []string{"question", "schema_info", "result", "error", "step_count", "budget_remaining", "action_history"},
	}
	state := obj{
		"title":       "SQLState",
		"description": "The running episode's identity.",
		"type":        "object",
		"properties": obj{
			"episode_id":  obj{"anyOf": []obj{{"type": "string"}, {"type": "null"}}, "default": nil, "description": "Unique identifier for the current episode"},
			"step_count":  obj{"type": "integer", "minimum": 0, "default": 0, "description": "Number of steps taken in the current episode"},
			"question_id": str("The question of the current episode"),
			"done":        obj{"type": "boolean", "description": "Whether the episode has terminated"},
			"episode_stats": obj{"type": "object", "additionalProperties": true,
				"description": "The running episode's reward components (operational, progress, progress_reward, terminal, correct, answered, budget_exhausted, steps, total_reward)"},
		},
		"additionalProperties": true,
	}
	return obj{"action": action, "observation": observation, "state": state}
}

// metadata returns /metadata: exactly OpenEnv's EnvironmentMetadata (name,
// description, readme_content, version, author, documentation_url), which
// forbids other fields; the server's own details are in /info.
func (s *Server) metadata() obj {
	return obj{
		"name": Name,
		"description": "Answer natural-language questions about a SQLite database whose schema is hidden, " +
			"exploring it with DESCRIBE, SAMPLE and QUERY under a step budget, then ANSWER.",
		"readme_content":    nil,
		"version":           Version,
		"author":            "gosqlenv",
		"documentation_url": "https://github.com/gosqlenv/gosqlenv#openenv-server",
	}
}

// info returns /info: what a client needs to know about this server beyond
// OpenEnv's metadata: action types, step budget, questions, databases,
// limits and protocol extensions.
func (s *Server) info() obj {
	budget := s.cfg.Env.StepBudget
	if budget == 0 {
		budget = sqlenv.DefaultStepBudget
	}
	dbs := map[string]bool{}
	for _, q := range s.cfg.Env.Questions {
		dbs[q.DatabaseName] = true
	}
	names := make([]string, 0, len(dbs))
	for n := range dbs {
		names = append(names, n)
	}
	slices.Sort(names)
	return obj{
		"name":           Name,
		"version":        Version,
		"action_types":   sqlenv.ActionTypes,
		"step_budget":    budget,
		"questions":      len(s.cfg.Env.Questions),
		"databases":      names,
		"max_sessions":   s.cfg.MaxSessions,
		"idle_timeout_s": s.cfg.IdleTimeout.Seconds(),
		"step_timeout_s": s.cfg.StepTimeout.Seconds(),
		"extensions": []string{
			"stateful HTTP sessions: /reset returns the session id in the X-Session-Id header and the sqlenv_session cookie; /step and /state take it (header, cookie, or session_id in the body or query); DELETE /sessions/{id}",
			"reset accepts question_id",
			"the observation's metadata (episode_id, question_id, database_name; once done correct and episode_stats) is inside the observation",
			"GET /metrics (Prometheus text format, with the Go runtime and process collectors)",
			"MCP: initialize, ping and sqlenv/reset besides OpenEnv's methods; GET /mcp as a WebSocket of JSON-RPC; tools/call answers MCP's CallToolResult",
			"OpenEnv's MCP actions {\"type\": \"list_tools\"} and {\"type\": \"call_tool\"} wherever an action goes",
			"with an auth token: Authorization Bearer, or the token as the Basic password (http://user:<token>@host:port) for clients without headers",
			"GET /questions: the rules the environments play by and each question served with a digest of its text, gold and database file",
		},
	}
}
