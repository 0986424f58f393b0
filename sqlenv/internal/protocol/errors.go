package protocol

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"unicode/utf8"

	"github.com/gosqlenv/gosqlenv/sqlenv"
)

// Code names an error of the protocol. The first seven are OpenEnv's
// WebSocket error codes; the others extend them for HTTP and operations.
type Code string

// Error codes. StatusOf maps each to its HTTP status.
const (
	// CodeInvalidJSON: the body or message is not JSON.
	CodeInvalidJSON Code = "INVALID_JSON"
	// CodeUnknownType: a WebSocket message with a missing or unknown "type".
	CodeUnknownType Code = "UNKNOWN_TYPE"
	// CodeValidation: well-formed JSON with the wrong shape: a missing or
	// mistyped field, an unknown field in an action, an unknown action type
	// or question id.
	CodeValidation Code = "VALIDATION_ERROR"
	// CodeExecution: the environment failed (not the agent's action, whose
	// problems come back in observation.error).
	CodeExecution Code = "EXECUTION_ERROR"
	// CodeCapacity: MaxSessions sessions are open.
	CodeCapacity Code = "CAPACITY_REACHED"
	// CodeFactory: the environment of a new session could not be made.
	CodeFactory Code = "FACTORY_ERROR"
	// CodeSession: no episode to act on: the session id is unknown or
	// expired, none was given to a stateful call, or reset was never sent.
	CodeSession Code = "SESSION_ERROR"

	// Extensions.

	// CodeTooLarge: the body or message exceeds the size limit.
	CodeTooLarge Code = "REQUEST_TOO_LARGE"
	// CodeMediaType: a body that is not declared as JSON.
	CodeMediaType Code = "UNSUPPORTED_MEDIA_TYPE"
	// CodeTimeout: the step did not finish within timeout_s (or the
	// server's StepTimeout); it changed nothing.
	CodeTimeout Code = "TIMEOUT"
	// CodeShuttingDown: the server is shutting down and opens no sessions.
	CodeShuttingDown Code = "SHUTTING_DOWN"
	// CodeUnauthorized: the server has an AuthToken and the request did not
	// carry it (as a Bearer token or a Basic password).
	CodeUnauthorized Code = "UNAUTHORIZED"
	// CodeForbidden: a state-changing request from a browser page of an
	// origin the server does not allow.
	CodeForbidden Code = "FORBIDDEN"
	// CodeClientClosed: the client went away while its step ran; the step
	// was cancelled and changed nothing (nobody reads this answer; it is
	// counted in the metrics as a client cancel, not a server error).
	CodeClientClosed Code = "CLIENT_CLOSED"
	// CodeBodyTimeout: the request body did not arrive within BodyTimeout.
	CodeBodyTimeout Code = "REQUEST_TIMEOUT"
)

// StatusOf is the one table from error codes to HTTP statuses.
var StatusOf = map[Code]int{
	CodeInvalidJSON:  http.StatusBadRequest,
	CodeUnknownType:  http.StatusBadRequest,
	CodeValidation:   http.StatusUnprocessableEntity,
	CodeExecution:    http.StatusInternalServerError,
	CodeCapacity:     http.StatusServiceUnavailable,
	CodeFactory:      http.StatusInternalServerError,
	CodeSession:      http.StatusNotFound,
	CodeTooLarge:     http.StatusRequestEntityTooLarge,
	CodeMediaType:    http.StatusUnsupportedMediaType,
	CodeTimeout:      http.StatusGatewayTimeout,
	CodeShuttingDown: http.StatusServiceUnavailable,
	CodeUnauthorized: http.StatusUnauthorized,
	CodeForbidden:    http.StatusForbidden,
	CodeClientClosed: 499, // nginx's "client closed request"
	CodeBodyTimeout:  http.StatusRequestTimeout,
}

// HTTPStatus returns the HTTP status of an error code (500 for codes it
// does not know).
func (c Code) HTTPStatus() int {
	if s, ok := StatusOf[c]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// Error is a protocol error: what the server sends in an error message or
// an error response, and what the clients return.
type Error struct {
	Code    Code
	Message string
	// Status is the HTTP status of the response that carried the error (0
	// for WebSocket errors).
	Status int
	// Fields holds the other fields of the error object (for
	// CAPACITY_REACHED: active_sessions and max_sessions).
	Fields map[string]any

	// problems say where a VALIDATION_ERROR lies, as Pydantic's error list
	// (set by Invalid; the server's side only).
	problems []problem
}

// problem is one entry of Pydantic's error list, as FastAPI's 422 "detail"
// and OpenEnv's WebSocket "errors" carry it: the error type (Pydantic's
// names: missing, string_type, extra_forbidden, …), where (loc: "body" or
// "header" then the field path; over a WebSocket, the path within the
// message's data), the message, and the offending input (bounded: see
// boundedInput).
type problem struct {
	Type  string `json:"type"`
	Loc   []any  `json:"loc"`
	Msg   string `json:"msg"`
	Input any    `json:"input"`
}

// Invalid is a VALIDATION_ERROR about the value input at loc.
func Invalid(typ string, loc []any, input json.RawMessage, format string, args ...any) *Error {
	e := Errorf(CodeValidation, format, args...)
	bounded := make([]any, len(loc))
	for i, l := range loc {
		if s, ok := l.(string); ok {
			l = Truncate(s, MaxQuotedBytes) // a field name is the client's input too
		}
		bounded[i] = l
	}
	e.problems = []problem{{Type: typ, Loc: bounded, Msg: e.Message, Input: boundedInput(input)}}
	return e
}

// MaxQuotedBytes bounds what an error quotes of a client's input in its
// message and location (a question id, a header, a field name): the error
// also echoes the input itself (up to MaxInputBytes) and repeats its message
// in the validation problem, so one bad value costs at most ~3 × 64 + 200
// bytes of the reply.
const MaxQuotedBytes = 64

// MaxInputBytes bounds the input an error echoes: FastAPI echoes it whole,
// which for a 1 MB argument makes a 1 MB error.
const MaxInputBytes = 200

// boundedInput is the input an error echoes: the JSON value when it is
// short, a long string cut to MaxInputBytes (then "…"), null for a long
// object or array.
func boundedInput(raw json.RawMessage) any {
	raw = bytes.TrimSpace(raw)
	switch {
	case len(raw) == 0:
		return nil
	case len(raw) <= MaxInputBytes:
		return raw
	case raw[0] == '"':
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return Truncate(s, MaxInputBytes)
		}
	}
	return nil
}

// Error renders the code and message.
func (e *Error) Error() string {
	return fmt.Sprintf("sqlenv server: %s: %s", e.Code, e.Message)
}

// Unwrap makes errors.Is(err, sqlenv.ErrNoEpisode) true for SESSION_ERROR,
// so callers of a remote sqlenv.Env handle it as they would in process.
func (e *Error) Unwrap() error {
	if e.Code == CodeSession {
		return sqlenv.ErrNoEpisode
	}
	return nil
}

// Errorf is an error of code with a message (cut to MaxMessageLen).
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: Truncate(fmt.Sprintf(format, args...), MaxMessageLen)}
}

// MaxMessageLen caps an error message: it may quote the offending value,
// which can be as large as a request (a 900 KB question_id once gave a
// 1.8 MB response).
const MaxMessageLen = 500

// JSON is the error object of both transports: the "data" of a
// WebSocket error message, and an HTTP error body, where "detail" repeats
// the message for clients written for FastAPI (OpenEnv's server).
//
// A validation error lists what failed as Pydantic does: over HTTP as
// FastAPI's 422 "detail" list, over WebSocket as OpenEnv's "errors".
func (e *Error) JSON(http bool) map[string]any {
	m := map[string]any{"code": e.Code, "message": e.Message}
	var detail any = e.Message
	if e.Code == CodeValidation {
		list := e.problems
		if len(list) == 0 {
			list = []problem{{Type: "value_error", Loc: []any{"body"}, Msg: e.Message}}
		}
		if http {
			detail = list
		} else {
			// Over a WebSocket, loc is the path within the message's data.
			ws := make([]problem, len(list))
			for i, p := range list {
				ws[i] = p
				if len(p.Loc) > 0 && p.Loc[0] == "body" {
					ws[i].Loc = p.Loc[1:]
				}
			}
			m["errors"] = ws
		}
	}
	if http {
		m["detail"] = detail
	}
	for k, v := range e.Fields {
		m[k] = v
	}
	return m
}

// ErrorFromJSON reads an error object back.
func ErrorFromJSON(m map[string]any, status int) *Error {
	e := &Error{Status: status}
	for k, v := range m {
		switch k {
		case "code":
			s, _ := v.(string)
			e.Code = Code(s)
		case "message":
			e.Message, _ = v.(string)
		case "detail":
			if e.Message == "" {
				if s, ok := v.(string); ok {
					e.Message = s
				} else {
					e.Message = fmt.Sprint(v)
				}
			}
		default:
			if e.Fields == nil {
				e.Fields = map[string]any{}
			}
			e.Fields[k] = v
		}
	}
	if e.Code == "" {
		e.Code = CodeOfStatus(status)
	}
	return e
}

// CodeOfStatus guesses the code of an error response without one (from a
// proxy, or a server that is not this one).
func CodeOfStatus(status int) Code {
	switch status {
	case http.StatusBadRequest:
		return CodeInvalidJSON
	case http.StatusUnprocessableEntity:
		return CodeValidation
	case http.StatusServiceUnavailable:
		return CodeCapacity
	case http.StatusNotFound:
		return CodeSession
	case http.StatusRequestEntityTooLarge:
		return CodeTooLarge
	case http.StatusUnsupportedMediaType:
		return CodeMediaType
	case http.StatusGatewayTimeout:
		return CodeTimeout
	}
	return CodeExecution
}

// Truncate cuts s to at most n bytes on a character boundary, marking the
// cut with "…".
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
