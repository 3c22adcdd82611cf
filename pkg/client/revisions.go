package client

import (
	"context"
	"net/http"
	"time"

	"github.com/myriarch/myriarch/pkg/issue"
	"github.com/myriarch/myriarch/pkg/policy"
)

// RevisionRequest is the schema RevisionRequest: the files of a revision by
// path (fleets/, policies/, configs/) and its commit.
type RevisionRequest struct {
	Commit string            `json:"commit"`
	Files  map[string]string `json:"files"`
}

// ApplyResult is the schema ApplyRevisionResult.
type ApplyResult struct {
	Commit    string          `json:"commit"`
	AppliedAt time.Time       `json:"appliedAt"`
	Fleets    []FleetPlan     `json:"fleets"`
	Agents    AgentAssignment `json:"agents"`
	Issues    issue.List      `json:"issues"`
}

// FleetPlan is what planning did for one fleet.
type FleetPlan struct {
	Fleet   string       `json:"fleet"`
	Removed bool         `json:"removed"`
	Plans   []PlanResult `json:"plans"`
}

// PlanResult is the schema PlanResult: one kind of one fleet.
type PlanResult struct {
	Kind           policy.Kind `json:"kind"`
	Planned        bool        `json:"planned"`
	RolloutID      string      `json:"rolloutId,omitempty"`
	Created        bool        `json:"created,omitempty"`
	EndedRolloutID string      `json:"endedRolloutId,omitempty"`
	Stragglers     int         `json:"stragglers"`
	Note           string      `json:"note,omitempty"`
	Error          string      `json:"error,omitempty"`
}

// AgentAssignment is the schema AgentAssignment.
type AgentAssignment struct {
	Total      int             `json:"total"`
	Assigned   int             `json:"assigned"`
	Moved      int             `json:"moved"`
	Unassigned int             `json:"unassigned"`
	Conflicts  []AgentConflict `json:"conflicts,omitempty"`
}

// AgentConflict is an agent that several fleets select.
type AgentConflict struct {
	AgentID string `json:"agentId"`
	Error   string `json:"error"`
}

// Validation is the schema RevisionValidation.
type Validation struct {
	Commit   string     `json:"commit"`
	Valid    bool       `json:"valid"`
	Fleets   []string   `json:"fleets"`
	Policies []string   `json:"policies"`
	Issues   issue.List `json:"issues"`
}

// Revision is the schema Revision: the applied revision.
type Revision struct {
	Commit    string            `json:"commit"`
	AppliedAt time.Time         `json:"appliedAt"`
	AppliedBy string            `json:"appliedBy,omitempty"`
	Fleets    []string          `json:"fleets"`
	Policies  []string          `json:"policies"`
	Configs   map[string]string `json:"configs"`
}

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
