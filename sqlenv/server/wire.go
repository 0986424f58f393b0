package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/gosqlenv/gosqlenv/sqlenv"
)

// at is loc with key appended (a field's location).
func at(loc []any, key string) []any {
	return append(slices.Clone(loc), key)
}

// object decodes a JSON object (what, found at loc) into its fields; null
// is an empty object. Syntax errors are INVALID_JSON, other values
// VALIDATION_ERROR.
func object(raw []byte, what string, loc []any) (map[string]json.RawMessage, *Error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return map[string]json.RawMessage{}, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		if _, ok := errors.AsType[*json.SyntaxError](err); ok || !json.Valid(raw) {
			return nil, errorf(CodeInvalidJSON, "invalid JSON: %v", err)
		}
		return nil, invalid("model_attributes_type", loc, raw, "%s must be a JSON object", what)
	}
	if m == nil {
		m = map[string]json.RawMessage{}
	}
	return m, nil
}

func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

// stringField reads an optional string field key of the object at loc
// (absent or null: "", false); prefix names the object in messages
// ("action.").
func stringField(m map[string]json.RawMessage, loc []any, prefix, key string, maxLen int) (string, bool, *Error) {
	raw, ok := m[key]
	if !ok || isNull(raw) {
		return "", false, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", false, invalid("string_type", at(loc, key), raw, "%s%s must be a string", prefix, key)
	}
	if maxLen > 0 && len(s) > maxLen {
		return "", false, invalid("string_too_long", at(loc, key), raw, "%s%s is longer than %d characters", prefix, key, maxLen)
	}
	return s, true, nil
}

// numberField reads an optional number field key of the object at loc;
// typ is the error type of a value that is not a number.
func numberField(m map[string]json.RawMessage, loc []any, key, typ, msg string) (float64, bool, *Error) {
	raw, ok := m[key]
	if !ok || isNull(raw) {
		return 0, false, nil
	}
	var f float64
	if err := json.Unmarshal(raw, &f); err != nil {
		return 0, false, invalid(typ, at(loc, key), raw, "%s", msg)
	}
	return f, true, nil
}

// resetParams is a decoded reset request ({seed?, episode_id?} and the
// extensions question_id and session_id).
type resetParams struct {
	opts      sqlenv.ResetOptions
	sessionID string
}

// decodeReset reads reset parameters, the fields of the object at loc.
// Unknown fields are ignored, as by OpenEnv (its ResetRequest allows extra
// fields).
func decodeReset(m map[string]json.RawMessage, loc []any) (resetParams, *Error) {
	var p resetParams
	const seedMsg = "seed must be an integer ≥ 0"
	if seed, ok, e := numberField(m, loc, "seed", "int_type", seedMsg); e != nil {
		return p, e
	} else if ok {
		switch {
		case seed < 0:
			return p, invalid("greater_than_equal", at(loc, "seed"), m["seed"], "%s, got %v", seedMsg, seed)
		case seed != math.Trunc(seed):
			return p, invalid("int_from_float", at(loc, "seed"), m["seed"], "%s, got %v", seedMsg, seed)
		case seed > 1<<53:
			return p, invalid("less_than_equal", at(loc, "seed"), m["seed"], "seed must be at most 2^53, got %v", seed)
		}
		s := int64(seed)
		p.opts.Seed = &s
	}
	var e *Error
	if p.opts.EpisodeID, _, e = stringField(m, loc, "", "episode_id", 255); e != nil {
		return p, e
	}
	if p.opts.QuestionID, _, e = stringField(m, loc, "", "question_id", 0); e != nil {
		return p, e
	}
	if p.sessionID, _, e = stringField(m, loc, "", "session_id", 0); e != nil {
		return p, e
	}
	return p, nil
}

// actionFields are the fields an action may have (OpenEnv actions forbid
// extra fields, which catches typos such as "arguments").
var actionFields = []string{"action_type", "argument", "metadata"}

// decodeAnyAction reads and validates the action object at loc. An
// environment action has action_type (one of DESCRIBE, SAMPLE, QUERY,
// ANSWER; case and spaces as the environment accepts them), argument (a
// string, possibly empty: the environment reports an empty argument in the
// observation) and optional metadata. An object with a "type" is one of
// OpenEnv's MCP actions instead (mcpaction.go). The object is decoded once.
func decodeAnyAction(raw json.RawMessage, loc []any) (sqlenv.Action, *mcpAction, *Error) {
	if len(bytes.TrimSpace(raw)) == 0 || isNull(raw) {
		return sqlenv.Action{}, nil, invalid("missing", loc, nil, "action is required: {\"action_type\": \"QUERY\", \"argument\": \"SELECT ...\"}")
	}
	m, e := object(raw, "action", loc)
	if e != nil {
		return sqlenv.Action{}, nil, e
	}
	if _, ok := m["type"]; ok {
		mcp, e := decodeMCPAction(m, loc)
		return sqlenv.Action{}, mcp, e
	}
	a, e := decodeActionFields(m, raw, loc)
	return a, nil, e
}

// decodeActionFields validates the fields m of the action raw at loc.
func decodeActionFields(m map[string]json.RawMessage, raw json.RawMessage, loc []any) (sqlenv.Action, *Error) {
	var a sqlenv.Action
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if !slices.Contains(actionFields, k) {
			return a, invalid("extra_forbidden", at(loc, k), m[k], "action: unknown field %q (allowed: %s)", truncate(k, maxQuoted), strings.Join(actionFields, ", "))
		}
	}
	t, ok, e := stringField(m, loc, "action.", "action_type", 0)
	if e != nil {
		return a, e
	}
	if !ok {
		return a, invalid("missing", at(loc, "action_type"), raw, "action.action_type is required")
	}
	if !validActionType(t) {
		return a, invalid("literal_error", at(loc, "action_type"), m["action_type"], "action.action_type %q is not one of DESCRIBE, SAMPLE, QUERY, ANSWER", truncate(t, maxQuoted))
	}
	arg, ok, e := stringField(m, loc, "action.", "argument", 0)
	if e != nil {
		return a, e
	}
	if !ok {
		return a, invalid("missing", at(loc, "argument"), raw, "action.argument is required (a table name, SQL or the answer)")
	}
	a.ActionType, a.Argument = sqlenv.ActionType(t), arg
	if raw, ok := m["metadata"]; ok && !isNull(raw) {
		if err := json.Unmarshal(raw, &a.Metadata); err != nil {
			return a, invalid("dict_type", at(loc, "metadata"), raw, "action.metadata must be an object")
		}
	}
	return a, nil
}

func validActionType(t string) bool {
	return slices.Contains(sqlenv.ActionTypes, normalizeType(t))
}

// normalizeType is the action type as the environment reads it.
func normalizeType(t string) sqlenv.ActionType {
	return sqlenv.ActionType(strings.ToUpper(strings.TrimSpace(t)))
}

// stepParams is a decoded HTTP step request.
type stepParams struct {
	action    sqlenv.Action
	mcp       *mcpAction    // instead of action: one of OpenEnv's MCP actions
	timeout   time.Duration // 0: the server's StepTimeout
	requestID string
	sessionID string
}

// decodeStep reads {action, timeout_s?, request_id?, session_id?}, the
// fields of the request body; other fields are ignored, as by OpenEnv.
func decodeStep(m map[string]json.RawMessage) (stepParams, *Error) {
	var p stepParams
	var e *Error
	body := []any{"body"}
	if _, ok := m["action"]; !ok {
		all, _ := json.Marshal(m)
		return p, invalid("missing", at(body, "action"), all, "action is required: {\"action_type\": \"QUERY\", \"argument\": \"SELECT ...\"}")
	}
	if p.action, p.mcp, e = decodeAnyAction(m["action"], at(body, "action")); e != nil {
		return p, e
	}
	if t, ok, e := numberField(m, body, "timeout_s", "float_type", "timeout_s must be a number"); e != nil {
		return p, e
	} else if ok {
		if !(t > 0) || math.IsInf(t, 0) {
			return p, invalid("greater_than", at(body, "timeout_s"), m["timeout_s"], "timeout_s must be > 0, got %v", t)
		}
		// A timeout too small for a duration still means "at once".
		p.timeout = max(time.Duration(min(t, 1e6)*float64(time.Second)), time.Nanosecond)
	}
	if p.requestID, _, e = stringField(m, body, "", "request_id", 255); e != nil {
		return p, e
	}
	if p.sessionID, _, e = stringField(m, body, "", "session_id", 0); e != nil {
		return p, e
	}
	return p, nil
}
