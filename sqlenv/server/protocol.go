package server

import "github.com/gosqlenv/gosqlenv/sqlenv/internal/protocol"

// The protocol's shared definitions (sqlenv/internal/protocol), under the
// names this package has always exported, and short local names.

// Code names an error of the protocol (see the Code constants).
type Code = protocol.Code

// Error is a protocol error: what the server sends in an error message or
// an error response.
type Error = protocol.Error

// Error codes; see protocol.StatusOf for their HTTP statuses.
const (
	CodeInvalidJSON  = protocol.CodeInvalidJSON
	CodeUnknownType  = protocol.CodeUnknownType
	CodeValidation   = protocol.CodeValidation
	CodeExecution    = protocol.CodeExecution
	CodeCapacity     = protocol.CodeCapacity
	CodeFactory      = protocol.CodeFactory
	CodeSession      = protocol.CodeSession
	CodeTooLarge     = protocol.CodeTooLarge
	CodeMediaType    = protocol.CodeMediaType
	CodeTimeout      = protocol.CodeTimeout
	CodeShuttingDown = protocol.CodeShuttingDown
	CodeUnauthorized = protocol.CodeUnauthorized
	CodeForbidden    = protocol.CodeForbidden
	CodeClientClosed = protocol.CodeClientClosed
	CodeBodyTimeout  = protocol.CodeBodyTimeout
)

// SessionHeader carries the id of a stateful HTTP session: set on /reset's
// response, and read by /step, /state and /reset (to reuse a session).
const SessionHeader = protocol.SessionHeader

type (
	resultJSON    = protocol.ResultJSON
	stateJSON     = protocol.StateJSON
	wsEnvelope    = protocol.Envelope
	questionsJSON = protocol.Questions
	questionJSON  = protocol.Question
)

const (
	maxMessageLen = protocol.MaxMessageLen
	maxInputBytes = protocol.MaxInputBytes
	maxQuoted     = protocol.MaxQuotedBytes // what an error message quotes of a client's input
)

var (
	statusOf     = protocol.StatusOf
	errorf       = protocol.Errorf
	invalid      = protocol.Invalid
	truncate     = protocol.Truncate
	encodeResult = protocol.EncodeResult
	encodeState  = protocol.EncodeState
)
