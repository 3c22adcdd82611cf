package rollout

import (
	"strconv"
	"time"

	"github.com/myriarch/myriarch/core/executorobject"
	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/core/progress"
	"github.com/myriarch/myriarch/core/selector"
)

// Origin of a rollout: what triggered it.
type Origin string

const (
	OriginGitOps Origin = "gitops"
	OriginUI     Origin = "ui"
	OriginSystem Origin = "system"
)

// Rollout is one rollout of a fleet and kind.
type Rollout struct {
	ID           string          `json:"id"`
	Fleet        string          `json:"fleet"`
	Kind         policy.Kind     `json:"kind"`
	Status       Status          `json:"status"`
	StatusReason string          `json:"statusReason,omitempty"`
	Policy       policy.Snapshot `json:"policy"`

	ToRef    string `json:"toRef"`              // hash or target version
	Executor string `json:"executor,omitempty"` // version rollouts: updater, webhook, awx or manual
	// ExecutorObject is the snapshot of the fleet's executor object (webhook
	// and awx), taken when the rollout was created.
	ExecutorObject *executorobject.Object `json:"executorObject,omitempty"`
	Origin         Origin                 `json:"origin"`
	CreatedBy      string                 `json:"createdBy,omitempty"`
	RequestReason  string                 `json:"requestReason,omitempty"`
	Annotations    map[string]string      `json:"annotations,omitempty"`

	CreatedAt  time.Time  `json:"createdAt"`
	StartedAt  *time.Time `json:"startedAt,omitempty"`
	FinishedAt *time.Time `json:"finishedAt,omitempty"`

	// RollbackStartedAt is when the rollout entered rolling_back; a rollback
	// that does not finish within applyTimeout of it makes the rollout failed.
	RollbackStartedAt *time.Time `json:"rollbackStartedAt,omitempty"`
	// RollbackQueue lists, for onFailure rollback-wave and rollback-all, the
	// stages (or, without stages, the waves) still to roll back, the current
	// one first: one at a time, the failed one, then those that had passed,
	// in reverse order. Empty for a rollback of every started target.
	RollbackQueue []int `json:"rollbackQueue,omitempty"`
	// PausedByThreshold records that the pause came from the failure threshold,
	// so that resume acknowledges the failures so far.
	PausedByThreshold bool `json:"pausedByThreshold,omitempty"`
	// FreezeOverride records who bypassed the freezes for the rest of the
	// rollout (an action with freezeOverride).
	FreezeOverride *Decision `json:"freezeOverride,omitempty"`

	// ExecutionArn is the Step Functions execution that runs the rollout now;
	// Executions counts them (a long rollout continues as a new execution).
	ExecutionArn string `json:"executionArn,omitempty"`
	Executions   int    `json:"executions,omitempty"`
	// TaskToken is the token of the execution parked for approval or a pause;
	// an operator action wakes it with SendTaskSuccess.
	TaskToken string `json:"taskToken,omitempty"`

	Waves []Wave `json:"waves"`
	// Stages splits the waves by region or zone (policy field by); empty
	// for a rollout whose waves run whole.
	Stages []Stage `json:"stages,omitempty"`
	// AckedFailures lists per wave index the acknowledged failed attempts as
	// <agentId>#<attempt>; they no longer count toward the threshold.
	AckedFailures map[int][]string `json:"ackedFailures,omitempty"`

	// Version is the optimistic-concurrency counter of the stored item.
	Version int64 `json:"version"`
}

// Wave is a wave of a rollout with its status.
type Wave struct {
	Index           int                `json:"index"`
	Name            string             `json:"name"`
	Percent         int                `json:"percent,omitempty"`
	Selector        *selector.Selector `json:"selector,omitempty"`
	RequireApproval bool               `json:"requireApproval,omitempty"`
	Implicit        bool               `json:"implicit,omitempty"` // the appended rest wave
	Status          WaveStatus         `json:"status"`
	Approved        bool               `json:"approved,omitempty"`
	// WaitingSince is when the wave began to wait for approval: the expiry
	// counts from it. Approvals lists who approved (distinct actors).
	WaitingSince *time.Time `json:"waitingSince,omitempty"`
	Approvals    []Decision `json:"approvals,omitempty"`
	// Rejected is the rejection or the expiry that stopped the wave.
	Rejected   *Decision  `json:"rejected,omitempty"`
	StartedAt  *time.Time `json:"startedAt,omitempty"`
	FinishedAt *time.Time `json:"finishedAt,omitempty"`
}

// Decision is an approval, a rejection or an expiry of a wave.
type Decision struct {
	By      string    `json:"by"`                // the actor as people read it; "system" for an expiry
	ActorID string    `json:"actorId,omitempty"` // its stable identity
	At      time.Time `json:"at"`
	Reason  string    `json:"reason,omitempty"`
}

// AllWaves asks a listing of a rollout's targets (TargetsPage) for the
// targets of every wave.
const AllWaves = -1

// Target is one agent within a rollout.
type Target struct {
	RolloutID string       `json:"rolloutId"`
	AgentID   string       `json:"agentId"`
	Wave      int          `json:"wave"`
	Status    TargetStatus `json:"status"`
	Reason    string       `json:"reason,omitempty"`
	// ReasonCode says, as a stable code, why a target failed or was skipped.
	ReasonCode string `json:"reasonCode,omitempty"`
	Attempt    int    `json:"attempt"`
	FromRef    string `json:"fromRef"` // hash or version before
	ToRef      string `json:"toRef"`   // hash or version to reach

	StartedAt  *time.Time `json:"startedAt,omitempty"`
	VerifiedAt *time.Time `json:"verifiedAt,omitempty"`
	// ReportedAt is when the agent reported success (before the engine saw it);
	// health reports older than it come from the process that was replaced.
	ReportedAt  *time.Time `json:"reportedAt,omitempty"`
	FinishedAt  *time.Time `json:"finishedAt,omitempty"`
	ExternalRef string     `json:"externalRef,omitempty"` // executor reference, "manual" for the manual executor

	// Health bookkeeping for the restart tolerances and crash loops.
	HealthyOnTarget bool   `json:"healthyOnTarget,omitempty"` // was healthy once on the target
	LastHealthy     bool   `json:"lastHealthy,omitempty"`     // health at the last evaluation
	Restarts        int    `json:"restarts,omitempty"`        // fallbacks from healthy to a start-up report
	VersionAtVerify string `json:"versionAtVerify,omitempty"` // collector version when a config target entered verifying

	// Stage, Pass and Batch place the target in the rollout's stages (only
	// meaningful when the rollout has stages).
	Stage int `json:"stage,omitempty"`
	Pass  int `json:"pass,omitempty"`
	Batch int `json:"batch,omitempty"`

	// Progress is the live progress of a version target (nil for configuration).
	Progress *progress.TargetProgress `json:"progress,omitempty"`

	// RollbackAt is set when a rollback reset the target to FromRef.
	RollbackAt *time.Time `json:"rollbackAt,omitempty"`

	Version int64 `json:"version"`
}

// EndOpenWaves ends the waves that were running or waiting for approval when
// the rollout ended without completing them (abort, supersede, rollback):
// they become failed, with finishedAt. A wave that never began stays pending.
// Waves are cloned first, so a caller's copy of the rollout is not changed.
func (r *Rollout) EndOpenWaves(now time.Time) {
	r.Waves = append([]Wave(nil), r.Waves...)
	for i := range r.Waves {
		w := &r.Waves[i]
		if w.Status == WaveRunning || w.Status == WaveWaitingApproval {
			w.Status, w.FinishedAt = WaveFailed, &now
		}
	}
	r.Stages = append([]Stage(nil), r.Stages...)
	for i := range r.Stages {
		if s := &r.Stages[i]; s.Status == StageRunning || s.Status == StageBaking {
			s.Status, s.FinishedAt = StageFailed, &now
		}
	}
}

// CurrentWave is the first wave that is not final (completed or skipped):
// the one the rollout works on or waits for; nil when every wave is final.
func (r Rollout) CurrentWave() *Wave {
	for i, w := range r.Waves {
		if w.Status != WaveCompleted && w.Status != WaveSkipped {
			return &r.Waves[i]
		}
	}
	return nil
}

// CurrentStage is the first stage that has not passed; nil when there is
// none (every stage passed, or the waves do not split by region or zone).
func (r Rollout) CurrentStage() *Stage {
	for i, s := range r.Stages {
		if s.Status != StagePassed {
			return &r.Stages[i]
		}
	}
	return nil
}

// Overlay returns all with the targets of changed in place of those of the
// same agent (the last of changed for an agent named twice); a changed
// target whose agent all lacks is left out. It indexes changed, not all:
// an evaluation over 100,000 targets changes a few thousand of them, and an
// index of every target cost 10 MB and a tenth of a second each time.
func Overlay(all, changed []Target) []Target {
	return OverlayInto(append([]Target(nil), all...), changed)
}

// OverlayInto is Overlay written over all itself, for a caller that holds
// the only reference to all: at 100,000 targets a copy is 25 MB to
// allocate, copy and collect.
func OverlayInto(all, changed []Target) []Target {
	if len(changed) == 0 {
		return all
	}
	at := make(map[string]int, len(changed))
	for i, c := range changed {
		at[c.AgentID] = i
	}
	for i := range all {
		if c, ok := at[all[i].AgentID]; ok {
			all[i] = changed[c]
		}
	}
	return all
}

// AttemptKey is the identity of a failed attempt in ackedFailures.
func (t Target) AttemptKey() string { return t.AgentID + "#" + strconv.Itoa(t.Attempt) }
