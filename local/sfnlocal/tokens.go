package sfnlocal

import (
	"crypto/rand"
	"encoding/base64"
	"strings"
	"sync"

	"github.com/myriarch/myriarch/local/sfnlocal/asl"
)

// taskToken is the token of one attempt of a .waitForTaskToken task.
type taskToken struct {
	token string
	exec  *execution

	mu     sync.Mutex
	closed bool // answered, timed out, or the task or execution ended
	result *tokenResult
	waiter *wakeup
}

type tokenResult struct {
	output string
	err    *asl.Error
}

func (s *Server) newToken(e *execution) *taskToken {
	var b [96]byte
	_, _ = rand.Read(b[:])
	t := &taskToken{token: "AQ" + base64.StdEncoding.EncodeToString(b[:]), exec: e}
	s.mu.Lock()
	s.tokens[t.token] = t
	s.mu.Unlock()
	return t
}

// close marks the token as no longer answerable.
func (t *taskToken) close() {
	t.mu.Lock()
	t.closed = true
	t.mu.Unlock()
}

// closeTokens closes the tokens of an execution that ended.
func (s *Server) closeTokens(e *execution) {
	s.mu.Lock()
	var list []*taskToken
	for _, t := range s.tokens {
		if t.exec == e {
			list = append(list, t)
		}
	}
	s.mu.Unlock()
	for _, t := range list {
		t.close()
	}
}

// await waits for the token's answer, the end of the execution (nil) or the
// task's timeout (timedOut): a timer fires w with wakeTimer. Either way but
// an answer, the token is closed, so a late SendTask* gets TaskTimedOut.
func (t *taskToken) await(sc *scope, w *wakeup) (res *tokenResult, timedOut bool) {
	t.mu.Lock()
	if t.result != nil {
		res := t.result
		t.mu.Unlock()
		return res, false
	}
	t.waiter = w
	t.mu.Unlock()
	r := sc.await(w)
	t.mu.Lock()
	defer t.mu.Unlock()
	t.waiter = nil
	if r == wakeDone || t.result != nil { // an answer that raced the timer wins
		return t.result, false
	}
	t.closed = true
	return nil, r == wakeTimer
}

// lookupToken finds the token of a SendTask* call.
func (s *Server) lookupToken(token *string) (*taskToken, *APIError) {
	if token == nil {
		return nil, notNull("taskToken")
	}
	if *token == "" || len(*token) > 2048 || strings.IndexFunc(*token, func(r rune) bool { return r <= ' ' || r > '~' }) >= 0 {
		return nil, apiErr(errInvalidToken, "Invalid Token: '%s'", *token)
	}
	s.mu.Lock()
	t, ok := s.tokens[*token]
	s.mu.Unlock()
	if !ok {
		return nil, apiErr(errTaskDoesNotExist, "Task Does Not Exist: '%s'", *token)
	}
	return t, nil
}

func taskTimedOut() *APIError {
	return apiErr(errTaskTimedOut, "Task Timed Out: 'Provided task does not exist anymore'")
}

// answer delivers a SendTaskSuccess or SendTaskFailure.
func (t *taskToken) answer(res *tokenResult) *APIError {
	t.mu.Lock()
	if t.closed || t.result != nil {
		t.mu.Unlock()
		return taskTimedOut()
	}
	t.result = res
	t.closed = true
	w := t.waiter
	t.mu.Unlock()
	if w != nil {
		w.fire(wakeDone)
	}
	return nil
}

type sendTaskSuccessInput struct {
	TaskToken *string `json:"taskToken"`
	Output    *string `json:"output"`
}

func (s *Server) sendTaskSuccess(in *sendTaskSuccessInput) (any, error) {
	t, err := s.lookupToken(in.TaskToken)
	if err != nil {
		return nil, err
	}
	if in.Output == nil {
		return nil, notNull("output")
	}
	if len(*in.Output) > maxPayload {
		return nil, apiErr(errInvalidOutput, "Invalid Output: 'The output exceeds the maximum size of %d bytes.'", maxPayload)
	}
	if _, derr := asl.Decode([]byte(*in.Output)); derr != nil {
		return nil, apiErr(errInvalidOutput, "Invalid Output: '%v'", derr)
	}
	if err := t.answer(&tokenResult{output: *in.Output}); err != nil {
		return nil, err
	}
	return struct{}{}, nil
}

type sendTaskFailureInput struct {
	TaskToken *string `json:"taskToken"`
	Error     *string `json:"error"`
	Cause     *string `json:"cause"`
}

func (s *Server) sendTaskFailure(in *sendTaskFailureInput) (any, error) {
	t, err := s.lookupToken(in.TaskToken)
	if err != nil {
		return nil, err
	}
	if in.Error != nil && len(*in.Error) > 256 {
		return nil, apiErr(errValidation, "1 validation error detected: Value at 'error' failed to satisfy constraint: Member must have length less than or equal to 256")
	}
	if in.Cause != nil && len(*in.Cause) > 32768 {
		return nil, apiErr(errValidation, "1 validation error detected: Value at 'cause' failed to satisfy constraint: Member must have length less than or equal to 32768")
	}
	fail := &asl.Error{}
	if in.Error != nil {
		fail.Name = *in.Error
	}
	if in.Cause != nil {
		fail.Cause, fail.HasCause = *in.Cause, true
	}
	if err := t.answer(&tokenResult{err: fail}); err != nil {
		return nil, err
	}
	return struct{}{}, nil
}

type sendTaskHeartbeatInput struct {
	TaskToken *string `json:"taskToken"`
}

func (s *Server) sendTaskHeartbeat(in *sendTaskHeartbeatInput) (any, error) {
	t, err := s.lookupToken(in.TaskToken)
	if err != nil {
		return nil, err
	}
	// Without HeartbeatSeconds (which sfnlocal refuses) a heartbeat only tells the caller
	// whether the task still waits, as on the service.
	t.mu.Lock()
	closed := t.closed
	t.mu.Unlock()
	if closed {
		return nil, taskTimedOut()
	}
	return struct{}{}, nil
}

// TaskTokenStateMachine is the state machine whose execution issued a
// task token: AWS authorizes states:SendTask* against it, so the local
// cloud's IAM proxy asks. A token it never issued is not found.
func (s *Server) TaskTokenStateMachine(token string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.tokens[token]
	if !ok {
		return "", false
	}
	return t.exec.machineArn, true
}
