package lambdas

import "fmt"

// The Invoke API's errors, each with the service's exception name (Code)
// and HTTP status, which Handler sends and the AWS SDK decodes.

// ThrottledError is TooManyRequestsException: every instance the function
// may have is busy.
type ThrottledError struct {
	Function string
	// Reason is the service's: ReservedFunctionConcurrentInvocationLimitExceeded
	// under a reservation, else ConcurrentInvocationLimitExceeded.
	Reason string
}

func (e *ThrottledError) Error() string {
	return fmt.Sprintf("TooManyRequestsException: Rate Exceeded. (%s: %s)", e.Function, e.Reason)
}

// NotFoundError is ResourceNotFoundException: no such function.
type NotFoundError struct{ Function string }

func (e *NotFoundError) Error() string {
	return fmt.Sprintf("ResourceNotFoundException: Function not found: %s", e.Function)
}

// PayloadTooLargeError is a request above 6 MB (synchronous) or 256 KB
// (asynchronous): HTTP 413, RequestTooLargeException in the API's model
// (which the SDK decodes; the service's message calls it
// RequestEntityTooLargeException in places).
type PayloadTooLargeError struct {
	Size, Limit int
	Operation   string // InvokeFunction or InvokeAsync
}

func (e *PayloadTooLargeError) Error() string {
	return "RequestTooLargeException: " + e.message()
}

func (e *PayloadTooLargeError) message() string {
	return fmt.Sprintf("Request must be smaller than %d bytes for the %s operation", e.Limit, e.Operation)
}

// Payload limits of the Invoke API.
const (
	syncPayloadLimit  = 6 * 1024 * 1024
	asyncPayloadLimit = 256 * 1024
)

func checkSize(payload []byte, async bool) error {
	limit, op := syncPayloadLimit, "InvokeFunction"
	if async {
		limit, op = asyncPayloadLimit, "InvokeAsync"
	}
	if len(payload) > limit {
		return &PayloadTooLargeError{Size: len(payload), Limit: limit, Operation: op}
	}
	return nil
}
