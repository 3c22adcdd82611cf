package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/myriarch/myriarch/pkg/policy"
	"github.com/myriarch/myriarch/pkg/progress"
	"github.com/myriarch/myriarch/pkg/rollout"
	"github.com/myriarch/myriarch/pkg/selector"
	"github.com/myriarch/myriarch/pkg/windows"
)

// Rollout is the schema Rollout. Waves carry counts and TargetCounts is set
// when the rollout was read alone (GetRollout) or after an action.
type Rollout struct {
	ID             string            `json:"id"`
	Fleet          string            `json:"fleet"`
	Kind           policy.Kind       `json:"kind"`
	Status         rollout.Status    `json:"status"`
	StatusReason   string            `json:"statusReason,omitempty"`
	Origin         rollout.Origin    `json:"origin"`
	CreatedBy      string            `json:"createdBy,omitempty"`
	CreatedByActor string            `json:"createdByActor,omitempty"`
	RequestReason  string            `json:"requestReason,omitempty"`
	ToRef          string            `json:"toRef"`
	Executor       string            `json:"executor,omitempty"`
	Annotations    map[string]string `json:"annotations,omitempty"`
	CreatedAt      time.Time         `json:"createdAt"`
	StartedAt      *time.Time        `json:"startedAt,omitempty"`
	FinishedAt     *time.Time        `json:"finishedAt,omitempty"`
	Policy         PolicySnapshot    `json:"policy"`
	Waves          []Wave            `json:"waves"`
	TargetCounts   *TargetCounts     `json:"targetCounts,omitempty"`
	AckedFailures  []AckedFailures   `json:"ackedFailures"`
}

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
	Source             string           `json:"source"`
}

// EffectiveHealthWait is the health wait of the snapshot with the rule of
// the spec (rollouts.md, "Health wait"): a snapshot without a value, or 0,
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
	StartedAt       *time.Time         `json:"startedAt,omitempty"`
	FinishedAt      *time.Time         `json:"finishedAt,omitempty"`
	Total           *int               `json:"total,omitempty"`
	Counts          *TargetCounts      `json:"counts,omitempty"`
	InHealthWait    *int               `json:"inHealthWait,omitempty"`
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

// Of is the count of one target status.
func (c TargetCounts) Of(s rollout.TargetStatus) int {
	switch s {
	case rollout.TargetPending:
		return c.Pending
	case rollout.TargetWaitingWindow:
		return c.WaitingWindow
	case rollout.TargetInProgress:
		return c.InProgress
	case rollout.TargetVerifying:
		return c.Verifying
	case rollout.TargetSucceeded:
		return c.Succeeded
	case rollout.TargetFailed:
		return c.Failed
	case rollout.TargetSkipped:
		return c.Skipped
	case rollout.TargetCancelled:
		return c.Cancelled
	case rollout.TargetRolledBack:
		return c.RolledBack
	}
	return 0
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
}

// RolloutFilter narrows listRollouts; zero values do not filter.
type RolloutFilter struct {
	Fleet    string
	Kind     policy.Kind
	Statuses []rollout.Status
}

// ListRollouts reads one page of rollouts, newest first (limit 0: the
// API's default page size).
func (c *Client) ListRollouts(ctx context.Context, f RolloutFilter, limit int, pageToken string) (Page[Rollout], error) {
	q := url.Values{}
	if f.Fleet != "" {
		q.Set("fleet", f.Fleet)
	}
	if f.Kind != "" {
		q.Set("kind", string(f.Kind))
	}
	if len(f.Statuses) > 0 {
		q.Set("status", joined(f.Statuses))
	}
	var p Page[Rollout]
	return p, c.get(ctx, "/api/v1/rollouts", pageQuery(q, limit, pageToken), &p)
}

// AllRollouts reads every page (limit 0) or the first limit rollouts.
func (c *Client) AllRollouts(ctx context.Context, f RolloutFilter, limit int) ([]Rollout, error) {
	return All(ctx, limit, func(token string, size int) (Page[Rollout], error) {
		return c.ListRollouts(ctx, f, size, token)
	})
}

// GetRollout reads a rollout with the target counts of each wave.
func (c *Client) GetRollout(ctx context.Context, id string) (Rollout, error) {
	var r Rollout
	return r, c.get(ctx, "/api/v1/rollouts/"+escape(id), nil, &r)
}

// TargetFilter narrows listRolloutTargets; Wave nil lists every wave.
type TargetFilter struct {
	Wave     *int
	Statuses []rollout.TargetStatus
}

// ListTargets reads one page of a rollout's targets in wave order, then by
// agent id.
func (c *Client) ListTargets(ctx context.Context, id string, f TargetFilter, limit int, pageToken string) (Page[Target], error) {
	q := url.Values{}
	if f.Wave != nil {
		q.Set("wave", strconv.Itoa(*f.Wave))
	}
	if len(f.Statuses) > 0 {
		q.Set("status", joined(f.Statuses))
	}
	var p Page[Target]
	return p, c.get(ctx, "/api/v1/rollouts/"+escape(id)+"/targets", pageQuery(q, limit, pageToken), &p)
}

// AllTargets reads every page (limit 0) or the first limit targets.
func (c *Client) AllTargets(ctx context.Context, id string, f TargetFilter, limit int) ([]Target, error) {
	return All(ctx, limit, func(token string, size int) (Page[Target], error) {
		return c.ListTargets(ctx, id, f, size, token)
	})
}

// The operator actions (POST /api/v1/rollouts/{id}/actions/<action>).
const (
	ActionPause       = "pause"
	ActionResume      = "resume"
	ActionApprove     = "approve"
	ActionAbort       = "abort"
	ActionRollback    = "rollback"
	ActionRetryFailed = "retry-failed"
)

// Act applies an action that takes no options (every action but approve)
// and returns the rollout as the action left it.
func (c *Client) Act(ctx context.Context, id, action string) (Rollout, error) {
	var r Rollout
	return r, c.Do(ctx, http.MethodPost, "/api/v1/rollouts/"+escape(id)+"/actions/"+escape(action), nil, nil, &r)
}

// Approve releases a wave that waits for approval.
func (c *Client) Approve(ctx context.Context, id string, wave int) (Rollout, error) {
	var r Rollout
	body := struct {
		Wave int `json:"wave"`
	}{wave}
	return r, c.Do(ctx, http.MethodPost, "/api/v1/rollouts/"+escape(id)+"/actions/"+ActionApprove, nil, body, &r)
}

func joined[S ~string](vs []S) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = string(v)
	}
	return strings.Join(parts, ",")
}
