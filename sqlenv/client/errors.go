package client

import (
	"time"

	"github.com/gosqlenv/gosqlenv/sqlenv/internal/protocol"
)

// Code names an error of the protocol (the same codes as sqlenv/server's).
type Code = protocol.Code

// Error is a protocol error the server answered; errors.Is(err,
// sqlenv.ErrNoEpisode) holds for SESSION_ERROR, so callers of a remote
// sqlenv.Env handle it as they would in process.
type Error = protocol.Error

// Error codes.
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

func setDefault[T int | int64 | time.Duration](v *T, def T) {
	if *v == 0 {
		*v = def
	}
}
