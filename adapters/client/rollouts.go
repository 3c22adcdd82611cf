package client

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/myriarch/myriarch/adapters/api/schema"
	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/core/rollout"
)

// The rollout shapes are those the API serves (package schema).
type (
	Rollout        = schema.Rollout
	PolicySnapshot = schema.PolicySnapshot
	Wave           = schema.Wave
	Stage          = schema.Stage
	StagePass      = schema.StagePass
	Decision       = schema.Decision
	GateState      = schema.GateState
	GateReading    = schema.GateReading
	BatchGate      = schema.BatchGate
	TargetCounts   = schema.TargetCounts
	AckedFailures  = schema.AckedFailures
	Target         = schema.Target
	RolloutSummary = schema.RolloutSummary
)

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

// TargetFilter narrows listRolloutTargets; Wave "" lists every wave and
// Stage "" every stage. Stage is a stage's name (a target's Stage); the API
// refuses one the rollout does not have (400 request_invalid, Problem.Stages
// lists the rollout's).
type TargetFilter struct {
	Wave     WaveRef
	Stage    string
	Statuses []rollout.TargetStatus
}

// WaveRef is a wave of a rollout as the API takes it: its index from 0
// ("1") or its name ("canary"); a whole number is an index. The API
// resolves a name against the rollout's waves and refuses one it does not
// have (400 wave_name_unknown, the detail lists the waves).
type WaveRef string

// WaveIndex is the wave with index i.
func WaveIndex(i int) WaveRef { return WaveRef(strconv.Itoa(i)) }

// Index is the wave's index and true when w is a whole number (the API
// refuses a negative one).
func (w WaveRef) Index() (int, bool) {
	n, err := strconv.Atoi(string(w))
	return n, err == nil
}

// MarshalJSON sends an index as a JSON number, a name as a string.
func (w WaveRef) MarshalJSON() ([]byte, error) {
	if n, ok := w.Index(); ok {
		return json.Marshal(n)
	}
	return json.Marshal(string(w))
}

// ListTargets reads one page of a rollout's targets in wave order, then by
// agent id.
func (c *Client) ListTargets(ctx context.Context, id string, f TargetFilter, limit int, pageToken string) (Page[Target], error) {
	q := url.Values{}
	if f.Wave != "" {
		q.Set("wave", string(f.Wave))
	}
	if f.Stage != "" {
		q.Set("stage", f.Stage)
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
	ActionReject      = "reject"
	ActionAbort       = "abort"
	ActionRollback    = "rollback"
	ActionRetryFailed = "retry-failed"
)

// ApproveRequest is the schema ApproveRequest: the wave (index or name),
// why, and whether to bypass every freeze for the rest of the rollout.
type ApproveRequest struct {
	Wave           WaveRef `json:"wave"`
	Reason         string  `json:"reason,omitempty"`
	FreezeOverride bool    `json:"freezeOverride,omitempty"`
}

// RejectRequest is the schema RejectRequest: the wave (index or name) and
// why.
type RejectRequest struct {
	Wave   WaveRef `json:"wave"`
	Reason string  `json:"reason,omitempty"`
}

// ResumeRequest is the schema ResumeRequest; the zero value is a plain
// resume.
type ResumeRequest struct {
	FreezeOverride bool   `json:"freezeOverride,omitempty"`
	Reason         string `json:"reason,omitempty"`
}

// Act applies an action that takes no options (pause, resume, abort,
// rollback, retry-failed) and returns the rollout as the action left it.
// retry-failed on a rollout with nothing failed is refused
// (409 nothing_to_retry) and changes nothing.
func (c *Client) Act(ctx context.Context, id, action string) (Rollout, error) {
	return c.act(ctx, id, action, nil)
}

// Approve approves a wave that waits for approval, without a reason.
func (c *Client) Approve(ctx context.Context, id string, wave int) (Rollout, error) {
	return c.ApproveWith(ctx, id, ApproveRequest{Wave: WaveIndex(wave)})
}

// ApproveWith approves a wave with the options of req. The rollout's
// creator is refused (self_approval), and so is a second approval by the
// same actor (wave_already_approved) or one after the expiry
// (approval_expired).
func (c *Client) ApproveWith(ctx context.Context, id string, req ApproveRequest) (Rollout, error) {
	return c.act(ctx, id, ActionApprove, req)
}

// Reject refuses the approval a wave waits for: the wave stops and the
// policy's onFailure applies.
func (c *Client) Reject(ctx context.Context, id string, req RejectRequest) (Rollout, error) {
	return c.act(ctx, id, ActionReject, req)
}

// Resume resumes a paused rollout; with FreezeOverride it also bypasses
// every freeze, and on a running rollout only records that.
func (c *Client) Resume(ctx context.Context, id string, req ResumeRequest) (Rollout, error) {
	return c.act(ctx, id, ActionResume, req)
}

// act posts an action with body (nil: none).
func (c *Client) act(ctx context.Context, id, action string, body any) (Rollout, error) {
	var r Rollout
	return r, c.Do(ctx, http.MethodPost, "/api/v1/rollouts/"+escape(id)+"/actions/"+escape(action), nil, body, &r)
}

func joined[S ~string](vs []S) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = string(v)
	}
	return strings.Join(parts, ",")
}
