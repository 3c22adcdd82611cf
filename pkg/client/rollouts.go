package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/myriarch/myriarch/pkg/api/schema"
	"github.com/myriarch/myriarch/pkg/policy"
	"github.com/myriarch/myriarch/pkg/rollout"
)

// The rollout shapes are those the API serves (package schema).
type (
	Rollout        = schema.Rollout
	PolicySnapshot = schema.PolicySnapshot
	Wave           = schema.Wave
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
