package sfnlocal

import (
	"github.com/google/uuid"

	"bytes"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
)

// action decodes a request body and runs an operation.
type action func(body []byte) (any, error)

func op[In any](fn func(*In) (any, error)) action {
	return func(body []byte) (any, error) {
		in := new(In)
		if len(bytes.TrimSpace(body)) > 0 {
			if err := json.Unmarshal(body, in); err != nil {
				return nil, apiErr(errSerialization, "Start of structure or map found where not expected: %v", err)
			}
		}
		return fn(in)
	}
}

func (s *Server) actions() map[string]action {
	return map[string]action{
		"CreateStateMachine":  op(s.createStateMachine),
		"ListStateMachines":   op(s.listStateMachines),
		"StartExecution":      op(s.startExecution),
		"StartSyncExecution":  op(s.startSyncExecution),
		"DescribeExecution":   op(s.describeExecution),
		"ListExecutions":      op(s.listExecutions),
		"StopExecution":       op(s.stopExecution),
		"GetExecutionHistory": op(s.getExecutionHistory),
		"SendTaskSuccess":     op(s.sendTaskSuccess),
		"SendTaskFailure":     op(s.sendTaskFailure),
		"SendTaskHeartbeat":   op(s.sendTaskHeartbeat),
	}
}

func (s *Server) startSyncExecution(in *startExecutionInput) (any, error) {
	return nil, apiErr(errStateMachineTypeNotSupported, "This operation is not supported by this type of state machine")
}

const targetPrefix = "AWSStepFunctions."

// ServeHTTP serves the Step Functions JSON 1.0 protocol: POST / with
// X-Amz-Target: AWSStepFunctions.<Action>. Errors are HTTP 400 with
// {"__type": name, "message": text}. Request signatures are not checked.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	requestID := uuid.NewString()
	w.Header().Set("x-amzn-RequestId", requestID)
	if r.Method != http.MethodPost {
		writeError(w, http.StatusMethodNotAllowed, apiErr(errUnknownOperation, "only POST is supported"))
		return
	}
	target := r.Header.Get("X-Amz-Target")
	name, ok := strings.CutPrefix(target, targetPrefix)
	act := s.actions()[name]
	if !ok || act == nil {
		writeError(w, http.StatusBadRequest, apiErr(errUnknownOperation, "Unknown operation %s", target))
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 4*maxPayload))
	if err != nil {
		writeError(w, http.StatusBadRequest, apiErr(errSerialization, "cannot read the request: %v", err))
		return
	}
	out, err := act(body)
	if err != nil {
		var ae *APIError
		if !errors.As(err, &ae) {
			ae = apiErr("InternalFailure", "%v", err)
		}
		s.logf(slog.LevelDebug, "sfnlocal api error", "action", name, "type", ae.Type, "message", ae.Message)
		writeError(w, http.StatusBadRequest, ae)
		return
	}
	data, err := json.Marshal(out)
	if err != nil {
		writeError(w, http.StatusInternalServerError, apiErr("InternalFailure", "%v", err))
		return
	}
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	_, _ = w.Write(data)
}

func writeError(w http.ResponseWriter, status int, e *APIError) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	w.Header().Set("X-Amzn-ErrorType", e.Type)
	w.WriteHeader(status)
	data, _ := json.Marshal(map[string]string{"__type": e.Type, "message": e.Message})
	_, _ = w.Write(data)
}
