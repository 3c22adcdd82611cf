package client

import (
	"context"
	"net/http"

	"github.com/myriarch/myriarch/adapters/api/schema"
)

// The revision shapes are those the API serves (package schema).
type (
	// RevisionRequest is the files of a revision by path (fleets/,
	// policies/, configs/) and its commit.
	RevisionRequest = schema.RevisionRequest
	ApplyResult     = schema.ApplyResult
	FleetPlan       = schema.FleetPlan
	PlanResult      = schema.PlanResult
	AgentAssignment = schema.AgentAssignment
	AgentConflict   = schema.AgentConflict
	Validation      = schema.Validation
	Revision        = schema.Revision
)

// ApplyRevision validates and applies a revision, then plans the affected
// fleets; a revision with an error is a Problem revision_invalid (422) with
// the issues, and nothing of it is applied.
func (c *Client) ApplyRevision(ctx context.Context, req RevisionRequest) (ApplyResult, error) {
	var r ApplyResult
	return r, c.Do(ctx, http.MethodPost, "/api/v1/revisions", nil, req, &r)
}

// ValidateRevision only validates.
func (c *Client) ValidateRevision(ctx context.Context, req RevisionRequest) (Validation, error) {
	var v Validation
	return v, c.Do(ctx, http.MethodPost, "/api/v1/revisions/validate", nil, req, &v)
}

// CurrentRevision reads the applied revision (revision_not_found before
// the first apply).
func (c *Client) CurrentRevision(ctx context.Context) (Revision, error) {
	var r Revision
	return r, c.get(ctx, "/api/v1/revisions/current", nil, &r)
}
