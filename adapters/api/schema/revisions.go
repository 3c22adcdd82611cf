package schema

import (
	"time"

	"github.com/myriarch/myriarch/core/issue"
	"github.com/myriarch/myriarch/core/policy"
)

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
	// Bootstrapped counts the agents of the fleet that had no
	// configuration and got the fleet's directly, without a rollout (kind
	// config): in the apply request's assignment or in this run.
	Bootstrapped int    `json:"bootstrapped,omitempty"`
	Note         string `json:"note,omitempty"`
	Error        string `json:"error,omitempty"`
}

// AgentAssignment is the schema AgentAssignment.
type AgentAssignment struct {
	Total      int             `json:"total"`
	Assigned   int             `json:"assigned"`
	Moved      int             `json:"moved"`
	Unassigned int             `json:"unassigned"`
	Conflicts  []AgentConflict `json:"conflicts,omitempty"`
	// Complete: every agent was swept within the request, so the counts
	// are the whole fleet's; false: the planner's minute assigns the rest.
	Complete bool `json:"complete"`
}

// AgentConflict is an agent that several fleets select.
type AgentConflict struct {
	AgentID string `json:"agentId"`
	Error   string `json:"error"`
}

// Validation is the schema RevisionValidation.
type Validation struct {
	Commit    string     `json:"commit"`
	Valid     bool       `json:"valid"`
	Fleets    []string   `json:"fleets"`
	Policies  []string   `json:"policies"`
	Executors []string   `json:"executors"`
	Issues    issue.List `json:"issues"`
}

// Revision is the schema Revision: the applied revision.
type Revision struct {
	Commit    string            `json:"commit"`
	AppliedAt time.Time         `json:"appliedAt"`
	AppliedBy string            `json:"appliedBy,omitempty"`
	Fleets    []string          `json:"fleets"`
	Policies  []string          `json:"policies"`
	Executors []string          `json:"executors"`
	Configs   map[string]string `json:"configs"`
}
