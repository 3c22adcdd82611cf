// Package schema holds the JSON shapes of api/openapi.yaml that the REST
// API (adapters/api) serves and its client (adapters/client) reads: one set of types,
// so that the two cannot drift apart. It imports only the core packages
// whose values the shapes carry, never the server.
package schema

import (
	"time"

	"github.com/myriarch/myriarch/core/gate"
	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/core/progress"
	"github.com/myriarch/myriarch/core/rollout"
	"github.com/myriarch/myriarch/core/selector"
	"github.com/myriarch/myriarch/core/windows"
)

// Rollout is the schema Rollout. Waves carry counts and TargetCounts is set
// when the rollout was read alone (getRollout) or after an action.
type Rollout struct {
	ID             string         `json:"id"`
	Fleet          string         `json:"fleet"`
	Kind           policy.Kind    `json:"kind"`
	Status         rollout.Status `json:"status"`
	StatusReason   string         `json:"statusReason,omitempty"`
	Origin         rollout.Origin `json:"origin"`
	CreatedBy      string         `json:"createdBy,omitempty"`
	CreatedByActor string         `json:"createdByActor,omitempty"`
	// AppliedBy is who applied the revision of a GitOps rollout through the
	// API (getRollout only): the rule of no self-approval counts them as
	// its creators beside CreatedBy.
	AppliedBy     []Decision        `json:"appliedBy,omitempty"`
	RequestReason string            `json:"requestReason,omitempty"`
	ToRef         string            `json:"toRef"`
	Executor      string            `json:"executor,omitempty"`
	Annotations   map[string]string `json:"annotations,omitempty"`
	CreatedAt     time.Time         `json:"createdAt"`
	StartedAt     *time.Time        `json:"startedAt,omitempty"`
	FinishedAt    *time.Time        `json:"finishedAt,omitempty"`
	Policy        PolicySnapshot    `json:"policy"`
	Waves         []Wave            `json:"waves"`
	// Stages and Progress ("passed/total" stages) are there when the
	// policy splits waves by region or zone.
	Stages        []Stage         `json:"stages,omitempty"`
	Progress      string          `json:"progress,omitempty"`
	TargetCounts  *TargetCounts   `json:"targetCounts,omitempty"`
	AckedFailures []AckedFailures `json:"ackedFailures"`
	// FreezeOverride is who bypassed every freeze for the rest of the
	// rollout (resume or approve with freezeOverride).
	FreezeOverride *Decision `json:"freezeOverride,omitempty"`
	// Prediction is the predicted rest of a rollout the engine evaluates
	// (getRollout only), recomputed at every read.
	Prediction *Prediction `json:"prediction,omitempty"`
	// ExecutionArn is the Step Functions execution that runs the rollout
	// now (a long rollout continues as a new one), which the rollout page
	// links in the console. An identifier, not a credential: the task
	// token that completes its park is never shown.
	ExecutionArn string `json:"executionArn,omitempty"`
}

// Decision is the schema Decision: an approval, a rejection or an expiry
// of a wave, or a freeze override. By is the display name, ByActor the
// actor reference (none for an expiry, whose By is "system").
type Decision struct {
	By      string    `json:"by"`
	ByActor string    `json:"byActor,omitempty"`
	At      time.Time `json:"at"`
	Reason  string    `json:"reason,omitempty"`
}

// Stage is the schema RolloutStage: one stage of a rollout whose waves
// split by region or zone.
type Stage struct {
	Name       string              `json:"name"`
	Wave       int                 `json:"wave"`
	Status     rollout.StageStatus `json:"status"`
	StartedAt  *time.Time          `json:"startedAt,omitempty"`
	BakeUntil  *time.Time          `json:"bakeUntil,omitempty"`
	FinishedAt *time.Time          `json:"finishedAt,omitempty"`
	Passes     []StagePass         `json:"passes"`
	// Held says which freeze holds a frozen stage and until when; LastRed
	// is the last red gate of the stage, kept when a new bake begins; Gate
	// is the health gate of its current (or last) bake.
	Held    string     `json:"held,omitempty"`
	LastRed string     `json:"lastRed,omitempty"`
	Gate    *GateState `json:"gate,omitempty"`
}

// GateState is the schema GateState: the readings of the health gate of
// one bake. NextAt is absent when no reading is due any more.
type GateState struct {
	Since          time.Time     `json:"since"`
	Until          time.Time     `json:"until"`
	NextAt         *time.Time    `json:"nextAt,omitempty"`
	Readings       int           `json:"readings"`
	ConsecutiveRed int           `json:"consecutiveRed"`
	LastRed        string        `json:"lastRed,omitempty"`
	Recent         []GateReading `json:"recent,omitempty"`
}

// GateReading is the schema GateReading: one reading, with its red results
// (dry-run ones included, marked).
type GateReading struct {
	At      time.Time     `json:"at"`
	Red     bool          `json:"red"`
	Checked int           `json:"checked"`
	Results []gate.Result `json:"results,omitempty"`
}

// BatchGate is the schema BatchGate: the gate read after batch Batch of a
// pass, on that batch's targets.
type BatchGate struct {
	Batch int `json:"batch"`
	GateState
}

// StagePass is the schema StagePass: a region's or zone's work in a stage.
// BatchesDone (batches whose targets are all final) is in the rollout's
// detail only.
type StagePass struct {
	Name        string `json:"name"`
	Region      string `json:"region,omitempty"`
	Zone        string `json:"zone,omitempty"`
	Targets     int    `json:"targets"`
	BatchSize   int    `json:"batchSize"`
	Batches     int    `json:"batches"`
	BatchesDone *int   `json:"batchesDone,omitempty"`
	// Cleared counts the batches whose batch gate passed; Gate is the batch
	// gate read last (waves with batchGate).
	Cleared int        `json:"cleared,omitempty"`
	Gate    *BatchGate `json:"gate,omitempty"`
	// Regions and Zones are those a gate of the pass queries: its own
	// region and zone when its wave splits by them, else the distinct
	// values its agents report, sorted (getRollout only). Agents are the
	// ids of its agents in batch order, then by id, at most MaxPassAgents
	// (in the rollout's detail only); Targets says how many it has.
	Regions []string `json:"regions,omitempty"`
	Zones   []string `json:"zones,omitempty"`
	Agents  []string `json:"agents,omitempty"`
}

// MaxPassAgents bounds the agents a pass lists in the rollout's detail: a
// rollout may have 100,000 targets, and the page reads the detail every few
// seconds. The targets of a stage, all of them, are listed with
// GET /api/v1/rollouts/{id}/targets?stage=<name>.
const MaxPassAgents = 100

// PolicySnapshot is the schema PolicySnapshot: the policy a rollout keeps.
type PolicySnapshot struct {
	Name               string           `json:"name"`
	Path               string           `json:"path,omitempty"`
	Commit             string           `json:"commit,omitempty"`
	BuiltIn            bool             `json:"builtIn"`
	Kind               policy.Kind      `json:"kind"`
	Waves              []policy.Wave    `json:"waves"`
	MaxConcurrent      int              `json:"maxConcurrent"`
	HealthWait         string           `json:"healthWait"`
	HealthWaitSeconds  int64            `json:"healthWaitSeconds"`
	ApplyTimeout       string           `json:"applyTimeout"`
	OfflineGracePeriod string           `json:"offlineGracePeriod"`
	FailureThreshold   policy.Threshold `json:"failureThreshold"`
	OnFailure          policy.OnFailure `json:"onFailure"`
	TimezoneAttribute  string           `json:"timezoneAttribute"`
	DefaultTimezone    string           `json:"defaultTimezone,omitempty"`
	MaintenanceWindows []windows.Window `json:"maintenanceWindows,omitempty"`
	// Topology, Regions and MaxUnavailable are set when a wave splits by
	// region or zone.
	Topology       *policy.Topology `json:"topology,omitempty"`
	Regions        []string         `json:"regions,omitempty"`
	MaxUnavailable *policy.Amount   `json:"maxUnavailable,omitempty"`
	// Health is the gate read after each stage, every default filled in;
	// Approvals the rules of every approval; Freezes the periods in which
	// stages of some regions do not start.
	Health           *policy.Health   `json:"health,omitempty"`
	ApprovalsBetween []string         `json:"approvalsBetween,omitempty"`
	Approvals        policy.Approvals `json:"approvals"`
	Freezes          []policy.Freeze  `json:"freezes,omitempty"`
	Source           string           `json:"source"`
}

// EffectiveHealthWait is the health wait of the snapshot with the rule of
// docs/rollouts.md ("The health wait"): a snapshot without a value, or 0,
// waits 60 seconds. healthWait is read first (it keeps fractions of a
// second), then healthWaitSeconds.
func (p PolicySnapshot) EffectiveHealthWait() time.Duration {
	if d, err := time.ParseDuration(p.HealthWait); err == nil && d > 0 {
		return d
	}
	if p.HealthWaitSeconds > 0 {
		return time.Duration(p.HealthWaitSeconds) * time.Second
	}
	return policy.DefaultHealthWait
}

// Wave is the schema RolloutWave.
type Wave struct {
	Index           int                `json:"index"`
	Name            string             `json:"name"`
	Percent         int                `json:"percent,omitempty"`
	Selector        *selector.Selector `json:"selector,omitempty"`
	RequireApproval bool               `json:"requireApproval,omitempty"`
	Implicit        bool               `json:"implicit,omitempty"`
	Status          rollout.WaveStatus `json:"status"`
	Approved        bool               `json:"approved,omitempty"`
	// WaitingSince is when the wave began to wait for approval;
	// ApprovalExpiresAt, while it waits, when its approval expires.
	// ApprovalsRequired (waves with requireApproval) is the number of
	// distinct approvers it needs, Approvals those who approved; Rejected
	// is the rejection or expiry that stopped it.
	WaitingSince      *time.Time    `json:"waitingSince,omitempty"`
	ApprovalExpiresAt *time.Time    `json:"approvalExpiresAt,omitempty"`
	ApprovalsRequired int           `json:"approvalsRequired,omitempty"`
	Approvals         []Decision    `json:"approvals,omitempty"`
	Rejected          *Decision     `json:"rejected,omitempty"`
	StartedAt         *time.Time    `json:"startedAt,omitempty"`
	FinishedAt        *time.Time    `json:"finishedAt,omitempty"`
	Total             *int          `json:"total,omitempty"`
	Counts            *TargetCounts `json:"counts,omitempty"`
	InHealthWait      *int          `json:"inHealthWait,omitempty"`
}

// TargetCounts is the schema TargetCounts: targets by status.
type TargetCounts struct {
	Pending       int `json:"pending"`
	WaitingWindow int `json:"waiting_window"`
	InProgress    int `json:"in_progress"`
	Verifying     int `json:"verifying"`
	Succeeded     int `json:"succeeded"`
	Failed        int `json:"failed"`
	Skipped       int `json:"skipped"`
	Cancelled     int `json:"cancelled"`
	RolledBack    int `json:"rolled_back"`
}

// count is the field of a target status (nil for an unknown status).
func (c *TargetCounts) count(s rollout.TargetStatus) *int {
	switch s {
	case rollout.TargetPending:
		return &c.Pending
	case rollout.TargetWaitingWindow:
		return &c.WaitingWindow
	case rollout.TargetInProgress:
		return &c.InProgress
	case rollout.TargetVerifying:
		return &c.Verifying
	case rollout.TargetSucceeded:
		return &c.Succeeded
	case rollout.TargetFailed:
		return &c.Failed
	case rollout.TargetSkipped:
		return &c.Skipped
	case rollout.TargetCancelled:
		return &c.Cancelled
	case rollout.TargetRolledBack:
		return &c.RolledBack
	}
	return nil
}

// Add counts one target of status s; an unknown status is not counted.
func (c *TargetCounts) Add(s rollout.TargetStatus) {
	if n := c.count(s); n != nil {
		*n++
	}
}

// Of is the count of one target status.
func (c TargetCounts) Of(s rollout.TargetStatus) int {
	if n := c.count(s); n != nil {
		return *n
	}
	return 0
}

// Total is the number of targets of every status.
func (c TargetCounts) Total() int {
	return c.Pending + c.WaitingWindow + c.InProgress + c.Verifying + c.Succeeded + c.Failed + c.Skipped + c.Cancelled + c.RolledBack
}

// AckedFailures is one entry of the schema AckedFailures.
type AckedFailures struct {
	Wave     int      `json:"wave"`
	Attempts []string `json:"attempts"`
}

// Target is the schema RolloutTarget.
type Target struct {
	RolloutID   string                   `json:"rolloutId"`
	AgentID     string                   `json:"agentId"`
	DisplayName string                   `json:"displayName"` // the agent's; its id once the agent is deleted
	Wave        int                      `json:"wave"`
	Status      rollout.TargetStatus     `json:"status"`
	Reason      string                   `json:"reason,omitempty"`
	ReasonCode  string                   `json:"reasonCode,omitempty"`
	Attempt     int                      `json:"attempt"`
	FromRef     string                   `json:"fromRef"`
	ToRef       string                   `json:"toRef"`
	StartedAt   *time.Time               `json:"startedAt,omitempty"`
	VerifiedAt  *time.Time               `json:"verifiedAt,omitempty"`
	FinishedAt  *time.Time               `json:"finishedAt,omitempty"`
	ExternalRef string                   `json:"externalRef,omitempty"`
	Progress    *progress.TargetProgress `json:"progress,omitempty"`
	// Stage, Pass and Batch place the target in a rollout whose waves run
	// in stages: the names of its stage and pass, and its batch in the
	// pass from 0. Absent for a rollout without stages.
	Stage string `json:"stage,omitempty"`
	Pass  string `json:"pass,omitempty"`
	Batch *int   `json:"batch,omitempty"`
}

// RolloutSummary is the schema RolloutSummary (a fleet's active rollouts).
type RolloutSummary struct {
	ID        string         `json:"id"`
	Fleet     string         `json:"fleet"`
	Kind      policy.Kind    `json:"kind"`
	Status    rollout.Status `json:"status"`
	Origin    rollout.Origin `json:"origin"`
	ToRef     string         `json:"toRef"`
	CreatedBy string         `json:"createdBy,omitempty"`
	CreatedAt time.Time      `json:"createdAt"`
	// Progress is the rollout's "passed/total" stages; empty when its
	// policy splits no wave.
	Progress string `json:"progress,omitempty"`
}
