package client

import (
	"context"
	"net/http"

	"github.com/myriarch/myriarch/adapters/api/schema"
)

// The plan shapes are those the API serves (package schema).
type (
	PlanRequest  = schema.PlanRequest
	Plan         = schema.Plan
	Prediction   = schema.Prediction
	When         = schema.When
	Tolerance    = schema.Tolerance
	WavePlan     = schema.WavePlan
	StagePlan    = schema.StagePlan
	PlanExcluded = schema.Excluded
)

// CreatePlan asks what the planner would do for a fleet and kind now, and
// when the rollout would finish; nothing is stored. A proposed revision
// with an error is a Problem revision_invalid (422) with the issues.
func (c *Client) CreatePlan(ctx context.Context, req PlanRequest) (Plan, error) {
	var p Plan
	return p, c.Do(ctx, http.MethodPost, "/api/v1/plans", nil, req, &p)
}
