package sfnlocal

import (
	"github.com/google/uuid"

	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/myriarch/myriarch/local/sfnlocal/asl"
)

// Execution statuses.
const (
	statusRunning   = "RUNNING"
	statusSucceeded = "SUCCEEDED"
	statusFailed    = "FAILED"
	statusTimedOut  = "TIMED_OUT"
	statusAborted   = "ABORTED"
)

// maxPayload is the service's limit on inputs, outputs and results (256 KiB).
const maxPayload = 256 * 1024

// execution is one run of a state machine with its history.
type execution struct {
	s           *Server
	arn         string
	name        string
	machineArn  string
	machineName string
	roleArn     string
	definition  string
	def         *asl.Definition
	input       string
	inputValue  any
	started     time.Time
	root        *scope
	seq         int // creation order, to list executions started at the same instant

	mu      sync.Mutex
	status  string
	stopped time.Time
	output  *string
	errName *string
	cause   *string
	events  []*event
}

func (e *execution) currentStatus() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.status
}

// thread is the execution's chain of events: previousEventId of each event is the
// previous one.
type thread struct {
	e    *execution
	sc   *scope
	prev int64
}

// emit appends an event unless the execution has ended, and returns its id (0 if not
// appended).
func (t *thread) emit(typ, key string, details any) int64 {
	id := t.e.append(t.prev, typ, key, details)
	if id != 0 {
		t.prev = id
	}
	return id
}

func (e *execution) append(prev int64, typ, key string, details any) int64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.status != statusRunning {
		return 0
	}
	return e.appendLocked(prev, typ, key, details)
}

func (e *execution) appendLocked(prev int64, typ, key string, details any) int64 {
	ev := &event{ID: int64(len(e.events) + 1), Prev: prev, Timestamp: e.s.clock.Now(), Type: typ, detailsKey: key, details: details}
	e.events = append(e.events, ev)
	e.s.logf(slog.LevelDebug, "sfnlocal event", "execution", e.arn, "id", ev.ID, "type", typ)
	return ev.ID
}

// finish ends a running execution: it records the closing event, closes its task tokens and cancels its goroutines. It reports false if the execution
// had already ended.
func (e *execution) finish(status string, prev int64, typ, key string, details any, output, errName, cause *string) bool {
	e.mu.Lock()
	if e.status != statusRunning {
		e.mu.Unlock()
		return false
	}
	e.appendLocked(prev, typ, key, details)
	e.status = status
	e.stopped = e.s.clock.Now()
	e.output, e.errName, e.cause = output, errName, cause
	e.mu.Unlock()
	e.root.cancel()
	e.s.closeTokens(e)
	return true
}

func (e *execution) succeed(prev int64, output any) {
	out := asl.Encode(output)
	if len(out) > maxPayload {
		e.fail(prev, asl.NewError(asl.ErrorDataLimitExceeded, "The state/task 'execution' returned a result with a size exceeding the maximum number of bytes service limit."))
		return
	}
	e.finish(statusSucceeded, prev, "ExecutionSucceeded", "executionSucceededEventDetails",
		executionSucceededDetails{Output: &out, OutputDetails: notTruncated}, &out, nil, nil)
}

func (e *execution) fail(prev int64, err *asl.Error) {
	name := err.Name
	var cause *string
	if err.HasCause {
		cause = strPtr(err.Cause)
	}
	e.finish(statusFailed, prev, "ExecutionFailed", "executionFailedEventDetails",
		errorDetails{Error: &name, Cause: cause}, nil, &name, cause)
}

type startExecutionInput struct {
	StateMachineArn *string `json:"stateMachineArn"`
	Name            *string `json:"name"`
	Input           *string `json:"input"`
	TraceHeader     *string `json:"traceHeader"`
}

type startExecutionOutput struct {
	ExecutionArn string       `json:"executionArn"`
	StartDate    epochSeconds `json:"startDate"`
}

func (s *Server) startExecution(in *startExecutionInput) (any, error) {
	if in.StateMachineArn == nil {
		return nil, notNull("stateMachineArn")
	}
	name := uuid.NewString()
	if in.Name != nil {
		name = *in.Name
		if !validName(name) {
			return nil, apiErr(errInvalidName, "Invalid Name: '%s'", name)
		}
	}
	input := "{}"
	if in.Input != nil {
		input = *in.Input
	}
	if len(input) > maxPayload {
		return nil, apiErr(errInvalidExecutionInput, "Invalid State Machine Execution Input: 'The input exceeds the maximum size of %d bytes.'", maxPayload)
	}
	value, err := asl.Decode([]byte(input))
	if err != nil {
		if input == "" {
			return nil, apiErr(errInvalidExecutionInput, "Invalid State Machine Execution Input: 'Invalid execution input.'")
		}
		return nil, apiErr(errInvalidExecutionInput, "Invalid State Machine Execution Input: '%v'", err)
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, apiErr(errValidation, "the endpoint is closed")
	}
	sm, apiErr := s.lookupMachine(*in.StateMachineArn)
	if apiErr != nil {
		s.mu.Unlock()
		return nil, apiErr
	}
	arn := s.executionARN(sm.name, name)
	if prev, ok := s.executions[arn]; ok {
		s.mu.Unlock()
		// Idempotent for the same name and input while the execution runs.
		if prev.input == input && prev.currentStatus() == statusRunning {
			return startExecutionOutput{ExecutionArn: arn, StartDate: epochSeconds(prev.started)}, nil
		}
		return nil, executionAlreadyExists(arn)
	}
	e := &execution{
		s: s, arn: arn, name: name, machineArn: sm.arn, machineName: sm.name, roleArn: sm.roleArn,
		definition: sm.definition, def: sm.parsed, input: input, inputValue: value,
		started: s.clock.Now(), root: newScope(nil), status: statusRunning, seq: len(s.executions),
	}
	s.executions[arn] = e
	s.mu.Unlock()
	e.start()
	return startExecutionOutput{ExecutionArn: arn, StartDate: epochSeconds(e.started)}, nil
}

func executionAlreadyExists(arn string) *APIError {
	return apiErr(errExecutionAlreadyExists, "Execution Already Exists: '%s'", arn)
}

// start records ExecutionStarted and runs the execution in its own goroutine.
func (e *execution) start() {
	input := e.input
	e.mu.Lock()
	e.appendLocked(0, "ExecutionStarted", "executionStartedEventDetails",
		executionStartedDetails{Input: &input, InputDetails: notTruncated, RoleArn: e.roleArn})
	e.mu.Unlock()
	e.s.busy.add(1)
	go e.run()
}

type executionArnInput struct {
	ExecutionArn *string `json:"executionArn"`
}

type describeExecutionOutput struct {
	ExecutionArn        string        `json:"executionArn"`
	StateMachineArn     string        `json:"stateMachineArn"`
	Name                string        `json:"name"`
	Status              string        `json:"status"`
	StartDate           epochSeconds  `json:"startDate"`
	StopDate            *epochSeconds `json:"stopDate,omitempty"`
	Input               string        `json:"input"`
	InputDetails        cloudWatch    `json:"inputDetails"`
	Output              *string       `json:"output,omitempty"`
	OutputDetails       *cloudWatch   `json:"outputDetails,omitempty"`
	Error               *string       `json:"error,omitempty"`
	Cause               *string       `json:"cause,omitempty"`
	RedriveCount        int           `json:"redriveCount"`
	RedriveStatus       string        `json:"redriveStatus"`
	RedriveStatusReason string        `json:"redriveStatusReason"`
}

type cloudWatch struct {
	Included bool `json:"included"`
}

func (s *Server) describeExecution(in *executionArnInput) (any, error) {
	if in.ExecutionArn == nil {
		return nil, notNull("executionArn")
	}
	e, err := s.lookupExecution(*in.ExecutionArn)
	if err != nil {
		return nil, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	out := describeExecutionOutput{
		ExecutionArn: e.arn, StateMachineArn: e.machineArn, Name: e.name, Status: e.status,
		StartDate: epochSeconds(e.started), Input: e.input, InputDetails: cloudWatch{Included: true},
		Error: e.errName, Cause: e.cause,
		RedriveStatus: "NOT_REDRIVABLE", RedriveStatusReason: "Execution is " + e.status + " and cannot be redriven",
	}
	if e.status != statusRunning {
		stop := epochSeconds(e.stopped)
		out.StopDate = &stop
	}
	if e.output != nil {
		out.Output, out.OutputDetails = e.output, &cloudWatch{Included: true}
	}
	return out, nil
}

type listExecutionsInput struct {
	StateMachineArn *string `json:"stateMachineArn"`
	StatusFilter    *string `json:"statusFilter"`
	MaxResults      int32   `json:"maxResults"`
	NextToken       *string `json:"nextToken"`
	MapRunArn       *string `json:"mapRunArn"`
	RedriveFilter   *string `json:"redriveFilter"`
}

type executionListItem struct {
	ExecutionArn    string        `json:"executionArn"`
	StateMachineArn string        `json:"stateMachineArn"`
	Name            string        `json:"name"`
	Status          string        `json:"status"`
	StartDate       epochSeconds  `json:"startDate"`
	StopDate        *epochSeconds `json:"stopDate,omitempty"`
	RedriveCount    int           `json:"redriveCount"`
}

type listExecutionsOutput struct {
	Executions []executionListItem `json:"executions"`
	NextToken  string              `json:"nextToken,omitempty"`
}

func (s *Server) listExecutions(in *listExecutionsInput) (any, error) {
	if in.MapRunArn != nil {
		return nil, apiErr(errValidation, "sfnlocal does not support map runs (Distributed Map)")
	}
	if in.StateMachineArn == nil {
		return nil, apiErr(errValidation, "Must provide a StateMachine ARN or MapRun ARN")
	}
	if in.StatusFilter != nil {
		switch *in.StatusFilter {
		case statusRunning, statusSucceeded, statusFailed, statusTimedOut, statusAborted, "PENDING_REDRIVE":
		default:
			return nil, apiErr(errValidation, "1 validation error detected: Value '%s' at 'statusFilter' failed to satisfy constraint: Member must satisfy enum value set: [SUCCEEDED, TIMED_OUT, PENDING_REDRIVE, ABORTED, FAILED, RUNNING]", *in.StatusFilter)
		}
	}
	s.mu.Lock()
	if _, err := s.lookupMachine(*in.StateMachineArn); err != nil {
		s.mu.Unlock()
		return nil, err
	}
	var list []*execution
	for _, e := range s.executions {
		if e.machineArn == *in.StateMachineArn {
			list = append(list, e)
		}
	}
	s.mu.Unlock()
	// Newest first, as the service lists them.
	sort.Slice(list, func(i, j int) bool {
		if !list[i].started.Equal(list[j].started) {
			return list[i].started.After(list[j].started)
		}
		return list[i].seq > list[j].seq
	})
	items := []executionListItem{}
	for _, e := range list {
		e.mu.Lock()
		item := executionListItem{ExecutionArn: e.arn, StateMachineArn: e.machineArn, Name: e.name, Status: e.status, StartDate: epochSeconds(e.started)}
		if e.status != statusRunning {
			stop := epochSeconds(e.stopped)
			item.StopDate = &stop
		}
		e.mu.Unlock()
		if in.StatusFilter == nil || *in.StatusFilter == item.Status {
			items = append(items, item)
		}
	}
	page, next, err := paginate(items, in.MaxResults, in.NextToken, 3096, "ListExecutions")
	if err != nil {
		return nil, err
	}
	return listExecutionsOutput{Executions: page, NextToken: next}, nil
}

type stopExecutionInput struct {
	ExecutionArn *string `json:"executionArn"`
	Error        *string `json:"error"`
	Cause        *string `json:"cause"`
}

type stopExecutionOutput struct {
	StopDate epochSeconds `json:"stopDate"`
}

func (s *Server) stopExecution(in *stopExecutionInput) (any, error) {
	if in.ExecutionArn == nil {
		return nil, notNull("executionArn")
	}
	if in.Error != nil && len(*in.Error) > 256 {
		return nil, apiErr(errValidation, "1 validation error detected: Value at 'error' failed to satisfy constraint: Member must have length less than or equal to 256")
	}
	if in.Cause != nil && len(*in.Cause) > 32768 {
		return nil, apiErr(errValidation, "1 validation error detected: Value at 'cause' failed to satisfy constraint: Member must have length less than or equal to 32768")
	}
	e, err := s.lookupExecution(*in.ExecutionArn)
	if err != nil {
		return nil, err
	}
	e.finish(statusAborted, 0, "ExecutionAborted", "executionAbortedEventDetails",
		errorDetails{Error: in.Error, Cause: in.Cause}, nil, in.Error, in.Cause)
	e.mu.Lock()
	defer e.mu.Unlock()
	return stopExecutionOutput{StopDate: epochSeconds(e.stopped)}, nil
}

type getExecutionHistoryInput struct {
	ExecutionArn         *string `json:"executionArn"`
	MaxResults           int32   `json:"maxResults"`
	NextToken            *string `json:"nextToken"`
	ReverseOrder         bool    `json:"reverseOrder"`
	IncludeExecutionData *bool   `json:"includeExecutionData"`
}

type getExecutionHistoryOutput struct {
	Events    []*event `json:"events"`
	NextToken string   `json:"nextToken,omitempty"`
}

func (s *Server) getExecutionHistory(in *getExecutionHistoryInput) (any, error) {
	if in.ExecutionArn == nil {
		return nil, notNull("executionArn")
	}
	e, err := s.lookupExecution(*in.ExecutionArn)
	if err != nil {
		return nil, err
	}
	e.mu.Lock()
	events := append([]*event(nil), e.events...)
	e.mu.Unlock()
	if in.ReverseOrder {
		for i, j := 0, len(events)-1; i < j; i, j = i+1, j-1 {
			events[i], events[j] = events[j], events[i]
		}
	}
	op := "GetExecutionHistory"
	if in.ReverseOrder {
		op += "Reverse"
	}
	page, next, apiErr := paginate(events, in.MaxResults, in.NextToken, 3096, op)
	if apiErr != nil {
		return nil, apiErr
	}
	if in.IncludeExecutionData != nil && !*in.IncludeExecutionData {
		stripped := make([]*event, len(page))
		for i, ev := range page {
			stripped[i] = ev.withoutData()
		}
		page = stripped
	}
	return getExecutionHistoryOutput{Events: page, NextToken: next}, nil
}
