package server

// openAPI returns /openapi.json: an OpenAPI 3.1 description of the HTTP
// endpoints, whose bodies are the JSON Schemas of /schema (the action, the
// observation, the state), so that OpenEnv's validator (`openenv validate
// --url`) finds the version and the simulation-mode paths /reset, /step
// and /state.
func openAPI() obj {
	sc := schemas()
	ref := func(name string) obj { return obj{"$ref": "#/components/schemas/" + name} }
	jsonBody := func(schema obj) obj {
		return obj{"content": obj{"application/json": obj{"schema": schema}}}
	}
	ok := func(desc string, schema obj) obj {
		return obj{"200": obj{"description": desc, "content": obj{"application/json": obj{"schema": schema}}},
			"422": obj{"description": "Validation error", "content": obj{"application/json": obj{"schema": ref("Error")}}}}
	}
	result := obj{"type": "object", "properties": obj{
		"observation": ref("SQLObservation"),
		"reward":      obj{"anyOf": []obj{{"type": "number"}, {"type": "null"}}},
		"done":        obj{"type": "boolean"},
	}, "required": []string{"observation", "reward", "done"}}
	resetRequest := obj{"type": "object", "properties": obj{
		"seed":        obj{"anyOf": []obj{{"type": "integer", "minimum": 0}, {"type": "null"}}},
		"episode_id":  obj{"anyOf": []obj{{"type": "string"}, {"type": "null"}}},
		"question_id": str("Start the episode on this question"),
		"session_id":  str("Reset this stateful HTTP session instead of opening one"),
	}}
	stepRequest := obj{"type": "object", "properties": obj{
		"action":     ref("SQLAction"),
		"timeout_s":  obj{"anyOf": []obj{{"type": "number", "exclusiveMinimum": 0}, {"type": "null"}}},
		"session_id": str("The stateful HTTP session of the episode"),
	}, "required": []string{"action"}}
	get := func(summary string, schema obj) obj {
		return obj{"get": obj{"summary": summary, "responses": ok(summary, schema)}}
	}
	return obj{
		"openapi": "3.1.0",
		"info": obj{"title": Name, "version": Version,
			"description": "sqlenv over OpenEnv's HTTP protocol (simulation mode), with stateful HTTP sessions and MCP at /mcp"},
		"paths": obj{
			"/reset": obj{"post": obj{"summary": "Reset the environment", "requestBody": jsonBody(resetRequest),
				"responses": ok("The first observation", result)}},
			"/step": obj{"post": obj{"summary": "Take a step", "requestBody": jsonBody(stepRequest),
				"responses": ok("The observation after the step", result)}},
			"/state":    get("The running episode's state", ref("SQLState")),
			"/health":   get("Health", obj{"type": "object", "properties": obj{"status": str("healthy")}}),
			"/schema":   get("The action, observation and state JSON Schemas", obj{"type": "object"}),
			"/metadata": get("The environment's metadata (OpenEnv's EnvironmentMetadata)", obj{"type": "object"}),
			"/info":     get("The server's details: action types, step budget, questions, databases, limits", obj{"type": "object"}),
			"/mcp": obj{"post": obj{"summary": "MCP JSON-RPC 2.0 (tools/list, tools/call, openenv/session/create, openenv/session/close)",
				"requestBody": jsonBody(obj{"type": "object"}), "responses": ok("A JSON-RPC 2.0 response", obj{"type": "object"})}},
			"/sessions/{id}": obj{"delete": obj{"summary": "End a stateful HTTP session",
				"parameters": []obj{{"name": "id", "in": "path", "required": true, "schema": obj{"type": "string"}}},
				"responses":  obj{"204": obj{"description": "Closed"}}}},
		},
		"components": obj{"schemas": obj{
			"SQLAction": sc["action"], "SQLObservation": sc["observation"], "SQLState": sc["state"],
			"Error": obj{"type": "object", "properties": obj{"code": str("Error code"), "message": str("What went wrong"),
				"detail": obj{"description": "The message again, for FastAPI clients"}}},
		}},
	}
}
