package server

import (
	"errors"

	"github.com/gosqlenv/gosqlenv/sqlenv"
)

// stepError classifies an error returned by the environment.
func stepError(err error) *Error {
	var pe *Error
	switch {
	case errors.As(err, &pe):
		return pe
	case errors.Is(err, sqlenv.ErrNoEpisode):
		return errorf(CodeSession, "no episode: send reset first")
	case errors.Is(err, sqlenv.ErrClosed):
		return errorf(CodeSession, "the session is closed")
	case errors.Is(err, errStepTimeout):
		return errorf(CodeTimeout, "the step did not finish in time; it changed nothing")
	}
	return &Error{Code: CodeExecution, Message: err.Error()}
}

var errStepTimeout = errors.New("step timeout")
