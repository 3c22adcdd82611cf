// Package progress derives the live progress of a version target (the
// progress field of a rollout target, schema TargetProgress) from the target
// and what its agent reports: the health component dev.myriarch.update of the
// updater, or only the OpAMP package status. It is pure; the caller passes now.
//
// The package does not import core/rollout, which stores a *TargetProgress:
// the caller adapts a rollout.Target into TargetFacts.
//
// The updater's reporting protocol is not specified in this repository
// beyond docs/rollouts.md ("Live progress of a version target"). This
// package assumes that the component's status is one of the phase names
// (offered, downloading, verifying, installing, restarting, health_check,
// rolling_back) or an end of the attempt (succeeded, failed, rolled_back), and
// that its step:<name> children are keyed by the step name, with or without
// the prefix "step:", with a StepStatus as status.
package progress

import "time"

// Phase is where an update stands (UpdatePhase). Steps are named after the
// phases they stand for.
type Phase string

const (
	PhaseOffered     Phase = "offered"
	PhaseDownloading Phase = "downloading"
	PhaseVerifying   Phase = "verifying"
	PhaseInstalling  Phase = "installing"
	PhaseRestarting  Phase = "restarting"
	PhaseHealthCheck Phase = "health_check"
	PhaseRollingBack Phase = "rolling_back"
	PhaseHealthWait  Phase = "health_wait"
	PhaseSucceeded   Phase = "succeeded"
	PhaseFailed      Phase = "failed"
	PhaseRolledBack  Phase = "rolled_back"
	PhaseCancelled   Phase = "cancelled"
)

// Final reports whether the phase ends an attempt.
func (p Phase) Final() bool {
	switch p {
	case PhaseSucceeded, PhaseFailed, PhaseRolledBack, PhaseCancelled:
		return true
	}
	return false
}

// Source says where the steps come from (ProgressSource).
type Source string

const (
	SourceUpdater       Source = "updater"        // steps reported by the host updater
	SourcePackageStatus Source = "package_status" // only the OpAMP package status is known
	SourceExecutor      Source = "executor"       // webhook, awx or manual: no host-side steps
)

// StepStatus is the status of one step.
type StepStatus string

const (
	StepPending StepStatus = "pending"
	StepRunning StepStatus = "running"
	StepDone    StepStatus = "done"
	StepFailed  StepStatus = "failed"
	StepSkipped StepStatus = "skipped"
)

// TargetProgress is the live progress of one started version target.
type TargetProgress struct {
	Phase           Phase     `json:"phase"`
	Source          Source    `json:"source"`
	Steps           []Step    `json:"steps"`
	DownloadPercent int       `json:"downloadPercent"`
	Error           string    `json:"error,omitempty"`
	Attempt         int       `json:"attempt"`
	FromVersion     string    `json:"fromVersion,omitempty"`
	ToVersion       string    `json:"toVersion"`
	UpdatedAt       time.Time `json:"updatedAt"`

	// FollowUntil is set while a failed target keeps following the updater's
	// health check or rollback (at most FollowLimit after the target
	// finished). It is stored so that the next derivation knows; it is no
	// part of the API schema, and it is cleared when the following ends.
	FollowUntil *time.Time `json:"followUntil,omitempty"`
}

// Step is one UpdateStep entry.
type Step struct {
	Name       Phase      `json:"name"`
	Status     StepStatus `json:"status"`
	StartedAt  *time.Time `json:"startedAt,omitempty"`
	FinishedAt *time.Time `json:"finishedAt,omitempty"`
	Detail     string     `json:"detail,omitempty"`
}

// Following reports whether the progress of a final target still follows
// the host; the engine keeps deriving it until this is false.
func (p *TargetProgress) Following() bool { return p != nil && p.FollowUntil != nil }

// Target statuses as core/rollout spells them (TargetFacts.Status).
const (
	statusPending       = "pending"
	statusWaitingWindow = "waiting_window"
	statusInProgress    = "in_progress"
	statusVerifying     = "verifying"
	statusSucceeded     = "succeeded"
	statusFailed        = "failed"
	statusSkipped       = "skipped"
	statusCancelled     = "cancelled"
	statusRolledBack    = "rolled_back"
)

// Executors that have no host-side steps; every other executor (the
// updater, the default) offers the package over OpAMP.
const (
	ExecutorUpdater = "updater"
	ExecutorWebhook = "webhook"
	ExecutorAWX     = "awx"
	ExecutorManual  = "manual"
)

// TargetFacts is what the derivation needs of a rollout target.
type TargetFacts struct {
	Status      string // the rollout target status: in_progress, verifying, succeeded, ...
	Reason      string // why the target failed; the error when the host gave none
	Attempt     int
	FromVersion string // FromRef, no leading v
	ToVersion   string // ToRef, no leading v
	StartedAt   *time.Time
	VerifiedAt  *time.Time
	FinishedAt  *time.Time
	RollbackAt  *time.Time // set when a rollback of the rollout reset the target
	Executor    string     // updater, webhook, awx or manual
}

func finalStatus(s string) bool {
	switch s {
	case statusSucceeded, statusFailed, statusSkipped, statusCancelled, statusRolledBack:
		return true
	}
	return false
}

// statusPhase is the phase that a final target status implies. A skipped
// target that had started (its agent left the fleet during a rollback) was
// not carried on, like a cancelled one.
func statusPhase(s string) Phase {
	switch s {
	case statusSucceeded:
		return PhaseSucceeded
	case statusFailed:
		return PhaseFailed
	case statusRolledBack:
		return PhaseRolledBack
	}
	return PhaseCancelled
}

// runningBecomes is what a step still running turns into when the target
// ends with the status: skipped when the target was not carried on, done
// when it succeeded, failed otherwise.
func runningBecomes(s string) StepStatus {
	switch s {
	case statusCancelled, statusSkipped:
		return StepSkipped
	case statusSucceeded:
		return StepDone
	}
	return StepFailed
}
