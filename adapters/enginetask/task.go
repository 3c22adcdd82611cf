// Package enginetask is the adapter between the rollout state machine
// (statemachines/rollout.asl.json) and the engine: the tasks the state
// machine calls, one evaluation with its side effects, and the verdict
// that routes the execution. The same evaluation serves the agent-event Lambda and
// the API, so an agent report or an operator action takes effect at once.
package enginetask

import (
	"encoding/json"
)

// Task names, the "task" field of the payload.
const (
	TaskPrepare       = "prepare"
	TaskEvaluate      = "evaluate"
	TaskPark          = "park"
	TaskContinue      = "continue"
	TaskFinish        = "finish"
	TaskRecordFailure = "record-failure"
	TaskReadGates     = "read-gates"
)

// Input is the payload the state machine sends.
type Input struct {
	Task         string          `json:"task"`
	RolloutID    string          `json:"rolloutId"`
	Iteration    int             `json:"iteration"`
	ExecutionArn string          `json:"executionArn,omitempty"`
	TaskToken    string          `json:"taskToken,omitempty"`
	ParkedAs     string          `json:"parkedAs,omitempty"`
	Error        json.RawMessage `json:"error,omitempty"` // {"Error":..., "Cause":...} from a Catch
}

// Output is the state the execution carries between states.
type Output struct {
	RolloutID string `json:"rolloutId"`
	Iteration int    `json:"iteration"`
	Verdict   string `json:"verdict"`
	Status    string `json:"status"`
	// WaitUntil is when a Wait state ends (RFC 3339), for verdicts wait_*.
	WaitUntil string `json:"waitUntil,omitempty"`
	// Wave names the wave the rollout works on or waits for, and Stage the
	// stage (rollouts whose waves split by region or zone), for the console.
	Wave   string `json:"wave,omitempty"`
	Stage  string `json:"stage,omitempty"`
	Reason string `json:"reason,omitempty"`
	// TimeoutSeconds bounds a park for approval or a freeze: the state
	// machine's TimeoutSecondsPath, so that an approval expires and a
	// freeze ends even if nobody acts.
	TimeoutSeconds int64 `json:"timeoutSeconds,omitempty"`
	// Gates are the readings the "Reading gates" state took.
	Gates []GateReading `json:"gates,omitempty"`
}
