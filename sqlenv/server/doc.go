// Package server serves the SQL environment over OpenEnv's protocol, so
// clients written for the Python SQLEnv work unchanged. The Go clients,
// which implement sqlenv.Env against one or many such servers, are in
// sqlenv/client.
//
// # Protocol
//
// HTTP, as OpenEnv's FastAPI server:
//
//	POST /reset   {seed?, episode_id?}                 → {observation, reward: null, done}
//	POST /step    {action: {action_type, argument, metadata?}, timeout_s?} → {observation, reward, done}
//	GET  /state                                        → {episode_id, step_count}
//	GET  /health                                       → {"status": "healthy"}
//	GET  /schema                                       → {action, observation, state} (JSON Schemas)
//	GET  /metadata                                     → {name, description, version, action_types, …}
//
// The observation object is sqlenv.Observation without reward and done,
// which are the response's own fields; its metadata stays inside it. An
// invalid action (unknown field, unknown action_type) is answered with 422.
//
// WebSocket /ws: one session (its own environment) per connection. The
// client sends {"type": "reset", "data": {seed?, episode_id?}},
// {"type": "step", "data": <action>}, {"type": "state"} or
// {"type": "close"}; the server answers {"type": "observation", "data":
// {observation, reward, done}}, {"type": "state", "data": {…}} or
// {"type": "error", "data": {"message", "code"}}. An error message leaves
// the session usable.
//
// MCP (JSON-RPC 2.0) as OpenEnv serves it: POST /mcp, GET /mcp as a
// WebSocket of bare JSON-RPC (one session per connection), and {"type":
// "mcp"} messages on /ws; initialize, ping, tools/list, tools/call (MCP's
// CallToolResult of a step), openenv/session/create and close. OpenEnv's
// MCP actions {"type": "list_tools"} and {"type": "call_tool"} are
// accepted wherever an action goes (mcpaction.go).
//
// # Extensions
//
// OpenEnv's HTTP endpoints are stateless (a fresh environment per request),
// so an episode cannot go past /reset over plain HTTP. Here /reset also
// opens a session and returns its id in the X-Session-Id header and the
// sqlenv_session cookie (the body is exactly OpenEnv's {observation, reward,
// done}); /step and /state continue it when given the id (the header, the
// cookie, or session_id in the body or, for GET, the query), DELETE
// /sessions/{id} ends it. Without an id the stateless behaviour applies:
// /step has no episode (SESSION_ERROR) and /state is a fresh environment's.
// Through the cookie, OpenEnv's older HTTP client (a requests.Session) plays
// whole episodes unchanged. Sessions expire after Config.IdleTimeout; at
// capacity the least recently used idle HTTP session makes room for a new
// session.
//
// The observation's metadata (episode_id, question_id, database_name, and
// when done correct and episode_stats), which training needs, is inside the
// observation: OpenEnv's Observation type has that field, and its responses
// forbid others. Reset takes "question_id" to choose the question. GET
// /metrics exposes Prometheus metrics: the server's sqlenv_* families and
// client_golang's standard Go runtime and process collectors.
//
// # Errors
//
// Every error has a Code; the table protocol.StatusOf (sqlenv/internal/protocol) maps codes to
// HTTP statuses: INVALID_JSON and UNKNOWN_TYPE 400, SESSION_ERROR 404,
// REQUEST_TOO_LARGE 413, UNSUPPORTED_MEDIA_TYPE 415, VALIDATION_ERROR 422,
// EXECUTION_ERROR and FACTORY_ERROR 500, CAPACITY_REACHED and
// SHUTTING_DOWN 503, TIMEOUT 504. HTTP error bodies are {"code",
// "message", "detail"} (detail as FastAPI writes it).
//
// GET /questions (an extension) lists the questions served, with digests
// of each question and its database file, and the rules the environments
// play by (sqlenv.Rules), so that a trainer can check a server before it
// trusts its rewards (client.CheckServer).
package server
