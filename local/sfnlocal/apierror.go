package sfnlocal

import "fmt"

// APIError is an error of the Step Functions API: Type is the service's error name
// (ExecutionDoesNotExist, InvalidDefinition, ...), returned as "__type" with HTTP 400.
type APIError struct {
	Type    string
	Message string
}

func (e *APIError) Error() string { return e.Type + ": " + e.Message }

func apiErr(typ, format string, args ...any) *APIError {
	return &APIError{Type: typ, Message: fmt.Sprintf(format, args...)}
}

// The service's error names used by this endpoint.
const (
	errExecutionAlreadyExists       = "ExecutionAlreadyExists"
	errExecutionDoesNotExist        = "ExecutionDoesNotExist"
	errInvalidArn                   = "InvalidArn"
	errInvalidDefinition            = "InvalidDefinition"
	errInvalidExecutionInput        = "InvalidExecutionInput"
	errInvalidName                  = "InvalidName"
	errInvalidOutput                = "InvalidOutput"
	errInvalidToken                 = "InvalidToken"
	errMissingRequiredParameter     = "MissingRequiredParameter"
	errStateMachineAlreadyExists    = "StateMachineAlreadyExists"
	errStateMachineDoesNotExist     = "StateMachineDoesNotExist"
	errStateMachineTypeNotSupported = "StateMachineTypeNotSupported"
	errTaskDoesNotExist             = "TaskDoesNotExist"
	errTaskTimedOut                 = "TaskTimedOut"
	errValidation                   = "ValidationException"
	errUnknownOperation             = "UnknownOperationException"
	errSerialization                = "SerializationException"
)

func notNull(field string) *APIError {
	return apiErr(errValidation, "1 validation error detected: Value null at '%s' failed to satisfy constraint: Member must not be null", field)
}
