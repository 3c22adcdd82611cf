package asl

import "fmt"

// The error names that the States Language predefines (appendix A of the specification)
// and that the service adds.
const (
	ErrorAll                    = "States.ALL"
	ErrorHeartbeatTimeout       = "States.HeartbeatTimeout"
	ErrorTimeout                = "States.Timeout"
	ErrorTaskFailed             = "States.TaskFailed"
	ErrorPermissions            = "States.Permissions"
	ErrorResultPathMatchFailure = "States.ResultPathMatchFailure"
	ErrorParameterPathFailure   = "States.ParameterPathFailure"
	ErrorBranchFailed           = "States.BranchFailed"
	ErrorNoChoiceMatched        = "States.NoChoiceMatched"
	ErrorIntrinsicFailure       = "States.IntrinsicFailure"
	ErrorRuntime                = "States.Runtime"
	ErrorDataLimitExceeded      = "States.DataLimitExceeded"
)

// knownStatesErrors are the States.* names that ErrorEquals may use. The service's
// names for features this endpoint does not run (Distributed Map, JSONata) are
// accepted too, so that a definition is refused for the feature, not for its name.
var knownStatesErrors = map[string]bool{
	ErrorAll: true, ErrorHeartbeatTimeout: true, ErrorTimeout: true, ErrorTaskFailed: true,
	ErrorPermissions: true, ErrorResultPathMatchFailure: true, ErrorParameterPathFailure: true,
	ErrorBranchFailed: true, ErrorNoChoiceMatched: true, ErrorIntrinsicFailure: true,
	ErrorRuntime: true, ErrorDataLimitExceeded: true,
	"States.ExceedToleratedFailureThreshold": true, "States.ItemReaderFailed": true,
	"States.ResultWriterFailed": true, "States.QueryEvaluationError": true,
	"States.Http.Socket": true,
}

// Error is a failure that a state reports: the error name that Retry and Catch match
// and the human-readable cause. HasCause distinguishes an empty cause from none (the
// history omits a cause that was never given, as the service does).
type Error struct {
	Name     string
	Cause    string
	HasCause bool
}

func (e *Error) Error() string {
	if e.HasCause {
		return e.Name + ": " + e.Cause
	}
	return e.Name
}

// NewError returns an error with a cause.
func NewError(name, cause string) *Error {
	return &Error{Name: name, Cause: cause, HasCause: true}
}

// Runtimef returns a States.Runtime error. Runtime errors are terminal: neither Retry
// nor Catch (not even one naming States.Runtime) handles them, as on the service.
func Runtimef(format string, args ...any) *Error {
	return NewError(ErrorRuntime, fmt.Sprintf(format, args...))
}

// Terminal reports whether no Retry or Catch may handle the error.
func (e *Error) Terminal() bool { return e.Name == ErrorRuntime }

// Matches reports whether an ErrorEquals list handles the error name:
//   - the name itself;
//   - States.ALL, which matches every name (Terminal errors never reach matching);
//   - States.TaskFailed, which matches every name but States.Timeout.
func Matches(errorEquals []string, name string) bool {
	for _, e := range errorEquals {
		switch {
		case e == name:
			return true
		case e == ErrorAll:
			return true
		case e == ErrorTaskFailed && name != ErrorTimeout:
			return true
		}
	}
	return false
}
