// Package rollout is the state of a rollout, its waves and its targets, with
// the statuses of docs/rollouts.md and the operator actions as pure transitions.
package rollout

import "errors"

// Status of a rollout.
type Status string

const (
	Pending         Status = "pending"
	Running         Status = "running"
	WaitingApproval Status = "waiting_approval"
	Paused          Status = "paused"
	// Frozen: the next stage waits for a freeze of its regions to end; the
	// rollout goes on by itself then (or with a freeze override).
	Frozen      Status = "frozen"
	Completed   Status = "completed"
	Failed      Status = "failed"
	Aborted     Status = "aborted"
	RollingBack Status = "rolling_back"
	RolledBack  Status = "rolled_back"
	Superseded  Status = "superseded"
)

// Statuses lists every rollout status, in the order of docs/rollouts.md.
var Statuses = []Status{Pending, Running, WaitingApproval, Paused, Frozen, Completed, Failed, Aborted, RollingBack, RolledBack, Superseded}

// Final reports whether no transition leaves the status. failed is not final:
// a person decides (rollback, abort or retry-failed).
func (s Status) Final() bool {
	switch s {
	case Completed, Aborted, RolledBack, Superseded:
		return true
	}
	return false
}

// Active reports whether the rollout counts as the one active rollout of its
// fleet and kind: every status that is not final.
func (s Status) Active() bool { return !s.Final() }

// WaveStatus of a wave.
type WaveStatus string

const (
	WavePending         WaveStatus = "pending"
	WaveWaitingApproval WaveStatus = "waiting_approval"
	WaveRunning         WaveStatus = "running"
	WaveCompleted       WaveStatus = "completed"
	WaveFailed          WaveStatus = "failed"
	WaveSkipped         WaveStatus = "skipped"
)

// TargetStatus of a target.
type TargetStatus string

const (
	TargetPending       TargetStatus = "pending"
	TargetWaitingWindow TargetStatus = "waiting_window"
	TargetInProgress    TargetStatus = "in_progress"
	TargetVerifying     TargetStatus = "verifying"
	TargetSucceeded     TargetStatus = "succeeded"
	TargetFailed        TargetStatus = "failed"
	TargetSkipped       TargetStatus = "skipped"
	TargetCancelled     TargetStatus = "cancelled"
	TargetRolledBack    TargetStatus = "rolled_back"
)

// TargetStatuses lists every target status in the order of docs/rollouts.md.
var TargetStatuses = []TargetStatus{TargetPending, TargetWaitingWindow, TargetInProgress, TargetVerifying, TargetSucceeded,
	TargetFailed, TargetSkipped, TargetCancelled, TargetRolledBack}

// Final reports whether the target has a final state for its wave: succeeded,
// failed, skipped, cancelled or rolled_back.
func (s TargetStatus) Final() bool {
	switch s {
	case TargetSucceeded, TargetFailed, TargetSkipped, TargetCancelled, TargetRolledBack:
		return true
	}
	return false
}

// Open reports whether the target still waits for or does work: pending,
// waiting_window, in_progress or verifying.
func (s TargetStatus) Open() bool {
	switch s {
	case TargetPending, TargetWaitingWindow, TargetInProgress, TargetVerifying:
		return true
	}
	return false
}

// Started reports whether the target was started and has not finished
// without effect: in_progress, verifying, succeeded or failed. These are the
// targets a rollback resets.
func (s TargetStatus) Started() bool {
	switch s {
	case TargetInProgress, TargetVerifying, TargetSucceeded, TargetFailed:
		return true
	}
	return false
}

// NotStarted reports whether the target has not started yet.
func (s TargetStatus) NotStarted() bool {
	return s == TargetPending || s == TargetWaitingWindow
}

// ErrConflict is what a store returns when a conditional write lost a race:
// the caller re-reads and decides again, it never overwrites.
var ErrConflict = errors.New("conditional write lost a race")

// ErrNotFound is what a store wraps when a rollout does not exist.
var ErrNotFound = errors.New("rollout not found")
